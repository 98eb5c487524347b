/* The x86-64 moves the BAR trap (localpci.c) emulates: a decoder of the MOV forms that compiled accessors use for one
 * 1-, 2-, 4- or 8-byte load or store (ctypes/memoryview item access: mov, movzx, movsx, movsxd), and their effect on
 * the registers of a ucontext. Anything else is refused (-1), never guessed. */
#ifndef SIMGPU_X86MOV_H
#define SIMGPU_X86MOV_H
#include <stddef.h>
#include <stdint.h>

enum { X86_EXTEND_NONE, X86_EXTEND_ZERO, X86_EXTEND_SIGN };

struct x86_mov {
    int length;     /* bytes of the instruction */
    int width;      /* bytes of memory accessed: 1, 2, 4 or 8 */
    int store;      /* 1: memory is written (from `reg` or `imm`), 0: read into `reg` */
    int reg;        /* register number (0 rax ... 15 r15), -1 when an immediate is stored */
    int high8;      /* `reg` 4..7 names ah, ch, dh, bh (a byte register without a REX prefix) */
    int dest_width; /* a load: bytes of the destination register it writes (4 also clears the upper half) */
    int extend;     /* a load narrower than its destination: X86_EXTEND_ZERO (movzx) or X86_EXTEND_SIGN (movsx) */
    uint64_t imm;   /* the stored immediate, truncated to `width` */
};

/* Decode the instruction at `code` (at most `avail` bytes readable); 0, or -1 if it is not one of the forms. */
int x86_decode_mov(const uint8_t *code, size_t avail, struct x86_mov *out);

/* The value a store writes, given the general registers in x86 order (rax, rcx, ..., r15). */
uint64_t x86_store_value(const struct x86_mov *m, const uint64_t regs[16]);

/* Write a loaded value (`width` bytes) into its destination among `regs` (x86 order). */
void x86_load_into(const struct x86_mov *m, uint64_t value, uint64_t regs[16]);

#endif
