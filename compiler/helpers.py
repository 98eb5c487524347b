"""Small shared helpers: environment knobs read when used (tests change them), products, argument checks."""

from __future__ import annotations

import os


def getenv(name: str, default: int = 0) -> int:
    """An integer environment knob (empty or unset: default)."""
    v = os.environ.get(name, "")
    try:
        return int(v) if v.strip() else default
    except ValueError:
        raise ValueError(f"{name}={v!r} is not an integer") from None


def debug() -> int:
    """SIMGPU_DEBUG: 1 prints launches, 2 adds the kernel IR, 3 the assembly."""
    return getenv("SIMGPU_DEBUG")


def check_oob() -> bool:
    """SIMGPU_CHECK_OOB: prove every load and store in bounds with z3 before compiling."""
    return bool(getenv("SIMGPU_CHECK_OOB"))


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """axis in [-ndim, ndim) as a non-negative index; IndexError otherwise."""
    if not isinstance(axis, int):
        raise TypeError(f"{what} must be an int, not {type(axis).__name__}")
    if not -ndim <= axis < max(ndim, 1):
        raise IndexError(f"{what} {axis} is out of range for a tensor with {ndim} dimensions")
    return axis % ndim if ndim else 0
