"""FLAT, GLOBAL and SCRATCH memory semantics: per-lane addresses, loads, stores and atomics.

global: saddr != off -> SGPR pair base + zero-extended 32-bit VGPR offset + inst offset; otherwise a
64-bit VGPR address + inst offset. scratch: per-lane private memory, offset = (SGPR saddr) + (VGPR
if SVE) + inst offset. flat: a 64-bit VGPR address; addresses in the LDS or private aperture go to
LDS or scratch, everything else is a global access.
"""

from __future__ import annotations

import re

import numpy as np

from .operand import PRIVATE_BASE_HI, SHARED_BASE_HI
from .semantics import register

U32, U64 = np.uint32, np.uint64
SADDR_OFF = 124

# load/store data sizes in bytes; d16 forms move 16 bits into a half of the VGPR.
_SIZES = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}


def _offset(inst) -> int:
    off = inst.fields["offset"]
    return off - (1 << 13) if off & (1 << 12) else off


def _vaddr64(ex, w, reg: int) -> np.ndarray:
    st = ex.st
    return st.vgpr[w, reg, :].astype(U64) | (st.vgpr[w, reg + 1, :].astype(U64) << U64(32))


def global_addresses(ex, w, inst) -> np.ndarray:
    """[n, lanes] uint64 virtual addresses of a GLOBAL/FLAT instruction."""
    f = inst.fields
    st = ex.st
    if inst.mnemonic.startswith("global_") and f["saddr"] != SADDR_OFF:
        base = st.sgpr[w, f["saddr"]].astype(U64) | (st.sgpr[w, f["saddr"] + 1].astype(U64) << U64(32))
        addr = base[:, None] + st.vgpr[w, f["addr"], :].astype(U64)
    else:
        addr = _vaddr64(ex, w, f["addr"])
    return (addr.astype(np.int64) + _offset(inst)).astype(U64)


def scratch_offsets(ex, w, inst) -> np.ndarray:
    """[n, lanes] byte offsets into each lane's private memory."""
    f = inst.fields
    st = ex.st
    off = np.full((len(w), st.lanes), _offset(inst), np.int64)
    if f["saddr"] != SADDR_OFF:
        off += st.sgpr[w, f["saddr"]].astype(np.int64)[:, None]
    if f["sve"]:
        off += st.vgpr[w, f["addr"], :].astype(np.int64)
    return off


def _dwords(size: int) -> int:
    return max(1, size // 4)


def _load_bytes(ex, w, inst, size: int, mask: np.ndarray) -> np.ndarray:
    """[n, lanes, size] uint8 loaded for the active lanes (0 elsewhere)."""
    if inst.mnemonic.startswith("scratch_"):
        return _scratch_read(ex, w, scratch_offsets(ex, w, inst), size, mask)
    addr = global_addresses(ex, w, inst)
    return _global_read(ex, addr, size, mask)


def _global_read(ex, addr: np.ndarray, size: int, mask: np.ndarray) -> np.ndarray:
    n, lanes = addr.shape
    unit = size if size in (1, 2, 4, 8, 16) else 4
    count = size // unit
    addrs = (addr[:, :, None] + U64(unit) * np.arange(count, dtype=U64)[None, None, :]).reshape(-1)
    m = np.repeat(mask.reshape(-1), count)
    vals = ex.mem.gather(ex.vmid, addrs, unit, m)
    return np.ascontiguousarray(vals).view(np.uint8).reshape(n, lanes, size)


def _global_write(ex, addr: np.ndarray, data: np.ndarray, mask: np.ndarray) -> None:
    n, lanes, size = data.shape
    unit = size if size in (1, 2, 4, 8, 16) else 4
    count = size // unit
    addrs = (addr[:, :, None] + U64(unit) * np.arange(count, dtype=U64)[None, None, :]).reshape(-1)
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint32}[unit]
    vals = np.ascontiguousarray(data).view(dtype)
    vals = vals.reshape(-1, 4) if unit == 16 else vals.reshape(-1)
    ex.mem.scatter(ex.vmid, addrs, vals, unit, np.repeat(mask.reshape(-1), count))


def _scratch_read(ex, w, off: np.ndarray, size: int, mask: np.ndarray) -> np.ndarray:
    priv = ex.scratch
    out = np.zeros((len(w), ex.st.lanes, size), np.uint8)
    if priv is None:
        return out
    limit = priv.shape[2]
    ok = mask & (off >= 0) & (off + size <= limit)  # out-of-range private accesses read 0
    wi, li = np.nonzero(ok)
    idx = off[wi, li][:, None] + np.arange(size)[None, :]
    out[wi, li] = priv[w[wi][:, None], li[:, None], idx]
    return out


def _scratch_write(ex, w, off: np.ndarray, data: np.ndarray, mask: np.ndarray) -> None:
    priv = ex.scratch
    if priv is None:
        return
    size = data.shape[2]
    ok = mask & (off >= 0) & (off + size <= priv.shape[2])  # out-of-range private stores are dropped
    wi, li = np.nonzero(ok)
    idx = off[wi, li][:, None] + np.arange(size)[None, :]
    priv[w[wi][:, None], li[:, None], idx] = data[wi, li]


def _write_loaded(ex, w, inst, raw: np.ndarray, kind: str, mask: np.ndarray) -> None:
    """Put loaded bytes into vdst: zero/sign extension, d16 halves, multi-dword."""
    st = ex.st
    vdst = inst.fields["vdst"]
    size = raw.shape[2]
    if "d16" in inst.mnemonic:
        val = raw[..., 0].astype(U32) if size == 1 else raw.view(np.uint16)[..., 0].astype(U32)
        if kind == "i8":
            val = raw[..., 0].view(np.int8).astype(np.int32).astype(U32) & U32(0xFFFF)
        cur = st.vgpr[w, vdst, :]
        new = (cur & U32(0xFFFF)) | (val << U32(16)) if "_hi" in inst.mnemonic else (cur & U32(0xFFFF0000)) | val
        st.vgpr[w, vdst, :] = np.where(mask, new, cur)
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
        st.vgpr[w, vdst, :] = np.where(mask, val, st.vgpr[w, vdst, :])
        return
    words = raw.view(U32)
    for i in range(size // 4):
        st.vgpr[w, vdst + i, :] = np.where(mask, words[..., i], st.vgpr[w, vdst + i, :])


def _store_data(ex, w, inst, size: int) -> np.ndarray:
    """[n, lanes, size] bytes to store from the data VGPRs (d16_hi stores take the high half)."""
    st = ex.st
    d = inst.fields["data"]
    words = np.stack([st.vgpr[w, d + i, :] for i in range(_dwords(size))], axis=-1)
    if "d16_hi" in inst.mnemonic:
        words = words >> U32(16)
    return np.ascontiguousarray(words).view(np.uint8)[..., :size]


_LOAD = re.compile(r"^(global|scratch|flat)_load_(?:d16_(?:hi_)?)?(u8|i8|u16|i16|b16|b32|b64|b96|b128)$")
_STORE = re.compile(r"^(global|scratch|flat)_store_(?:d16_hi_)?(b8|b16|b32|b64|b96|b128)$")


def _load(ex, w, inst):
    kind = _LOAD.match(inst.mnemonic).group(2)
    mask = ex.st.exec_lanes(w)
    raw = _load_bytes(ex, w, inst, _SIZES[kind], mask)
    _write_loaded(ex, w, inst, raw, kind, mask)


def _store(ex, w, inst):
    kind = _STORE.match(inst.mnemonic).group(2)
    size = _SIZES[kind]
    mask = ex.st.exec_lanes(w)
    data = _store_data(ex, w, inst, size)
    if inst.mnemonic.startswith("scratch_"):
        _scratch_write(ex, w, scratch_offsets(ex, w, inst), data, mask)
    else:
        _global_write(ex, global_addresses(ex, w, inst), data, mask)


def _flat_segment(addr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = (addr >> U64(32)).astype(U32)
    return hi == U32(SHARED_BASE_HI), hi == U32(PRIVATE_BASE_HI)


for _seg in ("global", "scratch", "flat"):
    for _k in ("u8", "i8", "u16", "i16", "b32", "b64", "b96", "b128"):
        register(f"{_seg}_load_{_k}", _load)
    for _k in ("u8", "i8", "b16"):
        register(f"{_seg}_load_d16_{_k}", _load)
        register(f"{_seg}_load_d16_hi_{_k}", _load)
    for _k in ("b8", "b16", "b32", "b64", "b96", "b128"):
        register(f"{_seg}_store_{_k}", _store)
    for _k in ("b8", "b16"):
        register(f"{_seg}_store_d16_hi_{_k}", _store)
