"""MUBUF buffer loads, stores and atomics through 128-bit buffer resource descriptors (V#), per the RDNA3
ISA "Buffer Instructions" chapter.

V# (gfx11): [47:0] base address, [61:48] stride, [63:62] swizzle enable (element size 0/4/8/16
bytes), [95:64] num_records, [98:96]/[101:99]/[104:102]/[107:105] dst_sel x/y/z/w, [114:108]
format, [118:117] index stride (8/16/32/64), [119] add_tid_enable, [125:124] OOB_SELECT.

Address = base + soffset + buffer_offset, where index = (idxen ? VGPR : 0) + (add_tid ? lane : 0),
offset = (offen ? VGPR : 0) + inst offset, and buffer_offset = index * stride + offset (linear), or
with swizzling: (index / index_stride * stride + offset / elem * elem) * index_stride +
index % index_stride * elem + offset % elem.

Range checking (soffset is not part of it, as LLVM's buffer intrinsics document): OOB_SELECT
0: index >= num_records or offset + payload > stride; 1: index >= num_records; 2: num_records == 0;
3: swizzled with stride: as 0, else buffer_offset + payload > num_records (bytes). Out-of-range loads
return 0 and stores/atomics do nothing. Dword loads/stores (b64/b96/b128) are checked per dword;
format accesses and atomics all or nothing. TFE writes one extra dword of 0 after the loaded data
(the access never fails). buffer_gl0_inv / buffer_gl1_inv are no-ops: the simulator has no caches.
Not implemented: buffer_load_lds_* (loads into LDS through M0).

gfx12's VBUFFER encoding runs the same semantics: its rsrc field names the first SGPR of the V# (MUBUF's srsrc
counts groups of 4), its offset is 24-bit signed, an atomic returns with th's TH_ATOMIC_RETURN bit. The V# is
decoded as gfx11's (base, stride, num_records, swizzle, OOB_SELECT; not checked against an RDNA4 reference).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from simgpu.shader.memory.atomic import ATOMICS, atomic_op, operands, returns
from simgpu.shader.memory.atomic_ops import global_atomic
from simgpu.shader.memory.vmem import (
    global_read,
    global_write,
    register_loads_stores,
    store_data,
    vmem_name,
    write_loaded,
)
from simgpu.shader.operand import scalar_src, write_vgpr
from simgpu.shader.semantics import register

U32, U64 = np.uint32, np.uint64
_SIZES = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}


@dataclass
class Rsrc:
    """A buffer resource descriptor's fields, one entry per wave."""

    base: np.ndarray
    stride: np.ndarray
    swizzle: np.ndarray
    num_records: np.ndarray
    dst_sel: np.ndarray  # [n, 4]
    fmt: np.ndarray
    index_stride: np.ndarray
    add_tid: np.ndarray
    oob: np.ndarray


def rsrc(ex, w, srsrc: int) -> Rsrc:
    """Decode the V# held in SGPRs srsrc*4 .. srsrc*4+3 of each wave (gfx9's layout in a gfx9 dispatch)."""
    d = ex.st.sgpr[w, srsrc * 4: srsrc * 4 + 4].astype(np.int64)
    w1, w3 = d[:, 1], d[:, 3]
    sel = np.stack([(w3 >> s) & 7 for s in (0, 3, 6, 9)], axis=1)
    base, stride, index_stride, add_tid = d[:, 0] | ((w1 & 0xFFFF) << 32), (w1 >> 16) & 0x3FFF, 8 << ((w3 >> 21) & 3), \
        (w3 >> 23) & 1
    if ex.family == "gfx9":
        return _rsrc_gfx9(d, base, stride, sel, index_stride, add_tid)
    return Rsrc(base, stride, (w1 >> 30) & 3, d[:, 2], sel, (w3 >> 12) & 0x7F, index_stride, add_tid, (w3 >> 28) & 3)


def _rsrc_gfx9(d: np.ndarray, base, stride, sel, index_stride, add_tid) -> Rsrc:
    """gfx9's V#: word 1 bit 31 SWIZZLE_EN (bit 30 CACHE_SWIZZLE, no element size: `swizzle` holds SWIZZLE_EN, which
    access() refuses), word 3 NUM_FORMAT [14:12] and DATA_FORMAT [18:15] (format accesses are not modelled: fmt 0)
    and no OOB_SELECT. Range checking (one rule per buffer kind, as gfx10's OOB_SELECT later made selectable): a
    structured buffer (stride != 0) checks the index against num_records (records), a raw one (stride 0) the
    buffer offset and payload against num_records (bytes) -- gfx11's OOB_SELECT 1 and 3. Not checked against a gfx9
    reference beyond what compilers rely on: Triton's raw buffers (num_records 0x7ffffffe, masked lanes at offset
    0x80000000) read 0 and drop stores there."""
    return Rsrc(base, stride, (d[:, 1] >> 31) & 1, d[:, 2], sel, np.zeros_like(stride), index_stride, add_tid,
                np.where(stride != 0, 1, 3))


@dataclass
class Access:
    """Per-lane buffer addressing of one instruction: [n, lanes] arrays plus the descriptor."""

    d: Rsrc
    index: np.ndarray
    offset: np.ndarray  # inst offset + VGPR offset (what structured range checks compare with stride)
    boff: np.ndarray  # buffer offset (linear or swizzled)
    addr: np.ndarray  # uint64 virtual address

    def in_range(self, start: int, length: int) -> np.ndarray:
        """[n, lanes] bool: bytes [start, start + length) of the access pass the V#'s range check."""
        d = self.d
        nr, stride = d.num_records[:, None], d.stride[:, None]
        struct = (self.index < nr) & (self.offset + start + length <= stride)
        raw = self.boff + start + length <= nr
        swz = (d.swizzle != 0)[:, None] & (stride != 0)
        oob = d.oob[:, None]
        return np.where(oob == 0, struct, np.where(oob == 1, self.index < nr, np.where(
            oob == 2, nr != 0, np.where(swz, struct, raw))))


def rsrc_of(inst) -> int:
    """The V#'s SGPR quad (srsrc's unit): MUBUF/MTBUF's srsrc, gfx12 VBUFFER's rsrc (an SGPR number) / 4."""
    f = inst.fields
    return f["srsrc"] if "srsrc" in f else f["rsrc"] >> 2


def inst_offset(inst) -> int:
    """The instruction's offset: MUBUF/MTBUF's unsigned 12 bits, gfx12 VBUFFER's signed 24 bits."""
    off = inst.fields["offset"]
    if inst.encoding == "VBUFFER":
        return off - (1 << 24) if off & (1 << 23) else off
    return off


def access(ex, w, inst) -> Access:
    """Addresses of a MUBUF/MTBUF (or gfx12 VBUFFER) instruction for waves `w`."""
    f = inst.fields
    st = ex.st
    d = rsrc(ex, w, rsrc_of(inst))
    if ex.family == "gfx9" and d.swizzle.any():
        raise ex.illegal_inst(w, inst, "a swizzled buffer (V# SWIZZLE_EN) is not modelled for gfx9")
    n, lanes = len(w), st.lanes
    index = np.zeros((n, lanes), np.int64)
    if f["idxen"]:
        index += st.vgpr[f["vaddr"], w, :]
    index += np.where(d.add_tid[:, None] != 0, np.arange(lanes)[None, :], 0)
    offset = np.full((n, lanes), inst_offset(inst), np.int64)
    if f["offen"]:
        offset += st.vgpr[f["vaddr"] + f["idxen"], w, :]
    stride = d.stride[:, None]
    linear = index * stride + offset
    elem = np.array([1, 4, 8, 16])[d.swizzle][:, None]
    ist = d.index_stride[:, None]
    swizzled = ((index // ist) * stride + offset // elem * elem) * ist + (index % ist) * elem + offset % elem
    boff = np.where((d.swizzle[:, None] != 0) & (stride != 0), swizzled, linear)
    soff = scalar_src(ex, w, f["soffset"], inst.literal).astype(np.int64)
    addr = (d.base[:, None] + soff[:, None] + boff).astype(U64)
    return Access(d, index, offset, boff, addr)


def load_checked(ex, acc: Access, size: int, mask: np.ndarray, per_dword: bool) -> np.ndarray:
    """[n, lanes, size] bytes; out-of-range parts (per dword or whole) read 0 and are never touched."""
    if not per_dword or size <= 4:
        return global_read(ex, acc.addr, size, mask & acc.in_range(0, size))
    parts = [global_read(ex, acc.addr + U64(4 * k), 4, mask & acc.in_range(4 * k, 4)) for k in range(size // 4)]
    return np.concatenate(parts, axis=-1)


def store_checked(ex, acc: Access, data: np.ndarray, mask: np.ndarray, per_dword: bool) -> None:
    """Store [n, lanes, size] bytes; out-of-range parts are dropped."""
    size = data.shape[-1]
    if not per_dword or size <= 4:
        global_write(ex, acc.addr, data, mask & acc.in_range(0, size))
        return
    n, lanes, _ = data.shape
    dw = size // 4
    # one scatter with the dwords of a lane adjacent: overlapping lanes resolve highest-lane-wins
    addr = (acc.addr[..., None] + U64(4) * np.arange(dw, dtype=U64)).reshape(n, lanes * dw)
    ok = np.stack([mask & acc.in_range(4 * k, 4) for k in range(dw)], axis=-1).reshape(n, lanes * dw)
    global_write(ex, addr, np.ascontiguousarray(data).reshape(n, lanes * dw, 4), ok)


def write_tfe(ex, w, inst, dwords: int, mask: np.ndarray) -> None:
    """TFE: the dword after the loaded data gets 0 (the access status: no failure)."""
    if inst.fields.get("tfe"):  # (gfx9's MUBUF has no TFE bit)
        write_vgpr(ex, w, inst.fields["vdata"] + dwords, np.zeros(mask.shape, U32), mask)


_LOAD = re.compile(r"^buffer_load_(?:d16_(?:hi_)?)?(u8|i8|u16|i16|b16|b32|b64|b96|b128)$")
_STORE = re.compile(r"^buffer_store_(?:d16_hi_)?(b8|b16|b32|b64|b96|b128)$")


def _load(ex, w, inst):
    kind = _LOAD.match(inst.mnemonic).group(1)
    size = _SIZES[kind]
    mask = ex.st.exec_lanes(w)
    raw = load_checked(ex, access(ex, w, inst), size, mask, per_dword=True)
    write_loaded(ex, w, inst.fields["vdata"], inst.mnemonic, raw, kind, mask)
    write_tfe(ex, w, inst, max(1, size // 4), mask)


def _store(ex, w, inst):
    size = _SIZES[_STORE.match(inst.mnemonic).group(1)]
    mask = ex.st.exec_lanes(w)
    data = store_data(ex, w, inst.fields["vdata"], inst.mnemonic, size)
    store_checked(ex, access(ex, w, inst), data, mask, per_dword=True)


def _atomic(ex, w, inst):
    f = inst.fields
    op, size = atomic_op(inst.mnemonic)
    mask = ex.st.exec_lanes(w)
    acc = access(ex, w, inst)
    src, cmp = operands(ex, w, op, f["vdata"], size)
    live = mask & acc.in_range(0, size)
    old = global_atomic(ex, op, acc.addr, src, cmp, size, live)
    if returns(inst):
        write_vgpr(ex, w, f["vdata"], old, mask, size // 4)


def _cache_invalidate(ex, w, inst):
    return None


register_loads_stores(_load, _store, vmem_name("buffer"))
for _o in (*ATOMICS, "csub_u32"):
    register(f"buffer_atomic_{_o}", _atomic)
register("buffer_gl0_inv", _cache_invalidate)
register("buffer_gl1_inv", _cache_invalidate)
