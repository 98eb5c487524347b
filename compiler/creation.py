"""Creation of Tensor from a tensor or a range (clone, empty_like, linspace), mixed into Tensor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler.dtypes import dtypes

if TYPE_CHECKING:
    from compiler.tensor import Tensor


class CreationOps:
    """Mixed into Tensor (module docstring)."""

    def clone(self: Tensor, device: str | None = None) -> Tensor:
        """A copy in a buffer of its own (on device if given), cut from the autograd graph; .grad is cloned too."""
        from compiler.tensor import Tensor
        src = self if device is None else self.to(device)
        out = Tensor(src.lazydata).contiguous()
        if self.grad is not None:
            out.grad = self.grad.clone(device)
        return out

    def empty_like(self: Tensor, dtype=None, device: str | None = None) -> Tensor:
        """Memory of self's shape with undefined contents (self's dtype and device unless given)."""
        from compiler.tensor import Tensor
        return Tensor.empty(*self.shape, dtype=dtype or self.dtype, device=device or self.device)

    @staticmethod
    def linspace(start, stop, steps: int, dtype=None, device: str | None = None) -> Tensor:
        """steps evenly spaced values from start to stop inclusive (float32 unless dtype)."""
        from compiler.tensor import Tensor
        if steps < 0:
            raise ValueError(f"linspace: steps must be non-negative, got {steps}")
        dt = dtypes.from_any(dtype or dtypes.default_float)
        if dt == dtypes.bool:
            raise TypeError("linspace: bool is not supported")
        if steps == 1:
            return Tensor.full((1,), start, dt, device)
        step = (stop - start) / (steps - 1) if steps > 1 else 0
        return (Tensor.arange(steps, device=device).cast(dtypes.default_float) * step + start).cast(dt)
