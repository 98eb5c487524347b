/* The session's status page (mockgpu/statuspage.py writes it, mockgpu/csrc/spinwait.c reads it), and what the
 * interposer's spin-wait needs of preload.c. The word order is mockgpu.statuspage's (tests/mockgpu/test_statuspage.py
 * checks they agree). */
#ifndef SIMGPU_SPINWAIT_H
#define SIMGPU_SPINWAIT_H
#include <stdint.h>

struct simgpu_status {
    uint32_t seq;             /* bumped after a worker turn that moved GPU work or answered a SPIN: the futex word */
    uint32_t inflight;        /* 1 while the GPUs run work or queues wait on memory */
    uint32_t work;            /* bumped with seq when the turn moved GPU work */
    uint32_t pid;             /* the client process the page is for */
    uint32_t magic;           /* SIMGPU_STATUS_MAGIC */
    uint32_t closed;          /* 1 once the session has ended */
    uint32_t ngpus, slots;    /* GPUs, 64-bit doorbells per GPU */
    uint32_t rung_offset;     /* bytes into this file: each GPU's doorbells as it last acted on them (slots each) */
    uint32_t doorbell_offset; /* bytes into the device file: GPU 0's doorbell page ... */
    uint32_t doorbell_stride; /* ... and the distance to the next GPU's */
};
#define SIMGPU_STATUS_MAGIC 0x53504E32u
#define SIMGPU_STATUS_MAX_GPUS 64
#define SIMGPU_STATUS_MAX_SLOTS 1024

/* A thread spins when it calls clock_gettime SPIN_CALLS times in a row, each within SPIN_GAP_NS of the last; it
 * then sleeps on seq for at most SPIN_WAIT_NS per call (the caller looks at its signal between calls). */
#define SPIN_CALLS 16
/* ... and at its KICK_CALLS-th call, a doorbell it stored that the worker has not seen is announced (SPIN) at once. */
#define KICK_CALLS 3
#define SPIN_GAP_NS 50000
#define SPIN_WAIT_NS 1000000

/* preload.c: send SPIN on this thread's connection, without blocking; 0, or -1 if the thread has no connection
 * of this process, is inside a call to the server, or the socket is full. */
int simgpu_spin_kick(void);
/* preload.c: whether this thread is inside a call to the server (a signal handler's clock_gettime then never
 * sleeps: the server may be waiting for this thread's answer). */
int simgpu_in_call(void);
/* preload.c: a device file descriptor of this process (the machine's device-memory file), or -1. */
int simgpu_device_fd(void);
/* spinwait.c: the status page that came with a HELLO reply (the descriptor is closed). */
void simgpu_spin_attach(int fd);
/* spinwait.c: forget the page (a fork child: its parent's page is not its own). */
void simgpu_spin_forget(void);

#endif
