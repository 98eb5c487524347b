/* The simgpu server's wait for work (mockgpu/doorbellwait.py): a client rings a doorbell with a plain store into
 * the shared doorbell page, which no system call announces, so the session's worker must look at the page. Done in
 * Python that look costs ~40 us of the worker's CPU and the GIL each time; done here, between sleeps in ppoll(2)
 * that also wake at once when a client sends a request, it costs a few microseconds and no GIL (ctypes releases it
 * for the call).
 *
 * simgpu_doorbell_wait(watch, timeout_us, period_us, since_us, max_period_us, growth): whether any of the watch's
 * npages doorbell pages (slots 64-bit doorbells each) differs from its copy of the values last acted on (rung: the
 * GPU's own array), looked at every period_us -- or, with growth > 0, every
 * (now - since_us) / growth microseconds (since_us: CLOCK_MONOTONIC of the client's last activity), at least
 * period_us and at most max_period_us apart: a doorbell is then seen within 1/growth of the time the client was
 * quiet before it, and a quiet client is looked at less and less often. Between looks, ppoll on the watch's fds.
 * (What does not change from one wait to the next -- pages, fds, the SPIN counter -- is the watch, a struct the
 * caller fills once: ctypes converts each argument of a call, and this one is made every turn of the worker.)
 * Returns 1 for a changed doorbell, 2 for a readable (or hung-up) fd, 0 when timeout_us passed, -errno on a
 * failed ppoll.
 *
 * A SPIN message (mockgpu.protocol: a client thread spins on the GPU's memory and has seen a doorbell the GPU has
 * not acted on) is taken off its socket here and answered by a look at the doorbells at once: the doorbell is then
 * a 1 like any other, and a SPIN whose doorbell a look already found costs no turn in Python. Each SPIN taken is
 * counted in *spins (the session's: a client that announces its doorbells needs fewer looks of its own).
 *
 * simgpu_doorbell_pending(watch, out): the doorbells that differ from their values last acted on, page by page and
 * slot by slot, as (page, slot, value) triples in out (room for every doorbell); their count. The worker's turn asks
 * this once instead of comparing each GPU's page in numpy (three array operations a GPU, every turn).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_FDS 256

struct simgpu_watch { /* mockgpu.doorbellwait._Watch */
    const volatile uint64_t *const *pages;
    const uint64_t *const *seen; /* rung */
    const int *fds;
    int64_t *spins;
    int32_t slots, npages, nfds, pad;
};

#ifndef SIMGPU_MSG_SPIN
#error "compile with the -D definitions of mockgpu.protocol.c_definitions()"
#endif

/* Take the SPIN message at the head of socket fd, counting it in *spins; 1 if something else is there (a request, a
 * hang-up, not a socket: the caller's business), else 0. */
static int take_spins(int fd, int64_t *spins) {
    int64_t head[8];
    ssize_t n = recv(fd, head, sizeof head, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n != (ssize_t)sizeof head || head[0] != SIMGPU_MSG_SPIN) return 1;
    if (recv(fd, head, sizeof head, MSG_DONTWAIT) != (ssize_t)sizeof head) return 1;
    ++*spins;
    /* (what follows it, if anything, is found by the next ppoll, at once: no third recv a SPIN) */
    return 0;
}

static int64_t now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Whether doorbells [i, i + 8) of a page equal their values acted on: one memcmp of the block (most doorbells are
 * untouched, and a slot by slot look through the volatile page is ~14 instructions a doorbell). */
static int same_block(const volatile uint64_t *page, const uint64_t *seen, int i, int slots) {
    return i + 8 <= slots && memcmp((const void *)&page[i], &seen[i], 8 * sizeof(uint64_t)) == 0;
}

static int rung(const volatile uint64_t *const *pages, const uint64_t *const *seen, int npages, int slots) {
    for (int p = 0; p < npages; p++)
        for (int i = 0; i < slots; i += 8) {
            if (same_block(pages[p], seen[p], i, slots)) continue;
            for (int j = i; j < i + 8 && j < slots; j++)
                if (pages[p][j] != seen[p][j]) return 1;
        }
    return 0;
}

__attribute__((visibility("default"))) int simgpu_doorbell_pending(const struct simgpu_watch *w, uint64_t *out) {
    int n = 0;
    for (int p = 0; p < w->npages; p++)
        for (int i = 0; i < w->slots; i += 8) {
            if (same_block(w->pages[p], w->seen[p], i, w->slots)) continue;
            for (int j = i; j < i + 8 && j < w->slots; j++) {
                uint64_t v = w->pages[p][j]; /* (read once: the client may store again meanwhile) */
                if (v != w->seen[p][j]) {
                    out[3 * n] = (uint64_t)p;
                    out[3 * n + 1] = (uint64_t)j;
                    out[3 * n + 2] = v;
                    n++;
                }
            }
        }
    return n;
}

__attribute__((visibility("default"))) int simgpu_doorbell_wait(const struct simgpu_watch *w, int64_t timeout_us,
                                                                int64_t period_us, int64_t since_us,
                                                                int64_t max_period_us, int64_t growth) {
    const volatile uint64_t *const *pages = w->pages;
    const uint64_t *const *seen = w->seen;
    int slots = w->slots, npages = w->npages, nfds = w->nfds;
    int64_t *spins = w->spins;
    struct pollfd p[MAX_FDS];
    if (nfds > MAX_FDS) nfds = MAX_FDS; /* (the caller passes its few sockets: a session has one per thread) */
    for (int i = 0; i < nfds; i++) p[i] = (struct pollfd){.fd = w->fds[i], .events = POLLIN | POLLPRI};
    /* The kernel may stretch a sleep by the thread's timer slack (50 us by default): as long as the period. Set
     * once a thread (a system call, and this runs every turn of the worker). */
    static __thread int slack_set;
    if (!slack_set) {
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        slack_set = 1;
    }
    int64_t end = now_us() + timeout_us;
    for (;;) {
        if (rung(pages, seen, npages, slots)) return 1;
        int64_t now = now_us(), left = end - now;
        if (left <= 0) return 0;
        int64_t period = period_us;
        if (growth > 0) {
            int64_t grown = (now - since_us) / growth;
            period = grown < period_us ? period_us : grown > max_period_us ? max_period_us : grown;
        }
        int64_t step = left < period ? left : period;
        struct timespec t = {.tv_sec = step / 1000000, .tv_nsec = (step % 1000000) * 1000};
        int r = ppoll(p, (nfds_t)nfds, &t, NULL), other = 0;
        if (r < 0 && errno != EINTR) return -errno;
        for (int i = 0; r > 0 && i < nfds && !other; i++)
            if (p[i].revents) other = (p[i].revents & ~POLLIN) || take_spins(p[i].fd, spins);
        if (other) return 2;
        /* (SPINs only, or the period passed: the loop's next look at the doorbells is at once) */
    }
}
