"""Scalar ALU semantics of SOP2, from the RDNA3 ISA reference pseudo-code, in the expression form (sem.expr)
that both tiers are generated from (scalar.define). A b32 and a b64 form are two definitions over their own
types; exact carries and overflows go through 64-bit values."""

from __future__ import annotations

from simgpu.shader.scalar.define import sdefine
from simgpu.shader.sem.expr import cast, eq, minimum, ne, select

M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF


def _amount(s, t: str):
    """A shift amount S1[4:0] (S1[5:0] for 64 bits) as type t."""
    return cast(s & (63 if t.endswith("64") else 31), t)


def _nonzero(r):
    """(r, SCC = r != 0): the rule of most SALU results."""
    return r, ne(r, 0)


# ---------------------------------------------------------------------------------------------- add/sub

def signed_overflow(full):
    """(the low 32 bits of an exact i64 result, SCC = they do not hold it)."""
    r = cast(full, "i32")
    return r, ne(cast(r, "i64"), full)


sdefine("s_add_u32", "ssrc0:u32 ssrc1:u32 -> sdst:u32 scc", lambda a, b: (a + b, a + b < a))
sdefine("s_sub_u32", "ssrc0:u32 ssrc1:u32 -> sdst:u32 scc", lambda a, b: (a - b, b > a))


def _addc(a, b, c):
    full = cast(a, "u64") + cast(b, "u64") + cast(c, "u64")
    return cast(full, "u32"), full > M32


def _subb(a, b, c):
    """SCC: the borrow, S1 + SCC above S0."""
    borrow = cast(b, "u64") + cast(c, "u64")
    return cast(cast(a, "u64") - borrow, "u32"), borrow > cast(a, "u64")


sdefine("s_addc_u32", "ssrc0:u32 ssrc1:u32 scc -> sdst:u32 scc", _addc)
sdefine("s_subb_u32", "ssrc0:u32 ssrc1:u32 scc -> sdst:u32 scc", _subb)
sdefine("s_add_i32", "ssrc0:i32 ssrc1:i32 -> sdst:i32 scc",
        lambda a, b: signed_overflow(cast(a, "i64") + cast(b, "i64")))
sdefine("s_sub_i32", "ssrc0:i32 ssrc1:i32 -> sdst:i32 scc",
        lambda a, b: signed_overflow(cast(a, "i64") - cast(b, "i64")))
# gfx12: D = S0 op S1 mod 2^64, SCC unchanged
sdefine("s_add_nc_u64", "ssrc0:u64 ssrc1:u64 -> sdst:u64", lambda a, b: a + b, family="gfx12")
sdefine("s_sub_nc_u64", "ssrc0:u64 ssrc1:u64 -> sdst:u64", lambda a, b: a - b, family="gfx12")
sdefine("s_mul_u64", "ssrc0:u64 ssrc1:u64 -> sdst:u64", lambda a, b: a * b, family="gfx12")


def _lshl_add(n: int):
    """S_LSHLn_ADD_U32: tmp = (64'U(S0) << n) + S1; SCC = tmp >= 2**32 (the carry out of the shift and the add)."""
    def fn(a, b):
        full = (cast(a, "u64") << n) + cast(b, "u64")
        return cast(full, "u32"), full > M32
    return fn


for _n in range(1, 5):
    sdefine(f"s_lshl{_n}_add_u32", "ssrc0:u32 ssrc1:u32 -> sdst:u32 scc", _lshl_add(_n))


# ---------------------------------------------------------------------------------------------- shifts, logic

LOGIC = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
         "nand": lambda a, b: ~(a & b), "nor": lambda a, b: ~(a | b), "xnor": lambda a, b: ~(a ^ b),
         "and_not1": lambda a, b: a & ~b, "or_not1": lambda a, b: a | ~b}

for _t in ("b32", "b64"):
    sdefine(f"s_lshl_{_t}", f"ssrc0:{_t} ssrc1:u32 -> sdst:{_t} scc", lambda a, s, t=_t: _nonzero(a << _amount(s, t)))
    sdefine(f"s_lshr_{_t}", f"ssrc0:{_t} ssrc1:u32 -> sdst:{_t} scc", lambda a, s, t=_t: _nonzero(a >> _amount(s, t)))
    sdefine(f"s_cselect_{_t}", f"ssrc0:{_t} ssrc1:{_t} scc -> sdst:{_t}", lambda a, b, c: select(c, a, b))
    for _name, _f in LOGIC.items():
        sdefine(f"s_{_name}_{_t}", f"ssrc0:{_t} ssrc1:{_t} -> sdst:{_t} scc", lambda a, b, f=_f: _nonzero(f(a, b)))
for _t in ("i32", "i64"):
    sdefine(f"s_ashr_{_t}", f"ssrc0:{_t} ssrc1:u32 -> sdst:{_t} scc", lambda a, s, t=_t: _nonzero(a >> _amount(s, t)))


# ---------------------------------------------------------------------------------------------- min/max

for _t in ("i32", "u32"):  # SCC: whether S0 was picked
    sdefine(f"s_min_{_t}", f"ssrc0:{_t} ssrc1:{_t} -> sdst:{_t} scc", lambda a, b: (select(a < b, a, b), a < b))
    sdefine(f"s_max_{_t}", f"ssrc0:{_t} ssrc1:{_t} -> sdst:{_t} scc", lambda a, b: (select(a >= b, a, b), a >= b))


# ---------------------------------------------------------------------------------------------- bit fields

def _bfe(t: str):
    """Bit-field extract: offset in S1[5:0] (S1[4:0] for 32 bits), width in S1[22:16] (at most the size).

    The signed forms shift the *signed* source (the reference: `tmp = (S0.i >> offset) & mask;
    D = signextFromBit(tmp, width)`), so a field running past the top of the register takes copies
    of the sign bit, and its own top bit is then the source's sign. Computed in 64 bits."""
    n, is_signed = int(t[1:]), t[0] == "i"

    def fn(a, b):
        s = cast(b, "u64")
        off = s & (n - 1)
        width = minimum((s >> 16) & 0x7F, n)
        mask = select(width >= 64, M64, (1 << (width & 63)) - 1)
        x = cast(cast(a, "i64") >> cast(off, "i64"), "u64") if is_signed else cast(a, "u64") >> off
        v = x & mask
        if is_signed:
            sign = (v >> ((width + 63) & 63)) & 1  # the field's top bit (0 for an empty field)
            v = v | select(eq(sign, 1) & (width < 64), ~mask, 0)
        return _nonzero(cast(v, t))
    return fn


for _t in ("u32", "i32", "u64", "i64"):
    sdefine(f"s_bfe_{_t}", f"ssrc0:{_t} ssrc1:u32 -> sdst:{_t} scc", _bfe(_t))
for _t in ("b32", "b64"):  # both sources are 32-bit
    sdefine(f"s_bfm_{_t}", f"ssrc0:u32 ssrc1:u32 -> sdst:{_t}",
            lambda a, b, t=_t: ((1 << _amount(a, t)) - 1) << _amount(b, t))


# ---------------------------------------------------------------------------------------------- multiplies

sdefine("s_mul_i32", "ssrc0:b32 ssrc1:b32 -> sdst:b32", lambda a, b: a * b)
sdefine("s_mul_hi_u32", "ssrc0:u32 ssrc1:u32 -> sdst:u32",
        lambda a, b: cast((cast(a, "u64") * cast(b, "u64")) >> 32, "u32"))
sdefine("s_mul_hi_i32", "ssrc0:i32 ssrc1:i32 -> sdst:i32",
        lambda a, b: cast((cast(a, "i64") * cast(b, "i64")) >> 32, "i32"))


def _absdiff(a, b):
    """D = S0 - S1 wrapped to 32 bits, negated when that is negative (the reference's functional
    examples: (0x80000000, 0) -> 0x80000000, (0x80000000, 1) -> 0x7fffffff): not the true magnitude."""
    d = a - b
    return _nonzero(select(d < 0, -d, d))


sdefine("s_absdiff_i32", "ssrc0:i32 ssrc1:i32 -> sdst:i32 scc", _absdiff)


def _pack(sel0: int, sel1: int):
    return lambda a, b: ((a >> 16 * sel0) & 0xFFFF) | (((b >> 16 * sel1) & 0xFFFF) << 16)


for _s0, _s1, _n in ((0, 0, "ll"), (0, 1, "lh"), (1, 1, "hh"), (1, 0, "hl")):
    sdefine(f"s_pack_{_n}_b32_b16", "ssrc0:b32 ssrc1:b32 -> sdst:b32", _pack(_s0, _s1))
