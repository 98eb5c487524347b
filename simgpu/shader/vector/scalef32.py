"""gfx950's (CDNA4) scaled conversions, v_cvt_scalef32_*: f32 / f16 / bf16 values to and from the OCP fp8 / bf8
and the MX fp6 / bf6 / fp4 formats (sem.minifloat), scaled by a power of two (family gfx9's own entries; gfx942's
decoder does not know these opcodes).

From the CDNA4 ISA reference's pseudo-code (each form's operands are in FORMS below):

- The scale is the biased exponent field of an f32 operand (`scale = exponent(S.f32)`, bits 30:23: an E8M0 scale,
  mantissa and sign ignored). Reading of the undefined helpers f32_to_fp8_scale & co.: a conversion to a small
  format divides by 2**(scale - 127), a conversion from one multiplies by it (LLVM's ROCDL dialect describes the
  operations so: "dividing by" / "multiplying by the exponent in scale"), with one rounding to nearest even of the
  exact result. Field 255 is taken as 2**128 like any other (the reference names no special case; an E8M0 NaN scale
  is not modelled as such).
- Conversions to fp8/bf8 overflow as the unscaled ones do (OCP: bf8 to infinity, fp8 to NaN; finite overflow
  saturates under MODE.FP16_OVFL, which Triton sets before its gfx950 fp8 casts); fp6/bf6/fp4 saturate (minifloat's
  module docstring). A NaN decodes to NaN; the f16 / bf16 results round once (bf16 through f32, exact
  here: a decoded value times a power of two has at most 4 significant bits).
- The stochastic forms (sr) add the random dword's top 23 - M bits to the f32 mantissa of the source before scaling
  (minifloat.stochastic_dither, the pseudo-code of the unscaled v_cvt_sr_fp8_f32; dithering commutes with the
  power-of-two scale wherever both are normal). f16 / bf16 sources are widened to f32 first (exact). The packed sr
  forms advance the random value with v_prng_b32 between elements, as the pseudo-code does.
- Where results go: a 16-bit pk result into the word op_sel[3] picks, an 8-bit one (sr fp8/bf8, the fp4 pairs) into
  the byte op_sel[3:2] picks, the rest of VDST kept; a 16-bit single result (f16_fp8) into the half op_sel[3] picks;
  the others write whole registers. Sources: op_sel[0] picks the word of a pk_*_fp8 source, op_sel[1:0] the byte of
  an f32_fp8 / f16_fp8 / fp4 source. The packed fp6 forms pack 32 six-bit values into six dwords, value i at bit 6i
  (2xpk16 interleaves S0's and S1's: S0[i] is value 2i, S1[i] value 2i + 1).

Source modifiers: abs then neg on a value source flip or clear each value's sign (both halves of a packed 16-bit
source: the reference does not say which half a VOP3 neg bit reaches here); on the scale they change nothing (its
exponent field is read); the random dword and the small-format sources have no float modifiers (LLVM takes none).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import vector_src, write_vgpr
from simgpu.shader.sem import minifloat as mf
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel
from simgpu.shader.vector.cvt8 import fp16_ovfl
from simgpu.shader.vector.vop3p import bf16_to_f32, f32_to_bf16

G = "gfx9"
U16, U32, U64, F16, F32, F64 = np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64
SMALL = {"fp8": mf.FP8, "bf8": mf.BF8, "fp6": mf.FP6, "bf6": mf.BF6, "fp4": mf.FP4}


# ---------------------------------------------------------------------------------------------- operands


def _dwords(ex, w, inst, field: str, n: int) -> list[np.ndarray]:
    """n consecutive dwords of a source (a VGPR run; a scalar source only as one dword)."""
    code = inst.fields[field]
    if code < 256:
        if n > 1:
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: a scalar {n}-dword source is not modelled")
        return [vector_src(ex, w, code, inst.literal).astype(U32)]
    _check(ex, w, inst, code - 256, n)
    return [ex.st.vgpr[code - 256 + i, wsel(w), :].copy() for i in range(n)]


def _check(ex, w, inst, first: int, count: int) -> None:
    if first + count > ex.st.vgpr.shape[0]:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: registers {first}..{first + count - 1} are past the "
                                       f"{ex.st.vgpr.shape[0]} the kernel descriptor allocates")


def _factor(word: np.ndarray) -> np.ndarray:
    """2**(scale - 127) for an f32 scale operand's exponent field."""
    return np.ldexp(1.0, ((word >> U32(23)) & U32(0xFF)).astype(np.int64) - 127)


def _widen(half: np.ndarray, kind: str) -> np.ndarray:
    """16-bit source halves (uint32 holding the bits) as f32."""
    return bf16_to_f32(half & U32(0xFFFF)) if kind == "bf16" else (half & U32(0xFFFF)).astype(U16).view(F16).astype(F32)


def _narrow(x: np.ndarray, kind: str) -> np.ndarray:
    """f64 values (exact products) rounded once to `kind`, as uint32 bits."""
    with np.errstate(all="ignore"):
        if kind == "f32":
            return x.astype(F32).view(U32)
        if kind == "f16":
            return x.astype(F16).view(U16).astype(U32)
        return f32_to_bf16(x.astype(F32)).astype(U32)  # exact in f32 (module docstring): one rounding


def _prng(x: np.ndarray) -> np.ndarray:
    """v_prng_b32: one step of the LFSR the packed stochastic forms advance their random value with."""
    return ((x << U32(1)) ^ (x >> U32(31)) * U32(197)).astype(U32)


def _encode(fmt: mf.Format, x32: np.ndarray, factor: np.ndarray, rnd: np.ndarray | None, ovfl) -> np.ndarray:
    """f32 values to codes: dithered (sr) on the f32 bits, divided by the scale exactly, rounded once; `ovfl`
    MODE.FP16_OVFL's saturation of finite overflow."""
    if rnd is not None:
        x32 = mf.stochastic_dither(x32.view(U32), rnd, fmt.man_bits).view(F32)
    with np.errstate(all="ignore"):
        return fmt.encode(x32.astype(F64) / factor, saturate_finite=ovfl)


def _merge(ex, w, inst, value: np.ndarray, shift: int, width: int) -> None:
    vdst = inst.fields["vdst"]
    keep = U32(~(((1 << width) - 1) << shift) & 0xFFFFFFFF)
    old = ex.st.vgpr[vdst, wsel(w), :]
    write_vgpr(ex, w, vdst, (old & keep) | (value.astype(U32) << U32(shift)), ex.st.exec_lanes(w))


def _write(ex, w, inst, words: list[np.ndarray]) -> None:
    vdst = inst.fields["vdst"]
    _check(ex, w, inst, vdst, len(words))
    active = ex.st.exec_lanes(w)
    for i, v in enumerate(words):
        write_vgpr(ex, w, vdst + i, v.astype(U32), active)


def _op_sel(inst) -> int:
    return inst.fields.get("op_sel", 0)


# ---------------------------------------------------------------------------------------------- the forms


def _modified(inst, field: str, word: np.ndarray, sign: int) -> np.ndarray:
    """A source dword with VOP3's abs then neg applied to the sign bits in `sign` (each value's)."""
    i = ("src0", "src1", "src2").index(field)
    if inst.fields.get("abs", 0) >> i & 1:
        word = word & U32(~sign & 0xFFFFFFFF)
    if inst.fields.get("neg", 0) >> i & 1:
        word = word ^ U32(sign)
    return word


def _elements(ex, w, inst, field: str, src: str, count: int) -> list[np.ndarray]:
    """`count` f32 / f16 / bf16 source values as f32 arrays, from consecutive dwords (16-bit ones two a dword), with
    the source's abs / neg applied to each value."""
    if src == "f32":
        return [_modified(inst, field, d, 0x80000000).view(F32) for d in _dwords(ex, w, inst, field, count)]
    words = [_modified(inst, field, d, 0x80008000) for d in _dwords(ex, w, inst, field, (count + 1) // 2)]
    return [_widen(words[i // 2] >> U32(16 * (i % 2)), src) for i in range(count)]


def _to_small(dst: str, src: str, shape: str):
    """Conversions to a small format. shape: "pk" (two values: two f32 sources, or a packed 16-bit one), "sr" (one
    value, S1 random), "pk_sr" (two values, stochastic), "pk32" (32 values), "2xpk16" (16 f32 from S0 and S1 each),
    "sr_pk32"."""
    fmt = SMALL[dst]
    sr = "sr" in shape

    def fn(ex, w, inst):
        two_f32 = shape in ("pk", "2xpk16") and src == "f32"  # the values come from S0 and S1
        scale_field = "src2" if two_f32 or sr else "src1"
        factor = _factor(_dwords(ex, w, inst, scale_field, 1)[0])
        rnd = _dwords(ex, w, inst, "src1", 1)[0] if sr else None
        if shape == "2xpk16":
            a, b = _elements(ex, w, inst, "src0", src, 16), _elements(ex, w, inst, "src1", src, 16)
            xs = [x for pair in zip(a, b, strict=True) for x in pair]
        elif two_f32:
            xs = _elements(ex, w, inst, "src0", src, 1) + _elements(ex, w, inst, "src1", src, 1)
        else:
            xs = _elements(ex, w, inst, "src0", src, {"sr": 1, "pk": 2, "pk_sr": 2}.get(shape, 32))
        codes, ovfl = [], fp16_ovfl(ex, w)
        for x in xs:
            codes.append(_encode(fmt, x, factor, rnd, ovfl))
            if rnd is not None:
                rnd = _prng(rnd)  # (the one-value sr forms use only the first)
        _store_small(ex, w, inst, fmt, codes)
    return fn


def _store_small(ex, w, inst, fmt: mf.Format, codes: list[np.ndarray]) -> None:
    if len(codes) == 32:  # six dwords of six-bit values
        bits = [c.astype(U64) for c in codes]
        words = []
        for d in range(6):
            acc = np.zeros(codes[0].shape, U64)
            for i, c in enumerate(bits):
                lo = 6 * i - 32 * d
                if -6 < lo < 32:
                    acc |= (c << U64(lo)) if lo >= 0 else (c >> U64(-lo))
            words.append((acc & U64(0xFFFFFFFF)).astype(U32))
        _write(ex, w, inst, words)
    elif len(codes) == 1:  # one byte, op_sel[3:2]
        _merge(ex, w, inst, codes[0], 8 * (_op_sel(inst) >> 2 & 3), 8)
    elif fmt.bits == 4:  # two nibbles into the byte op_sel[3:2] picks
        _merge(ex, w, inst, codes[0] | codes[1] << U32(4), 8 * (_op_sel(inst) >> 2 & 3), 8)
    else:  # two bytes into the word op_sel[3] picks
        _merge(ex, w, inst, codes[0] | codes[1] << U32(8), 16 * (_op_sel(inst) >> 3 & 1), 16)


def _from_small(src: str, dst: str, shape: str):
    """Conversions from a small format, scale in S1. shape: "one" (a byte of S0), "pk" (two values of S0: a word of
    fp8s, or a byte of fp4s), "pk32" (32 six-bit values in six dwords)."""
    fmt = SMALL[src]

    def fn(ex, w, inst):
        factor = _factor(_dwords(ex, w, inst, "src1", 1)[0])
        if shape == "pk32":
            words = [d.astype(U64) for d in _dwords(ex, w, inst, "src0", 6)] + [np.zeros_like(factor, U64)]
            codes = []
            for i in range(32):
                d, lo = divmod(6 * i, 32)
                codes.append(((words[d] | words[d + 1] << U64(32)) >> U64(lo)) & U64(63))
        else:
            word = _dwords(ex, w, inst, "src0", 1)[0]
            if fmt.bits == 8 and shape == "pk":
                word = word >> U32(16 * (_op_sel(inst) & 1))
            else:
                word = word >> U32(8 * (_op_sel(inst) & 3))
            n = 1 if shape == "one" else 2
            codes = [(word >> U32(fmt.bits * i)) & U32((1 << fmt.bits) - 1) for i in range(n)]
        vals = [_narrow(fmt.decode(c) * factor, dst) for c in codes]
        if dst == "f32":
            _write(ex, w, inst, vals)
        elif shape == "one":  # a 16-bit result into the half op_sel[3] picks
            _merge(ex, w, inst, vals[0], 16 * (_op_sel(inst) >> 3 & 1), 16)
        else:
            _write(ex, w, inst, [vals[i] | vals[i + 1] << U32(16) for i in range(0, len(vals), 2)])
    return fn


# mnemonic (without v_cvt_scalef32_) -> the semantic function
FORMS: dict[str, object] = {}
for _k in ("fp8", "bf8"):
    FORMS[f"pk_{_k}_f32"] = _to_small(_k, "f32", "pk")
    FORMS[f"sr_{_k}_f32"] = _to_small(_k, "f32", "sr")
    FORMS[f"pk_f32_{_k}"] = _from_small(_k, "f32", "pk")
    FORMS[f"f32_{_k}"] = _from_small(_k, "f32", "one")
    FORMS[f"f16_{_k}"] = _from_small(_k, "f16", "one")
    for _t in ("f16", "bf16"):
        FORMS[f"pk_{_k}_{_t}"] = _to_small(_k, _t, "pk")
        FORMS[f"sr_{_k}_{_t}"] = _to_small(_k, _t, "sr")
        FORMS[f"pk_{_t}_{_k}"] = _from_small(_k, _t, "pk")
FORMS["pk_fp4_f32"] = _to_small("fp4", "f32", "pk")
FORMS["sr_pk_fp4_f32"] = _to_small("fp4", "f32", "pk_sr")
FORMS["pk_f32_fp4"] = _from_small("fp4", "f32", "pk")
for _t in ("f16", "bf16"):
    FORMS[f"pk_fp4_{_t}"] = _to_small("fp4", _t, "pk")
    FORMS[f"sr_pk_fp4_{_t}"] = _to_small("fp4", _t, "pk_sr")
    FORMS[f"pk_{_t}_fp4"] = _from_small("fp4", _t, "pk")
for _k in ("fp6", "bf6"):
    FORMS[f"2xpk16_{_k}_f32"] = _to_small(_k, "f32", "2xpk16")
    FORMS[f"sr_pk32_{_k}_f32"] = _to_small(_k, "f32", "sr_pk32")
    FORMS[f"pk32_f32_{_k}"] = _from_small(_k, "f32", "pk32")
    for _t in ("f16", "bf16"):
        FORMS[f"pk32_{_k}_{_t}"] = _to_small(_k, _t, "pk32")
        FORMS[f"sr_pk32_{_k}_{_t}"] = _to_small(_k, _t, "sr_pk32")
        FORMS[f"pk32_{_t}_{_k}"] = _from_small(_k, _t, "pk32")

for _name, _fn in FORMS.items():
    register(f"v_cvt_scalef32_{_name}", _fn, G)
