"""The scheduler and the lowering strategies: what fuses into one kernel, when a reduction gets a kernel of its own,
and which strategy a reduction gets (serial loop, workgroup through LDS, tiled matrix product with LDS)."""

import numpy as np
import pytest

from compiler import Tensor, backend
from compiler import schedule as scheduler
from compiler.dtypes import dtypes
from compiler.ir.ops import Ops, UOp
from compiler.ir.printer import format_ast
from compiler.ir.rewrite import Rules, rewrite
from compiler.kernel import linear_kernel
from compiler.schedule import MAX_FUSED, schedule
from tests.support.ops import assert_close


def kernels(t: Tensor) -> list:
    """The linearized kernels realizing t (copies of host data left out)."""
    items = schedule([t.lazydata.base])
    return [linear_kernel(i.ast, backend.get("llvm")) for i in items if i.kind == "kernel"]


def test_elementwise_chain_is_one_kernel():
    x, y = Tensor.ones(4, 4), Tensor(np.ones((4, 1), np.float32))
    ks = kernels(((x + y) * 2).exp().sqrt() - y.T)
    assert len(ks) == 1 and ks[0].name.startswith("E_")


def test_reduce_fuses_input_and_output_elementwise():
    x = Tensor(np.ones((8, 8), np.float32))
    ks = kernels((x * 3).exp().sum(1).sqrt() + 1)
    assert len(ks) == 1 and ks[0].name.startswith("R_")


def test_softmax_reductions_get_their_own_kernels():
    x = Tensor(np.ones((4, 8), np.float32))
    ks = kernels(x.softmax())
    assert [k.name[0] for k in ks] == ["R", "R", "E"]  # max, sum of exp, normalize


def test_long_reduction_uses_the_workgroup_and_lds():
    (k,) = kernels(Tensor(np.ones(4096, np.float32)).sum())
    assert k.name.startswith("G_") and k.geometry.block == (64, 1, 1)
    assert any(u.op is Ops.LDS for u in k.uops) and any(u.op is Ops.BARRIER for u in k.uops)


def test_matmul_is_tiled_with_lds():
    a, b = Tensor(np.ones((32, 48), np.float32)), Tensor(np.ones((48, 48), np.float32))
    (k,) = kernels(a @ b)
    # 2 x 3 outputs per work-item (the 16-wide tiles' largest divisors up to 8): one workgroup
    assert k.name.startswith("M_") and k.geometry.block == (16, 16, 1) and k.geometry.grid == (1, 1, 1)
    # k = 48 is one chunk: staged in a loop over its three 16-wide parts, one barrier
    assert sum(u.op is Ops.LDS for u in k.uops) == 2 and sum(u.op is Ops.BARRIER for u in k.uops) == 1


@pytest.mark.parametrize("k_len, chunks", [(784, 7), (64, 1), (16 * 11, 11)])
def test_tiled_matmul_stages_k_in_chunks_that_fit_lds(backend, k_len, chunks):
    # chunks of 16m (m the largest divisor of k / 16 whose tiles fit 64 KiB of LDS): a barrier pair per chunk
    # but the last, one barrier for one chunk; 16 * 11 cannot be split but into 16s: 11 is prime and more than the
    # 8 parts whose 64 x 64 tiles fit (the smallest such prime: 16 * 97 checked the same at 9 times the k, 14 CPU-s
    # a GPU backend on a cold cache)
    rng = np.random.default_rng(64)
    a, b = rng.standard_normal((64, k_len)).astype(np.float32), rng.standard_normal((k_len, 128)).astype(np.float32)
    out = Tensor(a) @ Tensor(b)
    (k,) = kernels(out)
    assert k.name.startswith("M_") and sum(u.op is Ops.BARRIER for u in k.uops) == (2 if chunks > 1 else 1)
    loops = [u for u in k.uops if u.op is Ops.RANGE]
    assert chunks == 1 and len(loops) == 2 or loops[0].src[0].arg == chunks
    assert_close(out.numpy(), a @ b, "float32", rtol=2e-5, atol=1e-4)


def test_large_matmul_tiles_four_by_four_outputs_per_work_item(backend):
    rng = np.random.default_rng(62)
    a, b = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 128)).astype(np.float32)
    out = Tensor(a) @ Tensor(b)
    (k,) = kernels(out)
    assert k.name.startswith("M_") and k.geometry.grid == (2, 1, 1) and k.geometry.block == (16, 16, 1)
    assert sum(u.op is Ops.STORE and u.src[0].op is Ops.PARAM for u in k.uops) == 16
    assert_close(out.numpy(), a @ b, "float32", rtol=2e-5, atol=1e-4)


def _factor(size: int) -> int:
    tiles = size // 16
    return 4 if tiles % 4 == 0 else max(f for f in range(1, 9) if tiles % f == 0)


@pytest.mark.parametrize("m, n", [(128, 48), (32, 64), (64, 112), (80, 208)])
def test_matmul_tiles_each_dimension_by_its_own_factor(backend, m, n):
    # 4 outputs per work-item along a dimension of a multiple of 4 tiles of 16, else the tiles' largest divisor
    # up to 8 (the gradient of a 784-wide weight, 128 x 784: 4 x 7); 208 is 13 tiles, a prime past 8: 1
    rng = np.random.default_rng(63)
    a, b = rng.standard_normal((m, 32)).astype(np.float32), rng.standard_normal((32, n)).astype(np.float32)
    out = Tensor(a) @ Tensor(b)
    (k,) = kernels(out)
    up_i, up_j = _factor(m), _factor(n)
    assert k.name.startswith("M_") and k.geometry.grid == (n // (16 * up_j), m // (16 * up_i), 1)
    assert sum(u.op is Ops.STORE and u.src[0].op is Ops.PARAM for u in k.uops) == up_i * up_j
    assert_close(out.numpy(), a @ b, "float32", rtol=2e-5, atol=1e-4)


def test_tiled_matmul_stages_fused_work_once_per_element(backend):
    # ReLU of A plus a bias fused into the product: the tile holds relu(a + bias), computed while staging, so
    # the loop over k only multiplies and adds (it recomputed the mask for every output column before)
    rng = np.random.default_rng(65)
    a, b = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 48)).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    out = (Tensor(a) + Tensor(bias)).relu() @ Tensor(b)
    (k,) = kernels(out)
    assert k.name.startswith("M_")
    inner = max(i for i, u in enumerate(k.uops) if u.op is Ops.RANGE)
    end = next(i for i, u in enumerate(k.uops) if u.op is Ops.ENDRANGE and u.src[0] is k.uops[inner])
    assert {u.op for u in k.uops[inner + 1:end]} <= {Ops.LOAD, Ops.ADD, Ops.MUL, Ops.ASSIGN, Ops.AFTER}
    assert_close(out.numpy(), np.maximum(a + bias, 0) @ b, "float32", rtol=2e-5, atol=1e-4)


def test_unaligned_matmul_falls_back_to_loops():
    (k,) = kernels(Tensor(np.ones((17, 5), np.float32)) @ Tensor(np.ones((5, 9), np.float32)))
    assert k.name.startswith("R_") and not any(u.op is Ops.LDS for u in k.uops)


@pytest.mark.parametrize("case", ["fused_inputs", "batched", "bias_relu", "transposed", "float16"])
def test_tiled_matmul_variants(backend, case):
    rng = np.random.default_rng(60)
    a, b = rng.standard_normal((2, 32, 16)).astype(np.float32), rng.standard_normal((16, 48)).astype(np.float32)
    bias = rng.standard_normal(48).astype(np.float32)
    if case == "fused_inputs":
        out, ref = (Tensor(a) * 2).exp() @ Tensor(b).relu(), np.exp(a * 2) @ np.maximum(b, 0)
    elif case == "batched":
        out, ref = Tensor(a) @ Tensor(b), a @ b
    elif case == "bias_relu":
        out, ref = (Tensor(a[0]) @ Tensor(b) + Tensor(bias)).relu(), np.maximum(a[0] @ b + bias, 0)
    elif case == "transposed":
        out, ref = Tensor(b).T @ Tensor(a[1]).T, b.T @ a[1].T
    else:
        out = (Tensor(a[0]).half() @ Tensor(b).half()).float()
        ref = (a[0].astype(np.float16).astype(np.float32) @ b.astype(np.float16).astype(np.float32))
        assert_close(out.numpy(), ref, "float32", rtol=5e-3, atol=2e-2)
        return
    assert any(k.name.startswith("M_") for k in kernels(out))
    assert_close(out.numpy(), ref, "float32", rtol=2e-5, atol=1e-4)


def test_multi_consumer_elementwise_is_recomputed_not_stored():
    x = Tensor(np.ones((4, 4), np.float32))
    e = x * 2 + 1
    ks = kernels(e.sum(0) + e.sum(1))  # e feeds two reductions (and is recomputed in both)
    assert len(ks) == 2 + 1 or len(ks) == 2


def test_expensive_input_of_a_broadcasting_reduction_is_computed_once():
    a = Tensor(np.ones((16, 16), np.float32))
    ks = kernels(a.exp() @ a)
    assert [k.name[0] for k in ks] == ["E", "M"]


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("sa,sb", [((32, 48), (48, 64)), ((2, 16, 32), (32, 16)), ((16, 16), (16, 16))], ids=str)
def test_half_matmul_uses_the_matrix_cores(backend, dt, sa, sb):
    """float16/bfloat16 products of 16-multiples run as v_wmma_f32_16x16x16_* (one wave per 16x16 tile); the
    result is the exact sum of exact products of the rounded inputs, rounded once to the type. A backend without
    matrix cores (x86) runs the loop, rounding each product and partial sum to the type: within k rounding
    steps of the exact sum."""
    from compiler import backend as backends
    from compiler import dtypes
    rng = np.random.default_rng(61)
    a = Tensor(rng.standard_normal(sa).astype(np.float32), dtype=getattr(dtypes, dt))
    b = Tensor(rng.standard_normal(sb).astype(np.float32), dtype=getattr(dtypes, dt))
    out = a @ b
    ks = kernels(out)
    wmma = "wmma" in backends.get(backend).features
    if backend == "llvm":
        assert [k.name[0] for k in ks] == ["W"] and any(u.op is Ops.WMMA for u in ks[0].uops)
    fa, fb = a.float().numpy().astype(np.float64), b.float().numpy().astype(np.float64)
    ref = fa @ fb
    got = out.float().numpy()
    ulp = 2.0 ** -10 if dt == "float16" else 2.0 ** -7
    if wmma:
        assert np.all(np.abs(got - ref) <= np.abs(ref) * ulp + 1e-6)
    else:
        assert np.all(np.abs(got - ref) <= (np.abs(fa) @ np.abs(fb)) * ulp * (sa[-1] + 1) + 1e-6)


def test_expensive_work_below_an_elementwise_input_is_also_computed_once():
    a = Tensor(np.ones((16, 16), np.float32))
    ks = kernels((a.exp() + 1) @ a)
    assert [k.name[0] for k in ks] == ["E", "M"]


def test_a_chain_of_ten_thousand_ops_realizes_and_differentiates():
    """Issue 27.9: `t = t + 1` 10,000 times raised RecursionError. Every walk is iterative (the graph, the
    scheduler's kernel builder, autograd's order, the printers) and the chain is cut into kernels of at most
    MAX_FUSED nodes, alike enough that one compile serves them."""
    x = Tensor(np.array([0.5, -2.0], np.float32), requires_grad=True)
    t = x
    for _ in range(10_000):
        t = t + 1
    items = [i for i in schedule([t.lazydata.base]) if i.kind == "kernel"]
    assert len(items) > 1 and all(len(i.ast.toposort()) <= MAX_FUSED for i in items)
    assert len({i.ast for i in items[1:-1]}) <= 2  # the cuts are one kernel, compiled once
    assert format_ast(items[-1].ast).count("ADD") >= 50
    t.sum().backward()
    np.testing.assert_array_equal(t.numpy(), [10_000.5, 9_998.0])
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_printers_and_rewrites_walk_deep_asts_iteratively():
    """A kernel AST 10,000 nodes deep prints (format_ast recursed once per level)."""
    u = UOp.const(dtypes.float32, 0.0)
    one = UOp.const(dtypes.float32, 1.0)
    for _ in range(10_000):
        u = u + one
    text = format_ast(u)
    assert text.count("ADD") == 10_000 and text.splitlines()[-1].strip() == "<10001>"  # the constant 1, printed once
    assert rewrite(u, Rules()) is u


def test_a_graph_of_a_structure_scheduled_before_takes_that_schedule_with_its_own_buffers():
    """The schedule cache: the same structure over other buffers gets the same kernels (ASTs) for its own bases, and
    the values NumPy gives; constants that differ only in the sign of zero are another structure."""
    rng = np.random.default_rng(9)

    def graph(a, b, c):
        return ((Tensor(a).realize() @ Tensor(b).realize()).relu() * c).sum(1)

    a, b = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    first = schedule([graph(a, b, 2.0).lazydata.base])
    a2, b2 = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    t = graph(a2, b2, 2.0)
    again = schedule([t.lazydata.base])
    assert [i.ast for i in again] == [i.ast for i in first]
    assert all(x.out is not y.out for x, y in zip(again, first, strict=True))
    assert_close(t.numpy(), (np.maximum(a2 @ b2, 0) * 2).sum(1), "float32")
    neg = schedule([graph(a, b, -0.0).lazydata.base])
    pos = schedule([graph(a, b, 0.0).lazydata.base])
    assert [i.ast for i in neg] != [i.ast for i in pos]
    np.testing.assert_array_equal(np.signbit(graph(a, b, -0.0).numpy()), np.signbit((np.maximum(a @ b, 0) * -0.0)
                                                                                    .sum(1)))


def test_a_structure_on_another_device_takes_the_schedule_and_a_copy_keeps_its_own(monkeypatch):
    """Devices enter the schedule cache's key by the order the walk meets them: the same graph on the CPU device
    takes the GPU's kernels (and computes NumPy's values there), while a graph that copies between two devices is
    another structure than one that stays on one."""
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)

    def graph(dev_a, dev_b):
        x, y = Tensor(a, device=dev_a).realize(), Tensor(b, device=dev_b).realize()
        return ((x.to(dev_b) @ y).exp() * 0.5).sum(1)

    on_gpu, t, moved = graph("AMD", "AMD"), graph("CPU", "CPU"), graph("CPU:1", "CPU")  # (inputs realized)
    made = []
    monkeypatch.setattr(scheduler, "_schedule", lambda outs, made_by=scheduler._schedule: made.append(outs) or
                        made_by(outs))
    gpu = schedule([on_gpu.lazydata.base])
    cpu = schedule([t.lazydata.base])
    assert len(made) <= 1, "the CPU graph was scheduled again"
    assert [i.ast for i in cpu] == [i.ast for i in gpu] and all(i.out.device == "CPU:0" for i in cpu)
    assert_close(t.numpy(), (np.exp(a @ b) * 0.5).sum(1), "float32")
    before = len(made)
    across = schedule([moved.lazydata.base])
    assert len(made) == before + 1, "the copying graph took the one-device schedule"
    assert [i.kind for i in across] != [i.kind for i in gpu] and "copy" in [i.kind for i in across]
    assert_close(moved.numpy(), (np.exp(a @ b) * 0.5).sum(1), "float32")
