"""Random numbers as tinygrad 0.14 draws them, so a seed gives tinygrad's numbers: counter-based Threefry-2x32-20
(Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) with 32-bit integer operations in the
kernel, the same on every backend. Each device has a key (derived from the seed and the order devices first draw)
and a 64-bit counter; a draw of n words hashes a chunk key from the counter, then the counters 0..n-1 under it
(random_bits), and advances the counter by n. `Tensor.manual_seed(n)` sets the seed and restarts the counters.
Key and counter are buffers, not constants, so kernels are reused across calls and seeds. Distributions are
tinygrad's formulas: uniform from the mantissa bits, normal by Box-Muller, randint by scaling a uniform."""

from __future__ import annotations

import hashlib
import math
from typing import ClassVar, Self, TypeVar

import numpy as np

from compiler import device as devices
from compiler.creation import shape_arg
from compiler.dtypes import dtypes

TensorT = TypeVar("TensorT", bound="RandomOps")  # a Tensor (the class RandomOps is mixed into)


ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
PARITY = 0x1BD11BDA


def _rotl(x: TensorT, r: int) -> TensorT:
    return (x << r) | (x >> (32 - r))


def threefry2x32(key0: TensorT, key1: TensorT, c0: TensorT, c1: TensorT) -> tuple[TensorT, TensorT]:
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
    _device_keys: ClassVar[dict[str, tuple[int, int]]] = {}
    _device_counters: ClassVar[dict[str, int]] = {}

    @staticmethod
    def manual_seed(seed: int = 0) -> None:
        """Seed the generator and restart every device's counter."""
        RandomOps._seed = int(seed) & 0xFFFFFFFF
        RandomOps._device_keys, RandomOps._device_counters = {}, {}

    @classmethod
    def _next_counter(cls, device: str, num: int) -> tuple[Self, Self]:
        """The device's key and its counter before taking num words (both 2 uint32 words, low first, as buffers so
        kernels are reused across calls and seeds). A device's key is (the low word of SHA-256 of its index in
        the order devices first drew numbers since the seed, the seed), as tinygrad derives it."""
        keys, counters = RandomOps._device_keys, RandomOps._device_counters
        if device not in keys:
            digest = hashlib.sha256(len(keys).to_bytes(4, "big")).digest()
            keys[device] = (int.from_bytes(digest, "big") & 0xFFFFFFFF, RandomOps._seed)
        c = counters.get(device, 0)
        counters[device] = (c + num) & (2 ** 64 - 1)
        key = cls(np.array(keys[device], np.uint32), device=device)
        return key, cls(np.array([c & 0xFFFFFFFF, c >> 32], np.uint32), device=device)

    @classmethod
    def rand(cls, *shape, device=None, dtype=None, contiguous: bool = True, requires_grad=False) -> Self:
        """Uniform in [0, 1): the type's mantissa bits from random_bits, as tinygrad's rand (the same numbers for
        the same seed and sequence of draws). contiguous is tinygrad's; ours are computed into a buffer of their
        own when realized either way."""
        dt = dtypes.from_any(dtype) if dtype is not None else dtypes.default_float
        if not dt.is_float:
            raise ValueError(f"rand: dtype must be a float type, not {dt.name}")
        shape = shape_arg(shape)
        device = devices.canonical(device)
        n = math.prod(shape)
        key, counter = cls._next_counter(device, -(-n * dt.itemsize // 4))
        if n == 0:
            return cls.zeros(*shape, dtype=dt, device=device, requires_grad=requires_grad)
        out = _bits_to_unit(cls.random_bits(key, counter, -(-n * dt.itemsize // 4)), n, dt).reshape(shape)
        return cls(out.lazydata, requires_grad=requires_grad)

    @classmethod
    def randn(cls, *shape, dtype=None, device=None, requires_grad=False) -> Self:
        """Standard normal: Box-Muller on two float32 uniforms drawn as one rand(2, *shape), as tinygrad."""
        shape = shape_arg(shape)
        u = cls.rand(2, *shape, dtype=dtypes.float32, device=device)
        out = (u[0] * (2 * math.pi)).cos() * ((1 - u[1]).log() * -2).sqrt()
        return cls(out.cast(dtype or dtypes.default_float).lazydata, requires_grad=requires_grad)

    @classmethod
    def randint(cls, *shape, low: int = 0, high: int = 10, dtype=None, device=None) -> Self:
        """Integers in [low, high) (int32 unless dtype, an integer type): floor((high - low) * rand) + low, as
        tinygrad; the shape first, the bounds by keyword."""
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
            raise TypeError(f"randint: low and high must be ints, not {low!r} and {high!r}")
        if high <= low:
            raise ValueError(f"randint: low must be below high (low={low}, high={high})")
        dt = dtypes.from_any(dtype) if dtype is not None else dtypes.default_int
        if not dt.is_int:
            raise TypeError(f"randint: dtype must be an integer type, not {dt.name}")
        return cls.uniform(*shape, low=low, high=high, dtype=dt, device=device)

    @classmethod
    def uniform(cls, *shape, low=0.0, high=1.0, dtype=None, device=None, requires_grad=False) -> Self:
        """Uniform in [low, high) (float32 unless dtype)."""
        if not low < high:
            raise ValueError(f"uniform: low must be below high (low={low}, high={high})")
        out = ((high - low) * cls.rand(*shape, device=device)).cast(dtype or dtypes.default_float) + low
        return cls(out.lazydata, requires_grad=requires_grad)

    @classmethod
    def normal(cls, *shape, mean=0.0, std=1.0, dtype=None, device=None, requires_grad=False) -> Self:
        """Normal with mean and std (float32 unless dtype)."""
        if std < 0:
            raise ValueError(f"normal: std must be >= 0, not {std}")
        out = std * cls.randn(*shape, dtype=dtype, device=device) + mean  # in dtype, as tinygrad
        return cls(out.lazydata, requires_grad=requires_grad)

    @classmethod
    def scaled_uniform(cls, *shape, requires_grad=False, **kw) -> Self:
        """Uniform in [-1, 1) scaled by 1/sqrt(number of elements) (a leaf tensor: requires_grad applies to it)."""
        out = cls.uniform(*shape, low=-1.0, high=1.0, **kw) * (math.prod(_dims(shape)) ** -0.5)
        return cls(out.lazydata, requires_grad=requires_grad)

    @classmethod
    def glorot_uniform(cls, *shape, **kw) -> Self:
        """Uniform in +-sqrt(6 / (shape[0] + prod(shape[1:]))) (Glorot & Bengio)."""
        dims = _dims(shape)
        bound = (6 / (dims[0] + math.prod(dims[1:]))) ** 0.5
        return cls.uniform(*shape, low=-bound, high=bound, **kw)

    @classmethod
    def kaiming_uniform(cls, *shape, a: float = 0.01, **kw) -> Self:
        """Uniform in +-sqrt(6 / ((1 + a^2) fan_in)), fan_in = prod(shape[1:]) (He et al.)."""
        bound = (6 / (1 + a ** 2) / math.prod(_dims(shape)[1:])) ** 0.5
        return cls.uniform(*shape, low=-bound, high=bound, **kw)

    @classmethod
    def kaiming_normal(cls, *shape, a: float = 0.01, **kw) -> Self:
        """Normal with std sqrt(2 / ((1 + a^2) fan_in)), fan_in = prod(shape[1:]) (He et al.)."""
        std = (2 / (1 + a ** 2) / math.prod(_dims(shape)[1:])) ** 0.5
        return cls.normal(*shape, mean=0.0, std=std, **kw)

    @classmethod
    def randperm(cls, n: int, device=None, dtype=None) -> Self:
        """A random permutation of 0..n-1 (int32 unless dtype): the order that sorts rand(n), as tinygrad (found
        by ranking with comparisons, n x n reduced in the kernel, so no sort is needed)."""
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"randperm: n must be a non-negative int, not {n!r}")
        keys = cls.rand(n, device=device)
        if n == 0:
            return keys.cast(dtype or dtypes.int32)
        return _order(_ranks(keys.reshape(1, n), descending=False), n).reshape(n).cast(dtype or dtypes.int32)

    def multinomial(self, num_samples: int = 1, replacement: bool = False) -> Self:
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
            u = type(self).rand(num_samples, rows, 1, device=self.device)  # tinygrad's draw order
            idx = (u >= cdf.reshape(1, rows, n)).cast(dtypes.int32).sum(2).permute(1, 0)
        else:
            keys = type(self).rand(rows, n, device=self.device).log2() / w
            idx = _order(_ranks(keys, descending=True), num_samples)
        idx = idx.cast(dtypes.int32)
        return idx.reshape(num_samples) if self.ndim == 1 else idx

    def threefry(self, seed) -> Self:
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
    def random_bits(cls, key: Self, counter: Self, num: int) -> Self:
        """num uint32 words from a 2-word uint32 key and a 2-word uint32 counter (low, high), as tinygrad's
        random_bits: each chunk of up to 2^32 - 1 words derives a key from the counter, then hashes the pairs
        (i, i + n/2); word i is the low half of pair i, word n/2 + i its high half."""
        for name, t in (("key", key), ("counter", counter)):
            if not isinstance(t, cls) or t.dtype != dtypes.uint32 or t.shape != (2,):
                raise TypeError(f"random_bits: {name} must be a uint32 Tensor of shape (2,)")
        if num == 0:
            return counter[0:0]
        low, high = counter[0], counter[1]
        chunks = []
        for start in range(0, num, 0xFFFFFFFF):
            n = min(num - start, 0xFFFFFFFF)
            c_low = low + (start & 0xFFFFFFFF)
            c_high = high + (start >> 32) + (c_low < low).cast(dtypes.uint32)
            k0, k1 = threefry2x32(key[0], key[1], c_low, c_high)
            half = -(-n // 2)
            # each word computed on its own (its pair hashed once per word, not once per pair): no concatenation,
            # so the graph the scheduler walks is one Threefry
            w = cls.arange(n, dtype=dtypes.uint32, device=key.device)
            upper = w >= half
            c0 = upper.where(w - half, w)
            y0, y1 = threefry2x32(k0.reshape(1).expand(n), k1.reshape(1).expand(n), c0, c0 + half)
            chunks.append(upper.where(y1, y0))
        return chunks[0].cat(*chunks[1:]) if len(chunks) > 1 else chunks[0]

    def rand_like(self, dtype=None, device=None) -> Self:
        """rand of self's shape (self's dtype and device unless given)."""
        return type(self).rand(*self.shape, dtype=dtype or self.dtype, device=device or self.device)

    def randn_like(self, dtype=None, device=None) -> Self:
        """randn of self's shape (self's dtype and device unless given)."""
        return type(self).randn(*self.shape, dtype=dtype or self.dtype, device=device or self.device)


def _dims(shape) -> tuple[int, ...]:
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else tuple(shape)


def _ranks(keys: TensorT, descending: bool) -> TensorT:
    """Per row of keys (rows, n): each element's position in sorted order (int32), ties by position; computed
    by comparisons (rows x n x n, reduced in the kernel), so no sort is needed."""
    rows, n = keys.shape
    a, b = keys.reshape(rows, n, 1), keys.reshape(rows, 1, n)        # a: element i, b: element j
    before = (b > a) if descending else (b < a)
    idx = type(keys).arange(n, device=keys.device)
    tie = (b == a) & (idx.reshape(1, 1, n) < idx.reshape(1, n, 1))
    return (before | tie).cast(dtypes.int32).sum(2)


def _order(rank: TensorT, k: int) -> TensorT:
    """From ranks (rows, n): the indices of the elements of rank 0..k-1 (rows, k)."""
    rows, n = rank.shape
    pos = type(rank).arange(k, device=rank.device).reshape(1, k, 1)
    cols = type(rank).arange(n, device=rank.device).reshape(1, 1, n)
    return (rank.reshape(rows, 1, n) == pos).where(cols, 0).sum(2).cast(dtypes.int32)


def _bits_to_unit(bits: TensorT, n: int, dt) -> TensorT:
    """n floats of type dt in [0, 1) from uint32 words: each element's bytes in order (little-endian, as a
    bitcast of the words), the mantissa from the top bits, exponent of 1.0, minus 1 (tinygrad's _bits_to_rand)."""
    _, nmant = dtypes.finfo(dt)
    if dt.itemsize == 4:
        words, udt = bits, dtypes.uint32
    elif dt.itemsize == 2:  # two elements per word, low half first
        shifts = type(bits).arange(0, 32, 16, dtype=dtypes.uint32, device=bits.device).reshape(1, 2)
        words = ((bits.reshape(-1, 1) >> shifts) & 0xFFFF).reshape(-1)
        words, udt = words.cast(dtypes.uint16), dtypes.uint16
    else:  # float64: one element per two words, low word first
        pairs = bits.reshape(-1, 2).cast(dtypes.uint64)
        words, udt = pairs[:, 0] | (pairs[:, 1] << 32), dtypes.uint64
    one = {2: 0x3C00 if dt == dtypes.float16 else 0x3F80, 4: 0x3F800000, 8: 0x3FF0000000000000}[dt.itemsize]
    mant = (words[:n] >> (8 * dt.itemsize - nmant)) | type(bits).full((), one, udt, bits.device)
    return mant.bitcast(dt) - 1
