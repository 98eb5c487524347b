"""Ops suite, shapes: pad (flat and grouped amounts, negative amounts, constant/reflect/replicate/circular), pad_to
shrink_to split chunk unflatten unfold roll repeat_interleave meshgrid rearrange diag diagonal tril triu, and
clone empty_like linspace: each case against tinygrad 0.14's CPU device (one subprocess for the module,
tests/support/tinygrad_cases.py) and, where it has the operation, NumPy."""

import numpy as np
import pytest

from compiler import Tensor
from tests.support.tinygrad_cases import assert_matches, ours, run_tinygrad

SETUP = """
X = np.arange(12, dtype=np.float32).reshape(3, 4)
Y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
I = np.arange(10, dtype=np.int32)
"""

CASES = {
    "pad_flat": "T(Y).pad((1, 2))",
    "pad_flat_two_dims": "T(Y).pad((1, 0, 0, 2))",
    "pad_grouped": "T(Y).pad((None, (1, 1), (2, 0)))",
    "pad_negative": "T(X).pad((1, -2, -1, 1))",
    "pad_value": "T(X).pad(((1, 1), (0, 2)), value=-3.5)",
    "pad_negative_value": "T(X).pad((2, -1, 0, 0), value=9.0)",
    "pad_reflect": "T(Y).pad((2, 3, 1, 2), mode='reflect')",
    "pad_reflect_negative": "T(X).pad((2, -1, -1, 1), mode='reflect')",
    "pad_replicate": "T(Y).pad((3, 1, 0, 2), mode='replicate')",
    "pad_replicate_negative": "T(X).pad((-1, 2, 1, -1), mode='replicate')",
    "pad_circular": "T(Y).pad((4, 2, 3, 1), mode='circular')",
    "pad_circular_negative": "T(X).pad((-1, 2, 1, -2), mode='circular')",
    "pad_to": "T(X).pad_to((5, None))",
    "pad_to_value": "T(X).pad_to(4, 6, value=1.5)",
    "shrink_to": "T(Y).shrink_to((1, None, 2))",
    "split_int": "T(Y).split(2, dim=-1)",
    "split_uneven": "T(I).split(4)",
    "split_sizes": "T(Y).split([1, 0, 2], dim=1)",
    "chunk": "T(I).chunk(3)",
    "chunk_more_than_size": "T(X).chunk(5, dim=0)",
    "unflatten": "T(Y).unflatten(-1, (2, 2))",
    "unflatten_infer": "T(I).unflatten(0, (-1, 5))",
    "unfold": "T(I).unfold(0, 3, 2)",
    "unfold_dim": "T(Y).unfold(1, 2, 1)",
    "unfold_neg_dim": "T(Y).unfold(-1, 2, 3)",
    "roll": "T(X).roll(1, 1)",
    "roll_multi": "T(Y).roll((1, -5), (0, 2))",
    "roll_flat": "T(X).roll(5)",
    "repeat_interleave": "T(X).repeat_interleave(2, 1)",
    "repeat_interleave_flat": "T(X).repeat_interleave(3)",
    "meshgrid_ij": "T(I[:3]).meshgrid(T(I[:4]), T(I[:2]))",
    "meshgrid_xy": "T(I[:3]).meshgrid(T(I[:4]), indexing='xy')",
    "rearrange_split": "T(Y).rearrange('b c (h w) -> b h (c w)', h=2)",
    "rearrange_ellipsis": "T(Y).rearrange('... w -> w ...')",
    "rearrange_unit": "T(Y).rearrange('b c w -> b 1 (c w)')",
    "rearrange_permute": "T(Y).rearrange('a b c -> c a b')",
    "diag": "T(X[0]).diag()",
    "diagonal": "T(X).diagonal()",
    "diagonal_offset": "T(X).diagonal(1)",
    "diagonal_negative": "T(X).diagonal(-1)",
    "diagonal_dims": "T(Y).diagonal(1, 1, 2)",
    "triu": "T(Y).triu()",
    "triu_offset": "T(X).triu(2)",
    "tril": "T(X).tril()",
    "tril_negative": "T(Y).tril(-1)",
    "linspace": "T.linspace(0, 1, 5)",
    "linspace_negative": "T.linspace(-3.5, 2, 12)",
    "linspace_one": "T.linspace(2, 7, 1)",
    "linspace_int": "T.linspace(0, 10, 3, dtype='int32')",
    "clone": "T(X).clone()",
    "empty_like_shape": "T.zeros(*T(Y).empty_like().shape)",
    "grad_pad_reflect": "grad_of(lambda t: t.pad((2, 1, 1, 1), mode='reflect') * T(np.arange(35, dtype=np.float32)"
                        ".reshape(5, 7)), X)",
    "grad_pad_circular": "grad_of(lambda t: t.pad((1, 2), mode='circular') * T(np.arange(21, dtype=np.float32)"
                         ".reshape(3, 7)), X)",
    "grad_unfold": "grad_of(lambda t: t.unfold(1, 2, 1), X)",
    "grad_roll": "grad_of(lambda t: t.roll(1, 0) * T(X), X)",
    "grad_tril": "grad_of(lambda t: t.tril() * T(X), X)",
}

ON_CPU = ["pad_reflect", "pad_circular", "unfold", "roll_multi", "diagonal_dims", "triu", "rearrange_split"]


@pytest.fixture(scope="module")
def tinygrad_results():
    return run_tinygrad(SETUP, CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tinygrad(tinygrad_results, name):
    assert_matches(ours(SETUP, CASES[name]), tinygrad_results[name], name)


@pytest.mark.parametrize("name", ON_CPU)
def test_matches_tinygrad_on_cpu(tinygrad_results, name):
    assert_matches(ours(SETUP, CASES[name], device="CPU"), tinygrad_results[name], name)


# ---- NumPy ----------------------------------------------------------------------------------------------------
Y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("mode, np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes_match_numpy(mode, np_mode):
    pads = ((0, 0), (2, 1), (1, 3))
    np.testing.assert_array_equal(Tensor(Y).pad(pads, mode=mode).numpy(), np.pad(Y, pads, mode=np_mode))


def test_movement_matches_numpy():
    x = Tensor(Y)
    np.testing.assert_array_equal(x.roll((1, 2), (1, 2)).numpy(), np.roll(Y, (1, 2), (1, 2)))
    np.testing.assert_array_equal(x.repeat_interleave(2, 0).numpy(), np.repeat(Y, 2, 0))
    np.testing.assert_array_equal(x.diagonal(0, 1, 2).numpy(), np.diagonal(Y, 0, 1, 2))
    np.testing.assert_array_equal(x.triu(-1).numpy(), np.triu(Y, -1))
    np.testing.assert_array_equal(x.tril(1).numpy(), np.tril(Y, 1))
    np.testing.assert_array_equal(x[0, 0].diag().numpy(), np.diag(Y[0, 0]))
    for got, want in zip(x.split([1, 2], 1), np.split(Y, [1], 1), strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    windows = np.lib.stride_tricks.sliding_window_view(Y, 2, 2)[..., ::2, :]
    np.testing.assert_array_equal(x.unfold(2, 2, 2).numpy(), windows)
    assert x.diagonal(5, 1, 2).shape == np.diagonal(Y, 5, 1, 2).shape == (2, 0)  # tinygrad 0.14 raises here
    for got, want in zip(Tensor(Y[0, 0]).meshgrid(Tensor(Y[0, 1])), np.meshgrid(Y[0, 0], Y[0, 1], indexing="ij"),
                         strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_allclose(Tensor.linspace(-1, 3, 9).numpy(), np.linspace(-1, 3, 9, dtype=np.float32))


def test_empty_dimensions():
    e = Tensor(np.zeros((0, 3), np.float32))
    assert e.roll(1, 0).shape == (0, 3)
    assert [p.shape for p in e.split(2, 0)] == [(0, 3)]
    assert e.pad((1, 1)).shape == (0, 5)
    assert e.unflatten(1, (1, 3)).shape == (0, 1, 3)
    assert e.tril().shape == (0, 3)


def test_errors_name_the_argument():
    x = Tensor(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="even number"):
        x.pad((1, 2, 3))
    with pytest.raises(ValueError, match="reflect padding"):
        x.pad((4, 0), mode="reflect")
    with pytest.raises(ValueError, match="mode must be"):
        x.pad((1, 1), mode="wrap")
    with pytest.raises(ValueError, match="sum to 4"):
        x.split([1, 2], 1)
    with pytest.raises(ValueError, match="dim1 and dim2"):
        x.diagonal(0, 1, -1)
    with pytest.raises(ValueError, match="'d' is not in"):
        x.rearrange("a b -> b a", d=2)
    with pytest.raises(ValueError, match="indexing"):
        x.meshgrid(x, indexing="yx")


NEW_NAMES = ["sort", "argsort", "topk", "gather", "scatter", "scatter_reduce", "masked_fill", "masked_select",
             "nonzero", "tril", "triu", "diag", "diagonal", "split", "chunk", "unflatten", "roll", "unfold",
             "repeat_interleave", "meshgrid", "rearrange", "pad_to", "shrink_to", "einsum", "pad", "interpolate",
             "logsumexp", "logcumsumexp", "any", "all", "cumprod", "cummax", "cummin", "std_mean", "var_mean",
             "normalize", "clone", "empty_like", "linspace", "max_unpool2d"]


@pytest.mark.parametrize("name", NEW_NAMES)
def test_signature_is_tinygrads(name):
    """tinygrad's parameters, in tinygrad's order (ours may add trailing keywords, e.g. linspace's device)."""
    import inspect
    tinygrad = pytest.importorskip("tinygrad")

    def params(fn):
        return [p.name for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]
    theirs, mine = params(getattr(tinygrad.Tensor, name)), params(getattr(Tensor, name))
    assert mine[:len(theirs)] == theirs, f"{name}: ours {mine}, tinygrad {theirs}"
