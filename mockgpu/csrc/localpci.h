/* The local-PCI part of the interposer (localpci.c), as preload.c calls it. */
#ifndef SIMGPU_LOCALPCI_H
#define SIMGPU_LOCALPCI_H
#include <stddef.h>
#include <stdint.h>

/* Whether the run serves local PCI functions ($SIMGPU_LOCALPCI): /sys/bus/pci/devices is then rewritten. */
int simgpu_localpci_active(void);

/* A descriptor for a PCI file or /proc/self/pagemap this part serves, -1 (errno) on failure, -2 for other paths. */
int simgpu_localpci_open(const char *path, int flags);

/* The descriptor is being closed. */
void simgpu_localpci_forget(int fd);

/* `to` is now a copy of `fd` (dup, dup2, dup3). */
void simgpu_localpci_alias(int fd, int to);

/* Whether [start, start + len) lies in one private anonymous mapping without access: an address range a driver
 * reserved (tinygrad's local PCI path reserves its whole GPU address space so), which a GPU mapping may replace. */
int simgpu_reserved_range(uintptr_t start, size_t len);

#endif
