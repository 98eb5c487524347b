/* Signals the interposer takes, chained to the program's handlers (sigchain.c). */
#ifndef SIMGPU_SIGCHAIN_H
#define SIMGPU_SIGCHAIN_H
#include <signal.h>

/* Install `handler` for `sig`, keeping the program's disposition aside; 0 on success. */
int simgpu_take_signal(int sig, void (*handler)(int, siginfo_t *, void *));

/* Hand a signal the interposer does not explain to the program's handler, or arrange the default action. */
void simgpu_pass_signal(int sig, siginfo_t *info, void *context);

#endif
