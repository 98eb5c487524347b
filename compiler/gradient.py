"""Reverse-mode differentiation of Tensor (mixed in): backward() accumulates into the leaves' .grad, gradient()
returns d(self)/d(target) without touching any .grad; both walk the graph of differentiable primitives
(compiler.autograd's Functions) the operations recorded, in reverse topological order, iteratively."""

from __future__ import annotations

from typing import Self

from compiler.ir.ops import Ops
from compiler.lazy import LazyBuffer


class GradientOps:
    """Mixed into Tensor (module docstring)."""

    def backward(self, gradient: Self | None = None) -> None:
        """Accumulate d(self)/d(leaf) into the .grad of every tensor that requires grad (self must be a scalar
        unless gradient is given)."""
        if not self.requires_grad:
            raise RuntimeError("backward() on a tensor that does not require grad")
        for t, g in self._propagate(self._seed_gradient(gradient, "backward()"), None):
            g_t = type(self)(g)
            t.grad = g_t if t.grad is None else t.grad + g_t

    def gradient(self, *targets: Self, gradient: Self | None = None) -> list[Self]:
        """d(self)/d(target) for each target, without touching any .grad (tinygrad's gradient). A target that self
        does not depend on through tensors that require grad gets zeros."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        for i, t in enumerate(targets):
            if not isinstance(t, T) or not t.dtype.is_float:
                raise TypeError(f"gradient: targets[{i}] must be a float Tensor (only floats have gradients)")
        if not self.dtype.is_float:
            raise TypeError(f"gradient: self must be a float Tensor, not {self.dtype.name}")
        seed = self._seed_gradient(gradient, "gradient()")
        found = self._propagate(seed, {id(t) for t in targets}) if self.requires_grad else []
        by_id = {id(t): g for t, g in found}
        return [T(by_id[id(t)]) if id(t) in by_id else t.zeros_like() for t in targets]

    def _seed_gradient(self, gradient: Self | None, what: str) -> LazyBuffer:
        if gradient is None:
            if self.numel() != 1:
                raise ValueError(f"{what} without a gradient needs a one-element tensor, not shape {self.shape}")
            return LazyBuffer.const(1, self.dtype, self.device, self.shape)
        if gradient.shape != self.shape:
            raise ValueError(f"{what}: gradient of shape {gradient.shape} does not match self's shape {self.shape}")
        return gradient.lazydata

    def _propagate(self, seed: LazyBuffer, want: set[int] | None) -> list[tuple[Self, LazyBuffer]]:
        """Reverse-mode pass from self: (tensor, its gradient) for the tensors whose ids are in want, or for every
        leaf (a tensor without a creating function) when want is None."""
        grads: dict[int, LazyBuffer] = {id(self): seed}
        out = []
        for t in reversed(self._toposort()):
            g = grads.pop(id(t), None)
            if g is None:
                continue
            if (t._ctx is None) if want is None else (id(t) in want):
                out.append((t, g))
            if t._ctx is None:
                continue
            back = t._ctx.backward(g)
            back = back if isinstance(back, tuple) else (back,)
            for p, pg in zip(t._parents, back, strict=True):
                if pg is None or not p.requires_grad:
                    continue
                if pg.shape != p.shape:
                    raise AssertionError(f"gradient shape {pg.shape} != {p.shape} ({type(t._ctx).__name__})")
                grads[id(p)] = pg if id(p) not in grads else grads[id(p)].alu(Ops.ADD, pg)
        return out

    def _toposort(self) -> list[Self]:
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            t, done = stack.pop()
            if done:
                order.append(t)
                continue
            if id(t) in seen:
                continue
            seen.add(id(t))
            stack.append((t, True))
            stack.extend((p, False) for p in t._parents if id(p) not in seen)
        return order
