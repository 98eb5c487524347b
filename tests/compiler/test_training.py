"""End to end: a 2-layer MLP trained with Adam (the loss falls; two runs give bit-identical weights), SGD with
momentum, Adam and AdamW against their update rules written in NumPy, and a transformer block's forward against
NumPy."""

import numpy as np

from compiler import Tensor
from compiler.examples import block_parameters, train_mlp, transformer_block, transformer_block_numpy
from compiler.nn.optim import SGD, Adam, AdamW
from tests.support import differential

# Steps of the MLP's training: each step launches the same kernels (compiled at the first) on new weights, and the
# simulated launches were nearly all of the test's time at 50 steps. By step 25 the loss is at 0.14 of the first
# (0.3 is asserted; it is 0.17 by step 15), and the rerun still repeats every kernel on every step's inputs.
STEPS = 25


def test_mlp_trains_and_is_deterministic(backend):
    losses, weights = train_mlp(steps=STEPS)
    assert losses[-1] < 0.3 * losses[0], losses
    assert all(np.isfinite(losses))
    # The rerun launches the same kernels on the same inputs as the first run, whose every launch the backend
    # fixture already checked against the partner backend; checking them again would only repeat that work, and
    # the asserts below prove the rerun bit-identical.
    with differential.paused():
        losses2, weights2 = train_mlp(steps=STEPS)
    assert losses == losses2
    assert [w.tobytes() for w in weights] == [w.tobytes() for w in weights2]


def test_sgd_momentum_adam_and_adamw_match_the_update_rules(backend):
    rng = np.random.default_rng(70)
    w0 = rng.standard_normal(5).astype(np.float32)
    grads = [rng.standard_normal(5).astype(np.float32) for _ in range(3)]
    for make, ref in ((lambda p: SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01), _sgd_ref),
                      (lambda p: Adam([p], lr=0.05), _adam_ref),
                      (lambda p: AdamW([p], lr=0.05, weight_decay=0.01), _adamw_ref)):
        p = Tensor(w0.copy(), requires_grad=True)
        opt = make(p)
        for g in grads:
            opt.zero_grad()
            (p * Tensor(g)).sum().backward()
            opt.step()
        np.testing.assert_allclose(p.numpy(), ref(w0, grads), rtol=1e-5, atol=1e-6)


def _sgd_ref(w, grads, lr=0.1, mom=0.9, wd=0.01):
    w, buf = w.astype(np.float64), None
    for g in grads:
        g = g + wd * w
        buf = g if buf is None else mom * buf + g
        w = w - lr * buf
    return w


def _adam_ref(w, grads, lr=0.05, b1=0.9, b2=0.999, eps=1e-8):
    return _adamw_ref(w, grads, lr, b1, b2, eps, wd=0.0)


def _adamw_ref(w, grads, lr=0.05, b1=0.9, b2=0.999, eps=1e-8, wd=0.01):
    """Decoupled weight decay: lr * (adam step + wd * w)."""
    w, m, v = w.astype(np.float64), 0, 0
    for t, g in enumerate(grads, 1):
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        w = w - lr * ((m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + wd * w)
    return w


def test_transformer_block_matches_numpy(backend):
    d, heads, tokens = 32, 4, 16
    p = block_parameters(d, 4 * d)
    x = np.random.default_rng(71).standard_normal((tokens, d)).astype(np.float32)
    ours = transformer_block(Tensor(x), {k: Tensor(v) for k, v in p.items()}, heads).numpy()
    ref = transformer_block_numpy(x.astype(np.float64), p, heads)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)


def _unrealized(t: Tensor) -> int:
    """How many unrealized bases t's graph holds."""
    stack, seen = [t.lazydata.base], set()
    while stack:
        b = stack.pop()
        if b in seen or b.realized:
            continue
        seen.add(b)
        stack.extend(s.base for s in b.srcs)
    return len(seen)


def test_a_lazy_assign_loop_keeps_a_bounded_graph_and_the_right_values():
    """Issue 28.1: `p.assign(p - lr * p.grad)` every step, realizing only the loss: the graph behind p stays one
    step deep (what an assign replaces is realized), 100 steps run without a fault and match NumPy."""
    rng = np.random.default_rng(72)
    x, y = rng.standard_normal((32, 8)).astype(np.float32), rng.standard_normal((32, 1)).astype(np.float32)
    w = rng.standard_normal((8, 1)).astype(np.float32)
    p, xt, yt = Tensor(w.copy(), requires_grad=True), Tensor(x), Tensor(y)
    sizes, losses, ref = [], [], w.astype(np.float64)
    for _ in range(100):
        loss = ((xt @ p - yt) ** 2).mean()
        loss.backward()
        losses.append(loss.item())
        p.assign(p - 0.01 * p.grad)
        p.grad = None
        sizes.append(_unrealized(p))
        ref = ref - 0.01 * (2 / 32) * x.T.astype(np.float64) @ (x @ ref - y)
    assert max(sizes) == sizes[1], sizes  # the same graph every step, not one growing with the steps
    np.testing.assert_allclose(p.numpy(), ref, rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0]


def test_in_place_operators_assign(backend):
    """Issue 28.2: `p -= x` updates p itself (tinygrad's and PyTorch's meaning), it does not rebind the name to a
    new tensor; every in-place operator does."""
    a = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    alias = a
    alias -= 1
    assert alias is a
    np.testing.assert_array_equal(a.numpy(), [0.0, 1.0, 2.0])
    for op, rhs, ref in (("+=", 2.0, [3.0, 4.0, 5.0]), ("*=", 2.0, [2.0, 4.0, 6.0]), ("/=", 2.0, [0.5, 1.0, 1.5]),
                         ("**=", 2.0, [1.0, 4.0, 9.0]), ("//=", 2.0, [0.0, 1.0, 1.0]), ("%=", 2.0, [1.0, 0.0, 1.0])):
        t = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
        same = t
        scope = {"t": t, "rhs": rhs}
        exec(f"t {op} rhs", scope)
        assert scope["t"] is same, op
        np.testing.assert_allclose(same.numpy(), ref, rtol=1e-6, err_msg=op)
    i = Tensor(np.array([6, 5, 12], np.int32))
    keep = i
    i &= 4
    i |= 1
    i ^= 2
    i <<= 2
    i >>= 1
    assert i is keep
    np.testing.assert_array_equal(i.numpy(), ((((np.array([6, 5, 12]) & 4) | 1) ^ 2) << 2) >> 1)
    m = Tensor(np.eye(2, dtype=np.float32))
    mm = m
    m @= Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    assert m is mm
    np.testing.assert_array_equal(mm.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    p = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    (p * p).sum().backward()
    p -= 0.5 * p.grad
    np.testing.assert_allclose(p.numpy(), [0.0, 0.0])
