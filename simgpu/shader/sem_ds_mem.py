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

from .sem_vmem_atomic_ops import run as run_atomic


def _rows(ex, w, shape) -> np.ndarray:
    return np.broadcast_to(ex.st.group[w].reshape((-1,) + (1,) * (len(shape) - 1)), shape)


def _dword_aligned(lds: np.ndarray, addr: np.ndarray, size: int) -> bool:
    """Whole, aligned dwords in an LDS whose rows are whole dwords: then a lane's access is dwords,
    each entirely inside or outside the allocation, and the byte rules give the same result per dword."""
    return size % 4 == 0 and lds.shape[1] % 4 == 0 and addr.size > 0 and \
        not int(np.bitwise_or.reduce(addr, axis=None)) & 3


def lds_read(ex, w, addr: np.ndarray, size: int, mask: np.ndarray) -> np.ndarray:
    """[n, lanes, size] bytes at LDS byte addresses `addr` ([n, lanes] int64) for lanes in `mask`."""
    lds = ex.st.lds
    addr = addr.astype(np.int64)
    if _dword_aligned(lds, addr, size):  # gather dwords, not bytes: a quarter of the index work
        words = lds.view(np.uint32)
        idx = (addr >> 2)[..., None] + np.arange(size // 4)
        ok = mask[..., None] & (idx >= 0) & (idx < words.shape[1])
        rows = _rows(ex, w, idx.shape)
        if ok.all():
            return words[rows, idx].view(np.uint8).reshape(addr.shape + (size,))
        out = np.zeros(idx.shape, np.uint32)
        out[ok] = words[rows[ok], idx[ok]]
        return out.view(np.uint8).reshape(addr.shape + (size,))
    idx = addr[..., None] + np.arange(size)
    ok = mask[..., None] & (idx >= 0) & (idx < lds.shape[1])
    out = np.zeros(idx.shape, np.uint8)
    out[ok] = lds[_rows(ex, w, idx.shape)[ok], idx[ok]]
    return out


def lds_write(ex, w, addr: np.ndarray, data: np.ndarray, mask: np.ndarray) -> None:
    """Store [n, lanes, size] bytes at LDS addresses for lanes in `mask` (highest lane wins a byte)."""
    lds = ex.st.lds
    size = data.shape[-1]
    addr = addr.astype(np.int64)
    if _dword_aligned(lds, addr, size):  # dwords: a lane writes all or none of each one
        lds, size = lds.view(np.uint32), size // 4
        data = np.ascontiguousarray(data).view(np.uint32)
        addr = addr >> 2
    idx = addr[..., None] + np.arange(size)
    ok = mask[..., None] & (idx >= 0) & (idx < lds.shape[1])
    rows, cols, vals = _rows(ex, w, idx.shape)[ok], idx[ok], data[ok]
    keep = last_wins(rows * lds.shape[1] + cols)
    if keep is not None:
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    lds[rows, cols] = vals


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
