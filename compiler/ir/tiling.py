"""Tiled matrix products through LDS, and float16/bfloat16 ones on the matrix cores.

A kernel whose one reduction sums over one axis k (a multiple of 16), and whose output has two trailing
dimensions i and j divisible by 16, runs as 16x16 workgroups, each work-item computing Ui x Uj outputs (Ui = 4
when i's 16-row tiles are a multiple of 4, else their largest divisor up to 8; Uj likewise for j): work-item
(y, x) owns rows tile_i*16Ui + y*Ui + 0..Ui-1 and columns tile_j*16Uj + x*Uj + 0..Uj-1. (Each dimension takes
its own factor: the gradient of a 784-wide weight, 128 x 784, is 4 x 7 per work-item, 112 waves where 1 x 1
made 3136. On the simulated GPU a wave's registers are loaded and stored around every barrier-to-barrier
interval, so fewer waves doing more each cost less: 2.7 ms of native code a launch where 4 x 1 took 6.5.)
The loop over k runs in chunks of 16m (k = ko*16m + ki): m is the largest divisor of k / 16 whose tiles fit
a workgroup's LDS (LDS_BYTES). The reduction's input is lowered once at placeholder indices (i, j, k); its
largest parts that vary with k and with exactly one of i and j are staged (A[i, k], B[k, j], or a float
computation over such loads, as relu(h + b) fused into A: computed once per tile element, not once per output
that reads it; _staged): before the ki loop the workgroup computes its 16Ui x 16m (or 16Uj x 16m) tile of it in LDS,
laid out [i or j][k], 16 values of k at a time in a loop over the chunk's m parts (each work-item loads Ui or
Uj elements per part, consecutive work-items along k for an (i, k) input and along j for a (k, j) one, so
global loads stay coalesced for row-major operands), and a barrier follows; inside the loop each output reads
it back at [row or column][ki], consecutive words per row that merge into wide LDS loads. When another chunk
follows, a second barrier ends the step before the tiles are overwritten. Loads that do not qualify stay
global. The Ui x Uj outputs share every staged read, so a work-item makes Ui + Uj LDS reads for Ui*Uj
multiply-adds. Each output's sum runs over k in order whatever the factors and the chunk: they change which
work-item computes an output and where its operands wait, not its value.

Why chunks of more than 16: every barrier ends a step of the simulated GPU's JIT tier (an interval,
simgpu/shader/jit/barrier.py) with its Python around it; x @ w1 of bench_train (64 x 784 @ 784 x 128, two
workgroups) ran 98 of them per launch, now 14 (chunks of 112, 56 KiB of tiles), and the 784 x 128 gradient
(k = 64) one chunk and one barrier instead of eight.

The staged values are the original loads (and computations) with the placeholders substituted, so the index
proof covers them as written.
"""

from __future__ import annotations

from math import prod

from compiler.dtypes import dtypes
from compiler.ir.index import c, unflatten
from compiler.ir.ops import Ops, UOp
from compiler.ir.rewrite import substitute

TILE = 16
MAX_UNROLL = 8  # outputs per work-item along one dimension: 7 x 7 accumulators and 14 staged reads still fit
LDS_BYTES = 64 * 1024  # a workgroup's LDS on gfx11 (runtime.limits): the staged tiles of one k chunk


def _ids(u: UOp) -> set[UOp]:
    return {x for x in u.toposort() if x.op in (Ops.SPECIAL, Ops.RANGE)}


def applies(lw) -> bool:
    """Whether the kernel has the shape of a tiled matrix product (module docstring)."""
    if len(lw.reduces) != 1 or len(lw.stores) != 1:
        return False
    op, axes, full = lw.reduces[0].arg
    dims = [d for d, s in enumerate(lw.shape) if s != 1]
    return op is Ops.ADD and len(axes) == 1 and full[axes[0]] % TILE == 0 and len(dims) >= 2 and \
        lw.shape[dims[-1]] % TILE == 0 and lw.shape[dims[-2]] % TILE == 0


def _frame(lw, tile_i: int, tile_j: int):
    """(batch index, di, dj, grid ids gx gy, placeholders for i, j, k, batch count) shared by both plans, for
    workgroup tiles of tile_i rows and tile_j columns."""
    dims = [d for d, s in enumerate(lw.shape) if s != 1]
    di, dj = dims[-2], dims[-1]
    batch = dims[:-2]
    n_batch = prod(lw.shape[d] for d in batch)
    gx, gy = lw.special("group", 0, lw.shape[dj] // tile_j), lw.special("group", 1, lw.shape[di] // tile_i)
    gz = lw.special("group", 2, n_batch)
    base = [c(0)] * len(lw.shape)
    for d, v in zip(batch, unflatten(gz, tuple(lw.shape[d] for d in batch)), strict=True):
        base[d] = v
    ph = tuple(UOp(Ops.RANGE, dtypes.int32, (c(TILE),), n) for n in ("tile_i", "tile_j", "tile_k"))
    return base, di, dj, gx, gy, ph, n_batch


def _staged(value: UOp, ph_i: UOp, ph_j: UOp, ph_k: UOp) -> list[tuple[UOp, bool]]:
    """(node, by_row) for what the tiles hold: the largest parts of the reduction's input that vary with k and
    exactly one of i and j, a load or a float computation over such loads (a bias and ReLU's mask fused into
    A, as in the gradient of a hidden layer's weights), in the order of value.toposort(). Staged whole, such a
    part is computed once per element of the tile rather than once for every output that reads it. Loads that
    vary with i, j and k stay global; index arithmetic is never staged (the proof reads it as written)."""
    found, seen, todo = set(), set(), [value]
    while todo:
        u = todo.pop()
        if u in seen:
            continue
        seen.add(u)
        deps = _ids(u) & {ph_i, ph_j, ph_k}
        if ph_k not in deps:
            continue
        if (ph_i in deps) != (ph_j in deps) and (u.op is Ops.LOAD or u.dtype.is_float):
            found.add(u)
        elif u.op is not Ops.LOAD:
            todo.extend(u.src)
    return [(u, ph_i in _ids(u)) for u in value.toposort() if u in found]


def _unroll(tiles: int) -> int:
    """A dimension's outputs per work-item, for `tiles` tiles of 16 (module docstring)."""
    return 4 if tiles % 4 == 0 else max(f for f in range(1, MAX_UNROLL + 1) if tiles % f == 0)


def plan(lw):
    """The tiled lowering (sink, geometry) of Lowerer lw's kernel, or None when it does not apply or nothing
    would be staged."""
    if not applies(lw):
        return None
    (red,) = lw.reduces
    _, (k,), full = red.arg
    dims = [d for d, s in enumerate(lw.shape) if s != 1]
    up_i, up_j = (_unroll(lw.shape[d] // TILE) for d in dims[-2:])
    span_i, span_j = TILE * up_i, TILE * up_j  # rows and columns of a workgroup's tile
    base, di, dj, gx, gy, (ph_i, ph_j, ph_k), n_batch = _frame(lw, span_i, span_j)
    lx, ly = lw.special("local", 0, TILE), lw.special("local", 1, TILE)
    true = UOp.const(dtypes.bool, True)
    at = list(base)
    at[di], at[dj], at[k] = ph_i, ph_j, ph_k
    value = lw.lower(red.src[0], tuple(at), true)
    staged = _staged(value, ph_i, ph_j, ph_k)
    if not staged:
        return None
    # k in chunks of 16m: the largest m dividing k / 16 whose tiles fit LDS_BYTES (module docstring)
    row_bytes = sum((span_i if by_row else span_j) * load.dtype.itemsize * TILE for load, by_row in staged)
    steps = full[k] // TILE
    m = max([1] + [d for d in range(2, steps + 1) if steps % d == 0 and d * row_bytes <= LDS_BYTES])
    kc = TILE * m
    ko = lw.new_range(full[k] // kc)
    k0 = ko * kc if ko.op is Ops.RANGE else c(0)
    # the chunk's tiles are staged 16 values of k at a time, in a loop over its m parts (unrolled, the
    # staging of 7 parts made LLVM's compile of a kernel 15 times longer)
    kq = lw.new_range(m, *([ko] if ko.op is Ops.RANGE else []))
    kq0 = k0 + kq * TILE if kq.op is Ops.RANGE else k0
    flat = ly * TILE + lx  # the work-item's number in the workgroup
    stores, reads = [], {}
    for load, by_row in staged:
        span = span_i if by_row else span_j
        lds = lw.new_lds(load.dtype, span * kc)
        for q in range(up_i if by_row else up_j):
            e = flat + q * TILE * TILE
            if by_row:  # an (i, k) input: consecutive work-items take consecutive k
                p, kk = e // TILE, e % TILE
            else:  # a (k, j) input: consecutive work-items take consecutive j
                p, kk = e % span, e // span
            v = substitute(load, {ph_i if by_row else ph_j: (gy if by_row else gx) * span + p, ph_k: kq0 + kk})
            stores.append(UOp(Ops.STORE, dtypes.int32, (lds, p * kc + (kq * TILE if kq.op is Ops.RANGE else c(0)) +
                                                           kk, v)))
        reads[load] = (lds, by_row)
    if kq.op is Ops.RANGE:
        stores = [UOp(Ops.ENDRANGE, dtypes.int32, (kq, *stores))]
    barrier = UOp(Ops.BARRIER, dtypes.int32, tuple(stores))
    ki = lw.new_range(kc, *([ko] if ko.op is Ops.RANGE else []), barrier)
    accs, idxs, assigns = [], [], []
    for ui in range(up_i):
        for uj in range(up_j):
            mapping = {load: UOp(Ops.LOAD, load.dtype, (UOp(Ops.AFTER, lds.dtype, (lds, barrier)),
                                                         ((ly * up_i + ui) if by_row else (lx * up_j + uj)) * kc +
                                                         ki))
                       for load, (lds, by_row) in reads.items()}
            row, col = gy * span_i + ly * up_i + ui, gx * span_j + lx * up_j + uj
            mapping |= {ph_i: row, ph_j: col, ph_k: k0 + ki}
            acc = lw.new_acc(red.dtype, 0)
            assigns.append(UOp(Ops.ASSIGN, red.dtype, (acc, acc.alu(Ops.ADD, substitute(value, mapping)))))
            accs.append(acc)
            out = list(base)
            out[di], out[dj] = row, col
            idxs.append(tuple(out))
    end = UOp(Ops.ENDRANGE, dtypes.int32, (ki, *assigns))
    if ko.op is Ops.RANGE:  # the next step's staging must wait until every work-item has read these tiles
        end = UOp(Ops.ENDRANGE, dtypes.int32, (ko, UOp(Ops.BARRIER, dtypes.int32, (end,))))
    for acc, at in zip(accs, idxs, strict=True):
        lw.memo[(red, at, true)] = UOp(Ops.AFTER, red.dtype, (acc, end))
    grid = (lw.shape[dj] // span_j, lw.shape[di] // span_i, n_batch)
    return lw.finish(idxs[0], true, true, grid, (TILE, TILE, 1), "M", more_idx=idxs[1:])


WMMA_TYPES = ("float16", "bfloat16")
WMMA_TILE = 16


def _wmma_factors(red: UOp) -> tuple[UOp, UOp] | None:
    """The two factors of a float32 sum of float16 (or bfloat16) products, as matmul builds it, or None."""
    src = red.src[0]
    if red.dtype != dtypes.float32 or src.op is not Ops.CAST or src.src[0].op is not Ops.MUL:
        return None
    x, y = src.src[0].src
    return (x, y) if x.dtype == y.dtype and x.dtype.name in WMMA_TYPES else None


def plan_wmma(lw):
    """A float16/bfloat16 matrix product on gfx11's matrix cores: one wave32 workgroup per 16x16 output tile.

    The sum's factors are lowered at placeholder indices (i, j, k); the one that varies with i and k only is
    A, with j and k only B (else no WMMA). Lane l holds A's row l % 16 and B's column l % 16 for k = ko*16 +
    0..15 (16 loads each per step, substituted into the factors) and accumulates D's rows 2r + l // 16,
    column l % 16, r = 0..7, in 8 float32 registers: 8 stores per lane. Products are exact (the AST's
    product rounded to float16 first; the matrix core does not round it)."""
    if "wmma" not in lw.features or not applies(lw):
        return None
    (red,) = lw.reduces
    factors = _wmma_factors(red)
    if factors is None:
        return None
    _, (k,), full = red.arg
    base, di, dj, gx, gy, (ph_i, ph_j, ph_k), n_batch = _frame(lw, WMMA_TILE, WMMA_TILE)
    lane = lw.special("local", 0, 32)
    true = UOp.const(dtypes.bool, True)
    at = list(base)
    at[di], at[dj], at[k] = ph_i, ph_j, ph_k
    fx, fy = (lw.lower(f, tuple(at), true) for f in factors)
    dx, dy = _ids(fx) & {ph_i, ph_j, ph_k}, _ids(fy) & {ph_i, ph_j, ph_k}
    if dx <= {ph_i, ph_k} and dy <= {ph_j, ph_k}:
        a, b = fx, fy
    elif dx <= {ph_j, ph_k} and dy <= {ph_i, ph_k}:
        a, b = fy, fx
    else:
        return None
    ko = lw.new_range(full[k] // WMMA_TILE)
    row, col = gy * WMMA_TILE + lane % 16, gx * WMMA_TILE + lane % 16
    ks = [ko * WMMA_TILE + e if ko.op is Ops.RANGE else c(e) for e in range(WMMA_TILE)]
    a_el = [substitute(a, {ph_i: row, ph_k: kk}) for kk in ks]
    b_el = [substitute(b, {ph_j: col, ph_k: kk}) for kk in ks]
    accs = [lw.new_acc(dtypes.float32, 0.0) for _ in range(8)]
    mma = UOp(Ops.WMMA, dtypes.float32, (*a_el, *b_el, *accs), a.dtype.name)
    parts = [UOp(Ops.GEP, dtypes.float32, (mma,), r) for r in range(8)]
    if ko.op is Ops.RANGE:
        end = UOp(Ops.ENDRANGE, lane.dtype, (ko, *(UOp(Ops.ASSIGN, dtypes.float32, (acc, p))
                                                   for acc, p in zip(accs, parts, strict=True))))
        parts = [UOp(Ops.AFTER, dtypes.float32, (acc, end)) for acc in accs]
    idxs = []
    for r in range(8):
        at = list(base)
        at[di], at[dj] = gy * WMMA_TILE + (lane // 16 + 2 * r), col
        lw.memo[(red, tuple(at), true)] = parts[r]
        idxs.append(tuple(at))
    grid = (lw.shape[dj] // WMMA_TILE, lw.shape[di] // WMMA_TILE, n_batch)
    return lw.finish(idxs[0], true, true, grid, (32, 1, 1), "W", more_idx=idxs[1:])
