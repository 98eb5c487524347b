"""VOP3P semantics: packed 16-bit math (v_pk_*), dot products (v_dot2/4/8*), v_fma_mix*, plus the VOP3 and
VOP2 relatives (v_dot2_f16_f16, v_dot2_bf16_bf16, v_dot2acc_f32_f16, v_pk_fmac_f16), from the RDNA3 ISA
reference pseudo-code.

A packed source supplies two 16-bit halves: the low lane of the operation reads half op_sel[i] of the
32-bit operand, the high lane half op_sel_hi[i]; neg_lo/neg_hi negate them (float ops). An inline constant
is a 32-bit value as LLVM encodes it: for f16 (bf16) operands a float constant holds its f16 (bf16) bits in
the low half and 0 in the high half; for integer operands it is the f32 bit pattern; an integer constant
is sign-extended to 32 bits.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import vector_src, write_vgpr
from simgpu.shader.sem import fpexact as fx
from simgpu.shader.semantics import register
from simgpu.shader.state import HW_MODE
from simgpu.shader.vector import float_arith, int_arith, int_bits, int_mul, minmax  # noqa: F401 - PACKED's specs
from simgpu.shader.vector.valu import SPECS, TYPES, UNSIGNED, OpCtx, VOp, dpp_source, dpp_write_mask, is_float, vop

U16, U32, U64, I64 = np.uint16, np.uint32, np.uint64, np.int64
F16, F32, F64 = np.float16, np.float32, np.float64

# ---------------------------------------------------------------------------------------------- float helpers


def round_odd_sum(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """p + c in f64 rounded to odd, so a later rounding to f32/f16/bf16 equals one correct rounding of the
    exact sum (p, c exact f64 values; round-to-odd with 53 >= 2*24+2 bits avoids double rounding)."""
    with np.errstate(all="ignore"):
        s = p + c
        bb = s - p
        err = (p - (s - bb)) + (c - bb)  # TwoSum: exact error of the rounded sum
        even = (s.view(U64) & U64(1)) == 0
        fix = (err != 0) & even & np.isfinite(s) & np.isfinite(err)
        toward = np.where(err > 0, np.inf, -np.inf)
        return np.where(fix, np.nextafter(s, toward), s)


def fma64(a, b, c) -> np.ndarray:
    """a*b + c as a round-to-odd f64 (a*b must be exact in f64: f16, bf16 or f32 inputs)."""
    with np.errstate(all="ignore"):
        return round_odd_sum(np.asarray(a, F64) * np.asarray(b, F64), np.asarray(c, F64))


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns -> f32."""
    return (np.asarray(bits).astype(U32) << U32(16)).view(F32)


def f32_to_bf16(x) -> np.ndarray:
    """f32 -> bf16 bit patterns, round to nearest even (NaN stays NaN, quieted)."""
    b = np.asarray(x, F32).view(U32)
    nan = np.isnan(np.asarray(x, F32))
    rounded = (b.astype(U64) + U64(0x7FFF) + ((b >> U32(16)) & U32(1)).astype(U64)) >> U64(16)
    return np.where(nan, (b >> U32(16)) | U32(0x40), rounded).astype(U16)


def to_bf16(x64: np.ndarray) -> np.ndarray:
    """A round-to-odd f64 -> bf16 bits (via f32: rounding to odd f32 first keeps it a single rounding)."""
    x64 = np.asarray(x64, F64)
    with np.errstate(all="ignore"):
        f = x64.astype(F32)
        back = f.astype(F64)
        inexact = (back != x64) & np.isfinite(x64) & np.isfinite(f)
        odd = (f.view(U32) & U32(1)) == 1
        f = np.where(inexact & ~odd, np.nextafter(f, np.where(x64 > back, F32(np.inf), F32(-np.inf))), f)
    return f32_to_bf16(f)


def clamp01(x: np.ndarray) -> np.ndarray:
    """Output clamp of a float result to [0, 1] (NaN becomes 0)."""
    t = x.dtype.type
    return np.where(np.isnan(x), t(0), np.clip(x, t(0), t(1))).astype(x.dtype)


# ---------------------------------------------------------------------------------------------- operands


def op_sel(inst, i: int) -> int:
    return (inst.fields.get("op_sel", 0) >> i) & 1


def op_sel_hi(inst, i: int) -> int:
    if i == 2:
        return inst.fields.get("op_sel_hi2", 1)
    return (inst.fields.get("op_sel_hi", 3) >> i) & 1


def neg_lo(inst, i: int) -> int:
    return (inst.fields.get("neg", 0) >> i) & 1


def neg_hi(inst, i: int) -> int:
    return (inst.fields.get("neg_hi", 0) >> i) & 1


def raw32(ex, w, inst, i: int, kind: str = "b32") -> np.ndarray:
    """Source i as 32-bit words [n, lanes] (src0 through DPP when the instruction has it)."""
    if i == 0 and inst.dpp is not None:
        return dpp_source(ex, w, inst, 256 + inst.dpp["src0"], kind).astype(U32)
    code = inst.fields[("src0", "src1", "src2")[i]]
    if kind == "bf16" and code < 256 and code != 255:
        v = vector_src(ex, w, code, inst.literal, "f32").astype(U32)
        return v >> U32(16) if 240 <= code <= 248 else v  # float constants as bf16 in the low half
    return vector_src(ex, w, code, inst.literal, "b32" if kind == "bf16" else kind).astype(U32)


def half(word: np.ndarray, hi: int) -> np.ndarray:
    return ((word >> U32(16)) if hi else word).astype(U16)


def packed(ex, w, inst, i: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(low-lane, high-lane) 16-bit halves of packed source i, with op_sel/op_sel_hi and neg_lo/neg_hi."""
    word = raw32(ex, w, inst, i, kind)
    lo, hi = half(word, op_sel(inst, i)), half(word, op_sel_hi(inst, i))
    if kind in ("f16", "bf16"):
        lo = lo ^ U16(0x8000 * neg_lo(inst, i))
        hi = hi ^ U16(0x8000 * neg_hi(inst, i))
    return lo, hi


def write_mask(ex, w, inst) -> np.ndarray:
    active = ex.st.exec_lanes(w)
    return active if inst.dpp is None else active & dpp_write_mask(ex, w, inst)


def f32_denorm(ex, w) -> np.ndarray:
    """MODE.FP_DENORM for f32, [n, 1] (fpexact.flush_in / flush_out take it)."""
    return fx.denorm_mode(ex.st.hwreg[w, HW_MODE], "f32")


# ---------------------------------------------------------------------------------------------- packed 16-bit ops

def pk_halves(ex, w, inst, i: int, t: str) -> tuple[np.ndarray, np.ndarray]:
    """(low-lane, high-lane) inputs of type t (16- or 32-bit) of packed source i: op_sel / op_sel_hi pick the halves
    of the 32-bit word (the 64-bit VGPR pair for 32-bit halves), neg_lo / neg_hi flip a float's sign. An inline
    constant or literal is t's float constant in the low half, 0 in the high one, for float types; for 16-bit
    integers the halves of its 32-bit pattern (hardware-verified: v_pk_add_u16 with 2.0 adds 0x0000 to the low
    half, 0x4000 to the high one; LLVM 19 agrees: it folds the literal 0x40000000, not 0x4000, into 2.0)."""
    dt, bits = TYPES[t]
    ut = UNSIGNED[bits]
    if bits == 16:
        word = raw32(ex, w, inst, i, "f16" if t == "f16" else "b32")
    else:
        code = inst.fields[("src0", "src1", "src2")[i]]
        word = vector_src(ex, w, code, inst.literal, "f32" if 128 <= code <= 255 else "b64").astype(U64)
    wt = word.dtype.type
    lo = (word >> wt(bits * op_sel(inst, i))).astype(ut)
    hi = (word >> wt(bits * op_sel_hi(inst, i))).astype(ut)
    if is_float(t):
        sign = 1 << (bits - 1)
        lo, hi = lo ^ ut(sign * neg_lo(inst, i)), hi ^ ut(sign * neg_hi(inst, i))
    return lo.view(dt), hi.view(dt)


# v_pk_* -> (the spec of the VALU opcode each lane half runs: sources, clamp and MODE as that opcode's; the ISA family
# whose own entry the v_pk_* is, None: shared)
PACKED: dict[str, tuple[VOp, str | None]] = {}


def pk_execute(spec):
    """The semantic function of a packed op: `spec`'s function once per lane half, the float clamp applied to
    each half's result (an integer clamp is the definition's own saturation)."""
    bits = TYPES[spec.dst][1]
    wide = U64 if bits == 32 else U32

    def fn(ex, w, inst):
        srcs = [pk_halves(ex, w, inst, i, t) for i, t in enumerate(spec.srcs)]
        ctx = OpCtx(bool(inst.fields.get("clamp", 0)), ex.st.hwreg[w, HW_MODE], ex.st.lanes, ex, w)
        out = []
        for lane_half in (0, 1):
            r = np.asarray(spec.fn(ctx, *(s[lane_half] for s in srcs)), TYPES[spec.dst][0])
            r = clamp01(r) if ctx.clamp and is_float(spec.dst) else r
            out.append(np.broadcast_to(r.view(UNSIGNED[bits]), (len(w), ex.st.lanes)).astype(wide))
        value = out[0] | (out[1] << wide(bits))
        write_vgpr(ex, w, inst.fields["vdst"], value, write_mask(ex, w, inst), bits // 16)
    return fn


def packed_op(name: str, shared: str, family: str | None = None) -> None:
    """Register v_pk_* `name` as the opcode `shared` run on both lane halves."""
    packed_spec(name, SPECS[shared], family)


def packed_spec(name: str, spec: VOp, family: str | None = None) -> None:
    """Register v_pk_* `name` as `spec` run on both lane halves (for a packed op with no VALU opcode of its own)."""
    PACKED[name] = spec, family
    register(name, pk_execute(spec), family)


for _op in ("add", "mul", "fma", "max", "min"):
    packed_op(f"v_pk_{_op}_f16", f"v_{_op}_f16")
for _t in ("u16", "i16"):
    for _op in ("add", "sub"):
        packed_op(f"v_pk_{_op}_{_t}", f"v_{_op}_nc_{_t}")
    for _op in ("max", "min", "mad"):
        packed_op(f"v_pk_{_op}_{_t}", f"v_{_op}_{_t}")
packed_op("v_pk_mul_lo_u16", "v_mul_lo_u16")
for _op in ("lshlrev_b16", "lshrrev_b16", "ashrrev_i16"):
    packed_op(f"v_pk_{_op}", f"v_{_op}")


# ---------------------------------------------------------------------------------------------- dot products


def _write32(ex, w, inst, value: np.ndarray) -> None:
    write_vgpr(ex, w, inst.fields["vdst"], value, write_mask(ex, w, inst))


def _dot2_f32(ex, w, inst, kind: str) -> None:
    """D.f32 = S2.f32 + S0.lo*S1.lo + S0.hi*S1.hi, each step a fused multiply-add rounded to f32."""
    a, b = packed(ex, w, inst, 0, kind), packed(ex, w, inst, 1, kind)
    conv = (lambda h: h.view(F16)) if kind == "f16" else bf16_to_f32
    dm = f32_denorm(ex, w)
    c = fx.flush_in(raw32(ex, w, inst, 2, "f32").view(F32), dm)
    c = np.where(neg_lo(inst, 2), -c, c).astype(F32)
    with np.errstate(all="ignore"):
        acc = fx.flush_out(fma64(conv(a[0]), conv(b[0]), c).astype(F32), dm)
        acc = fx.flush_out(fma64(conv(a[1]), conv(b[1]), acc).astype(F32), dm)
    if inst.fields.get("clamp", 0):
        acc = clamp01(acc)
    _write32(ex, w, inst, acc.view(U32))


def _int_dot(ex, w, inst, bits: int, signed: bool) -> None:
    """D = S2 + sum of products of `bits`-bit elements; neg_lo[0]/[1] make A/B signed (the iu forms)."""
    a, b = raw32(ex, w, inst, 0).astype(I64), raw32(ex, w, inst, 1).astype(I64)
    c = raw32(ex, w, inst, 2)
    acc = c.view(np.int32).astype(I64) if signed else c.astype(I64)
    sa, sb = signed and neg_lo(inst, 0), signed and neg_lo(inst, 1)
    mask, top = (1 << bits) - 1, 1 << (bits - 1)
    for k in range(32 // bits):
        ea, eb = (a >> (k * bits)) & mask, (b >> (k * bits)) & mask
        if sa:
            ea = (ea ^ top) - top
        if sb:
            eb = (eb ^ top) - top
        acc = acc + ea * eb
    if inst.fields.get("clamp", 0):
        acc = np.clip(acc, -(1 << 31), (1 << 31) - 1) if signed else np.clip(acc, 0, (1 << 32) - 1)
    _write32(ex, w, inst, (acc & 0xFFFFFFFF).astype(U32))


register("v_dot2_f32_f16", lambda ex, w, inst: _dot2_f32(ex, w, inst, "f16"))
register("v_dot2_f32_bf16", lambda ex, w, inst: _dot2_f32(ex, w, inst, "bf16"))
register("v_dot4_i32_iu8", lambda ex, w, inst: _int_dot(ex, w, inst, 8, True))
register("v_dot4_u32_u8", lambda ex, w, inst: _int_dot(ex, w, inst, 8, False))
register("v_dot8_i32_iu4", lambda ex, w, inst: _int_dot(ex, w, inst, 4, True))
register("v_dot8_u32_u4", lambda ex, w, inst: _int_dot(ex, w, inst, 4, False))


# VOP3 v_dot2_f16_f16 / v_dot2_bf16_bf16: 16-bit accumulator and result with VOP3 op_sel (S2 half: op_sel[2],
# destination half: op_sel[3], the other half kept); abs/neg apply to both halves of S0/S1.


def _vop3_mods(inst, i: int) -> tuple[np.uint16, np.uint16]:
    flip = U16(0x8000 * ((inst.fields.get("neg", 0) >> i) & 1))
    keep = U16(0x7FFF) if (inst.fields.get("abs", 0) >> i) & 1 else U16(0xFFFF)
    return keep, flip


def _dot2_16(ex, w, inst, kind: str) -> None:
    conv = (lambda h: h.view(F16)) if kind == "f16" else bf16_to_f32
    halves = []
    for i in range(2):
        word = raw32(ex, w, inst, i, kind)
        keep, flip = _vop3_mods(inst, i)
        halves.append([(half(word, k) & keep) ^ flip for k in (0, 1)])
    keep, flip = _vop3_mods(inst, 2)
    c = (half(raw32(ex, w, inst, 2, kind), op_sel(inst, 2)) & keep) ^ flip
    if kind == "f16":
        acc = _dot2_f16_once(conv(halves[0][0]), conv(halves[1][0]), conv(halves[0][1]), conv(halves[1][1]), conv(c))
    else:
        acc = c
        for k in (0, 1):
            acc = to_bf16(fma64(conv(halves[0][k]), conv(halves[1][k]), conv(acc)))
    if inst.fields.get("clamp", 0):
        acc = clamp01(conv(acc).astype(F32))
        acc = acc.astype(F16).view(U16) if kind == "f16" else f32_to_bf16(acc)
    vdst, hi = inst.fields["vdst"], op_sel(inst, 3)
    cur = ex.st.vgpr[vdst, w, :]
    v = acc.astype(U32)
    new = (cur & U32(0xFFFF)) | (v << U32(16)) if hi else (cur & U32(0xFFFF0000)) | v
    _write32(ex, w, inst, new)


def _dot2_f16_once(a0, b0, a1, b1, c) -> np.ndarray:
    """a0*b0 + a1*b1 + c for f16 values, rounded once to f16 (nearest even): the dot unit keeps products
    exact and rounds the sum once (docs/shader.md, "V_DOT2_F16_F16"). Exact in f64 pairs: every term is a
    multiple of 2**-48 below 2**34, so TwoSum's errors and their sum are exact."""
    with np.errstate(all="ignore"):
        p0, p1 = a0.astype(F64) * b0.astype(F64), a1.astype(F64) * b1.astype(F64)  # exact
        s1, e1 = fx.two_sum(p0, p1)
        s2, e2 = fx.two_sum(s1, c.astype(F64))
        hi, lo = fx.two_sum(s2, e1 + e2)
        r = fx.round_pair(hi, lo, F16, np.zeros((1, 1), np.int64))
        # inf/NaN, and an exact zero's sign: as IEEE arithmetic gives them
        r = np.where(np.isfinite(hi) & (hi != 0), r, (p0 + p1 + c.astype(F64)).astype(F16))
    return fx.first_nan(np.asarray(r, F16), a0, b0, a1, b1, c).view(U16)


register("v_dot2_f16_f16", lambda ex, w, inst: _dot2_16(ex, w, inst, "f16"))
register("v_dot2_bf16_bf16", lambda ex, w, inst: _dot2_16(ex, w, inst, "bf16"))


# VOP2 relatives, through the generic executor (so VOPD reuses them). Sources are raw packed words.


def _halves16(x: np.ndarray):
    return (x & U32(0xFFFF)).astype(U16).view(F16), (x >> U32(16)).astype(U16).view(F16)


def _dot2acc(ctx, a, b, d):
    (a0, a1), (b0, b1) = _halves16(a), _halves16(b)
    dm = fx.denorm_mode(ctx.mode, "f32")
    acc = fx.flush_out(fma64(a0, b0, fx.flush_in(d, dm)).astype(F32), dm)
    return fx.flush_out(fma64(a1, b1, acc).astype(F32), dm)


def _pk_fmac(ctx, a, b, d):
    (a0, a1), (b0, b1), (d0, d1) = _halves16(a), _halves16(b), _halves16(d)
    lo = fx.first_nan(fma64(a0, b0, d0).astype(F16), a0, b0, d0)
    hi = fx.first_nan(fma64(a1, b1, d1).astype(F16), a1, b1, d1)
    return lo.view(U16).astype(U32) | (hi.view(U16).astype(U32) << U32(16))


vop("v_dot2acc_f32_f16", "f32", ("v2f16", "v2f16"), _dot2acc, acc=True)
vop("v_pk_fmac_f16", "b32", ("v2f16", "v2f16"), _pk_fmac, acc=True)


# ---------------------------------------------------------------------------------------------- fma_mix


def _mix_source(ex, w, inst, i: int) -> np.ndarray:
    """Source i of v_fma_mix*: f16 (half op_sel[i]) when op_sel_hi[i], else f32; neg_hi is abs, neg_lo neg."""
    f16 = op_sel_hi(inst, i)
    word = raw32(ex, w, inst, i, "f16" if f16 else "f32")
    if f16:
        x = half(word, op_sel(inst, i)).view(F16).astype(F64)
    else:
        x = fx.flush_in(word.view(F32), f32_denorm(ex, w)).astype(F64)
    if neg_hi(inst, i):
        x = np.abs(x)
    return -x if neg_lo(inst, i) else x


def _fma_mix(ex, w, inst, out: str) -> None:
    """D = fma(in0, in1, in2) in f32; the lo/hi forms then convert that f32 to f16: two roundings, as the
    reference says (`D0[15:0].f16 = f32_to_f16(fma(in[0], in[1], in[2]))` with f32 `in`), and as LLVM needs:
    it selects v_fma_mixlo_f16 for `fptrunc (fmul float a, b) to half`, an f32 rounding then an f16 one."""
    a, b, c = (_mix_source(ex, w, inst, i) for i in range(3))
    r = fx.first_nan(fma64(a, b, c), a, b, c)
    clamp = bool(inst.fields.get("clamp", 0))
    with np.errstate(all="ignore"):
        if out == "f32":
            r32 = fx.flush_out(r.astype(F32), f32_denorm(ex, w))
            _write32(ex, w, inst, (clamp01(r32) if clamp else r32).view(U32))
            return
        r16 = r.astype(F32).astype(F16)
    v = (clamp01(r16) if clamp else r16).view(U16).astype(U32)
    cur = ex.st.vgpr[inst.fields["vdst"], w, :]
    new = (cur & U32(0xFFFF)) | (v << U32(16)) if out == "hi" else (cur & U32(0xFFFF0000)) | v
    _write32(ex, w, inst, new)


register("v_fma_mix_f32", lambda ex, w, inst: _fma_mix(ex, w, inst, "f32"))
register("v_fma_mixlo_f16", lambda ex, w, inst: _fma_mix(ex, w, inst, "lo"))
register("v_fma_mixhi_f16", lambda ex, w, inst: _fma_mix(ex, w, inst, "hi"))
