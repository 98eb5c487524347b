"""Ops suite, movement and indexing: views (reshape, permute, expand, pad, shrink, flip), NumPy indexing with ints,
slices with steps, None, Ellipsis and integer tensors, cat/stack/repeat/squeeze/unsqueeze/flatten, setitem."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler import Tensor, dtypes
from tests.support.ops import assert_close

pytestmark = pytest.mark.usefixtures("gpu_arch")  # (also on gfx1201: conftest.py)

A = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 7.5


def t():
    return Tensor(A)


MOVES = {
    "reshape": (lambda x: x.reshape(6, 4), lambda a: a.reshape(6, 4)),
    "reshape_infer": (lambda x: x.reshape(-1, 2), lambda a: a.reshape(-1, 2)),
    "reshape_after_permute": (lambda x: x.permute(2, 0, 1).reshape(8, 3), lambda a: a.transpose(2, 0, 1).reshape(8, 3)),
    "permute": (lambda x: x.permute(1, 2, 0), lambda a: a.transpose(1, 2, 0)),
    "transpose": (lambda x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    "T": (lambda x: x.T, lambda a: a.swapaxes(0, 1)),  # tinygrad's .T is transpose(): not NumPy's reversal
    "expand": (lambda x: x[:, :1].expand(2, 5, 4), lambda a: np.broadcast_to(a[:, :1], (2, 5, 4))),
    "expand_new_dim": (lambda x: x.expand(3, 2, 3, 4), lambda a: np.broadcast_to(a, (3, 2, 3, 4))),
    "pad": (lambda x: x.pad(((0, 1), (2, 0), (1, 1))), lambda a: np.pad(a, ((0, 1), (2, 0), (1, 1)))),
    "pad_value": (lambda x: x.pad(((1, 1), (0, 0), (0, 2)), value=-3.0),
                  lambda a: np.pad(a, ((1, 1), (0, 0), (0, 2)), constant_values=-3.0)),
    "shrink": (lambda x: x.shrink(((1, 2), None, (1, 3))), lambda a: a[1:2, :, 1:3]),
    "flip": (lambda x: x.flip(1), lambda a: np.flip(a, 1)),
    "flip_all": (lambda x: x.flip(), lambda a: np.flip(a)),
    "squeeze": (lambda x: x[:, :1].squeeze(1), lambda a: a[:, :1].squeeze(1)),
    "squeeze_all": (lambda x: x[:1, :, :1].squeeze(), lambda a: a[:1, :, :1].squeeze()),
    "unsqueeze": (lambda x: x.unsqueeze(-1), lambda a: a[..., None]),
    "flatten": (lambda x: x.flatten(), lambda a: a.flatten()),
    "flatten_middle": (lambda x: x.flatten(1), lambda a: a.reshape(2, 12)),
    "repeat": (lambda x: x.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3))),
    "repeat_more_dims": (lambda x: x[0].repeat(2, 2, 1), lambda a: np.tile(a[0], (2, 2, 1))),
    "cat": (lambda x: x.cat(x * 2, dim=1), lambda a: np.concatenate([a, a * 2], 1)),
    "cat_last": (lambda x: x.cat(x[:, :, :1], dim=-1), lambda a: np.concatenate([a, a[:, :, :1]], -1)),
    "stack": (lambda x: Tensor.stack([x, -x, x + 1], dim=1), lambda a: np.stack([a, -a, a + 1], 1)),
    "stack_method": (lambda x: x.stack(-x, x + 1, dim=-1), lambda a: np.stack([a, -a, a + 1], -1)),  # issue 28.5
    "stack_static": (lambda x: Tensor.stack(x, x * 2), lambda a: np.stack([a, a * 2])),
    "stack_torch_dim": (lambda x: Tensor.stack((x, x * 2), 2), lambda a: np.stack([a, a * 2], 2)),
    "pad_then_flip_then_permute": (lambda x: x.pad(((1, 0), (0, 0), (2, 1))).flip(2).permute(2, 1, 0),
                                   lambda a: np.flip(np.pad(a, ((1, 0), (0, 0), (2, 1))), 2).transpose(2, 1, 0)),
    "permute_pad_reshape": (lambda x: x.permute(2, 0, 1).pad(((0, 0), (1, 1), (0, 0))).reshape(4, 12),
                            lambda a: np.pad(a.transpose(2, 0, 1), ((0, 0), (1, 1), (0, 0))).reshape(4, 12)),
}


@pytest.mark.parametrize("name", sorted(MOVES))
def test_movement(backend, name):
    tfn, nfn = MOVES[name]
    assert_close(tfn(t()).numpy(), nfn(A), "float32")


def test_movement_of_computed_values(backend):
    """Views of unrealized elementwise results fuse; a pad of exp still reads 0 in the padding."""
    x = t()
    out = x.exp().pad(((0, 0), (1, 1), (0, 0))).flip(0)[:, ::2]
    ref = np.flip(np.pad(np.exp(A), ((0, 0), (1, 1), (0, 0))), 0)[:, ::2]
    assert_close(out.numpy(), ref, "float32", rtol=3e-6)


class T(list):
    """An index tensor's values: made a Tensor when the test runs, on the device the backend fixture selects."""


def _resolve(idx):
    if isinstance(idx, tuple):
        return tuple(_resolve(i) for i in idx)
    return Tensor(list(idx)) if isinstance(idx, T) else idx


INDEX = {
    "int": 1, "neg_int": -1, "ints": (1, 2), "slice": slice(1, None), "slice_step": (slice(None), slice(None, None, 2)),
    "neg_step": (slice(None), slice(None, None, -1)), "neg_step_2": (Ellipsis, slice(3, 0, -2)),
    "none": (None, 0), "ellipsis": (Ellipsis, 1), "mixed": (1, None, slice(0, 3, 2), Ellipsis),
    "empty_slice": (slice(None), slice(2, 2)), "step_over_end": (slice(None), slice(None), slice(1, 10, 3)),
    "tensor": (T([1, 0, 1]),), "tensor_2d": (T([[0, 1], [1, 0]]),), "tensor_neg": (T([-1, 0]),),
    "tensor_middle": (slice(None), T([2, 0])), "two_tensors": (T([0, 1]), T([2, 1])),
    "tensors_apart": (T([0, 1]), slice(None), T([3, 0])), "tensor_and_int": (1, T([0, 2, 2])),
    "list": ([1, 0],),
}


def _np_index(idx):
    if isinstance(idx, tuple):
        return tuple(_np_index(i) for i in idx)
    return idx.numpy() if isinstance(idx, Tensor) else idx


@pytest.mark.parametrize("name", sorted(INDEX))
def test_getitem(backend, name):
    idx = _resolve(INDEX[name])
    assert_close(t()[idx].numpy(), A[_np_index(idx)], "float32")


@pytest.mark.parametrize("idx,error", [(5, IndexError), ((0, 0, 0, 0), IndexError), ((Ellipsis, Ellipsis), IndexError),
                                       ((T([0, 3]),), IndexError), ((T([0.5]),), IndexError),
                                       ((slice(None, None, 0),), ValueError), (True, IndexError)])
def test_getitem_errors(backend, idx, error):
    with pytest.raises(error):
        t()[_resolve(idx)]


SETITEM = {
    "int": (1, 0.0), "slice": ((slice(None), slice(1, 3)), 5.0), "step": ((Ellipsis, slice(None, None, 2)), -1.0),
    "neg_step": ((0, slice(None, None, -2)), 9.0), "tensor_value": ((1, 2), "row"),
    "broadcast": ((slice(None), 0), "col"),
    "tensor_index": ((T([0, 1]), 1), 4.0),
}


@pytest.mark.parametrize("name", sorted(SETITEM))
def test_setitem(backend, name):
    idx, value = SETITEM[name]
    idx = _resolve(idx)
    x, a = t(), A.copy()
    if value == "row":
        v = np.arange(4, dtype=np.float32)
        x[idx], a[_np_index(idx)] = Tensor(v), v
    elif value == "col":
        v = np.arange(4, dtype=np.float32) * 10
        x[idx], a[_np_index(idx)] = Tensor(v), v
    else:
        x[idx], a[_np_index(idx)] = value, value
    assert_close(x.numpy(), a, "float32")


def test_setitem_keeps_earlier_readers(backend):
    x = Tensor([1.0, 2.0, 3.0])
    y = x * 2
    x[0] = 10.0
    assert y.tolist() == [2.0, 4.0, 6.0]
    assert x.tolist() == [10.0, 2.0, 3.0]


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_random_view_chains_property(backend, shape, data):
    """Random chains of movement ops against NumPy (each step may stack a view)."""
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = Tensor(a)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["permute", "flip", "pad", "shrink", "reshape", "slice", "expand"]))
        if kind == "permute":
            order = data.draw(st.permutations(range(a.ndim)))
            x, a = x.permute(order), a.transpose(order)
        elif kind == "flip":
            ax = data.draw(st.integers(0, a.ndim - 1))
            x, a = x.flip(ax), np.flip(a, ax)
        elif kind == "pad":
            pads = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in a.shape)
            x, a = x.pad(pads), np.pad(a, pads)
        elif kind == "shrink":
            b = [(lo, data.draw(st.integers(lo + 1, s))) for s in a.shape for lo in [data.draw(st.integers(0, s - 1))]]
            x, a = x.shrink(b), a[tuple(slice(lo, hi) for lo, hi in b)]
        elif kind == "reshape":
            flat = int(np.prod(a.shape))
            divs = [d for d in range(1, flat + 1) if flat % d == 0]
            d = data.draw(st.sampled_from(divs))
            x, a = x.reshape(d, flat // d), a.reshape(d, flat // d)
        elif kind == "slice":
            step = data.draw(st.sampled_from([1, 2, -1, -2]))
            x, a = x[..., ::step], a[..., ::step]
        else:
            x, a = x.unsqueeze(0).expand(2, *x.shape), np.broadcast_to(a[None], (2, *a.shape))
        if a.size > 400:
            break
    assert_close(x.numpy(), a, "float32")


@pytest.mark.parametrize("call,error,match", [
    (lambda: Tensor.ones(2, 3).reshape(4, 2), ValueError, r"cannot reshape \(2, 3\)"),
    (lambda: Tensor.ones(2, 3).permute(0, 0), ValueError, "not a permutation"),
    (lambda: Tensor.ones(2, 3).expand(4, 3), ValueError, "cannot expand"),
    (lambda: Tensor.ones(2, 3).transpose(0, 5), IndexError, "out of range"),
    (lambda: Tensor.ones(2, 3).cat(Tensor.ones(3, 3), dim=1), ValueError, "differ outside"),
    (lambda: Tensor.stack([Tensor.ones(2), Tensor.ones(3)]), ValueError, "shapes differ"),
    (lambda: Tensor.ones(2, 3).pad(((1, 1),)), ValueError, "before, after"),
    (lambda: Tensor.ones(2, 3).shrink(((0, 3), None)), ValueError, "do not fit"),
    (lambda: Tensor.ones(2, 3).sum(axis=2), IndexError, "out of range"),
])
def test_shape_errors_before_running(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_int_dtypes_move_exactly(backend):
    a = np.arange(24, dtype=np.int64).reshape(2, 3, 4) * 1_000_000_007
    x = Tensor(a)
    assert_close(x.permute(2, 0, 1).flip(0)[::2].numpy(), np.flip(a.transpose(2, 0, 1), 0)[::2], "int64")
    b = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert_close(Tensor(b).pad(((1, 0), (0, 1))).numpy(), np.pad(b, ((1, 0), (0, 1))), "uint8")
    assert Tensor(b).pad(((1, 0), (0, 1))).dtype == dtypes.uint8


def test_negative_step_slice_gradient(backend):
    """The gradient of a negative-step slice addresses the input as `c - k*i`: the native backend folded c into the
    load's offset field and left a negative VGPR offset, which the hardware reads as unsigned (a page fault)."""
    x = Tensor(A, requires_grad=True)
    w = np.random.default_rng(7).uniform(0.5, 1.5, (2, 2, 2)).astype(np.float32)
    out = x[:, ::-2, 1::2]
    assert_close(out.numpy(), A[:, ::-2, 1::2], "float32")  # realized first: the backward reads it as a buffer
    (out * Tensor(w)).sum().backward()
    ref = np.zeros_like(A)
    ref[:, ::-2, 1::2] = w
    assert_close(x.grad.numpy(), ref, "float32")


def test_flips_of_contiguous_stages(backend):
    """Three flipped stages of a (1, 4) tensor: indices `c - k*i` whose constant the native backend folded into the
    load's offset (test_negative_step_slice_gradient's bug, found first by the sort's gradient)."""
    x, a = Tensor(np.arange(4, dtype=np.float32).reshape(1, 4)), np.arange(4, dtype=np.float32).reshape(1, 4)
    for f in ((1,), (2,), (1,)):
        x = (x.reshape(1, 2, 2).flip(f) + 1).reshape(1, 4).contiguous()
        a = (np.flip(a.reshape(1, 2, 2), f) + 1).reshape(1, 4)
    assert_close(x.numpy(), a, "float32")
