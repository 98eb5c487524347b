"""Tiled matrix products through LDS.

A kernel whose one reduction sums over one axis k, and whose output has two trailing dimensions i and j
divisible by the tile size T (16), runs as T x T workgroups: work-item (y, x) computes output (i, j) =
(tile_i * T + y, tile_j * T + x), and the loop over k is split into k = ko * T + ki. The reduction's input is
lowered once at that index; every load in it that varies with ki and with exactly one of y and x (A[i, k],
B[k, j], or anything fused into them) is staged: before the ki loop, work-item (y, x) loads that value at
ki := the other local id into an LDS tile laid out [dep][k] and a barrier follows; inside the loop the
value is read back from LDS at [dep][ki]. So each work-item makes one global load per staged input per
step of ko instead of T, and reads T consecutive LDS words (which LLVM merges into wide LDS loads). A
second barrier ends the step before the tiles are overwritten. Loads that do not qualify stay global.

The staged values are the original loads with ki substituted, so the index proof covers them as written.
"""

from __future__ import annotations

from math import prod

from compiler.dtypes import dtypes
from compiler.ir.ops import Ops, UOp
from compiler.ir.rewrite import substitute

TILE = 16


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


def plan(lw):
    """The tiled lowering (sink, geometry) of Lowerer lw's kernel, or None when it does not apply or nothing
    would be staged."""
    if not applies(lw):
        return None
    from compiler.ir.lower import c, unflatten
    (red,) = lw.reduces
    _, (k,), full = red.arg
    dims = [d for d, s in enumerate(lw.shape) if s != 1]
    di, dj = dims[-2], dims[-1]
    batch = dims[:-2]
    n_batch = prod(lw.shape[d] for d in batch)
    gx, gy = lw.special("group", 0, lw.shape[dj] // TILE), lw.special("group", 1, lw.shape[di] // TILE)
    gz = lw.special("group", 2, n_batch)
    lx, ly = lw.special("local", 0, TILE), lw.special("local", 1, TILE)
    idx = [c(0)] * len(lw.shape)
    idx[dj], idx[di] = gx * TILE + lx, gy * TILE + ly
    if batch:
        for d, v in zip(batch, unflatten(gz, tuple(lw.shape[d] for d in batch)), strict=True):
            idx[d] = v
    idx = tuple(idx)
    true = UOp.const(dtypes.bool, True)
    ko = lw.new_range(full[k] // TILE)
    ki0 = UOp(Ops.RANGE, lx.dtype, (c(TILE),), "ki")  # placeholder until the barrier exists
    inner = list(idx)
    inner[k] = ko * TILE + ki0 if ko.op is Ops.RANGE else ki0
    value = lw.lower(red.src[0], tuple(inner), true)
    stores, reads = [], {}
    for load in (u for u in value.toposort() if u.op is Ops.LOAD):
        deps = _ids(load)
        if ki0 not in deps or (ly in deps) == (lx in deps):
            continue
        dep, other = (ly, lx) if ly in deps else (lx, ly)
        lds = lw.new_lds(load.dtype, TILE * TILE)
        stores.append(UOp(Ops.STORE, lx.dtype, (lds, dep * TILE + other, substitute(load, {ki0: other}))))
        reads[load] = (lds, dep)
    if not stores:
        return None
    barrier = UOp(Ops.BARRIER, lx.dtype, tuple(stores))
    ki = lw.new_range(TILE, *([ko] if ko.op is Ops.RANGE else []), barrier)
    mapping = {load: UOp(Ops.LOAD, load.dtype, (UOp(Ops.AFTER, lds.dtype, (lds, barrier)), dep * TILE + ki))
               for load, (lds, dep) in reads.items()}
    mapping[ki0] = ki
    value = substitute(value, mapping)
    acc = lw.new_acc(red.dtype, 0)
    end = UOp(Ops.ENDRANGE, lx.dtype, (ki, UOp(Ops.ASSIGN, red.dtype, (acc, acc.alu(Ops.ADD, value)))))
    after = UOp(Ops.BARRIER, lx.dtype, (end,))
    if ko.op is Ops.RANGE:
        end = UOp(Ops.ENDRANGE, lx.dtype, (ko, after))
    else:
        end = after
    lw.memo[(red, idx, true)] = UOp(Ops.AFTER, red.dtype, (acc, end))
    grid = (lw.shape[dj] // TILE, lw.shape[di] // TILE, n_batch)
    return lw.finish(idx, true, true, grid, (TILE, TILE, 1), "M")


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
    from compiler.ir.lower import c, unflatten
    _, (k,), full = red.arg
    dims = [d for d, s in enumerate(lw.shape) if s != 1]
    di, dj = dims[-2], dims[-1]
    batch = dims[:-2]
    n_batch = prod(lw.shape[d] for d in batch)
    lane = lw.special("local", 0, 32)
    gx, gy = lw.special("group", 0, lw.shape[dj] // WMMA_TILE), lw.special("group", 1, lw.shape[di] // WMMA_TILE)
    gz = lw.special("group", 2, n_batch)
    base = [c(0)] * len(lw.shape)
    for d, v in zip(batch, unflatten(gz, tuple(lw.shape[d] for d in batch)), strict=True):
        base[d] = v
    true = UOp.const(dtypes.bool, True)
    ph_i, ph_j, ph_k = (UOp(Ops.RANGE, lane.dtype, (c(WMMA_TILE),), n) for n in ("wmma_i", "wmma_j", "wmma_k"))
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
