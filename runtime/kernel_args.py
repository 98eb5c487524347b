"""Kernel arguments checked against the code object's metadata before a launch.

A by-value argument whose `.type_name` names a scalar type (OpenCL and HIP spell them as C does; clang writes
them into the metadata, LLVM copies them from `!kernel_arg_type`) takes a Python or NumPy number only when
its value is representable in that type: 2 for a `float` becomes 2.0f, 3.0 for a `uint` becomes 3, and
2.5 for an `int`, -1 for a `uint` or 1e39 for a `float` raise TypeError naming the argument. Without a type
name (LLVM IR kernels without `!kernel_arg_type`) only the size is known: an int is stored as an integer of
that size and a float as a float of that size, as before.
"""

from __future__ import annotations

import math

import numpy as np

# C scalar type names -> NumPy types (OpenCL C 3.0 "Built-in Scalar Data Types", C99 <stdint.h>).
SCALAR_TYPES = {
    "bool": np.bool_, "_Bool": np.bool_, "char": np.int8, "signed char": np.int8, "uchar": np.uint8,
    "unsigned char": np.uint8, "short": np.int16, "ushort": np.uint16, "unsigned short": np.uint16,
    "int": np.int32, "uint": np.uint32, "unsigned int": np.uint32, "unsigned": np.uint32, "long": np.int64,
    "ulong": np.uint64, "unsigned long": np.uint64, "long long": np.int64, "unsigned long long": np.uint64,
    "size_t": np.uint64, "ptrdiff_t": np.int64, "intptr_t": np.int64, "uintptr_t": np.uint64,
    "int8_t": np.int8, "uint8_t": np.uint8, "int16_t": np.int16, "uint16_t": np.uint16, "int32_t": np.int32,
    "uint32_t": np.uint32, "int64_t": np.int64, "uint64_t": np.uint64,
    "half": np.float16, "_Float16": np.float16, "__fp16": np.float16, "float": np.float32, "double": np.float64,
}
_QUALIFIERS = ("const ", "volatile ", "restrict ", "__restrict ")


def scalar_type(meta: dict) -> type | None:
    """The NumPy type of a by-value argument from its `.type_name` (None when absent or not a scalar)."""
    name = meta.get(".type_name")
    if not isinstance(name, str):
        return None
    name = name.strip()
    while name.startswith(_QUALIFIERS):
        name = name.split(" ", 1)[1].strip()
    t = SCALAR_TYPES.get(name)
    return t if t is not None and np.dtype(t).itemsize == meta.get(".size") else None


def _is_number(a) -> bool:
    return isinstance(a, int | float | np.number | np.bool_) and not isinstance(a, complex)


def convert(kernel: str, name: str, meta: dict, a):
    """The value to store for by-value argument `name` (described by `meta`), or TypeError."""
    size = meta[".size"]
    if not _is_number(a):
        raise TypeError(f"{kernel}: argument {name} is a {size}-byte value, not {type(a).__name__}")
    t = scalar_type(meta)
    if t is not None:
        return _exactly(kernel, name, meta[".type_name"], t, a)
    if isinstance(a, np.generic) and a.nbytes != size:
        raise TypeError(f"{kernel}: argument {name} is {size} bytes, got {a.dtype} ({a.nbytes} bytes)")
    if isinstance(a, int) and not -(1 << (8 * size - 1)) <= a < 1 << (8 * size):
        raise TypeError(f"{kernel}: argument {name} ({a}) does not fit in {size} bytes")
    if isinstance(a, float) and size not in (2, 4, 8):
        raise TypeError(f"{kernel}: argument {name} is {size} bytes; a float does not fit")
    return a


def _exactly(kernel: str, name: str, type_name: str, t: type, a) -> np.generic:
    """`a` as a `t`, when the value is representable there."""
    def refuse(why: str):
        return TypeError(f"{kernel}: argument {name} is {type_name}; {a!r} {why}")

    if np.issubdtype(t, np.floating):
        if isinstance(a, int | np.integer | np.bool_):
            v = t(int(a))
            if not math.isfinite(float(v)) or int(v) != int(a):
                raise refuse(f"is not exactly representable as {type_name}")
            return v
        with np.errstate(over="ignore"):  # overflow is reported below, as a TypeError
            v = t(a)  # a float rounds to the nearest value of the type, as C's conversion does
        if math.isfinite(float(a)) and not math.isfinite(float(v)):
            raise refuse(f"overflows {type_name}")
        return v
    if t is np.bool_:
        if a not in (0, 1):
            raise refuse("is not a boolean (0 or 1)")
        return np.bool_(a)
    if isinstance(a, float | np.floating):
        if not math.isfinite(float(a)) or not float(a).is_integer():
            raise refuse(f"is not an integer; convert it explicitly to pass it as {type_name}")
        a = int(a)
    info = np.iinfo(t)
    if not info.min <= int(a) <= info.max:
        raise refuse(f"is outside {type_name}'s range {info.min}..{info.max}")
    return t(int(a))
