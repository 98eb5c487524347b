"""gfx12 (RDNA4) vector ALU instructions: the family's own entries of the semantics table (semantics.py).

From the RDNA4 ISA reference's pseudo-code:

- v_mad_co_u64_u32 / v_mad_co_i64_i32 are gfx11's v_mad_u64_u32 / v_mad_i64_i32 renamed.
- min/max: gfx12 has no MODE.IEEE. v_min_num_* / v_max_num_* (f16, f32, f64; min3, max3, med3, minmax, maxmin, the
  packed f16 forms and VOPD's v_dual_min_num_f32 / v_dual_max_num_f32) are IEEE 754-2019 minimumNumber /
  maximumNumber: a NaN operand (signaling or quiet) yields the other operand, two NaNs the first one quieted;
  -0 < +0. v_minimum_* / v_maximum_* (and minimum3, maximum3, minimummaximum, maximumminimum, the packed f16
  forms) are minimum / maximum: a signaling NaN yields itself quieted (S0's first), else a quiet NaN operand yields
  itself (S0's first). Input denormals are flushed as MODE's denorm mode says, as for gfx11's v_min_* (the packed
  forms too: each half is its VALU opcode's definition). All are defined in the expression form (the interpreter's
  kernels and the JIT's code come from one definition).
- v_permlane16_var_b32 / v_permlanex16_var_b32: v_permlane16/x16 with each lane's selector in the low 4 bits of
  that lane's src1 VGPR (op_sel's fetch-inactive and bound_ctrl as for v_permlane16).
- v_s_exp/log/rcp/rsq/sqrt_f32/f16: the transcendental of a scalar operand, written to an SGPR (an f16 result with
  its upper half zero: `D0[31:16] = 16'0x0`).
- fp8 / bf8 are the OCP formats, which gfx12 uses (gfx940's are the FNUZ variants; sem.minifloat): E4M3 (bias 7, no
  infinities, S.1111.111 is NaN, max 448) and E5M2 (IEEE-like, bias 15). v_dot4_f32_{fp8,bf8}_{fp8,bf8} (four
  products added to S2 in f32, in order, no denormal flushing). The conversions between f32 and fp8/bf8
  (v_cvt_f32_*, v_cvt_pk_f32_*, v_cvt_pk_*_f32, v_cvt_sr_*_f32) are vector.cvt8's, shared with gfx9.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import vector_src, write_sgpr, write_vgpr
from simgpu.shader.sem import minifloat
from simgpu.shader.sem.expr import FLOAT_LAYOUT, bitcast, eq, flush_in, fmax, fmax_num, fmin, fmin_num, isnan, select
from simgpu.shader.semantics import alias, register
from simgpu.shader.state import HW_MODE
from simgpu.shader.vector import int_mul, lane, minmax, trans  # noqa: F401 - the shared specs used below
from simgpu.shader.vector.valu import SPECS, OpCtx, _omod_clamp, define, table_entry, typed_source
from simgpu.shader.vector.vop3p import packed_op

G = "gfx12"
U32 = np.uint32


for _new, _old in (("v_mad_co_u64_u32", "v_mad_u64_u32"), ("v_mad_co_i64_i32", "v_mad_i64_i32")):
    SPECS[_new] = SPECS[_old]
    alias(_new, _old, G)


# ---------------------------------------------------------------------------------------------- min / max
# In the expression form (both tiers), inputs flushed as for gfx11's v_min_*: the _num forms through sem.expr.fmin_num,
# the NaN-propagating minimum / maximum forms through the ISA's min/max with their NaN lanes chosen here.


def _quiet_bit(x) -> tuple[str, int]:
    ut, mant, _ = FLOAT_LAYOUT[x.t]
    return ut, 1 << (mant - 1)


def _quiet(x):
    """x with the quiet bit set (a NaN quieted; the result is used only for NaNs)."""
    ut, q = _quiet_bit(x)
    return bitcast(bitcast(x, ut) | q, x.t)


def _snan(x):
    ut, q = _quiet_bit(x)
    return isnan(x) & eq(bitcast(x, ut) & q, 0)


def _imum(pick):
    """minimum / maximum: a signaling NaN quieted (S0 first), else a quiet NaN (S0 first), else `pick`'s winner
    (the ISA's min/max: -0 < +0)."""
    def fn(a, b):
        return select(_snan(a) | (isnan(a) & ~_snan(b)), _quiet(a), select(isnan(b), _quiet(b), pick(a, b)))
    return fn


minimum, maximum = _imum(fmin), _imum(fmax)


def _med3_num(a, b, c):
    m = fmax_num(fmax_num(a, b), c)
    return select(isnan(a) | isnan(b) | isnan(c), fmin_num(fmin_num(a, b), c),
                  select(eq(m, a), fmax_num(b, c), select(eq(m, b), fmax_num(a, c), fmax_num(a, b))))


def _defined(fn):
    """A _num form's definition: fn over the inputs flushed as MODE's input denorm mode says."""
    return lambda *xs: fn(*(flush_in(x) for x in xs))


_NUM_TWO = {"min_num": fmin_num, "max_num": fmax_num}
_NUM_THREE = {"min3_num": lambda a, b, c: fmin_num(fmin_num(a, b), c),
              "max3_num": lambda a, b, c: fmax_num(fmax_num(a, b), c), "med3_num": _med3_num,
              "minmax_num": lambda a, b, c: fmax_num(fmin_num(a, b), c),
              "maxmin_num": lambda a, b, c: fmin_num(fmax_num(a, b), c)}
_IMUM_TWO = {"minimum": minimum, "maximum": maximum}
_IMUM_THREE = {
    "minimum3": lambda a, b, c: minimum(minimum(a, b), c), "maximum3": lambda a, b, c: maximum(maximum(a, b), c),
    "minimummaximum": lambda a, b, c: maximum(minimum(a, b), c),
    "maximumminimum": lambda a, b, c: minimum(maximum(a, b), c),
}

for _t in ("f16", "f32", "f64"):
    for _op, _f in {**_NUM_TWO, **_IMUM_TWO}.items():
        define(f"v_{_op}_{_t}", _t, (_t, _t), _defined(_f), family=G)
for _t in ("f16", "f32"):
    for _op, _f in {**_NUM_THREE, **_IMUM_THREE}.items():
        define(f"v_{_op}_{_t}", _t, (_t,) * 3, _defined(_f), family=G)

for _op in ("min_num", "max_num", *_IMUM_TWO):
    packed_op(f"v_pk_{_op}_f16", f"v_{_op}_f16", G)


# ---------------------------------------------------------------------------------------------- lane permutes


def _permlane_var(cross: bool):
    """v_permlane16_var_b32 / v_permlanex16_var_b32: lane i of a 16-lane row reads lane src1[i][3:0] of its row
    (cross: of the other row of its 32-lane half); op_sel[0] fetch-inactive, op_sel[1] bound_ctrl."""
    def fn(ex, w, inst):
        st = ex.st
        i = np.arange(st.lanes)
        sel = vector_src(ex, w, inst.fields["src1"], inst.literal).astype(np.int64) & 15
        row = i // 16
        src_lane = ((row ^ 1) if cross else row)[None, :] * 16 + sel
        vals = vector_src(ex, w, inst.fields["src0"], inst.literal)
        taken = np.take_along_axis(vals, src_lane, axis=1)
        active = st.exec_lanes(w)
        fi, bound_ctrl = inst.fields["op_sel"] & 1, (inst.fields["op_sel"] >> 1) & 1
        src_ok = np.ones_like(active) if fi else np.take_along_axis(active, src_lane, axis=1)
        write_vgpr(ex, w, inst.fields["vdst"], np.where(src_ok, taken, U32(0)), active & (src_ok | bool(bound_ctrl)))
    return fn


register("v_permlane16_var_b32", _permlane_var(False), G)
register("v_permlanex16_var_b32", _permlane_var(True), G)


# ---------------------------------------------------------------------------------------------- v_s_*


def _scalar_trans(vname: str, t: str):
    """v_s_<op>_<t> sdst, ssrc0: the VALU op on a scalar (every lane reads the same operand), written to an
    SGPR; modifiers (neg, abs, clamp, omod) as the VALU's."""
    def fn(ex, w, inst):
        spec = SPECS[vname]
        entries = table_entry(inst)["ops"][1:]
        src = typed_source(ex, w, inst, entries[0], t, 0)[:, :1]
        ctx = OpCtx(bool(inst.fields.get("clamp", 0)), ex.st.hwreg[w, HW_MODE], 1, ex, w)
        r = np.asarray(_omod_clamp(inst, spec, spec.fn(ctx, src), ctx)).reshape(len(w))
        raw = r.view(np.uint16).astype(U32) if t == "f16" else r.view(U32)
        write_sgpr(ex, w, inst.fields["vdst"], raw)
    return fn


for _t in ("f16", "f32"):
    for _op in ("exp", "log", "rcp", "rsq", "sqrt"):
        register(f"v_s_{_op}_{_t}", _scalar_trans(f"v_{_op}_{_t}", _t), G)


# ---------------------------------------------------------------------------------------------- fp8 / bf8


# The OCP formats' values (sem.minifloat), also read by gfx12's WMMA (matrix.gfx12); the conversions are vector.cvt8's.
FP8 = minifloat.FP8.table  # E4M3
BF8 = minifloat.BF8.table  # E5M2


def _fp8_tables():
    return FP8, BF8


def _dot4_8(ka: str, kb: str):
    """v_dot4_f32_<a>_<b>: D = S2 + the four byte products, each added in f32 in order (the pseudo-code's
    `tmp += 32'F(a) * 32'F(b)`; an fp8 x fp8 product is exact in f32)."""
    def fn(ex, w, inst):
        fp8, bf8 = _fp8_tables()
        ta, tb = (fp8, bf8)[ka == "bf8"], (fp8, bf8)[kb == "bf8"]
        a = vector_src(ex, w, inst.fields["src0"], inst.literal)
        b = vector_src(ex, w, inst.fields["src1"], inst.literal)
        acc = vector_src(ex, w, inst.fields["src2"], inst.literal).view(np.float32).copy()
        with np.errstate(all="ignore"):
            for i in range(4):
                pa = ta[(a >> U32(8 * i)) & U32(0xFF)].astype(np.float32)
                pb = tb[(b >> U32(8 * i)) & U32(0xFF)].astype(np.float32)
                acc = (acc + pa * pb).astype(np.float32)
        write_vgpr(ex, w, inst.fields["vdst"], acc.view(U32), ex.st.exec_lanes(w))
    return fn


for _k in ("fp8", "bf8"):
    for _k2 in ("fp8", "bf8"):
        register(f"v_dot4_f32_{_k}_{_k2}", _dot4_8(_k, _k2), G)
