"""Optimizers: SGD (momentum, Nesterov, weight decay) and Adam, PyTorch's update rules. `step()` realizes the
new parameters (and state) in one schedule, so each step's graph is fused and run once."""

from __future__ import annotations

from compiler.tensor import Tensor


class Optimizer:
    """Holds parameters (tensors that require grad)."""

    def __init__(self, params: list[Tensor], lr: float):
        self.params = list(params)
        if not self.params:
            raise ValueError("optimizer got an empty parameter list")
        for p in self.params:
            p.requires_grad = True
        self.lr = lr

    def zero_grad(self) -> None:
        """Forget the gradients."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """Update every parameter from its .grad, then realize the new values."""
        extra = self._update()
        Tensor.realize_all(*self.params, *extra)

    def _update(self) -> list[Tensor]:
        raise NotImplementedError

    def _gradients(self, weight_decay: float):
        """(index, parameter, gradient + weight_decay * parameter) of every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is not None:
                g = p.grad.detach()
                yield i, p, (g + weight_decay * p.detach()) if weight_decay else g


class SGD(Optimizer):
    """p -= lr * (g + weight_decay p), with optional (Nesterov) momentum."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False):
        super().__init__(params, lr)
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
        self.buf: list[Tensor | None] = [None] * len(self.params)

    def _update(self) -> list[Tensor]:
        state = []
        for i, p, g in self._gradients(self.weight_decay):
            if self.momentum:
                b = g if self.buf[i] is None else self.buf[i] * self.momentum + g
                self.buf[i] = b
                state.append(b)
                g = g + self.momentum * b if self.nesterov else b
            p.assign(p.detach() - self.lr * g)
        return state


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction, as torch.optim.Adam (weight_decay added to the gradient)."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(params, lr)
        self.b1, self.b2 = betas
        self.eps, self.weight_decay = eps, weight_decay
        self.t = 0
        self.m = [p.zeros_like().contiguous() for p in self.params]
        self.v = [p.zeros_like().contiguous() for p in self.params]

    def _update(self) -> list[Tensor]:
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        state = []
        for i, p, g in self._gradients(self.weight_decay):
            self.m[i] = self.m[i] * self.b1 + g * (1 - self.b1)
            self.v[i] = self.v[i] * self.b2 + g * g * (1 - self.b2)
            update = (self.m[i] * (1 / c1)) / ((self.v[i] * (1 / c2)).sqrt() + self.eps)
            p.assign(p.detach() - self.lr * update)
            state += [self.m[i], self.v[i]]
        return state
