"""FLAT, GLOBAL and SCRATCH memory semantics: per-lane addresses, loads, stores and atomics.

global: saddr != off -> SGPR pair base + zero-extended 32-bit VGPR offset + inst offset; otherwise a
64-bit VGPR address + inst offset. scratch: per-lane private memory, offset = (SGPR saddr) + (VGPR
if SVE) + inst offset. flat: a 64-bit VGPR address + unsigned inst offset; an address whose high 32
bits equal the shared aperture (operand.SHARED_BASE_HI) accesses LDS at its low 32 bits, the private
aperture (PRIVATE_BASE_HI) the lane's scratch at its low 32 bits, anything else is a global access.
global_load/store_addtid_b32: SGPR base (saddr) + inst offset + laneID * 4 (laneID within the wave).
gfx12's VFLAT, VGLOBAL and VSCRATCH encodings run the same semantics: their fields have the same names, the
offset is 24-bit signed in every segment.
Private (scratch) accesses are range-checked per byte against the per-lane allocation: bytes outside
read 0 and are not written. d16 loads write one half of VDST and keep the other; d16_hi stores take
bits [31:16] (b16) or [23:16] (b8).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from simgpu.mem.lanes import all_distinct
from simgpu.shader.lds.ds_mem import lds_read, lds_write
from simgpu.shader.operand import PRIVATE_BASE_HI, SHARED_BASE_HI
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel

U32, U64 = np.uint32, np.uint64
SADDR_OFF = 124

# load/store data sizes in bytes; d16 forms move 16 bits into a half of the VGPR.
_SIZES = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}


def _offset(inst) -> int:
    off = inst.fields["offset"]
    if inst.encoding != "FLAT":  # gfx12's VFLAT/VGLOBAL/VSCRATCH: 24 bits, signed in every segment
        return off - (1 << 24) if off & (1 << 23) else off
    if inst.fields["seg"] == 0:  # the FLAT segment's offset is unsigned on gfx11 (LLVM: flat_signed)
        return off
    return off - (1 << 13) if off & (1 << 12) else off


def _vaddr64(ex, w, reg: int) -> np.ndarray:
    st = ex.st
    ix = wsel(w)
    addr = st.vgpr[reg + 1, ix, :].astype(U64)
    addr <<= U64(32)
    addr |= st.vgpr[reg, ix, :]
    return addr


def global_addresses(ex, w, inst) -> np.ndarray:
    """[n, lanes] uint64 virtual addresses of a GLOBAL/FLAT instruction."""
    f = inst.fields
    st = ex.st
    ix = wsel(w)
    if inst.mnemonic.startswith("global_") and f["saddr"] != SADDR_OFF:
        base = st.sgpr[ix, f["saddr"]].astype(U64) | (st.sgpr[ix, f["saddr"] + 1].astype(U64) << U64(32))
        addr = base[:, None] + st.vgpr[f["addr"], ix, :].astype(U64)
    else:
        addr = _vaddr64(ex, w, f["addr"])
    off = _offset(inst)
    if off:  # two's complement: adding the offset's 64-bit pattern wraps like the hardware's adder
        addr = addr + U64(off & 0xFFFFFFFFFFFFFFFF)
    return addr


def scratch_offsets(ex, w, inst) -> np.ndarray:
    """[n, lanes] byte offsets into each lane's private memory."""
    f = inst.fields
    st = ex.st
    off = np.full((len(w), st.lanes), _offset(inst), np.int64)
    if f["saddr"] != SADDR_OFF:
        off += st.sgpr[w, f["saddr"]].astype(np.int64)[:, None]
    if f["sve"]:
        off += st.vgpr[f["addr"], w, :].astype(np.int64)
    return off


def _dwords(size: int) -> int:
    return max(1, size // 4)


def _load_bytes(ex, w, inst, size: int, mask: np.ndarray) -> np.ndarray:
    """[n, lanes, size] uint8 loaded for the active lanes (0 elsewhere)."""
    if inst.mnemonic.startswith("scratch_"):
        return scratch_read(ex, w, scratch_offsets(ex, w, inst), size, mask)
    addr = global_addresses(ex, w, inst)
    if not inst.mnemonic.startswith("flat_"):
        return global_read(ex, addr, size, mask)
    return flat_read(ex, w, addr, size, mask)[0]


def flat_read(ex, w, addr: np.ndarray, size: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a flat load reads -- [n, lanes, size] uint8, each active lane from global memory, LDS or scratch as
    its address falls in an aperture (flat_route) -- and the lanes that read global memory."""
    g, lds, priv, low = flat_route(addr, mask)
    raw = global_read(ex, addr, size, g)
    if lds.any():
        raw |= lds_read(ex, w, low, size, lds)
    if priv.any():
        raw |= scratch_read(ex, w, low, size, priv)
    return raw, g


def flat_route(addr: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split FLAT lanes by aperture: (global, LDS, private) lane masks and the low 32 address bits."""
    lds, priv = _flat_segment(addr)
    low = (addr & U64(0xFFFFFFFF)).astype(np.int64)
    return mask & ~lds & ~priv, mask & lds, mask & priv, low


def _unit(size: int) -> int:
    """The access unit for `size` bytes per lane: the size itself when the MMU moves it whole, else the
    largest of 4, 2, 1 dividing it (b96 as 3 dwords; a 3- or 6-byte typed-buffer element in bytes or halves)."""
    if size in (1, 2, 4, 8, 16):
        return size
    return 4 if size % 4 == 0 else 2 if size % 2 == 0 else 1


def global_read(ex, addr: np.ndarray, size: int, mask: np.ndarray) -> np.ndarray:
    n, lanes = addr.shape
    unit = _unit(size)
    count = size // unit
    if count == 1:
        addrs, m = addr.reshape(-1), mask.reshape(-1)
    else:
        addrs = (addr[:, :, None] + U64(unit) * np.arange(count, dtype=U64)[None, None, :]).reshape(-1)
        m = np.repeat(mask.reshape(-1), count)
    vals = ex.mem.gather(ex.vmid, addrs, unit, m)
    return np.ascontiguousarray(vals).view(np.uint8).reshape(n, lanes, size)


def global_write(ex, addr: np.ndarray, data: np.ndarray, mask: np.ndarray) -> None:
    n, lanes, size = data.shape
    unit = _unit(size)
    count = size // unit
    if count == 1:
        addrs = addr.reshape(-1)
    else:
        addrs = (addr[:, :, None] + U64(unit) * np.arange(count, dtype=U64)[None, None, :]).reshape(-1)
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint32}[unit]
    vals = np.ascontiguousarray(data).view(dtype)
    vals = vals.reshape(-1, 4) if unit == 16 else vals.reshape(-1)
    ex.mem.scatter(ex.vmid, addrs, vals, unit, mask.reshape(-1) if count == 1 else np.repeat(mask.reshape(-1), count))


def scratch_read(ex, w, off: np.ndarray, size: int, mask: np.ndarray) -> np.ndarray:
    """[n, lanes, size] bytes of each lane's private memory; bytes outside it read 0 (checked per byte)."""
    out = np.zeros((len(w), ex.st.lanes, size), np.uint8)
    priv = ex.scratch
    if priv is None:
        return out
    idx = off.astype(np.int64)[..., None] + np.arange(size)
    ok = mask[..., None] & (idx >= 0) & (idx < priv.shape[2])
    wi, li, bi = np.nonzero(ok)
    out[wi, li, bi] = priv[w[wi], li, idx[wi, li, bi]]
    return out


def scratch_write(ex, w, off: np.ndarray, data: np.ndarray, mask: np.ndarray) -> None:
    """Store [n, lanes, size] bytes to each lane's private memory; bytes outside it are dropped."""
    priv = ex.scratch
    if priv is None:
        return
    idx = off.astype(np.int64)[..., None] + np.arange(data.shape[2])
    ok = mask[..., None] & (idx >= 0) & (idx < priv.shape[2])
    wi, li, bi = np.nonzero(ok)
    priv[w[wi], li, idx[wi, li, bi]] = data[wi, li, bi]  # lanes never share private bytes


def write_loaded(ex, w, vdst: int, mnemonic: str, raw: np.ndarray, kind: str, mask: np.ndarray) -> None:
    """Put loaded bytes into vdst: zero/sign extension, d16 halves (from the mnemonic), multi-dword."""
    st = ex.st
    ix = wsel(w)
    size = raw.shape[2]
    if "d16" in mnemonic:
        val = raw[..., 0].astype(U32) if size == 1 else raw.view(np.uint16)[..., 0].astype(U32)
        if kind == "i8":
            val = raw[..., 0].view(np.int8).astype(np.int32).astype(U32) & U32(0xFFFF)
        cur = st.vgpr[vdst, ix, :]
        new = (cur & U32(0xFFFF)) | (val << U32(16)) if "_hi" in mnemonic else (cur & U32(0xFFFF0000)) | val
        st.vgpr[vdst, ix, :] = np.where(mask, new, cur)
        return
    if size < 4:
        if kind == "i8":
            val = raw[..., 0].view(np.int8).astype(np.int32).view(U32)
        elif kind == "i16":
            val = raw.view(np.int16)[..., 0].astype(np.int32).view(U32)
        elif size == 1:
            val = raw[..., 0].astype(U32)
        else:
            val = raw.view(np.uint16)[..., 0].astype(U32)
        st.vgpr[vdst, ix, :] = np.where(mask, val, st.vgpr[vdst, ix, :])
        return
    words = raw.view(U32)
    for i in range(size // 4):
        if isinstance(ix, slice):
            np.copyto(st.vgpr[vdst + i, ix, :], words[..., i], where=mask)
        else:
            st.vgpr[vdst + i, ix, :] = np.where(mask, words[..., i], st.vgpr[vdst + i, ix, :])


def store_data(ex, w, d: int, mnemonic: str, size: int) -> np.ndarray:
    """[n, lanes, size] bytes to store from the data VGPRs at `d` (d16_hi stores take the high half)."""
    st = ex.st
    ix = wsel(w)
    words = np.stack([st.vgpr[d + i, ix, :] for i in range(_dwords(size))], axis=-1)
    if "d16_hi" in mnemonic:
        words = words >> U32(16)
    return np.ascontiguousarray(words).view(np.uint8)[..., :size]


# ---- coalesced accesses ----------------------------------------------------------------------------
# The elementwise pattern: EXEC all ones, and each lane addresses the `size` bytes right after the previous
# lane's, wave after wave (lane 0 follows the previous wave's last lane). The batch then touches one
# contiguous range, and when that translates linearly into one buffer (MMU.linear_span) the access is a
# copy between a VGPR plane and a slice of memory, with no per-lane translation or byte arrays.


@functools.lru_cache(maxsize=8)
def _ramp(count: int, stride: int) -> np.ndarray:
    """0, stride, 2 * stride, ... (`count` uint32 values; read-only, shared between calls)."""
    r = np.arange(count, dtype=U32) * U32(stride)
    r.flags.writeable = False
    return r


def _uniform_high(ex, w, inst) -> int | None:
    """The part of the address above the 32-bit VGPR offset when all waves `w` share it: the SGPR base
    (saddr forms) or the high VGPR dword shifted up (64-bit VGPR addresses); None when it varies."""
    f = inst.fields
    st = ex.st
    ix = wsel(w)
    if inst.mnemonic.startswith("global_") and f["saddr"] != SADDR_OFF:
        pair = st.sgpr[ix, f["saddr"]:f["saddr"] + 2]
        if not (pair == pair[0]).all():
            return None
        return int(pair[0, 0]) | int(pair[0, 1]) << 32
    hi = st.vgpr[f["addr"] + 1, ix, :]
    high = int(hi[0, 0])
    if not (hi == U32(high)).all():
        return None
    return high << 32


def _coalesced_address(ex, w, inst, stride: int) -> int | None:
    """Lane 0's address when each lane of waves `w`, in order, addresses `stride` bytes after the previous
    lane; else None. The high half (SGPR base or VGPR high dword) must be uniform and the low dwords must
    step by `stride` without wrapping, so the 64-bit addresses step too."""
    low = ex.st.vgpr[inst.fields["addr"], wsel(w), :]
    first = int(low[0, 0])
    last = first + stride * (low.size - 1)
    # probe lane 1 and the last lane before whole passes: other patterns (strided, uniform) fail here
    if last > 0xFFFFFFFF or int(low[0, 1]) != first + stride or int(low[-1, -1]) != last:
        return None
    high = _uniform_high(ex, w, inst)
    if high is None or not ((low - U32(first)) == _ramp(low.size, stride).reshape(low.shape)).all():
        return None
    return (high + first + _offset(inst)) & 0xFFFFFFFFFFFFFFFF


def _coalesced_span(ex, w, inst, size: int, access: str) -> np.ndarray | None:
    """[n, lanes, dwords] uint32 view of the memory a coalesced whole-dword GLOBAL/FLAT access of waves `w`
    touches, or None to take the per-lane path (which also reports any fault)."""
    st = ex.st
    if size % 4 or not len(w) or inst.mnemonic.startswith("scratch_"):
        return None
    if not ex.st.exec_full(w):
        return None
    va = _coalesced_address(ex, w, inst, size)
    if va is None:
        return None
    nbytes = len(w) * st.lanes * size
    if inst.mnemonic.startswith("flat_") and _touches_aperture(va, nbytes):
        return None
    span = ex.mem.linear_span(ex.vmid, va, nbytes, access)
    return None if span is None else span.view(U32).reshape(len(w), st.lanes, size // 4)


# A wider pattern, for loads: every lane's address falls in one range of at most GATHER_SPAN_LIMIT bytes
# that translates linearly (rows of a matrix read by many waves, strided or repeated addresses). The load
# is then one fancy-index gather from that memory on the 32-bit VGPR offsets, with no 64-bit addresses.
GATHER_SPAN_LIMIT = 256 << 20


def _gathered_load(ex, w, inst, size: int) -> bool:
    """Load whole dwords for waves `w` (full EXEC) from one linearly mapped range; False when the access
    does not fit (misaligned, several ranges, unmapped), and then the per-lane path runs."""
    found = _span_of(ex, w, inst, size, "read")
    if found is None:
        return False
    words, index = found
    st, f, ix = ex.st, inst.fields, wsel(w)
    for i in range(size // 4):
        st.vgpr[f["vdst"] + i, ix, :] = words[index + i] if i else words[index]
    return True


def _span_of(ex, w, inst, size: int, access: str):
    """(the [lo, hi) range's words as uint32, the lanes' dword indices into it [n, lanes]) when every lane of
    waves `w` (full EXEC) addresses whole dwords in one linearly mapped range of at most GATHER_SPAN_LIMIT
    bytes; None when the access does not fit (misaligned, several ranges, unmapped: the per-lane path, which
    reports faults)."""
    if size % 4 or inst.mnemonic.startswith("scratch_") or not ex.st.exec_full(w):
        return None
    low = ex.st.vgpr[inst.fields["addr"], wsel(w), :]
    lo_min, lo_max = int(low.min()), int(low.max())
    off = _offset(inst)
    high = _uniform_high(ex, w, inst)
    if high is None or lo_max - lo_min + size > GATHER_SPAN_LIMIT:
        return None
    if (int(np.bitwise_or.reduce(low, axis=None)) | (high + off)) & 3:  # some lane's address is misaligned
        return None
    va, nbytes = high + lo_min + off, lo_max - lo_min + size
    if inst.mnemonic.startswith("flat_") and _touches_aperture(va, nbytes):
        return None
    span = ex.mem.linear_span(ex.vmid, va, nbytes, access)
    if span is None:
        return None
    index = low.astype(np.intp)  # numpy indexes fastest with native-width indices
    index -= lo_min
    index >>= 2
    return span.view(U32), index


def _distinct(index: np.ndarray, dwords: int, slots: int) -> bool:
    """Whether no two lanes' `dwords`-dword stores at dword `index` (of `slots`) share a dword."""
    flat = index.reshape(-1)
    if dwords > 1:
        flat = (flat[:, None] + np.arange(dwords)).reshape(-1)
    return all_distinct(flat, slots)


def _scattered_store(ex, w, inst, size: int) -> bool:
    """Store whole dwords for waves `w` (full EXEC) into one linearly mapped range, lanes apart (no two share
    a dword: then the order the interpreter gives colliding lanes cannot matter); False when the store does not
    fit, and then the per-lane path runs. The store-side twin of _gathered_load: a column block of a row-major
    result (rows apart) goes straight into memory."""
    found = _span_of(ex, w, inst, size, "write")
    if found is None:
        return False
    words, index = found
    if not _distinct(index, size // 4, words.size):
        return False
    ix, d = wsel(w), inst.fields["data"]
    for i in range(size // 4):
        words[index + i if i else index] = ex.st.vgpr[d + i, ix, :]
    return True


def _touches_aperture(va: int, nbytes: int) -> bool:
    """True if [va, va + nbytes) reaches the FLAT shared (LDS) or private (scratch) aperture."""
    lo, hi = va >> 32, (va + nbytes - 1) >> 32
    return lo <= SHARED_BASE_HI <= hi or lo <= PRIVATE_BASE_HI <= hi


_LOAD = re.compile(r"^(global|scratch|flat)_load_(?:d16_(?:hi_)?)?(u8|i8|u16|i16|b16|b32|b64|b96|b128)$")
_STORE = re.compile(r"^(global|scratch|flat)_store_(?:d16_hi_)?(b8|b16|b32|b64|b96|b128)$")


def _load(ex, w, inst):
    kind = _LOAD.match(inst.mnemonic).group(2)
    span = _coalesced_span(ex, w, inst, _SIZES[kind], "read")
    if span is not None:
        ix, vdst = wsel(w), inst.fields["vdst"]
        for i in range(span.shape[2]):
            ex.st.vgpr[vdst + i, ix, :] = span[..., i]
        return
    if _gathered_load(ex, w, inst, _SIZES[kind]):
        return
    mask = ex.st.exec_lanes(w)
    raw = _load_bytes(ex, w, inst, _SIZES[kind], mask)
    write_loaded(ex, w, inst.fields["vdst"], inst.mnemonic, raw, kind, mask)


def _store(ex, w, inst):
    kind = _STORE.match(inst.mnemonic).group(2)
    size = _SIZES[kind]
    span = _coalesced_span(ex, w, inst, size, "write")
    if span is not None:
        ix, d = wsel(w), inst.fields["data"]
        for i in range(span.shape[2]):
            span[..., i] = ex.st.vgpr[d + i, ix, :]
        return
    if _scattered_store(ex, w, inst, size):
        return
    mask = ex.st.exec_lanes(w)
    data = store_data(ex, w, inst.fields["data"], inst.mnemonic, size)
    if inst.mnemonic.startswith("scratch_"):
        scratch_write(ex, w, scratch_offsets(ex, w, inst), data, mask)
        return
    addr = global_addresses(ex, w, inst)
    if not inst.mnemonic.startswith("flat_"):
        global_write(ex, addr, data, mask)
        return
    g, lds, priv, low = flat_route(addr, mask)
    global_write(ex, addr, data, g)
    if lds.any():
        lds_write(ex, w, low, data, lds)
    if priv.any():
        scratch_write(ex, w, low, data, priv)


def _addtid_addresses(ex, w, inst) -> np.ndarray:
    """GLOBAL_*_ADDTID: SGPR base (0 for off) + inst offset + lane id * 4."""
    f = inst.fields
    st = ex.st
    base = np.zeros(len(w), U64)
    if f["saddr"] != SADDR_OFF:
        base = st.sgpr[w, f["saddr"]].astype(U64) | (st.sgpr[w, f["saddr"] + 1].astype(U64) << U64(32))
    lane = np.arange(st.lanes, dtype=np.int64) * 4 + _offset(inst)
    return base[:, None] + lane[None, :].astype(U64)


def _load_addtid(ex, w, inst):
    mask = ex.st.exec_lanes(w)
    raw = global_read(ex, _addtid_addresses(ex, w, inst), 4, mask)
    write_loaded(ex, w, inst.fields["vdst"], inst.mnemonic, raw, "b32", mask)


def _store_addtid(ex, w, inst):
    mask = ex.st.exec_lanes(w)
    data = store_data(ex, w, inst.fields["data"], inst.mnemonic, 4)
    global_write(ex, _addtid_addresses(ex, w, inst), data, mask)


def _flat_segment(addr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = (addr >> U64(32)).astype(U32)
    return hi == U32(SHARED_BASE_HI), hi == U32(PRIVATE_BASE_HI)


LOAD_KINDS = ("u8", "i8", "u16", "i16", "b32", "b64", "b96", "b128")  # what a load reads and how it extends
STORE_KINDS = ("b8", "b16", "b32", "b64", "b96", "b128")


def register_loads_stores(load, store, name, d16_loads: tuple[str, ...] = ("u8", "i8", "b16")) -> None:
    """Register the loads and stores every memory unit has: each kind, the 16-bit loads into the low or high
    half (`d16_loads`), the stores of a register's high half. `name(op, kind, d16)` spells the mnemonic (op
    "load" or "store", d16 "", "d16" or "d16_hi"): the units differ only in that."""
    for k in LOAD_KINDS:
        register(name("load", k, ""), load)
    for k in d16_loads:
        register(name("load", k, "d16"), load)
        register(name("load", k, "d16_hi"), load)
    for k in STORE_KINDS:
        register(name("store", k, ""), store)
    for k in ("b8", "b16"):
        register(name("store", k, "d16_hi"), store)


def vmem_name(prefix: str):
    """The mnemonic spelling of global/scratch/flat/buffer: <prefix>_load_d16_hi_u8."""
    return lambda op, kind, d16: f"{prefix}_{op}_{d16 + '_' if d16 else ''}{kind}"


register("global_load_addtid_b32", _load_addtid)
register("global_store_addtid_b32", _store_addtid)
for _seg in ("global", "scratch", "flat"):
    register_loads_stores(_load, _store, vmem_name(_seg))
