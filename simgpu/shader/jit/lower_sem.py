"""The JIT's operations generated from definitions (sem.expr): each node becomes one LLVM instruction over
<lanes x T> values, through the same text builder (ir.Builder) as the rest of the translator.

Why text and not llvmlite.ir: the region's function is assembled as IR text (ir.py: several times faster
to build than llvmlite.ir's object graph, and translation time is the JIT's budget), and the block assembly
rewrites that text (unmasked.py copies a block's lines, renaming values). Values built with llvmlite.ir
would have to be printed back into those lines anyway; generating the text from the definition keeps one
builder and still leaves no hand-written IR for a defined instruction.

`emit_definition(op, *sources)` (op a lower_valu.Op; lower_valu imports this module, so not the other way
round) reads the definition from op.spec when it translates, so a definition replaced at run time
(vector.valu.override) is what the next translation uses. `emit_tree` is the walk itself, also over the i32/i64/i1
values of one wave (op.scalar: the SALU's definitions, jit.lower_salu).

Floats: MODE is the region's (lw.mode, fixed when it is translated and checked when it is entered), so
flushing a denormal is code only in a MODE that flushes, the IEEE bit picks min/max's NaN rules here, and an
operation rounding in MODE's round mode is translated only in round-to-nearest-even (the host's arithmetic;
other modes raise Unsupported and run in the interpreter). The host rounds + - * / sqrt and llvm.fma exactly
like the interpreter's exact paths; NaN results follow the interpreter's rule (fpexact.first_nan: the first NaN
operand quieted; a NaN made from numbers the host's default NaN, written as a constant because LLVM folds
constant operands to its own default NaN, which need not be the host's), so no payload depends on the order
the host or LLVM evaluates operands in.
"""

from __future__ import annotations

import struct

import numpy as np

from simgpu.shader.jit.lower import Unsupported
from simgpu.shader.sem.expr import EXP_FIELD, FLOAT_LAYOUT, FLOAT_TYPES, E, bits, is_float, nodes, signed
from simgpu.shader.sem.numpy_float import DENORM_SHIFT, DT, IEEE_BIT, ROUND_SHIFT

_PLAIN = {"add": "add", "sub": "sub", "mul": "mul", "and": "and", "or": "or", "xor": "xor", "shl": "shl"}
_FLOAT_ELEM = {"f16": "half", "f32": "float", "f64": "double"}
_INTRINSIC = {"popcount": "ctpop", "clz": "ctlz", "ctz": "cttz", "bitreverse": "bitreverse", "abs": "fabs",
              "trunc": "trunc", "ceil": "ceil", "floor": "floor", "rint": "roundeven", "sqrt": "sqrt"}
_FARITH = {"add": "fadd", "sub": "fsub", "mul": "fmul"}
# (no contraction: LLVM fuses only on request)
_FARITH_RN = {"add_rn": "fadd", "sub_rn": "fsub", "mul_rn": "fmul", "div_rn": "fdiv"}
_FCMP = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_QUIET = {t: 1 << (m - 1) for t, (_, m, _) in FLOAT_LAYOUT.items()}
with np.errstate(invalid="ignore"):  # the NaN the host makes from numbers (inf - inf), as the interpreter gets it
    HOST_NAN = {t: int((np.array(np.inf, DT[t]) - np.inf).view(f"u{bits(t) // 8}")) for t in FLOAT_TYPES}


def signed_spelling(value: str, bits: int) -> str:
    """An integer constant in the signed spelling LLVM accepts for its width (other values as they are)."""
    if value.lstrip("-").isdigit():
        v = int(value) & ((1 << bits) - 1)
        return str(v - (1 << bits) if v >> (bits - 1) else v)
    return value


def elem(t: str) -> str:
    return _FLOAT_ELEM[t] if t in FLOAT_TYPES else f"i{bits(t)}"


def _vt(op, e: str) -> str:
    """The IR type of a value of element type e: a vector over the wave's lanes, or e itself for the scalar unit."""
    return e if op.scalar else op.b.vec(e)


def _const(op, n: E) -> str:
    if op.scalar:
        return ("true" if n.value else "false") if n.t == "bool" else signed_spelling(str(n.value), bits(n.t))
    if n.t == "f16":
        return f"splat (half 0xH{int(np.float16(n.value).view(np.uint16)):04X})"
    if n.t in FLOAT_TYPES:  # LLVM spells float constants too as the hex of the double of the same value
        return f"splat ({elem(n.t)} 0x{struct.unpack('<Q', struct.pack('<d', n.value))[0]:016X})"
    if n.t == "bool":
        return f"splat (i1 {'true' if n.value else 'false'})"
    return f"splat ({elem(n.t)} {signed_spelling(str(n.value), bits(n.t))})"


def _intrinsic(op, name: str, t: str, args: list[str], extra: str = "") -> str:
    """A call to a vector intrinsic over <lanes x t> (`extra`: a trailing scalar argument, e.g. `i1 false`)."""
    b = op.b
    vt = _vt(op, elem(t))
    shape = "" if op.scalar else f"v{op.lw.lanes}"
    fn = f"@llvm.{name}.{shape}{'f' if t in FLOAT_TYPES else 'i'}{bits(t)}"  # (the mangled type: v32f32, i64)
    call = [(vt, a) for a in args] + ([tuple(extra.split())] if extra else [])
    decl = ", ".join([vt] * len(args) + ([extra.split()[0]] if extra else []))
    return b.call(vt, fn, call, f"declare {vt} {fn}({decl})")


def _node(op, n: E, a: list[str]) -> str:
    b = op.b
    x = a[0] if a else None
    vt = _vt(op, elem(n.args[0].t if n.args else n.t))
    if (n.args and is_float(n.args[0].t)) or (n.op == "cast" and is_float(n.t)):
        return _float(op, n, a, vt)
    if n.op == "bitcast":
        return x if elem(n.t) == elem(n.args[0].t) else b.op(f"bitcast {vt} {x} to {_vt(op, elem(n.t))}")
    if n.op in ("shl", "shr") and bits(n.t) == 64 and not op.scalar:
        return _shift64(op, n, x, a[1])
    if n.op in _PLAIN:
        return b.op(f"{_PLAIN[n.op]} {vt} {x}, {a[1]}")
    if n.op == "shr":
        return b.op(f"{'ashr' if signed(n.t) else 'lshr'} {vt} {x}, {a[1]}")
    if n.op in ("min", "max"):
        return _intrinsic(op, ("s" if signed(n.t) else "u") + n.op, n.t, a)
    if n.op in ("lt", "le", "gt", "ge"):
        return b.op(f"icmp {'s' if signed(n.args[0].t) else 'u'}{n.op} {vt} {x}, {a[1]}")
    if n.op in ("eq", "ne"):
        return b.op(f"icmp {n.op} {vt} {x}, {a[1]}")
    if n.op == "not":
        return b.op(f"xor {vt} {x}, {_const(op, E('const', n.t, value=1 if n.t == 'bool' else -1))}")
    if n.op == "select":
        rt = _vt(op, elem(n.t))
        return b.op(f"select {vt} {x}, {rt} {a[1]}, {rt} {a[2]}")
    if n.op == "cast":
        src, wide, narrow = n.args[0].t, bits(n.t), bits(n.args[0].t)
        if wide == narrow:
            return x
        kind = "trunc" if wide < narrow else "sext" if src != "bool" and signed(src) else "zext"
        return b.op(f"{kind} {vt} {x} to {_vt(op, elem(n.t))}")
    if n.op == "lane":
        return "<" + ", ".join(f"i32 {i}" for i in range(op.lw.lanes)) + ">"
    if n.op in ("clz", "ctz"):
        return _intrinsic(op, _INTRINSIC[n.op], n.t, a, "i1 false")
    return _intrinsic(op, _INTRINSIC[n.op], n.t, a)


def _shift64(op, n: E, x: str, amount: str) -> str:
    """A shift of 64-bit lanes (amount 0-63) done on their 32-bit halves with funnel shifts: 64-bit lanes are
    VGPR pairs joined (lower_valu), and LLVM narrows the join, the halves and a constant amount's selects away,
    where a <lanes x i64> shift stays one (twice the vector registers, and the join and split around it)."""
    b, v, lanes = op.b, op.b.v32, op.lw.lanes
    lo = b.op(f"trunc {b.v64} {x} to {v}")
    hi = b.op(f"trunc {b.v64} {b.op(f'lshr {b.v64} {x}, splat (i64 32)')} to {v}")
    k = b.op(f"trunc {b.v64} {amount} to {v}")
    s = b.op(f"and {v} {k}, splat (i32 31)")
    small = b.op(f"icmp eq {v} {b.op(f'and {v} {k}, splat (i32 32)')}, zeroinitializer")

    def funnel(name: str) -> str:
        fn = f"@llvm.{name}.v{lanes}i32"
        return b.call(v, fn, [(v, hi), (v, lo), (v, s)], f"declare {v} {fn}({v}, {v}, {v})")
    if n.op == "shl":
        out_lo = b.op(f"select {b.vmask} {small}, {v} {b.op(f'shl {v} {lo}, {s}')}, {v} zeroinitializer")
        out_hi = b.op(f"select {b.vmask} {small}, {v} {funnel('fshl')}, {v} {b.op(f'shl {v} {lo}, {s}')}")
    else:
        top = "ashr" if signed(n.t) else "lshr"
        shifted = b.op(f"{top} {v} {hi}, {s}")
        fill = b.op(f"ashr {v} {hi}, splat (i32 31)") if signed(n.t) else "zeroinitializer"
        out_lo = b.op(f"select {b.vmask} {small}, {v} {funnel('fshr')}, {v} {shifted}")
        out_hi = b.op(f"select {b.vmask} {small}, {v} {shifted}, {v} {fill}")
    wide_hi = b.op(f"shl {b.v64} {b.op(f'zext {v} {out_hi} to {b.v64}')}, splat (i64 32)")
    return b.op(f"or {b.v64} {wide_hi}, {b.op(f'zext {v} {out_lo} to {b.v64}')}")


# ---------------------------------------------------------------------------------------------- floats


def _ints(op, t: str, x: str) -> str:
    return op.b.op(f"bitcast {op.b.vec(elem(t))} {x} to {op.b.vec(f'i{bits(t)}')}")


def _floats(op, t: str, x: str) -> str:
    return op.b.op(f"bitcast {op.b.vec(f'i{bits(t)}')} {x} to {op.b.vec(elem(t))}")


def _ic(t: str, v: int) -> str:
    """A splat of integer v in t's width."""
    return f"splat (i{bits(t)} {signed_spelling(str(v), bits(t))})"


def _rounds(op, t: str) -> None:
    if (op.lw.mode >> ROUND_SHIFT[t]) & 3:
        raise Unsupported("round mode other than nearest-even")


def _flush(op, t: str, x: str) -> str:
    """x with denormals (exponent field 0) replaced by zero of their sign."""
    b, it = op.b, op.b.vec(f"i{bits(t)}")
    xi = _ints(op, t, x)
    tiny = b.op(f"icmp eq {it} {b.op(f'and {it} {xi}, {_ic(t, EXP_FIELD[t])}')}, {_ic(t, 0)}")
    signed_zero = b.op(f"and {it} {xi}, {_ic(t, 1 << (bits(t) - 1))}")
    return _floats(op, t, b.op(f"select {b.vmask} {tiny}, {it} {signed_zero}, {it} {xi}"))


def _nan_bits(op, t: str, x: str) -> str:
    """x's bits with the quiet bit set (a NaN's quieted form)."""
    return op.b.op(f"or {op.b.vec(f'i{bits(t)}')} {_ints(op, t, x)}, {_ic(t, _QUIET[t])}")


def _isnan(op, t: str, x: str) -> str:
    return op.b.op(f"fcmp uno {op.b.vec(elem(t))} {x}, {x}")


def _first_nan(op, t: str, r: str, *srcs: str) -> str:
    """fpexact.first_nan: NaN lanes of r take the first NaN source (quieted), NaN lanes without one the host's
    default NaN. The fix-up runs only when some lane of r is NaN (a branch around it)."""
    b, ft, it = op.b, op.b.vec(elem(t)), op.b.vec(f"i{bits(t)}")
    nan = _isnan(op, t, r)
    lanes = op.lw.lanes
    anynan = b.call("i1", f"@llvm.vector.reduce.or.v{lanes}i1", [(b.vmask, nan)],
                    f"declare i1 @llvm.vector.reduce.or.v{lanes}i1({b.vmask})")
    head, fix, done = (b.fresh(h)[1:] for h in ("nanhead", "nanfix", "nandone"))
    b.raw(f"br label %{head}")
    b.label(head)
    b.br_rare(anynan, fix, done)
    b.label(fix)
    out = _ic(t, HOST_NAN[t])
    for x in reversed(srcs):
        out = b.op(f"select {b.vmask} {_isnan(op, t, x)}, {it} {_nan_bits(op, t, x)}, {it} {out}")
    fixed = b.op(f"select {b.vmask} {nan}, {ft} {_floats(op, t, out)}, {ft} {r}")
    b.raw(f"br label %{done}")
    b.label(done)
    return b.op(f"phi {ft} [{r}, %{head}], [{fixed}, %{fix}]")


def _minmax(op, t: str, a: str, c: str, is_max: bool, number: bool = False) -> str:
    """The ISA's min/max: -0 < +0; with MODE.IEEE a signaling NaN gives itself quieted and a quiet NaN the
    other operand, without it any NaN gives the other operand (sem.numpy_float._pick). `number`: gfx12's
    minimumNumber/maximumNumber, any NaN the other operand and two NaNs the first quieted, whatever MODE says
    (numpy_float._pick_num)."""
    b, m, ft, it = op.b, op.b.vmask, op.b.vec(elem(t)), op.b.vec(f"i{bits(t)}")
    x, y = (c, a) if is_max else (a, c)  # a wins when x < y
    less = b.op(f"fcmp olt {ft} {x}, {y}")
    xzero, yzero = (b.op(f"fcmp oeq {ft} {v}, zeroinitializer") for v in (x, y))
    zeros = b.op(f"and {m} {xzero}, {yzero}")
    xneg = b.op(f"icmp slt {it} {_ints(op, t, x)}, {_ic(t, 0)}")
    signs = b.op(f"and {m} {xneg}, {b.op(f'icmp sge {it} {_ints(op, t, y)}, {_ic(t, 0)}')}")
    less = b.op(f"or {m} {less}, {b.op(f'and {m} {zeros}, {signs}')}")
    r = b.op(f"select {m} {less}, {ft} {a}, {ft} {c}")
    r = b.op(f"select {m} {_isnan(op, t, a)}, {ft} {c}, {ft} {r}")
    r = b.op(f"select {m} {_isnan(op, t, c)}, {ft} {a}, {ft} {r}")
    if number:
        both = b.op(f"and {m} {_isnan(op, t, a)}, {_isnan(op, t, c)}")
        return b.op(f"select {m} {both}, {ft} {_floats(op, t, _nan_bits(op, t, a))}, {ft} {r}")
    if (op.lw.mode >> IEEE_BIT) & 1:
        for v in (c, a):  # a's rule last: it wins when both are signaling
            loud = b.op(f"icmp eq {it} {b.op(f'and {it} {_ints(op, t, v)}, {_ic(t, _QUIET[t])}')}, {_ic(t, 0)}")
            snan = b.op(f"and {m} {_isnan(op, t, v)}, {loud}")
            r = b.op(f"select {m} {snan}, {ft} {_floats(op, t, _nan_bits(op, t, v))}, {ft} {r}")
    return r


def _transcendental(op, t: str, name: str, x: str) -> str:
    """rcp, rsq, sqrt: float64 arithmetic rounded once to t. For f32 1/x and sqrt(x) that is the host's own
    f32 division and square root (double rounding from 53 bits is innocuous for them); rsq is 1 / sqrt(x) in
    f64, then rounded."""
    b = op.b
    wt = t if t == "f64" or (name != "rsq" and t == "f32") else "f64"
    vt, wv = b.vec(elem(t)), b.vec(elem(wt))
    w = x if wt == t else b.op(f"fpext {vt} {x} to {wv}")
    if name != "rcp":
        w = _intrinsic(op, "sqrt", wt, [w])
    if name != "sqrt":
        w = b.op(f"fdiv {wv} {b.splat(elem(wt), '1.0')}, {w}")
    r = w if wt == t else _fptrunc(op, w, wt, t)
    return _first_nan(op, t, r, x)


def _fptrunc(op, x: str, src: str, dst: str) -> str:
    """x rounded to nearest even from src to the narrower dst. f64 -> f16 goes through f32 rounded to odd (24 bits
    >= 11 + 2: the second rounding is then exact): without native f16 arithmetic LLVM calls a runtime function for
    it, which the JIT's code cannot reach."""
    b = op.b
    if (src, dst) != ("f64", "f16"):
        return b.op(f"fptrunc {b.vec(elem(src))} {x} to {b.vec(elem(dst))}")
    f, i, d = b.vec("float"), b.vec("i32"), b.vec("double")
    r = b.op(f"fptrunc {d} {x} to {f}")
    back = b.op(f"fpext {f} {r} to {d}")
    inexact = b.op(f"fcmp one {d} {back}, {x}")  # (NaN: ordered compares are false)
    ri = b.op(f"bitcast {f} {r} to {i}")
    even = b.op(f"icmp eq {i} {b.op(f'and {i} {ri}, splat (i32 1)')}, zeroinitializer")
    sticky = b.op(f"and {b.vmask} {inexact}, {even}")
    # the odd neighbour toward x: one up in magnitude when |r| < |x|, else one down
    up = b.op(f"fcmp olt {d} {_intrinsic(op, 'fabs', 'f64', [back])}, {_intrinsic(op, 'fabs', 'f64', [x])}")
    step = b.op(f"select {b.vmask} {up}, {i} splat (i32 1), {i} splat (i32 -1)")
    odd = b.op(f"select {b.vmask} {sticky}, {i} {b.op(f'add {i} {ri}, {step}')}, {i} {ri}")
    return b.op(f"fptrunc {f} {b.op(f'bitcast {i} {odd} to {f}')} to {b.vec('half')}")


def _cast(op, n: E, x: str, vt: str) -> str:
    b, src, dst = op.b, n.args[0].t, n.t
    out = b.vec(elem(dst))
    if not is_float(src):  # integer -> float, rounded
        _rounds(op, dst)
        return b.op(f"{'sitofp' if signed(src) else 'uitofp'} {vt} {x} to {out}")
    if not is_float(dst):  # truncated, saturated, NaN -> 0
        if src == "f16":  # (exactly, from f32: LLVM 19's AVX512-FP16 lowering saturates NaN to the minimum)
            x, vt, src = b.op(f"fpext {vt} {x} to {b.vec('float')}"), b.vec("float"), "f32"
        lanes = op.lw.lanes
        if bits(dst) < 32:
            return _narrow_saturated(op, x, vt, src, dst)
        fn = f"@llvm.{'fptosi' if signed(dst) else 'fptoui'}.sat.v{lanes}i{bits(dst)}.v{lanes}f{bits(src)}"
        return b.call(out, fn, [(vt, x)], f"declare {out} {fn}({vt})")
    if bits(dst) > bits(src):  # exact
        return b.op(f"fpext {vt} {x} to {out}")
    _rounds(op, dst)
    return _fptrunc(op, x, src, dst)


def _narrow_saturated(op, x: str, vt: str, src: str, dst: str) -> str:
    """x (f32 or f64) truncated and saturated to the 8- or 16-bit integer dst, NaN -> 0: clamped as a float to dst's
    range (its bounds are exact in f32) and then converted, the same value for every input. LLVM's x86 lowering of
    a narrow saturating conversion from a vector of doubles took most of a 16-bit kernel's code generation
    (test_jit_16bit's gfx1100 module of v_cvt_norm/v_cvt_pk_norm forms, default MODE: 2.96 CPU-s, 1.63 this way)."""
    b, n = op.b, bits(dst)
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed(dst) else (0, (1 << n) - 1)
    low, high = (f"splat ({elem(src)} {float(v)!r})" for v in (lo, hi))
    v = b.op(f"select {b.vmask} {b.op(f'fcmp olt {vt} {x}, {low}')}, {vt} {low}, {vt} {x}")
    v = b.op(f"select {b.vmask} {b.op(f'fcmp ogt {vt} {v}, {high}')}, {vt} {high}, {vt} {v}")
    v = b.op(f"select {b.vmask} {b.op(f'fcmp uno {vt} {v}, zeroinitializer')}, {vt} zeroinitializer, {vt} {v}")
    i = b.vec("i32")
    return b.op(f"trunc {i} {b.op(f'fptosi {vt} {v} to {i}')} to {b.vec(elem(dst))}")


def _float(op, n: E, a: list[str], vt: str) -> str:
    """A node over floats, or a conversion to one."""
    b, t = op.b, n.args[0].t
    if n.op in _FARITH or n.op == "fma":
        _rounds(op, t)
        if n.op == "fma" and t == "f16":  # without native f16 arithmetic LLVM rounds it twice, through fmaf
            raise Unsupported("f16 fma")
        r = b.op(f"{_FARITH[n.op]} {vt} {a[0]}, {a[1]}") if n.op in _FARITH else _intrinsic(op, "fma", t, a)
        return _first_nan(op, t, r, *a)
    if n.op in _FARITH_RN:  # the transcendental unit's f64 arithmetic: the host's, no NaN rule (expr.add_rn)
        return b.op(f"{_FARITH_RN[n.op]} {vt} {a[0]}, {a[1]}")
    if n.op == "cvt_rn":
        return b.op(f"fpext {vt} {a[0]} to {b.vec(elem(n.t))}") if bits(n.t) > bits(t) else _fptrunc(op, a[0], t, n.t)
    if n.op in ("flush_in", "flush_out", "flush"):
        keep = {"flush_in": 1, "flush_out": 2, "flush": 0}[n.op]
        return a[0] if (op.lw.mode >> DENORM_SHIFT[t]) & keep else _flush(op, t, a[0])
    if n.op in _FCMP:
        return b.op(f"fcmp {_FCMP[n.op]} {vt} {a[0]}, {a[1]}")
    if n.op in ("fmin", "fmax", "fmin_num", "fmax_num"):
        return _minmax(op, t, a[0], a[1], n.op.startswith("fmax"), n.op.endswith("_num"))
    if n.op in ("rcp", "rsq", "sqrt"):
        return _transcendental(op, t, n.op, a[0])
    if n.op == "isnan":
        return _isnan(op, t, a[0])
    if n.op == "neg":
        return b.op(f"fneg {vt} {a[0]}")
    if n.op == "cast":
        return _cast(op, n, a[0], vt)
    if n.op == "bitcast":
        return b.op(f"bitcast {vt} {a[0]} to {b.vec(elem(n.t))}")
    return _intrinsic(op, _INTRINSIC[n.op], t, a)  # fabs, trunc, ceil, floor, roundeven


def emit_definition(op, *sources: str):
    """The IR of op.spec's definition over the typed source vectors: the result, or (result, carry mask)."""
    roots = op.spec.definition.tree(op.clamp)
    if len(roots) > 1 and not op.carry_used:
        roots = roots[:1]
    out = emit_tree(op, roots, sources)
    if op.spec.carry_out:
        return out[0], (out[1] if len(out) > 1 else None)
    return out[0]


def emit_tree(op, roots, sources) -> list[str]:
    """The IR values of `roots` over `sources` (op.scalar: i32/i64/i1 values of one wave, else lane vectors)."""
    values: dict[int, str] = {}
    for n in nodes(roots):
        if n.op == "src":
            values[id(n)] = sources[n.value]
        elif n.op == "const":
            values[id(n)] = _const(op, n)
        else:
            values[id(n)] = _node(op, n, [values[id(x)] for x in n.args])
    return [values[id(r)] for r in roots]
