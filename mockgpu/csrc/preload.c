/* simgpu's process-level device: an LD_PRELOAD interposer that sends a program's amdkfd traffic to a simgpu
 * server (mockgpu/server.py, started by `simgpu run`).
 *
 *  - open/openat of /dev/kfd and /dev/dri/renderD<n>: the server opens its emulated file and hands back the
 *    machine's device-memory file (a memfd); that fd is what the program gets. Every mmap offset the driver
 *    hands out is an offset of that file, so even an mmap that bypasses this library (ctypes' CDLL(libc).mmap,
 *    dlsym on libc) maps the right pages, shared with the simulated GPU.
 *  - ioctl on those fds: forwarded (the argument's _IOC_SIZE bytes out and back, with the array it points to for
 *    the ioctls of mockgpu.protocol.ATTACHED). While the server handles it,
 *    it may read or write the caller's memory (pointer arguments) or ask for pages to be moved into shared
 *    memory (USERPTR), or for the server's handle of an fd the argument names (ACQUIRE_VM's drm_fd); this
 *    library does that with process_vm_readv/writev on itself, so a bad pointer is EFAULT, not a crash.
 *  - mmap/munmap/close/dup of those fds: the server is told, so it can check and record them.
 *  - paths under /sys/devices/virtual/kfd and /sys/class/drm: rewritten into the directory where the server
 *    wrote the sysfs it serves (SIMGPU_SYSFS), so open/read/pread/stat/access/readlink/opendir/fopen of them are
 *    plain file operations; stat/access of the device nodes answer as for character devices.
 *
 * Environment: SIMGPU_SERVER (socket path) and SIMGPU_SYSFS (directory); without them it does nothing;
 * SIMGPU_SERVER_STARTING: the server may still be starting (wait_for_server). The
 * message numbers come from mockgpu/protocol.py as -D definitions. One connection per thread (and per process:
 * a forked child reconnects and is a new process to the server).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "localpci.h"
#include "spinwait.h"

#ifndef SIMGPU_MSG_REPLY
#error "compile with the -D definitions of mockgpu.protocol.c_definitions()"
#endif

#define EXPORT __attribute__((visibility("default")))
#define MAX_FDS 65536
#define MAX_MAPS 4096
#define KFD_MAJOR 236 /* a typical dynamic major of /dev/kfd */
#define DRM_MAJOR 226

struct msg { int64_t type, a[7]; };

static char server_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char sysfs_root[2048];
static int active;
static int server_starting; /* SIMGPU_SERVER_STARTING: `simgpu run` may not be listening yet (wait_for_server) */
static int server_up;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd_handle[MAX_FDS]; /* client fd -> server handle + 1 (0: not a device fd) */
static struct { uintptr_t addr; size_t len; } maps[MAX_MAPS];
static int nmaps;
static __thread int conn = -1;
static __thread pid_t conn_pid;
static __thread int in_call; /* inside call(): the connection is mid-conversation */
static __thread unsigned char buf[sizeof(struct msg) + SIMGPU_MSG_MAX_PAYLOAD];

#define REAL(ret, name, ...) \
    static ret (*real_##name)(__VA_ARGS__); \
    if (!real_##name) real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

/* The process whose memory these tables are. A vfork child (CLONE_VM: Python's subprocess, posix_spawn) runs in its
 * parent's memory until it execs, and Python's child closes every descriptor it does not pass on (close_fds) through
 * close() -- this library's. Bookkeeping done there would be done to the parent's tables: its device fds and its
 * pagemap descriptor forgotten while they stay open in the parent (and a CLOSE sent for its handle). So only the owner
 * keeps the books; a fork child (its own copy of memory) becomes the owner of its copy in the atfork handler. */
static pid_t owner;

static void owner_after_fork(void) {
    owner = (pid_t)syscall(SYS_getpid);
    simgpu_spin_forget(); /* the parent's session's page: the child is a new process to the server */
}

static int simgpu_books_are_mine(void) { return (pid_t)syscall(SYS_getpid) == owner; }

__attribute__((constructor)) static void init(void) {
    owner = (pid_t)syscall(SYS_getpid);
    pthread_atfork(NULL, NULL, owner_after_fork);
    const char *s = getenv("SIMGPU_SERVER"), *r = getenv("SIMGPU_SYSFS");
    if (!s || !r || strlen(s) >= sizeof(server_path) || strlen(r) >= sizeof(sysfs_root) - 256) return;
    strcpy(server_path, s);
    strcpy(sysfs_root, r);
    server_starting = getenv("SIMGPU_SERVER_STARTING") != NULL;
    active = 1;
}

/* `simgpu run` starts its program before it has loaded the driver model (the program's own start runs beside its
 * own): its socket appears once the server listens, with the sysfs it serves written whole before it. Wait for the
 * socket before the first sysfs path or connection, while the run's directory (the socket's) exists -- `simgpu run`
 * removes it when it ends, however its start went -- and at most SERVER_START_MS. Without SIMGPU_SERVER_STARTING
 * (a server not started by `simgpu run`) the socket is there or never will be. (Not the server's pid: in another
 * pid namespace that names nothing.) */
#define SERVER_START_MS 60000
static void wait_for_server(void) {
    if (!server_starting || __atomic_load_n(&server_up, __ATOMIC_ACQUIRE)) return;
    int saved = errno;
    char dir[sizeof server_path];
    strcpy(dir, server_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    for (int ms = 0; ms < SERVER_START_MS; ms++) {
        if (syscall(SYS_faccessat, AT_FDCWD, server_path, F_OK) == 0) {
            __atomic_store_n(&server_up, 1, __ATOMIC_RELEASE);
            break;
        }
        if (slash && syscall(SYS_faccessat, AT_FDCWD, dir, F_OK) != 0) break;
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
    }
    errno = saved;
}

/* ---- paths --------------------------------------------------------------------------------------------- */
static int has_prefix(const char *p, const char *prefix) {
    size_t n = strlen(prefix);
    return strncmp(p, prefix, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

/* The sysfs path the server wrote for p, or p itself. */
static const char *rewrite(const char *p, char *out, size_t size) {
    int local_pci = p && simgpu_localpci_active() &&
                    (has_prefix(p, "/sys/bus/pci/devices") || !strcmp(p, "/proc/sys/vm/compact_unevictable_allowed"));
    if (!active || !p || (!has_prefix(p, "/sys/devices/virtual/kfd") && !has_prefix(p, "/sys/class/drm") && !local_pci))
        return p;
    wait_for_server();
    snprintf(out, size, "%s%s", sysfs_root, p);
    return out;
}

/* 1 for /dev/kfd, 2 for a render node the server serves, else 0. */
static int device_path(const char *p, int *minor) {
    if (!active || !p) return 0;
    if (strcmp(p, "/dev/kfd") == 0) return 1;
    char *end;
    if (strncmp(p, "/dev/dri/renderD", 16) != 0) return 0;
    long m = strtol(p + 16, &end, 10);
    if (end == p + 16 || *end || m < 128 || m > 255) return 0;
    wait_for_server();
    char dir[2304];
    struct stat st;
    REAL(int, stat, const char *, struct stat *);
    snprintf(dir, sizeof dir, "%s/sys/class/drm/renderD%ld", sysfs_root, m);
    if (real_stat(dir, &st) != 0) return 0;
    if (minor) *minor = (int)m;
    return 2;
}

/* The server's handle of a device fd, or -1. */
static int handle_of(int fd) {
    return fd >= 0 && fd < MAX_FDS ? fd_handle[fd] - 1 : -1;
}

/* ---- the connection ------------------------------------------------------------------------------------ */
static int sendmsg_fd(int sock, const struct msg *m, const void *payload, size_t n, int fd) {
    struct iovec iov[2] = {{(void *)m, sizeof *m}, {(void *)payload, n}};
    char control[CMSG_SPACE(sizeof(int))];
    struct msghdr h = {.msg_iov = iov, .msg_iovlen = n ? 2 : 1};
    if (fd >= 0) {
        memset(control, 0, sizeof control);
        h.msg_control = control;
        h.msg_controllen = sizeof control;
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return sendmsg(sock, &h, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* Receive one message into buf; its payload length, the fd that came with it (or -1). */
static ssize_t recvmsg_fd(int sock, int *fd) {
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {buf, sizeof buf};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);
    if (fd) *fd = -1;
    if (n < (ssize_t)sizeof(struct msg)) return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int got;
            memcpy(&got, CMSG_DATA(c), sizeof got);
            if (fd) *fd = got; else close(got);
        }
    return n - (ssize_t)sizeof(struct msg);
}

/* This thread's connection, or -errno: -EIO if the server cannot be reached, the server's answer to HELLO (EPERM:
 * the peer credentials do not match, e.g. from another pid namespace or user). */
static int connection(void) {
    pid_t pid = getpid();
    if (conn >= 0 && conn_pid == pid) return conn;
    conn = -1; /* a forked child does not talk on its parent's connection */
    wait_for_server();
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, server_path);
    struct msg m = {.type = SIMGPU_MSG_HELLO, .a = {pid}}, reply;
    int page = -1; /* the session's status page (spinwait.c) */
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0 || sendmsg_fd(s, &m, NULL, 0, -1) < 0 ||
        recvmsg_fd(s, &page) < 0) {
        if (s >= 0) close(s);
        return -EIO;
    }
    memcpy(&reply, buf, sizeof reply);
    if (reply.type != SIMGPU_MSG_REPLY || reply.a[0] != 0) {
        if (page >= 0) close(page);
        close(s);
        return reply.type == SIMGPU_MSG_REPLY && reply.a[0] < 0 && reply.a[0] > -4096 ? (int)reply.a[0] : -EIO;
    }
    if (page >= 0) simgpu_spin_attach(page);
    conn_pid = pid;
    return conn = s;
}

static int64_t copy_self(int write, uintptr_t addr, void *local, size_t n) {
    struct iovec l = {local, n}, r = {(void *)addr, n};
    ssize_t got = write ? process_vm_writev(getpid(), &l, 1, &r, 1, 0) : process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    return got == (ssize_t)n ? 0 : -EFAULT;
}

/* A whole small file read with raw system calls (not this library's open); its length, or -1. */
static ssize_t read_small(const char *path, char *out, size_t size) {
    int f = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (f < 0) return -1;
    size_t got = 0;
    ssize_t r;
    while (got + 1 < size && (r = read(f, out + got, size - 1 - got)) > 0) got += (size_t)r;
    close(f);
    out[got] = 0;
    return (ssize_t)got;
}

/* Whether a page of [addr, addr + n) that mincore(2) reports not resident reads as zero: the range lies, without a
 * gap, in anonymous memory -- private (no file: inode 0) or shared (shmem: "/dev/zero (deleted)") -- and the
 * system has no swap. Then such a page was never written (an anonymous page lives in the page tables or, shared,
 * in shmem's page cache, both of which mincore reports); with swap it could be swapped out, and a file mapping's
 * page can be on disk. 0 when unsure (then every page is copied). */
static int holes_read_zero(uintptr_t addr, size_t n) {
    enum { SIZE = 1 << 16 };
    char *text = malloc(SIZE);
    if (text == NULL) return 0;
    ssize_t len = read_small("/proc/swaps", text, SIZE);
    int f = -1;
    if (len < 0 || strchr(text, '\n') == NULL || strchr(text, '\n')[1] != 0 || /* only the header line */
        (f = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC)) < 0) {
        free(text);
        return 0;
    }
    uintptr_t next = addr, end = addr + n;
    size_t have = 0;
    ssize_t r;
    int ok = 0, done = 0;
    while (!done && (r = read(f, text + have, SIZE - 1 - have)) > 0) {
        have += (size_t)r;
        text[have] = 0;
        char *line = text, *nl;
        while (!done && (nl = strchr(line, '\n')) != NULL) {
            *nl = 0;
            unsigned long lo, hi, inode;
            char perms[8] = "";
            int path = 0;
            if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %n", &lo, &hi, perms, &inode, &path) >= 4 && hi > next) {
                const char *name = path ? line + path : "";
                int anon = (inode == 0 && (name[0] == 0 || strcmp(name, "[heap]") == 0)) ||
                           strcmp(name, "/dev/zero (deleted)") == 0;
                /* a gap, memory whose holes need not be zero, or memory the full copy would find unreadable */
                if (lo > next || !anon || perms[0] != 'r') done = 1;
                else if ((next = hi) >= end) ok = done = 1;
            }
            line = nl + 1;
        }
        have = strlen(line); /* (a partial line: kept for the next read) */
        memmove(text, line, have);
        if (have == SIZE - 1) break;
    }
    close(f);
    free(text);
    return ok;
}

/* Copy [addr, addr + n) of this process into `to`, skipping the pages that read as zero and are not resident
 * (holes_read_zero): `to` is a fresh memfd's mapping, zero already, and a page faulted in only to copy its zeros
 * costs a page allocation on each side (tinygrad's allocator shares 32 untouched 2 MiB staging buffers a GPU). */
static int64_t copy_resident(uintptr_t addr, char *to, size_t n) {
    size_t pages = n / 4096;
    unsigned char *vec = n % 4096 == 0 && addr % 4096 == 0 && holes_read_zero(addr, n) ? malloc(pages) : NULL;
    if (vec == NULL || mincore((void *)addr, n, vec) != 0) {
        free(vec);
        return copy_self(0, addr, to, n);
    }
    int64_t r = 0;
    for (size_t i = 0; i < pages && r == 0;) {
        if (!(vec[i] & 1)) { i++; continue; }
        size_t j = i;
        while (j < pages && (vec[j] & 1)) j++;
        r = copy_self(0, addr + i * 4096, to + i * 4096, (j - i) * 4096);
        i = j;
    }
    free(vec);
    return r;
}

/* USERPTR: the pages [addr, addr + n) move into a memfd mapped at the same address (contents kept). */
static int64_t share(uintptr_t addr, size_t n, int *fd) {
    REAL(void *, mmap, void *, size_t, int, int, int, off_t);
    REAL(int, munmap, void *, size_t);
    *fd = memfd_create("simgpu-userptr", MFD_CLOEXEC);
    if (*fd < 0 || ftruncate(*fd, (off_t)n) < 0) return -ENOMEM;
    void *tmp = real_mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (tmp == MAP_FAILED) return -ENOMEM;
    int64_t r = copy_resident(addr, tmp, n);
    if (r == 0 && real_mmap((void *)addr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, *fd, 0) == MAP_FAILED)
        r = -EFAULT;
    real_munmap(tmp, n);
    return r;
}

int simgpu_in_call(void) { return in_call; }

/* SPIN (spinwait.c): on this thread's own connection, between its calls, never blocking (a full socket: the worker
 * has SPINs to read already). */
int simgpu_spin_kick(void) {
    if (conn < 0 || in_call || conn_pid != getpid()) return -1;
    struct msg m = {.type = SIMGPU_MSG_SPIN};
    return send(conn, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof m ? 0 : -1;
}

static int64_t converse(struct msg *req, const void *payload, size_t n, struct msg *reply, ssize_t *reply_len,
                        int *reply_fd);

/* Send a request and wait for its reply, answering the server's memory requests meanwhile. The reply's
 * header is returned in *reply, its payload in buf. */
static int64_t call(struct msg *req, const void *payload, size_t n, struct msg *reply, ssize_t *reply_len,
                    int *reply_fd) {
    in_call++;
    int64_t r = converse(req, payload, n, reply, reply_len, reply_fd);
    in_call--;
    return r;
}

static int64_t converse(struct msg *req, const void *payload, size_t n, struct msg *reply, ssize_t *reply_len,
                        int *reply_fd) {
    int s = connection();
    if (s < 0) return s;
    if (sendmsg_fd(s, req, payload, n, -1) < 0) return -EIO;
    for (;;) {
        int fd;
        ssize_t len = recvmsg_fd(s, &fd);
        if (len < 0) return -EIO;
        struct msg m;
        memcpy(&m, buf, sizeof m);
        if (m.type == SIMGPU_MSG_REPLY) {
            *reply = m;
            if (reply_len) *reply_len = len;
            if (reply_fd) *reply_fd = fd; else if (fd >= 0) close(fd);
            return m.a[0];
        }
        if (fd >= 0) close(fd);
        struct msg r = {.type = SIMGPU_MSG_REPLY};
        size_t out = 0;
        int out_fd = -1;
        if (m.type == SIMGPU_MSG_MEM_READ && m.a[1] >= 0 && m.a[1] <= SIMGPU_MSG_MAX_PAYLOAD) {
            out = (size_t)m.a[1];
            r.a[0] = copy_self(0, (uintptr_t)m.a[0], buf + sizeof m, out);
            if (r.a[0]) out = 0;
        } else if (m.type == SIMGPU_MSG_MEM_WRITE) {
            r.a[0] = copy_self(1, (uintptr_t)m.a[0], buf + sizeof m, (size_t)len);
        } else if (m.type == SIMGPU_MSG_SHARE && m.a[1] > 0) {
            r.a[0] = share((uintptr_t)m.a[0], (size_t)m.a[1], &out_fd);
        } else if (m.type == SIMGPU_MSG_FD_HANDLE) {
            int h = m.a[0] >= 0 && m.a[0] < MAX_FDS ? handle_of((int)m.a[0]) : -1;
            r.a[0] = h >= 0 ? h : -EBADF;
        } else {
            r.a[0] = -EINVAL;
        }
        int bad = sendmsg_fd(s, &r, buf + sizeof m, out, r.a[0] == 0 ? out_fd : -1);
        if (out_fd >= 0) close(out_fd);
        if (bad) return -EIO;
    }
}

static int fail(int64_t r) {
    errno = (int)-r;
    return -1;
}

/* ---- device files -------------------------------------------------------------------------------------- */

static int last_device_fd = -1; /* the device fd opened last (simgpu_device_fd) */

int simgpu_device_fd(void) {
    int fd = __atomic_load_n(&last_device_fd, __ATOMIC_RELAXED);
    if (handle_of(fd) >= 0) return fd;
    for (fd = 0; fd < MAX_FDS; fd++) /* (closed since: any other; once per process, at its first spin) */
        if (fd_handle[fd]) return fd;
    return -1;
}

static int handle_refs(int handle) {
    int n = 0;
    for (int i = 0; i < MAX_FDS; i++) n += fd_handle[i] == handle + 1;
    return n;
}

static int device_open(const char *path, int flags) {
    struct msg req = {.type = SIMGPU_MSG_OPEN, .a = {flags}}, rep;
    int fd;
    int64_t r = call(&req, path, strlen(path), &rep, NULL, &fd);
    if (r < 0) return fail(r);
    if (fd < 0 || fd >= MAX_FDS) {
        if (fd >= 0) close(fd);
        return fail(-EMFILE);
    }
    if (!(flags & O_CLOEXEC)) fcntl(fd, F_SETFD, 0);
    pthread_mutex_lock(&lock);
    fd_handle[fd] = (int)r + 1;
    pthread_mutex_unlock(&lock);
    __atomic_store_n(&last_device_fd, fd, __ATOMIC_RELAXED);
    return fd;
}

/* The fd is going away: tell the server when it was the last one of its file. */
static void forget_fd(int fd) {
    int h = handle_of(fd);
    if (h < 0) return;
    pthread_mutex_lock(&lock);
    fd_handle[fd] = 0;
    int last = handle_refs(h) == 0;
    pthread_mutex_unlock(&lock);
    if (last) {
        struct msg req = {.type = SIMGPU_MSG_CLOSE, .a = {h}}, rep;
        call(&req, NULL, 0, &rep, NULL, NULL);
    }
}

static void alias_fd(int oldfd, int newfd) {
    int h = handle_of(oldfd);
    if (newfd < 0 || newfd >= MAX_FDS || newfd == oldfd) return;
    if (handle_of(newfd) >= 0) forget_fd(newfd);
    if (h >= 0) {
        pthread_mutex_lock(&lock);
        fd_handle[newfd] = h + 1;
        pthread_mutex_unlock(&lock);
    }
}

static int open_common(int dirfd, const char *path, int flags, mode_t mode, int at) {
    REAL(int, open, const char *, int, ...);
    REAL(int, openat, int, const char *, int, ...);
    if (device_path(path, NULL)) return device_open(path, flags);
    int local = simgpu_localpci_open(path, flags);
    if (local != -2) return local;
    char tmp[4096];
    const char *p = rewrite(path, tmp, sizeof tmp);
    return at ? real_openat(dirfd, p, flags, mode) : real_open(p, flags, mode);
}

#define MODE_ARG(flags) \
    mode_t mode = 0; \
    if ((flags) & (O_CREAT | __O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }

EXPORT int open(const char *path, int flags, ...) { MODE_ARG(flags); return open_common(AT_FDCWD, path, flags, mode, 0); }
EXPORT int open64(const char *path, int flags, ...) { MODE_ARG(flags); return open_common(AT_FDCWD, path, flags, mode, 0); }
EXPORT int openat(int d, const char *path, int flags, ...) { MODE_ARG(flags); return open_common(d, path, flags, mode, 1); }
EXPORT int openat64(int d, const char *path, int flags, ...) { MODE_ARG(flags); return open_common(d, path, flags, mode, 1); }
EXPORT int __open_2(const char *path, int flags) { return open_common(AT_FDCWD, path, flags, 0, 0); }
EXPORT int __open64_2(const char *path, int flags) { return open_common(AT_FDCWD, path, flags, 0, 0); }
EXPORT int __openat_2(int d, const char *path, int flags) { return open_common(d, path, flags, 0, 1); }
EXPORT int __openat64_2(int d, const char *path, int flags) { return open_common(d, path, flags, 0, 1); }

EXPORT FILE *fopen(const char *path, const char *mode) {
    REAL(FILE *, fopen, const char *, const char *);
    char tmp[4096];
    return real_fopen(rewrite(path, tmp, sizeof tmp), mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode) {
    REAL(FILE *, fopen64, const char *, const char *);
    char tmp[4096];
    return real_fopen64(rewrite(path, tmp, sizeof tmp), mode);
}

EXPORT DIR *opendir(const char *path) {
    REAL(DIR *, opendir, const char *);
    char tmp[4096];
    return real_opendir(rewrite(path, tmp, sizeof tmp));
}

EXPORT int close(int fd) {
    REAL(int, close, int);
    if (!simgpu_books_are_mine()) return real_close(fd); /* a vfork child: the tables are its parent's */
    if (handle_of(fd) >= 0) forget_fd(fd);
    simgpu_localpci_forget(fd);
    return real_close(fd);
}

EXPORT int dup(int fd) {
    REAL(int, dup, int);
    int r = real_dup(fd);
    if (r >= 0 && simgpu_books_are_mine()) {
        alias_fd(fd, r);
        simgpu_localpci_alias(fd, r);
    }
    return r;
}

EXPORT int dup2(int fd, int to) {
    REAL(int, dup2, int, int);
    int r = real_dup2(fd, to);
    if (r >= 0 && simgpu_books_are_mine()) {
        alias_fd(fd, r);
        simgpu_localpci_alias(fd, r);
    }
    return r;
}

EXPORT int dup3(int fd, int to, int flags) {
    REAL(int, dup3, int, int, int);
    int r = real_dup3(fd, to, flags);
    if (r >= 0 && simgpu_books_are_mine()) {
        alias_fd(fd, r);
        simgpu_localpci_alias(fd, r);
    }
    return r;
}

/* The array an ioctl's argument points to that the driver reads on every call (mockgpu.protocol.ATTACHED): read
 * here and sent after the argument, so that the server need not ask for it with a MEM_READ round trip. Returns the
 * bytes appended to in[size...] (0: none, or unreadable -- then the server asks, and answers EFAULT as before). */
static const struct { unsigned long request; size_t ptr, count, elem; } attached[] = SIMGPU_ATTACHED;

static size_t attach(unsigned long request, unsigned char *in, size_t size, size_t room, uintptr_t *addr) {
    for (size_t i = 0; i < sizeof attached / sizeof *attached; i++) {
        if (attached[i].request != (request & 0xFFFFFFFFUL)) continue; /* (a sign-extended int request too) */
        uint64_t ptr;
        uint32_t count;
        memcpy(&ptr, in + attached[i].ptr, sizeof ptr);
        memcpy(&count, in + attached[i].count, sizeof count);
        size_t n = (size_t)count * attached[i].elem;
        if (!n || n > room - size || copy_self(0, (uintptr_t)ptr, in + size, n)) return 0;
        *addr = (uintptr_t)ptr;
        return n;
    }
    return 0;
}

EXPORT int ioctl(int fd, unsigned long request, ...) {
    REAL(int, ioctl, int, unsigned long, ...);
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    int h = handle_of(fd);
    if (h < 0) return real_ioctl(fd, request, arg);
    size_t size = (request >> 16) & 0x3FFF;
    unsigned char in[0x4000];
    if (size && copy_self(0, (uintptr_t)arg, in, size)) return fail(-EFAULT);
    uintptr_t extra_addr = 0;
    size_t extra = attach(request, in, size, sizeof in, &extra_addr);
    struct msg req = {.type = SIMGPU_MSG_IOCTL, .a = {h, (int64_t)request, (int64_t)extra_addr, (int64_t)extra}}, rep;
    ssize_t len;
    int64_t r = call(&req, in, size + extra, &rep, &len, NULL);
    if (r < 0) return fail(r);
    if ((request >> 30) & 2 && len == (ssize_t)size && size &&
        copy_self(1, (uintptr_t)arg, buf + sizeof(struct msg), size))
        return fail(-EFAULT);
    return (int)r;
}

/* ---- mappings ------------------------------------------------------------------------------------------ */
static void *map_common(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    REAL(void *, mmap, void *, size_t, int, int, int, off_t);
    int h = handle_of(fd);
    if (h < 0) return real_mmap(addr, len, prot, flags, fd, off);
    struct msg req = {.type = SIMGPU_MSG_MMAP, .a = {h, (int64_t)(uintptr_t)addr, (int64_t)len, prot, flags, off}}, rep;
    int64_t r = call(&req, NULL, 0, &rep, NULL, NULL);
    if (r < 0) {
        errno = (int)-r;
        return MAP_FAILED;
    }
    void *got = real_mmap(addr, len, prot, flags, fd, off);
    if (got == MAP_FAILED) return got;
    req.type = SIMGPU_MSG_MAPPED;
    req.a[1] = (int64_t)(uintptr_t)got;
    call(&req, NULL, 0, &rep, NULL, NULL);
    pthread_mutex_lock(&lock);
    if (nmaps < MAX_MAPS) {
        maps[nmaps].addr = (uintptr_t)got;
        maps[nmaps++].len = len;
    }
    pthread_mutex_unlock(&lock);
    return got;
}

EXPORT void *mmap(void *a, size_t len, int prot, int flags, int fd, off_t off) { return map_common(a, len, prot, flags, fd, off); }
EXPORT void *mmap64(void *a, size_t len, int prot, int flags, int fd, off_t off) { return map_common(a, len, prot, flags, fd, off); }

EXPORT int munmap(void *addr, size_t len) {
    REAL(int, munmap, void *, size_t);
    uintptr_t a = (uintptr_t)addr;
    int known = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nmaps; i++)
        if (maps[i].addr < a + len && a < maps[i].addr + maps[i].len) {
            known = 1;
            maps[i--] = maps[--nmaps];
        }
    pthread_mutex_unlock(&lock);
    if (known) {
        struct msg req = {.type = SIMGPU_MSG_MUNMAP, .a = {(int64_t)a, (int64_t)len}}, rep;
        call(&req, NULL, 0, &rep, NULL, NULL);
    }
    return real_munmap(addr, len);
}

/* ---- stat, access, readlink ---------------------------------------------------------------------------- */
/* The device nodes look like character devices (/dev/null's inode with their own device numbers). */
static int device_stat(const char *path, struct stat *st) {
    REAL(int, stat, const char *, struct stat *);
    int minor = 0, kind = device_path(path, &minor);
    if (real_stat("/dev/null", st) != 0) return -1;
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = kind == 1 ? makedev(KFD_MAJOR, 0) : makedev(DRM_MAJOR, minor);
    return 0;
}

EXPORT int stat(const char *path, struct stat *st) {
    REAL(int, stat, const char *, struct stat *);
    char tmp[4096];
    if (device_path(path, NULL)) return device_stat(path, st);
    return real_stat(rewrite(path, tmp, sizeof tmp), st);
}

EXPORT int lstat(const char *path, struct stat *st) {
    REAL(int, lstat, const char *, struct stat *);
    char tmp[4096];
    if (device_path(path, NULL)) return device_stat(path, st);
    return real_lstat(rewrite(path, tmp, sizeof tmp), st);
}

EXPORT int stat64(const char *path, struct stat64 *st) { return stat(path, (struct stat *)st); }
EXPORT int lstat64(const char *path, struct stat64 *st) { return lstat(path, (struct stat *)st); }

EXPORT int fstatat(int d, const char *path, struct stat *st, int flags) {
    REAL(int, fstatat, int, const char *, struct stat *, int);
    char tmp[4096];
    if (device_path(path, NULL)) return device_stat(path, st);
    return real_fstatat(d, rewrite(path, tmp, sizeof tmp), st, flags);
}

EXPORT int fstatat64(int d, const char *path, struct stat64 *st, int flags) {
    return fstatat(d, path, (struct stat *)st, flags);
}

EXPORT int access(const char *path, int mode) {
    REAL(int, access, const char *, int);
    char tmp[4096];
    if (device_path(path, NULL)) return 0;
    return real_access(rewrite(path, tmp, sizeof tmp), mode);
}

EXPORT int faccessat(int d, const char *path, int mode, int flags) {
    REAL(int, faccessat, int, const char *, int, int);
    char tmp[4096];
    if (device_path(path, NULL)) return 0;
    return real_faccessat(d, rewrite(path, tmp, sizeof tmp), mode, flags);
}

EXPORT ssize_t readlink(const char *path, char *out, size_t size) {
    REAL(ssize_t, readlink, const char *, char *, size_t);
    char tmp[4096];
    return real_readlink(rewrite(path, tmp, sizeof tmp), out, size);
}

EXPORT ssize_t readlinkat(int d, const char *path, char *out, size_t size) {
    REAL(ssize_t, readlinkat, int, const char *, char *, size_t);
    char tmp[4096];
    return real_readlinkat(d, rewrite(path, tmp, sizeof tmp), out, size);
}
