"""Data types of tensors and of the kernel IR, their NumPy equivalents and the promotion rules.

Promotion (docs/compiler.md, "Types") follows PyTorch's categories with NumPy's integer lattice:
bool < integers < floats. Two tensors of one category promote to the wider type (NumPy's table for mixed
signed/unsigned integers: int32 + uint32 -> int64, int64 + uint64 -> float64); an integer or bool with a
float gives that float; float16 with bfloat16 gives float32. Python scalars are weak: they take the tensor's
type unless their category is higher (a float scalar with an integer tensor gives the default float,
float32; an int scalar with a bool tensor gives the default int, int32).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    """A scalar type: `kind` is 'b' (bool), 'i' (signed), 'u' (unsigned) or 'f' (float)."""

    name: str
    kind: str
    itemsize: int

    def __repr__(self) -> str:
        return f"dtypes.{self.name}"

    @property
    def is_float(self) -> bool:
        """Whether this is a floating-point type."""
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        """Whether this is an integer type (bool excluded)."""
        return self.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        """Whether this is an unsigned integer type (bool counts as unsigned)."""
        return self.kind in "ub"

    @property
    def bits(self) -> int:
        """Width in bits (bool: 1)."""
        return 1 if self.kind == "b" else 8 * self.itemsize

    @property
    def np(self) -> np.dtype:
        """The NumPy dtype of host arrays of this type (bfloat16: float32, which holds it exactly)."""
        return np.dtype(np.float32) if self.name == "bfloat16" else np.dtype(self.name if self.kind != "b" else "bool")

    @property
    def storage(self) -> np.dtype:
        """The NumPy dtype of the type's bytes in device memory (bfloat16: uint16 bit patterns)."""
        return np.dtype(np.uint16) if self.name == "bfloat16" else self.np

    @property
    def min(self):
        """The smallest value (floats: -inf)."""
        if self.kind == "f":
            return float("-inf")
        return 0 if self.kind in "ub" else -(1 << (self.bits - 1))

    @property
    def max(self):
        """The largest value (floats: inf)."""
        if self.kind == "f":
            return float("inf")
        return 1 if self.kind == "b" else (1 << (self.bits - (self.kind == "i"))) - 1


@dataclass(frozen=True)
class PtrDType:
    """A pointer in the kernel IR: to `size` elements of `base` in the global or LDS (local) address space."""

    base: DType
    space: str = "global"
    size: int = -1

    def __repr__(self) -> str:
        return f"{self.base.name}*[{self.size}]{'' if self.space == 'global' else ' ' + self.space}"

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.base.itemsize


class dtypes:  # noqa: N801 - the namespace users write, as in tinygrad and jax.numpy
    """The scalar types: `dtypes.float32` etc.; `dtypes.from_any(x)` accepts NumPy dtypes and names."""

    bool = DType("bool", "b", 1)
    int8, int16, int32, int64 = (DType(f"int{b}", "i", b // 8) for b in (8, 16, 32, 64))
    uint8, uint16, uint32, uint64 = (DType(f"uint{b}", "u", b // 8) for b in (8, 16, 32, 64))
    float16 = DType("float16", "f", 2)
    bfloat16 = DType("bfloat16", "f", 2)
    float32 = DType("float32", "f", 4)
    float64 = DType("float64", "f", 8)
    half, float, double = float16, float32, float64
    default_float = float32
    default_int = int32
    all: tuple[DType, ...] = ()

    @staticmethod
    def from_any(x) -> DType:
        """A DType from a DType, a NumPy dtype or scalar type, or a name ('float32', 'half')."""
        if isinstance(x, DType):
            return x
        if isinstance(x, str) and hasattr(dtypes, x) and isinstance(getattr(dtypes, x), DType):
            return getattr(dtypes, x)
        try:
            npd = np.dtype(x)
        except TypeError:
            raise TypeError(f"not a dtype: {x!r}") from None
        name = "bool" if npd.kind == "b" else npd.name
        if npd.kind not in "biuf" or not hasattr(dtypes, name):
            raise TypeError(f"unsupported dtype {npd} (supported: {', '.join(d.name for d in dtypes.all)})")
        return getattr(dtypes, name)

    @staticmethod
    def of_scalar(x) -> DType:
        """The default type of a Python scalar (bool, int32, float32)."""
        if isinstance(x, bool | np.bool_):
            return dtypes.bool
        if isinstance(x, int | np.integer):
            return dtypes.default_int
        return dtypes.default_float


dtypes.all = (dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32,
              dtypes.int64, dtypes.uint64, dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


def promote(a: DType, b: DType) -> DType:
    """The result type of a binary operation between two tensors (module docstring)."""
    if a == b:
        return a
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca != cb:
        return a if ca > cb else b
    if a.kind == "f":
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return dtypes.float32
        return a if a.itemsize > b.itemsize else b
    return dtypes.from_any(np.promote_types(a.np, b.np))


def promote_scalar(t: DType, x) -> DType:
    """The result type of a binary operation between a tensor of type t and a Python scalar x (weak typing)."""
    s = dtypes.of_scalar(x)
    if _CATEGORY[s.kind] > _CATEGORY[t.kind]:
        return s
    return t


def least_float(t: DType) -> DType:
    """The float type an operation on t computes in (true division, exp, sqrt...): t itself or float32."""
    return t if t.is_float else dtypes.default_float


def to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns (uint16), rounding to nearest even; NaN stays NaN."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(a, np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded)


def from_bf16_bits(b: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values (exact)."""
    return (np.asarray(b, np.uint16).astype(np.uint32) << 16).view(np.float32)
