/* The signals the interposer takes for itself (SIGSEGV: hostmem.c, SIGBUS: localpci.c), chained to the program's own
 * handlers. The program's sigaction/signal for such a signal are kept aside, not installed over the interposer's, and
 * a fault the interposer does not explain goes to them (or to the default action) as if it were not there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include "sigchain.h"

#define EXPORT __attribute__((visibility("default")))

static struct sigaction program[NSIG]; /* the program's disposition of each taken signal */
static int taken[NSIG];
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static void resolve(void) {
    if (!real_sigaction)
        real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
}

int simgpu_take_signal(int sig, void (*handler)(int, siginfo_t *, void *)) {
    resolve();
    if (!real_sigaction || sig <= 0 || sig >= NSIG) return -1;
    struct sigaction act = {.sa_sigaction = handler, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
    sigemptyset(&act.sa_mask);
    if (real_sigaction(sig, &act, &program[sig]) != 0) return -1;
    taken[sig] = 1;
    return 0;
}

void simgpu_pass_signal(int sig, siginfo_t *info, void *context) {
    struct sigaction *p = &program[sig];
    if (p->sa_flags & SA_SIGINFO) {
        p->sa_sigaction(sig, info, context);
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
    } else { /* the default action: returning retries the access, which now ends the program as it would have */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        real_sigaction(sig, &dfl, NULL);
    }
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    resolve();
    if (sig <= 0 || sig >= NSIG || !taken[sig]) return real_sigaction(sig, act, old);
    if (old) *old = program[sig];
    if (act) program[sig] = *act;
    return 0;
}

EXPORT sighandler_t signal(int sig, sighandler_t handler) {
    static sighandler_t (*real_signal)(int, sighandler_t);
    if (!real_signal) real_signal = (sighandler_t (*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
    if (sig <= 0 || sig >= NSIG || !taken[sig]) return real_signal(sig, handler);
    struct sigaction act = {.sa_handler = handler, .sa_flags = SA_RESTART}, old;
    sigemptyset(&act.sa_mask);
    if (sigaction(sig, &act, &old) < 0) return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)old.sa_sigaction : old.sa_handler;
}
