"""Activation functions of Tensor (mixed in), with tinygrad 0.14's names, arguments and defaults. Each is written
to keep its precision at the edges (large, tiny, negative, infinite inputs), not as the shortest formula:
expm1/log1p forms where a difference of nearly equal values would cancel."""

from __future__ import annotations

import math
from typing import Self

from compiler.transcendental import in_float32


class ActivationOps:
    """Mixed into Tensor (module docstring)."""

    def relu(self) -> Self:
        """max(x, 0) (gradient 0 at 0)."""
        return (self > 0).where(self, 0)

    def relu6(self) -> Self:
        """min(max(x, 0), 6)."""
        return self.clip(0, 6)

    def hardtanh(self, min_val=-1, max_val=1) -> Self:
        """x clipped to [min_val, max_val]."""
        return self.clip(min_val, max_val)

    def hardsigmoid(self, alpha: float = 1 / 6, beta: float = 0.5) -> Self:
        """max(0, min(1, alpha * x + beta)) (PyTorch's defaults)."""
        return (alpha * self._float() + beta).clip(0, 1)

    def hardswish(self) -> Self:
        """x * relu6(x + 3) / 6."""
        x = self._float()
        return x * (x + 3).relu6() * (1 / 6)

    def leaky_relu(self, neg_slope=0.01) -> Self:
        """x where x >= 0, else neg_slope * x."""
        x = self._float()
        return (x < 0).where(neg_slope * x, x)

    @in_float32
    def elu(self, alpha=1.0) -> Self:
        """x where x > 0, else alpha * (e^x - 1)."""
        x = self._float()
        return (x > 0).where(x, alpha * x.minimum(0)._expm1())

    @in_float32
    def celu(self, alpha=1.0) -> Self:
        """max(0, x) + min(0, alpha * (e^(x/alpha) - 1))."""
        x = self._float()
        return x.maximum(0) + (alpha * (x.minimum(0) / alpha)._expm1()).minimum(0)

    @in_float32
    def selu(self, alpha=1.67326, gamma=1.0507) -> Self:
        """gamma * (x where x >= 0, else alpha * (e^x - 1)) (tinygrad's rounded constants)."""
        x = self._float()
        return gamma * (x >= 0).where(x, alpha * x.minimum(0)._expm1())

    @in_float32
    def softplus(self, beta=1.0) -> Self:
        """log(1 + e^(beta x)) / beta, as logaddexp(beta x, 0) / beta (no overflow for large x)."""
        return (1 / beta) * (self._float() * beta).logaddexp(0.0)

    @in_float32
    def softsign(self) -> Self:
        """x / (1 + |x|)."""
        x = self._float()
        return x / (1 + x.abs())

    @in_float32
    def mish(self) -> Self:
        """x * tanh(softplus(x))."""
        x = self._float()
        return x * x.softplus().tanh()

    @in_float32
    def logsigmoid(self) -> Self:
        """log(sigmoid(x)) = -softplus(-x)."""
        return -(-self._float()).softplus()

    @in_float32
    def swish(self) -> Self:
        """x * sigmoid(x) (= silu)."""
        x = self._float()
        return x * x.sigmoid()

    def silu(self) -> Self:
        """x * sigmoid(x) (= swish)."""
        return self.swish()

    @in_float32
    def quick_gelu(self) -> Self:
        """x * sigmoid(1.702 x)."""
        x = self._float()
        return x * (x * 1.702).sigmoid()

    @in_float32
    def gelu(self, approximate: str = "tanh") -> Self:
        """GELU: tinygrad's default "tanh" form, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed as
        x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) (the same function, without 1 + tanh cancelling for x < 0);
        "none" the exact x/2 (1 + erf(x / sqrt(2)))."""
        x = self._float()
        if approximate == "tanh":
            return x * ((x + 0.044715 * x * x * x) * (2 * math.sqrt(2 / math.pi))).sigmoid()
        if approximate == "none":
            return 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf())
        raise ValueError(f"gelu: approximate must be 'tanh' or 'none', not {approximate!r}")

    def softmin(self, axis=-1, dtype=None) -> Self:
        """softmax(-x) along axis (in dtype if given)."""
        x = self if dtype is None else self.cast(dtype)
        return (-x).softmax(axis)
