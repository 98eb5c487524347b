"""FLAT and GLOBAL atomics (RDNA3 ISA "FLAT, Scratch and Global Instructions"): every
flat_atomic_* / global_atomic_*, 32- and 64-bit, with and without return.

DATA holds the source operand; for cmpswap DATA = {src, cmp} (src in the low dword(s), the compare
value after it). With GLC=1 the pre-op memory value is written to VDST. Global lanes go through
ex.mem.atomic (applied in lane order); FLAT lanes in the shared aperture update LDS, lanes in the
private aperture their own scratch (gfx11 has no scratch_atomic_* opcodes: private atomics exist
only through FLAT).
"""

from __future__ import annotations

import re

import numpy as np

from simgpu.shader.lds.ds_mem import lds_atomic
from simgpu.shader.memory.atomic_ops import TWO_DATA, apply, global_atomic, op_of
from simgpu.shader.memory.vmem import flat_route, global_addresses, scratch_read, scratch_write
from simgpu.shader.operand import write_vgpr
from simgpu.shader.semantics import register

U32, U64 = np.uint32, np.uint64

_NAME = re.compile(r"^(?:flat|global|buffer)_atomic_([a-z]+)_([ubif])(32|64)$")


# Atomics whose names the pattern above does not parse (gfx12's, memory.gfx12): the part after "_atomic_" ->
# (memory op, size in bytes).
SPECIAL_ATOMICS: dict[str, tuple[str, int]] = {}


def atomic_op(mnemonic: str) -> tuple[str, int]:
    """(memory op name, size in bytes) of a flat/global/buffer atomic mnemonic."""
    m = _NAME.match(mnemonic)
    if m is None:
        return SPECIAL_ATOMICS[mnemonic.partition("_atomic_")[2]]
    name, kind, bits = m.groups()
    return op_of(name, kind), int(bits) // 8


def read_data(ex, w, reg: int, size: int) -> np.ndarray:
    """[n, lanes] uint32 or uint64 operand from VGPR `reg` (two VGPRs for 64-bit)."""
    lo = ex.st.vgpr[reg, w, :]
    if size == 4:
        return lo.copy()
    return lo.astype(U64) | (ex.st.vgpr[reg + 1, w, :].astype(U64) << U64(32))


def operands(ex, w, op: str, reg: int, size: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(src, cmp) of an atomic whose DATA starts at `reg`; cmp follows src for the two-operand ops."""
    src = read_data(ex, w, reg, size)
    cmp = read_data(ex, w, reg + size // 4, size) if op in TWO_DATA else None
    return src, cmp


def returns(inst) -> bool:
    """Whether an atomic writes the pre-op value back: GLC on gfx11, th's TH_ATOMIC_RETURN bit (bit 0) in gfx12's
    VFLAT/VGLOBAL/VBUFFER encodings."""
    f = inst.fields
    return bool(f["glc"] if "glc" in f else f["th"] & 1)


def _private_atomic(ex, w, op, off, src, cmp, size, mask) -> np.ndarray:
    """Per-lane scratch words never collide between lanes: one vectorized update."""
    dt = np.dtype(f"<u{size}")
    raw = scratch_read(ex, w, off, size, mask)
    old = np.ascontiguousarray(raw).view(dt)[..., 0]
    new = apply(op, old, src.astype(dt), None if cmp is None else cmp.astype(dt))
    scratch_write(ex, w, off, np.ascontiguousarray(new[..., None]).view(np.uint8), mask)
    return np.where(mask, old, dt.type(0))


def _flat_atomic(ex, w, inst):
    f = inst.fields
    op, size = atomic_op(inst.mnemonic)
    mask = ex.st.exec_lanes(w)
    src, cmp = operands(ex, w, op, f["data"], size)
    addr = global_addresses(ex, w, inst)
    if inst.mnemonic.startswith("flat_"):
        g, lds, priv, low = flat_route(addr, mask)
    else:
        g, lds, priv, low = mask, None, None, None
    old = global_atomic(ex, op, addr, src, cmp, size, g) if g.any() else np.zeros(addr.shape, f"<u{size}")
    if lds is not None and lds.any():
        old = np.where(lds, lds_atomic(ex, w, op, low, src, cmp, size, lds), old)
    if priv is not None and priv.any():
        old = np.where(priv, _private_atomic(ex, w, op, low, src, cmp, size, priv), old)
    if returns(inst):
        write_vgpr(ex, w, f["vdst"], old, mask, size // 4)


# The atomics FLAT, GLOBAL and BUFFER have in common (GLOBAL and BUFFER add csub_u32).
ATOMICS = ("swap_b32", "cmpswap_b32", "add_u32", "sub_u32", "min_i32", "max_i32", "min_u32", "max_u32",
           "and_b32", "or_b32", "xor_b32", "inc_u32", "dec_u32", "add_f32", "min_f32", "max_f32", "cmpswap_f32",
           "swap_b64", "cmpswap_b64", "add_u64", "sub_u64", "min_i64", "max_i64", "min_u64", "max_u64",
           "and_b64", "or_b64", "xor_b64", "inc_u64", "dec_u64")

for _seg in ("flat", "global"):
    for _o in ATOMICS:
        register(f"{_seg}_atomic_{_o}", _flat_atomic)
register("global_atomic_csub_u32", _flat_atomic)
