"""compiler.nn: tinygrad 0.14's layers (`from compiler import Tensor, nn`), with its constructor signatures,
attribute names (so state dicts interchange: `weight`, `bias`, `running_mean`, ...), initial distributions and
forward passes. Parameters are leaves that require grad; running statistics are buffers (`is_param` False:
an optimizer realizes them but does not update them). `Tensor.training` chooses batch statistics (training) or
running statistics (inference) in BatchNorm, as tinygrad's TRAINING.

Submodules: nn.optim (optimizers), nn.state (state dicts, safetensors).
"""

from __future__ import annotations

import math

from compiler.dtypes import dtypes
from compiler.nn import optim, state  # noqa: F401 - nn.optim and nn.state, as tinygrad's nn
from compiler.tensor import Tensor

__all__ = ["BatchNorm", "BatchNorm2d", "BatchNorm3d", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
           "Embedding", "GroupNorm", "InstanceNorm", "LSTMCell", "LayerNorm", "LayerNorm2d", "Linear", "RMSNorm"]


def _param(t: Tensor) -> Tensor:
    """t as a trainable leaf (its own graph node, gradients recorded)."""
    return Tensor(t.lazydata, requires_grad=True)


def _buffer(t: Tensor) -> Tensor:
    """t as state that is saved and loaded but not trained (tinygrad's is_param_(False))."""
    out = Tensor(t.lazydata)
    out.is_param = False
    return out


def _uniform(*shape: int, low: float, high: float) -> Tensor:
    """A trainable tensor uniform on [low, high)."""
    return _param(Tensor.rand(*shape) * (high - low) + low)


def _tuple(v, n: int) -> tuple[int, ...]:
    return (v,) * n if isinstance(v, int) else tuple(v)


def _channel_shape(x: Tensor) -> tuple[int, ...]:
    return (1, -1) + (1,) * (x.ndim - 2)


class BatchNorm:
    """Batch normalisation over dimension 1: batch statistics while Tensor.training (and the running ones
    updated with momentum), the running statistics otherwise."""

    def __init__(self, sz: int, eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True,
                 momentum: float = 0.1):
        self.eps, self.track_running_stats, self.momentum = eps, track_running_stats, momentum
        self.weight: Tensor | None = _param(Tensor.ones(sz)) if affine else None
        self.bias: Tensor | None = _param(Tensor.zeros(sz)) if affine else None
        self.num_batches_tracked = _buffer(Tensor.zeros(dtype=dtypes.int64))
        if track_running_stats:
            self.running_mean, self.running_var = _buffer(Tensor.zeros(sz)), _buffer(Tensor.ones(sz))

    def calc_stats(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(mean, biased variance) per channel: of the batch when training, the running ones otherwise."""
        if self.track_running_stats and not Tensor.training:
            return self.running_mean, self.running_var.reshape(_channel_shape(x))
        axes = tuple(i for i in range(x.ndim) if i != 1)
        mean = x.mean(axes)
        d = x - mean.detach().reshape(_channel_shape(x))     # the variance's gradient ignores the mean's
        return mean, (d * d).mean(axes)

    def __call__(self, x: Tensor) -> Tensor:
        sized = self.weight if self.weight is not None else getattr(self, "running_mean", None)
        if x.ndim < 2 or (sized is not None and x.shape[1] != sized.shape[0]):
            raise ValueError(f"BatchNorm: input {x.shape} is not (N, C, ...) with the layer's channels in dim 1")
        mean, var = self.calc_stats(x)
        if self.track_running_stats and Tensor.training:
            n, m = x.numel(), self.momentum
            self.running_mean.assign((1 - m) * self.running_mean + m * mean.detach())
            # the running variance is the unbiased one (n / (n - channels) times the batch's)
            self.running_var.assign((1 - m) * self.running_var + m * n / (n - x.shape[1]) * var.detach())
            self.num_batches_tracked += 1
        return x.batchnorm(self.weight, self.bias, mean, (var + self.eps).rsqrt())


BatchNorm2d = BatchNorm3d = BatchNorm


class Conv2d:
    """Convolution over len(kernel_size) spatial dimensions (2 for an int); padding an int, a tuple, or
    'same' (stride 1)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True):
        self.kernel_size = _tuple(kernel_size, 2)
        if isinstance(padding, str):
            if padding.lower() != "same":
                raise ValueError(f"padding {padding!r}: the only string accepted is 'same'")
            if stride != 1:
                raise ValueError("padding='same' needs stride 1")
            dil = _tuple(dilation, len(self.kernel_size))
            pads = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                    for d, k in zip(reversed(dil), reversed(self.kernel_size), strict=True)]
            padding = tuple(v for p in pads for v in p)
        self.stride, self.dilation, self.groups, self.padding = stride, dilation, groups, padding
        bound = 1 / math.sqrt(in_channels * math.prod(self.kernel_size))
        self.weight = _uniform(out_channels, in_channels // groups, *self.kernel_size, low=-bound, high=bound)
        self.bias: Tensor | None = _uniform(out_channels, low=-bound, high=bound) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding)


def Conv1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, dilation=1,  # noqa: N802
           groups: int = 1, bias: bool = True) -> Conv2d:
    """A Conv2d with one spatial dimension (tinygrad's Conv1d)."""
    return Conv2d(in_channels, out_channels, (kernel_size,), stride, padding, dilation, groups, bias)


class ConvTranspose2d(Conv2d):
    """Transposed convolution; weight is (in_channels, out_channels / groups, *kernel)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 dilation=1, groups: int = 1, bias: bool = True):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
        bound = 1 / math.sqrt(in_channels * math.prod(self.kernel_size))
        self.weight = _uniform(in_channels, out_channels // groups, *self.kernel_size, low=-bound, high=bound)
        self.output_padding = output_padding

    def __call__(self, x: Tensor) -> Tensor:
        return x.conv_transpose2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding,
                                  self.output_padding)


def ConvTranspose1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0,  # noqa: N802
                    output_padding=0, dilation=1, groups: int = 1, bias: bool = True) -> ConvTranspose2d:
    """A ConvTranspose2d with one spatial dimension."""
    return ConvTranspose2d(in_channels, out_channels, (kernel_size,), stride, padding, output_padding, dilation,
                           groups, bias)


class Linear:
    """x @ weight.T + bias, weight (out_features, in_features), both uniform on +-1/sqrt(in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        bound = 1 / math.sqrt(in_features)
        self.weight = _uniform(out_features, in_features, low=-bound, high=bound)
        self.bias = _uniform(out_features, low=-bound, high=bound) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        if x.shape[-1:] != self.weight.shape[1:]:
            raise ValueError(f"Linear: input {x.shape} does not end in {self.weight.shape[1]} features")
        return x.linear(self.weight.transpose(), self.bias)


def _affine_channels(x: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is None or bias is None:
        return x
    return x * weight.reshape(_channel_shape(x)) + bias.reshape(_channel_shape(x))


class GroupNorm:
    """Normalisation over groups of channels (and all spatial positions), then a per-channel affine."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: {num_channels} channels do not split into {num_groups} groups")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight: Tensor | None = _param(Tensor.ones(num_channels)) if affine else None
        self.bias: Tensor | None = _param(Tensor.zeros(num_channels)) if affine else None

    def __call__(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: input {x.shape} does not have {self.num_channels} channels in dim 1")
        y = x.reshape(x.shape[0], self.num_groups, -1).layernorm(eps=self.eps).reshape(x.shape)
        return _affine_channels(y, self.weight, self.bias)


class InstanceNorm:
    """Normalisation of each channel of each sample over its spatial positions, then a per-channel affine."""

    def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = True):
        self.num_features, self.eps = num_features, eps
        self.weight: Tensor | None = _param(Tensor.ones(num_features)) if affine else None
        self.bias: Tensor | None = _param(Tensor.zeros(num_features)) if affine else None

    def __call__(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[1] != self.num_features:
            raise ValueError(f"InstanceNorm: input {x.shape} does not have {self.num_features} channels in dim 1")
        y = x.reshape(x.shape[0], self.num_features, -1).layernorm(eps=self.eps).reshape(x.shape)
        return _affine_channels(y, self.weight, self.bias)


class LayerNorm:
    """Normalisation over the last len(normalized_shape) dimensions, then an elementwise affine."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
        self.normalized_shape: tuple[int, ...] = _tuple(normalized_shape, 1)
        self.axis, self.eps = tuple(-1 - i for i in range(len(self.normalized_shape))), eps
        self.weight: Tensor | None = _param(Tensor.ones(*self.normalized_shape)) if elementwise_affine else None
        self.bias: Tensor | None = _param(Tensor.zeros(*self.normalized_shape)) if elementwise_affine else None

    def __call__(self, x: Tensor) -> Tensor:
        if x.shape[-len(self.normalized_shape):] != self.normalized_shape:
            raise ValueError(f"LayerNorm: the last dimensions of {x.shape} are not {self.normalized_shape}")
        y = x.layernorm(eps=self.eps, axis=self.axis)
        return y if self.weight is None or self.bias is None else y * self.weight + self.bias


class LayerNorm2d(LayerNorm):
    """LayerNorm over the channels of an (N, C, H, W) input."""

    def __call__(self, x: Tensor) -> Tensor:
        return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class RMSNorm:
    """x / sqrt(mean(x^2) + eps) over the last dimension (in float32), times weight."""

    def __init__(self, dim: int, eps: float = 1e-6, elementwise_affine: bool = True):
        self.eps = eps
        self.weight = _param(Tensor.ones(dim)) if elementwise_affine else None

    def _norm(self, x: Tensor) -> Tensor:
        return x * ((x * x).mean(-1, keepdim=True) + self.eps).rsqrt()

    def __call__(self, x: Tensor) -> Tensor:
        y = self._norm(x.float()).cast(x.dtype)
        return y if self.weight is None else y * self.weight


class Embedding:
    """A (vocab_size, embed_size) table (Glorot-uniform) indexed by integer tensors."""

    def __init__(self, vocab_size: int, embed_size: int):
        bound = math.sqrt(6 / (vocab_size + embed_size))
        self.weight = _uniform(vocab_size, embed_size, low=-bound, high=bound)

    def __call__(self, idx: Tensor) -> Tensor:
        if idx.dtype.is_float or idx.dtype == dtypes.bool:
            raise TypeError(f"Embedding: indices must be integers, not {idx.dtype.name}")
        # a one-hot selection, so the table's gradient is a sum over the batch (no scatter needed)
        vocab = Tensor.arange(self.weight.shape[0], device=idx.device)
        hit = (vocab == idx.unsqueeze(-1)).unsqueeze(-1)
        return hit.where(self.weight, 0).sum(-2, dtype=self.weight.dtype)


class LSTMCell:
    """One LSTM step: gates i, f, g, o from x @ W_ih.T + h @ W_hh.T (+ biases); returns (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        bound = 1.0 / math.sqrt(hidden_size)
        self.weight_ih = _uniform(hidden_size * 4, input_size, low=-bound, high=bound)
        self.weight_hh = _uniform(hidden_size * 4, hidden_size, low=-bound, high=bound)
        self.bias_ih: Tensor | None = _param(Tensor.zeros(hidden_size * 4)) if bias else None
        self.bias_hh: Tensor | None = _param(Tensor.zeros(hidden_size * 4)) if bias else None

    def __call__(self, x: Tensor, hc: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        hidden = self.weight_hh.shape[1]
        if hc is None:
            zeros = Tensor.zeros(x.shape[0], hidden, dtype=x.dtype, device=x.device)
            hc = (zeros, zeros)
        gates = x.linear(self.weight_ih.T, self.bias_ih) + hc[0].linear(self.weight_hh.T, self.bias_hh)
        i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
        c = f.sigmoid() * hc[1] + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c
