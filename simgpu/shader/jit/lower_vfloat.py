"""VALU float operations for the translator (the interpreter's vector.float_arith, minmax, cvt and
cmp_float), for f32 and f64 in round-to-nearest-even MODEs (other round modes: the interpreter).

The host's IEEE arithmetic rounds add/sub/mul exactly like the exact path, and its fused multiply-add
(llvm.fma, one rounding) is the exact fma; around it the translator applies what the interpreter
applies: MODE's denormal flushing of inputs and results, and NaN results picked by fpexact.first_nan
(the first NaN source operand quieted; a NaN made from numbers, inf - inf, is the host's default NaN in
both tiers, written as a constant: LLVM folds constant operands to its own default NaN, which need
not be the host's), so no payload depends on the order the host or LLVM evaluates operands in.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.jit.lower import Unsupported
from simgpu.shader.jit.lower_valu import Op, emits

_FMT = {"f32": ("float", "i32", 0x7F800000, 0x80000000, 0x00400000, 0, 4),
        "f64": ("double", "i64", 0x7FF0000000000000, 1 << 63, 1 << 51, 2, 6)}
IEEE_BIT = 9


def _host_nan(dt, it) -> int:
    """The NaN the host's arithmetic makes from numbers (inf - inf), as numpy (the interpreter) gets it."""
    inf = np.array([np.inf], dt)
    with np.errstate(invalid="ignore"):
        return int((inf - inf).view(it)[0])


HOST_NAN = {"f32": _host_nan(np.float32, np.uint32), "f64": _host_nan(np.float64, np.uint64)}


def _s(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


class F:
    """Helpers over <lanes x float/double> for one instruction: bit views, flushing, NaN rules."""

    def __init__(self, op: Op, t: str, rounds: bool = True):
        """`rounds`: the operation rounds per MODE (only nearest-even is translated)."""
        self.op, self.t, self.b = op, t, op.b
        self.elem, self.ielem, self.exp, self.sign, self.quiet, round_shift, denorm_shift = _FMT[t]
        self.bits = 32 if t == "f32" else 64
        mode = op.lw.mode
        if rounds and (mode >> round_shift) & 3:
            raise Unsupported("round mode other than nearest-even")
        self.denorm = (mode >> denorm_shift) & 3
        self.ieee = bool((mode >> IEEE_BIT) & 1)
        self.fv, self.iv = self.b.vec(self.elem), self.b.vec(self.ielem)

    def c(self, v: int) -> str:
        return self.b.splat(self.ielem, _s(v, self.bits))

    def ints(self, x: str) -> str:
        return self.b.op(f"bitcast {self.fv} {x} to {self.iv}")

    def floats(self, x: str) -> str:
        return self.b.op(f"bitcast {self.iv} {x} to {self.fv}")

    def _flush(self, x: str) -> str:
        b = self.b
        xi = self.ints(x)
        tiny = b.op(f"icmp eq {self.iv} {b.op(f'and {self.iv} {xi}, {self.c(self.exp)}')}, {self.c(0)}")
        signed_zero = b.op(f"and {self.iv} {xi}, {self.c(self.sign)}")
        return self.floats(b.op(f"select {b.vmask} {tiny}, {self.iv} {signed_zero}, {self.iv} {xi}"))

    def flush_in(self, x: str) -> str:
        return x if self.denorm & 1 else self._flush(x)

    def flush_out(self, x: str) -> str:
        return x if self.denorm & 2 else self._flush(x)

    def isnan(self, x: str) -> str:
        return self.b.op(f"fcmp uno {self.fv} {x}, {x}")

    def first_nan(self, r: str, *ops: str) -> str:
        """fpexact.first_nan: NaN lanes of r take the first NaN operand (quieted); NaN lanes without a NaN
        operand the host's default NaN. The fix-up runs only when some lane of r is NaN (a branch around it)."""
        b = self.b
        nan = self.isnan(r)
        anynan = b.call("i1", f"@llvm.vector.reduce.or.v{self.op.lw.lanes}i1", [(b.vmask, nan)],
                        f"declare i1 @llvm.vector.reduce.or.v{self.op.lw.lanes}i1({b.vmask})")
        head = b.fresh("nanhead")[1:]
        fix, done = b.fresh("nanfix")[1:], b.fresh("nandone")[1:]
        b.raw(f"br label %{head}")
        b.label(head)
        b.br_rare(anynan, fix, done)
        b.label(fix)
        out = self.c(HOST_NAN[self.t])
        for x in reversed(ops):
            q = b.op(f"or {self.iv} {self.ints(x)}, {self.c(self.quiet)}")
            out = b.op(f"select {b.vmask} {self.isnan(x)}, {self.iv} {q}, {self.iv} {out}")
        fixed = b.op(f"select {b.vmask} {nan}, {self.fv} {self.floats(out)}, {self.fv} {r}")
        b.raw(f"br label %{done}")
        b.label(done)
        return b.op(f"phi {self.fv} [{r}, %{head}], [{fixed}, %{fix}]")

    def neg(self, x: str) -> str:
        return self.b.op(f"fneg {self.fv} {x}")


def _arith(t: str, kind: str):
    """add/sub/subrev/mul: float_arith._binary (flushed inputs, IEEE arithmetic, first_nan, flushed result)."""
    def fn(op: Op, a, b):
        f = F(op, t)
        x, y = f.flush_in(a), f.flush_in(b)
        if kind == "subrev":
            x, y = y, x
        instr = {"add": "fadd", "sub": "fsub", "subrev": "fsub", "mul": "fmul"}[kind]
        r = op.b.op(f"{instr} {f.fv} {x}, {y}")
        r = f.first_nan(r, x, y)  # a subtraction does not negate a NaN operand (float_arith._sub)
        return f.flush_out(r)
    return fn


def _fma(t: str):
    """float_arith._fma: one rounding (llvm.fma); a NaN result is the first NaN of a, b, c (quieted)."""
    def fn(op: Op, a, b, c):
        f = F(op, t)
        x, y, z = f.flush_in(a), f.flush_in(b), f.flush_in(c)
        name = f"@llvm.fma.v{op.lw.lanes}{'f32' if t == 'f32' else 'f64'}"
        r = op.b.call(f.fv, name, [(f.fv, x), (f.fv, y), (f.fv, z)],
                      f"declare {f.fv} {name}({f.fv}, {f.fv}, {f.fv})")
        return f.flush_out(f.first_nan(r, x, y, z))
    return fn


for _t in ("f32", "f64"):
    emits(f"v_add_{_t}")(_arith(_t, "add"))
    emits(f"v_mul_{_t}")(_arith(_t, "mul"))
    emits(f"v_fma_{_t}")(_fma(_t))
emits("v_sub_f32")(_arith("f32", "sub"))
emits("v_subrev_f32")(_arith("f32", "subrev"))
emits("v_fmac_f32", "v_fmamk_f32", "v_fmaak_f32")(_fma("f32"))


# ---------------------------------------------------------------------------------------------- min/max


def _minmax(t: str, is_max: bool):
    """minmax.fmin/fmax on inputs flushed per the input denorm mode: -0 < +0; with MODE.IEEE a signaling
    NaN gives itself quieted and a quiet NaN the other operand; without IEEE any NaN the other one."""
    def pick(op: Op, a, b):
        f = F(op, t)
        bl = op.b
        m, fv, iv = bl.vmask, f.fv, f.iv
        a, b = f.flush_in(a), f.flush_in(b)
        x, y = (b, a) if is_max else (a, b)  # a wins when x < y
        less = bl.op(f"fcmp olt {fv} {x}, {y}")
        xi, yi = f.ints(x), f.ints(y)
        zeros = bl.op(f"and {m} {bl.op(f'fcmp oeq {fv} {x}, zeroinitializer')}, "
                      f"{bl.op(f'fcmp oeq {fv} {y}, zeroinitializer')}")
        xneg = bl.op(f"icmp slt {iv} {xi}, {f.c(0)}")
        ypos = bl.op(f"icmp sge {iv} {yi}, {f.c(0)}")
        signs = bl.op(f"and {m} {xneg}, {ypos}")
        less = bl.op(f"or {m} {less}, {bl.op(f'and {m} {zeros}, {signs}')}")
        r = bl.op(f"select {m} {less}, {fv} {a}, {fv} {b}")
        na, nb = f.isnan(a), f.isnan(b)
        r = bl.op(f"select {m} {na}, {fv} {b}, {fv} {r}")
        r = bl.op(f"select {m} {nb}, {fv} {a}, {fv} {r}")
        if f.ieee:
            def snan(v):
                quiet_clear = bl.op(f"icmp eq {iv} {bl.op(f'and {iv} {f.ints(v)}, {f.c(f.quiet)}')}, {f.c(0)}")
                return bl.op(f"and {m} {f.isnan(v)}, {quiet_clear}")

            def q(v):
                return f.floats(bl.op(f"or {iv} {f.ints(v)}, {f.c(f.quiet)}"))
            r = bl.op(f"select {m} {snan(b)}, {fv} {q(b)}, {fv} {r}")
            r = bl.op(f"select {m} {snan(a)}, {fv} {q(a)}, {fv} {r}")
        return r
    return pick


for _t in ("f32", "f64"):
    _mn, _mx = _minmax(_t, False), _minmax(_t, True)
    emits(f"v_min_{_t}")(_mn)
    emits(f"v_max_{_t}")(_mx)


# ---------------------------------------------------------------------------------------------- conversions


def _to_int(t: str, signed: bool):
    """cvt.to_int: truncate, saturate, NaN -> 0 (llvm.fpto[su]i.sat), inputs flushed first (no effect)."""
    def fn(op: Op, x):
        f = F.__new__(F)
        bl = op.b
        elem = "float" if t == "f32" else "double"
        src = bl.vec(elem)
        kind = "fptosi" if signed else "fptoui"
        name = f"@llvm.{kind}.sat.v{op.lw.lanes}i32.v{op.lw.lanes}{'f32' if t == 'f32' else 'f64'}"
        del f
        return bl.call(bl.v32, name, [(src, x)], f"declare {bl.v32} {name}({src})")
    return fn


def _from_int(t: str, signed: bool):
    def fn(op: Op, x):
        f = F(op, t)  # checks the round mode
        return op.b.op(f"{'sitofp' if signed else 'uitofp'} {op.b.v32} {x} to {f.fv}")
    return fn


emits("v_cvt_i32_f32")(_to_int("f32", True))
emits("v_cvt_u32_f32")(_to_int("f32", False))
emits("v_cvt_i32_f64")(_to_int("f64", True))
emits("v_cvt_u32_f64")(_to_int("f64", False))
emits("v_cvt_f32_i32")(_from_int("f32", True))
emits("v_cvt_f32_u32")(_from_int("f32", False))
emits("v_cvt_f64_i32")(_from_int("f64", True))
emits("v_cvt_f64_u32")(_from_int("f64", False))


def _ubyte(k: int):
    def fn(op: Op, x):
        b = op.b
        shift = b.splat("i32", 8 * k)
        byte = b.op(f"and {b.v32} {b.op(f'lshr {b.v32} {x}, {shift}')}, {b.splat('i32', 255)}")
        return b.op(f"uitofp {b.v32} {byte} to {b.vf32}")
    return fn


for _k in range(4):
    emits(f"v_cvt_f32_ubyte{_k}")(_ubyte(_k))


@emits("v_cvt_f32_f64")
def _cvt_f32_f64(op: Op, x):
    src = F(op, "f64")
    dst = F(op, "f32")
    return dst.flush_out(op.b.op(f"fptrunc {src.fv} {src.flush_in(x)} to {dst.fv}"))


@emits("v_cvt_f64_f32")
def _cvt_f64_f32(op: Op, x):
    src = F(op, "f32")
    dst = F(op, "f64")
    return dst.flush_out(op.b.op(f"fpext {src.fv} {src.flush_in(x)} to {dst.fv}"))


# ---------------------------------------------------------------------------------------------- rounding to integers


def _round(t: str, intrinsic: str):
    """cvt._round_op: round to an integral value in the same format (the LLVM intrinsic: -0 and infinities
    kept, a NaN's payload kept and a signaling one quieted, as numpy's trunc/ceil/floor/rint do) of the
    input flushed per the input denorm mode; the result cannot be a denormal."""
    def fn(op: Op, x):
        f = F(op, t, rounds=False)  # (MODE's round mode does not apply)
        name = f"@llvm.{intrinsic}.v{op.lw.lanes}{'f32' if t == 'f32' else 'f64'}"
        return op.b.call(f.fv, name, [(f.fv, f.flush_in(x))], f"declare {f.fv} {name}({f.fv})")
    return fn


for _t in ("f32", "f64"):
    for _name, _intrinsic in (("trunc", "trunc"), ("ceil", "ceil"), ("floor", "floor"), ("rndne", "roundeven")):
        emits(f"v_{_name}_{_t}")(_round(_t, _intrinsic))


# ---------------------------------------------------------------------------------------------- rcp, rsq, sqrt


def _trans(t: str, name: str):
    """trans._trans for rcp, rsq and sqrt: the result of float64 arithmetic rounded once to `t` (for f32
    1/x and sqrt(x) that is the host's own f32 division and square root: double rounding from 53 bits is
    innocuous for them; rsq is 1 / sqrt(x), both in f64, then rounded); f32 inputs and results always
    flushed, whatever MODE says; a NaN result as fpexact.first_nan gives it (LLVM folds constants to its own
    default NaN)."""
    def fn(op: Op, x):
        f = F(op, t, rounds=False)  # (nearest whatever MODE says)
        b = op.b
        if t == "f32":
            x = f._flush(x)
        wide = b.vec("double")
        sqrt64 = f"@llvm.sqrt.v{op.lw.lanes}f64"
        if name == "sqrt":
            nm = f"@llvm.sqrt.v{op.lw.lanes}{'f32' if t == 'f32' else 'f64'}"
            r = b.call(f.fv, nm, [(f.fv, x)], f"declare {f.fv} {nm}({f.fv})")
        elif name == "rcp":
            r = b.op(f"fdiv {f.fv} {b.splat(f.elem, '1.0')}, {x}")
        else:
            xd = b.op(f"fpext {f.fv} {x} to {wide}") if t == "f32" else x
            root = b.call(wide, sqrt64, [(wide, xd)], f"declare {wide} {sqrt64}({wide})")
            r = b.op(f"fdiv {wide} {b.splat('double', '1.0')}, {root}")
            if t == "f32":
                r = b.op(f"fptrunc {wide} {r} to {f.fv}")
        r = f.first_nan(r, x)
        return f._flush(r) if t == "f32" else r
    return fn


for _t in ("f32", "f64"):
    for _name in ("rcp", "rsq", "sqrt"):
        emits(f"v_{_name}_{_t}")(_trans(_t, _name))
emits("v_rcp_iflag_f32")(_trans("f32", "rcp"))


# ---------------------------------------------------------------------------------------------- compares

_FPRED = {"f": None, "lt": "olt", "eq": "oeq", "le": "ole", "gt": "ogt", "lg": "one", "ge": "oge", "o": "ord",
          "u": "uno", "nge": "ult", "nlg": "ueq", "ngt": "ule", "nle": "ugt", "neq": "une", "nlt": "uge", "t": None}


def _fcmp(t: str, cond: str):
    def fn(op: Op, a, b):
        bl = op.b
        if _FPRED[cond] is None:
            return bl.splat("i1", "true" if cond == "t" else "false")
        return bl.op(f"fcmp {_FPRED[cond]} {bl.vec('float' if t == 'f32' else 'double')} {a}, {b}")
    return fn


for _t in ("f32", "f64"):
    for _cond in _FPRED:
        emits(f"v_cmp_{_cond}_{_t}", f"v_cmpx_{_cond}_{_t}")(_fcmp(_t, _cond))


def _class(t: str):
    """cmp_float._class: bit fclass(x) of the mask operand, x as given (no flushing). Classes: 0 signaling
    NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf."""
    def fn(op: Op, x, mask):
        f = F(op, t, rounds=False)
        b, iv, m = op.b, f.iv, op.b.vmask
        xi = f.ints(x)
        neg = b.op(f"icmp slt {iv} {xi}, {f.c(0)}")
        mag = b.op(f"and {iv} {xi}, {f.c(f.sign - 1 if t == 'f32' else (1 << 63) - 1)}")
        nan = b.op(f"icmp ugt {iv} {mag}, {f.c(f.exp)}")
        quiet = b.op(f"icmp ne {iv} {b.op(f'and {iv} {xi}, {f.c(f.quiet)}')}, {f.c(0)}")
        loud = b.op(f"xor {m} {quiet}, {b.splat('i1', 'true')}")
        snan = b.op(f"and {m} {nan}, {loud}")
        inf = b.op(f"icmp eq {iv} {mag}, {f.c(f.exp)}")
        zero = b.op(f"icmp eq {iv} {mag}, {f.c(0)}")
        tiny = b.op(f"icmp ult {iv} {mag}, {f.c(f.exp & -f.exp)}")  # below the smallest normal (or zero)

        def by_sign(minus: int, plus: int) -> str:
            return b.op(f"select {m} {neg}, {b.v32} {b.splat('i32', minus)}, {b.v32} {b.splat('i32', plus)}")
        cls = by_sign(3, 8)
        for cond, minus, plus in ((tiny, 4, 7), (zero, 5, 6), (inf, 2, 9)):
            cls = b.op(f"select {m} {cond}, {b.v32} {by_sign(minus, plus)}, {b.v32} {cls}")
        cls = b.op(f"select {m} {nan}, {b.v32} {b.splat('i32', 1)}, {b.v32} {cls}")
        cls = b.op(f"select {m} {snan}, {b.v32} {b.splat('i32', 0)}, {b.v32} {cls}")
        bit = b.op(f"and {b.v32} {b.op(f'lshr {b.v32} {mask}, {cls}')}, {b.splat('i32', 1)}")
        return b.op(f"icmp ne {b.v32} {bit}, {b.splat('i32', 0)}")
    return fn


for _t in ("f32", "f64"):
    emits(f"v_cmp_class_{_t}", f"v_cmpx_class_{_t}")(_class(_t))
