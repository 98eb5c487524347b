"""compiler.nn's layers against tinygrad 0.14's (CPU device, one subprocess for the module): each layer is built
from the same constructor text in both libraries, gets the same weights (ours drawn by NumPy, loaded into tinygrad
through its own nn.state.load_state_dict, which checks that the state-dict names and shapes interchange), runs
forward and backward on the same input, and the outputs, input gradients, parameter gradients and updated running
statistics must agree. Ours runs on the simulated GPU and on the CPU device."""

import json

import numpy as np
import pytest

from compiler import Tensor, dtypes, nn
from compiler.nn.state import get_state_dict, load_state_dict
from tests.support import tinygrad_oracle

# name: (constructor, input shape, training, call); call "lstm_hc" passes an (h, c) state too
CASES = {
    "linear": ("nn.Linear(5, 3)", (4, 5), False, "plain"),
    "linear_nobias_3d": ("nn.Linear(5, 3, bias=False)", (2, 4, 5), False, "plain"),
    "conv2d": ("nn.Conv2d(3, 4, 3, stride=2, padding=1)", (2, 3, 7, 6), False, "plain"),
    "conv2d_groups_dilation": ("nn.Conv2d(4, 6, (3, 2), dilation=(1, 2), groups=2, padding=(1, 0))", (1, 4, 6, 7),
                               False, "plain"),
    "conv2d_same": ("nn.Conv2d(2, 3, 3, padding='same', dilation=2, bias=False)", (1, 2, 6, 5), False, "plain"),
    "conv2d_flat_padding": ("nn.Conv2d(2, 2, 2, padding=(1, 0, 2, 1))", (1, 2, 4, 4), False, "plain"),
    "conv1d": ("nn.Conv1d(3, 4, 3, stride=2, padding=1)", (2, 3, 9), False, "plain"),
    "conv3d": ("nn.Conv2d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1)", (1, 2, 3, 5, 4), False, "plain"),
    "conv_transpose2d": ("nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)", (1, 3, 4, 5),
                         False, "plain"),
    "conv_transpose2d_groups_crop": ("nn.ConvTranspose2d(4, 6, 2, groups=2, dilation=2, padding=3)", (1, 4, 5, 5),
                                     False, "plain"),
    "conv_transpose1d": ("nn.ConvTranspose1d(2, 3, 3, stride=3, bias=False)", (2, 2, 5), False, "plain"),
    "batchnorm_train": ("nn.BatchNorm(3)", (4, 3, 2, 2), True, "plain"),
    "batchnorm2d_eval": ("nn.BatchNorm2d(3)", (2, 3, 3, 3), False, "plain"),
    "batchnorm_no_affine": ("nn.BatchNorm(3, affine=False, momentum=0.3)", (5, 3), True, "plain"),
    "layernorm": ("nn.LayerNorm(6)", (2, 3, 6), False, "plain"),
    "layernorm_two_dims": ("nn.LayerNorm((3, 4), eps=1e-3)", (2, 3, 4), False, "plain"),
    "layernorm2d": ("nn.LayerNorm2d(3)", (2, 3, 2, 2), False, "plain"),
    "groupnorm": ("nn.GroupNorm(2, 4)", (2, 4, 3, 3), False, "plain"),
    "instancenorm": ("nn.InstanceNorm(3)", (2, 3, 4), False, "plain"),
    "rmsnorm": ("nn.RMSNorm(5)", (3, 5), False, "plain"),
    "embedding": ("nn.Embedding(7, 4)", (2, 3), False, "index"),
    "lstmcell": ("nn.LSTMCell(3, 4)", (2, 3), False, "lstm"),
    "lstmcell_state": ("nn.LSTMCell(3, 4, bias=False)", (2, 3), False, "lstm_hc"),
}

_TINYGRAD = """
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
cases = json.loads(str(inp.pop("cases")))
for name, (ctor, shape, training, call) in cases.items():
    layer = eval(ctor)
    sd = nn.state.get_state_dict(layer)
    out[name + ":keys"] = json.dumps([[k, list(v.shape)] for k, v in sd.items()])
    weights = {k[len(name) + 3:]: Tensor(v) for k, v in inp.items() if k.startswith(name + ":w:")}
    nn.state.load_state_dict(layer, weights, verbose=False)
    x = Tensor(inp[name + ":x"])
    with Context(TRAINING=int(training)):
        if call.startswith("lstm"):
            hc = (Tensor(inp[name + ":h"]), Tensor(inp[name + ":c"])) if call == "lstm_hc" else None
            h, c = layer(x, hc)
            y = h.cat(c, dim=1)
        else:
            y = layer(x)
        # the cotangent: drawn here, where the output's shape is first known, and sent back
        out[name + ":r"] = r = np.random.default_rng(7).standard_normal(y.shape).astype(np.float32)
        (y * Tensor(r)).sum().backward()
        Tensor.realize(*sd.values())
    out[name + ":y"] = y.numpy()
    if x.grad is not None:
        out[name + ":gx"] = x.grad.numpy()
    for k, v in sd.items():
        out[name + ":s:" + k] = v.numpy()
        if v.grad is not None:
            out[name + ":g:" + k] = v.grad.numpy()
"""


def _inputs(name: str, shapes: dict[str, tuple]) -> dict[str, np.ndarray]:
    """Weights for the state-dict names and shapes (running_var positive) and the input of one case."""
    rng = np.random.default_rng(sum(map(ord, name)))
    _, shape, _, call = CASES[name]
    arrays = {}
    for k, s in shapes.items():
        if k == "num_batches_tracked":
            arrays[f"{name}:w:{k}"] = np.array(3, np.int64)
        elif k == "running_var":
            arrays[f"{name}:w:{k}"] = rng.uniform(0.5, 2.0, s).astype(np.float32)
        else:
            arrays[f"{name}:w:{k}"] = rng.standard_normal(s).astype(np.float32)
    if call == "index":
        arrays[f"{name}:x"] = rng.integers(0, 7, shape).astype(np.int32)
    else:
        arrays[f"{name}:x"] = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    if call == "lstm_hc":
        arrays[f"{name}:h"] = rng.standard_normal((shape[0], 4)).astype(np.float32)
        arrays[f"{name}:c"] = rng.standard_normal((shape[0], 4)).astype(np.float32)
    return arrays


def _build(name: str):
    return eval(CASES[name][0], {"nn": nn})


@pytest.fixture(scope="module")
def case_data():
    """(inputs, tinygrad's results) of every case, from one tinygrad process."""
    inputs = {}
    for name in CASES:
        with tinygrad_oracle.on_device("AMD"):
            shapes = {k: v.shape for k, v in get_state_dict(_build(name)).items()}
        inputs |= _inputs(name, shapes)
    inputs["cases"] = np.array(json.dumps(CASES))
    return inputs, tinygrad_oracle.run(_TINYGRAD, inputs)


def _forward(name, inputs, training: bool):
    """(output, input tensor, layer): our layer with the case's weights run on its input."""
    _, _, _, call = CASES[name]
    layer = _build(name)
    weights = {k[len(name) + 3:]: Tensor(v) for k, v in inputs.items() if k.startswith(name + ":w:")}
    load_state_dict(layer, weights, verbose=False)
    x = Tensor(inputs[name + ":x"], requires_grad=call != "index")
    old, Tensor.training = Tensor.training, training
    try:
        if call.startswith("lstm"):
            hc = (Tensor(inputs[name + ":h"]), Tensor(inputs[name + ":c"])) if call == "lstm_hc" else None
            h, c = layer(x, hc)
            y = h.cat(c, dim=1)
        else:
            y = layer(x)
    finally:
        Tensor.training = old
    return y, x, layer


@pytest.mark.parametrize("kind", ["AMD", "CPU"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_tinygrad(case_data, name, kind):
    inputs, ref = case_data
    with tinygrad_oracle.on_device(kind):
        layer = _build(name)
        sd = get_state_dict(layer)
        assert [[k, list(v.shape)] for k, v in sd.items()] == json.loads(str(ref[name + ":keys"])), \
            "state-dict names, shapes and order"
        y, x, layer = _forward(name, inputs, training=CASES[name][2])
        (y * Tensor(ref[name + ":r"])).sum().backward()
        # every result in one schedule: read one by one, each .numpy() scheduled the backward graph again
        # (LSTMCell's gradients share most of it: 7 s of scheduling a case)
        params = list(get_state_dict(layer).values())
        Tensor.realize_all(y, *([x.grad] if x.requires_grad else []), *params,
                           *(v.grad for v in params if v.requires_grad and v.grad is not None))
        tol = {"rtol": 1e-4, "atol": 1e-5}
        np.testing.assert_allclose(y.numpy(), ref[name + ":y"], **tol, err_msg="forward")
        if x.requires_grad:
            np.testing.assert_allclose(x.grad.numpy(), ref[name + ":gx"], **tol, err_msg="input gradient")
        checked = 0
        for k, v in get_state_dict(layer).items():
            np.testing.assert_allclose(v.numpy(), ref[name + ":s:" + k], **tol, err_msg=f"state {k}")
            if v.requires_grad:
                np.testing.assert_allclose(v.grad.numpy(), ref[name + ":g:" + k], **tol, err_msg=f"gradient {k}")
                checked += 1
        assert checked == sum(1 for k in sd if not k.startswith(("running_", "num_batches")))


def test_initial_distributions_match_tinygrads_bounds():
    """Linear and Conv2d weights are uniform on +-1/sqrt(fan_in), Embedding Glorot-uniform, norms ones/zeros."""
    Tensor.manual_seed(3)
    lin, conv, emb = nn.Linear(400, 300), nn.Conv2d(8, 16, 3), nn.Embedding(500, 100)
    for t, bound in ((lin.weight, 1 / 20), (lin.bias, 1 / 20), (conv.weight, 1 / np.sqrt(72)),
                     (emb.weight, np.sqrt(6 / 600))):
        a = t.numpy()
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.95 * bound
        assert abs(a.mean()) < 0.05 * bound
    bn = nn.BatchNorm(4)
    assert bn.weight.numpy().tolist() == [1] * 4 and bn.running_var.numpy().tolist() == [1] * 4
    assert bn.num_batches_tracked.dtype == dtypes.int64 and not bn.running_mean.requires_grad


def test_layer_errors_name_the_problem():
    with pytest.raises(ValueError, match="features"):
        nn.Linear(3, 2)(Tensor.ones(2, 4))
    with pytest.raises(ValueError, match="'same'"):
        nn.Conv2d(1, 1, 3, padding="valid")
    with pytest.raises(ValueError, match="stride 1"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(TypeError, match="integers"):
        nn.Embedding(4, 2)(Tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="channels in dim 1"):
        nn.BatchNorm(3)(Tensor.ones(2, 4))
    with pytest.raises(ValueError, match="last dimensions"):
        nn.LayerNorm(5)(Tensor.ones(2, 4))


def test_tensor_forms_linear_and_convolution_padding():
    """linear with a 1-D weight scales elementwise; a negative conv2d padding crops (as tinygrad's)."""
    rng = np.random.default_rng(90)
    x, w = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(Tensor(x).linear(Tensor(w), Tensor(1.0)).numpy(), x * w + 1, rtol=1e-6)
    img, k = rng.standard_normal((1, 1, 6, 6)).astype(np.float32), rng.standard_normal((1, 1, 2, 2)).astype(np.float32)
    cropped = Tensor(img).conv2d(Tensor(k), padding=(-1, 0, 0, -2)).numpy()     # W: crop 1 left; H: crop 2 below
    np.testing.assert_allclose(cropped, Tensor(img[:, :, :4, 1:]).conv2d(Tensor(k)).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="padding"):
        Tensor(img).conv2d(Tensor(k), padding=(1, 2, 3))
    with pytest.raises(ValueError, match="groups"):
        Tensor.ones(1, 4, 3, 3).conv_transpose2d(Tensor.ones(3, 2, 2, 2))
    with pytest.raises(ValueError, match="same number"):
        Tensor.ones(1, 4, 3).conv2d(Tensor.ones(2, 4, 2, 2))
