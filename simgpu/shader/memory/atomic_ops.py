"""What memory atomics compute, and applying them in lane order to any memory (global, LDS, scratch).

The MMU (simgpu.mem.atomics) implements the common ops (add, sub, min/max, and/or/xor, inc/dec, swap,
bitwise cmpswap, fadd, fmin/fmax as IEEE minNum/maxNum). The shader adds the ones only some encodings
have, from the RDNA3 ISA pseudo-code:
- csub (GLOBAL/BUFFER_ATOMIC_CSUB_U32): old >= src ? old - src : 0 (clamped subtract).
- rsub (DS_RSUB): src - old.  mskor (DS_MSKOR): (old & ~src) | data2.  wrap (DS_WRAP_RTN_B32):
  old >= src ? old - src : old + data2.
- fcmpswap (*_CMPSWAP_F32, DS_CMPSTORE_F32/F64): a float compare, so +0 == -0 and NaN never matches.
- condxchg (DS_CONDXCHG32_RTN_B64): per 32-bit half, write data[30:0] when data[31] is set.
gfx12 (RDNA4 ISA pseudo-code) adds:
- fminnum / fmaxnum (*_ATOMIC_MIN_NUM_F32 / MAX_NUM, DS_MIN_NUM_F32/F64 / MAX_NUM): IEEE 754-2019
  minimumNumber / maximumNumber: a NaN operand (signaling or quiet) yields the other, two NaNs the data
  operand quieted; -0 < +0.
- condsub (*_ATOMIC_COND_SUB_U32, DS_COND_SUB_U32): old >= src ? old - src : old.
- pkaddf16 / pkaddbf16 (*_ATOMIC_PK_ADD_F16 / BF16, DS_PK_ADD_F16 / BF16): two 16-bit adds, rounded to
  nearest even (bf16: computed in f32 and rounded to bf16, NaN quieted).
Ops are applied one lane at a time in increasing lane order ([waves, lanes] C order): a lane sees
every lower lane's effect on the same address. That is the hardware's per-address serialization made
deterministic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simgpu.fault import HardwareFault
from simgpu.mem import atomics
from simgpu.mem.lanes import stable_order

TWO_DATA = frozenset({"cmpswap", "fcmpswap", "mskor", "wrap"})  # ops with a second data operand
_DS_NAMES = {"cmpstore": "cmpswap", "storexchg": "swap"}  # DS's names for what the other encodings call these


def op_of(name: str, kind: str) -> str:
    """The memory op an atomic mnemonic names: its operation (`add`, `min`, `cmpstore`, ...) and the type
    letter of its data (`u`, `i`, `f`, `b`): min/max are signed, unsigned or float; add and cmpswap of floats
    are fadd and fcmpswap."""
    name = _DS_NAMES.get(name, name)
    if name in ("min", "max"):
        return {"i": "s", "u": "u", "f": "f"}[kind] + name
    if kind == "f" and name in ("add", "cmpswap"):
        return "f" + name
    return name


def apply(op: str, old: np.ndarray, src: np.ndarray, cmp: np.ndarray | None) -> np.ndarray:
    """The new memory words of atomic `op` (old, src, cmp: unsigned words of one width)."""
    if op in atomics.OPS:
        return atomics.apply(op, old, src, cmp)
    u = old.dtype
    match op:
        case "csub":
            return np.where(old >= src, old - src, u.type(0))
        case "rsub":
            return src - old
        case "mskor":
            return (old & ~src) | cmp
        case "wrap":
            return np.where(old >= src, old - src, old + cmp)
        case "fcmpswap":
            f = np.dtype(f"<f{u.itemsize}")
            return np.where(old.view(f) == cmp.view(f), src, old)
        case "condxchg":
            lo_m, hi_m = u.type(0x7FFFFFFF), u.type(0x7FFFFFFF << 32)
            lo = np.where((src & u.type(1 << 31)) != 0, src & lo_m, old & u.type(0xFFFFFFFF))
            hi = np.where((src & u.type(1 << 63)) != 0, src & hi_m, old & u.type(0xFFFFFFFF << 32))
            return lo | hi
        case "fminnum" | "fmaxnum":
            return _fnum(old, src, op == "fminnum")
        case "condsub":
            return np.where(old >= src, old - src, old)
        case "pkaddf16" | "pkaddbf16":
            return _pk_add(old, src, op == "pkaddbf16")
    raise ValueError(f"unknown atomic op {op!r}")


def _fnum(old: np.ndarray, src: np.ndarray, is_min: bool) -> np.ndarray:
    """minimumNumber / maximumNumber on raw float bits: the data (src) wins the compare, a NaN yields the other
    operand, two NaNs src quieted; -0 < +0."""
    u = old.dtype
    f = np.dtype(f"<f{u.itemsize}")
    quiet = u.type(1 << (22 if u.itemsize == 4 else 51))
    t, s = old.view(f), src.view(f)
    neg_s, neg_t = (src >> u.type(8 * u.itemsize - 1)) != 0, (old >> u.type(8 * u.itemsize - 1)) != 0
    zeros = (s == 0) & (t == 0)
    src_wins = ((s < t) | (zeros & neg_s & ~neg_t)) if is_min else ((s > t) | (zeros & ~neg_s & neg_t))
    res = np.where(src_wins, src, old)
    ns, nt = np.isnan(s), np.isnan(t)
    res = np.where(ns & ~nt, old, res)
    res = np.where(nt & ~ns, src, res)
    return np.where(ns & nt, src | quiet, res)


def _pk_add(old: np.ndarray, src: np.ndarray, bf16: bool) -> np.ndarray:
    """Two packed 16-bit float adds (f16 or bf16) on 32-bit words."""
    lanes = []
    for shift in (0, 16):
        a = ((old >> np.uint32(shift)) & np.uint32(0xFFFF)).astype(np.uint16)
        b = ((src >> np.uint32(shift)) & np.uint32(0xFFFF)).astype(np.uint16)
        with np.errstate(all="ignore"):
            if bf16:
                x = (a.astype(np.uint32) << np.uint32(16)).view(np.float32)
                y = (b.astype(np.uint32) << np.uint32(16)).view(np.float32)
                r = (x + y).view(np.uint32)
                nan = np.isnan(x + y)
                rounded = (r + np.uint32(0x7FFF) + ((r >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
                h = np.where(nan, (r >> np.uint32(16)) | np.uint32(0x40), rounded).astype(np.uint16)
            else:
                h = (a.view(np.float16) + b.view(np.float16)).view(np.uint16)
        lanes.append(h.astype(np.uint32) << np.uint32(shift))
    return (lanes[0] | lanes[1]).astype(old.dtype)


def run(op: str, keys: np.ndarray, src: np.ndarray, cmp: np.ndarray | None,
        load: Callable, store: Callable) -> np.ndarray:
    """Apply `op` lane by lane (keys name each lane's word); load/store see only distinct keys. Returns old."""
    if op in atomics.OPS:
        return atomics.run(op, keys, src, cmp, load, store)
    m = keys.size
    old = np.zeros_like(src)
    if m == 0:
        return old
    order, sk = stable_order(keys)
    start = np.ones(m, dtype=bool)
    start[1:] = sk[1:] != sk[:-1]
    pos = np.arange(m)
    rank = np.empty(m, dtype=np.int64)
    rank[order] = pos - np.maximum.accumulate(np.where(start, pos, 0))
    # round k applies the k-th lane of every address: keys are distinct within a round
    for r in range(int(rank.max()) + 1):
        sel = np.flatnonzero(rank == r)
        o = load(sel)
        store(sel, apply(op, o, src[sel], None if cmp is None else cmp[sel]))
        old[sel] = o
    return old


def global_atomic(ex, op: str, addr: np.ndarray, src: np.ndarray, cmp: np.ndarray | None, size: int,
                  mask: np.ndarray) -> np.ndarray:
    """An atomic on virtual memory for the lanes in `mask` ([n, lanes]); returns old words (0 elsewhere)."""
    if op in atomics.OPS:
        return ex.mem.atomic(ex.vmid, op, addr, src, cmp, size=size, mask=mask)
    flat = addr.reshape(-1)
    lanes = np.flatnonzero(mask.reshape(-1))
    a = flat[lanes]
    bad = (a & np.uint64(size - 1)) != 0
    if bad.any():
        raise HardwareFault(kind="memory_violation", address=int(a[np.argmax(bad)]), access="atomic", vmid=ex.vmid,
                       message=f"misaligned {size}-byte atomic")
    dt = np.dtype(f"<u{size}")
    s = src.reshape(-1)[lanes].astype(dt)
    c = None if cmp is None else cmp.reshape(-1)[lanes].astype(dt)

    def load(ls):
        return ex.mem.gather(ex.vmid, a[ls], size).astype(dt)

    def store(ls, v):
        ex.mem.scatter(ex.vmid, a[ls], v, size)

    out = np.zeros(flat.size, dt)
    out[lanes] = run(op, a, s, c, load, store)
    return out.reshape(addr.shape)

