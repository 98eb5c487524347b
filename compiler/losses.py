"""Loss functions of Tensor (mixed in) with tinygrad 0.14's names, arguments and defaults: `self` holds the
predictions (probabilities, logits or log-probabilities), the first argument the targets. `reduction` is
"mean" (default), "sum" or "none". Arguments are checked when the loss is written, naming the argument."""

from __future__ import annotations

from typing import Self, TypeVar

from compiler.dtypes import dtypes

TensorT = TypeVar("TensorT", bound="LossOps")  # a Tensor (the class LossOps is mixed into)


REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {', '.join(map(repr, REDUCTIONS))}, not {reduction!r}")


def _check_smoothing(label_smoothing: float) -> None:
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be in [0.0, 1.0], not {label_smoothing}")


def _check_labels(Y: TensorT, name: str = "Y") -> None:  # noqa: N803 - tinygrad's argument name
    if not Y.dtype.is_int:
        raise TypeError(f"{name} must hold integer class indices, not {Y.dtype.name}")


class LossOps:
    """Mixed into Tensor (module docstring)."""

    def _do_reduction(self, reduction: str = "mean") -> Self:
        _check_reduction(reduction)
        return self if reduction == "none" else self.sum() if reduction == "sum" else self.mean()

    def _one_hot_along(self, num_classes: int, dim: int) -> Self:
        """Integer indices (with a size-1 dimension at dim) compared against 0..num_classes-1 along dim (bool)."""
        classes = type(self).arange(num_classes, device=self.device)
        return self == classes.reshape((num_classes,) + (1,) * (self.ndim - dim % self.ndim - 1))

    def _targets(self, Y) -> Self:  # noqa: N803
        Y = Y if isinstance(Y, type(self)) else type(self)(Y, device=self.device)
        if Y.device != self.device:
            raise ValueError(f"Y is on {Y.device}, the predictions on {self.device}")
        return Y

    def binary_crossentropy(self, Y, reduction: str = "mean") -> Self:  # noqa: N803
        """-(Y log p + (1 - Y) log(1 - p)) for probabilities p = self; each log clamped at -100 as PyTorch does
        (tinygrad's unclamped form gives inf or NaN where p is exactly 0 or 1)."""
        _check_reduction(reduction)
        Y = self._targets(Y)
        if Y.shape != self.shape:
            raise ValueError(f"Y has shape {Y.shape}, the predictions {self.shape}")
        p = self._float()
        loss = -(Y * p.log().maximum(-100) + (1 - Y) * (1 - p).log().maximum(-100))
        return loss._do_reduction(reduction)

    def binary_crossentropy_logits(self, Y, reduction: str = "mean", pos_weight=None) -> Self:  # noqa: N803
        """binary_crossentropy of sigmoid(self), from the logits without forming the probabilities; pos_weight
        scales the positive term."""
        _check_reduction(reduction)
        Y = self._targets(Y)
        if Y.shape != self.shape:
            raise ValueError(f"Y has shape {Y.shape}, the logits {self.shape}")
        x = self._float()
        pos = Y * x.logsigmoid()
        if pos_weight is not None:
            pos = pos * pos_weight
        return (-(pos + (1 - Y) * (-x).logsigmoid()))._do_reduction(reduction)

    def sparse_categorical_crossentropy(self, Y, ignore_index: int = -1, label_smoothing=0.0,  # noqa: N803
                                        reduction: str = "mean") -> Self:
        """Cross-entropy of logits self (..., classes) against integer labels Y (...); labels equal to
        ignore_index add nothing (and do not count in the mean); -1, the default, ignores nothing (as tinygrad:
        a label of -1 then contributes only its label-smoothing term)."""
        _check_reduction(reduction)
        _check_smoothing(label_smoothing)
        Y = self._targets(Y)
        _check_labels(Y)
        if Y.shape != self.shape[:-1]:
            raise ValueError(f"Y has shape {Y.shape}; logits of shape {self.shape} need {self.shape[:-1]}")
        log_probs = self._float().log_softmax(-1)
        keep = (Y != ignore_index) if ignore_index != -1 else Y.full_like(True, dtypes.bool)
        hit = Y.unsqueeze(-1)._one_hot_along(self.shape[-1], -1) & keep.unsqueeze(-1)
        picked = hit.where(log_probs, 0.0).sum(-1)
        smooth = keep.where(log_probs.mean(-1), 0.0)
        loss = -((1 - label_smoothing) * picked + label_smoothing * smooth)
        if reduction == "mean":
            return loss.sum() / keep.cast(loss.dtype).sum()
        return loss._do_reduction(reduction)

    def cross_entropy(self, Y, reduction: str = "mean", label_smoothing: float = 0.0) -> Self:  # noqa: N803
        """Cross-entropy of logits self (classes on dim 1, or dim 0 for a vector) against class probabilities Y
        (self's shape) or integer class indices (self's shape without the class dimension)."""
        _check_reduction(reduction)
        _check_smoothing(label_smoothing)
        Y = self._targets(Y)
        dim = 0 if self.ndim == 1 else 1
        n = self.shape[dim]
        if Y.shape != self.shape:
            need = self.shape[:dim] + self.shape[dim + 1:]
            if Y.shape != need:
                raise ValueError(f"Y has shape {Y.shape}; logits of shape {self.shape} need {self.shape} "
                                 f"(probabilities) or {need} (class indices)")
            _check_labels(Y)
            Y = Y.unsqueeze(dim)._one_hot_along(n, dim)
        logp = self._float().log_softmax(dim)
        Y = Y.cast(logp.dtype) * (1 - label_smoothing) + label_smoothing / n
        return (-(logp * Y).sum(dim))._do_reduction(reduction)

    def nll_loss(self, Y, weight=None, ignore_index: int | None = None, reduction: str = "mean") -> Self:  # noqa: N803
        """Negative log-likelihood of log-probabilities self (N, classes, ...) at integer labels Y (N, ...);
        weight (classes,) scales each class; labels equal to ignore_index are left out; "mean" divides by the
        total weight of the labels kept."""
        _check_reduction(reduction)
        Y = self._targets(Y)
        _check_labels(Y)
        if self.ndim < 2 or Y.shape != self.shape[:1] + self.shape[2:]:
            raise ValueError(f"Y has shape {Y.shape}; log-probabilities of shape {self.shape} need "
                             f"{self.shape[:1] + self.shape[2:]}")
        n = self.shape[1]
        hit = Y.unsqueeze(1)._one_hot_along(n, 1)
        x = self._float()
        if weight is None:
            w = Y.full_like(1.0, x.dtype)
        else:
            weight = weight if isinstance(weight, type(self)) else type(self)(weight, device=self.device)
            if weight.shape != (n,):
                raise ValueError(f"weight has shape {weight.shape}; it needs one value per class, ({n},)")
            w = hit.where(weight.cast(x.dtype).reshape((n,) + (1,) * (Y.ndim - 1)), 0.0).sum(1)
        if ignore_index is not None:
            w = (Y != ignore_index).where(w, 0.0)
        nll = -hit.where(x, 0.0).sum(1) * w
        return nll.sum() / w.sum() if reduction == "mean" else nll._do_reduction(reduction)
