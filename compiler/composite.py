"""Composite operations of Tensor, written with its primitives (so their gradients come from autograd):
matrix products, softmax, normalisation, convolution and pooling through sliding windows, attention."""

from __future__ import annotations

import math
from typing import Self

from compiler.dtypes import dtypes
from compiler.helpers import broadcast_shape


def _pair(v, n: int = 2, what: str = "value") -> tuple[int, ...]:
    t = (v,) * n if isinstance(v, int) else tuple(v)
    if len(t) == 1 and n > 1:
        t = t * n
    if len(t) != n or not all(isinstance(x, int) for x in t):
        raise ValueError(f"{what} must be an int or {n} ints, got {v!r}")
    return t


def _conv_padding(padding, n: int) -> tuple[tuple[int, int], ...]:
    """(before, after) per spatial dimension from tinygrad's padding forms: an int, n ints (both sides), or 2n
    ints in F.pad's order (the last dimension's pair first)."""
    if isinstance(padding, int):
        return ((padding, padding),) * n
    p = tuple(padding)
    if not all(isinstance(v, int) for v in p) or len(p) not in (n, 2 * n):
        raise ValueError(f"padding must be an int or {n} or {2 * n} ints, got {padding!r}")
    if len(p) == n:
        return tuple((v, v) for v in p)
    return tuple((p[2 * (n - 1 - i)], p[2 * (n - 1 - i) + 1]) for i in range(n))


def _ceil_extra(n: int, pad: int, k: int, s: int, d: int, before: int) -> int:
    """Padding ceil_mode adds after a dimension of size n (padded by pad in all): one more window when a partial
    one remains, unless it would start past the input and its leading padding (PyTorch's rule)."""
    span = d * (k - 1) + 1
    out = -(-(n + pad - span) // s) + 1
    if (out - 1) * s >= n + before:
        out -= 1
    return max(0, (out - 1) * s + span - (n + pad))


class CompositeOps:
    """Mixed into Tensor (module docstring)."""

    # ---- products -------------------------------------------------------------------------------------------
    def matmul(self, x: Self, reverse: bool = False, dtype=None) -> Self:
        """Matrix product with NumPy's rules: 1-D operands are vectors, leading dimensions broadcast (tinygrad's
        arguments: reverse computes x @ self; dtype the type the products are summed and returned in)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        x = x if isinstance(x, T) else T(x, device=self.device)
        a, b = (x, self) if reverse else (self, x)
        if dtype is not None:
            a, b = a.cast(dtype), b.cast(dtype)
        return a._matmul(b)

    def _matmul(self, other: Self) -> Self:
        if self.ndim == 0 or other.ndim == 0:
            raise ValueError("matmul: operands must have at least one dimension (use * for scalars)")
        a = self.unsqueeze(0) if self.ndim == 1 else self
        b = other.unsqueeze(-1) if other.ndim == 1 else other
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"matmul: shapes {self.shape} and {other.shape} do not align "
                             f"({a.shape[-1]} != {b.shape[-2]})")
        batch = broadcast_shape(a.shape[:-2], b.shape[:-2])
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        a = a._broadcast_to(batch + (m, k))
        b = b._broadcast_to(batch + (k, n))
        prod = a.reshape(batch + (m, 1, k)) * b.transpose(-1, -2).reshape(batch + (1, n, k))
        out = prod.sum(-1, dtype=prod.dtype)
        if self.ndim == 1:
            out = out.squeeze(-2)
        if other.ndim == 1:
            out = out.squeeze(-1)
        return out

    def dot(self, w: Self, dtype=None) -> Self:
        """matmul (NumPy's dot for 1-D and 2-D operands)."""
        return self.matmul(w, dtype=dtype)

    def linear(self, weight: Self, bias: Self | None = None, dtype=None) -> Self:
        """self @ weight + bias, tinygrad's meaning (weight is (in, out); a 1-D weight scales elementwise).
        nn.Linear keeps PyTorch's (out, in) layout and passes weight.T."""
        if dtype is not None:
            return self.cast(dtype).linear(weight.cast(dtype), None if bias is None else bias.cast(dtype))
        out = self * weight if weight.ndim == 1 else self.matmul(weight)
        return out if bias is None else out + bias

    # ---- normalisation ---------------------------------------------------------------------------------------
    def softmax(self, axis: int = -1, dtype=None) -> Self:
        """exp(x - max) / sum(exp(x - max)) along axis (computed in dtype when given)."""
        x = self.cast(dtype) if dtype is not None else self._float()
        e = (x - x.max(axis, keepdim=True)).exp()
        return e / e.sum(axis, keepdim=True)

    def log_softmax(self, axis: int = -1, dtype=None) -> Self:
        """x - max - log(sum(exp(x - max))) along axis (computed in dtype when given)."""
        x = self.cast(dtype) if dtype is not None else self._float()
        m = x - x.max(axis, keepdim=True)
        return m - m.exp().sum(axis, keepdim=True).log()

    def layernorm(self, axis=-1, eps: float = 1e-5, weight: Self | None = None,
                  bias: Self | None = None) -> Self:
        """(x - mean) / sqrt(var + eps) over axis (biased variance, as PyTorch's LayerNorm), then * weight + bias."""
        x = self._float()
        mean = x.mean(axis, keepdim=True)
        d = x - mean
        out = d * ((d * d).mean(axis, keepdim=True) + eps).rsqrt()
        if weight is not None:
            out = out * weight
        return out if bias is None else out + bias

    # ---- windows ------------------------------------------------------------------------------------------
    def _windows(self, kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...]) -> Self:
        """(..., *spatial) -> (..., *out, *kernel): every window of the last len(kernel) dimensions, built from
        movement ops only (no memory): repeat, pad, reshape and shrink turn the dimension into rows that each
        start one dilation step later, then a stride is a reshape and a shrink."""
        x = self
        lead = x.ndim - len(kernel)
        for i, (k, s, d) in enumerate(zip(kernel, stride, dilation, strict=True)):
            axis = lead + i
            n = x.shape[axis]
            o = (n - d * (k - 1) - 1) // s + 1
            if o <= 0:
                raise ValueError(f"window {k} (dilation {d}) does not fit in a dimension of size {n}")
            others = [j for j in range(x.ndim) if j != axis]
            x = x.permute(others + [axis])                  # (A..., B..., n)
            pre = x.shape[:-1]
            keep = tuple((0, v) for v in pre)
            rows = x.unsqueeze(-2).expand(pre + (k, n)).reshape(pre + (k * n,))
            rows = rows.pad(((0, 0),) * len(pre) + ((0, k * d),)).reshape(pre + (k, n + d))  # row j starts at j*d
            span = (o - 1) * s + 1
            rows = rows.shrink(keep + ((0, k), (0, span))).pad(((0, 0),) * (len(pre) + 1) + ((0, o * s - span),))
            rows = rows.reshape(pre + (k, o, s)).shrink(keep + ((0, k), (0, o), (0, 1))).reshape(pre + (k, o))
            x = rows.transpose(-1, -2)                      # (A..., B..., o, k)
            a, b = axis, x.ndim - 2 - axis
            x = x.permute(list(range(a)) + [a + b] + list(range(a, a + b)) + [a + b + 1])  # (A..., o, B..., k)
        return x

    def conv2d(self, weight: Self, bias: Self | None = None, groups: int = 1, stride=1, dilation=1,
               padding=0, dtype=None) -> Self:
        """Convolution (cross-correlation) over any number of spatial dimensions, tinygrad's argument order:
        self (N, C, *spatial), weight (O, C/groups, *kernel). padding is an int, one per spatial dimension, or
        two per dimension in F.pad's order (last dimension first: left, right, top, bottom); negative crops."""
        nsp = weight.ndim - 2
        if self.ndim != weight.ndim or nsp < 1:
            raise ValueError(f"conv2d: input {self.shape} and weight {weight.shape} must have the same number "
                             "(at least 3) of dimensions")
        (n, c), (o, cg), ks = self.shape[:2], weight.shape[:2], weight.shape[2:]
        if groups < 1 or c % groups or o % groups or cg != c // groups:
            raise ValueError(f"conv2d: {c} input channels, weight {weight.shape} and groups={groups} disagree")
        st, dl = _pair(stride, nsp, "stride"), _pair(dilation, nsp, "dilation")
        x = self._pad_or_shrink(((0, 0), (0, 0)) + _conv_padding(padding, nsp))
        win = x._windows(ks, st, dl)                               # (N, C, *out, *kernel)
        osz = win.shape[2:2 + nsp]
        win = win.reshape(n, groups, 1, cg, *osz, *ks)
        wt = weight.reshape(1, groups, o // groups, cg, *(1,) * nsp, *ks)
        prod = win * wt
        out = prod.sum((3, *range(4 + nsp, 4 + 2 * nsp)), dtype=dtype or prod.dtype).reshape(n, o, *osz)
        return out if bias is None else out + bias.reshape(1, o, *(1,) * nsp)

    def conv_transpose2d(self, weight: Self, bias: Self | None = None, groups: int = 1, stride=1,
                         dilation=1, padding=0, output_padding=0) -> Self:
        """Transposed convolution (the gradient of conv2d with respect to its input), tinygrad's argument order:
        self (N, C, *spatial), weight (C, O/groups, *kernel); padding as conv2d's."""
        nsp = weight.ndim - 2
        if self.ndim != weight.ndim or nsp < 1:
            raise ValueError(f"conv_transpose2d: input {self.shape} and weight {weight.shape} must have the same "
                             "number (at least 3) of dimensions")
        c, og, ks = weight.shape[0], weight.shape[1], weight.shape[2:]
        if groups < 1 or c % groups or self.shape[1] != c:
            raise ValueError(f"conv_transpose2d: input {self.shape}, weight {weight.shape} and groups={groups} "
                             "disagree")
        st, dl = _pair(stride, nsp, "stride"), _pair(dilation, nsp, "dilation")
        op = _pair(output_padding, nsp, "output_padding")
        pads = _conv_padding(padding, nsp)
        # the equivalent convolution: weight per group transposed (in <-> out) and flipped in space
        w = weight.reshape(groups, c // groups, og, *ks).transpose(1, 2).flip(tuple(range(3, 3 + nsp)))
        w = w.reshape(groups * og, c // groups, *ks)
        x = self
        for i, s in enumerate(st):          # stride s: s - 1 zeros between neighbours
            if s > 1:
                axis, size = 2 + i, x.shape[2 + i]
                x = x.unsqueeze(axis + 1).pad(((0, 0),) * (axis + 1) + ((0, s - 1),) + ((0, 0),) * (x.ndim - axis - 1))
                x = x.reshape(*x.shape[:axis], size * s, *x.shape[axis + 2:])
                x = x.shrink(tuple((0, size * s - (s - 1)) if j == axis else None for j in range(x.ndim)))
        full = tuple(((k - 1) * d - pb, (k - 1) * d - pa + p)
                     for k, d, (pb, pa), p in zip(ks, dl, pads, op, strict=True))
        flat = tuple(v for pair in reversed(full) for v in pair)
        return x.conv2d(w, bias, groups=groups, dilation=dl, padding=flat)

    def _pad_or_shrink(self, pads) -> Self:
        """pad with ((before, after),) per dimension, where a negative amount crops instead."""
        grow = tuple((max(a, 0), max(b, 0)) for a, b in pads)
        out = self.pad(grow)
        if all(a >= 0 and b >= 0 for a, b in pads):
            return out
        bounds = tuple((-min(a, 0), s - (-min(b, 0))) for (a, b), s in zip(pads, out.shape, strict=True))
        if any(lo > hi for lo, hi in bounds):
            raise ValueError(f"padding {pads} crops more than the size of {self.shape}")
        return out.shrink(bounds)

    def batchnorm(self, weight: Self | None, bias: Self | None, mean: Self, invstd: Self,
                  axis=1) -> Self:
        """(x - mean) * weight * invstd + bias, the statistics laid along axis (an int or a tuple)."""
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(a % self.ndim for a in axes)
        shape = tuple(s if i in axes else 1 for i, s in enumerate(self.shape))
        x = self - mean.reshape(shape)
        if weight is not None:
            x = x * weight.reshape(shape)
        out = x * (invstd.reshape(shape) if invstd.ndim == len(axes) else invstd)
        return out if bias is None else out + bias.reshape(shape)

    def _pool_geometry(self, kernel_size, stride, dilation, padding, ceil_mode: bool):
        """(kernel, stride, dilation, padding as (before, after) per spatial dimension, the padding ceil_mode
        adds after each) for pooling the last len(kernel) dimensions."""
        k = _pair(kernel_size, what="kernel_size") if isinstance(kernel_size, int) else tuple(kernel_size)
        nd = len(k)
        if self.ndim < nd or not all(isinstance(v, int) and v > 0 for v in k):
            raise ValueError(f"pooling with kernel_size {kernel_size!r} needs {nd} spatial dimensions, "
                             f"got {self.shape}")
        st = k if stride is None else _pair(stride, nd, what="stride")
        dl = _pair(dilation, nd, what="dilation")
        pads = _conv_padding(padding, nd)
        extra = tuple(_ceil_extra(n, pb + pa, kk, ss, dd, pb) if ceil_mode else 0
                      for n, (pb, pa), kk, ss, dd in zip(self.shape[-nd:], pads, k, st, dl, strict=True))
        return k, st, dl, pads, extra

    def _pool_windows(self, k, st, dl, pads, value) -> Self:
        """The windows (..., *out, *kernel) of self padded with value by pads ((before, after) per dimension)."""
        return self.pad(((0, 0),) * (self.ndim - len(k)) + tuple(pads), value=value)._windows(k, st, dl)

    def max_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode: bool = False,
                   return_indices: bool = False):
        """Maximum over windows of the last len(kernel_size) dimensions (tinygrad's arguments; padding reads the
        dtype's lowest value); with return_indices also the flat spatial index (int32) of each window's first
        maximum."""
        k, st, dl, pads, extra = self._pool_geometry(kernel_size, stride, dilation, padding, ceil_mode)
        pads = tuple((b, a + e) for (b, a), e in zip(pads, extra, strict=True))
        low = -math.inf if self.dtype.is_float else self.dtype.min
        axes = tuple(range(-len(k), 0))
        windows = self._pool_windows(k, st, dl, pads, low)
        out = windows.max(axes)
        if not return_indices:
            return out
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        spatial = self.shape[-len(k):]
        flat = T.arange(math.prod(spatial), device=self.device).cast(dtypes.int32).reshape(spatial)
        big = math.prod(spatial)  # above every index: padding is never the first maximum
        idx = flat._pool_windows(k, st, dl, pads, big)._broadcast_to(windows.shape)
        first = (windows == out.reshape(out.shape + (1,) * len(k))).where(idx, big).min(axes)
        return out, first

    def avg_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode: bool = False,
                   count_include_pad: bool = True) -> Self:
        """Mean over windows of the last len(kernel_size) dimensions (tinygrad's arguments): zero padding counts
        in the divisor unless count_include_pad is False; what ceil_mode adds never counts."""
        k, st, dl, pads, extra = self._pool_geometry(kernel_size, stride, dilation, padding, ceil_mode)
        full = tuple((b, a + e) for (b, a), e in zip(pads, extra, strict=True))
        axes = tuple(range(-len(k), 0))
        total = self._pool_windows(k, st, dl, full, 0).sum(axes)
        if count_include_pad and not any(extra):
            return total / math.prod(k)
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        ones = T.ones(*self.shape[-len(k):], dtype=total.dtype, device=self.device)
        if count_include_pad:  # the requested padding counts: ones padded with 1 there, with 0 in ceil's extra
            ones = ones.pad(tuple(pads), value=1.0)
            full = tuple((0, e) for e in extra)
        count = ones._pool_windows(k, st, dl, full, 0).sum(axes)
        return total / count

    # ---- misc --------------------------------------------------------------------------------------------------
    def one_hot(self, num_classes: int) -> Self:
        """(..., num_classes) int32 with a 1 at each integer value."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if self.dtype.is_float:
            raise TypeError(f"one_hot needs integers, not {self.dtype.name}")
        classes = T.arange(num_classes, device=self.device)
        return (self.unsqueeze(-1) == classes).cast(dtypes.int32)

    def scaled_dot_product_attention(self, key: Self, value: Self, attn_mask: Self | None = None,
                                     dropout_p: float = 0.0, is_causal: bool = False,
                                     enable_gqa: bool = False) -> Self:
        """softmax(q @ k^T / sqrt(d) + mask) @ v; is_causal masks keys after each query; dropout_p drops attention
        weights while Tensor.training; enable_gqa repeats each key/value head over its group of query heads."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if enable_gqa and key.ndim >= 3 and self.shape[-3] != key.shape[-3]:
            if self.shape[-3] % key.shape[-3]:
                raise ValueError(f"enable_gqa: {self.shape[-3]} query heads are not a multiple of {key.shape[-3]}")
            group = self.shape[-3] // key.shape[-3]
            key, value = key.repeat_interleave(group, -3), value.repeat_interleave(group, -3)
        d = self.shape[-1]
        scores = self.matmul(key.transpose(-1, -2)) * (1 / math.sqrt(d))
        if is_causal:
            lq, lk = scores.shape[-2], scores.shape[-1]
            allowed = T.arange(lq, device=self.device).reshape(lq, 1) >= \
                T.arange(lk, device=self.device).reshape(1, lk)
            scores = allowed.where(scores, -math.inf)
        if attn_mask is not None:
            scores = attn_mask.where(scores, -math.inf) if attn_mask.dtype == dtypes.bool else scores + attn_mask
        return scores.softmax(-1).dropout(dropout_p).matmul(value)

    def dropout(self, p: float = 0.5) -> Self:
        """Zero elements with probability p and scale the rest by 1/(1-p), when Tensor.training is set."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if not T.training or p == 0:
            return self
        keep = T.rand(*self.shape, device=self.device) >= p
        return keep.where(self, 0) * (1 / (1 - p))
