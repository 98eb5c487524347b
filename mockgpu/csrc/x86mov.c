/* Decoder of the x86-64 MOV forms the BAR trap emulates (x86mov.h). Checked against capstone by
 * tests/mockgpu/test_x86mov.py. */
#include "x86mov.h"

#include <string.h>

/* Bytes the ModRM memory operand takes (ModRM, SIB, displacement), or -1 for a register operand. */
static int memory_operand_length(const uint8_t *p, size_t avail) {
    if (avail < 1) return -1;
    int mod = p[0] >> 6, rm = p[0] & 7, n = 1;
    if (mod == 3) return -1;
    if (rm == 4) {
        if (avail < 2) return -1;
        if (mod == 0 && (p[1] & 7) == 5) n += 4; /* no base: disp32 */
        n += 1;
    } else if (mod == 0 && rm == 5) {
        n += 4; /* rip-relative */
    }
    n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
    return (size_t)n <= avail ? n : -1;
}

int x86_decode_mov(const uint8_t *code, size_t avail, struct x86_mov *out) {
    size_t i = 0;
    int opsize = 0, rex = 0;
    memset(out, 0, sizeof *out);
    while (i < avail && code[i] == 0x66) { opsize = 1; i++; }
    if (i < avail && (code[i] & 0xF0) == 0x40) rex = code[i++];
    if (i >= avail) return -1;
    int w = (rex >> 3) & 1, r = (rex >> 2) & 1;
    int op = code[i++], two = 0;
    if (op == 0x0F) {
        if (i >= avail) return -1;
        two = 1;
        op = code[i++];
    }
    if (i >= avail) return -1;
    int modrm = code[i], reg = ((modrm >> 3) & 7) | r << 3;
    int mlen = memory_operand_length(code + i, avail - i);
    if (mlen < 0) return -1;
    i += mlen;
    int wide = w ? 8 : opsize ? 2 : 4; /* the operand size of a non-byte form */
    out->reg = reg;
    if (!two && (op == 0x88 || op == 0x8A)) {          /* mov r/m8, r8 | mov r8, r/m8 */
        out->width = out->dest_width = 1;
        out->store = op == 0x88;
        out->high8 = !rex && reg >= 4 && reg < 8;
    } else if (!two && (op == 0x89 || op == 0x8B)) {   /* mov r/m, r | mov r, r/m */
        out->width = out->dest_width = wide;
        out->store = op == 0x89;
    } else if (!two && (op == 0xC6 || op == 0xC7)) {   /* mov r/m, imm */
        if ((modrm >> 3) & 7) return -1;
        int isize = op == 0xC6 ? 1 : wide == 2 ? 2 : 4;
        if (i + isize > avail) return -1;
        uint64_t imm = 0;
        for (int k = 0; k < isize; k++) imm |= (uint64_t)code[i + k] << 8 * k;
        if (op == 0xC7 && w && (imm >> 31)) imm |= 0xFFFFFFFF00000000ULL; /* imm32 sign-extended to 64 bits */
        i += isize;
        out->width = op == 0xC6 ? 1 : wide;
        out->store = 1;
        out->reg = -1;
        out->imm = imm;
    } else if (two && (op == 0xB6 || op == 0xB7 || op == 0xBE || op == 0xBF)) { /* movzx | movsx */
        if (op & 1 && opsize && !w) return -1; /* a 16-bit destination of a 16-bit source: not a compiler's form */
        out->width = op & 1 ? 2 : 1;
        out->dest_width = wide;
        out->extend = op & 8 ? X86_EXTEND_SIGN : X86_EXTEND_ZERO;
    } else if (!two && op == 0x63 && w) {              /* movsxd r64, r/m32 */
        out->width = 4;
        out->dest_width = 8;
        out->extend = X86_EXTEND_SIGN;
    } else {
        return -1;
    }
    out->length = (int)i;
    return 0;
}

static uint64_t mask(int bytes) { return bytes >= 8 ? ~0ULL : (1ULL << 8 * bytes) - 1; }

uint64_t x86_store_value(const struct x86_mov *m, const uint64_t regs[16]) {
    if (m->reg < 0) return m->imm & mask(m->width);
    if (m->high8) return (regs[m->reg - 4] >> 8) & 0xFF;
    return regs[m->reg] & mask(m->width);
}

void x86_load_into(const struct x86_mov *m, uint64_t value, uint64_t regs[16]) {
    value &= mask(m->width);
    if (m->extend == X86_EXTEND_SIGN && m->width < 8 && (value >> (8 * m->width - 1)) & 1) value |= ~mask(m->width);
    if (m->high8) {
        uint64_t *g = &regs[m->reg - 4];
        *g = (*g & ~0xFF00ULL) | (value & 0xFF) << 8;
    } else if (m->dest_width >= 4) { /* a 32-bit destination clears bits 63:32 */
        regs[m->reg] = value & mask(m->dest_width);
    } else {
        regs[m->reg] = (regs[m->reg] & ~mask(m->dest_width)) | (value & mask(m->dest_width));
    }
}
