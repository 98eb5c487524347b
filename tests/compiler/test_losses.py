"""Losses with tinygrad 0.14's names and arguments (issue 28), against tinygrad's CPU device (one subprocess for
the module): values for every reduction and option, and the gradient of the logits."""

import numpy as np
import pytest

from compiler import Tensor, dtypes
from tests.support.tinygrad_cpu import run_tinygrad

rng = np.random.default_rng(28)
LOGITS = rng.normal(0, 2, (6, 5)).astype(np.float32)
LABELS = np.array([0, 4, 2, 2, 1, 3], np.int32)
LABELS_IGN = np.array([0, 4, -100, 2, 1, -100], np.int32)
PROBS = rng.dirichlet(np.ones(5), 6).astype(np.float32)
LOGITS3 = rng.normal(0, 1, (2, 3, 4)).astype(np.float32)
LABELS3 = np.array([[0, 2, 1, 1], [2, 2, 0, 1]], np.int32)
P = rng.uniform(0.01, 0.99, (4, 3)).astype(np.float32)
T = (rng.uniform(size=(4, 3)) < 0.5).astype(np.float32)
W = np.array([1.0, 2.0, 0.5, 1.5, 3.0], np.float32)
POS_W = np.array([2.0, 0.5, 1.0], np.float32)

DATA = {"logits": LOGITS, "labels": LABELS, "labels_ign": LABELS_IGN, "probs": PROBS, "logits3": LOGITS3,
        "labels3": LABELS3, "p": P, "t": T, "w": W, "pos_w": POS_W}
# name -> expression over tensors of DATA (the same text runs on tinygrad)
CASES = {f"ce_{r}": f"logits.cross_entropy(labels, reduction='{r}')" for r in ("mean", "sum", "none")}
CASES.update({
    "ce_probs": "logits.cross_entropy(probs)", "ce_smooth": "logits.cross_entropy(labels, label_smoothing=0.1)",
    "ce_3d": "logits3.cross_entropy(labels3)", "ce_1d": "logits[0].cross_entropy(probs[0])",
    "ce_3d_none": "logits3.cross_entropy(labels3, reduction='none')",
    "scce": "logits.sparse_categorical_crossentropy(labels)",
    "scce_sum": "logits.sparse_categorical_crossentropy(labels, reduction='sum')",
    "scce_ign": "logits.sparse_categorical_crossentropy(labels_ign, ignore_index=-100)",
    "scce_smooth": "logits.sparse_categorical_crossentropy(labels_ign, -100, 0.2)",
    "scce_none": "logits.sparse_categorical_crossentropy(labels, reduction='none')",
    "scce_3d": "logits3.permute(0, 2, 1).sparse_categorical_crossentropy(labels3)",
    "bce": "p.binary_crossentropy(t)", "bce_none": "p.binary_crossentropy(t, reduction='none')",
    "bce_sum": "p.binary_crossentropy(t, 'sum')",
    "bcel": "logits[:4, :3].binary_crossentropy_logits(t)",
    "bcel_pos": "logits[:4, :3].binary_crossentropy_logits(t, pos_weight=pos_w)",
    "bcel_none": "logits[:4, :3].binary_crossentropy_logits(t, 'none', pos_w)",
    "nll": "logits.log_softmax(1).nll_loss(labels)", "nll_w": "logits.log_softmax(1).nll_loss(labels, w)",
    "nll_ign": "logits.log_softmax(1).nll_loss(labels_ign, w, ignore_index=-100)",
    "nll_sum": "logits.log_softmax(1).nll_loss(labels, reduction='sum')",
    "nll_none": "logits.log_softmax(1).nll_loss(labels, w, reduction='none')",
    "nll_3d": "logits3.log_softmax(1).nll_loss(labels3, ignore_index=2)",
})
GRADS = {"g_ce": "logits.cross_entropy(labels, label_smoothing=0.1)",
         "g_scce": "logits.sparse_categorical_crossentropy(labels_ign, ignore_index=-100)",
         "g_bcel": "logits[:4, :3].binary_crossentropy_logits(t, pos_weight=pos_w)"}

_SCRIPT = """
import json, sys
import numpy as np
from tinygrad import Tensor
env = {k: Tensor(np.array(v, dtype=np.int32 if k.startswith("labels") else np.float32)) for k, v in DATA.items()}
out = {k: eval(e, {}, env).numpy().tolist() for k, e in CASES.items()}
for k, e in GRADS.items():
    env["logits"] = Tensor(np.array(DATA["logits"], np.float32))
    out[k] = eval(e, {}, env).gradient(env["logits"])[0].numpy().tolist()
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def tiny():
    data = {k: v.tolist() for k, v in DATA.items()}
    return run_tinygrad(f"DATA = {data!r}\nCASES = {CASES!r}\nGRADS = {GRADS!r}\n" + _SCRIPT)


def _env(device=None):
    return {k: Tensor(v, device=device) for k, v in DATA.items()}


@pytest.mark.parametrize("device", [None, "CPU"])
def test_loss_values_match_tinygrad(tiny, device):
    """On the default device (the simulated GPU) and on the CPU device."""
    env = _env(device)
    for name, expr in CASES.items():
        ours = eval(expr, {}, env).numpy()
        np.testing.assert_allclose(ours, np.array(tiny[name], np.float32), rtol=1e-5, atol=1e-6, err_msg=name)


def test_loss_gradients_match_tinygrad(tiny):
    for name, expr in GRADS.items():
        env = _env()
        env["logits"] = Tensor(LOGITS, requires_grad=True)
        eval(expr, {}, env).backward()
        np.testing.assert_allclose(env["logits"].grad.numpy(), np.array(tiny[name]), rtol=1e-5, atol=1e-7,
                                   err_msg=name)


def test_cross_entropy_against_numpy():
    """The textbook formula in float64, as a second oracle."""
    lp = LOGITS.astype(np.float64) - np.log(np.exp(LOGITS.astype(np.float64)).sum(1, keepdims=True))
    want = -lp[np.arange(6), LABELS].mean()
    np.testing.assert_allclose(Tensor(LOGITS).cross_entropy(Tensor(LABELS)).item(), want, rtol=1e-6)


def test_binary_crossentropy_clamps_the_log_at_minus_100():
    """PyTorch's clamp: p exactly 0 or 1 gives a finite loss (tinygrad's unclamped log gives inf or NaN)."""
    p, y = Tensor([0.0, 1.0, 0.0, 1.0]), Tensor([1.0, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(p.binary_crossentropy(y, "none").numpy(), [100, 100, 0, 0])


def test_loss_arguments_are_checked_by_name():
    x, y = Tensor(LOGITS), Tensor(LABELS)
    with pytest.raises(ValueError, match="reduction must be one of"):
        x.cross_entropy(y, reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        x.sparse_categorical_crossentropy(y, label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"Y has shape \(5,\)"):
        x.cross_entropy(Tensor(LABELS[:5]))
    with pytest.raises(TypeError, match="Y must hold integer"):
        x.nll_loss(Tensor(LABELS.astype(np.float32)))
    with pytest.raises(ValueError, match="weight has shape"):
        x.nll_loss(y, Tensor([1.0, 2.0]))
    assert x.cross_entropy(y).dtype == dtypes.float32 and x.cross_entropy(y).shape == ()
