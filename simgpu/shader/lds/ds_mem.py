"""LDS as memory: per-workgroup byte rows (ex.st.lds[ex.st.group[w]]) read, written and updated
atomically by lanes. Shared by the DS instructions and FLAT accesses in the shared aperture.

Out-of-range accesses: LDS addresses are checked byte by byte against the workgroup's allocation
(the row length): bytes beyond it read as 0 and are not written (the hardware discards such stores and
returns 0 for such loads). An atomic whose word is not entirely inside the allocation does nothing and
returns 0. Several lanes storing to one byte: the highest lane (in [waves, lanes] order) wins.
"""

from __future__ import annotations

import numpy as np

from simgpu.mem.lanes import last_wins
from simgpu.shader.memory.atomic_ops import run as run_atomic


def _rows(ex, w, shape) -> np.ndarray:
    return np.broadcast_to(ex.st.group[w].reshape((-1,) + (1,) * (len(shape) - 1)), shape)


_UNITS = {4: np.uint32, 2: np.uint16, 1: np.uint8}


def _unit(lds: np.ndarray, addr: np.ndarray, size: int) -> int:
    """The widest access unit (4, 2 or 1 bytes) dividing the size, every lane's address and the row
    length: a lane then touches whole units, each entirely inside or outside the allocation, so the
    per-byte rules give the same result per unit, with a fraction of the index work."""
    if addr.size == 0:
        return 1
    low = int(np.bitwise_or.reduce(addr, axis=None)) | size | lds.shape[1]
    return 4 if not low & 3 else 2 if not low & 1 else 1


def _distinct(keys: np.ndarray) -> bool:
    """Whether no two lanes write one unit: counted over the keys' span when it is at most a few times their
    number (a batch of many workgroups), else sorted (a few waves). A tiled kernel's transposed tile store
    is a permutation, which last_wins would otherwise sort with the lanes' order packed in."""
    if keys.size <= 1:
        return True
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo < 4 * keys.size:
        return int(np.bincount(keys - lo).max()) == 1
    s = np.sort(keys)
    return bool((s[1:] != s[:-1]).all())


def lds_read(ex, w, addr: np.ndarray, size: int, mask: np.ndarray) -> np.ndarray:
    """[n, lanes, size] bytes at LDS byte addresses `addr` ([n, lanes] int64) for lanes in `mask`."""
    addr = addr.astype(np.int64)
    unit = _unit(ex.st.lds, addr, size)
    units = ex.st.lds.view(_UNITS[unit])
    idx = (addr // unit)[..., None] + np.arange(size // unit)
    ok = mask[..., None] & (idx >= 0) & (idx < units.shape[1])
    rows = _rows(ex, w, idx.shape)
    if ok.all():
        return units[rows, idx].view(np.uint8).reshape(addr.shape + (size,))
    out = np.zeros(idx.shape, units.dtype)
    out[ok] = units[rows[ok], idx[ok]]
    return out.view(np.uint8).reshape(addr.shape + (size,))


def lds_write(ex, w, addr: np.ndarray, data: np.ndarray, mask: np.ndarray) -> None:
    """Store [n, lanes, size] bytes at LDS addresses for lanes in `mask` (highest lane wins a byte)."""
    size = data.shape[-1]
    addr = addr.astype(np.int64)
    unit = _unit(ex.st.lds, addr, size)
    units = ex.st.lds.view(_UNITS[unit])  # a lane writes all or none of each unit
    data = np.ascontiguousarray(data).view(_UNITS[unit])
    if size == unit and addr.size and mask.all() and int(addr.min()) >= 0 and int(addr.max()) < ex.st.lds.shape[1]:
        # every lane writes one whole unit inside the row (a ds_store_b32 with EXEC full): no masks, and no
        # ordering when the units are distinct
        cols, rows = addr // unit, ex.st.group[w].reshape(-1, 1)
        if _distinct((rows * units.shape[1] + cols).reshape(-1)):
            units[rows, cols] = data[..., 0]
            return
    idx = (addr // unit)[..., None] + np.arange(size // unit)
    ok = mask[..., None] & (idx >= 0) & (idx < units.shape[1])
    rows, cols, vals = _rows(ex, w, idx.shape)[ok], idx[ok], data[ok]
    keys = rows * units.shape[1] + cols
    keep = None if _distinct(keys) else last_wins(keys)
    if keep is not None:
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    units[rows, cols] = vals


def lds_atomic(ex, w, op: str, addr: np.ndarray, src: np.ndarray, cmp: np.ndarray | None, size: int,
               mask: np.ndarray) -> np.ndarray:
    """An atomic on LDS words ([n, lanes] addresses, values) in lane order; returns the old words (0 elsewhere)."""
    lds = ex.st.lds
    dt = np.dtype(f"<u{size}")
    a = addr.astype(np.int64)
    ok = mask & (a >= 0) & (a + size <= lds.shape[1])
    rows, offs = _rows(ex, w, a.shape)[ok], a[ok]
    cols = offs[:, None] + np.arange(size)

    def load(ls):
        return np.ascontiguousarray(lds[rows[ls][:, None], cols[ls]]).view(dt).reshape(-1)

    def store(ls, v):
        lds[rows[ls][:, None], cols[ls]] = np.ascontiguousarray(v.astype(dt)).view(np.uint8).reshape(-1, size)

    out = np.zeros(a.shape, dt)
    s = np.asarray(src).astype(dt)[ok]
    c = None if cmp is None else np.asarray(cmp).astype(dt)[ok]
    out[ok] = run_atomic(op, rows * lds.shape[1] + offs, s, c, load, store)
    return out
