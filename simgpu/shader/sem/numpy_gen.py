"""The interpreter's kernels generated from definitions (sem.expr): Python source over numpy, compiled once
per definition, with the signature the VALU executor calls (`fn(ctx, *sources)`, vector.valu.VOp.fn).

Generated source rather than a tree walked per call: the kernel is then what one would write by hand (one
numpy call per node, a node used once written inside its user's expression so Python frees its array at once,
constants hoisted into the function's globals), so the interpreter pays nothing for the form. Sources arrive
as typed arrays ([n, lanes], [n, 1] for scalars, 0-d for constants) and numpy's own integer arithmetic wraps
as the ISA's does. A clamping definition gets both bodies, picked by ctx.clamp; a carry-out is not computed
when it goes to null (ctx.carry False). Float nodes call sem.numpy_float with the FloatMode of their type,
looked up once per call at its first use (`tm_f32 = nf.fmode(c, "f32")`); a flush is inlined as a test of
that mode, so a kernel pays for flushing only in a MODE that flushes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from simgpu.shader.sem import fpexact as fx
from simgpu.shader.sem import numpy_float as nf
from simgpu.shader.sem.expr import INT_TYPES, Definition, E, bits, is_float, nodes

DTYPES = {"u16": np.uint16, "i16": np.int16, "b16": np.uint16, "u32": np.uint32, "i32": np.int32,
          "b32": np.uint32, "u64": np.uint64, "i64": np.int64, "b64": np.uint64, "bool": np.bool_,
          "f16": np.float16, "f32": np.float32, "f64": np.float64}
_UNSIGNED = {16: np.uint16, 32: np.uint32, 64: np.uint64}
_INFIX = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_CALL = {"shl": "np.left_shift", "shr": "np.right_shift", "min": "np.minimum", "max": "np.maximum"}
_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint64)  # each byte's bits reversed
_LANES: dict[int, np.ndarray] = {}


def _lanes(n: int) -> np.ndarray:
    ids = _LANES.get(n)
    if ids is None:
        ids = _LANES[n] = np.arange(n, dtype=np.uint32)
    return ids


def _unsigned(x):
    x = np.asarray(x)
    return x.view(_UNSIGNED[x.dtype.itemsize * 8])


def _popcount(x):
    return np.bitwise_count(x).astype(x.dtype)


def _clz(x):
    """Leading zeros: the width minus the number of bits after smearing the highest set bit down."""
    v, n = _unsigned(x), np.asarray(x).dtype.itemsize * 8
    s = 1
    while s < n:
        v = v | (v >> v.dtype.type(s))
        s *= 2
    return (n - np.bitwise_count(v).astype(np.int64)).astype(np.asarray(x).dtype)


def _ctz(x):
    """Trailing zeros: the bits below the lowest set one (all of them, wrapped, for 0)."""
    v = _unsigned(x)
    one = v.dtype.type(1)
    return np.bitwise_count((v & (~v + one)) - one).astype(np.asarray(x).dtype)


def _bitreverse(x):
    v = _unsigned(x).astype(np.uint64)
    n = np.asarray(x).dtype.itemsize * 8
    out = np.zeros(v.shape, np.uint64)
    for k in range(n // 8):
        out |= _REV8[((v >> np.uint64(8 * k)) & np.uint64(0xFF)).astype(np.intp)] << np.uint64(n - 8 - 8 * k)
    return out.astype(_UNSIGNED[n]).view(np.asarray(x).dtype)


_HELPERS = {"np": np, "nf": nf, "fx": fx, "_lanes": _lanes, "_popcount": _popcount, "_clz": _clz, "_ctz": _ctz,
            "_bitreverse": _bitreverse}
# float node -> the call computing it ({m}: the FloatMode of the node's type)
_FLOAT_CALL = {"add": "nf.add({m}, {0}, {1})", "sub": "nf.sub({m}, {0}, {1})", "mul": "nf.mul({m}, {0}, {1})",
               "fma": "nf.fma({m}, {0}, {1}, {2})", "fmin": "nf.fmin({m}, {0}, {1})", "fmax": "nf.fmax({m}, {0}, {1})",
               "fmin_num": "nf.fmin_num({0}, {1})", "fmax_num": "nf.fmax_num({0}, {1})",
               "flush_in": "{0} if {m}.din is None else fx.flush_in({0}, {m}.din)",
               "flush_out": "{0} if {m}.dout is None else fx.flush_out({0}, {m}.dout)",
               "flush": "nf.flush({0})", "neg": "-{0}", "abs": "np.abs({0})", "isnan": "np.isnan({0})",
               "trunc": "np.trunc({0})", "ceil": "np.ceil({0})", "floor": "np.floor({0})", "rint": "np.rint({0})",
               "rcp": "nf.rcp({0})", "rsq": "nf.rsq({0})", "sqrt": "nf.sqrt({0})",
               "add_rn": "{0} + {1}", "sub_rn": "{0} - {1}", "mul_rn": "{0} * {1}",  # (f64: numpy's IEEE ops)
               "div_rn": "{0} / {1}"}


class _Body:
    """The lines computing some nodes; names of nodes already computed are shared across calls of `emit`."""

    def __init__(self, env: dict, indent: str, prefix: str):
        self.env, self.indent, self.prefix = env, indent, prefix  # (two bodies share a function: own names)
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self.modes: dict[str, str] = {}  # float type -> the name of its FloatMode, once looked up
        self.uses: Counter = Counter()  # node -> its users (and 1 for a result)

    def name(self, n: E) -> str:
        return self.names[id(n)]

    def emit(self, roots) -> None:
        for n in nodes(roots):
            if id(n) not in self.names:
                code = self._node(n)
                self.names[id(n)] = self._line(code) if self.uses[id(n)] > 1 and code.startswith("(") else code

    def _line(self, code: str) -> str:
        """A line naming an expression (for a node used more than once)."""
        t = f"{self.prefix}{len(self.lines)}"
        self.lines.append(f"{self.indent}{t} = {code}")
        return t

    def _named(self, x: E) -> str:
        code = self.names[id(x)]
        if code.startswith("("):
            code = self.names[id(x)] = self._line(code)
        return code

    def _node(self, n: E) -> str:
        if n.op == "src":
            return f"s{n.value}"
        if n.op == "const":
            k = f"k{len(self.env)}"
            self.env[k] = DTYPES[n.t](n.value)
            return k
        a = [self.name(x) for x in n.args]
        ft = n.args[0].t if n.args else n.t
        if n.op == "cvt_rn":  # float to float, to nearest even (numpy converts f64 to f16 in one rounding)
            code = f"{a[0]}.astype(np.{np.dtype(DTYPES[n.t]).name})"
        elif n.op == "cast" and is_float(n.t):  # to a float: rounded in MODE's round mode for the result type
            code = f"nf.to_float({self._mode(n.t)}, {a[0]})"
        elif n.op == "cast" and is_float(ft):
            code = f"nf.to_int({a[0]}, {n.t!r})"
        elif n.op == "bitcast":
            if DTYPES[ft] == DTYPES[n.t]:
                return a[0]
            code = f"{a[0]}.view(np.{np.dtype(DTYPES[n.t]).name})"
        elif is_float(ft) and n.op in _FLOAT_CALL:
            form = _FLOAT_CALL[n.op]
            if form.count("{0}") > 1:  # (an inline flush tests the mode, then reads its operand)
                a[0] = self._named(n.args[0])
            code = form.format(*a, m=self._mode(ft) if "{m}" in form else "")
        elif n.op in _INFIX:
            code = f"{a[0]} {_INFIX[n.op]} {a[1]}"
        elif n.op in _CALL:
            code = f"{_CALL[n.op]}({a[0]}, {a[1]})"
        elif n.op == "not":
            code = f"~{a[0]}"
        elif n.op == "select" and n.t in INT_TYPES and n.t != "bool" and n.args[1].op == n.args[2].op == "const":
            # between two integer constants: b + cond * (a - b), wrapping (np.where is several times slower
            # when its condition is irregular, as signs are: its loop branches per element)
            k = f"k{len(self.env)}"
            w = bits(n.t)
            self.env[k] = np.array(n.args[1].value - n.args[2].value & (1 << w) - 1, _UNSIGNED[w]).view(DTYPES[n.t])[()]
            code = f"{a[2]} + {a[0]} * {k}"
        elif n.op == "select":
            code = f"np.where({a[0]}, {a[1]}, {a[2]})"
        elif n.op == "cast":
            src = n.args[0]
            if DTYPES[src.t] == DTYPES[n.t]:  # u32 <-> b32: the same array
                return a[0]
            dt = f"np.{np.dtype(DTYPES[n.t]).name}"
            same = src.t != "bool" and bits(src.t) == bits(n.t)
            code = f"{a[0]}.view({dt})" if same else f"{a[0]}.astype({dt})"
        elif n.op == "lane":
            code = "_lanes(c.lanes)"
        else:
            code = f"_{n.op}({a[0]})"
        return f"({code})"  # inline in its one user (emit names it when it has more)

    def _mode(self, t: str) -> str:
        name = self.modes.get(t)
        if name is None:
            name = self.modes[t] = f"{self.prefix}m_{t}"
            self.lines.append(f'{self.indent}{name} = nf.fmode(c, "{t}")')
        return name

    def returns(self, roots, carry_lazy: bool) -> None:
        """Lines computing `roots` and returning them (a carry mask only when ctx.carry wants it)."""
        self.uses = Counter(id(x) for n in nodes(roots) for x in n.args)
        self.uses.update(id(r) for r in roots)
        self.emit(roots[:1])
        if len(roots) == 1:
            self.lines.append(f"{self.indent}return {self.name(roots[0])}")
            return
        if carry_lazy:
            self.lines.append(f"{self.indent}if not c.carry:")
            self.lines.append(f"{self.indent}    return {self.name(roots[0])}, None")
        self.emit(roots[1:])
        self.lines.append(f"{self.indent}return {', '.join(self.name(r) for r in roots)}")


def numpy_kernel(d: Definition, name: str = "kernel"):
    """fn(ctx, *sources) computing the definition with numpy (its source is fn.source)."""
    env = dict(_HELPERS)
    args = ", ".join(f"s{i}" for i in range(len(d.srcs)))
    lines = [f"def {name}(c, {args}):"]
    if d.clamp:
        clamped = _Body(env, "        ", "q")
        clamped.returns(d.tree(True), True)
        lines += ["    if c.clamp:", *clamped.lines]
    plain = _Body(env, "    ", "t")
    plain.returns(d.tree(False), True)
    lines += plain.lines
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<definition {name}>", "exec"), env)  # noqa: S102 - source generated from the tree
    fn = env[name]
    fn.source = source
    return fn

