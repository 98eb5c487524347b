/* Host-visible GPU memory at the address the program uses, for clients of `simgpu run --am` (mockgpu/hostmap.py).
 *
 * Over the remote-PCI transport a driver's host-visible buffer has a GPU virtual address and nothing mapped there in
 * the program; a plain store to it (tinygrad's tests: ctypes.memset on va_addr) faults. This part of the interposer
 * takes SIGSEGV: for a fault on an unmapped page (SEGV_MAPERR) it asks the server ($SIMGPU_HOSTMAP, a socket) what
 * the GPU's page tables map there, maps that shared-memory run at that very address (MAP_FIXED_NOREPLACE: never over
 * a mapping of the program's) and returns, so the store is retried and lands in the bytes the GPU sees. Any other
 * fault goes to the program's own handler or the default action, as if this library were not there (sigchain.c).
 *
 * Everything the handler does is async-signal-safe (socket, connect, send, recvmsg, mmap, close).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "localpci.h"
#include "sigchain.h"

#define EXPORT __attribute__((visibility("default")))
#define PAGE 4096UL

static struct sockaddr_un service = {.sun_family = AF_UNIX};
static int active;
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);

struct reply { int64_t status; uint64_t start, length, offset, prot; };

/* close(2) itself: the interposer's close (preload.c) looks the fd up and may resolve libc lazily. */
static void raw_close(int fd) { syscall(SYS_close, fd); }

/* Map [addr, addr + len) of fd there and nowhere else (over a reservation of the program's with `over`); 0 on
 * success. */
static int place(uintptr_t addr, size_t len, int prot, int fd, uint64_t offset, int over) {
    if (over && !simgpu_reserved_range(addr, len)) {
        errno = EACCES; /* not a reservation: never mapped over */
        return -1;
    }
    void *got = real_mmap((void *)addr, len, prot, MAP_SHARED | (over ? MAP_FIXED : MAP_FIXED_NOREPLACE), fd,
                          (off_t)offset);
    if (got == MAP_FAILED) return -1;
    if (got != (void *)addr) { /* a kernel before 4.17 takes the flag for a hint */
        syscall(SYS_munmap, got, len); /* not through the interposer's munmap, which takes a lock */
        errno = EEXIST; /* the hint was not taken: something is there */
        return -1;
    }
    return 0;
}

/* Map what the GPU has at page `va`; 0 on success. */
static int map_gpu_page(uintptr_t va, int over) {
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    uint64_t req = va;
    struct reply r;
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&r, sizeof r};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    int fd = -1;
    if (connect(s, (struct sockaddr *)&service, sizeof service) < 0 || send(s, &req, sizeof req, MSG_NOSIGNAL) < 0 ||
        recvmsg(s, &h, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof r) {
        raw_close(s);
        return -1;
    }
    raw_close(s);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(c), sizeof fd);
    if (r.status != 0 || fd < 0 || va < r.start || va >= r.start + r.length) {
        if (fd >= 0) raw_close(fd);
        return -1;
    }
    int ok = place(r.start, r.length, (int)r.prot, fd, r.offset, over) == 0 ||
             /* something of the program's lies in the run: only the faulting page, which is free */
             place(va, PAGE, (int)r.prot, fd, r.offset + va - r.start, over) == 0 ||
             /* or no longer free: another thread faulting on it mapped it meanwhile; the retried access will tell */
             errno == EEXIST;
    raw_close(fd);
    return ok ? 0 : -1;
}

static void on_segv(int sig, siginfo_t *info, void *context) {
    int saved = errno;
    /* an unmapped page, or one of an address range the driver reserved without access (local PCI: tinygrad keeps its
     * GPU address space so, and a VRAM buffer's address is reached only through the GPU's page tables) */
    if (info && (info->si_code == SEGV_MAPERR || info->si_code == SEGV_ACCERR) &&
        map_gpu_page((uintptr_t)info->si_addr & ~(PAGE - 1), info->si_code == SEGV_ACCERR) == 0) {
        errno = saved;
        return;
    }
    errno = saved;
    simgpu_pass_signal(sig, info, context);
}

__attribute__((constructor)) static void hostmem_init(void) {
    const char *path = getenv("SIMGPU_HOSTMAP");
    real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    if (!path || strlen(path) >= sizeof service.sun_path || !real_mmap) return;
    strcpy(service.sun_path, path);
    if (simgpu_take_signal(SIGSEGV, on_segv) == 0) active = 1;
}
