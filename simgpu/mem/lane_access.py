"""Lane access: gather, scatter and atomics of many lanes' addresses, numpy over all lanes at once.

Addresses may have any shape (e.g. [waves, lanes]); lane order is their flat C order; a mask selects the
active lanes. Lanes are translated and checked first (simgpu.mem.resolve), so a faulting call changes no
memory. When several lanes store to the same byte, the highest lane wins; atomics must be naturally
aligned and apply in increasing lane order (simgpu.mem.atomics).

The usual access (aligned lanes within a few MiB of one linearly translating VRAM range) skips the
per-page translation: one VA-to-PA offset from the linear windows indexes VRAM directly.
"""

from __future__ import annotations

import numpy as np

from simgpu.fault import HardwareFault
from simgpu.mem import atomics
from simgpu.mem.lanes import all_distinct, last_wins
from simgpu.mem.physical import PhysicalMemory
from simgpu.mem.resolve import LaneResolver, Resolved
from simgpu.mem.windows import LinearWindows

LANE_DTYPES = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8", 16: "<u4"}
_UNIT = {1: 1, 2: 2, 4: 4, 8: 8, 16: 4}  # bytes a lane moves per element (16-byte lanes: four dwords)
_U64 = np.uint64


def as_addrs(addrs) -> np.ndarray:
    """Lane addresses as a 1-D uint64 array (negative int64 values wrap like a 64-bit register)."""
    a = np.asarray(addrs)
    if a.dtype != _U64:
        a = a.astype(np.int64, copy=False).view(_U64) if a.dtype.kind == "i" else a.astype(_U64)
    return a.reshape(-1)


def _as_values(values, size: int, lane_shape: tuple[int, ...]) -> np.ndarray:
    """Lane values as unsigned little-endian words, flat: shape (n,), or (n, 4) dwords for 16 bytes."""
    target = np.dtype(LANE_DTYPES[size])
    v = np.asarray(values)
    if v.dtype.itemsize == target.itemsize and v.dtype.kind in "uif":
        v = v.view(target)  # reinterpret floats and signed ints bit for bit
    else:
        v = v.astype(target)
    shape = lane_shape + ((4,) if size == 16 else ())
    if v.shape != shape:
        try:  # a scalar (or one row) for every lane
            v = np.broadcast_to(v, shape)
        except ValueError:
            raise ValueError(f"values have shape {v.shape}, expected {shape} for {size}-byte lanes") from None
    return v.reshape((-1, 4) if size == 16 else -1)


def _apart(addrs: np.ndarray, size: int) -> bool:
    """True if no two lanes' `size`-byte stores share a byte: the addresses are multiples of `size` (a power of
    two) and distinct, counted over their span when it is at most a few times the lanes (a tiled matrix
    product's stores: rows of 16 lanes, the batch's workgroups side by side, not ascending as a whole), else by
    sorting them (lanes.all_distinct); False when two lanes collide or the addresses are not aligned (then the
    general path, which orders colliding lanes, runs)."""
    if size & (size - 1) or (addrs & _U64(size - 1)).any():
        return False
    lo = addrs.min()
    slots = ((addrs - lo) >> _U64(size.bit_length() - 1)).astype(np.intp)
    return all_distinct(slots, int(slots.max()) + 1)


def _active(mask, n: int) -> np.ndarray | None:
    """Indices of the active lanes in flat lane order, or None for all."""
    if mask is None:
        return None
    m = np.asarray(mask).reshape(-1)
    if m.size != n:
        raise ValueError(f"mask has {m.size} lanes, addresses have {n}")
    if m.all():
        return None
    return np.flatnonzero(m)


class LaneAccess:
    """gather / scatter / atomic for 16 VMIDs over one PhysicalMemory."""

    def __init__(self, phys: PhysicalMemory, resolver: LaneResolver, windows: LinearWindows):
        self.phys, self.resolver, self.windows = phys, resolver, windows

    # ---- physical elements ------------------------------------------------------------------------------
    def read_units(self, region: np.ndarray, idx: np.ndarray, dtype: str, one_region: bool) -> np.ndarray:
        """Elements of `dtype` at element indices `idx` of each region's buffer."""
        if one_region:
            return self.phys.typed_vram(dtype)[idx]
        out = np.zeros(idx.shape, dtype=dtype)
        region = np.broadcast_to(region.reshape(region.shape + (1,) * (idx.ndim - region.ndim)), idx.shape)
        bufs = self.phys.region_buffers()
        for r in np.unique(region).tolist():
            sel = region == r
            out[sel] = bufs[r].view(dtype)[idx[sel]]
        return out

    def write_units(self, region: np.ndarray, idx: np.ndarray, vals: np.ndarray, dtype: str,
                    one_region: bool) -> None:
        """Store elements (1-D, distinct targets) into each region's buffer."""
        if one_region:
            self.phys.typed_vram(dtype)[idx] = vals
            return
        bufs = self.phys.region_buffers()
        for r in np.unique(region).tolist():
            sel = region == r
            bufs[r].view(dtype)[idx[sel]] = vals[sel]

    def _store(self, region: np.ndarray, idx: np.ndarray, vals: np.ndarray, dtype: str, one_region: bool) -> None:
        """Store 1-D lane-ordered elements; of several stores to one element the last one wins."""
        keys = idx if one_region else idx * (int(region.max()) + 1) + region
        keep = last_wins(keys)
        if keep is not None:
            region, idx, vals = region[keep], idx[keep], vals[keep]
        self.write_units(region, idx, vals, dtype, one_region)

    def _linear_units(self, vmid: int, a: np.ndarray, size: int, access: str) -> np.ndarray | None:
        """Fast path for the common access: aligned lanes within a few MiB that translate linearly (every
        page touched maps to VRAM at the same VA->PA offset and grants `access`): the element index of
        each lane in VRAM viewed as `size`-byte units (`[lanes, 4]` dwords for 16 bytes); None to take the
        general path (which also reports faults)."""
        unit = _UNIT[size]
        lo, hi = int(a.min()), int(a.max()) + size
        if hi - lo > (4 << 20) or (a & _U64(unit - 1)).any():
            return None
        linear = self.windows.linear_offset(vmid, lo, hi, access)
        if linear is None or linear[1]:
            return None
        base = linear[0]  # PA - VA for every lane
        if base + lo < 0 or base + hi > self.phys.vram_size:
            return None
        idx = (a.astype(np.int64) + base) >> (unit.bit_length() - 1)
        return idx[:, None] + np.arange(4) if size == 16 else idx

    # ---- gather / scatter -------------------------------------------------------------------------------
    def gather(self, vmid: int, addrs, size: int, mask=None) -> np.ndarray:
        """Load `size` bytes per lane: uint8/16/32/64 shaped like `addrs`, plus a trailing 4 (dwords) for 16."""
        dtype = LANE_DTYPES[size]
        shape = np.shape(addrs) + ((4,) if size == 16 else ())
        addrs = as_addrs(addrs)
        lanes = _active(mask, addrs.size)
        a = addrs if lanes is None else addrs[lanes]
        if a.size == 0:
            return np.zeros(shape, dtype=dtype)
        idx = self._linear_units(vmid, a, size, "read")
        if idx is not None:
            vals = self.phys.typed_vram(f"<u{_UNIT[size]}")[idx]
        else:
            vals = self._load(self.resolver.resolve(vmid, a, size, "read"), a, size)
        if lanes is not None:
            out = np.zeros((addrs.size, 4) if size == 16 else addrs.size, dtype=dtype)
            out[lanes] = vals
            vals = out
        return vals.reshape(shape)

    def _load(self, res: Resolved, a: np.ndarray, size: int) -> np.ndarray:
        """Load the lanes of a resolved access (PRT lanes read zero)."""
        unit = _UNIT[size]
        if not res.crossing and not (a & _U64(unit - 1)).any():
            region, off, live = res.lane_locations()
            idx = off >> (unit.bit_length() - 1)
            if size == 16:
                idx = idx[:, None] + np.arange(4)
            vals = self.read_units(region, idx, f"<u{unit}", res.one_region)
            if live is not None:
                vals[~live] = 0
            return vals
        region, off, live = res.byte_locations(size)
        b = self.read_units(region, off, "<u1", res.one_region)
        if live is not None:
            b[~live] = 0
        v = np.ascontiguousarray(b).view(LANE_DTYPES[size])
        return v if size == 16 else v.reshape(-1)

    def scatter(self, vmid: int, addrs, values, size: int, mask=None) -> None:
        """Store `size` bytes per active lane; for overlapping stores the highest lane wins, byte by byte."""
        vals = _as_values(values, size, np.shape(addrs))
        addrs = as_addrs(addrs)
        lanes = _active(mask, addrs.size)
        if lanes is not None:
            addrs, vals = addrs[lanes], vals[lanes]
        if addrs.size == 0:
            return
        if addrs.size < 2 or bool((addrs[1:] > addrs[:-1]).all()) or _apart(addrs, size):  # no two lanes collide
            idx = self._linear_units(vmid, addrs, size, "write")
            if idx is not None:
                self.phys.typed_vram(f"<u{_UNIT[size]}")[idx] = vals
                return
        res = self.resolver.resolve(vmid, addrs, size, "write")
        unit = _UNIT[size]
        if not res.crossing and not (addrs & _U64(unit - 1)).any():
            region, off, live = res.lane_locations()
            idx = off >> (unit.bit_length() - 1)
            if size == 16:  # four dword stores per lane, in lane order
                idx = (idx[:, None] + np.arange(4)).reshape(-1)
                region, live = np.repeat(region, 4), None if live is None else np.repeat(live, 4)
                vals = vals.reshape(-1)
            dtype = f"<u{unit}"
        else:
            region, idx, live = (x.reshape(-1) if x is not None else None for x in res.byte_locations(size))
            vals = np.ascontiguousarray(vals).view(np.uint8).reshape(-1)
            dtype = "<u1"
        if live is not None:
            region, idx, vals = region[live], idx[live], vals[live]
        if idx.size:
            self._store(region, idx, vals, dtype, res.one_region)

    # ---- atomics ----------------------------------------------------------------------------------------
    def atomic(self, vmid: int, op: str, addrs, src, cmp=None, size: int = 4, mask=None,
               return_old: bool = True) -> np.ndarray | None:
        """Atomic read-modify-write per active lane, in lane order; returns the old values (0 for inactive)."""
        if op not in atomics.OPS:
            raise ValueError(f"unknown atomic op {op!r}; expected one of {sorted(atomics.OPS)}")
        if size not in (4, 8):
            raise ValueError(f"atomic size must be 4 or 8, not {size}")
        if op == "cmpswap" and cmp is None:
            raise ValueError("cmpswap needs cmp")
        shape = np.shape(addrs)
        src = _as_values(src, size, shape)
        cmp = None if cmp is None else _as_values(cmp, size, shape)
        addrs = as_addrs(addrs)
        lanes = _active(mask, addrs.size)
        if lanes is None:
            lanes = np.arange(addrs.size)
        out = np.zeros(addrs.size, dtype=f"<u{size}")
        if lanes.size:
            out[lanes] = self._atomic_lanes(vmid, op, addrs[lanes], src[lanes],
                                            None if cmp is None else cmp[lanes], size)
        return out.reshape(shape) if return_old else None

    def _atomic_lanes(self, vmid: int, op: str, a: np.ndarray, src: np.ndarray, cmp: np.ndarray | None,
                      size: int) -> np.ndarray:
        """Atomics of the active lanes; returns their old values."""
        misaligned = (a & _U64(size - 1)) != 0
        if misaligned.any():
            lane = int(np.argmax(misaligned))
            raise HardwareFault(kind="memory_violation", address=int(a[lane]), access="atomic", vmid=vmid,
                           message=f"misaligned {size}-byte atomic")
        res = self.resolver.resolve(vmid, a, size, "atomic")
        region, off, live = res.lane_locations()
        old = np.zeros(a.size, dtype=f"<u{size}")
        sel = np.arange(a.size) if live is None else np.flatnonzero(live)
        region, idx = region[sel], off[sel] >> (size.bit_length() - 1)
        keys = idx if res.one_region else idx * (int(region.max(initial=0)) + 1) + region
        dtype, one = f"<u{size}", res.one_region

        def load(ls: np.ndarray) -> np.ndarray:
            return self.read_units(region[ls], idx[ls], dtype, one)

        def store(ls: np.ndarray, v: np.ndarray) -> None:
            self.write_units(region[ls], idx[ls], v, dtype, one)

        if sel.size:
            old[sel] = atomics.run(op, keys, src[sel], None if cmp is None else cmp[sel], load, store)
        return old
