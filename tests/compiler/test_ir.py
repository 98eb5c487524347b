"""The kernel IR: hash-consing, value ranges, the simplifier (every rewrite keeps the value: hypothesis draws index
expressions and compares them before and after at every point of their variables' ranges), the linearizer's
loop structure, and views lowered to indices against NumPy's own movement ops."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from compiler.dtypes import PtrDType, dtypes
from compiler.ir.fold import evaluate
from compiler.ir.linearize import linearize, loops_of
from compiler.ir.lower import Geometry, unflatten, view_index
from compiler.ir.ops import Ops, UOp
from compiler.ir.ranges import vrange
from compiler.ir.rewrite import rewrite
from compiler.ir.symbolic import SYMBOLIC
from compiler.views import ShapeTracker, view_indices

I32 = dtypes.int32


def _vars():
    return [UOp(Ops.SPECIAL, I32, (), ("local", 0, 4)), UOp(Ops.SPECIAL, I32, (), ("group", 0, 3)),
            UOp(Ops.RANGE, I32, (UOp.const(I32, 5),), 0)]


def test_hash_consing_and_float_constants():
    a = UOp.const(I32, 3) + UOp.const(I32, 4)
    b = UOp.const(I32, 3) + UOp.const(I32, 4)
    assert a is b
    assert UOp.const(dtypes.float32, 0.0) is not UOp.const(dtypes.float32, -0.0)
    assert UOp.const(dtypes.float32, float("nan")) is UOp.const(dtypes.float32, float("nan"))


def test_value_ranges():
    lid, gid, r = _vars()
    idx = gid * 4 + lid
    assert vrange(idx) == (0, 11)
    assert vrange(idx // 4) == (0, 2)
    assert vrange(idx % 4) == (0, 3)
    assert vrange(idx.lt(12)) == (True, True)
    assert vrange(r - 10) == (-10, -6)


def _expr(draw, depth=0):
    leaves = _vars()
    if depth > 3 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(leaves))
        return UOp.const(I32, draw(st.integers(-20, 20)))
    op = draw(st.sampled_from(["add", "sub", "mul", "div", "mod", "where"]))
    a = _expr(draw, depth + 1)
    if op in ("mul", "div", "mod"):
        k = draw(st.integers(-6, 16).filter(lambda v: v != 0)) if op != "mul" else draw(st.integers(-5, 8))
        b = UOp.const(I32, k)
    else:
        b = _expr(draw, depth + 1)
    if op == "where":
        return a.lt(draw(st.integers(-5, 10))).where(b, _expr(draw, depth + 1))
    return {"add": a + b, "sub": a - b, "mul": a * b, "div": a // b, "mod": a % b}[op]


@given(st.data())
def test_simplifier_keeps_values_property(data):
    e = _expr(data.draw)
    s = rewrite(e, SYMBOLIC)
    leaves = _vars()
    for vals in itertools.product(range(4), range(3), range(5)):
        env = dict(zip(leaves, vals, strict=True))
        assert evaluate(e, env) == evaluate(s, env), f"{vals}"


def test_simplifier_folds_unflatten_of_flatten():
    lid, gid, _ = _vars()
    flat = gid * 4 + lid
    i, j = unflatten(flat, (3, 4))
    assert rewrite(i, SYMBOLIC) is gid and rewrite(j, SYMBOLIC) is lid
    # a shifted index: (16z + 8 - 4y + x) // 16 with y in [0, 4) must not drop the -4y's carry
    z = UOp(Ops.SPECIAL, I32, (), ("local", 2, 2))
    y = UOp(Ops.SPECIAL, I32, (), ("local", 1, 4))
    x = UOp(Ops.SPECIAL, I32, (), ("local", 0, 4))
    e = (z * 16 + 8 + y * -4 + x) // 16
    s = rewrite(e, SYMBOLIC)
    for vals in itertools.product(range(2), range(4), range(4)):
        env = dict(zip((z, y, x), vals, strict=True))
        assert evaluate(e, env) == evaluate(s, env)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_view_index_matches_numpy_property(shape, data):
    """The IR index of a chain of movement ops, evaluated at every element, reads what NumPy's result holds."""
    base = np.arange(int(np.prod(shape))).reshape(shape)
    stt, ref = ShapeTracker.contiguous(shape), base
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["permute", "flip", "pad", "shrink", "reshape", "expand"]))
        if kind == "permute":
            order = data.draw(st.permutations(range(ref.ndim)))
            stt, ref = stt.permute(order), ref.transpose(order)
        elif kind == "flip":
            ax = data.draw(st.integers(0, ref.ndim - 1))
            stt, ref = stt.flip((ax,)), np.flip(ref, ax)
        elif kind == "pad":
            pads = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in ref.shape)
            stt, ref = stt.pad(pads), np.pad(ref, pads, constant_values=-1)
        elif kind == "shrink":
            b = tuple((lo, data.draw(st.integers(lo + 1, s))) for s in ref.shape
                      for lo in [data.draw(st.integers(0, s - 1))])
            stt, ref = stt.shrink(b), ref[tuple(slice(lo, hi) for lo, hi in b)]
        elif kind == "reshape":
            n = ref.size
            d = data.draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0]))
            stt, ref = stt.reshape((d, n // d)), ref.reshape(d, n // d)
        else:
            stt, ref = stt.reshape((1, *ref.shape)).expand((2, *ref.shape)), np.broadcast_to(ref[None], (2,
                                                                                                        *ref.shape))
    flat, valid = view_indices(stt)
    np.testing.assert_array_equal(np.where(valid, base.reshape(-1)[np.clip(flat, 0, base.size - 1)], -1), ref)
    idx = [UOp(Ops.SPECIAL, I32, (), ("local", d, s)) for d, s in enumerate(stt.shape)]
    f_ir, v_ir = (rewrite(x, SYMBOLIC) for x in view_index(stt, tuple(idx)))
    for pos in np.ndindex(*stt.shape):
        env = dict(zip(idx, pos, strict=True))
        ok = evaluate(v_ir, env)
        assert ok == valid[pos]
        if ok:
            assert evaluate(f_ir, env) == flat[pos]


def test_linearizer_nests_loops_and_hoists_invariants():
    r0 = UOp(Ops.RANGE, I32, (UOp.const(I32, 4),), 0)
    r1 = UOp(Ops.RANGE, I32, (UOp.const(I32, 3), r0), 1)
    lid = UOp(Ops.SPECIAL, I32, (), ("local", 0, 8))
    acc = UOp(Ops.DEFINE_ACC, dtypes.float32, (UOp.const(dtypes.float32, 0.0),), 0)
    buf = UOp(Ops.PARAM, PtrDType(dtypes.float32, "global", 96), (), 1)
    invariant = lid * 12
    val = UOp(Ops.LOAD, dtypes.float32, (buf, invariant + r0 * 3 + r1))
    upd = UOp(Ops.ASSIGN, dtypes.float32, (acc, acc.alu(Ops.ADD, val)))
    end = UOp(Ops.ENDRANGE, I32, (r0, UOp(Ops.ENDRANGE, I32, (r1, upd))))
    out = UOp(Ops.PARAM, buf.dtype, (), 0)
    store = UOp(Ops.STORE, I32, (out, lid, UOp(Ops.AFTER, dtypes.float32, (acc, end))))
    k = linearize(UOp(Ops.SINK, I32, (store,), "k"), Geometry("k", (1, 1, 1), (8, 1, 1)))
    order = [u.op for u in k.uops]
    assert order.index(Ops.RANGE) < order.index(Ops.LOAD) < order.index(Ops.ENDRANGE)
    pos = {u: i for i, u in enumerate(k.uops)}
    assert pos[invariant] < pos[r0] < pos[r1]  # the invariant product is computed before the loops
    scope = loops_of(k.uops)
    assert scope[val] == {r0, r1} and scope[store] == frozenset()
    assert [u.op for u in k.uops].count(Ops.ENDRANGE) == 2
