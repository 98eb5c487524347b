"""Random numbers: counter-based (Threefry-2x32 with 20 rounds, Salmon et al., "Parallel random numbers:
as easy as 1, 2, 3", SC'11), computed in the kernel from (seed, counter) with 32-bit integer operations
only, so a seed gives the same bits on every backend. `Tensor.manual_seed(n)` sets the seed and resets the
counter; each call draws the next block of counters. The key is a 2-element buffer, not a constant, so
kernels are reused across calls and seeds."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from compiler.dtypes import dtypes

if TYPE_CHECKING:
    from compiler.tensor import Tensor

ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
PARITY = 0x1BD11BDA


def _rotl(x: Tensor, r: int) -> Tensor:
    return (x << r) | (x >> (32 - r))


def threefry2x32(key0: Tensor, key1: Tensor, c0: Tensor, c1: Tensor) -> tuple[Tensor, Tensor]:
    """Threefry-2x32-20 of the counters (c0, c1) under key (key0, key1); uint32 tensors."""
    ks = (key0, key1, key0 ^ key1 ^ PARITY)
    x0, x1 = c0 + ks[0], c1 + ks[1]
    for i in range(20):
        x0 = x0 + x1
        x1 = _rotl(x1, ROTATIONS[i % 8]) ^ x0
        if i % 4 == 3:
            s = (i + 1) // 4
            x0 = x0 + ks[s % 3]
            x1 = x1 + ks[(s + 1) % 3] + s
    return x0, x1


def threefry_reference(key: tuple[int, int], c0: np.ndarray, c1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same function in NumPy (the tests' oracle for the kernel version)."""
    k0, k1 = np.uint32(key[0]), np.uint32(key[1])
    ks = (k0, k1, np.uint32(k0 ^ k1 ^ np.uint32(PARITY)))
    x0, x1 = (c0.astype(np.uint32) + ks[0]), (c1.astype(np.uint32) + ks[1])
    for i in range(20):
        x0 = x0 + x1
        r = ROTATIONS[i % 8]
        x1 = ((x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))) ^ x0
        if i % 4 == 3:
            s = (i + 1) // 4
            x0 = x0 + ks[s % 3]
            x1 = x1 + ks[(s + 1) % 3] + np.uint32(s)
    return x0, x1


class RandomOps:
    """Mixed into Tensor (module docstring)."""

    _seed: ClassVar[int] = 0
    _counter: ClassVar[int] = 0

    @staticmethod
    def manual_seed(seed: int = 0) -> None:
        """Seed the generator (and restart its counter)."""
        from compiler.tensor import Tensor
        Tensor._seed, Tensor._counter = int(seed) & 0xFFFFFFFF, 0

    @staticmethod
    def _random_bits(shape, device) -> tuple[Tensor, Tensor]:
        """Two uint32 words per element of shape, from the next counters."""
        from compiler.tensor import Tensor, _shape_arg
        shape = _shape_arg(shape)
        n = math.prod(shape)
        base = Tensor._counter
        Tensor._counter += n
        key = Tensor(np.array([Tensor._seed, base & 0xFFFFFFFF, base >> 32, 0], np.uint32), device=device)
        k0 = key[0].reshape((1,) * len(shape)).expand(shape) if shape else key[0]
        c0 = Tensor.arange(n, device=device).cast(dtypes.uint32).reshape(shape) + key[1]
        c1 = key[2].reshape((1,) * len(shape)).expand(shape) if shape else key[2]
        return threefry2x32(k0, Tensor.full(shape, 0x5EED, dtypes.uint32, device), c0, c1)

    @staticmethod
    def rand(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Uniform in [0, 1) (24 random bits; float32 unless dtype)."""
        from compiler.tensor import Tensor, _shape_arg
        shape = _shape_arg(shape)
        x0, _ = Tensor._random_bits(shape, device)
        out = (x0 >> 8).cast(dtypes.float32) * (1.0 / (1 << 24))
        return Tensor(out.cast(dtype or dtypes.default_float).lazydata, requires_grad=requires_grad)

    @staticmethod
    def randn(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Standard normal (Box-Muller on two uniforms)."""
        from compiler.tensor import Tensor, _shape_arg
        shape = _shape_arg(shape)
        x0, x1 = Tensor._random_bits(shape, device)
        u1 = ((x0 >> 8).cast(dtypes.float32) + 1) * (1.0 / (1 << 24))      # (0, 1]
        u2 = (x1 >> 8).cast(dtypes.float32) * (1.0 / (1 << 24))
        out = ((u1.log() * -2).sqrt() * (u2 * (2 * math.pi)).cos()).cast(dtype or dtypes.default_float)
        return Tensor(out.lazydata, requires_grad=requires_grad)

    @staticmethod
    def randint(low: int, high: int | None = None, shape=(), dtype=None, device=None) -> Tensor:
        """Integers in [low, high) (int32 unless dtype); randint(high, shape=...) starts at 0."""
        from compiler.tensor import Tensor, _shape_arg
        if high is None:
            low, high = 0, low
        if high <= low or high - low > 1 << 32:
            raise ValueError(f"randint: empty or too wide range [{low}, {high})")
        shape = _shape_arg(shape if isinstance(shape, tuple | list) else (shape,))
        x0, _ = Tensor._random_bits(shape, device)
        dt = dtypes.from_any(dtype) if dtype is not None else dtypes.default_int
        span = high - low
        r = x0 % span if span < 1 << 32 else x0
        return (r.cast(dtypes.int64) + low).cast(dt)

    def rand_like(self: Tensor, dtype=None) -> Tensor:
        """rand of self's shape and device."""
        from compiler.tensor import Tensor
        return Tensor.rand(*self.shape, dtype=dtype or self.dtype, device=self.device)

    def randn_like(self: Tensor, dtype=None) -> Tensor:
        """randn of self's shape and device."""
        from compiler.tensor import Tensor
        return Tensor.randn(*self.shape, dtype=dtype or self.dtype, device=self.device)
