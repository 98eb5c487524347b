/* The run's GPUs as LOCAL PCI functions for a userspace driver (`simgpu run --am`, the default): what a driver such as
 * tinygrad's PCIDevice does with sysfs and its BARs, served by the run's local-PCI service (mockgpu/localpci.py,
 * socket $SIMGPU_LOCALPCI) without root and without hardware.
 *
 *  - /sys/bus/pci/devices and /proc/sys/vm/compact_unevictable_allowed are rewritten into the run's sysfs directory
 *    (preload.c's rewrite): the GPUs' vendor/device/class/resource files, a writable `enable`, and "0" for the
 *    sysctl the driver would otherwise ask sudo to write.
 *  - `config` opens as a descriptor whose reads and writes reach the device's configuration space.
 *  - `resource0/2/5` open as an empty, sealed memfd named "simgpu-bar:<gpu>:<bar>". The driver maps it with libc's
 *    mmap through ctypes, which no interposer sees, so the mapping cannot be made PROT_NONE; instead every access to
 *    it is past the end of an empty file and faults with SIGBUS. The handler finds the mapping (/proc/self/maps: its
 *    name and file offset give the GPU, the BAR and the offset) and
 *      BAR0 (VRAM): maps the GPU's VRAM pages of the device-memory file over the whole mapping, once; the access is
 *                   retried and from then on CPU and GPU share those bytes;
 *      BAR2 (doorbells), BAR5 (registers): decodes the faulting move (x86mov.c), performs it on the device through
 *                   the service (a register read has side effects no shared page can model, a doorbell store runs
 *                   its queue), writes a loaded value into the destination register and steps over the instruction.
 *                   An instruction that is not one of the decoded forms stops the program with a message naming it.
 *  - /proc/self/pagemap opens as a descriptor whose reads give frame numbers the GPUs' system aperture resolves to
 *    the program's own pages: the touched pages of anonymous memory, shared (what tinygrad's host allocations and CPU
 *    buffers are) or private (memory the program allocated itself), move, contents kept, into a memfd the service
 *    registers as system memory at a physical address of its own ("simgpu-host:<address>"); pages already moved
 *    answer from that name; untouched pages are not present, as the kernel says. A forked child gets private pages
 *    back as private copies. Other pages read as not present, with a warning (the pagemap section below).
 *  - fstat of those descriptors reports a tiny block size, so Python's buffered reads ask exactly the bytes read.
 *
 * The handler's work is async-signal-safe system calls (socket, sendmsg, recvmsg, mmap, process_vm_readv, open and
 * read of /proc/self/maps); each thread keeps its own connection to the service.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "localpci.h"
#include "sigchain.h"
#include "x86mov.h"

#ifndef SIMGPU_LP_READ
#error "compile with the -D definitions of mockgpu.localpci.c_definitions()"
#endif

#define EXPORT __attribute__((visibility("default")))
#define MAX_FDS 65536
#define PAGE 4096UL
#define BAR_NAME "/memfd:simgpu-bar:"
#define HOST_NAME "/memfd:simgpu-host:"
#define PCI_DEVICES "/sys/bus/pci/devices/"

enum { FD_NONE, FD_CONFIG, FD_PAGEMAP };

struct request { uint64_t op, gpu, bar, offset, size, value; };
struct reply { int64_t status; uint64_t value, offset, length; };

static struct sockaddr_un service = {.sun_family = AF_UNIX};
static int active;
static unsigned domain; /* the run's PCI domain ($SIMGPU_PCI_DOMAIN): its GPUs are <domain>:<03 + i>:00.0 */
static unsigned char fd_kind[MAX_FDS], fd_gpu[MAX_FDS];
static __thread int conn = -1;
static __thread pid_t conn_pid;

int simgpu_localpci_active(void) { return active; }

static void say(const char *text) {
    ssize_t unused = syscall(SYS_write, 2, text, strlen(text));
    (void)unused;
}

/* ---- the service ---------------------------------------------------------------------------------------- */
static int connection(void) {
    pid_t pid = (pid_t)syscall(SYS_getpid);
    if (conn >= 0 && conn_pid == pid) return conn;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    if (connect(s, (struct sockaddr *)&service, sizeof service) < 0) {
        syscall(SYS_close, s);
        return -1;
    }
    conn_pid = pid;
    return conn = s;
}

/* One request (with `n` payload bytes) and its reply: status (-errno on failure), `out` gets up to `max` payload
 * bytes (*got: how many), *fd a descriptor that came with it (or -1). */
static int64_t call(struct request *q, const void *payload, size_t n, struct reply *r, void *out, size_t max,
                    size_t *got, int *fd) {
    int s = connection();
    if (fd) *fd = -1;
    if (s < 0) return -EIO;
    struct iovec iov[2] = {{q, sizeof *q}, {(void *)payload, n}};
    struct msghdr h = {.msg_iov = iov, .msg_iovlen = n ? 2 : 1};
    if (sendmsg(s, &h, MSG_NOSIGNAL) < 0) return -EIO;
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec in[2] = {{r, sizeof *r}, {out, max}};
    struct msghdr m = {.msg_iov = in, .msg_iovlen = max ? 2 : 1, .msg_control = control,
                       .msg_controllen = sizeof control};
    ssize_t len = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
    if (len < (ssize_t)sizeof *r) return -EIO;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int f;
            memcpy(&f, CMSG_DATA(c), sizeof f);
            if (fd) *fd = f; else syscall(SYS_close, f);
        }
    if (got) *got = (size_t)len - sizeof *r;
    return r->status;
}

/* ---- /proc/self/maps ------------------------------------------------------------------------------------ */
struct mapping { uintptr_t start, end; uint64_t offset; int prot, shared; const char *path; };

static uint64_t hex(const char **p) {
    uint64_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return v;
        v = v << 4 | (uint64_t)d;
    }
}

static int parse_line(const char *p, struct mapping *m) {
    m->start = hex(&p);
    if (*p++ != '-') return -1;
    m->end = hex(&p);
    if (*p++ != ' ' || strlen(p) < 5) return -1;
    m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) | (p[2] == 'x' ? PROT_EXEC : 0);
    m->shared = p[3] == 's';
    p += 5;
    m->offset = hex(&p);
    for (int field = 0; field < 2; field++) { /* device, inode */
        while (*p == ' ') p++;
        while (*p && *p != ' ') p++;
    }
    while (*p == ' ') p++;
    m->path = p;
    return 0;
}

/* Call visit(mapping, arg) for each line of /proc/self/maps until it returns nonzero; that value, or 0. */
static int each_mapping(int (*visit)(const struct mapping *, void *), void *arg) {
    static __thread char text[8192];
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t have = 0;
    int result = 0;
    for (;;) {
        ssize_t n = syscall(SYS_read, fd, text + have, sizeof text - 1 - have);
        if (n <= 0) break;
        have += (size_t)n;
        text[have] = 0;
        char *line = text, *nl;
        while (!result && (nl = strchr(line, '\n'))) {
            *nl = 0;
            struct mapping m;
            if (parse_line(line, &m) == 0) result = visit(&m, arg);
            line = nl + 1;
        }
        if (result) break;
        have = (size_t)(text + have - line);
        memmove(text, line, have);
    }
    syscall(SYS_close, fd);
    return result;
}

struct reserved { uintptr_t start, end; };

static int reserved_visit(const struct mapping *m, void *arg) {
    struct reserved *r = arg;
    if (r->start < m->start || r->start >= m->end) return 0;
    return r->end <= m->end && m->prot == 0 && !m->shared && m->path[0] == 0 ? 1 : -1;
}

int simgpu_reserved_range(uintptr_t start, size_t len) {
    struct reserved r = {start, start + len};
    return each_mapping(reserved_visit, &r) == 1;
}

/* ---- BAR mappings --------------------------------------------------------------------------------------- */
struct bar_map { uintptr_t start, end; uint64_t offset; int prot, gpu, bar; };

static int bar_of(const char *path, int *gpu, int *bar) {
    if (strncmp(path, BAR_NAME, strlen(BAR_NAME)) != 0) return -1;
    const char *p = path + strlen(BAR_NAME);
    *gpu = (int)hex(&p);
    if (*p++ != ':') return -1;
    *bar = (int)hex(&p);
    return 0;
}

struct find { uintptr_t addr; struct bar_map *out; };

static int find_visit(const struct mapping *m, void *arg) {
    struct find *f = arg;
    if (f->addr < m->start || f->addr >= m->end) return 0;
    int gpu, bar;
    if (bar_of(m->path, &gpu, &bar) != 0) return -1;
    *f->out = (struct bar_map){m->start, m->end, m->offset, m->prot, gpu, bar};
    return 1;
}

/* The BAR mapping holding `addr`. Registers and doorbells fault on every access: the last few mappings found are
 * kept per thread, each still checked to be that BAR's file (/proc/self/map_files names it), so a mapping the
 * program replaced is looked up again. */
#define CACHED 8
static __thread struct bar_map cache[CACHED];
static __thread int cache_next;

static int still_there(const struct bar_map *b) {
    char link[64], target[128], want[128];
    snprintf(link, sizeof link, "/proc/self/map_files/%lx-%lx", (unsigned long)b->start, (unsigned long)b->end);
    ssize_t n = syscall(SYS_readlinkat, AT_FDCWD, link, target, sizeof target - 1);
    if (n < 0) return 0;
    target[n] = 0;
    snprintf(want, sizeof want, BAR_NAME "%x:%x (deleted)", b->gpu, b->bar);
    return strcmp(target, want) == 0;
}

static int find_bar(uintptr_t addr, struct bar_map *out) {
    for (int i = 0; i < CACHED; i++)
        if (cache[i].end && cache[i].start <= addr && addr < cache[i].end) {
            if (still_there(&cache[i])) {
                *out = cache[i];
                return 0;
            }
            cache[i].end = 0;
        }
    struct find f = {addr, out};
    if (each_mapping(find_visit, &f) != 1) return -1;
    if (out->bar != 0) cache[cache_next++ % CACHED] = *out;
    return 0;
}

/* BAR0: the GPU's VRAM over the whole mapping. */
static int map_vram(const struct bar_map *b) {
    struct request q = {SIMGPU_LP_MAP_VRAM, (uint64_t)b->gpu, 0, b->offset, b->end - b->start, 0};
    struct reply r;
    int fd;
    if (call(&q, NULL, 0, &r, NULL, 0, NULL, &fd) != 0 || fd < 0) {
        if (fd >= 0) syscall(SYS_close, fd);
        return -1;
    }
    void *got = (void *)syscall(SYS_mmap, b->start, b->end - b->start, b->prot, MAP_SHARED | MAP_FIXED, fd, r.offset);
    syscall(SYS_close, fd);
    return got == (void *)b->start ? 0 : -1;
}

static const int greg_of[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

static void refuse(const char *why, const uint8_t *code, size_t n, uintptr_t rip, const struct bar_map *b,
                   uint64_t offset) {
    char text[512];
    int len = snprintf(text, sizeof text, "simgpu: the instruction at %#lx (bytes", (unsigned long)rip);
    for (size_t i = 0; i < n && len < 400; i++) len += snprintf(text + len, sizeof text - len, " %02x", code[i]);
    snprintf(text + len, sizeof text - len, ") accessing BAR%d of GPU %d at offset %#lx: %s\n", b->bar, b->gpu,
             (unsigned long)offset, why);
    say(text);
}

/* BAR2/BAR5: perform the faulting move on the device and step over it; 0, or -1 after saying why not. */
static int emulate(ucontext_t *uc, const struct bar_map *b, uintptr_t addr) {
    greg_t *g = uc->uc_mcontext.gregs;
    uintptr_t rip = (uintptr_t)g[REG_RIP];
    uint8_t code[15];
    struct iovec local = {code, sizeof code}, remote = {(void *)rip, sizeof code};
    ssize_t n = process_vm_readv((pid_t)syscall(SYS_getpid), &local, 1, &remote, 1, 0);
    uint64_t offset = b->offset + (addr - b->start);
    struct x86_mov m;
    if (n <= 0 || x86_decode_mov(code, (size_t)n, &m) != 0) {
        refuse("not a move the BAR trap emulates (mov, movzx, movsx, movsxd of 1, 2, 4 or 8 bytes)", code,
               n > 0 ? (size_t)n : 0, rip, b, offset);
        return -1;
    }
    if (((g[REG_ERR] >> 1) & 1) != m.store) {
        refuse("the fault's write bit disagrees with the decoded move", code, (size_t)m.length, rip, b, offset);
        return -1;
    }
    if (addr + (uintptr_t)m.width > b->end) {
        refuse("the access runs past the end of the mapping", code, (size_t)m.length, rip, b, offset);
        return -1;
    }
    uint64_t regs[16];
    for (int i = 0; i < 16; i++) regs[i] = (uint64_t)g[greg_of[i]];
    struct request q = {m.store ? SIMGPU_LP_WRITE : SIMGPU_LP_READ, (uint64_t)b->gpu, (uint64_t)b->bar, offset,
                        (uint64_t)m.width, m.store ? x86_store_value(&m, regs) : 0};
    struct reply r;
    int64_t status = call(&q, NULL, 0, &r, NULL, 0, NULL, NULL);
    if (status != 0) {
        refuse(status == -EIO ? "the local-PCI service cannot be reached"
                              : "the device refused the access (the server's log says why)",
               code, (size_t)m.length, rip, b, offset);
        return -1;
    }
    if (!m.store) {
        x86_load_into(&m, r.value, regs);
        for (int i = 0; i < 16; i++) g[greg_of[i]] = (greg_t)regs[i];
    }
    g[REG_RIP] = (greg_t)(rip + (uintptr_t)m.length);
    return 0;
}

static void on_bus(int sig, siginfo_t *info, void *context) {
    int saved = errno;
    struct bar_map b;
    uintptr_t addr = info ? (uintptr_t)info->si_addr : 0;
    if (info && info->si_code == BUS_ADRERR && find_bar(addr, &b) == 0 &&
        (b.bar == 0 ? map_vram(&b) : emulate((ucontext_t *)context, &b, addr)) == 0) {
        errno = saved;
        return;
    }
    errno = saved;
    simgpu_pass_signal(sig, info, context);
}

/* ---- opening the PCI files and pagemap ------------------------------------------------------------------ */
/* GPU and file name of /sys/bus/pci/devices/<the run's domain>:<bus>:00.0/<name>, spelt exactly as the run's sysfs
 * directory lists it (another domain, an upper-case or short spelling is not one of the run's devices). */
static int parse_pci(const char *path, int *gpu, const char **name) {
    if (strncmp(path, PCI_DEVICES, strlen(PCI_DEVICES)) != 0) return -1;
    const char *bdf = path + strlen(PCI_DEVICES), *slash = strchr(bdf, '/');
    if (!slash || slash - bdf != 12 || strchr(slash + 1, '/')) return -1;
    const char *b = bdf + 5;
    unsigned bus = (unsigned)hex(&b);
    char want[16];
    snprintf(want, sizeof want, "%04x:%02x:00.0", domain, bus & 0xff);
    if (b != bdf + 7 || bus < 3 || strncmp(bdf, want, 12) != 0) return -1;
    *gpu = (int)bus - 3;
    *name = slash + 1;
    return 0;
}

static int special_fd(const char *name, int flags, int kind, int gpu) {
    int fd = memfd_create(name, MFD_ALLOW_SEALING | (flags & O_CLOEXEC ? MFD_CLOEXEC : 0));
    if (fd < 0) return -1;
    if (fd >= MAX_FDS) {
        syscall(SYS_close, fd);
        errno = EMFILE;
        return -1;
    }
    fd_kind[fd] = (unsigned char)kind;
    fd_gpu[fd] = (unsigned char)gpu;
    return fd;
}

int simgpu_localpci_open(const char *path, int flags) {
    if (!active || !path) return -2;
    char self[64];
    snprintf(self, sizeof self, "/proc/%ld/pagemap", (long)syscall(SYS_getpid));
    if (strcmp(path, "/proc/self/pagemap") == 0 || strcmp(path, self) == 0)
        return special_fd("simgpu-pagemap", flags, FD_PAGEMAP, 0);
    int gpu, bar;
    const char *name;
    if (parse_pci(path, &gpu, &name) != 0 || gpu > 255) return -2;
    if (strcmp(name, "config") == 0) return special_fd("simgpu-config", flags, FD_CONFIG, gpu);
    if (sscanf(name, "resource%d", &bar) != 1 || (bar != 0 && bar != 2 && bar != 5) || strlen(name) != 9) return -2;
    char memfd_name[64];
    snprintf(memfd_name, sizeof memfd_name, "simgpu-bar:%x:%x", gpu, bar);
    int fd = special_fd(memfd_name, flags, FD_NONE, gpu);
    /* empty for good: every access to a mapping of it faults */
    if (fd >= 0) fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
    return fd;
}

void simgpu_localpci_forget(int fd) {
    if (fd >= 0 && fd < MAX_FDS) fd_kind[fd] = FD_NONE;
}

void simgpu_localpci_alias(int fd, int to) {
    if (fd < 0 || fd >= MAX_FDS || to < 0 || to >= MAX_FDS || to == fd) return;
    fd_kind[to] = fd_kind[fd]; /* a copy of a pagemap or config descriptor answers as it does; over one, forgets it */
    fd_gpu[to] = fd_gpu[fd];
}

/* ---- pagemap -------------------------------------------------------------------------------------------- */
/* A read answers as the kernel does for the pages asked for: a page this process has not touched (the real pagemap
 * has neither its present nor its swapped bit) is not present (0); a touched page of anonymous memory -- shared (what
 * tinygrad's host allocations and CPU-device buffers are) or private (a numpy array, the heap: what a CPU buffer over
 * memory the program allocated itself is) -- is present with a frame number the GPUs resolve: its run of touched pages
 * moves, contents kept, into a block of system memory the service registers with every GPU (SYSMEM), mapped shared
 * at the same address. Pages moved before answer from the block's name. Anything else (a file's pages, the stack)
 * reads as not present, with a warning.
 *
 * A private page moved into shared memory would be shared with a forked child instead of copied: the block of a
 * private run is named "...:private", and a fork handler gives the child a private copy of each such mapping (its
 * contents at the fork, at the same address), as the kernel gives a child a copy of a page pinned for DMA while the
 * parent keeps the page the device reaches. */
#define MAX_RUNS 256
#define TASK_END ((1ULL << 47) - PAGE) /* the end of user space a pagemap read covers (x86-64, 4-level paging) */
#define PRIVATE_TAG ":private"
#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
struct run { uintptr_t start, end; int prot, private; };
struct pages { uintptr_t start, end; uint64_t *entries; int nruns; struct run runs[MAX_RUNS]; int warned; };

static void warn_once(struct pages *p, uintptr_t at, const char *why) {
    if (p->warned) return;
    char text[256];
    snprintf(text, sizeof text, "simgpu: /proc/self/pagemap: %#lx %s; the GPU cannot reach it (reported not present)\n",
             (unsigned long)at, why);
    say(text);
    p->warned = 1;
}

/* Private anonymous memory whose pages may move: an anonymous mapping, the heap, a named anonymous mapping -- not
 * the stack, which grows into its guard gap and must stay what the kernel made it. */
static int private_anonymous(const struct mapping *m) {
    return !m->shared && (m->path[0] == 0 || strcmp(m->path, "[heap]") == 0 || strncmp(m->path, "[anon:", 6) == 0);
}

static int pages_visit(const struct mapping *m, void *arg) {
    struct pages *p = arg;
    uintptr_t lo = m->start > p->start ? m->start : p->start, hi = m->end < p->end ? m->end : p->end;
    if (lo >= hi) return m->start >= p->end;
    if (strncmp(m->path, HOST_NAME, strlen(HOST_NAME)) == 0) { /* moved before: its address is in its name */
        const char *s = m->path + strlen(HOST_NAME);
        uint64_t base = hex(&s) + m->offset - m->start;
        for (uintptr_t a = lo; a < hi; a += PAGE) p->entries[(a - p->start) / PAGE] = PM_PRESENT | (base + a) / PAGE;
    } else if (!(m->prot & PROT_READ) ||
               !((m->shared && strncmp(m->path, "/dev/zero", 9) == 0) || private_anonymous(m))) {
        warn_once(p, lo, "is not anonymous memory the CPU can read");
    } else if (p->nruns == MAX_RUNS) {
        warn_once(p, lo, "is past the 256 mappings (MAX_RUNS) one read moves");
    } else {
        p->runs[p->nruns++] = (struct run){lo, hi, m->prot, !m->shared};
    }
    return 0;
}

/* Move [start, end) of an anonymous mapping into a new block of system memory the GPUs reach, mapped shared at the
 * same address; the block's physical address. */
static int share(uintptr_t start, uintptr_t end, int prot, int private, uint64_t *pa) {
    size_t len = end - start;
    struct request q = {SIMGPU_LP_SYSMEM, 0, 0, 0, len, (uint64_t)private};
    struct reply r;
    int fd;
    if (call(&q, NULL, 0, &r, NULL, 0, NULL, &fd) != 0 || fd < 0) {
        if (fd >= 0) syscall(SYS_close, fd);
        return -1;
    }
    /* The block lives while a mapping of it does (the service frees it once none is left): mapped here, the
     * descriptor can go. */
    int ok = syscall(SYS_pwrite64, fd, start, len, 0) == (long)len &&
             (void *)syscall(SYS_mmap, start, len, prot, MAP_SHARED | MAP_FIXED, fd, 0) == (void *)start;
    syscall(SYS_close, fd);
    *pa = r.value;
    return ok ? 0 : -1;
}

/* The run's touched pages move (each stretch of them a block). `entries` holds the kernel's own entries of the run on
 * entry and ours on return: where each touched page went, 0 for the others. */
static int move_run(const struct run *run, uint64_t *entries) {
    size_t n = (run->end - run->start) / PAGE;
    for (size_t i = 0; i < n;) {
        if (!(entries[i] & (PM_PRESENT | PM_SWAPPED))) {
            entries[i++] = 0;
            continue;
        }
        size_t j = i;
        while (j < n && entries[j] & (PM_PRESENT | PM_SWAPPED)) j++;
        uint64_t pa;
        if (share(run->start + i * PAGE, run->start + j * PAGE, run->prot, run->private, &pa) != 0) return -1;
        for (size_t k = i; k < j; k++) entries[k] = PM_PRESENT | (pa / PAGE + (k - i));
        i = j;
    }
    return 0;
}

static ssize_t pagemap_read(void *out, size_t n, uint64_t pos) {
    if (pos % 8 || n % 8) return -EINVAL; /* as the kernel: whole entries only */
    uint64_t first = pos / 8;
    if (first >= TASK_END / PAGE) return 0;
    if (n / 8 > TASK_END / PAGE - first) n = (TASK_END / PAGE - first) * 8;
    struct pages *p = calloc(1, sizeof *p);
    if (!p) return -ENOMEM;
    p->start = first * PAGE;
    p->end = p->start + n / 8 * PAGE;
    p->entries = out;
    memset(out, 0, n);
    each_mapping(pages_visit, p);
    int real = p->nruns ? (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC) : -1;
    ssize_t result = (ssize_t)n;
    for (int i = 0; i < p->nruns && result >= 0; i++) {
        uint64_t *entries = p->entries + (p->runs[i].start - p->start) / PAGE;
        size_t bytes = (p->runs[i].end - p->runs[i].start) / PAGE * 8;
        /* the kernel's present and swapped bits: which pages this process has touched */
        if (real < 0 || syscall(SYS_pread64, real, entries, bytes, p->runs[i].start / PAGE * 8) != (long)bytes ||
            move_run(&p->runs[i], entries) != 0)
            result = -EIO;
    }
    if (real >= 0) syscall(SYS_close, real);
    free(p);
    return result;
}

/* ---- fork: private pages stay private --------------------------------------------------------------------- */
#define FOUND 64
struct found { uintptr_t start[FOUND], end[FOUND]; int prot[FOUND], n; };

static int private_block(const struct mapping *m, void *arg) {
    struct found *f = arg;
    if (strncmp(m->path, HOST_NAME, strlen(HOST_NAME)) != 0) return 0;
    const char *s = m->path + strlen(HOST_NAME);
    hex(&s);
    if (strncmp(s, PRIVATE_TAG, strlen(PRIVATE_TAG)) != 0) return 0;
    f->start[f->n] = m->start;
    f->end[f->n] = m->end;
    f->prot[f->n] = m->prot;
    return ++f->n == FOUND;
}

static int failed(long r) { return (unsigned long)r > -4096UL; }

/* Replace the shared mapping [start, end) with a private anonymous copy of its bytes, at the same address. */
static int privatize(uintptr_t start, uintptr_t end, int prot) {
    size_t len = end - start;
    long copy = syscall(SYS_mmap, 0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (failed(copy)) return -1;
    if (!(prot & PROT_READ) && syscall(SYS_mprotect, start, len, prot | PROT_READ) != 0) {
        syscall(SYS_munmap, copy, len);
        return -1;
    }
    memcpy((void *)copy, (void *)start, len);
    if (syscall(SYS_mprotect, copy, len, prot) != 0 ||
        syscall(SYS_mremap, copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, start) != (long)start) {
        syscall(SYS_munmap, copy, len);
        return -1;
    }
    return 0;
}

/* In a forked child (pthread_atfork): every block that holds a private run becomes private again. Async-signal-safe
 * work only (system calls, memcpy): the child of a threaded program may run nothing else. */
static void private_after_fork(void) {
    for (;;) {
        struct found f = {.n = 0};
        each_mapping(private_block, &f);
        int done = 0;
        for (int i = 0; i < f.n; i++) {
            if (privatize(f.start[i], f.end[i], f.prot[i]) == 0) {
                done++;
                continue;
            }
            char text[192];
            snprintf(text, sizeof text, "simgpu: fork: [%#lx, %#lx) stays shared with the parent (cannot copy it)\n",
                     (unsigned long)f.start[i], (unsigned long)f.end[i]);
            say(text);
        }
        if (!done) return; /* none left, or only ones that cannot be copied */
    }
}

/* ---- config space --------------------------------------------------------------------------------------- */
static ssize_t config_io(int gpu, void *data, size_t n, uint64_t pos, int write) {
    if (n > 4096) n = 4096;
    struct request q = {write ? SIMGPU_LP_CFG_WRITE : SIMGPU_LP_CFG_READ, (uint64_t)gpu, 0, pos, n, 0};
    struct reply r;
    size_t got = 0;
    int64_t s = write ? call(&q, data, n, &r, NULL, 0, NULL, NULL) : call(&q, NULL, 0, &r, data, n, &got, NULL);
    if (s < 0) return s;
    return write ? (ssize_t)r.value : (ssize_t)got;
}

/* ---- the descriptors' reads, writes and fstat ----------------------------------------------------------- */
static ssize_t serve(int fd, void *data, size_t n, uint64_t pos, int write) {
    if (fd_kind[fd] == FD_PAGEMAP) return write ? -EPERM : pagemap_read(data, n, pos);
    return config_io(fd_gpu[fd], data, n, pos, write);
}

static int special(int fd) { return active && fd >= 0 && fd < MAX_FDS && fd_kind[fd] != FD_NONE; }

static ssize_t at_position(int fd, void *data, size_t n, int write) {
    off_t pos = lseek(fd, 0, SEEK_CUR);
    ssize_t r = pos < 0 ? -errno : serve(fd, data, n, (uint64_t)pos, write);
    if (r < 0) {
        errno = (int)-r;
        return -1;
    }
    lseek(fd, pos + r, SEEK_SET);
    return r;
}

static ssize_t at_offset(int fd, void *data, size_t n, off_t pos, int write) {
    ssize_t r = pos < 0 ? -EINVAL : serve(fd, data, n, (uint64_t)pos, write);
    if (r < 0) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

#define REAL(ret, name, ...) \
    static ret (*real_##name)(__VA_ARGS__); \
    if (!real_##name) real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

EXPORT ssize_t read(int fd, void *b, size_t n) {
    REAL(ssize_t, read, int, void *, size_t);
    return special(fd) ? at_position(fd, b, n, 0) : real_read(fd, b, n);
}

EXPORT ssize_t write(int fd, const void *b, size_t n) {
    REAL(ssize_t, write, int, const void *, size_t);
    return special(fd) ? at_position(fd, (void *)b, n, 1) : real_write(fd, b, n);
}

EXPORT ssize_t pread(int fd, void *b, size_t n, off_t off) {
    REAL(ssize_t, pread, int, void *, size_t, off_t);
    return special(fd) ? at_offset(fd, b, n, off, 0) : real_pread(fd, b, n, off);
}

EXPORT ssize_t pread64(int fd, void *b, size_t n, off_t off) {
    REAL(ssize_t, pread64, int, void *, size_t, off_t);
    return special(fd) ? at_offset(fd, b, n, off, 0) : real_pread64(fd, b, n, off);
}

EXPORT ssize_t pwrite(int fd, const void *b, size_t n, off_t off) {
    REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
    return special(fd) ? at_offset(fd, (void *)b, n, off, 1) : real_pwrite(fd, b, n, off);
}

EXPORT ssize_t pwrite64(int fd, const void *b, size_t n, off_t off) {
    REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
    return special(fd) ? at_offset(fd, (void *)b, n, off, 1) : real_pwrite64(fd, b, n, off);
}

/* A block size of 8 (pagemap entries) or 2 (config): Python's buffered reader then reads what it was asked for
 * instead of 8 KiB ahead (which, for pagemap, would move pages nobody asked for). */
static void small_blocks(int fd, struct stat *st) {
    st->st_blksize = fd_kind[fd] == FD_PAGEMAP ? 8 : 2;
}

EXPORT int fstat(int fd, struct stat *st) {
    REAL(int, fstat, int, struct stat *);
    int r = real_fstat(fd, st);
    if (r == 0 && special(fd)) small_blocks(fd, st);
    return r;
}

EXPORT int fstat64(int fd, struct stat64 *st) {
    REAL(int, fstat64, int, struct stat64 *);
    int r = real_fstat64(fd, st);
    if (r == 0 && special(fd)) small_blocks(fd, (struct stat *)st);
    return r;
}

__attribute__((constructor)) static void localpci_init(void) {
    const char *path = getenv("SIMGPU_LOCALPCI"), *dom = getenv("SIMGPU_PCI_DOMAIN"), *end = dom;
    if (!path || strlen(path) >= sizeof service.sun_path) return;
    if (dom) domain = (unsigned)hex(&end);
    if (!dom || end == dom || *end || end - dom > 4) {
        say("simgpu: SIMGPU_PCI_DOMAIN is not a PCI domain (1 to 4 hex digits); the local PCI devices are off\n");
        return;
    }
    strcpy(service.sun_path, path);
    if (simgpu_take_signal(SIGBUS, on_bus) == 0) active = 1;
    if (active) pthread_atfork(NULL, NULL, private_after_fork);
}
