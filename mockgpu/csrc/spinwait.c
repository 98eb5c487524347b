/* The interposer's half of the status page (mockgpu/statuspage.py): a thread that spins on the GPU's memory gives
 * the server the CPU.
 *
 * A program waits for its GPU by spinning: it reads a signal in memory and calls clock_gettime in a loop (tinygrad's
 * HCQSignal.wait, time.perf_counter). On real hardware the GPU runs beside it; here the session's worker, another
 * process's thread, must get a CPU to run the queue, and on a busy host the spinning thread holds the CPU it needs
 * (the worker's wake-up waited 4-8 ms at the 90th percentile at load 7). So clock_gettime, once the calling thread
 * has called it SPIN_CALLS times in a row (each within SPIN_GAP_NS of the last: a loop, not a program that reads the
 * clock now and then), asks whether the process's GPUs have work:
 *  - in flight (the page's INFLIGHT: the worker runs queues, or queues wait on memory), or
 *  - a doorbell this process stored that the worker has not acted on yet (its doorbell pages, read-only, against
 *    the values the GPUs last acted on, which the page holds): then it sends SPIN on its connection, once per
 *    answer, so that the worker looks now instead of at its next look.
 * If so it sleeps on the page's SEQ word (a futex) until the worker ends a turn that moved work -- its signal may be
 * written now -- or SPIN_WAIT_NS passed, then reads the clock again and returns that: the time is the clock's own
 * and monotonic, and the caller looks at its signal once per call, as before. Without work (a loop that waits for
 * something else, or the call just after a loop ended) it returns at once. A thread that never spins, a process
 * without a page (no connection yet, or a fork child: the page is its parent's), a call made inside a call to the
 * server (a signal handler) and a closed page are untouched. The pages are mapped read-only; whatever they hold, a
 * call sleeps at most SPIN_WAIT_NS.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "spinwait.h"

#define EXPORT __attribute__((visibility("default")))

/* A status page as attached: its header's layout read once, and the device file's doorbell pages once mapped. */
struct page {
    struct simgpu_status *s;
    const char *rung;            /* s + rung_offset */
    uint32_t ngpus, slots, stride, doorbell_offset;
    const char *doorbells;       /* ngpus * stride bytes of the device file, or NULL until mapped */
};

static struct page *page; /* this process's (the latest HELLO reply's), or NULL */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static __thread struct {
    int64_t last;   /* CLOCK_MONOTONIC of the last call's return, ns */
    uint32_t calls; /* calls in a row, each within SPIN_GAP_NS of the last */
    uint32_t seq;   /* the page's SEQ when the last call returned: a sleep ends at once if it moved since */
    int kicked;     /* a SPIN is out ... */
    uint32_t kick_seq; /* ... sent when SEQ was this: answered once SEQ moves */
} me;

typedef int (*clock_fn)(clockid_t, struct timespec *);

static int64_t ns(const struct timespec *t) { return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec; }

static int64_t monotonic(clock_fn real) {
    struct timespec t;
    real(CLOCK_MONOTONIC, &t);
    return ns(&t);
}

static uint32_t word(const uint32_t *w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }

static void *map_ro(size_t size, int fd, off_t offset) {
    long got = syscall(SYS_mmap, NULL, size, PROT_READ, MAP_SHARED, fd, offset); /* (raw: not this library's mmap) */
    return got < 0 && got > -4096 ? NULL : (void *)got;
}

/* The page's header, checked: a layout this library does not know is not used. */
static struct page *check(struct simgpu_status *s, size_t size) {
    uint32_t ngpus = word(&s->ngpus), slots = word(&s->slots), stride = word(&s->doorbell_stride);
    uint32_t rung = word(&s->rung_offset);
    if (word(&s->magic) != SIMGPU_STATUS_MAGIC || ngpus < 1 || ngpus > SIMGPU_STATUS_MAX_GPUS || slots < 1 ||
        slots > SIMGPU_STATUS_MAX_SLOTS || (uint64_t)slots * 8 > stride || stride % 4096 ||
        word(&s->doorbell_offset) % 4096 || rung < sizeof *s || rung % 8 || rung + (uint64_t)ngpus * slots * 8 > size)
        return NULL;
    struct page *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    *p = (struct page){s, (const char *)s + rung, ngpus, slots, stride, word(&s->doorbell_offset), NULL};
    return p;
}

void simgpu_spin_attach(int fd) {
    struct stat st;
    void *m = NULL;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(struct simgpu_status) && st.st_size <= (1 << 20))
        m = map_ro((size_t)st.st_size, fd, 0);
    syscall(SYS_close, fd);
    if (!m) return;
    struct page *old = __atomic_load_n(&page, __ATOMIC_ACQUIRE), *p;
    /* Every thread's connection brings the same session's page: keep the one in use (another thread may be
     * reading it). A page of an ended session or of a parent process is replaced, and stays mapped. */
    if ((old && !word(&old->s->closed) && word(&old->s->pid) == word(&((struct simgpu_status *)m)->pid)) ||
        !(p = check(m, (size_t)st.st_size))) {
        syscall(SYS_munmap, m, (size_t)st.st_size);
        return;
    }
    __atomic_store_n(&page, p, __ATOMIC_RELEASE);
}

void simgpu_spin_forget(void) { __atomic_store_n(&page, NULL, __ATOMIC_RELEASE); }

/* The GPUs' doorbell pages of the device file, mapped on first use (NULL: no device file yet, or the lock is held
 * -- by the thread this call interrupts, maybe: never wait for it). */
static const char *doorbells(struct page *p) {
    const char *d = __atomic_load_n(&p->doorbells, __ATOMIC_ACQUIRE);
    if (d || pthread_mutex_trylock(&map_lock) != 0) return d;
    if (!(d = p->doorbells)) {
        int fd = simgpu_device_fd();
        d = fd < 0 ? NULL : map_ro((size_t)p->ngpus * p->stride, fd, p->doorbell_offset);
        __atomic_store_n(&p->doorbells, d, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&map_lock);
    return d;
}

/* Whether a doorbell differs from the value its GPU last acted on: a store the worker has not seen yet. */
static int doorbell_pending(struct page *p) {
    const char *d = doorbells(p);
    for (uint32_t g = 0; d && g < p->ngpus; g++)
        if (memcmp(d + (size_t)g * p->stride, p->rung + (size_t)g * p->slots * 8, (size_t)p->slots * 8)) return 1;
    return 0;
}

/* Whether this thread may act on the page now: it is open, the call is not inside a call to the server, and the
 * page is this process's (not a vfork parent's: a fork child has forgotten the page). */
static int may_act(struct simgpu_status *s) {
    return !word(&s->closed) && !simgpu_in_call() && word(&s->pid) == (uint32_t)getpid();
}

/* Send SPIN for a doorbell the worker has not seen, once per answer (SEQ moving). */
static void kick(struct simgpu_status *s) {
    if (me.kicked && word(&s->seq) == me.kick_seq) return;
    me.kicked = simgpu_spin_kick() == 0; /* (without a connection of its own: the worker's next look) */
    me.kick_seq = me.seq;
}

/* The caller has begun to spin (KICK_CALLS calls in a row): a doorbell it stored that the worker has not acted on
 * is announced now, not after SPIN_CALLS -- the worker runs the queue while the loop goes on to its sleep. */
static void early_kick(struct page *p) {
    struct simgpu_status *s = p->s;
    if (word(&s->inflight) || (me.kicked && word(&s->seq) == me.kick_seq) || !doorbell_pending(p) || !may_act(s))
        return;
    kick(s);
}

/* The caller spins: if its GPUs have work, sleep on SEQ (asking the worker to look first if it has not seen a
 * doorbell yet); 1 if it slept. */
static int spin_wait(struct page *p) {
    struct simgpu_status *s = p->s;
    int inflight = word(&s->inflight) != 0;
    int pending = !inflight && doorbell_pending(p);
    if ((!inflight && !pending) || !may_act(s)) return 0;
    if (pending) kick(s);
    struct timespec t = {0, SPIN_WAIT_NS};
    syscall(SYS_futex, &s->seq, FUTEX_WAIT, me.seq, &t, NULL, 0);
    return 1;
}

EXPORT int clock_gettime(clockid_t clk, struct timespec *ts) {
    static clock_fn real;
    if (!real) {
        clock_fn f = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
        if (!f) return (int)syscall(SYS_clock_gettime, clk, ts);
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    int r = real(clk, ts);
    struct page *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);
    if (!p || r != 0) return r;
    int64_t now = clk == CLOCK_MONOTONIC ? ns(ts) : monotonic(real), gap = now - me.last;
    me.last = now;
    if (gap < 0 || gap > SPIN_GAP_NS) me.calls = 0;
    if (me.calls < SPIN_CALLS) {
        if (++me.calls == KICK_CALLS) early_kick(p);
    } else if (spin_wait(p)) {
        int saved = errno;
        r = real(clk, ts); /* the time after the sleep: the clock's own */
        me.last = clk == CLOCK_MONOTONIC ? ns(ts) : monotonic(real);
        errno = saved;
    }
    me.seq = word(&p->s->seq);
    return r;
}
