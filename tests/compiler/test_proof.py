"""z3 index proofs: a kernel with a deliberately wrong index is rejected with a counterexample (kernel, buffer,
index, id values); gated and padded accesses are proven; a possibly wrapping index is refused."""

import numpy as np
import pytest

from compiler import CompileError, Tensor, backend
from compiler.dtypes import PtrDType, dtypes
from compiler.ir.linearize import linearize
from compiler.ir.lower import Geometry
from compiler.ir.ops import Ops, UOp
from compiler.ir.proof import prove
from compiler.ir.ranges import vmin
from compiler.kernel import compile_ast, linear_kernel
from compiler.views import ShapeTracker, View

F32, I32 = dtypes.float32, dtypes.int32


def copy_ast(n: int, src_view: View) -> UOp:
    """out[i] = in[view(i)] over n elements, as the scheduler would build it."""
    out = UOp(Ops.PARAM, PtrDType(F32, "global", n), (), 0)
    inp = UOp(Ops.PARAM, PtrDType(F32, "global", n), (), 1)
    load = UOp(Ops.LOAD, F32, (inp, UOp(Ops.VIEW, I32, (), ShapeTracker((src_view,)))))
    store = UOp(Ops.STORE, I32, (out, UOp(Ops.VIEW, I32, (), ShapeTracker.contiguous((n,))), load))
    return UOp(Ops.SINK, I32, (store,))


def test_wrong_index_is_rejected_with_a_counterexample(monkeypatch):
    monkeypatch.setenv("SIMGPU_CHECK_OOB", "1")
    ast = copy_ast(100, View.create((100,), (1,), offset=1))  # in[i + 1]: one past the end at i = 99
    with pytest.raises(CompileError) as e:
        compile_ast(ast, backend.get("llvm"))
    msg = str(e.value)
    assert "kernel E_100" in msg and "load from data1 (100 x float32)" in msg
    assert "may be out of bounds: index 100 with local_id.x=99" in msg


def test_wrong_stride_in_a_reduction_names_the_loop_variable(monkeypatch):
    monkeypatch.setenv("SIMGPU_CHECK_OOB", "1")
    out = UOp(Ops.PARAM, PtrDType(F32, "global", 4), (), 0)
    inp = UOp(Ops.PARAM, PtrDType(F32, "global", 32), (), 1)
    bad = View.create((4, 8), (9, 1))  # row stride 9 instead of 8: row 3 reads past 32
    load = UOp(Ops.LOAD, F32, (inp, UOp(Ops.VIEW, I32, (), ShapeTracker((bad,)))))
    red = UOp(Ops.REDUCE, F32, (load,), (Ops.ADD, (1,), (4, 8)))
    store = UOp(Ops.STORE, I32, (out, UOp(Ops.VIEW, I32, (), ShapeTracker.contiguous((4, 1))), red))
    with pytest.raises(CompileError, match=r"local_id.x=3, loop0=[5-7]"):
        compile_ast(UOp(Ops.SINK, I32, (store,)), backend.get("llvm"))


def test_gates_make_padded_reads_provable():
    """A padded view reads index -1 and 100 only where its mask gates the load off: proven."""
    ast = copy_ast(102, View.create((102,), (1,), offset=-1, mask=((1, 101),)))
    k = linear_kernel(ast, backend.get("llvm"))
    assert prove(k).accesses == 2
    # the gate is what makes it safe: the same index without it fails
    load = next(u for u in k.uops if u.op is Ops.LOAD)
    store = next(u for u in k.uops if u.op is Ops.STORE)
    sink = UOp(Ops.SINK, I32, (store.replace(src=(store.src[0], store.src[1], load.replace(src=load.src[:2]))),))
    with pytest.raises(CompileError, match="index -1 with local_id.x=0"):
        prove(linearize(sink, k.geometry, k.params))


def test_possible_wraparound_is_refused():
    lid = UOp(Ops.SPECIAL, I32, (), ("local", 0, 64))
    huge = UOp(Ops.RANGE, I32, (UOp.const(I32, 1 << 30),), 0)
    buf = UOp(Ops.PARAM, PtrDType(F32, "global", 1 << 31), (), 0)
    idx = huge * 64 + lid  # up to 2^36: wraps in int32
    st = UOp(Ops.STORE, I32, (buf, idx, UOp.const(F32, 0.0)))
    k = linearize(UOp(Ops.SINK, I32, (UOp(Ops.ENDRANGE, I32, (huge, st)),), "wrap"), Geometry("wrap", (1, 1, 1),
                                                                                             (64, 1, 1)))
    with pytest.raises(CompileError, match="may overflow int32"):
        prove(k)


def test_the_frontend_kernels_prove(backend, monkeypatch):
    """Views with every kind of movement, a gather and a long reduction: all accesses proven (no error)."""
    monkeypatch.setenv("SIMGPU_CHECK_OOB", "1")
    x = Tensor(np.arange(60, dtype=np.float32).reshape(3, 4, 5))
    y = x.pad(((1, 1), (0, 2), (3, 0))).flip(1)[::2, 1:, ::-3].permute(2, 0, 1)
    idx = Tensor([2, 0, 1])
    out = (y.sum() + x[idx].max() + Tensor.arange(5000).float().sum()).numpy()
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    ref = np.flip(np.pad(a, ((1, 1), (0, 2), (3, 0))), 1)[::2, 1:, ::-3].sum() + a[[2, 0, 1]].max() + \
        np.arange(5000).sum()
    assert out == ref


def test_an_index_past_int32_is_computed_in_int64_and_proven(monkeypatch):
    """Issue 27.9: a view whose offsets pass 2^31 (a read at 2^31 + 5 of a 2^31 + 16 element buffer) wrapped to a
    negative int32 index. Lowering computes that view's index in int64 and z3 proves it in bounds; the buffer
    exists only as a parameter type, nothing is allocated."""
    monkeypatch.setenv("SIMGPU_CHECK_OOB", "1")
    n = (1 << 31) + 16
    out = UOp(Ops.PARAM, PtrDType(F32, "global", 8), (), 0)
    inp = UOp(Ops.PARAM, PtrDType(F32, "global", n), (), 1)
    view = ShapeTracker.contiguous((n,)).shrink((((1 << 31) + 5, (1 << 31) + 13),))
    load = UOp(Ops.LOAD, F32, (inp, UOp(Ops.VIEW, I32, (), view)))
    store = UOp(Ops.STORE, I32, (out, UOp(Ops.VIEW, I32, (), ShapeTracker.contiguous((8,))), load))
    for name in ("llvm", "native"):
        k = linear_kernel(UOp(Ops.SINK, I32, (store,)), backend.get(name))
        (ld,) = [u for u in k.uops if u.op is Ops.LOAD]
        assert ld.src[1].dtype == dtypes.int64 and vmin(ld.src[1]) == (1 << 31) + 5, name
        prove(k)


def test_index_arithmetic_that_may_wrap_is_refused_without_the_proof(monkeypatch):
    """With SIMGPU_CHECK_OOB=0 too: an index space past int32 (work-group id * 256 + work-item id) is refused
    with a CompileError, never compiled to wrap (nothing is allocated: the kernel never runs)."""
    monkeypatch.setenv("SIMGPU_CHECK_OOB", "0")
    n = (1 << 31) + 256
    out = UOp(Ops.PARAM, PtrDType(F32, "global", n), (), 0)
    store = UOp(Ops.STORE, I32, (out, UOp(Ops.VIEW, I32, (), ShapeTracker.contiguous((n,))), UOp.const(F32, 1.0)))
    with pytest.raises(CompileError, match="may overflow int32"):
        compile_ast(UOp(Ops.SINK, I32, (store,)), backend.get("llvm"))


def test_arange_past_int32_gives_int64_values(backend):
    """`Tensor.arange(2**31 + 10)[2**31 + 5]` returned -2147483643: the values are int64 (NumPy) and the iota's
    index is 64-bit; the 2^31-element tensor is never allocated (only the elements read are computed)."""
    t = Tensor.arange((1 << 31) + 10)
    assert t.dtype == dtypes.int64
    assert t[(1 << 31) + 5].item() == (1 << 31) + 5
    np.testing.assert_array_equal(t[(1 << 31) - 2:(1 << 31) + 6].numpy(), np.arange((1 << 31) - 2, (1 << 31) + 6))
    np.testing.assert_array_equal((t[(1 << 31):(1 << 31) + 4] * 3 - 1).numpy(),
                                  np.arange(1 << 31, (1 << 31) + 4) * 3 - 1)
    assert Tensor.arange(5).dtype == dtypes.int32
