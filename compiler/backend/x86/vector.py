"""SSE packed code across work-items: four consecutive work-items of local x in one XMM register each.

unicorn's CPU model has no AVX (docs/compiler.md, "The CPU device"), so the vector width is SSE's: four float32
or int32 lanes. A kernel vectorizes when every value that depends on local x is one of

- an *address*: an int32/int64 sum of local x, constants and values that do not depend on it (scaled by
  constants): element index = first + c * (work-item - first work-item). It is computed once, as a scalar, for
  the first of the four work-items: with c = 1 the access is `movups` of the four consecutive elements; with any
  other c (a transposed or flipped view, |c| <= MAX_STRIDE) four `movss` at displacements 4c bytes apart,
  packed into one register with `unpcklps` (a gather) or spread from it with `pshufd` (a scatter, lane 0
  first). An int32 address that is also read as a value becomes four lanes: first + c * (0, 1, 2, 3);
- a *vector*: a float32, int32/uint32 or bool value of an op with a packed SSE form (float + - * / sqrt trunc
  neg max min, int32 + - * & | ^ ~ neg max min and shifts by a constant, comparisons, where, float32 <-> int32
  and uint32 -> float32 conversions, bitcasts between them, bool -> float32/int32), held four lanes to a
  register; a bool is a lane mask (all ones or zero);

ungated LOADs and STOREs of 4-byte elements, no barriers, LDS or loops (RANGE), and a workgroup whose local x
extent is a multiple of 4. Everything else keeps its scalar rules: values that do not depend on local x are
computed once per four work-items and broadcast (`pshufd`) where a vector op reads them. The grid walk then steps
local x by 4. A kernel that does not qualify runs one work-item at a time, as before; `SIMGPU_X86_VECTOR=0`
turns vectorization off (the bench measures both).

Not vectorized, on purpose: float32 MULACC (the transcendental polynomials are made of it). Its exact
emulation needs float64 arithmetic, two lanes per register, and a round-to-odd fix per lane pair: about 75
instructions per four work-items against 44 for four scalar ones, and unicorn runs packed float64 helpers at
half its scalar rate. Built and measured (bench_cpu's exp(x)*sin(x), bit-identical to the scalar code), it ran
2.6x slower than the scalar kernel, so kernels with a float MULACC stay scalar. Kernels with loops (RANGE),
barriers or LDS stay scalar too: the scheduler's reductions either give each work-item a whole row (consecutive
work-items read a row length apart: `sum(1)`) or split the reduced axis over the workgroup with LDS and barriers
(`sum(0)`, matmul: fibers), so their loads are not consecutive across local x.

The module holds both halves of packed code: its selection rules (VRULES, used by VectorSelector for the plan's
uops) and the expansions of its machine-IR instructions after register allocation (registered with
compiler.backend.x86.expand, with the same scratch registers).

The results are the scalar code's, bit for bit: every lane does the same IEEE operation (packed SSE rounds as
scalar SSE does, MXCSR is shared), NaN-propagating max/min are built the same way, and a kernel's work-items
write disjoint elements (a race between work-items is the program's, on any device).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import simgpu.settings as settings
from compiler.backend.isel import SelectionRules
from compiler.backend.mir import MInst, Sub
from compiler.backend.x86.expand import SCRATCH_X, SCRATCH_X2, I, address, expands, g, same, x
from compiler.backend.x86.expand import imm as imm_of
from compiler.backend.x86.isa import RAX, Imm, Mem, gpr, xmm
from compiler.backend.x86.memory import address_of
from compiler.backend.x86.select import RULES, C, X86Selector, const_bits, imm
from compiler.dtypes import DType, dtypes
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import Ops, UOp

WIDTH = 4
MAX_STRIDE = 1 << 20  # elements between work-items of a gathered access (three of them fit a displacement)
VRULES = SelectionRules()
_LANE_TYPES = ("float32", "int32", "uint32", "bool")
_INT_LINEAR = (Ops.ADD, Ops.SUB, Ops.MUL)
_FLOAT_OPS = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.SQRT, Ops.TRUNC, Ops.NEG, Ops.MAX, Ops.MIN}
_INT_OPS = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.AND, Ops.OR, Ops.XOR, Ops.NEG, Ops.NOT, Ops.MAX, Ops.MIN}
_CMP = {Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE}


def enabled() -> bool:
    """Whether the x86 backend vectorizes (SIMGPU_X86_VECTOR, default on)."""
    return settings.get("SIMGPU_X86_VECTOR")


def _lane_dtype(dt) -> bool:
    return isinstance(dt, DType) and dt.name in _LANE_TYPES


def _coefficients(k: LinearKernel, lane: UOp) -> tuple[set[UOp], dict[UOp, int]]:
    """(uops that depend on local x, {the linear ones among them: their coefficient of local x})."""
    varying: set[UOp] = {lane}
    coef: dict[UOp, int] = {lane: 1}
    for u in k.uops:
        if u is lane or u.op is Ops.SINK or not any(s in varying for s in u.src):
            continue
        varying.add(u)
        if u.op not in _INT_LINEAR or u.dtype.is_float or u.dtype.name not in ("int32", "int64") or \
                any(s in varying and s not in coef for s in u.src):
            continue
        a, b = (coef.get(s, 0) for s in u.src)
        if u.op is Ops.ADD:
            coef[u] = a + b
        elif u.op is Ops.SUB:
            coef[u] = a - b
        elif u.src[0].op is Ops.CONST or u.src[1].op is Ops.CONST:  # a product with a constant
            const = u.src[0] if u.src[0].op is Ops.CONST else u.src[1]
            coef[u] = (a + b) * int(const.arg)
    return varying, coef


def _vector_ok(u: UOp, vec: set[UOp]) -> bool:
    """Whether u (a value depending on local x, not an address) has a packed form (module docstring)."""
    dt = u.dtype
    srcs = [s.dtype for s in u.src]
    if u.op in (Ops.LOAD, Ops.STORE):
        return False  # decided with the addresses
    if not _lane_dtype(dt) or not all(_lane_dtype(s) for s in srcs):
        return False
    if u.op is Ops.WHERE:
        return u.src[0] in vec  # a uniform condition would need a mask made from a 0/1 register
    if u.op in _CMP:  # SSE compares integers signed only; a bool is a mask (True is -1), so no bool CMPLT either
        return u.op is not Ops.CMPLT or srcs[0].name not in ("uint32", "bool")
    if u.op in (Ops.CAST, Ops.BITCAST):
        pair = (srcs[0].name, dt.name)
        if u.op is Ops.BITCAST:
            return pair[0] != "bool" and pair[1] != "bool"
        return pair in (("int32", "float32"), ("uint32", "float32"), ("float32", "int32"), ("bool", "float32"),
                        ("bool", "int32"), ("bool", "uint32"), ("int32", "uint32"), ("uint32", "int32"))
    if dt.name == "float32":
        return u.op in _FLOAT_OPS
    if dt.name == "bool":
        return u.op in (Ops.AND, Ops.OR, Ops.XOR, Ops.NOT)
    if u.op in (Ops.SHL, Ops.SHR):
        c = u.src[1]
        return u.src[0] in vec and c.op is Ops.CONST and 0 <= int(c.arg) < 32
    return u.op in _INT_OPS


@dataclass(frozen=True)
class Plan:
    """How a kernel vectorizes: `vec` the uops holding four lanes, `coef` the addresses with their coefficient
    of local x; both empty, and `why` saying why, when it runs one work-item at a time."""

    vec: frozenset[UOp] = frozenset()
    coef: dict[UOp, int] = field(default_factory=dict)
    why: str = ""

    def __bool__(self) -> bool:
        return bool(self.vec)


def plan(k: LinearKernel) -> Plan:
    """The module docstring's analysis of one kernel."""
    if not enabled():
        return Plan(why="SIMGPU_X86_VECTOR=0")
    if k.geometry.block[0] % WIDTH:
        return Plan(why=f"local x extent {k.geometry.block[0]} is not a multiple of {WIDTH}")
    if any(u.op in (Ops.BARRIER, Ops.LDS, Ops.RANGE) for u in k.uops):
        return Plan(why="barriers, LDS or loops")
    lanes = [u for u in k.uops if u.op is Ops.SPECIAL and u.arg[:2] == ("local", 0)]
    if len(lanes) != 1:
        return Plan(why="no local x id")
    varying, coef = _coefficients(k, lanes[0])
    vec = varying - set(coef)
    users: dict[UOp, list[tuple[UOp, int]]] = {}
    for u in k.uops:
        for i, s in enumerate(u.src):
            users.setdefault(s, []).append((u, i))
    for a in coef:  # an address feeds addresses, and memory (consecutive elements, or a stride gathered)
        for user, i in users.get(a, ()):
            if user in coef:
                continue
            if user.op in (Ops.LOAD, Ops.STORE) and i == 1:
                if abs(coef[a]) > MAX_STRIDE:
                    return Plan(why=f"{user.op.name} steps {coef[a]} elements per work-item")
            elif a.dtype.name != "int32":  # an int32 value as four lanes: first + coef * (0, 1, 2, 3)
                return Plan(why=f"{user.op.name} reads a {a.dtype.name} index of local x")
    for u in vec:
        if u.op is Ops.LOAD:
            ok = len(u.src) == 2 and u.src[1] in coef and u.dtype.itemsize == 4 and _lane_dtype(u.dtype)
        elif u.op is Ops.STORE:
            v = u.src[2]
            ok = len(u.src) == 3 and u.src[1] in coef and v.dtype.itemsize == 4 and _lane_dtype(v.dtype) and \
                (v in vec or v.op is Ops.CONST or v.dtype != dtypes.bool)
        else:
            ok = _vector_ok(u, vec) and all(s in vec or s.op is Ops.CONST or s.dtype != dtypes.bool for s in u.src)
        if not ok:
            srcs = ", ".join(getattr(s.dtype, "name", "?") for s in u.src)
            return Plan(why=f"no packed form of {u.op.name} {getattr(u.dtype, 'name', '?')} ({srcs})")
    return Plan(frozenset(vec), coef)


class _Dispatch:
    """The vector rules for the plan's uops, the scalar ones for the rest."""

    def select(self, sel: VectorSelector, u: UOp) -> str:
        return (VRULES if u in sel.vec else RULES).select(sel, u)


class VectorSelector(X86Selector):
    """The x86 selector of a kernel that vectorizes (module docstring): `vec` the uops holding four lanes."""

    rules = _Dispatch()

    def __init__(self, kernel: LinearKernel, p: Plan):
        super().__init__(kernel, fibers=False)
        self.vec, self.coef = p.vec, p.coef
        self.broadcast: dict[UOp, Sub] = {}

    def step(self, r: Sub) -> int:
        """Local x advances four work-items per pass."""
        return WIDTH if r is self.ids.get(("local", 0)) else 1


# ---- operands ----------------------------------------------------------------------------------------------------
def vsrc(s: X86Selector, u: UOp) -> Sub:
    """u's value as four lanes: its own vector, or a uniform value broadcast (once per uop)."""
    if u in s.vec:
        return s.val[u]
    if u in s.broadcast:
        return s.broadcast[u]
    v = s.src(u)
    if u in s.coef:  # an index of local x: first work-item's, plus coef * (0, 1, 2, 3)
        r, b = s.x(), s.x()
        s.op("vbcast.g", b, v)
        s.op("pk.paddd", r, b, lane_steps(s, s.coef[u]))
    elif isinstance(v, C):
        r = vconst(s, v.value, u.dtype)
    elif u.dtype == dtypes.bool:
        raise AssertionError(f"{s.name()}: a uniform bool is never a vector operand (vector.plan)")
    else:
        r = s.x()
        if u.dtype.is_float:
            s.op("vbcast", r, v)
        else:
            s.op("vbcast.g", r, v)
    s.broadcast[u] = r
    return r


def vconst(s: X86Selector, value, dt: DType) -> Sub:
    """A constant in every lane (a mask for bools), made once before the grid loops."""
    bits = 0xFFFFFFFF if dt == dtypes.bool and value else const_bits(value, dt) & 0xFFFFFFFF
    key = (bits, "v", False)
    if key not in s.const_regs:
        r = s.x()
        s.hoisted.append(MInst("vli", [r, imm(bits)], 1))
        s.const_regs[key] = r
    return s.const_regs[key]


def lane_steps(s: X86Selector, step: int) -> Sub:
    """(0, step, 2 step, 3 step) as int32 lanes, made once before the grid loops."""
    key = (step & 0xFFFFFFFF, "lanes", False)
    if key not in s.const_regs:
        r = s.x()
        s.hoisted.append(MInst("vlanes", [r, imm(step & 0xFFFFFFFF)], 1))
        s.const_regs[key] = r
    return s.const_regs[key]


def vdst(s: X86Selector, u: UOp) -> Sub:
    """A fresh XMM register for u's vector."""
    r = s.x()
    s.val[u] = r
    return r


# ---- rules -------------------------------------------------------------------------------------------------------
@VRULES.rule(Ops.LOAD)
def _load(s: X86Selector, u: UOp) -> None:
    mods, ops = address_of(s, s.src(u.src[0]), u.src[1], 4)
    step = s.coef[u.src[1]]
    if step == 1:
        s.op("vld", vdst(s, u), *ops, mods=mods)
    else:
        s.op("vgather", vdst(s, u), *ops, imm(4 * step), mods=mods)


@VRULES.rule(Ops.STORE)
def _store(s: X86Selector, u: UOp) -> None:
    v = vsrc(s, u.src[2])
    mods, ops = address_of(s, s.src(u.src[0]), u.src[1], 4)
    step = s.coef[u.src[1]]
    if step == 1:
        s.op("vst", *ops, v, ndef=0, mods=mods)
    else:
        s.op("vscatter", *ops, v, imm(4 * step), ndef=0, mods=mods)


_PS = {Ops.ADD: "addps", Ops.SUB: "subps", Ops.MUL: "mulps", Ops.FDIV: "divps"}
_PD = {Ops.ADD: "paddd", Ops.SUB: "psubd", Ops.MUL: "pmulld", Ops.AND: "andps", Ops.OR: "orps", Ops.XOR: "xorps"}


@VRULES.rule(*_PS, when=lambda s, u: u.dtype == dtypes.float32, name="v_float_binary")
def _float_binary(s: X86Selector, u: UOp) -> None:
    s.op(f"pk.{_PS[u.op]}", vdst(s, u), vsrc(s, u.src[0]), vsrc(s, u.src[1]))


@VRULES.rule(Ops.SQRT, Ops.TRUNC, Ops.NEG, name="v_float_unary", when=lambda s, u: u.dtype == dtypes.float32)
def _float_unary(s: X86Selector, u: UOp) -> None:
    a = vsrc(s, u.src[0])
    if u.op is Ops.NEG:
        s.op("pk.xorps", vdst(s, u), a, vconst(s, -0.0, dtypes.float32))
    else:
        s.op("pk1.sqrtps" if u.op is Ops.SQRT else "pk1.roundps", vdst(s, u), a)


@VRULES.rule(Ops.MAX, Ops.MIN, name="v_float_minmax", when=lambda s, u: u.dtype == dtypes.float32)
def _float_minmax(s: X86Selector, u: UOp) -> None:
    """maxps/minps give the second operand where either is NaN; lanes where the first is NaN take it instead
    (NaN-propagating, as the scalar rule)."""
    a, b = vsrc(s, u.src[0]), vsrc(s, u.src[1])
    t, nan = s.x(), s.x()
    s.op(f"pk.{'maxps' if u.op is Ops.MAX else 'minps'}", t, a, b)
    s.op("pk.cmpunordps", nan, a, a)
    s.op("vsel", vdst(s, u), nan, a, t)


@VRULES.rule(*_PD, name="v_int_binary", when=lambda s, u: not u.dtype.is_float)
def _int_binary(s: X86Selector, u: UOp) -> None:
    s.op(f"pk.{_PD[u.op]}", vdst(s, u), vsrc(s, u.src[0]), vsrc(s, u.src[1]))


@VRULES.rule(Ops.MAX, Ops.MIN, name="v_int_minmax", when=lambda s, u: not u.dtype.is_float)
def _int_minmax(s: X86Selector, u: UOp) -> None:
    op = ("pmax" if u.op is Ops.MAX else "pmin") + ("sd" if u.dtype.name == "int32" else "ud")
    s.op(f"pk.{op}", vdst(s, u), vsrc(s, u.src[0]), vsrc(s, u.src[1]))


@VRULES.rule(Ops.NOT, Ops.NEG, name="v_int_unary", when=lambda s, u: not u.dtype.is_float)
def _int_unary(s: X86Selector, u: UOp) -> None:
    a = vsrc(s, u.src[0])
    if u.op is Ops.NOT:
        s.op("pk.xorps", vdst(s, u), a, vconst(s, True, dtypes.bool))  # all ones: a bool mask or ~x
    else:
        s.op("pk.psubd", vdst(s, u), vconst(s, 0, dtypes.int32), a)


@VRULES.rule(Ops.SHL, Ops.SHR, name="v_int_shift")
def _int_shift(s: X86Selector, u: UOp) -> None:
    name = "pslld" if u.op is Ops.SHL else "psrad" if u.dtype.name == "int32" else "psrld"
    s.op(f"pki.{name}", vdst(s, u), vsrc(s, u.src[0]), imm(int(u.src[1].arg)))


@VRULES.rule(*_CMP, name="v_cmp")
def _cmp(s: X86Selector, u: UOp) -> None:
    a, b = vsrc(s, u.src[0]), vsrc(s, u.src[1])
    d = vdst(s, u)
    if u.src[0].dtype.is_float:
        s.op(f"pk.cmp{ {Ops.CMPLT: 'lt', Ops.CMPEQ: 'eq', Ops.CMPNE: 'neq'}[u.op]}ps", d, a, b)
    elif u.op is Ops.CMPLT:
        s.op("pk.pcmpgtd", d, b, a)  # a < b as b > a (signed)
    elif u.op is Ops.CMPEQ:
        s.op("pk.pcmpeqd", d, a, b)
    else:
        t = s.x()
        s.op("pk.pcmpeqd", t, a, b)
        s.op("pk.xorps", d, t, vconst(s, True, dtypes.bool))


@VRULES.rule(Ops.WHERE, name="v_where")
def _where(s: X86Selector, u: UOp) -> None:
    s.op("vsel", vdst(s, u), vsrc(s, u.src[0]), vsrc(s, u.src[1]), vsrc(s, u.src[2]))


@VRULES.rule(Ops.CAST, Ops.BITCAST, name="v_convert")
def _convert(s: X86Selector, u: UOp) -> None:
    src, dt = u.src[0].dtype, u.dtype
    a = vsrc(s, u.src[0])
    if u.op is Ops.BITCAST or (src.name != "bool" and not src.is_float and not dt.is_float):
        s.set(u, a)  # the same bits (int32 <-> uint32 wraps, as the scalar rule does)
    elif src.name == "bool":
        s.op("pk.andps", vdst(s, u), a, vconst(s, 1.0 if dt.is_float else 1, dt))
    elif src.name == "uint32":  # no unsigned conversion in SSE: hi16 * 65536 + lo16, both exact, rounded once
        hi, fhi, scaled, lo, flo = (s.x() for _ in range(5))
        s.op("pki.psrld", hi, a, imm(16))
        s.op("pk1.cvtdq2ps", fhi, hi)
        s.op("pk.mulps", scaled, fhi, vconst(s, 65536.0, dtypes.float32))
        s.op("pk.andps", lo, a, vconst(s, 0xFFFF, dtypes.int32))
        s.op("pk1.cvtdq2ps", flo, lo)
        s.op("pk.addps", vdst(s, u), scaled, flo)
    else:
        s.op("pk1.cvtdq2ps" if dt.is_float else "pk1.cvttps2dq", vdst(s, u), a)


# ---- expansion after register allocation (compiler.backend.x86.expand) --------------------------------------
_PCOMMUTATIVE = {"addps", "mulps", "andps", "orps", "xorps", "paddd", "pmulld", "pcmpeqd", "cmpeqps", "cmpneqps",
                 "cmpunordps", "pmaxsd", "pmaxud", "pminsd", "pminud"}


@expands("vld")
def _vload(m, ctx):
    mem, _ = address(m, 1)
    return [I("movups", x(m.ops[0]), Mem(16, mem.base, mem.index, mem.scale, mem.disp))]


@expands("vst")
def _vstore(m, ctx):
    mem, k = address(m, 0)
    return [I("movups", Mem(16, mem.base, mem.index, mem.scale, mem.disp), x(m.ops[k]))]


def _lane(mem: Mem, k: int, stride: int) -> Mem:
    return Mem(4, mem.base, mem.index, mem.scale, mem.disp + k * stride)


@expands("vgather")
def _vgather(m, ctx):
    """Four float32/int32 elements `stride` bytes apart into the lanes of d (movss zeroes the upper lanes)."""
    mem, k = address(m, 1)
    stride = imm_of(m.ops[k])
    d, s1, s2 = x(m.ops[0]), xmm(SCRATCH_X), xmm(SCRATCH_X2)
    return [I("movss", d, _lane(mem, 0, stride)), I("movss", s1, _lane(mem, 1, stride)), I("unpcklps", d, s1),
            I("movss", s1, _lane(mem, 2, stride)), I("movss", s2, _lane(mem, 3, stride)), I("unpcklps", s1, s2),
            I("unpcklpd", d, s1)]


@expands("vscatter")
def _vscatter(m, ctx):
    """The four lanes of v to elements `stride` bytes apart, lane 0 first (as the scalar code's order)."""
    mem, k = address(m, 0)
    v, stride = x(m.ops[k]), imm_of(m.ops[k + 1])
    s1 = xmm(SCRATCH_X)
    out = [I("movss", _lane(mem, 0, stride), v)]
    for lane in (1, 2, 3):
        out += [I("pshufd", s1, v, Imm(0x55 * lane)), I("movss", _lane(mem, lane, stride), s1)]
    return out


@expands("vli")
def _vli(m, ctx):
    """A 32-bit pattern in all four lanes."""
    d, v = x(m.ops[0]), imm_of(m.ops[1]) & 0xFFFFFFFF
    if v == 0:
        return [I("xorps", d, d)]
    if v == 0xFFFFFFFF:
        return [I("pcmpeqd", d, d)]
    return [I("mov", gpr(RAX, 4), Imm(v)), I("movd", d, gpr(RAX, 4)), I("pshufd", d, d, Imm(0))]


@expands("vlanes")
def _vlanes(m, ctx):
    """(0, c, 2c, 3c) as int32 lanes: c in every lane, then the sum of it shifted up by one, two and three
    lanes."""
    d, c = x(m.ops[0]), imm_of(m.ops[1]) & 0xFFFFFFFF
    s = xmm(SCRATCH_X)
    return [I("mov", gpr(RAX, 4), Imm(c)), I("movd", s, gpr(RAX, 4)), I("pshufd", s, s, Imm(0)),
            I("pslldq", s, Imm(4)), I("movaps", d, s), I("pslldq", s, Imm(4)), I("paddd", d, s),
            I("pslldq", s, Imm(4)), I("paddd", d, s)]


@expands("vbcast")
def _vbcast(m, ctx):
    """A float32 scalar (lane 0) into all four lanes."""
    d, a = m.ops
    return [I("pshufd", x(d), x(a), Imm(0))]


@expands("vbcast.g")
def _vbcast_g(m, ctx):
    """A 32-bit integer of a GPR into all four lanes."""
    d, a = m.ops
    return [I("movd", x(d), g(a, 4)), I("pshufd", x(d), x(d), Imm(0))]


@expands("pk.")
def _packed(m, ctx):
    """pk.OP d, a, b: the packed two-operand instruction OP, made three-address (as f.OP.ss)."""
    op = m.op[3:]
    d, a, b = m.ops
    if same(d, a):
        return [I(op, x(d), x(b))]
    if same(d, b):
        if op in _PCOMMUTATIVE:
            return [I(op, x(d), x(a))]
        return [I("movaps", xmm(SCRATCH_X), x(b)), I("movaps", x(d), x(a)), I(op, x(d), xmm(SCRATCH_X))]
    return [I("movaps", x(d), x(a)), I(op, x(d), x(b))]


@expands("pk1.")
def _packed_unary(m, ctx):
    """pk1.OP d, a: sqrtps, cvtdq2ps, cvttps2dq (truncating, as cvttss2si), roundps toward zero."""
    op = m.op[4:]
    d, a = m.ops
    return [I(op, x(d), x(a), Imm(0xB))] if op == "roundps" else [I(op, x(d), x(a))]


@expands("pki.")
def _packed_shift(m, ctx):
    """pki.OP d, a, n: a shift of every lane by a constant."""
    d, a, n = m.ops
    return [*([] if same(d, a) else [I("movaps", x(d), x(a))]), I(m.op[4:], x(d), Imm(imm_of(n)))]


@expands("vsel")
def _vsel(m, ctx):
    """d <- t where the lane mask c is set, else f: (c & t) | (~c & f)."""
    d, c, t, f = m.ops
    s1, s2 = xmm(SCRATCH_X), xmm(SCRATCH_X2)
    return [I("movaps", s1, x(c)), I("andps", s1, x(t)), I("movaps", s2, x(c)), I("andnps", s2, x(f)),
            I("orps", s1, s2), I("movaps", x(d), s1)]
