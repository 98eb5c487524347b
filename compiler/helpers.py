"""Small shared helpers: the compiler's settings (simgpu.settings, read when used: tests change them), products,
argument checks."""

from __future__ import annotations

import simgpu.settings as settings


def debug() -> int:
    """SIMGPU_DEBUG: 1 prints launches, 2 adds the kernel IR, 3 the assembly."""
    return settings.get("SIMGPU_DEBUG")


def check_oob() -> bool:
    """SIMGPU_CHECK_OOB: prove every load and store in bounds with z3 before compiling."""
    return bool(settings.get("SIMGPU_CHECK_OOB"))


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """axis in [-ndim, ndim) as a non-negative index; IndexError otherwise."""
    if not isinstance(axis, int):
        raise TypeError(f"{what} must be an int, not {type(axis).__name__}")
    if not -ndim <= axis < max(ndim, 1):
        raise IndexError(f"{what} {axis} is out of range for a tensor with {ndim} dimensions")
    return axis % ndim if ndim else 0


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast of shapes; ValueError naming them when they do not broadcast."""
    n = max(len(s) for s in shapes)
    padded = [(1,) * (n - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded, strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)
