"""End to end: a 2-layer MLP trained with Adam (the loss falls; two runs give bit-identical weights), SGD with
momentum against PyTorch's update rule written in NumPy, and a transformer block's forward against NumPy."""

import numpy as np

from compiler import Tensor
from compiler.examples import block_parameters, train_mlp, transformer_block, transformer_block_numpy
from compiler.optim import SGD, Adam


def test_mlp_trains_and_is_deterministic(backend):
    losses, weights = train_mlp(steps=50)
    assert losses[-1] < 0.3 * losses[0], losses
    assert all(np.isfinite(losses))
    losses2, weights2 = train_mlp(steps=50)
    assert losses == losses2
    assert [w.tobytes() for w in weights] == [w.tobytes() for w in weights2]


def test_sgd_momentum_and_adam_match_the_update_rules(backend):
    rng = np.random.default_rng(70)
    w0 = rng.standard_normal(5).astype(np.float32)
    grads = [rng.standard_normal(5).astype(np.float32) for _ in range(3)]
    for make, ref in ((lambda p: SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01), _sgd_ref),
                      (lambda p: Adam([p], lr=0.05, weight_decay=0.01), _adam_ref)):
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


def _adam_ref(w, grads, lr=0.05, b1=0.9, b2=0.999, eps=1e-8, wd=0.01):
    w, m, v = w.astype(np.float64), 0, 0
    for t, g in enumerate(grads, 1):
        g = g + wd * w
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        w = w - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return w


def test_transformer_block_matches_numpy(backend):
    d, heads, tokens = 32, 4, 16
    p = block_parameters(d, 4 * d)
    x = np.random.default_rng(71).standard_normal((tokens, d)).astype(np.float32)
    ours = transformer_block(Tensor(x), {k: Tensor(v) for k, v in p.items()}, heads).numpy()
    ref = transformer_block_numpy(x.astype(np.float64), p, heads)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)
