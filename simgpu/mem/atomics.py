"""Memory atomics: what each op computes, and applying a batch of lanes in a fixed serial order.

Lanes are applied one by one in increasing lane order: a lane sees the results of every lower lane
that hit the same address. Different addresses do not interact, so lanes are batched: all lanes at
distinct addresses run as one numpy operation; lanes that share an address run in rounds (the k-th
lane of every address in round k). add/sub with shared addresses use a segmented prefix sum instead
(the common "global counter" pattern), which gives the same bits as the serial order.

Values are little-endian unsigned words ('<u4' or '<u8'); signed and float ops reinterpret them.

fmin/fmax follow IEEE 754-2008 minNum/maxNum, which is what gfx11 (pre-gfx12) atomics implement: a
quiet NaN operand loses to a number; two NaNs give a quiet NaN; a signaling NaN operand gives that
NaN quieted (the memory operand's if both are NaN). -0 is ordered below +0 (fmin(-0, +0) = -0,
fmax(-0, +0) = +0). fadd (global_atomic_add_f32, an extra beyond the brief) is an IEEE add with
round-to-nearest-even and no denormal flushing; a NaN operand comes back quieted (the memory operand's
first), an invalid operation (inf - inf) gives the positive default quiet NaN. NaN bits are fixed
here rather than left to the host FPU, so results are identical on every machine.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simgpu.mem.lanes import stable_order

OPS = frozenset({"add", "sub", "smin", "umin", "smax", "umax", "fmin", "fmax", "fadd", "and", "or", "xor",
                 "inc", "dec", "swap", "cmpswap"})

Load = Callable[[np.ndarray], np.ndarray]
Store = Callable[[np.ndarray, np.ndarray], None]


def _fminmax(old: np.ndarray, src: np.ndarray, is_min: bool) -> np.ndarray:
    """IEEE 754-2008 minNum/maxNum on raw float bits (see the module docstring)."""
    u = old.dtype
    f = np.dtype(f"<f{u.itemsize}")
    quiet = u.type(1 << (22 if u.itemsize == 4 else 51))  # top mantissa bit
    a, b = old.view(f), src.view(f)
    a_nan, b_nan = np.isnan(a), np.isnan(b)
    # equal values differ only in the sign of zero: OR of the bits keeps -0 (min), AND keeps +0 (max)
    tie = (old | src) if is_min else (old & src)
    first = (a < b) if is_min else (a > b)
    second = (b < a) if is_min else (b > a)
    res = np.where(first, old, np.where(second, src, tie))
    res = np.where(a_nan & ~b_nan, src, res)
    res = np.where(b_nan & ~a_nan, old, res)
    res = np.where(a_nan & b_nan, old | quiet, res)
    a_snan = a_nan & ((old & quiet) == 0)
    b_snan = b_nan & ((src & quiet) == 0)
    res = np.where(b_snan, src | quiet, res)
    return np.where(a_snan, old | quiet, res)


def _fadd(old: np.ndarray, src: np.ndarray) -> np.ndarray:
    """IEEE add on raw float bits with host-independent NaN results (see the module docstring)."""
    u = old.dtype
    f = np.dtype(f"<f{u.itemsize}")
    quiet = u.type(1 << (22 if u.itemsize == 4 else 51))
    default_nan = u.type(0x7FC00000 if u.itemsize == 4 else 0x7FF8 << 48)
    a, b = old.view(f), src.view(f)
    with np.errstate(all="ignore"):
        total = a + b
    # the host FPU picks NaN payloads its own way (x86 and ARM differ): fix them
    res = np.where(np.isnan(total), default_nan, total.view(u))
    res = np.where(np.isnan(b), src | quiet, res)
    return np.where(np.isnan(a), old | quiet, res)


def apply(op: str, old: np.ndarray, src: np.ndarray, cmp: np.ndarray | None = None) -> np.ndarray:
    """The new memory value of atomic `op` for each lane (old, src, cmp: unsigned words)."""
    u = old.dtype
    s = np.dtype(f"<i{u.itemsize}")
    one, zero = u.type(1), u.type(0)
    match op:
        case "add":
            return old + src
        case "sub":
            return old - src
        case "smin":
            return np.minimum(old.view(s), src.view(s)).view(u)
        case "smax":
            return np.maximum(old.view(s), src.view(s)).view(u)
        case "umin":
            return np.minimum(old, src)
        case "umax":
            return np.maximum(old, src)
        case "and":
            return old & src
        case "or":
            return old | src
        case "xor":
            return old ^ src
        case "inc":  # AMD: old >= src ? 0 : old + 1
            return np.where(old >= src, zero, old + one)
        case "dec":  # AMD: (old == 0 || old > src) ? src : old - 1
            return np.where((old == zero) | (old > src), src, old - one)
        case "swap":
            return src.copy()
        case "cmpswap":
            return np.where(old == cmp, src, old)
        case "fmin" | "fmax":
            return _fminmax(old, src, op == "fmin")
        case "fadd":
            return _fadd(old, src)
    raise ValueError(f"unknown atomic op {op!r}")


def run(op: str, keys: np.ndarray, src: np.ndarray, cmp: np.ndarray | None, load: Load, store: Store) -> np.ndarray:
    """Apply `op` for every lane in lane order; `keys` name each lane's memory word; returns the old values.

    `load(lanes)` reads the current words of those lanes, `store(lanes, values)` writes them; both are
    only called with lanes whose keys are distinct.
    """
    m = keys.size
    if m > 1 and not (keys[1:] > keys[:-1]).all():  # else strictly increasing: no shared address
        order, sk = stable_order(keys)
        start = np.ones(m, dtype=bool)
        start[1:] = sk[1:] != sk[:-1]
    else:
        order, start = None, np.ones(m, dtype=bool)
    if start.all():
        lanes = np.arange(m)
        old = load(lanes)
        store(lanes, apply(op, old, src, cmp))
        return old
    if op in ("add", "sub"):
        return _scan_add_sub(op, order, start, src, load, store)
    return _rounds(op, order, start, src, cmp, load, store)


def _group_start_pos(start: np.ndarray) -> np.ndarray:
    """For each position of a sorted run list: the position where its run starts."""
    pos = np.arange(start.size)
    return np.maximum.accumulate(np.where(start, pos, 0))


def _scan_add_sub(op: str, order: np.ndarray, start: np.ndarray, src: np.ndarray, load: Load,
                  store: Store) -> np.ndarray:
    """add/sub with shared addresses: an exclusive segmented prefix sum reproduces the serial order."""
    v = src[order]
    cs = np.cumsum(v, dtype=v.dtype)  # wraps modulo 2^bits like the hardware adder
    st = _group_start_pos(start)
    before = cs[st] - v[st]
    excl = cs - v - before
    reps = order[start]  # lowest lane of each address
    gid = np.cumsum(start) - 1
    mem = load(reps)
    end = np.append(start[1:], True)
    total = (cs - before)[end]
    old_sorted = mem[gid] + excl if op == "add" else mem[gid] - excl
    store(reps, mem + total if op == "add" else mem - total)
    old = np.empty_like(src)
    old[order] = old_sorted
    return old


def _rounds(op: str, order: np.ndarray, start: np.ndarray, src: np.ndarray, cmp: np.ndarray | None, load: Load,
            store: Store) -> np.ndarray:
    """Round k applies the k-th lane (in lane order) of every address: distinct keys within a round."""
    m = order.size
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(m) - _group_start_pos(start)
    by_rank, _ = stable_order(rank)
    bounds = np.concatenate(([0], np.cumsum(np.bincount(rank))))
    old = np.empty_like(src)
    for r in range(bounds.size - 1):
        sel = by_rank[bounds[r]:bounds[r + 1]]
        o = load(sel)
        store(sel, apply(op, o, src[sel], None if cmp is None else cmp[sel]))
        old[sel] = o
    return old
