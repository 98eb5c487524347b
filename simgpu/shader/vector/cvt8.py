"""The fp8 / bf8 conversions of gfx942 (CDNA3), gfx950 (CDNA4) and gfx1201 (RDNA4): f32 to two packed bytes
(v_cvt_pk_fp8_f32, v_cvt_pk_bf8_f32), f32 to one byte with stochastic rounding (v_cvt_sr_fp8_f32,
v_cvt_sr_bf8_f32), and back (v_cvt_f32_fp8/bf8, v_cvt_pk_f32_fp8/bf8). The formats are sem.minifloat's: gfx942 reads
and writes the FNUZ variants, gfx950 and gfx12 the OCP ones (minifloat.formats_of).

From the reference's pseudo-code (CDNA3/CDNA4/RDNA4 ISA, the same text in all three):

- v_cvt_pk_*_f32: D.b16 = {cvt(S1), cvt(S0)} into the low half of the VGPR, or the high half with op_sel[3]; the
  other half is kept. Rounds to nearest even whatever MODE says (the pseudo-code forces ROUND_NEAREST_EVEN); abs/neg
  apply to the f32 sources. Overflow: to infinity (bf8) or NaN (fp8, FNUZ); MODE.FP16_OVFL (bit 23) makes finite
  overflow saturate, and the VOP3 clamp bit every overflow (minifloat's module docstring: LLVM cannot write clamp,
  so only hand-made code sets it).
- v_cvt_sr_*_f32: the f32 in S0 with the top 23 - M bits of the dword S1 added to its mantissa field, wrapping
  within the field (M: 3 for fp8, 2 for bf8; `m = 23'U(mantissa(S0) + S1[31:12])` for fp8, S1[31:11] for bf8),
  then converted as above, to nearest even: the pseudo-code's literal reading (minifloat.stochastic_dither). The
  byte op_sel[3:2] picks (gfx12's byte_sel) is written, the other three bytes kept.
- v_cvt_f32_* : one byte of S0 as f32, exact. gfx9 picks the byte with SDWA's src0_sel (byte 0 otherwise); gfx12
  with op_sel[1:0], its two bits reversed (byte_sel:1 is op_sel 2). v_cvt_pk_f32_*: the low word's two bytes (the high
  word with gfx9's SDWA WORD_1 or gfx12's op_sel[0]) as an f32 pair. Clamp and omod (gfx9's VOP3 and SDWA forms)
  are the VALU executor's output modifiers on the f32 result.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import write_vgpr
from simgpu.shader.sem import minifloat
from simgpu.shader.semantics import register
from simgpu.shader.state import HW_MODE, wsel
from simgpu.shader.vector import sdwa
from simgpu.shader.vector.valu import VOp, _source_entries, dpp_write_mask, execute, typed_source

U32, F32 = np.uint32, np.float32
MODE_FP16_OVFL = 1 << 23  # MODE.FP16_OVFL: conversions to fp8 (and f16) saturate finite overflow


def formats_of(arch: str) -> dict[str, minifloat.Format]:
    """The fp8/bf8 formats of an architecture's conversions: FNUZ on gfx942, OCP on gfx950 and gfx12."""
    return minifloat.FNUZ if str(arch) == "gfx942" else minifloat.OCP


def source(ex, w, inst, i: int, t: str) -> np.ndarray:
    """VOP3 source i typed `t`, abs/neg applied to floats (the VALU executor's reader)."""
    return typed_source(ex, w, inst, _source_entries(inst)[i], t, i)


def fp16_ovfl(ex, w) -> np.ndarray:
    """MODE.FP16_OVFL of each wave, [n, 1] (broadcasting over the lanes)."""
    return ((ex.st.hwreg[wsel(w), HW_MODE] & MODE_FP16_OVFL) != 0).reshape(-1, 1)


def _op_sel(inst) -> int:
    return inst.fields.get("op_sel", 0) if inst.encoding == "VOP3" else 0


def write_mask(ex, w, inst) -> np.ndarray:
    """The lanes that write: EXEC, and DPP's row / bank masks (gfx12's e64 DPP forms)."""
    active = ex.st.exec_lanes(w)
    return active if inst.dpp is None else active & dpp_write_mask(ex, w, inst)


def merge(ex, w, inst, value: np.ndarray, shift: int, width: int) -> None:
    """Write `value` into bits [shift, shift + width) of VDST in the writing lanes, the other bits kept."""
    vdst = inst.fields["vdst"]
    keep = U32(~(((1 << width) - 1) << shift) & 0xFFFFFFFF)
    old = ex.st.vgpr[vdst, wsel(w), :]
    write_vgpr(ex, w, vdst, (old & keep) | (value.astype(U32) << U32(shift)), write_mask(ex, w, inst))


def _pk_to8(kind: str):
    def fn(ex, w, inst):
        fmt = formats_of(inst.arch)[kind]
        sat, ovfl = bool(inst.fields.get("clamp", 0)), fp16_ovfl(ex, w)
        lo = fmt.encode(source(ex, w, inst, 0, "f32"), sat, ovfl)
        hi = fmt.encode(source(ex, w, inst, 1, "f32"), sat, ovfl)
        merge(ex, w, inst, lo | hi << U32(8), 16 * (_op_sel(inst) >> 3 & 1), 16)
    return fn


def _sr_to8(kind: str):
    def fn(ex, w, inst):
        fmt = formats_of(inst.arch)[kind]
        x = source(ex, w, inst, 0, "f32").view(U32)
        rnd = source(ex, w, inst, 1, "u32")
        tmp = minifloat.stochastic_dither(x, rnd, fmt.man_bits).view(F32)
        code = fmt.encode(tmp, bool(inst.fields.get("clamp", 0)), fp16_ovfl(ex, w))
        merge(ex, w, inst, code, 8 * (_op_sel(inst) >> 2 & 3), 8)
    return fn


def _gfx12_byte(inst) -> int:
    sel = _op_sel(inst) & 3
    return (sel & 1) << 1 | sel >> 1


def _f32_from8(kind: str):
    """v_cvt_f32_<kind> as a VALU spec: the source already holds the byte in its low bits on gfx9 (SDWA's select);
    gfx12's op_sel byte select is read from the instruction by the gfx12 entry below."""
    def fn(ctx, x):
        return formats_of(ctx.ex.arch)[kind].decode(x & U32(0xFF)).astype(F32)
    return VOp("f32", ("u32",), fn)


def _gfx12_f32_from8(kind: str):
    def fn(ex, w, inst):
        src = source(ex, w, inst, 0, "u32")  # (through DPP when the instruction has it)
        v = minifloat.OCP[kind].decode(src >> U32(8 * _gfx12_byte(inst))).astype(F32)
        write_vgpr(ex, w, inst.fields["vdst"], v.view(U32), write_mask(ex, w, inst))
    return fn


def _pk_f32_from8(kind: str):
    def fn(ex, w, inst):
        if inst.dpp is not None and inst.dpp["kind"] == "sdwa":
            word = sdwa.source(ex, w, inst, "src0", 32)
        else:
            word = source(ex, w, inst, 0, "u32")
            word = word >> U32(16) if _op_sel(inst) & 1 else word
        fmt = formats_of(inst.arch)[kind]
        active = write_mask(ex, w, inst)
        vals = [fmt.decode(word >> U32(8 * i)).astype(F32) for i in range(2)]  # before writing: src0 may be in vdst
        for i, v in enumerate(vals):
            write_vgpr(ex, w, inst.fields["vdst"] + i, v.view(U32), active)
    return fn


for _k in ("fp8", "bf8"):
    for _family in ("gfx9", "gfx12"):
        register(f"v_cvt_pk_{_k}_f32", _pk_to8(_k), _family)
        register(f"v_cvt_sr_{_k}_f32", _sr_to8(_k), _family)
        register(f"v_cvt_pk_f32_{_k}", _pk_f32_from8(_k), _family)
    register(f"v_cvt_f32_{_k}", execute(_f32_from8(_k)), "gfx9")
    register(f"v_cvt_f32_{_k}", _gfx12_f32_from8(_k), "gfx12")
