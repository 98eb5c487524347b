"""The memory an instruction is about to touch: per lane, which space (global, LDS, scratch), which bytes,
read, written or updated atomically. Computed before the instruction runs, from the same address
functions its semantics use, so the checkers see exactly what the access will do.

`footprint(ex, w, inst)` returns a list of `Access` (empty for an instruction that touches no memory);
`covered(mnemonic)` says whether a mnemonic has a rule here, and tests/simgpu/sanitize require every
implemented memory mnemonic to have one. Buffer (MUBUF/MTBUF) lanes that the V#'s range check drops are
returned separately as `dropped` (hardware silently ignores them; memcheck warns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from simgpu.shader.lds.ds import _two_addresses, ds_address, ds_atomic_op, ds_offset
from simgpu.shader.memory import gfx950 as lds_dma
from simgpu.shader.memory import mimg, mubuf, mubuf_format
from simgpu.shader.memory.atomic import atomic_op
from simgpu.shader.memory.vmem import _addtid_addresses, flat_route, global_addresses, scratch_offsets
from simgpu.shader.operand import scalar_src
from simgpu.shader.scalar.sopp import _smem_offset
from simgpu.shader.semantics import base_name

U64 = np.uint64
GLOBAL, LDS, SCRATCH = "global", "lds", "scratch"
READ, WRITE, ATOMIC = "read", "write", "atomic"
_SIZES = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}


@dataclass
class Access:
    """One access of every lane of waves `w`: `addr` [n, lanes] (global: uint64 VA; LDS and scratch: int64
    byte offset), `size` bytes from there for the lanes in `mask`. Scalar (SMEM) accesses have one lane."""

    space: str
    kind: str
    addr: np.ndarray
    size: int
    mask: np.ndarray
    scalar: bool = False


@dataclass
class Footprint:
    """What an instruction touches, and (buffers) the lanes a range check drops."""

    accesses: list[Access]
    dropped: np.ndarray | None = None  # [n, lanes] bool: active lanes the V# range check discards


_NONE = Footprint([])
_VMEM = re.compile(r"^(global|scratch|flat)_(load|store)_(?:d16_(?:hi_)?)?(u8|i8|u16|i16|b8|b16|b32|b64|b96|b128)$")
_BUF = re.compile(r"^buffer_(load|store)_(?:d16_(?:hi_)?)?(u8|i8|u16|i16|b8|b16|b32|b64|b96|b128)$")
_BUF_FORMAT = re.compile(r"^t?buffer_(load|store)_(?:d16_)?(?:hi_)?format_(x|xy|xyz|xyzw)$")
_DS = re.compile(r"^ds_(load|store)_(u8|i8|u16|i16|b8|b16|b32|b64|b96|b128)(?:_d16(?:_hi)?)?$")
_NO_MEMORY = frozenset({"ds_nop", "ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32", "buffer_gl0_inv",
                        "buffer_gl1_inv", "s_gl1_inv", "s_dcache_inv", "s_atc_probe", "s_atc_probe_buffer",
                        "image_get_resinfo"})


def _flat_split(ex, w, inst, kind: str, size: int, mask: np.ndarray) -> list[Access]:
    """A GLOBAL/FLAT access split by aperture (FLAT lanes may address LDS or scratch)."""
    addr = global_addresses(ex, w, inst)
    if not inst.mnemonic.startswith("flat_"):
        return [Access(GLOBAL, kind, addr, size, mask)]
    g, lds, priv, low = flat_route(addr, mask)
    out = [Access(GLOBAL, kind, addr, size, g)]
    if lds.any():
        out.append(Access(LDS, kind, low, size, lds))
    if priv.any():
        out.append(Access(SCRATCH, kind, low, size, priv))
    return out


def _vmem(ex, w, inst, m) -> Footprint:
    seg, op, kind = m.groups()
    size, mask = _SIZES[kind], ex.st.exec_lanes(w)
    what = READ if op == "load" else WRITE
    if seg == "scratch":
        return Footprint([Access(SCRATCH, what, scratch_offsets(ex, w, inst), size, mask)])
    return Footprint(_flat_split(ex, w, inst, what, size, mask))


def _flat_atomic(ex, w, inst) -> Footprint:
    _, size = atomic_op(inst.mnemonic)
    return Footprint(_flat_split(ex, w, inst, ATOMIC, size, ex.st.exec_lanes(w)))


def _addtid(ex, w, inst) -> Footprint:
    what = READ if "load" in inst.mnemonic else WRITE
    return Footprint([Access(GLOBAL, what, _addtid_addresses(ex, w, inst), 4, ex.st.exec_lanes(w))])


def _buffer_lanes(ex, w, inst, kind: str, size: int, per_dword: bool) -> Footprint:
    """Buffer accesses as the range check leaves them (per dword for dword loads/stores, like mubuf)."""
    mask = ex.st.exec_lanes(w)
    acc = mubuf.access(ex, w, inst)
    if per_dword and size > 4:
        parts = [(4 * k, 4, mask & acc.in_range(4 * k, 4)) for k in range(size // 4)]
    else:
        parts = [(0, size, mask & acc.in_range(0, size))]
    accesses = [Access(GLOBAL, kind, acc.addr + U64(start), n, ok) for start, n, ok in parts]
    dropped = mask & ~np.logical_and.reduce([ok for _, _, ok in parts])
    return Footprint(accesses, dropped if dropped.any() else None)


def _buffer(ex, w, inst, m) -> Footprint:
    op, kind = m.groups()
    if inst.fields.get("lds"):  # a gfx9 load into LDS (its view as gfx11's load keeps the bit)
        return _buffer_lds(ex, w, inst, _SIZES[kind])
    return _buffer_lanes(ex, w, inst, READ if op == "load" else WRITE, _SIZES[kind], per_dword=True)


def _buffer_format(ex, w, inst, m) -> Footprint:
    widths, _ = mubuf_format._format(ex, w, inst)
    return _buffer_lanes(ex, w, inst, READ if m.group(1) == "load" else WRITE, sum(widths) // 8, per_dword=False)


def _buffer_atomic(ex, w, inst) -> Footprint:
    _, size = atomic_op(inst.mnemonic)
    return _buffer_lanes(ex, w, inst, ATOMIC, size, per_dword=False)


def _image(ex, w, inst) -> Footprint:
    _, widths, _, addr, ok = mimg._setup(ex, w, inst)
    mask = ex.st.exec_lanes(w) & ok
    if inst.mnemonic.startswith("image_atomic"):
        return Footprint([Access(GLOBAL, ATOMIC, addr, 4, mask)])
    return Footprint([Access(GLOBAL, WRITE if "store" in inst.mnemonic else READ, addr, sum(widths) // 8, mask)])


def _ds(ex, w, inst, m) -> Footprint:
    op, kind = m.groups()
    what = READ if op == "load" else WRITE
    return Footprint([Access(LDS, what, ds_address(ex, w, inst), _SIZES[kind], ex.st.exec_lanes(w))])


def _ds_2addr(ex, w, inst) -> Footprint:
    a0, a1, size = _two_addresses(ex, w, inst)
    mn = inst.mnemonic
    what = ATOMIC if "storexchg" in mn else READ if mn.startswith("ds_load") else WRITE
    mask = ex.st.exec_lanes(w)
    return Footprint([Access(LDS, what, a0, size, mask), Access(LDS, what, a1, size, mask)])


def _ds_addtid(ex, w, inst) -> Footprint:
    base = (ex.st.sgpr[w, ex.m0] & np.uint32(0xFFFF)).astype(np.int64) + ds_offset(inst)
    addr = base[:, None] + np.arange(ex.st.lanes, dtype=np.int64)[None, :] * 4
    return Footprint([Access(LDS, READ if "load" in inst.mnemonic else WRITE, addr, 4, ex.st.exec_lanes(w))])


def _ds_atomic(ex, w, inst) -> Footprint:
    _, size, _ = ds_atomic_op(inst.mnemonic)
    return Footprint([Access(LDS, ATOMIC, ds_address(ex, w, inst), size, ex.st.exec_lanes(w))])


def _ds_condxchg(ex, w, inst) -> Footprint:
    return Footprint([Access(LDS, ATOMIC, ds_address(ex, w, inst) & 0xFFF8, 8, ex.st.exec_lanes(w))])


def _ds_append(ex, w, inst) -> Footprint:
    """One dword at M0[15:0] + offset, updated once per wave with an active lane (by its first lane)."""
    mask = ex.st.exec_lanes(w)
    first = np.zeros_like(mask)
    rows = np.flatnonzero(mask.any(axis=1))
    first[rows, mask[rows].argmax(axis=1)] = True
    addr = (ex.st.sgpr[w, ex.m0] & np.uint32(0xFFFF)).astype(np.int64) + ds_offset(inst)
    return Footprint([Access(LDS, ATOMIC, np.broadcast_to(addr[:, None], mask.shape), 4, first)])


def _smem(ex, w, inst) -> Footprint:
    """s_load: one address per wave; s_buffer_load: the dwords inside num_records (the rest read 0)."""
    f, dwords = inst.fields, inst.info["sdata"]
    n = len(w)
    if inst.mnemonic.startswith("s_load"):
        base = scalar_src(ex, w, f["sbase"] * 2, None, "b64").astype(np.int64) & ((1 << 48) - 1)
        addr = ((base + _smem_offset(ex, w, inst)) & ~3).astype(U64)
        return Footprint([Access(GLOBAL, READ, addr[:, None], 4 * dwords, np.ones((n, 1), bool), scalar=True)])
    sg = ex.st.sgpr[w, f["sbase"] * 2: f["sbase"] * 2 + 3].astype(np.int64)
    base = sg[:, 0] | ((sg[:, 1] & 0xFFFF) << 32)
    offset = _smem_offset(ex, w, inst) & ~3
    k = np.arange(dwords, dtype=np.int64)
    inside = (offset[:, None] + 4 * k[None, :] + 4) <= sg[:, 2:3]
    addr = (base + offset)[:, None] + 4 * k[None, :]
    return Footprint([Access(GLOBAL, READ, addr.astype(U64), 4, inside, scalar=True)])


def _global_lds(ex, w, inst) -> Footprint:
    """gfx9's global_load_lds_*: a global read and an LDS write of each lane's slot (memory.gfx950)."""
    size, mask = lds_dma.SIZES[inst.mnemonic.removeprefix("global_load_lds_")][0], ex.st.exec_lanes(w)
    src, dst = lds_dma.global_dma_addresses(ex, w, inst)
    return Footprint([Access(GLOBAL, READ, src, size, mask), Access(LDS, WRITE, dst, lds_dma.slot(size), mask)])


def _buffer_lds(ex, w, inst, size: int) -> Footprint:
    """A gfx9 MUBUF load with the lds bit: the buffer read as the range check leaves it and the LDS write of each
    active lane's slot (memory.gfx950)."""
    fp = _buffer_lanes(ex, w, inst, READ, size, per_dword=True)
    dst = lds_dma.lds_addresses(ex, w, size, mubuf.inst_offset(inst))
    fp.accesses.append(Access(LDS, WRITE, dst, lds_dma.slot(size), ex.st.exec_lanes(w)))
    return fp


_PATTERNS: list[tuple[re.Pattern, object]] = [
    (_VMEM, _vmem), (_BUF, _buffer), (_BUF_FORMAT, _buffer_format), (_DS, _ds)]
_EXACT = {"global_load_addtid_b32": _addtid, "global_store_addtid_b32": _addtid,
          "ds_load_addtid_b32": _ds_addtid, "ds_store_addtid_b32": _ds_addtid,
          "ds_condxchg32_rtn_b64": _ds_condxchg, "ds_append": _ds_append, "ds_consume": _ds_append}
_EXACT |= {f"global_load_lds_{k}": _global_lds for k in lds_dma.SIZES}  # gfx9's loads into LDS


def rule(mnemonic: str):
    """The footprint function of a mnemonic (with its regex match bound), None if it touches no memory."""
    name = base_name(mnemonic)
    if name in _NO_MEMORY:
        return None
    if name in _EXACT:
        return _EXACT[name]
    for pattern, fn in _PATTERNS:
        m = pattern.match(name)
        if m:
            return lambda ex, w, inst, fn=fn, m=m: fn(ex, w, inst, m)
    if re.match(r"^(flat|global)_atomic_", name):
        return _flat_atomic
    if name.startswith("buffer_atomic_"):
        return _buffer_atomic
    if name.startswith("image_"):
        return _image
    if name.startswith("ds_") and ("_2addr" in name):
        return _ds_2addr
    if name.startswith("ds_") and _is_ds_atomic(name):
        return _ds_atomic
    if name.startswith(("s_load_", "s_buffer_load_")):
        return _smem
    return None


def _is_ds_atomic(name: str) -> bool:
    try:
        ds_atomic_op(name)
    except AttributeError:
        return False
    return True


MEMORY_PREFIXES = ("global_", "flat_", "scratch_", "buffer_", "tbuffer_", "image_", "ds_", "s_load_",
                   "s_buffer_load_")


def touches_memory(mnemonic: str) -> bool:
    """Whether a mnemonic belongs to a memory unit (and so needs a rule or an explicit no-memory entry)."""
    return base_name(mnemonic).startswith(MEMORY_PREFIXES)


def covered(mnemonic: str) -> bool:
    """A memory mnemonic has a footprint rule or is known to touch no memory."""
    return base_name(mnemonic) in _NO_MEMORY or rule(mnemonic) is not None
