"""The generic VALU executor: one function runs every VOP1/VOP2/VOPC/VOP3/VOP3SD instruction (and
their DPP16/DPP8 forms) from a small spec per opcode.

A spec (`VOp`) names the destination and source types and a numpy function over [waves, lanes]
arrays of those types. The executor reads the sources (VGPRs, scalars and constants broadcast, the
32-bit literal, DPP-permuted src0), applies the input modifiers (abs/neg on floats, op_sel halves of
16-bit operands), calls the function, applies clamp and omod, and writes the result under EXEC (and
the DPP row/bank masks): a VGPR, the low or high half of one, a lane mask in VCC/SGPRs (VOPC), or
EXEC itself (VOPCX). Carry-in/-out and condition masks come from VCC (e32) or SGPR operands (e64).

gfx9 (gfx942) adds what its encodings say otherwise: SDWA sources and destinations (vector.sdwa), its DPP16
controls (wave shifts and rotates, row broadcasts), v_cmpx writing its SGPR destination as well as EXEC, and 16-bit
results that zero the high half of their VGPR (ZERO_HIGH16, filled by vector.gfx9).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from simgpu.shader.operand import constant, literal64, scalar_src, vector_src, write_vgpr
from simgpu.shader.scalar.alu import read_sgpr, write_sgpr
from simgpu.shader.sem.expr import Definition
from simgpu.shader.sem.numpy_gen import numpy_kernel
from simgpu.shader.semantics import base_name, family_of, register
from simgpu.shader.state import EXEC_LO, HW_MODE, VCC_LO, wsel
from simgpu.shader.vector import sdwa, window

U32, U64 = np.uint32, np.uint64

# type name -> (numpy dtype, bits)
TYPES = {"f16": (np.float16, 16), "f32": (np.float32, 32), "f64": (np.float64, 64),
         "u16": (np.uint16, 16), "i16": (np.int16, 16), "b16": (np.uint16, 16),
         "u32": (np.uint32, 32), "i32": (np.int32, 32), "b32": (np.uint32, 32),
         "u64": (np.uint64, 64), "i64": (np.int64, 64), "b64": (np.uint64, 64),
         "v2f16": (np.uint32, 32)}  # two packed f16 (v_pk_fmac_f16, v_dot2acc_f32_f16): raw bits, f16 constants
UNSIGNED = {16: np.uint16, 32: np.uint32, 64: np.uint64}
MODE_IEEE = 1 << 9  # MODE.IEEE: min/max NaN rules, and omod is ignored


def is_float(t: str) -> bool:
    return t in ("f16", "f32", "f64")


def const_kind(t: str) -> str:
    """The inline-constant and literal flavour of a type (see operand.constant and operand.literal64)."""
    bits = TYPES[t][1]
    if t in ("f16", "f32", "f64", "i64"):
        return t
    if t == "v2f16":
        return "f16"
    return {16: "b16", 32: "b32", 64: "b64"}[bits]


@dataclass
class VOp:
    """The semantics of one VALU opcode."""

    dst: str | None  # result type; None for VOPC (the result is a lane mask)
    srcs: tuple[str, ...]
    fn: Callable  # fn(ctx, *typed sources) -> typed result (or (result, carry/mask) for `carry_out`)
    carry_out: bool = False  # second result: a lane mask written to VCC (e32) or sdst (VOP3SD)
    mask_in: bool = False  # an extra lane-mask input: VCC (e32) or src2 (e64); passed as the last source
    compare: bool = False  # VOPC: the result is a lane mask
    cmpx: bool = False  # VOPCX: the mask goes to EXEC
    int_clamp: bool = False  # clamp means integer saturation; fn receives ctx.clamp and saturates itself
    no_omod: bool = False
    acc: bool = False  # the destination is also an input (v_fmac_*, v_mac_*): passed after the sources
    vcc_in: bool = False  # with mask_in: the mask is always VCC, also in VOP3 (v_div_fmas_*)
    # 64-bit shifts by a constant amount, done on the two 32-bit halves of a VGPR pair (a uint64 view
    # of a pair costs several strided passes): pair_fn(amount, lo, hi) -> fresh (lo, hi) uint32 arrays
    pair_fn: Callable | None = None
    definition: Definition | None = None  # the expression form `fn` was generated from (both tiers use it)
    family: str | None = None  # the ISA family whose own entry this is (semantics.register), None: shared
    windowed: bool | None = None  # computes lane by lane (vector.window), once known


class OpCtx:
    """What an op function may need beyond its sources: clamp, the waves' MODE register, lanes, the
    dispatch and its waves. MODE is read when an op asks for it (integer ops never do)."""

    __slots__ = ("clamp", "lanes", "ex", "w", "_mode", "carry")

    def __init__(self, clamp: bool, mode: np.ndarray | None, lanes: int, ex, w: np.ndarray, carry: bool = True):
        self.clamp, self._mode, self.lanes, self.ex, self.w = clamp, mode, lanes, ex, w
        self.carry = carry  # False: the carry-out goes to null, an op may return None for it

    @property
    def uniform_mode(self) -> int | None:
        """MODE as one int when every wave of the batch has the same one (the dispatch's initial MODE,
        until some wave writes MODE): float ops then test its fields without numpy."""
        return getattr(self.ex, "uniform_mode", None)

    @property
    def mode(self) -> np.ndarray:
        if self._mode is None:
            self._mode = self.ex.st.hwreg[wsel(self.w), HW_MODE]
        return self._mode


# ---------------------------------------------------------------------------------------------- sources


def table_entry(inst) -> dict:
    """The codec's table entry of a VALU instruction (operand list, modifiers)."""
    return inst.info.get("entry", inst.info)


def _source_entries(inst) -> list[list]:
    return [e for e in table_entry(inst).get("ops", []) if e[0] in ("src0", "src1", "src2", "vsrc1", "K")]


def t16_vgpr(inst, code: int, bits: int) -> tuple[int, int]:
    """(operand code, high half) of a 16-bit VGPR operand of a VOP1/VOP2/VOPC (e32/DPP) instruction.

    gfx11 addresses 16-bit VGPR halves in these encodings with bit 7 of the register number: v0-v127
    only, bit 7 set selects the high half (LLVM's true16 `vN.h`; its fake16 code keeps to v0-v127)."""
    if bits != 16 or code < 256 or inst.encoding not in ("VOP1", "VOP2", "VOPC"):
        return code, 0
    r = code - 256
    return 256 + (r & 127), r >> 7


def _raw_source(ex, w, inst, entry, t: str, index: int) -> np.ndarray:
    """Raw bits [n, lanes] (uint16/32/64) of one source, before modifiers."""
    field = entry[0]
    bits = TYPES[t][1]
    wide = bits == 64
    kind = const_kind(t)
    t16_hi = 0
    if field == "K":
        lit = inst.literal or 0
        raw = np.full((len(w), ex.st.lanes), literal64(lit, kind) if wide else lit, U64 if wide else U32)
    elif inst.dpp is not None and inst.dpp["kind"] == "sdwa":
        raw = sdwa.source(ex, w, inst, field, bits)
    elif field == "vsrc1":
        code, t16_hi = t16_vgpr(inst, 256 + inst.fields["vsrc1"], bits)
        raw = vector_src(ex, w, code, None, kind)
    elif field == "src0" and inst.dpp is not None:
        code, t16_hi = t16_vgpr(inst, 256 + inst.dpp["src0"], bits)
        raw = dpp_source(ex, w, inst, code, kind)
    else:
        code, t16_hi = t16_vgpr(inst, inst.fields[field], bits)
        raw = vector_src(ex, w, code, inst.literal, kind)
    if bits == 16:
        hi = _op_sel(inst, index) | t16_hi
        raw32 = raw.astype(U32)
        raw = ((raw32 >> U32(16)) if hi else raw32).astype(np.uint16)
    return raw


def _op_sel(inst, index: int) -> int:
    if inst.encoding not in ("VOP3", "VOP3SD") or "op_sel" not in inst.fields:
        return 0
    return (inst.fields["op_sel"] >> index) & 1


def _modifier_bits(inst, index: int) -> tuple[int, int]:
    """(abs, neg) for source `index` from the VOP3 fields or the DPP16 word."""
    a = n = 0
    if inst.encoding in ("VOP3", "VOP3SD"):
        a = (inst.fields.get("abs", 0) >> index) & 1
        n = (inst.fields.get("neg", 0) >> index) & 1
    elif inst.dpp is not None and inst.dpp["kind"] in (16, "sdwa") and index < 2:
        a = inst.dpp[f"src{index}_abs"]
        n = inst.dpp[f"src{index}_neg"]
    return a, n


def typed_source(ex, w, inst, entry, t: str, index: int) -> np.ndarray:
    """A source as a typed [n, lanes] array, with abs/neg applied to floats."""
    raw = _raw_source(ex, w, inst, entry, t, index)
    dt, bits = TYPES[t]
    raw = raw.astype(UNSIGNED[bits], copy=False)
    if is_float(t):
        a, n = _modifier_bits(inst, index)
        sign = UNSIGNED[bits](1 << (bits - 1))
        if a:
            raw = raw & ~sign
        if n:
            raw = raw ^ sign
    return raw.view(dt) if raw.dtype != dt else raw


# ---------------------------------------------------------------------------------------------- DPP


def dpp_lanes(ctrl: int, lanes: int, gfx9: bool = False) -> np.ndarray:
    """Source lane of every lane for a DPP16 control value (-1: out of the row, no source). gfx9 has the wave
    shifts and rotates by one lane and the row broadcasts (Vega/CDNA3 ISA, DPP_CTRL), and no row_xmask; its
    row_newbcast:N (gfx90a+) is row_share's encoding and meaning, lane N of each row to the whole row."""
    i = np.arange(lanes)
    row, r = i // 16, i % 16
    if gfx9 and (0x130 <= ctrl <= 0x13F or ctrl in (0x142, 0x143)):  # (row_mirror, row_half_mirror: as gfx11's)
        return _gfx9_dpp_lanes(ctrl, i, row)
    if ctrl <= 0xFF:  # quad_perm
        sel = np.array([(ctrl >> (2 * k)) & 3 for k in range(4)])
        return (i & ~3) + sel[i & 3]
    if 0x101 <= ctrl <= 0x10F:  # row_shl
        src = r + (ctrl & 0xF)
        return np.where(src < 16, row * 16 + src, -1)
    if 0x111 <= ctrl <= 0x11F:  # row_shr
        src = r - (ctrl & 0xF)
        return np.where(src >= 0, row * 16 + src, -1)
    if 0x121 <= ctrl <= 0x12F:  # row_ror
        return row * 16 + (r + 16 - (ctrl & 0xF)) % 16
    if ctrl == 0x140:  # row_mirror
        return row * 16 + 15 - r
    if ctrl == 0x141:  # row_half_mirror
        return row * 16 + (r & 8) + 7 - (r & 7)
    if 0x150 <= ctrl <= 0x15F:  # row_share: every lane reads lane N of its row
        return row * 16 + (ctrl & 0xF)
    if 0x160 <= ctrl <= 0x16F:  # row_xmask
        return row * 16 + (r ^ (ctrl & 0xF))
    return np.full(lanes, -1)


def _gfx9_dpp_lanes(ctrl: int, i: np.ndarray, row: np.ndarray) -> np.ndarray:
    lanes = len(i)
    if ctrl == 0x130:  # wave_shl:1 - each lane reads the next one (as row_shl reads r + n)
        return np.where(i + 1 < lanes, i + 1, -1)
    if ctrl == 0x134:  # wave_rol:1
        return (i + 1) % lanes
    if ctrl == 0x138:  # wave_shr:1
        return i - 1
    if ctrl == 0x13C:  # wave_ror:1
        return (i - 1) % lanes
    if ctrl == 0x142:  # row_bcast:15 - lane 15 of each row to every lane of the next row
        return np.where(row > 0, (row - 1) * 16 + 15, -1)
    if ctrl == 0x143:  # row_bcast:31 - lane 31 to rows 2 and 3
        return np.where(row >= 2, 31, -1)
    return np.full(lanes, -1)


def dpp8_lanes(sel: int, lanes: int) -> np.ndarray:
    i = np.arange(lanes)
    s = np.array([(sel >> (3 * k)) & 7 for k in range(8)])
    return (i & ~7) + s[i & 7]


def dpp_source(ex, w, inst, code: int, kind: str) -> np.ndarray:
    """src0 read through the DPP lane permutation; lanes with no valid source read 0."""
    st, d = ex.st, inst.dpp
    lanes = st.lanes
    src_lane = dpp_lanes(d["dpp_ctrl"], lanes, _gfx9(inst)) if d["kind"] == 16 else dpp8_lanes(d["lane_sel"], lanes)
    valid = np.broadcast_to(src_lane >= 0, (len(w), lanes)).copy()
    vals = vector_src(ex, w, code, None, kind)
    taken = np.take_along_axis(vals, np.broadcast_to(np.maximum(src_lane, 0), (len(w), lanes)), axis=1)
    fi = d.get("fi", 0) if d["kind"] == 16 else int(inst.fields.get("src0", 0) == 234)  # DPP8 fi: src0 = 234
    if not fi:  # reading an inactive lane is invalid unless fetch-inactive is set
        active = st.exec_lanes(w)
        valid &= np.take_along_axis(active, np.broadcast_to(np.maximum(src_lane, 0), (len(w), lanes)), axis=1)
    return np.where(valid, taken, 0).astype(vals.dtype)


def dpp_write_mask(ex, w, inst) -> np.ndarray:
    """Lanes that DPP16 lets write: enabled rows and banks, and (bound_ctrl=0) lanes with a valid source."""
    d, lanes = inst.dpp, ex.st.lanes
    i = np.arange(lanes)
    if d["kind"] == "sdwa":
        return sdwa.write_mask(ex, w, inst)
    if d["kind"] != 16:
        return np.ones((len(w), lanes), bool)
    ok = (((d["row_mask"] >> (i // 16)) & 1) & ((d["bank_mask"] >> ((i // 4) & 3)) & 1)).astype(bool)
    mask = np.broadcast_to(ok, (len(w), lanes)).copy()
    if not d["bound_ctrl"]:
        src_lane = dpp_lanes(d["dpp_ctrl"], lanes, _gfx9(inst))
        valid = np.broadcast_to(src_lane >= 0, (len(w), lanes)).copy()
        if not d.get("fi", 0):
            active = ex.st.exec_lanes(w)
            valid &= np.take_along_axis(active, np.broadcast_to(np.maximum(src_lane, 0), (len(w), lanes)), axis=1)
        mask &= valid
    return mask


# ---------------------------------------------------------------------------------------------- results


def _omod_clamp(inst, spec: VOp, r: np.ndarray, ctx: OpCtx) -> np.ndarray:
    if not is_float(spec.dst or ""):
        return r
    omod = inst.fields.get("omod", 0) if inst.encoding in ("VOP3", "VOP3SD") else sdwa.omod(inst)
    if omod and not spec.no_omod:
        # The hardware ignores omod while MODE.IEEE is set (LLVM's SIFoldOperands: "omod is ignored by
        # hardware if IEEE bit is enabled", so it only folds omod into IEEE-off code).
        ieee = (np.asarray(ctx.mode).reshape(-1, 1) & MODE_IEEE) != 0
        r = np.where(ieee, r, r * r.dtype.type((2.0, 4.0, 0.5)[omod - 1])).astype(r.dtype)
    if ctx.clamp:
        r = np.where(np.isnan(r), r.dtype.type(0), np.clip(r, r.dtype.type(0), r.dtype.type(1)))
    return r


def _lane_mask_in(ex, w, inst, vcc_only: bool = False) -> np.ndarray:
    """The extra mask input: VCC for e32 forms, the src2 SGPR (pair) for VOP3 forms."""
    st = ex.st
    code = inst.fields["src2"] if inst.encoding in ("VOP3", "VOP3SD") and not vcc_only else VCC_LO
    if code < 124 or code == EXEC_LO:  # a plain SGPR (pair): unpack its dwords straight from the file
        if len(w) == 1:  # one wave: the mask as an int against each lane's bit (no packing calls)
            return ((U64(read_sgpr(ex, w, code, st.lanes == 64)) & st.lane_bits) != 0)[None, :]
        return st.lanes_of_words(st.sgpr[wsel(w), code:code + st.lanes // 32])
    bits = scalar_src(ex, w, code, inst.literal, "b64" if st.lanes == 64 else "b32").astype(U64)
    return st.lanes_of(bits)


def _write_mask(ex, w, code: int, lanes_true: np.ndarray) -> None:
    """A lane mask to SGPR (pair) `code`, as write_sgpr would (null and codes >= 128 dropped)."""
    if code == ex.null or code >= 128:
        return
    st = ex.st
    if len(w) == 1:  # one wave: the lane bits summed into an int (no packing calls)
        write_sgpr(ex, w, code, int(lanes_true.reshape(-1) @ st.lane_bits), st.lanes == 64)
        return
    words = st.words_of(lanes_true)  # [n, 1] or [n, 2] dwords
    k = min(words.shape[1], 128 - code)
    st.sgpr[wsel(w), code:code + k] = words[:, :k]


def _write_mask_bits(ex, w, code: int, value: int) -> None:
    """A lone wave's lane mask, as an int, to SGPR (pair) `code` (null and codes >= 128 dropped, as _write_mask)."""
    if code != ex.null and code < 128:
        write_sgpr(ex, w, code, value, ex.st.lanes == 64)


def _write_result(ex, w, inst, spec: VOp, r: np.ndarray, mask: np.ndarray) -> None:
    dt, bits = TYPES[spec.dst]
    raw = np.asarray(r).astype(dt, copy=False).view(UNSIGNED[bits])
    vdst = inst.fields["vdst"]
    if inst.encoding == "VOPD":
        raise AssertionError("VOPD results are written by the VOPD executor")
    if inst.dpp is not None and inst.dpp["kind"] == "sdwa":
        sdwa.write(ex, w, inst, raw, bits, mask)
    elif bits == 64:
        write_vgpr(ex, w, vdst, raw, mask, 2)
    elif bits == 32:
        write_vgpr(ex, w, vdst, raw, mask)
    else:  # 16-bit results go to the low half, or the high half with op_sel[3]; the other half is kept
        vdst, hi = _dst16(inst)
        cur = ex.st.vgpr[vdst, w, :]
        v = raw.astype(U32)
        write_vgpr(ex, w, vdst, _merge_half(inst, cur, v, hi), mask)


# ISA family -> the 16-bit instructions whose result zeroes the high half of the VGPR (gfx9; gfx10+ keep it)
ZERO_HIGH16: dict[str, frozenset[str]] = {}


def _gfx9(inst) -> bool:
    return family_of(inst.arch) == "gfx9"


def _zeroes_high(inst) -> bool:
    """Whether a 16-bit result written to the low half zeroes the high half (ZERO_HIGH16), cached on `inst`."""
    z = inst.__dict__.get("_zero_high16")
    if z is None:
        names = ZERO_HIGH16.get(family_of(inst.arch), ())
        z = inst.__dict__["_zero_high16"] = base_name(inst.mnemonic) in names
    return z


def _merge_half(inst, cur: np.ndarray, v: np.ndarray, hi: int) -> np.ndarray:
    """A 16-bit result `v` (uint32) in the high or low half of the VGPR value `cur`, the other half kept (or, for a
    low-half result that zeroes the high half, zero)."""
    if hi:
        return (cur & U32(0x0000FFFF)) | (v << U32(16))
    return v if _zeroes_high(inst) else (cur & U32(0xFFFF0000)) | v


def _current_dst(ex, w, inst, t: str) -> np.ndarray:
    dt, bits = TYPES[t]
    vdst = inst.fields["vdst"]
    if bits == 64:
        raw = ex.st.vgpr[vdst, w, :].astype(U64) | (ex.st.vgpr[vdst + 1, w, :].astype(U64) << U64(32))
    elif bits == 32:
        raw = ex.st.vgpr[vdst, w, :]
    else:
        vdst, hi = _dst16(inst)
        raw = (ex.st.vgpr[vdst, w, :] >> U32(16 * hi)).astype(np.uint16)
    return raw.view(dt)


def _dst16(inst) -> tuple[int, int]:
    """(VGPR, high half) of a 16-bit destination: op_sel[3] in VOP3, bit 7 of vdst in VOP1/VOP2."""
    code, hi = t16_vgpr(inst, 256 + inst.fields["vdst"], 16)
    return code - 256, hi | _op_sel(inst, 3)


_PLAIN32 = ("f32", "i32", "u32", "b32")
_PLAIN64 = ("f64", "i64", "u64", "b64")
_PLAIN16 = ("f16", "i16", "u16", "b16")
_PLAIN = _PLAIN16 + _PLAIN32 + _PLAIN64
_NO_PLAN = object()


def _fast_plan(spec: VOp, inst):
    """Source readers for the common case — 16/32/64-bit types, no DPP, no modifiers, no op_sel,
    VGPR/SGPR/constant/literal sources — each a function (ex, w, ix, ls) -> typed array (ls: the lanes a VGPR
    is read at, all of them or a lone wave's window); None when the general path is needed. 16-bit VGPR
    operands of VOP1/VOP2/VOPC may name a high half (t16_vgpr)."""
    if ((spec.dst not in _PLAIN and not spec.compare) or any(t not in _PLAIN for t in spec.srcs)
            or inst.dpp is not None or spec.int_clamp and inst.fields.get("clamp")
            or spec.acc and spec.dst not in _PLAIN32):
        return None
    f = inst.fields
    if inst.encoding == "VOP3" and (f["abs"] or f["neg"] or f["omod"] or f["clamp"] or f["op_sel"]):
        return None
    if inst.encoding == "VOP3SD" and (f["omod"] or f["neg"] or f["clamp"]):
        return None
    if inst.encoding not in ("VOP1", "VOP2", "VOP3", "VOP3SD", "VOPC"):
        return None
    plan = []
    for entry, t in zip(_source_entries(inst), spec.srcs, strict=False):
        field = entry[0]
        if field == "K":
            plan.append(_constant_reader(inst.literal or 0, t))
            continue
        code = 256 + f["vsrc1"] if field == "vsrc1" else f[field]
        if code >= 256:
            code, hi = t16_vgpr(inst, code, TYPES[t][1])
            plan.append(_vgpr_reader(code - 256, t, hi))
        elif code < 128:  # SGPRs, VCC, TTMPs, null (always 0), M0, EXEC: all in the SGPR file
            plan.append(_sgpr_reader(code, t))
        elif code == 255:
            lit = inst.literal or 0
            if t in _PLAIN64:  # f64: the high half; i64: sign-extended; b64/u64: zero-extended
                lit = literal64(lit, const_kind(t))
            elif t in _PLAIN16:  # a 16-bit operand takes the literal's low half
                lit &= 0xFFFF
            plan.append(_constant_reader(lit, t))
        else:
            c = constant(code, const_kind(t))
            if c is None:
                return None
            plan.append(_constant_reader(c, t))
    return plan if len(plan) == len(spec.srcs) else None


def _vgpr_reader(r: int, t: str, hi: int = 0):
    dt, bits = TYPES[t]
    if bits == 16:  # a half of the register: the low one, or the high one (t16 high-half operands)
        if hi:
            return lambda ex, w, ix, ls: (ex.st.vgpr[r, ix, ls] >> U32(16)).astype(np.uint16).view(dt)
        return lambda ex, w, ix, ls: ex.st.vgpr[r, ix, ls].astype(np.uint16).view(dt)
    if bits == 64:
        def read64(ex, w, ix, ls):
            out = ex.st.vgpr[r + 1, ix, ls].astype(U64)
            out <<= U64(32)
            out |= ex.st.vgpr[r, ix, ls]
            return out.view(dt)
        return read64
    if dt is U32:
        return lambda ex, w, ix, ls: ex.st.vgpr[r, ix, ls]
    return lambda ex, w, ix, ls: ex.st.vgpr[r, ix, ls].view(dt)


def _sgpr_reader(code: int, t: str):
    """An SGPR source as [n, 1], broadcast against the lanes by the op."""
    dt, bits = TYPES[t]
    if bits == 64:
        return lambda ex, w, ix, ls: scalar_src(ex, w, code, None, "b64")[:, None].view(dt)
    if bits == 16:  # the low half (op_sel, which could pick the high one, is not in the fast path)
        return lambda ex, w, ix, ls: ex.st.sgpr[ix, code][:, None].astype(np.uint16).view(dt)
    return lambda ex, w, ix, ls: ex.st.sgpr[ix, code][:, None].view(dt)


def _constant_reader(value: int, t: str):
    dt, bits = TYPES[t]
    const = np.array(value & ((1 << bits) - 1), UNSIGNED[bits]).view(dt)  # a 16-bit operand: the low half
    return lambda ex, w, ix, ls: const


_ALL = slice(None)  # every lane
_RAW = {16: np.dtype(np.uint16), 32: np.dtype(U32), 64: np.dtype(U64)}


def _per_lane(x, n: int, lanes: int) -> np.ndarray:
    """x as [n, lanes]: results of ops whose sources were all scalars ([n, 1] or 0-d) are broadcast
    (np.broadcast_to costs microseconds even when there is nothing to do, so check the shape first)."""
    x = np.asarray(x)
    return x if x.shape == (n, lanes) else np.broadcast_to(x, (n, lanes))


def _carry_code(inst) -> int:
    return inst.fields["sdst"] if inst.encoding == "VOP3SD" else VCC_LO


def _run_fast(ex, w, inst, spec: VOp, plan) -> None:
    st = ex.st
    ix = wsel(w)
    if len(w) == 1 and (spec.windowed or spec.windowed is None and window.windowed(spec)):
        win = window.lane_window(st, w)
        if win is not None:
            return _run_window(ex, w, ix, inst, spec, plan, *win)
    srcs = [read(ex, w, ix, _ALL) for read in plan]
    vdst = inst.fields.get("vdst", 0)
    if spec.acc:
        srcs.append(st.vgpr[vdst, ix, :].view(TYPES[spec.dst][0]))
    if spec.mask_in:
        srcs.append(_lane_mask_in(ex, w, inst, spec.vcc_in))
    carry_used = not spec.carry_out or _carry_code(inst) != ex.null
    out = spec.fn(OpCtx(False, None, st.lanes, ex, w, carry_used), *srcs)
    if spec.compare:
        _write_compare(ex, w, inst, spec, _per_lane(out, len(w), st.lanes), st.exec_lanes(w))
        return
    carry = None
    if spec.carry_out:
        out, carry = out
    dt, bits = TYPES[spec.dst]
    full = st.exec_full(w)
    if getattr(out, "dtype", None) == dt == _RAW[bits]:  # already raw bits: skip the conversions
        raw = out
    else:
        raw = np.asarray(out).astype(dt, copy=False).view(_RAW[bits])
    if bits == 16:
        _write_half(ex, w, ix, inst, raw, full)
    elif full and bits == 64:
        st.vgpr[vdst, ix, :] = raw  # the low halves (the cast keeps the low 32 bits)
        st.vgpr[vdst + 1, ix, :] = raw >> U64(32)
    elif full:
        st.vgpr[vdst, ix, :] = raw  # every lane active: no mask
    else:
        write_vgpr(ex, w, vdst, _per_lane(raw, len(w), st.lanes), st.exec_lanes(w), bits // 32)
    if carry is not None and carry_used:
        carry = _per_lane(np.asarray(carry, bool), len(w), st.lanes)
        _write_mask(ex, w, _carry_code(inst), carry if full else carry & st.exec_lanes(w))


def _run_window(ex, w, ix, inst, spec: VOp, plan, ls: slice, width: int, bits: int) -> None:
    """_run_fast for one wave over its lane window (vector.window): the same registers after it, bit for bit."""
    st = ex.st
    srcs = [read(ex, w, ix, ls) for read in plan]
    vdst = inst.fields.get("vdst", 0)
    if spec.acc:
        srcs.append(st.vgpr[vdst, ix, ls].view(TYPES[spec.dst][0]))
    if spec.mask_in:
        srcs.append(_lane_mask_in(ex, w, inst, spec.vcc_in)[:, ls])
    carry_used = not spec.carry_out or _carry_code(inst) != ex.null
    out = spec.fn(OpCtx(False, None, st.lanes, ex, w, carry_used), *srcs)
    if spec.compare:
        _write_compare_bits(ex, w, inst, spec, window.mask_bits(st, ls.start, width, out, bits))
        return
    carry = None
    if spec.carry_out:
        out, carry = out
    dt, nbits = TYPES[spec.dst]
    raw = window.per_lane(np.asarray(out).astype(dt, copy=False).view(_RAW[nbits]), width)
    act = window.active(st, width, bits)
    if nbits == 16:
        vdst, hi = _dst16(inst)
        window.store(st, vdst, ix, ls, _merge_half(inst, st.vgpr[vdst, ix, ls], raw.astype(U32), hi), act)
    elif nbits == 64:
        window.store(st, vdst, ix, ls, raw, act)  # the low halves (the cast keeps the low 32 bits)
        window.store(st, vdst + 1, ix, ls, raw >> U64(32), act)
    else:
        window.store(st, vdst, ix, ls, raw, act)
    if carry is not None and carry_used:
        _write_mask_bits(ex, w, _carry_code(inst), window.mask_bits(st, ls.start, width, carry, bits))


def _write_half(ex, w, ix, inst, raw16: np.ndarray, full: bool) -> None:
    """A 16-bit result into the low or high half of its VGPR (_dst16); the other half is kept."""
    vdst, hi = _dst16(inst)
    cur = ex.st.vgpr[vdst, ix, :]
    v = raw16.astype(U32)
    new = _merge_half(inst, cur, v, hi)
    if full:
        ex.st.vgpr[vdst, ix, :] = new
    else:
        write_vgpr(ex, w, vdst, _per_lane(new, len(w), ex.st.lanes), ex.st.exec_lanes(w))


def _pair_plan(spec: VOp, inst):
    """(amount, source VGPR) when a `pair_fn` op can run on halves: VOP3 without modifiers, a constant
    or literal shift amount and a VGPR pair source; else None."""
    f = inst.fields
    if (spec.pair_fn is None or inst.encoding != "VOP3" or inst.dpp is not None
            or f["abs"] or f["neg"] or f["omod"] or f["clamp"] or f["op_sel"] or f["src1"] < 256):
        return None
    code = f["src0"]
    amount = (inst.literal or 0) if code == 255 else constant(code, const_kind(spec.srcs[0])) if code >= 128 else None
    if amount is None:
        return None
    return amount & 63, f["src1"] - 256


def _run_pair(ex, w, inst, spec: VOp, plan) -> None:
    st = ex.st
    ix = wsel(w)
    amount, r = plan
    lo, hi = spec.pair_fn(amount, st.vgpr[r, ix, :], st.vgpr[r + 1, ix, :])  # fresh arrays: overlap is safe
    vdst = inst.fields["vdst"]
    if st.exec_full(w):
        st.vgpr[vdst, ix, :] = lo
        st.vgpr[vdst + 1, ix, :] = hi
    else:
        active = st.exec_lanes(w)
        write_vgpr(ex, w, vdst, lo, active)
        write_vgpr(ex, w, vdst + 1, hi, active)


def _write_compare(ex, w, inst, spec: VOp, out: np.ndarray, active: np.ndarray) -> None:
    """A VOPC result: the lane mask (inactive lanes 0) to EXEC (cmpx), the VOP3 sdst, or VCC."""
    res = np.asarray(out, bool) & active
    if spec.cmpx:
        ex.st.set_mask64(w, EXEC_LO, ex.st.bits_of(res))
        if ex.family != "gfx9":  # gfx9's v_cmpx also writes VCC (e32) or its SGPR destination (e64)
            return
    if inst.dpp is not None and inst.dpp["kind"] == "sdwa":
        _write_mask(ex, w, inst.dpp["sdst"] if inst.dpp.get("sd") else VCC_LO, res)
    elif inst.encoding == "VOP3":
        _write_mask(ex, w, inst.fields["vdst"], res)
    else:
        _write_mask(ex, w, VCC_LO, res)


def _write_compare_bits(ex, w, inst, spec: VOp, value: int) -> None:
    """_write_compare for one wave whose result mask (inactive lanes 0) is an int; the fast plan has no SDWA."""
    if spec.cmpx:
        write_sgpr(ex, w, EXEC_LO, value, ex.st.lanes == 64)
        if ex.family != "gfx9":
            return
    _write_mask_bits(ex, w, inst.fields["vdst"] if inst.encoding == "VOP3" else VCC_LO, value)


def execute(spec: VOp):
    """The semantic function for a VALU opcode described by `spec`."""
    def fn(ex, w, inst):
        plan = inst.__dict__.get("_vplan", _NO_PLAN)
        if plan is _NO_PLAN:
            pair = _pair_plan(spec, inst)
            plan = inst.__dict__["_vplan"] = ("pair", pair) if pair else _fast_plan(spec, inst)
        if type(plan) is tuple:
            return _run_pair(ex, w, inst, spec, plan[1])
        if plan is not None:
            return _run_fast(ex, w, inst, spec, plan)
        st = ex.st
        active = st.exec_lanes(w)
        entries = _source_entries(inst)
        srcs = [typed_source(ex, w, inst, entries[i], t, i) for i, t in enumerate(spec.srcs)]
        if spec.acc:
            srcs.append(_current_dst(ex, w, inst, spec.dst))
        if spec.mask_in:
            srcs.append(_lane_mask_in(ex, w, inst, spec.vcc_in))
        clamp = bool(inst.fields.get("clamp", 0)) if inst.encoding in ("VOP3", "VOP3SD") else sdwa.clamp(inst)
        ctx = OpCtx(clamp, st.hwreg[w, HW_MODE], st.lanes, ex, w)
        out = spec.fn(ctx, *srcs)
        if spec.compare:
            _write_compare(ex, w, inst, spec, out, active)
            return None
        carry = None
        if spec.carry_out:
            out, carry = out
        wmask = active if inst.dpp is None else active & dpp_write_mask(ex, w, inst)
        out = _omod_clamp(inst, spec, out, ctx)
        _write_result(ex, w, inst, spec, out, wmask)
        if carry is not None:
            _write_mask(ex, w, _carry_code(inst), np.asarray(carry, bool) & active)
        return None
    return fn


# mnemonic -> spec, so other executors (VOPD) can run the same semantics on their own operands
SPECS: dict[str, VOp] = {}


def vop(names, dst, srcs, fn, **kw) -> None:
    """Register one spec under one or more mnemonics (without encoding suffix): shared, or with `family=` that ISA
    family's own entries."""
    spec = VOp(dst, tuple(srcs), fn, **kw)
    for name in [names] if isinstance(names, str) else names:
        SPECS[name] = spec
        register(name, execute(spec), spec.family)


def _definition(dst, srcs, fn, kw) -> Definition:
    """fn's Definition: over the sources, then the accumulator (acc) and the lane-mask input (mask_in)."""
    extra = ((dst,) if kw.get("acc") else ()) + (("bool",) if kw.get("mask_in") else ())
    return Definition(tuple(srcs) + extra, fn, clamp=kw.get("int_clamp", False))


def define(names, dst, srcs, fn, **kw) -> None:
    """Register an opcode defined in the expression form (sem.expr): `fn(*sources)` over typed nodes (with
    `clamp=` when int_clamp) returns the result, or (result, carry mask) with carry_out. The interpreter runs
    the numpy kernel generated from it; the JIT generates its IR from the same definition (jit.lower_sem)."""
    d = _definition(dst, srcs, fn, kw)
    first = names if isinstance(names, str) else names[0]
    vop(names, dst, srcs, numpy_kernel(d, first), definition=d, **kw)


_OVERRIDES: dict[str, Definition] = {}


@contextmanager
def override(name: str, fn):
    """Within the block, `fn` (same types and flags) is the definition of `name` in both tiers: the spec is
    changed in place (decoded instructions hold it), and definitions_tag(), part of the JIT's cache key, names
    the change so no code compiled from the old definition is reused. For tests, and for trying a fix."""
    spec = SPECS[name]
    kw = {"acc": spec.acc, "mask_in": spec.mask_in, "int_clamp": spec.int_clamp}
    old = spec.fn, spec.definition
    d = _definition(spec.dst, spec.srcs, fn, kw)
    spec.fn, spec.definition, spec.windowed = numpy_kernel(d, name), d, None
    _OVERRIDES[name] = d
    try:
        yield
    finally:
        (spec.fn, spec.definition), spec.windowed = old, None
        del _OVERRIDES[name]


def definitions_tag() -> str:
    """'' unless a definition is overridden; then a digest of the overriding definitions' trees."""
    if not _OVERRIDES:
        return ""
    text = repr(sorted((n, d.tree(False), d.tree(True)) for n, d in _OVERRIDES.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
