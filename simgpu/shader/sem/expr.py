"""The expression form of instruction semantics: typed nodes over the lanes of a wave.

A definition is a Python function over `E` values (the sources, typed as the ISA types them: u32, i32,
b32, u64, i16, f32, f16, ..., `bool` for a lane mask such as VCC's carry-in) that returns the result (or the
result and a lane mask, for a carry-out). Python operators build nodes: `+ - *` wrap to the type's width,
`& | ^ ~` are bit operations (logical ones on `bool`), `<< >>` shift (`>>` is arithmetic on signed types,
as the ISA's `>>` on an .i32 is), `< <= > >=` compare by the type's signedness; `eq`, `ne`, `select`,
`minimum`, `maximum`, `cast` and the bit counts are functions. Both operands of a binary node have one type;
a Python number takes the other operand's type. Shift amounts must be in range (mask them, as the pseudo-code
does with S0[4:0]): an out-of-range shift means different things to numpy and to LLVM.

`cast(x, t)` converts by value between integer types: wider sign- or zero-extends by x's signedness, narrower
keeps the low bits, same width reinterprets (a bool becomes 0 or 1).

Floats (f16, f32, f64) follow the ISA and the wave's MODE register, which each tier reads its own way (the
interpreter per batch of waves, the JIT when it translates). `+ - *` and `fma` are IEEE operations rounded
once in MODE's round mode for the type, and a NaN result is the first NaN operand, quieted (a NaN made from
numbers, inf - inf, is the host's default NaN): docs/shader.md, "NaN results". They do not flush denormals:
`flush_in` / `flush_out` do, as MODE's denorm mode says for inputs and results (`flush` always).
`fmin`/`fmax` are the ISA's min/max (-0 < +0, MODE.IEEE's NaN rules); `fmin_num`/`fmax_num` gfx12's, IEEE
754-2019 minimumNumber/maximumNumber (-0 < +0, MODE plays no part). `< <= > >= eq` are IEEE's ordered
compares and `ne` its unordered `!=`; `-x` and `fabs` change only the sign bit. `cast` converts between
floats and to or from integers: to a float it rounds in MODE's round mode for the result type, to an integer
it truncates and saturates (NaN gives 0). `bitcast` reinterprets bits between types of one width. `trunc`,
`ceil`, `floor` and `rint` round to integral values; `rcp`, `rsq` and `sqrt` are the transcendental unit's,
modelled as float64 arithmetic rounded to nearest once, whatever MODE says (a NaN result as for `+`);
`add_rn`, `sub_rn`, `mul_rn`, `div_rn` (f64 only) and `cvt_rn` are its working arithmetic: plain IEEE to nearest even,
MODE aside, with no NaN rule (the definitions using them select every NaN lane's result themselves).

The generators (sem.numpy_gen, jit.lower_sem) walk the tree once per definition (numpy) or per translated
instruction (LLVM); a node used twice is computed once (the tree is a DAG, shared by identity).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# type name -> (bits, signed); "bool" is a lane mask (numpy bool, LLVM i1)
INT_TYPES = {"u16": (16, False), "i16": (16, True), "b16": (16, False),
             "u32": (32, False), "i32": (32, True), "b32": (32, False),
             "u64": (64, False), "i64": (64, True), "b64": (64, False), "bool": (1, False)}
FLOAT_TYPES = {"f16": 16, "f32": 32, "f64": 64}
# float type -> (the unsigned type of its bits, mantissa bits, exponent bias); its exponent field, all ones for
# inf and NaN; the top mantissa bit is the quiet one
FLOAT_LAYOUT = {"f16": ("u16", 10, 15), "f32": ("u32", 23, 127), "f64": ("u64", 52, 1023)}
EXP_FIELD = {t: (1 << (FLOAT_TYPES[t] - 1)) - (1 << m) for t, (_, m, _) in FLOAT_LAYOUT.items()}
_INT_ONLY = ("and", "or", "xor", "shl", "shr", "min", "max")


def bits(t: str) -> int:
    return INT_TYPES[t][0] if t in INT_TYPES else FLOAT_TYPES[t]


def signed(t: str) -> bool:
    return INT_TYPES[t][1]


def is_float(t: str) -> bool:
    return t in FLOAT_TYPES


class E:
    """A node: `op` over `args` with result type `t` (`value`: a constant's, a source's index)."""

    __slots__ = ("op", "t", "args", "value")

    def __init__(self, op: str, t: str, args: tuple = (), value=None):
        self.op, self.t, self.args, self.value = op, t, args, value

    def __repr__(self) -> str:
        inner = ", ".join(map(repr, self.args)) if self.args else repr(self.value)
        return f"{self.op}:{self.t}({inner})"

    def _bin(self, op: str, other, swap: bool = False) -> E:
        other = lift(other, self.t)
        a, b = (other, self) if swap else (self, other)
        if a.t != b.t:
            raise TypeError(f"{op} of {a.t} and {b.t}: cast one of them")
        if a.t in FLOAT_TYPES and op in _INT_ONLY:
            raise TypeError(f"{op} on {a.t}: bitcast it, or fmin/fmax for the ISA's min/max")
        return E(op, a.t, (a, b))

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __and__(self, o): return self._bin("and", o)
    def __rand__(self, o): return self._bin("and", o, True)
    def __or__(self, o): return self._bin("or", o)
    def __ror__(self, o): return self._bin("or", o, True)
    def __xor__(self, o): return self._bin("xor", o)
    def __rxor__(self, o): return self._bin("xor", o, True)
    def __lshift__(self, o): return self._bin("shl", o)
    def __rlshift__(self, o): return self._bin("shl", o, True)
    def __rshift__(self, o): return self._bin("shr", o)
    def __rrshift__(self, o): return self._bin("shr", o, True)
    def __lt__(self, o): return _cmp("lt", self, o)
    def __le__(self, o): return _cmp("le", self, o)
    def __gt__(self, o): return _cmp("gt", self, o)
    def __ge__(self, o): return _cmp("ge", self, o)

    def __invert__(self) -> E:
        if self.t in FLOAT_TYPES:
            raise TypeError(f"~ on {self.t}")
        return E("not", self.t, (self,))

    def __neg__(self) -> E:
        """A float with its sign bit flipped (NaNs too), an integer subtracted from 0."""
        return E("neg", self.t, (self,)) if self.t in FLOAT_TYPES else lift(0, self.t) - self


def lift(x, t: str) -> E:
    """x as a node: a node as it is, a Python number (or bool) as a constant of type t."""
    if isinstance(x, E):
        return x
    if t in FLOAT_TYPES:
        return E("const", t, value=float(x))  # (a value the type holds exactly; NaN is the quiet positive one)
    if t == "bool":
        return E("const", t, value=int(bool(x)))
    n = bits(t)
    v = int(x) & ((1 << n) - 1)
    if signed(t) and v >> (n - 1):
        v -= 1 << n
    return E("const", t, value=v)


def const(value, t: str) -> E:
    return lift(value, t)


def _cmp(op: str, a, b) -> E:
    a = lift(a, b.t) if isinstance(b, E) else a
    b = lift(b, a.t)
    if a.t != b.t:
        raise TypeError(f"{op} of {a.t} and {b.t}")
    return E(op, "bool", (a, b))


def eq(a, b) -> E:
    return _cmp("eq", a, b)


def ne(a, b) -> E:
    return _cmp("ne", a, b)


def select(cond: E, a, b) -> E:
    """a in the lanes where cond is set, else b."""
    t = a.t if isinstance(a, E) else b.t
    a, b = lift(a, t), lift(b, t)
    if cond.t != "bool" or a.t != b.t:
        raise TypeError(f"select({cond.t}, {a.t}, {b.t})")
    return E("select", t, (cond, a, b))


def minimum(a: E, b) -> E:
    return a._bin("min", b)


def maximum(a: E, b) -> E:
    return a._bin("max", b)


def cast(x: E, t: str) -> E:
    if x.t == t:
        return x
    if ("bool" in (x.t, t) and (x.t in FLOAT_TYPES or t in FLOAT_TYPES)) or t not in INT_TYPES | FLOAT_TYPES:
        raise TypeError(f"cast {x.t} -> {t}")
    return E("cast", t, (x,))


def bitcast(x: E, t: str) -> E:
    """x's bits as type t (the same width)."""
    if bits(x.t) != bits(t) or "bool" in (x.t, t):
        raise TypeError(f"bitcast {x.t} -> {t}")
    return x if x.t == t else E("bitcast", t, (x,))


def popcount(x: E) -> E:
    return E("popcount", x.t, (x,))


def clz(x: E) -> E:
    """Leading zeros (the width for 0)."""
    return E("clz", x.t, (x,))


def ctz(x: E) -> E:
    """Trailing zeros (the width for 0)."""
    return E("ctz", x.t, (x,))


def bitreverse(x: E) -> E:
    return E("bitreverse", x.t, (x,))


def lane_id() -> E:
    """Each lane's index in the wave (u32)."""
    return E("lane", "u32")


def saturate(x: E, t: str) -> E:
    """x clamped to the range of integer type t, then cast to t (the ISA's clamp on integer results)."""
    n, s = INT_TYPES[t][0], signed(t)
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if s else (0, (1 << n) - 1)
    return cast(minimum(maximum(x, lo), hi), t)


def _float(op: str, *xs, t: str | None = None) -> E:
    ft = next(x.t for x in xs if isinstance(x, E))
    xs = tuple(lift(x, ft) for x in xs)
    if ft not in FLOAT_TYPES or any(x.t != ft for x in xs):
        raise TypeError(f"{op} of {', '.join(x.t for x in xs)}")
    return E(op, t or ft, xs)


def fma(a, b, c) -> E:
    """a * b + c rounded once."""
    return _float("fma", a, b, c)


def fmin(a, b) -> E:
    """The ISA's min: -0 < +0; with MODE.IEEE a signaling NaN operand gives itself quieted and a quiet NaN
    the other operand, without it any NaN gives the other operand. No flushing."""
    return _float("fmin", a, b)


def fmax(a, b) -> E:
    return _float("fmax", a, b)


def fmin_num(a, b) -> E:
    """IEEE 754-2019 minimumNumber (gfx12's v_min_num_*): -0 < +0; a NaN operand, signaling or quiet, gives the
    other operand, two NaNs the first one quieted; MODE.IEEE plays no part. No flushing."""
    return _float("fmin_num", a, b)


def fmax_num(a, b) -> E:
    """maximumNumber, as fmin_num."""
    return _float("fmax_num", a, b)


def isnan(x: E) -> E:
    return _float("isnan", x, t="bool")


def fabs(x: E) -> E:
    return _float("abs", x)


def flush_in(x: E) -> E:
    """x with denormals replaced by zero of their sign where MODE's denorm mode flushes inputs of x's type."""
    return _float("flush_in", x)


def flush_out(x: E) -> E:
    """The same for results."""
    return _float("flush_out", x)


def flush(x: E) -> E:
    """Denormals flushed whatever MODE says (the f32 transcendentals)."""
    return _float("flush", x)


def trunc(x: E) -> E: return _float("trunc", x)
def ceil(x: E) -> E: return _float("ceil", x)
def floor(x: E) -> E: return _float("floor", x)
def rint(x: E) -> E: return _float("rint", x)  # to nearest, ties to even
def rcp(x: E) -> E: return _float("rcp", x)
def rsq(x: E) -> E: return _float("rsq", x)
def sqrt(x: E) -> E: return _float("sqrt", x)


# The transcendental unit's working arithmetic (vector.elementary: exp2, log2, sin, cos as fixed f64 algorithms):
# IEEE f64 operations rounded to nearest even whatever MODE says, never flushed and with no NaN rule (a definition
# using them replaces every lane a NaN can reach with a select), so both tiers compute the host's plain arithmetic.
def _f64(op: str, *xs) -> E:
    n = _float(op, *xs)
    if n.t != "f64":
        raise TypeError(f"{op} of {n.t}: f64 only")
    return n


def add_rn(a, b) -> E: return _f64("add_rn", a, b)
def sub_rn(a, b) -> E: return _f64("sub_rn", a, b)
def mul_rn(a, b) -> E: return _f64("mul_rn", a, b)
def div_rn(a, b) -> E: return _f64("div_rn", a, b)  # (v_div_scale's quotient test)


def cvt_rn(x: E, t: str) -> E:
    """A float converted to float type t, rounded to nearest even whatever MODE says (too large: inf)."""
    if not is_float(x.t) or not is_float(t):
        raise TypeError(f"cvt_rn {x.t} -> {t}")
    return x if x.t == t else E("cvt_rn", t, (x,))


@dataclass
class Definition:
    """The semantics of one opcode: `fn(*sources[, clamp=])` over E sources of types `srcs` (the spec's sources,
    then its accumulator and lane-mask inputs); `clamp`: fn takes the instruction's clamp bit."""

    srcs: tuple[str, ...]
    fn: Callable
    clamp: bool = False
    _trees: dict = field(default_factory=dict, repr=False)

    def tree(self, clamp: bool = False) -> tuple[E, ...]:
        """The result node(s): (value,) or (value, carry mask) (built once per clamp setting)."""
        clamp = clamp and self.clamp
        out = self._trees.get(clamp)
        if out is None:
            args = [E("src", t, value=i) for i, t in enumerate(self.srcs)]
            r = self.fn(*args, clamp=clamp) if self.clamp else self.fn(*args)
            out = self._trees[clamp] = tuple(r) if isinstance(r, tuple) else (r,)
        return out


def nodes(roots) -> list[E]:
    """Every node under `roots`, each once, operands before their users."""
    order: list[E] = []
    seen: set[int] = set()

    def visit(n: E) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        for a in n.args:
            visit(a)
        order.append(n)
    for r in roots:
        if r is not None:
            visit(r)
    return order
