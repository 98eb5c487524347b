"""Values of the scalar unit, for one wave or many: a Python int, or a uint64 numpy array over waves.

Scalar instructions run for every wave at one PC. When that is a single wave (a kernel's lone wave,
a loop a workgroup runs alone) numpy costs a microsecond per call on a one-element array, while a
Python int costs tens of nanoseconds. So the SALU kernels (generated from definitions: sem.scalar_gen)
work on values that are either kind: they use only the operators both support alike (+ - * & | ^ << >>
and comparisons) and the helpers here for the rest (selection, signedness, bit counts).

The rules that keep the two kinds equal: a value is unsigned and fits its width (mask after every
operation that can leave it); no negative Python int may meet an array (numpy refuses to convert it),
so NOT is an xor with the width's ones rather than ~; shift amounts are masked below 64; signed
arithmetic goes through `signed` and comes back through `unsigned`.
"""

from __future__ import annotations

import numpy as np

U64 = np.uint64
M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


def width_mask(wide: bool) -> int:
    return M64 if wide else M32


def select(cond, a, b):
    """`a` where cond holds, else `b` (per wave)."""
    if isinstance(cond, np.ndarray):
        return np.where(cond, a, b).astype(U64)
    return a if cond else b


def flag(cond):
    """A condition as the value 0/1 (SCC, a carry)."""
    if isinstance(cond, np.ndarray):
        return cond.astype(U64)
    return int(bool(cond))


def signed(x, bits: int):
    """The two's-complement value of the low `bits` bits of x (a Python int or an int64 array)."""
    sign = 1 << (bits - 1)
    if isinstance(x, np.ndarray):
        if bits == 64:
            return x.astype(U64).view(np.int64)
        return ((x & U64((1 << bits) - 1)).astype(np.int64) ^ sign) - sign
    return ((x & ((1 << bits) - 1)) ^ sign) - sign


def unsigned(x, bits: int):
    """A signed (or wider) result wrapped to `bits` unsigned bits, as a value of the scalar unit."""
    if isinstance(x, np.ndarray):
        return x.astype(U64) & U64((1 << bits) - 1)
    return x & ((1 << bits) - 1)


def popcount(x):
    if isinstance(x, np.ndarray):
        return np.bitwise_count(x).astype(U64)
    return x.bit_count()


def smear_right(x):
    """Every bit below the highest set bit set too (x a 64-bit value): leading-zero counts from it."""
    for s in (1, 2, 4, 8, 16, 32):
        x = x | (x >> s)
    return x


def lowest_bit(x):
    """The lowest set bit of a 64-bit value alone (0 for 0)."""
    return x & (((x ^ M64) + 1) & M64)


def bit_reverse(x, bits: int):
    """x with its low `bits` bits in reverse order (s_brev_*): swap halves of ever larger fields."""
    masks = [(1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F),
             (8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)]
    for s, m in masks[:5 if bits == 32 else 6]:
        x = ((x >> s) & m) | ((x & m) << s)
    return x & width_mask(bits == 64)
