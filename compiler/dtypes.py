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
    """The scalar types: `dtypes.float32` etc. (tinygrad 0.14's namespace: C-style aliases, groups, predicates);
    `dtypes.from_any(x)` accepts NumPy dtypes and names. The fp8 types exist as names and in the groups, but a
    tensor cannot hold them (gfx1100 has no fp8 conversions or arithmetic): `from_any` refuses them."""

    bool = DType("bool", "b", 1)
    int8, int16, int32, int64 = (DType(f"int{b}", "i", b // 8) for b in (8, 16, 32, 64))
    uint8, uint16, uint32, uint64 = (DType(f"uint{b}", "u", b // 8) for b in (8, 16, 32, 64))
    float16 = DType("float16", "f", 2)
    bfloat16 = DType("bfloat16", "f", 2)
    float32 = DType("float32", "f", 4)
    float64 = DType("float64", "f", 8)
    fp8e4m3, fp8e5m2 = DType("fp8e4m3", "f", 1), DType("fp8e5m2", "f", 1)  # OCP fp8
    fp8e4m3fnuz, fp8e5m2fnuz = DType("fp8e4m3fnuz", "f", 1), DType("fp8e5m2fnuz", "f", 1)  # no -0/inf, one NaN
    void = DType("void", "v", 0)
    # Python scalars' types before they meet a tensor (from_py); a tensor made with one gets the default type
    weakint, weakfloat = DType("weakint", "i", 0), DType("weakfloat", "f", 0)
    half, float, double = float16, float32, float64
    uchar, ushort, uint, ulong = uint8, uint16, uint32, uint64
    char, short, int, long = int8, int16, int32, int64
    default_float = float32
    default_int = int32
    fp8_ocp = (fp8e4m3, fp8e5m2)
    fp8_fnuz = (fp8e4m3fnuz, fp8e5m2fnuz)
    fp8s = fp8_ocp + fp8_fnuz
    floats = fp8s + (float16, bfloat16, float32, float64)
    int8s, int16s, int32s, int64s = (uint8, int8), (uint16, int16), (uint32, int32), (uint64, int64)
    uints = (uint8, uint16, uint32, uint64)
    sints = (int8, int16, int32, int64)
    ints = uints + sints
    weaks = (weakint, weakfloat)
    all = floats + ints + (bool,)

    @staticmethod
    def from_any(x) -> DType:
        """A DType a tensor can hold from a DType, a NumPy dtype or scalar type, or a name ('float32', 'half',
        'long'); weak types become the defaults, fp8 and void are refused (class docstring)."""
        if isinstance(x, str) and isinstance(getattr(dtypes, x, None), DType):
            x = getattr(dtypes, x)
        if isinstance(x, DType):
            if x in dtypes.weaks:
                return dtypes.default_int if x == dtypes.weakint else dtypes.default_float
            if x in dtypes.fp8s or x == dtypes.void:
                raise TypeError(f"a tensor cannot hold {x.name}: the gfx1100 device has no {x.name} loads, "
                                f"conversions or arithmetic (supported: {', '.join(d.name for d in _STORABLE)})")
            return x
        try:
            npd = np.dtype(x)
        except TypeError:
            raise TypeError(f"not a dtype: {x!r}") from None
        name = "bool" if npd.kind == "b" else npd.name
        if npd.kind not in "biuf" or not hasattr(dtypes, name):
            raise TypeError(f"unsupported dtype {npd} (supported: {', '.join(d.name for d in _STORABLE)})")
        return getattr(dtypes, name)

    @staticmethod
    def of_scalar(x) -> DType:
        """The default type of a Python scalar (bool, int32, float32)."""
        if isinstance(x, bool | np.bool_):
            return dtypes.bool
        if isinstance(x, int | np.integer):
            return dtypes.default_int
        return dtypes.default_float

    @staticmethod
    def is_float(x: DType) -> bool:
        """Whether x is a floating-point type (weakfloat included)."""
        return x in dtypes.floats or x == dtypes.weakfloat

    @staticmethod
    def is_int(x: DType) -> bool:
        """Whether x is an integer type (weakint included, bool not)."""
        return x in dtypes.ints or x == dtypes.weakint

    @staticmethod
    def is_unsigned(x: DType) -> bool:
        """Whether x is an unsigned integer type (bool not)."""
        return x in dtypes.uints

    @staticmethod
    def is_bool(x: DType) -> bool:
        """Whether x is bool."""
        return x == dtypes.bool

    @staticmethod
    def from_py(x) -> DType:
        """The type of a Python value: bool; weakint/weakfloat for a scalar (it takes a tensor's type when they
        meet); for a (nested) list or tuple the widest of its elements as a tensor type (empty: default_float)."""
        if isinstance(x, bool):
            return dtypes.bool
        if isinstance(x, float):
            return dtypes.weakfloat
        if isinstance(x, int):
            return dtypes.weakint
        if isinstance(x, list | tuple):
            if not x:
                return dtypes.default_float
            kinds = {dtypes.from_py(v) for v in x}
            if kinds & {dtypes.weakfloat, dtypes.default_float} or any(k.is_float for k in kinds):
                return dtypes.default_float
            return dtypes.default_int if kinds != {dtypes.bool} else dtypes.bool
        raise TypeError(f"from_py: cannot infer a dtype of {x!r} ({type(x).__name__})")

    @staticmethod
    def finfo(dtype: DType) -> tuple[int, int]:
        """(exponent bits, mantissa bits) of a floating-point type."""
        if not dtypes.is_float(dtype) or dtype == dtypes.weakfloat:
            raise ValueError(f"finfo: {dtype} is not a floating-point type")
        return _FINFO[dtype.name]


_FINFO = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52), "fp8e4m3": (4, 3),
          "fp8e5m2": (5, 2), "fp8e4m3fnuz": (4, 3), "fp8e5m2fnuz": (5, 2)}
# the types a tensor can hold, in the order error messages list them
_STORABLE = (dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32,
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
