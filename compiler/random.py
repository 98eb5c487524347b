"""Random numbers: counter-based (Threefry-2x32 with 20 rounds, Salmon et al., "Parallel random numbers:
as easy as 1, 2, 3", SC'11), computed in the kernel from (seed, counter) with 32-bit integer operations
only, so a seed gives the same bits on every backend. `Tensor.manual_seed(n)` sets the seed and resets the
counter; each call draws the next block of counters. The key is a 2-element buffer, not a constant, so
kernels are reused across calls and seeds."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from compiler.creation import shape_arg
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
        from compiler.tensor import Tensor
        shape = shape_arg(shape)
        n = math.prod(shape)
        base = Tensor._counter
        Tensor._counter += n
        key = Tensor(np.array([Tensor._seed, base & 0xFFFFFFFF, base >> 32, 0], np.uint32), device=device)
        k0 = key[0].reshape((1,) * len(shape)).expand(shape) if shape else key[0]
        c0 = Tensor.arange(n, device=device).cast(dtypes.uint32).reshape(shape) + key[1]
        c1 = key[2].reshape((1,) * len(shape)).expand(shape) if shape else key[2]
        return threefry2x32(k0, Tensor.full(shape, 0x5EED, dtypes.uint32, device), c0, c1)

    @staticmethod
    def rand(*shape, device=None, dtype=None, contiguous: bool = True, requires_grad=False) -> Tensor:
        """Uniform in [0, 1) (24 random bits; float32 unless dtype). contiguous is tinygrad's; our values are
        always computed into a buffer of their own when realized."""
        from compiler.tensor import Tensor
        shape = shape_arg(shape)
        x0, _ = Tensor._random_bits(shape, device)
        out = (x0 >> 8).cast(dtypes.float32) * (1.0 / (1 << 24))
        return Tensor(out.cast(dtype or dtypes.default_float).lazydata, requires_grad=requires_grad)

    @staticmethod
    def randn(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Standard normal (Box-Muller on two uniforms)."""
        from compiler.tensor import Tensor
        shape = shape_arg(shape)
        x0, x1 = Tensor._random_bits(shape, device)
        u1 = ((x0 >> 8).cast(dtypes.float32) + 1) * (1.0 / (1 << 24))      # (0, 1]
        u2 = (x1 >> 8).cast(dtypes.float32) * (1.0 / (1 << 24))
        out = ((u1.log() * -2).sqrt() * (u2 * (2 * math.pi)).cos()).cast(dtype or dtypes.default_float)
        return Tensor(out.lazydata, requires_grad=requires_grad)

    @staticmethod
    def randint(*shape, low: int = 0, high: int = 10, dtype=None, device=None) -> Tensor:
        """Integers uniform in [low, high) (int32 unless dtype, which must be an integer type); tinygrad's
        signature: the shape first, the bounds by keyword."""
        from compiler.tensor import Tensor
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
            raise TypeError(f"randint: low and high must be ints, not {low!r} and {high!r}")
        if high <= low or high - low > 1 << 32:
            raise ValueError(f"randint: low must be below high, at most 2^32 apart (low={low}, high={high})")
        dt = dtypes.from_any(dtype) if dtype is not None else dtypes.default_int
        if not dt.is_int:
            raise TypeError(f"randint: dtype must be an integer type, not {dt.name}")
        shape = shape_arg(shape)
        x0, _ = Tensor._random_bits(shape, device)
        span = high - low
        r = x0 % span if span < 1 << 32 else x0
        return (r.cast(dtypes.int64) + low).cast(dt)

    @classmethod
    def uniform(cls, *shape, low=0.0, high=1.0, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Uniform in [low, high) (float32 unless dtype)."""
        if not low < high:
            raise ValueError(f"uniform: low must be below high (low={low}, high={high})")
        out = ((high - low) * cls.rand(*shape, device=device)).cast(dtype or dtypes.default_float) + low
        return cls(out.lazydata, requires_grad=requires_grad)

    @classmethod
    def normal(cls, *shape, mean=0.0, std=1.0, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Normal with mean and std (float32 unless dtype)."""
        if std < 0:
            raise ValueError(f"normal: std must be >= 0, not {std}")
        out = (std * cls.randn(*shape, device=device) + mean).cast(dtype or dtypes.default_float)
        return cls(out.lazydata, requires_grad=requires_grad)

    @classmethod
    def scaled_uniform(cls, *shape, **kw) -> Tensor:
        """Uniform in [-1, 1) scaled by 1/sqrt(number of elements)."""
        return cls.uniform(*shape, low=-1.0, high=1.0, **kw) * (math.prod(_dims(shape)) ** -0.5)

    @classmethod
    def glorot_uniform(cls, *shape, **kw) -> Tensor:
        """Uniform in +-sqrt(6 / (shape[0] + prod(shape[1:]))) (Glorot & Bengio)."""
        dims = _dims(shape)
        bound = (6 / (dims[0] + math.prod(dims[1:]))) ** 0.5
        return cls.uniform(*shape, low=-bound, high=bound, **kw)

    @classmethod
    def kaiming_uniform(cls, *shape, a: float = 0.01, **kw) -> Tensor:
        """Uniform in +-sqrt(6 / ((1 + a^2) fan_in)), fan_in = prod(shape[1:]) (He et al.)."""
        bound = (6 / (1 + a ** 2) / math.prod(_dims(shape)[1:])) ** 0.5
        return cls.uniform(*shape, low=-bound, high=bound, **kw)

    @classmethod
    def kaiming_normal(cls, *shape, a: float = 0.01, **kw) -> Tensor:
        """Normal with std sqrt(2 / ((1 + a^2) fan_in)), fan_in = prod(shape[1:]) (He et al.)."""
        std = (2 / (1 + a ** 2) / math.prod(_dims(shape)[1:])) ** 0.5
        return cls.normal(*shape, mean=0.0, std=std, **kw)

    @classmethod
    def randperm(cls, n: int, device=None, dtype=None) -> Tensor:
        """A uniformly random permutation of 0..n-1 (int32 unless dtype): the ranks of n random 32-bit keys,
        ties broken by position."""
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"randperm: n must be a non-negative int, not {n!r}")
        keys, _ = cls._random_bits((n,), device)
        return _ranks(keys.reshape(1, n), descending=False).reshape(n).cast(dtype or dtypes.int32)

    def multinomial(self, num_samples: int = 1, replacement: bool = False) -> Tensor:
        """num_samples indices drawn with probabilities proportional to self (1-D, or 2-D: one draw per row);
        without replacement by Efraimidis-Spirakis keys (u^(1/w), largest first)."""
        if not 1 <= self.ndim <= 2:
            raise ValueError(f"multinomial: self must be 1-D or 2-D, not shape {self.shape}")
        if not isinstance(num_samples, int) or num_samples < 1:
            raise ValueError(f"multinomial: num_samples must be a positive int, not {num_samples!r}")
        w = self.unsqueeze(0) if self.ndim == 1 else self
        rows, n = w.shape
        if not replacement and num_samples > n:
            raise ValueError(f"multinomial: num_samples={num_samples} without replacement exceeds {n} categories")
        w = w.cast(dtypes.float32)
        if replacement or num_samples == 1:
            cw = w.cumsum(1)
            cdf = cw / cw[:, n - 1:n]
            u = type(self).rand(rows, num_samples, 1, device=self.device)
            idx = (u >= cdf.reshape(rows, 1, n)).cast(dtypes.int32).sum(2)
        else:
            keys = type(self).rand(rows, n, device=self.device).log2() / w
            rank = _ranks(keys, descending=True)                                      # (rows, n)
            pos = type(self).arange(num_samples, device=self.device).reshape(1, num_samples, 1)
            cols = type(self).arange(n, device=self.device).reshape(1, 1, n)
            idx = (rank.reshape(rows, 1, n) == pos).where(cols, 0).sum(2)
        idx = idx.cast(dtypes.int32)
        return idx.reshape(num_samples) if self.ndim == 1 else idx

    def threefry(self, seed) -> Tensor:
        """Threefry-2x32-20 of each uint64 of self (low word first) under the uint64 key seed (low word first),
        as one uint64 (tinygrad's threefry: the bits it builds its random numbers from)."""
        for name, t in (("self", self), ("seed", seed)):
            if not isinstance(t, type(self)) or t.dtype != dtypes.uint64:
                raise TypeError(f"threefry: {name} must be a uint64 Tensor")
        x, key = self._operands(seed, name="seed")
        lo, hi = x.cast(dtypes.uint32), (x >> 32).cast(dtypes.uint32)
        k0, k1 = key.cast(dtypes.uint32), (key >> 32).cast(dtypes.uint32)
        y0, y1 = threefry2x32(k0, k1, lo, hi)
        return (y1.cast(dtypes.uint64) << 32) | y0.cast(dtypes.uint64)

    @classmethod
    def random_bits(cls, key: Tensor, counter: Tensor, num: int) -> Tensor:
        """num uint32 words from a 2-word uint32 key and a 2-word uint32 counter (low, high), as tinygrad's
        random_bits: each chunk of up to 2^32 - 1 words derives a key from the counter, then hashes 0..n/2-1 and
        n/2..n-1 as the two halves of each word pair."""
        for name, t in (("key", key), ("counter", counter)):
            if not isinstance(t, cls) or t.dtype != dtypes.uint32 or t.shape != (2,):
                raise TypeError(f"random_bits: {name} must be a uint32 Tensor of shape (2,)")
        low, high = counter[0:1], counter[1:2]
        chunks = []
        for start in range(0, num, 0xFFFFFFFF):
            n = min(num - start, 0xFFFFFFFF)
            c_low = low + (start & 0xFFFFFFFF)
            c_high = high + (start >> 32) + (c_low < low).cast(dtypes.uint32)
            chunk_key = _pair_hash(key, c_low, c_high)
            half = -(-n // 2)
            first = cls.arange(half, dtype=dtypes.uint32, device=key.device)
            chunks.append(_pair_hash(chunk_key, first, first + half)[:n])
        if not chunks:
            return counter[0:0]
        return chunks[0].cat(*chunks[1:]) if len(chunks) > 1 else chunks[0]

    def rand_like(self: Tensor, dtype=None) -> Tensor:
        """rand of self's shape and device."""
        from compiler.tensor import Tensor
        return Tensor.rand(*self.shape, dtype=dtype or self.dtype, device=self.device)

    def randn_like(self: Tensor, dtype=None) -> Tensor:
        """randn of self's shape and device."""
        from compiler.tensor import Tensor
        return Tensor.randn(*self.shape, dtype=dtype or self.dtype, device=self.device)


def _dims(shape) -> tuple[int, ...]:
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else tuple(shape)


def _ranks(keys: Tensor, descending: bool) -> Tensor:
    """Per row of keys (rows, n): each element's position in sorted order (int32), ties by position; computed
    by comparisons (rows x n x n, reduced in the kernel), so no sort is needed."""
    rows, n = keys.shape
    a, b = keys.reshape(rows, n, 1), keys.reshape(rows, 1, n)        # a: element i, b: element j
    before = (b > a) if descending else (b < a)
    idx = type(keys).arange(n, device=keys.device)
    tie = (b == a) & (idx.reshape(1, 1, n) < idx.reshape(1, n, 1))
    return (before | tie).cast(dtypes.int32).sum(2)


def _pair_hash(key: Tensor, c0: Tensor, c1: Tensor) -> Tensor:
    """threefry of the uint64s (c1 << 32 | c0) under key (2 uint32 words), returned as the low words followed by
    the high words (uint32)."""
    x = (c1.cast(dtypes.uint64) << 32) | c0.cast(dtypes.uint64)
    k = (key[1].cast(dtypes.uint64) << 32) | key[0].cast(dtypes.uint64)
    y = x.threefry(k)
    return y.cast(dtypes.uint32).cat((y >> 32).cast(dtypes.uint32))
