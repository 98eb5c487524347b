"""Operands of scalar ALU instructions (SOP1, SOP2, SOPC, SOPK) as values of the scalar unit.

A source reads as a Python int when one wave executes the instruction and as a uint64 array over the
waves otherwise (see svalue); an inline constant or a literal is a Python int in both cases, which
the operators broadcast. How each operand field is read is worked out once per decoded instruction.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import constant, literal64, scalar_src
from simgpu.shader.scalar.value import M32
from simgpu.shader.state import null_of, wsel

U32, U64 = np.uint32, np.uint64
_SPECIAL = "x"  # a source read through operand.scalar_src (vccz, execz, scc, apertures)
# The scalar operands LLVM types as signed 64-bit integers: a 32-bit literal sign-extends into them;
# every other 64-bit scalar operand zero-extends it (operand.literal64).
SIGNED64 = {("s_ashr_i64", "ssrc0"), ("s_cls_i32_i64", "ssrc0")}


def _plan(inst) -> tuple:
    """(sources as (kind, code-or-value, wide), sdst, sdst is 64-bit), cached on the instruction."""
    plan = inst.__dict__.get("_salu")
    if plan is None:
        widths = {slot[0]: slot[1] for slot in inst.info.get("ops", [])}
        srcs = tuple(_source(inst, name, widths[name] == 2) for name in ("ssrc0", "ssrc1") if name in widths)
        plan = inst.__dict__["_salu"] = (srcs, inst.fields.get("sdst", null_of(inst.arch)), widths.get("sdst", 1) == 2)
    return plan


def _source(inst, name: str, wide: bool) -> tuple:
    code = inst.fields[name]
    if code < 128:
        return ("s", code, wide) if code != null_of(inst.arch) else ("k", 0, wide)
    if code == 255:
        lit = inst.literal or 0
        if wide:
            lit = literal64(lit, "i64" if (inst.mnemonic, name) in SIGNED64 else "b64")
        return ("k", lit, wide)
    c = constant(code, "b64" if wide else "b32")
    return ("k", c, wide) if c is not None else (_SPECIAL, code, wide)


def dst_wide(inst) -> bool:
    return _plan(inst)[2]


def sources(ex, w, inst) -> list:
    """The instruction's scalar sources (ssrc0, ssrc1 as present) for waves `w`."""
    return [_read(ex, w, src, inst) for src in _plan(inst)[0]]


def _read(ex, w, src: tuple, inst):
    kind, code, wide = src
    if kind == "k":
        return code
    if kind == _SPECIAL:
        v = scalar_src(ex, w, code, inst.literal, "b64" if wide else "b32").astype(U64)
        return int(v[0]) if len(w) == 1 else v
    return read_sgpr(ex, w, code, wide)


def read_sgpr(ex, w, code: int, wide: bool = False):
    """SGPR `code` (and code+1 when wide) of waves `w`: an int for one wave, else uint64 [n]."""
    sg = ex.st.sgpr
    if len(w) == 1:
        w0 = w.item(0)
        v = int(sg[w0, code])
        return v | (int(sg[w0, code + 1]) << 32) if wide else v
    ix = wsel(w)
    v = sg[ix, code].astype(U64)
    if wide:
        v |= sg[ix, code + 1].astype(U64) << U64(32)
    return v


def write_sgpr(ex, w, code: int, value, wide: bool = False) -> None:
    """Write a scalar destination (writes to null, and to codes outside the SGPR file, are dropped)."""
    if code == ex.null or code >= 128:
        return
    sg = ex.st.sgpr
    ix = w.item(0) if len(w) == 1 else wsel(w)
    if isinstance(value, np.ndarray):
        sg[ix, code] = (value & U64(M32)).astype(U32)
        if wide and code + 1 < 128:
            sg[ix, code + 1] = (value >> U64(32)).astype(U32)
        return
    sg[ix, code] = value & M32
    if wide and code + 1 < 128:
        sg[ix, code + 1] = (value >> 32) & M32


def read_scc(ex, w):
    if len(w) == 1:
        return int(ex.st.scc[w.item(0)])
    return ex.st.scc[wsel(w)].astype(U64)


def write_scc(ex, w, cond) -> None:
    """SCC = cond (a bool for one wave, a bool array for many)."""
    ix = w.item(0) if len(w) == 1 else wsel(w)
    ex.st.scc[ix] = cond.astype(U32) if isinstance(cond, np.ndarray) else int(bool(cond))
