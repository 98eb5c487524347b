"""The kernarg segment of a kernel launch: explicit arguments plus the hidden arguments of code object v5.

Shared by the testbed and the runtime (runtime may import simgpu.hw). Hidden arguments are filled the
way ROCm's runtime (CLR) fills them for hipModuleLaunchKernel: block counts, group sizes, remainders
(0: HIP grids count whole workgroups), grid dimensions, dynamic LDS size, queue pointer; anything the
caller does not supply (printf/hostcall buffers, heap, multigrid sync) is 0.
"""

from __future__ import annotations

import struct

import numpy as np

_AXIS = {"x": 0, "y": 1, "z": 2}


def grid_dims(grid, block) -> int:
    """hidden_grid_dims: the number of dimensions used by the launch."""
    return 3 if grid[2] > 1 or block[2] > 1 else 2 if grid[1] > 1 or block[1] > 1 else 1


def hidden_value(kind: str, grid, block, extra: dict | None = None) -> int:
    """The value ROCm stores for hidden argument `kind` (grid in workgroups, block in work-items)."""
    if extra and kind in extra:
        return extra[kind]
    axis = _AXIS.get(kind[-1]) if kind[-2:-1] == "_" else None
    if kind.startswith("hidden_block_count_") and axis is not None:
        return grid[axis]
    if kind.startswith("hidden_group_size_") and axis is not None:
        return block[axis]
    if kind.startswith("hidden_remainder_"):
        return 0  # whole workgroups only: HIP launches count workgroups
    if kind == "hidden_grid_dims":
        return grid_dims(grid, block)
    return 0


def explicit_args(args_meta: list[dict]) -> list[dict]:
    """The metadata entries of the explicit (non-hidden) arguments, in order."""
    return [a for a in args_meta if not a.get(".value_kind", "").startswith("hidden_")]


def segment_size(args_meta: list[dict], kernarg_size: int) -> int:
    """Bytes of the kernarg segment a launch writes: the descriptor's KERNARG_SIZE, every argument, at least 16."""
    return max(kernarg_size, 16, *(a[".offset"] + a[".size"] for a in args_meta))


def pack(args_meta: list[dict], kernarg_size: int, values: list, grid, block, extra: dict | None = None) -> bytes:
    """The kernarg segment: explicit `values` in metadata order, hidden arguments filled per code object v5."""
    buf = bytearray(segment_size(args_meta, kernarg_size))
    explicit = explicit_args(args_meta)
    if len(explicit) != len(values):
        raise TypeError(f"kernel takes {len(explicit)} arguments, got {len(values)}")
    for meta, value in zip(explicit, values, strict=True):
        put(buf, meta, value)
    for meta in args_meta:
        kind = meta.get(".value_kind", "")
        if kind.startswith("hidden_"):
            put(buf, meta, hidden_value(kind, grid, block, extra))
    return bytes(buf)


def put(buf: bytearray, meta: dict, value) -> None:
    """Store one argument value at its metadata offset (floats by size, numpy scalars by their bytes)."""
    off, size = meta[".offset"], meta[".size"]
    if isinstance(value, float | np.floating) and not isinstance(value, np.integer):
        fmt = {2: "<e", 4: "<f", 8: "<d"}[size]
        struct.pack_into(fmt, buf, off, float(value))
    elif isinstance(value, np.generic):
        raw = value.tobytes()
        buf[off:off + size] = raw[:size].ljust(size, b"\0")
    else:
        buf[off:off + size] = (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
