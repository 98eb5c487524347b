"""Optimizers with tinygrad 0.14's signatures, defaults and update rules: SGD (momentum, Nesterov, weight decay),
LARS, Adam, AdamW, LAMB, and OptimizerGroup. `step()` realizes the new parameters, the optimizer's state and the
buffers (e.g. BatchNorm's running statistics) in one schedule, so a step's graph is fused and run once.

tinygrad's `fused=True` (one concatenated update) and Muon (`ns_coefficients`) are not provided: asking for them
raises. Unlike tinygrad, `step()` does not require a training flag.
"""

from __future__ import annotations

from compiler.dtypes import dtypes
from compiler.tensor import Tensor


def _dedup(ts: list[Tensor]) -> list[Tensor]:
    seen: set[int] = set()
    return [t for t in ts if not (id(t) in seen or seen.add(id(t)))]


def _is_param(t: Tensor) -> bool:
    return getattr(t, "is_param", True)


class Optimizer:
    """The parameters (tensors not marked is_param=False) it updates, the buffers it realizes, and lr as a
    (1,) float32 tensor (so a schedule can assign it without recompiling the step)."""

    def __init__(self, params: list[Tensor], lr: float, device=None, fused: bool = False):
        if lr < 0:
            raise ValueError(f"learning rate lr={lr} is negative")
        if fused:
            raise NotImplementedError("fused=True (tinygrad's FUSE_OPTIM) is not provided")
        params = list(params)
        self.params: list[Tensor] = _dedup([t for t in params if _is_param(t)])
        if not self.params:
            raise ValueError("optimizer got no parameters")
        self.buffers: list[Tensor] = _dedup([t for t in params if not _is_param(t)])
        for p in self.params:
            p.requires_grad = True
        self.device = device or self.params[0].device
        self.fused = False
        self.lr = Tensor([lr], dtype=dtypes.float32, device=self.device)

    def _new_optim_param(self) -> list[Tensor]:
        return [Tensor.zeros(*p.shape, dtype=dtypes.float32, device=self.device) for p in self.params]

    def zero_grad(self) -> None:
        """Forget the gradients."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """Update every parameter from its .grad and realize the parameters, state and buffers together."""
        Tensor.realize_all(*self.schedule_step())

    def schedule_step(self) -> list[Tensor]:
        """Assign the updates lazily; the tensors step() realizes."""
        missing = [i for i, p in enumerate(self.params) if p.grad is None]
        if missing:
            raise RuntimeError(f"parameters {missing} (of shapes {[self.params[i].shape for i in missing]}) have no "
                               "gradient: call backward() on a loss that depends on them first")
        updates, extra = self._step(self.params, [p.grad.detach() for p in self.params])
        for p, up in zip(self.params, updates, strict=True):
            p.assign(p.detach() - up)
        return extra + self.params + self.buffers

    def _lr(self) -> Tensor:
        return self.lr.reshape(())

    def _step(self, params: list[Tensor], grads: list[Tensor]) -> tuple[list[Tensor], list[Tensor]]:
        raise NotImplementedError


class OptimizerGroup(Optimizer):
    """Several optimizers stepped as one."""

    def __init__(self, *optimizers: Optimizer):
        # no Optimizer.__init__: the group's parameters, lr and state are its members'
        self.optimizers = optimizers
        self.params = [p for o in optimizers for p in o.params]
        self.buffers = [b for o in optimizers for b in o.buffers]

    def __getitem__(self, i: int) -> Optimizer:
        return self.optimizers[i]

    def zero_grad(self) -> None:
        """Forget every optimizer's gradients."""
        for o in self.optimizers:
            o.zero_grad()

    def schedule_step(self) -> list[Tensor]:
        """Every optimizer's schedule_step, concatenated."""
        return [t for o in self.optimizers for t in o.schedule_step()]


class LARS(Optimizer):
    """Layer-wise adaptive rate scaling: SGD whose step is scaled per tensor by the trust ratio
    tcoef * |w| / (|g| + wd |w|) (1 where a norm is 0); tcoef=0 is plain SGD."""

    def __init__(self, params: list[Tensor], lr=0.001, momentum=0.9, weight_decay=1e-4, ns_steps=0,
                 ns_coefficients=None, nesterov=False, classic=True, pre_wd=True, tcoef=0.001, device=None,
                 fused=False):
        if momentum < 0:
            raise ValueError(f"momentum={momentum} is negative")
        if ns_coefficients:
            raise NotImplementedError("Newton-Schulz orthogonalisation (Muon) is not provided")
        super().__init__(params, lr, device, fused)
        self.momentum, self.wd, self.ns_steps, self.ns_coefficients = momentum, weight_decay, ns_steps, None
        self.nesterov, self.classic, self.pre_wd, self.tcoef = nesterov, classic, pre_wd, tcoef
        self.b = self._new_optim_param() if momentum else []

    def _trust(self, t: Tensor, g: Tensor):
        if self.tcoef == 0:
            return 1.0
        r1, r2 = (t * t).sum().sqrt(), (g * g).sum().sqrt()
        return (r1 > 0).where((r2 > 0).where(self.tcoef * r1 / (r2 + self.wd * r1), 1.0), 1.0)

    def _step(self, params, grads):
        out = []
        for i, (t, g) in enumerate(zip(params, grads, strict=True)):
            t = t.detach()
            r = self._trust(t, g)
            if self.pre_wd and self.wd > 0:
                g = g + self.wd * t
            if self.classic:                 # classic momentum: the rate is applied before the momentum
                g = g * r * self._lr()
            if self.momentum:
                self.b[i].assign(self.momentum * self.b[i] + g)     # b starts at 0: no first-step case
                g = g + self.momentum * self.b[i] if self.nesterov else self.b[i]
            if not self.classic:
                g = g * r * self._lr()
            if not self.pre_wd and self.wd > 0:
                g = g + self.wd * self._lr() * t
            out.append(g.cast(t.dtype))
        return out, list(self.b)


def SGD(params: list[Tensor], lr=0.001, momentum=0.0, weight_decay=0.0, nesterov=False, classic=False,  # noqa: N802
        device=None, fused=False) -> LARS:
    """Stochastic gradient descent with optional momentum (PyTorch's rule; classic=True applies lr before the
    momentum), Nesterov momentum and L2 weight decay."""
    return LARS(params, lr, momentum, weight_decay, 0, None, nesterov, classic=classic, pre_wd=True, tcoef=0.0,
                device=device, fused=fused)


class LAMB(Optimizer):
    """LAMB: Adam's bias-corrected step plus decoupled weight decay, scaled per tensor by |w| / |step|
    (adam=True leaves that ratio out: AdamW)."""

    def __init__(self, params: list[Tensor], lr=0.001, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0, adam=False,
                 device=None, fused=False):
        if weight_decay < 0:
            raise ValueError(f"weight_decay={weight_decay} is negative")
        super().__init__(params, lr, device, fused)
        self.b1, self.b2, self.eps, self.wd, self.adam = b1, b2, eps, weight_decay, adam
        self.b1_t, self.b2_t = (Tensor.ones(1, dtype=dtypes.float32, device=self.device) for _ in range(2))
        for t in (self.b1_t, self.b2_t):
            t.is_param = False
        self.m = self._new_optim_param()
        self.v = self._new_optim_param()

    def _step(self, params, grads):
        self.b1_t *= self.b1
        self.b2_t *= self.b2
        c1, c2 = (1.0 - self.b1_t).reshape(()), (1.0 - self.b2_t).reshape(())
        out = []
        for i, (t, g) in enumerate(zip(params, grads, strict=True)):
            t = t.detach()
            self.m[i].assign(self.b1 * self.m[i] + (1.0 - self.b1) * g)
            self.v[i].assign(self.b2 * self.v[i] + (1.0 - self.b2) * (g * g))
            up = (self.m[i] / c1) / ((self.v[i] / c2).sqrt() + self.eps)
            if self.wd:
                up = up + self.wd * t
            r = 1.0
            if not self.adam:
                r1, r2 = (t * t).sum().sqrt(), (up * up).sum().sqrt()
                r = (r1 > 0).where((r2 > 0).where(r1 / r2, 1.0), 1.0)
            out.append((self._lr() * r * up).cast(t.dtype))
        return out, [self.b1_t, self.b2_t, *self.m, *self.v]


def AdamW(params: list[Tensor], lr=0.001, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.01, device=None,  # noqa: N802
          fused=False) -> LAMB:
    """Adam with decoupled weight decay (lr * weight_decay * w subtracted each step)."""
    return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True, device=device, fused=fused)


def Adam(params: list[Tensor], lr=0.001, b1=0.9, b2=0.999, eps=1e-8, device=None, fused=False) -> LAMB:  # noqa: N802
    """Adam (Kingma & Ba) with bias correction."""
    return LAMB(params, lr, b1, b2, eps, 0.0, adam=True, device=device, fused=fused)
