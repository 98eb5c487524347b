"""The compiler's op vocabulary (`Ops`) and the kernel IR: one small typed SSA graph of `UOp`s, hash-consed (equal
structure, same object).

`Ops` names the operations of both graphs the compiler has: the lazy graph Tensor builds (compiler.lazy: ALU,
CONST, IOTA, REDUCE and a few of its own, which never reach a kernel) and the kernel IR. A kernel starts as an AST
the scheduler builds from the lazy graph (STORE of a value tree of LOADs through VIEWs, ALU, REDUCE) and every
later step rewrites it (compiler.ir.rewrite): views become index arithmetic over SPECIAL ids and RANGE loop
variables, REDUCE becomes an accumulator (DEFINE_ACC / ASSIGN) in loops, and the linearizer orders the result.
Backends read the linearized list.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import weakref
import zlib
from enum import Enum, auto
from typing import Any

from compiler.dtypes import DType, PtrDType, dtypes


class Ops(Enum):
    """Operations of the lazy graph and the kernel IR (docs/compiler.md, "Kernel IR"); where the two graphs use an
    op differently, its comment says both."""

    # structure
    SINK = auto()        # src: the kernel's effects (STOREs); arg: the kernel's name
    PARAM = auto()       # a buffer argument; arg: its position; dtype: PtrDType
    LDS = auto()         # a workgroup-shared (LDS) array; arg: its number; dtype: PtrDType(space="local")
    SPECIAL = auto()     # a hardware id; arg: (kind "group"|"local", axis 0-2, extent)
    RANGE = auto()       # a loop variable in [0, src[0]); arg: loop number; src[1:]: what the loop opens after
    ENDRANGE = auto()    # closes the loop src[0] once src[1:] (its effects) are done
    DEFINE_ACC = auto()  # a mutable register; src[0]: its initial value; arg: accumulator number
    ASSIGN = auto()      # writes src[1] to the register src[0]; its value is src[1]
    AFTER = auto()       # src[0], ordered after src[1:] (a register read after its loop, LDS after a barrier)
    BARRIER = auto()     # workgroup barrier after src (LDS stores)
    # memory
    LOAD = auto()        # src: (buffer, index[, gate]); a false gate loads nothing and gives 0
    STORE = auto()       # src: (buffer, index, value[, gate])
    CONST = auto()       # arg: the value (lazy graph: of shape (), broadcast by views)
    # kernel AST only (before lowering)
    VIEW = auto()        # arg: a ShapeTracker; the index space of a LOAD/STORE
    VALID = auto()       # src: (VIEW,); whether the view's index is inside its masks (bool)
    IOTA = auto()        # src: (VIEW,); the view's flat index (int32): arange (lazy graph: no src; 0..n-1 of its
    #                      shape, int32 or int64 past int32)
    REDUCE = auto()      # src: (value,); arg: (Ops.ADD|MAX|MUL, axes, the value's shape) (lazy graph: arg
    #                      (op, axes); reduced axes kept as size 1)
    # ALU (srcs and result of one dtype, except comparisons -> bool and WHERE's bool condition)
    ADD = auto()
    SUB = auto()
    MUL = auto()
    IDIV = auto()        # integer division truncating toward zero (C); x // 0 == 0
    MOD = auto()         # integer remainder with the dividend's sign (C); x % 0 == 0
    FDIV = auto()        # float division
    MAX = auto()         # NaN-propagating (numpy.maximum)
    MIN = auto()
    NEG = auto()
    CMPLT = auto()
    CMPEQ = auto()
    CMPNE = auto()       # unordered for floats: NaN != NaN
    AND = auto()
    OR = auto()
    XOR = auto()
    NOT = auto()         # bitwise not (bool: logical)
    SHL = auto()
    SHR = auto()         # arithmetic for signed types, logical for unsigned
    WHERE = auto()       # src: (cond, a, b)
    MULACC = auto()      # a * b + c (fused for floats)
    EXP2 = auto()
    LOG2 = auto()
    SIN = auto()
    SQRT = auto()
    TRUNC = auto()
    CAST = auto()        # value conversion (float->int truncates)
    BITCAST = auto()     # same-width reinterpretation
    # matrix cores (gfx11 wave32): D = A x B + C on a 16x16x16 tile held across the wave's 32 lanes
    WMMA = auto()        # src: 16 A elements (row lane%16), 16 B (column lane%16), 8 C floats; arg: A/B dtype
    GEP = auto()         # src: (WMMA,); arg: r; float32 element r of D: row 2r + lane//16, column lane%16
    # lazy graph only (compiler.lazy): what a Tensor's base may be besides CONST, IOTA, REDUCE and the ALU ops. Last,
    # so the members above keep their values: a node's hash is built from its op's value, and the simplifier's
    # term order (so the kernel IR) from node hashes.
    COPYIN = auto()      # arg: a host array to copy to the device
    EMPTY = auto()       # uninitialised memory
    BUFFER = auto()      # realized: the LazyBuffer's .buffer holds the device memory
    CONTIGUOUS = auto()  # forces its source into a buffer of its own, in row-major order
    COPY = auto()        # its source copied from another device


UNARY = {Ops.NEG, Ops.NOT, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.TRUNC}
BINARY = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.FDIV, Ops.MAX, Ops.MIN, Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE,
          Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR}
TERNARY = {Ops.WHERE, Ops.MULACC}
ALU = UNARY | BINARY | TERNARY
COMPARE = {Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE}
ELEMENTWISE = ALU | {Ops.CAST, Ops.BITCAST}  # what the scheduler fuses into a kernel
COMMUTATIVE = {Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN, Ops.CMPEQ, Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR}


class UOp:
    """One IR node: op, dtype, sources, argument. Built through UOp(...), which returns the existing node of
    the same structure if there is one, so `is` compares structure and graphs share common subexpressions."""

    # range_memo: (vmin, vmax), filled by compiler.ir.ranges.vrange (the value-range analysis lives above the IR)
    __slots__ = ("op", "dtype", "src", "arg", "_key", "range_memo", "_hash", "__weakref__")

    def __new__(cls, op: Ops, dtype: DType | PtrDType = dtypes.int32, src: tuple = (), arg: Any = None):
        key = (op, dtype, tuple(id(s) for s in src), _key_arg(arg))
        ref = _NODES.get(key)
        if ref is not None and (found := ref()) is not None:
            return found
        u = object.__new__(cls)
        u.op, u.dtype, u.src, u.arg = op, dtype, tuple(src), arg
        u._key, u.range_memo = key, None
        dk = _DTYPE_KEYS.get(dtype)
        if dk is None:
            dk = _DTYPE_KEYS[dtype] = stable_key(dtype)
        ak = arg if type(arg) is int else stable_key(arg)
        u._hash = hash((op.value, dk, tuple(s._hash for s in src), ak))
        _NODES[key] = weakref.KeyedRef(u, _forget, key)
        return u

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return self is other

    def __reduce__(self):
        return UOp, (self.op, self.dtype, self.src, self.arg)

    def __repr__(self) -> str:
        return f"UOp({self.op.name}, {self.dtype!r}, arg={self.arg!r}, src=<{len(self.src)}>)"

    def replace(self, **kw) -> UOp:
        """The node with some of op/dtype/src/arg replaced."""
        return UOp(kw.get("op", self.op), kw.get("dtype", self.dtype), kw.get("src", self.src), kw.get("arg", self.arg))

    # ---- building --------------------------------------------------------------------------------------
    @staticmethod
    def const(dtype: DType, value) -> UOp:
        """A constant of `dtype`, its value normalised to the type (wrapped ints, bools as bool)."""
        return UOp(Ops.CONST, dtype, (), normalize(dtype, value))

    def alu(self, op: Ops, *others: UOp | int | float | bool) -> UOp:
        """An ALU op with self as first source; Python numbers become constants of self's type."""
        if op is Ops.WHERE:
            a, b = others
            dt = a.dtype if isinstance(a, UOp) else b.dtype if isinstance(b, UOp) else o_dtype(a)
            return UOp(op, dt, (self, *(o if isinstance(o, UOp) else UOp.const(dt, o) for o in others)))
        srcs = (self, *(o if isinstance(o, UOp) else UOp.const(self.dtype, o) for o in others))
        return UOp(op, dtypes.bool if op in COMPARE else self.dtype, srcs)

    def __add__(self, o):
        return self.alu(Ops.ADD, o)

    def __radd__(self, o):
        return UOp.const(self.dtype, o).alu(Ops.ADD, self)

    def __sub__(self, o):
        return self.alu(Ops.SUB, o)

    def __mul__(self, o):
        return self.alu(Ops.MUL, o)

    def __rmul__(self, o):
        return UOp.const(self.dtype, o).alu(Ops.MUL, self)

    def __floordiv__(self, o):
        return self.alu(Ops.IDIV, o)

    def __mod__(self, o):
        return self.alu(Ops.MOD, o)

    def __neg__(self):
        return self.alu(Ops.NEG)

    def lt(self, o):
        """self < o (bool)."""
        return self.alu(Ops.CMPLT, o)

    def ge(self, o):
        """self >= o (bool), as not(self < o)."""
        return self.alu(Ops.CMPLT, o).alu(Ops.NOT)

    def ne(self, o):
        """self != o (bool)."""
        return self.alu(Ops.CMPNE, o)

    def eq(self, o):
        """self == o (bool)."""
        return self.alu(Ops.CMPEQ, o)

    def logical_and(self, o: UOp) -> UOp:
        """self and o (bools; a True constant on either side folds away)."""
        if self.op is Ops.CONST:
            return o if self.arg else self
        if o.op is Ops.CONST:
            return self if o.arg else o
        return self.alu(Ops.AND, o)

    def where(self, a, b) -> UOp:
        """a if self else b."""
        return self.alu(Ops.WHERE, a, b)

    def cast(self, dtype: DType) -> UOp:
        """self converted to dtype (itself if it has that type)."""
        return self if self.dtype == dtype else UOp(Ops.CAST, dtype, (self,))

    # ---- analysis ----------------------------------------------------------------------------------------
    def toposort(self) -> list[UOp]:
        """Every node reachable from self, sources before users."""
        out, seen, stack = [], set(), [(self, False)]
        while stack:
            u, done = stack.pop()
            if done:
                out.append(u)
                continue
            if u in seen:
                continue
            seen.add(u)
            stack.append((u, True))
            stack.extend((s, False) for s in reversed(u.src) if s not in seen)
        return out


# Every live node by its structure, through weak references: a node lives only as long as a graph holds it. A dict
# of KeyedRefs rather than a WeakValueDictionary, whose get and set are Python-level calls: node creation is the
# compiler's most frequent operation (a million a test file; the dictionary's own calls were a fifth of its cost).
_NODES: dict[tuple, weakref.KeyedRef] = {}


def _forget(ref: weakref.KeyedRef) -> None:
    """A node died: drop its entry, unless a newer node of the structure has taken the key."""
    if _NODES.get(ref.key) is ref:
        del _NODES[ref.key]


def o_dtype(x) -> DType:
    """The type a bare Python value becomes as an IR constant."""
    return dtypes.of_scalar(x)


def _key_arg(arg):
    # floats by their bits: 0.0 and -0.0 are different constants, and every NaN is one constant
    if isinstance(arg, float):
        return ("float", "nan" if math.isnan(arg) else arg.hex())
    return arg


_NONE, _NAN = -0x6E6F6E65, -0x6E616E  # the keys of None and of every NaN
_DTYPE_KEYS: dict = {}  # dtype -> stable_key(dtype): every node needs one


def stable_key(x):
    """x as a value whose hash() is the same in every process. Python 3.11 hashes None by its address, a NaN
    by its identity, and str (so Enum members, dtypes and any dataclass holding a str) with the per-process
    PYTHONHASHSEED; a node's hash built from those would differ run to run, and with it every order that
    sorts or iterates by node hash (the simplifier's term order, sets of nodes): the same program would
    compile to different kernel IR, code objects and kernel-cache keys each run. Ints, floats and tuples
    of them hash the same everywhere; everything else is reduced to them here."""
    if isinstance(x, bool | int):
        return x
    if isinstance(x, float):
        return _NAN if math.isnan(x) else x
    if x is None:
        return _NONE
    if isinstance(x, str):
        return zlib.crc32(x.encode())
    if isinstance(x, tuple | list):
        return tuple(stable_key(v) for v in x)
    if isinstance(x, Enum):
        return (stable_key(type(x).__name__), stable_key(x.value))
    if dataclasses.is_dataclass(x):
        return _record_key(x)
    return hash(x)


@functools.lru_cache(maxsize=4096)
def _record_key(x) -> tuple:
    """stable_key of a frozen dataclass (dtypes, views, shape trackers: few distinct ones, met often)."""
    return (stable_key(type(x).__name__),) + tuple(stable_key(getattr(x, f.name)) for f in dataclasses.fields(x))


def normalize(dtype: DType, value):
    """A Python value as a constant of dtype: ints wrap to the type's width, bools are bools, floats floats."""
    if not isinstance(dtype, DType):
        return value
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{value} has no {dtype.name} value")
            value = int(value)
        v = int(value) & ((1 << dtype.bits) - 1)
        if dtype.kind == "i" and v >= 1 << (dtype.bits - 1):
            v -= 1 << dtype.bits
        return v
    return float(value)
