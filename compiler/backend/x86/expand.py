"""After register allocation: every machine-IR instruction of the x86 selector (three-address, virtual registers
now carrying physical numbers) becomes real x86-64 instructions (compiler.backend.x86.isa).

The selector's instructions are three-address (`add32 d, a, b`) so the allocator needs no tied operands; here
they become two-address code with whatever copy the assignment leaves necessary (none when d is a; the
commuted form when d is b; through a scratch register otherwise). Operations with fixed registers or internal
control flow are expanded here too, with the reserved scratch registers rax, rcx, rdx and xmm15 (never
allocated): division (rax:rdx), variable shifts (cl), NaN-propagating min/max, gated loads and stores (a
branch around the access), conversions with several cases (float16, unsigned 64-bit, round to odd). Every
expansion reads all its sources before it writes its destination unless it says otherwise, so a destination
may share a register with any source. The packed instructions' expansions live with their selection in
compiler.backend.x86.vector and register here.

Semantics the IR asks for (docs/compiler.md, "The backend interface"), and how they are kept:
- integer x // 0 and x % 0 are 0, INT_MIN // -1 wraps: a zero divisor and -1 are tested before idiv;
- shifts by >= the width give 0 (logical) or the sign (arithmetic): the amount is tested (unsigned) first;
- float min/max propagate NaN: SSE's minss/maxss return the second operand when either is NaN, so a NaN first
  operand is tested for;
- float compares: cmpXXss predicates (lt/eq ordered, neq unordered).
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.backend.mir import Imm as MImm
from compiler.backend.mir import MInst, Sub
from compiler.backend.x86.isa import NEGATE, RAX, RCX, RDX, Imm, Inst, Label, Mem, Reg, gpr, xmm

SCRATCH_X = 15
SCRATCH_X2 = 14
Out = list  # of Inst and label names (str)


class Ctx:
    """What expansions need besides the instruction: fresh local labels, the frame layout."""

    def __init__(self, gslots: int):
        self.n = 0
        self.gslots = gslots

    def label(self, stem: str) -> str:
        self.n += 1
        return f".L{stem}{self.n}"


def g(o, size: int = 8) -> Reg:
    """The general-purpose register of an allocated operand, at a width."""
    return gpr(o.reg.phys + o.off, size)


def x(o) -> Reg:
    """The XMM register of an allocated operand."""
    return xmm(o.reg.phys + o.off)


def I(op: str, *ops) -> Inst:  # noqa: E743 - the instruction constructor, short on purpose
    return Inst(op, tuple(ops))


def imm(o) -> int:
    return int(o.value)


def src_g(o, size: int):
    """A GPR source: register or immediate."""
    return Imm(imm(o)) if isinstance(o, MImm) else g(o, size)


def same(a, b) -> bool:
    """Whether two allocated operands are the same physical register (immediates never are)."""
    return isinstance(a, Sub) and isinstance(b, Sub) and a.rc == b.rc and a.reg.phys + a.off == b.reg.phys + b.off


EXPAND: dict[str, Callable[[MInst, Ctx], Out]] = {}


def expands(*names: str):
    def deco(fn):
        for n in names:
            EXPAND[n] = fn
        return fn
    return deco


def expand(code: list[MInst], ctx: Ctx) -> Out:
    """The real instructions and labels of allocated machine IR."""
    out: Out = []
    for m in code:
        if m.is_label():
            out.append(m.target)
            continue
        key = m.op if m.op in EXPAND else m.op.split(".")[0] + "."
        fn = EXPAND.get(key)
        if fn is None:
            raise AssertionError(f"no expansion for {m.op}")
        out += fn(m, ctx)
    return out


# ---- moves and constants ----------------------------------------------------------------------------------------
@expands("mov")
def _mov(m, ctx):
    d, s = m.ops
    return [] if same(d, s) else [I("mov", g(d), g(s))]


@expands("li")
def _li(m, ctx):
    d, v = m.ops
    v = imm(v) & ((1 << 64) - 1)
    if v == 0:
        return [I("xor", g(d, 4), g(d, 4))]
    if v < 1 << 32:
        return [I("mov", g(d, 4), Imm(v))]  # zero-extends
    if v >= (1 << 64) - (1 << 31):
        return [I("mov", g(d), Imm(v - (1 << 64)))]  # sign-extends
    return [I("movabs", g(d), Imm(v))]


@expands("fmov")
def _fmov(m, ctx):
    d, s = m.ops
    return [] if same(d, s) else [I("movaps", x(d), x(s))]


def _const_x(reg: Reg, bits: int, wide: bool) -> Out:
    if bits == 0:
        return [I("xorps", reg, reg)]
    if wide:
        return [I("movabs", gpr(RAX), Imm(bits)), I("movq", reg, gpr(RAX))]
    return [I("mov", gpr(RAX, 4), Imm(bits)), I("movd", reg, gpr(RAX, 4))]


@expands("fli32", "fli64")
def _fli(m, ctx):
    d, v = m.ops
    return _const_x(x(d), imm(v), m.op == "fli64")


@expands("movd.gx", "movq.gx", "movd.xg", "movq.xg")
def _movd(m, ctx):
    d, s = m.ops
    size = 4 if m.op.startswith("movd") else 8
    name = "movd" if size == 4 else "movq"
    if m.op.endswith("gx"):
        return [I(name, x(d), g(s, size))]
    return [I(name, g(d, size), x(s))]


# ---- integer ALU -------------------------------------------------------------------------------------------------
_COMMUTATIVE = {"add", "and", "or", "xor", "imul"}


def _width(op: str) -> int:
    return 8 if op.endswith("64") else 4


@expands(*(f"{o}{w}" for o in ("add", "sub", "and", "or", "xor", "imul") for w in (32, 64)))
def _alu(m, ctx):
    name, sz = m.op[:-2], _width(m.op)
    d, a, b = m.ops
    D = g(d, sz)
    if isinstance(b, MImm) and name == "imul":
        return [I("imul", D, g(a, sz), Imm(imm(b)))]
    if same(d, a):
        return [I(name, D, src_g(b, sz))]
    if same(d, b):
        if name in _COMMUTATIVE:
            return [I(name, D, g(a, sz))]
        return [I("mov", gpr(RAX, sz), g(b, sz)), I("mov", D, g(a, sz)), I(name, D, gpr(RAX, sz))]
    return [I("mov", g(d), g(a)), I(name, D, src_g(b, sz))]


@expands("neg32", "neg64", "not32", "not64")
def _unary(m, ctx):
    d, a = m.ops
    sz = _width(m.op)
    return ([] if same(d, a) else [I("mov", g(d), g(a))]) + [I(m.op[:3], g(d, sz))]


@expands("movsx8", "movzx8", "movsx16", "movzx16")
def _ext(m, ctx):
    d, a = m.ops
    return [I(m.op[:5], g(d, 4), g(a, int(m.op[5:]) // 8))]


@expands("movsxd")
def _movsxd(m, ctx):
    d, a = m.ops
    return [I("movsxd", g(d), g(a, 4))]


@expands("zext32")
def _zext(m, ctx):
    d, a = m.ops
    return [I("mov", g(d, 4), g(a, 4))]


@expands(*(f"{o}{w}" for o in ("shl", "shr", "sar") for w in (32, 64)))
def _shift(m, ctx):
    name, sz = m.op[:3], _width(m.op)
    d, a, b = m.ops
    D = g(d, sz)
    if isinstance(b, MImm):
        n = imm(b)
        assert 0 <= n < 8 * sz
        return ([] if same(d, a) else [I("mov", g(d), g(a))]) + ([I(name, D, Imm(n))] if n else [])
    bits = 8 * sz
    cl = gpr(RCX, 1)
    if name == "sar":  # amounts past the width give the sign: clamp to width - 1
        ok = ctx.label("sar")
        return [I("mov", gpr(RCX, sz), Imm(bits - 1)), I("cmp", g(b, sz), Imm(bits - 1)), I("ja", Label(ok)),
                I("mov", gpr(RCX, sz), g(b, sz)), ok, I("mov", gpr(RAX), g(a)), I("sar", gpr(RAX, sz), cl),
                I("mov", g(d), gpr(RAX))]
    big, end = ctx.label("shbig"), ctx.label("shend")
    return [I("cmp", g(b, sz), Imm(bits)), I("jae", Label(big)), I("mov", gpr(RCX, sz), g(b, sz)),
            I("mov", gpr(RAX), g(a)), I(name, gpr(RAX, sz), cl), I("mov", g(d), gpr(RAX)), I("jmp", Label(end)),
            big, I("xor", g(d, 4), g(d, 4)), end]


@expands(*(f"{o}{w}" for o in ("divs", "divu", "rems", "remu") for w in (32, 64)))
def _div(m, ctx):
    """d <- a / b or a % b: 0 for b == 0; for signed b == -1, -a (wrapping) and 0 (x86 would trap on both)."""
    kind, sz = m.op[:4], _width(m.op)
    d, a, b = m.ops
    signed, rem = kind[3] == "s", kind.startswith("rem")
    zero, end = ctx.label("dz"), ctx.label("dend")
    out: Out = [I("test", g(b, sz), g(b, sz)), I("je", Label(zero))]
    neg = None
    if signed:
        neg = ctx.label("dneg")
        out += [I("cmp", g(b, sz), Imm(-1)), I("je", Label(neg))]
    out += [I("mov", gpr(RAX), g(a))]
    if signed:
        out.append(I("cdq" if sz == 4 else "cqo"))
    else:
        out.append(I("xor", gpr(RDX, 4), gpr(RDX, 4)))
    out += [I("idiv" if signed else "div", g(b, sz)), I("mov", g(d), gpr(RDX if rem else RAX)), I("jmp", Label(end))]
    if signed:
        out += [neg, *([I("xor", g(d, 4), g(d, 4))] if rem else
                       [*([] if same(d, a) else [I("mov", g(d), g(a))]), I("neg", g(d, sz))]), I("jmp", Label(end))]
    out += [zero, I("xor", g(d, 4), g(d, 4)), end]
    return out


@expands("set.")
def _setcc(m, ctx):
    _, cc, w = m.op.split(".")
    sz = 8 if w == "64" else 4
    d, a, b = m.ops
    return [I("cmp", g(a, sz), src_g(b, sz)), I(f"set{cc}", g(d, 1)), I("movzx", g(d, 4), g(d, 1))]


@expands("cmov.")
def _minmax(m, ctx):
    """d <- a if cc(a, b) else b."""
    _, cc, w = m.op.split(".")
    sz = 8 if w == "64" else 4
    d, a, b = m.ops
    D = g(d, sz)
    if same(d, a):
        return [I("cmp", g(a, sz), g(b, sz)), I(f"cmov{NEGATE[cc]}", D, g(b, sz))]
    if same(d, b):
        return [I("cmp", g(a, sz), g(b, sz)), I(f"cmov{cc}", D, g(a, sz))]
    return [I("mov", g(d), g(b)), I("cmp", g(a, sz), g(b, sz)), I(f"cmov{cc}", D, g(a, sz))]


@expands("csel32", "csel64")
def _csel(m, ctx):
    """d <- t if c else f (c a bool: 0 or 1)."""
    d, c, t, f = m.ops
    sz = _width(m.op)
    D = g(d, sz)
    test = I("test", g(c, 4), g(c, 4))
    if same(d, t):
        return [test, I("cmove", D, g(f, sz))]
    if same(d, f):
        return [test, I("cmovne", D, g(t, sz))]
    return [test, I("mov", g(d), g(f)), I("cmovne", D, g(t, sz))]


# ---- control -----------------------------------------------------------------------------------------------------
FUEL = Inst("fuel")  # placeholder for a loop's budget check, filled in by compiler.backend.x86.target


@expands("br.")
def _branch(m, ctx):
    """The backward branch of a loop: budget check, compare, jump while cc(a, b)."""
    _, cc, w = m.op.split(".")
    sz = 8 if w == "64" else 4
    a, b = m.ops
    return [FUEL, I("cmp", g(a, sz), src_g(b, sz)), I(f"j{cc}", Label(m.target))]


@expands("call.barrier")
def _barrier(m, ctx):
    """Save the registers live across the barrier (mods: 'g:n,n;x:n,n', from the allocation) on the fiber's
    stack, switch fibers, restore them."""
    live = dict(part.split(":") for part in m.mods.split(";")) if m.mods else {}
    gs = [int(n) for n in live.get("g", "").split(",") if n]
    xs = [int(n) for n in live.get("x", "").split(",") if n]
    out: Out = [I("push", gpr(n)) for n in gs]
    if xs:
        out.append(I("sub", gpr(4), Imm(8 * len(xs))))
        out += [I("movsd", Mem(8, gpr(4), None, 1, 8 * k), xmm(n)) for k, n in enumerate(xs)]
    out.append(I("call", Label(".Lbarrier")))
    if xs:
        out += [I("movsd", xmm(n), Mem(8, gpr(4), None, 1, 8 * k)) for k, n in enumerate(xs)]
        out.append(I("add", gpr(4), Imm(8 * len(xs))))
    out += [I("pop", gpr(n)) for n in reversed(gs)]
    return out


# ---- memory ------------------------------------------------------------------------------------------------------
def address(m: MInst, start: int) -> tuple[Mem | None, int]:
    """The memory operand of a load/store (mods: 'b' base, 'i' index present) whose operands start at `start`
    (size filled in by the caller); the index of the operand after it."""
    ops, k = m.ops, start
    base = index = None
    if "b" in m.mods:
        base, k = g(ops[k]), k + 1
    if "i" in m.mods:
        index, k = g(ops[k]), k + 1
    scale, disp = imm(ops[k]), imm(ops[k + 1])
    return Mem(0, base, index, scale if index is not None else 1, disp), k + 2


def _mem(mem: Mem, size: int) -> Mem:
    return Mem(size, mem.base, mem.index, mem.scale, mem.disp)


_LOAD = {"u8": ("movzx", 1, 4), "s8": ("movsx", 1, 4), "u16": ("movzx", 2, 4), "s16": ("movsx", 2, 4),
         "32": ("mov", 4, 4), "64": ("mov", 8, 8), "f32": ("movss", 4, 0), "f64": ("movsd", 8, 0)}
_STORE = {"8": ("mov", 1), "16": ("mov", 2), "32": ("mov", 4), "64": ("mov", 8), "f32": ("movss", 4),
          "f64": ("movsd", 8)}


@expands("ld.")
def _load(m, ctx):
    kind = m.op[3:]
    op, size, dsize = _LOAD[kind]
    d = m.ops[0]
    mem, k = address(m, 1)
    dst = x(d) if dsize == 0 else g(d, dsize)
    load = I(op, dst, _mem(mem, size))
    if "gated" not in m.flags:
        return [load]
    gate = m.ops[k]
    off, end = ctx.label("ldoff"), ctx.label("ldend")
    zero = I("xorps", dst, dst) if dsize == 0 else I("xor", g(d, 4), g(d, 4))
    return [I("test", g(gate, 4), g(gate, 4)), I("je", Label(off)), load, I("jmp", Label(end)), off, zero, end]


@expands("st.")
def _store(m, ctx):
    kind = m.op[3:]
    op, size = _STORE[kind]
    mem, k = address(m, 0)
    v = m.ops[k]
    val = x(v) if kind.startswith("f") else g(v, size)
    store = I(op, _mem(mem, size), val)
    if "gated" not in m.flags:
        return [store]
    skip = ctx.label("stskip")
    gate = m.ops[k + 1]
    return [I("test", g(gate, 4), g(gate, 4)), I("je", Label(skip)), store, skip]


def spill_slot(cls: str, slot: int, ctx: Ctx) -> Mem:
    """The stack slot of a spilled register (GPR slots of 8 bytes first, then XMM slots of 16: a register may
    hold four lanes, compiler.backend.x86.vector); `slot` counts 8-byte units."""
    return Mem(8 if cls == "g" else 16, gpr(4), None, 1, 8 * (slot if cls == "g" else ctx.gslots + slot))


@expands("spill.g", "reload.g", "spill.x", "reload.x")
def _spill(m, ctx):
    r, slot = m.ops
    mem = spill_slot(m.op[-1], imm(slot), ctx)
    if m.op[-1] == "g":
        return [I("mov", mem, g(r))] if m.op.startswith("spill") else [I("mov", g(r), mem)]
    return [I("movups", mem, x(r))] if m.op.startswith("spill") else [I("movups", x(r), mem)]


# ---- floats ------------------------------------------------------------------------------------------------------
_FCOMMUTATIVE = {"add", "mul"}


@expands("f.")
def _fbinary(m, ctx):
    """f.OP.ss / f.OP.sd d, a, b for add sub mul div (IEEE, round to nearest even)."""
    _, name, t = m.op.split(".")
    d, a, b = m.ops
    op = f"{name}{t}"
    if same(d, a):
        return [I(op, x(d), x(b))]
    if same(d, b):
        if name in _FCOMMUTATIVE:
            return [I(op, x(d), x(a))]
        return [I("movaps", xmm(SCRATCH_X), x(b)), I("movaps", x(d), x(a)), I(op, x(d), xmm(SCRATCH_X))]
    return [I("movaps", x(d), x(a)), I(op, x(d), x(b))]


@expands("fsqrt.ss", "fsqrt.sd")
def _fsqrt(m, ctx):
    d, a = m.ops
    return [I(f"sqrt{m.op[-2:]}", x(d), x(a))]


@expands("ftrunc.ss", "ftrunc.sd")
def _ftrunc(m, ctx):
    d, a = m.ops
    return [I(f"round{m.op[-2:]}", x(d), x(a), Imm(0xB))]  # toward zero, precision exception suppressed


@expands("fneg.ss", "fneg.sd")
def _fneg(m, ctx):
    d, a = m.ops
    wide = m.op.endswith("sd")
    t = xmm(SCRATCH_X)
    return [*_const_x(t, 1 << (63 if wide else 31), wide), *([] if same(d, a) else [I("movaps", x(d), x(a))]),
            I("xorps", x(d), t)]


@expands("fmax.ss", "fmax.sd", "fmin.ss", "fmin.sd")
def _fminmax(m, ctx):
    """NaN-propagating: maxss gives b when either is NaN, so only a NaN a needs handling."""
    d, a, b = m.ops
    t = m.op[-2:]
    nan, end = ctx.label("fnan"), ctx.label("fend")
    s = xmm(SCRATCH_X)
    return [I("movaps", s, x(a)), I(f"{m.op[1:4]}{t}", s, x(b)), I(f"ucomi{t}", x(a), x(a)), I("jp", Label(nan)),
            I("movaps", x(d), s), I("jmp", Label(end)), nan, *([] if same(d, a) else [I("movaps", x(d), x(a))]), end]


@expands("fcmp.")
def _fcmp(m, ctx):
    """dg <- pred(a, b) as 0/1 (cmpXXss: lt/eq ordered, neq unordered)."""
    _, pred, t = m.op.split(".")
    d, a, b = m.ops
    s = xmm(SCRATCH_X)
    return [I("movaps", s, x(a)), I(f"cmp{pred}{t}", s, x(b)), I("movd", g(d, 4), s), I("and", g(d, 4), Imm(1))]


@expands("fsel")
def _fsel(m, ctx):
    """d <- t if c else f."""
    d, c, t, f = m.ops
    end = ctx.label("fsel")
    test = I("test", g(c, 4), g(c, 4))
    if same(d, t):
        return [test, I("jne", Label(end)), I("movaps", x(d), x(f)), end]
    if same(d, f):
        return [test, I("je", Label(end)), I("movaps", x(d), x(t)), end]
    return [I("movaps", x(d), x(f)), test, I("je", Label(end)), I("movaps", x(d), x(t)), end]


# ---- conversions -------------------------------------------------------------------------------------------------
@expands("cvt.ss2sd", "cvt.sd2ss")
def _cvt_ff(m, ctx):
    d, a = m.ops
    return [I(f"cvt{m.op[4:]}", x(d), x(a))]


@expands("cvt.si2ss32", "cvt.si2ss64", "cvt.si2sd32", "cvt.si2sd64")
def _cvt_if(m, ctx):
    d, a = m.ops
    return [I(f"cvtsi2{m.op[-4:-2]}", x(d), g(a, _width(m.op)))]


@expands("cvtt.ss2si32", "cvtt.ss2si64", "cvtt.sd2si32", "cvtt.sd2si64")
def _cvtt(m, ctx):
    d, a = m.ops
    return [I(f"cvtt{m.op[5:7]}2si", g(d, _width(m.op)), x(a))]


@expands("cvt.u2ss64", "cvt.u2sd64")
def _cvt_u64(m, ctx):
    """uint64 -> float: values from 2^63 up are halved (keeping the lost bit sticky), converted, doubled."""
    d, a = m.ops
    t = m.op[-4:-2]
    big, end = ctx.label("u64big"), ctx.label("u64end")
    return [I("test", g(a), g(a)), I("js", Label(big)), I(f"cvtsi2{t}", x(d), g(a)), I("jmp", Label(end)), big,
            I("mov", gpr(RAX), g(a)), I("shr", gpr(RAX), Imm(1)), I("mov", gpr(RCX, 4), g(a, 4)),
            I("and", gpr(RCX, 4), Imm(1)), I("or", gpr(RAX), gpr(RCX)), I(f"cvtsi2{t}", x(d), gpr(RAX)),
            I(f"add{t}", x(d), x(d)), end]


@expands("cvtt.ss2u64", "cvtt.sd2u64")
def _cvtt_u64(m, ctx):
    """float -> uint64: values from 2^63 up convert as 2^63 - x (exact), negated, with bit 63 set."""
    d, a = m.ops
    t = m.op[5:7]
    s = xmm(SCRATCH_X)
    two63 = _const_x(s, 0x43E0000000000000 if t == "sd" else 0x5F000000, t == "sd")
    big, end = ctx.label("f2u64"), ctx.label("f2u64end")
    return [*two63, I(f"ucomi{t}", x(a), s), I("jae", Label(big)), I(f"cvtt{t}2si", g(d), x(a)), I("jmp", Label(end)),
            big, I(f"sub{t}", s, x(a)), I(f"cvtt{t}2si", g(d), s), I("neg", g(d)),
            I("movabs", gpr(RAX), Imm(1 << 63)), I("xor", g(d), gpr(RAX)), end]


def _f32_to_f16_bits(src: Reg, ctx: Ctx) -> Out:
    """eax <- the float16 bits of the float32 in src, rounded to nearest even (subnormals, inf, NaN kept)."""
    eax, ecx, edx = gpr(RAX, 4), gpr(RCX, 4), gpr(RDX, 4)
    s = xmm(SCRATCH_X)
    nan, inf, small, done = (ctx.label(n) for n in ("h_nan", "h_inf", "h_small", "h_done"))
    return [
        I("movd", eax, src), I("mov", ecx, eax), I("and", ecx, Imm(0x7FFFFFFF)), I("shr", eax, Imm(16)),
        I("and", eax, Imm(0x8000)),
        I("cmp", ecx, Imm(0x7F800000)), I("ja", Label(nan)),
        I("cmp", ecx, Imm(0x477FF000)), I("jae", Label(inf)),  # |x| >= 65520 rounds to inf
        I("cmp", ecx, Imm(0x38800000)), I("jb", Label(small)),  # below 2^-14: a subnormal (or zero) result
        I("sub", ecx, Imm(0x38000000)), I("mov", edx, ecx), I("shr", edx, Imm(13)), I("and", edx, Imm(1)),
        I("add", ecx, edx), I("add", ecx, Imm(0xFFF)), I("shr", ecx, Imm(13)), I("or", eax, ecx),
        I("jmp", Label(done)),
        small, I("mov", edx, Imm(0x4B800000)), I("movd", s, edx), I("mulss", s, src),  # x * 2^24, exact
        I("cvtss2si", edx, s), I("mov", ecx, edx), I("sar", ecx, Imm(31)), I("xor", edx, ecx), I("sub", edx, ecx),
        I("or", eax, edx), I("jmp", Label(done)),
        inf, I("or", eax, Imm(0x7C00)), I("jmp", Label(done)),
        nan, I("or", eax, Imm(0x7E00)),
        done]


def _f16_bits_to_f32(dst: Reg, ctx: Ctx) -> Out:
    """dst <- the float16 whose bits are in eax (upper bits ignored) as float32 (exact). Clobbers eax, ecx, edx."""
    eax, ecx, edx = gpr(RAX, 4), gpr(RCX, 4), gpr(RDX, 4)
    s = xmm(SCRATCH_X)
    special, sub, done = ctx.label("f_special"), ctx.label("f_sub"), ctx.label("f_done")
    return [
        I("mov", ecx, eax), I("and", ecx, Imm(0x8000)), I("shl", ecx, Imm(16)), I("and", eax, Imm(0x7FFF)),
        I("cmp", eax, Imm(0x7C00)), I("jae", Label(special)),
        I("cmp", eax, Imm(0x400)), I("jb", Label(sub)),
        I("shl", eax, Imm(13)), I("add", eax, Imm(0x38000000)), I("jmp", Label(done)),
        special, I("shl", eax, Imm(13)), I("or", eax, Imm(0x7F800000)), I("jmp", Label(done)),
        sub, I("cvtsi2ss", s, eax), I("mov", edx, Imm(0x33800000)), I("movd", dst, edx), I("mulss", s, dst),
        I("movd", eax, s),  # m * 2^-24, exact
        done, I("or", eax, ecx), I("movd", dst, eax)]


@expands("f16.bits")
def _to_f16(m, ctx):
    d, a = m.ops
    return [*_f32_to_f16_bits(x(a), ctx), I("mov", g(d, 4), gpr(RAX, 4))]


@expands("f16.value")
def _from_f16(m, ctx):
    d, a = m.ops
    return [I("mov", gpr(RAX, 4), g(a, 4)), *_f16_bits_to_f32(x(d), ctx)]


@expands("rnd.f16")
def _round_f16(m, ctx):
    """d <- the float32 a rounded to float16 (nearest even), as float32."""
    d, a = m.ops
    return [*_f32_to_f16_bits(x(a), ctx), *_f16_bits_to_f32(x(d), ctx)]


@expands("rnd.bf16")
def _round_bf16(m, ctx):
    """d <- the float32 a rounded to bfloat16 (nearest even; a NaN stays a quiet NaN), as float32."""
    d, a = m.ops
    eax, ecx = gpr(RAX, 4), gpr(RCX, 4)
    nan, done = ctx.label("bf_nan"), ctx.label("bf_done")
    return [I("movd", eax, x(a)), I("ucomiss", x(a), x(a)), I("jp", Label(nan)),
            I("mov", ecx, eax), I("shr", ecx, Imm(16)), I("and", ecx, Imm(1)), I("add", ecx, Imm(0x7FFF)),
            I("add", eax, ecx), I("jmp", Label(done)),
            nan, I("or", eax, Imm(0x400000)),
            done, I("and", eax, Imm(0xFFFF0000)), I("movd", x(d), eax)]


@expands("rto.fix")
def _rto_fix(m, ctx):
    """d <- s rounded to odd, given e = the exact error of s (TwoSum): when e != 0 and s's last bit is even, the
    neighbour of s on e's side (that one is odd)."""
    d, s, e = m.ops
    keep, end = ctx.label("rto_keep"), ctx.label("rto_end")
    z = xmm(SCRATCH_X)
    return [I("xorps", z, z), I("ucomisd", x(e), z), I("je", Label(keep)), I("jp", Label(keep)),
            I("movq", gpr(RAX), x(s)), I("test", gpr(RAX, 1), Imm(1)), I("jne", Label(keep)),
            I("movq", gpr(RCX), x(e)), I("xor", gpr(RCX), gpr(RAX)), I("sar", gpr(RCX), Imm(63)),
            I("lea", gpr(RAX), Mem(8, gpr(RAX), gpr(RCX), 2, 1)), I("movq", x(d), gpr(RAX)), I("jmp", Label(end)),
            keep, *([] if same(d, s) else [I("movaps", x(d), x(s))]), end]


@expands("fma32.round")
def _fma32_round(m, ctx):
    """d <- float32(p + c) rounded once, given s = p + c rounded to float64 (p exact). Rounding s to float32 is
    that one correct rounding unless s landed exactly on a float32 midpoint (its low 29 bits 1000...0); then the
    exact error's sign (TwoSum, negated to fit two scratch registers) breaks the tie by moving s one float64 ulp
    toward the true value."""
    d, s_, p, c = m.ops
    fast, end = ctx.label("fma_fast"), ctx.label("fma_end")
    x14, x15 = xmm(SCRATCH_X2), xmm(SCRATCH_X)
    rax, rcx = gpr(RAX), gpr(RCX)
    return [I("movq", rax, x(s_)), I("mov", gpr(RCX, 4), gpr(RAX, 4)), I("and", gpr(RCX, 4), Imm(0x1FFFFFFF)),
            I("cmp", gpr(RCX, 4), Imm(0x10000000)), I("jne", Label(fast)),
            I("movaps", x15, x(s_)), I("subsd", x15, x(p)),  # bb = s - p
            I("movaps", x14, x(s_)), I("subsd", x14, x15), I("subsd", x14, x(p)),  # (s - bb) - p = -(p - (s - bb))
            I("subsd", x15, x(c)), I("addsd", x14, x15),  # -e
            I("xorps", x15, x15), I("ucomisd", x14, x15), I("je", Label(fast)),
            I("movq", rcx, x14), I("xor", rcx, rax), I("shr", rcx, Imm(63)),  # 1 when e has s's sign
            I("lea", rax, Mem(8, rax, rcx, 2, -1)), I("movq", x15, rax), I("cvtsd2ss", x(d), x15),
            I("jmp", Label(end)),
            fast, I("cvtsd2ss", x(d), x(s_)), end]


@expands("rto.sd2ss")
def _rto_narrow(m, ctx):
    """d <- the float64 a rounded to float32 with round to odd (so a later rounding to a narrower type is one
    correct rounding)."""
    d, a = m.ops
    s = xmm(SCRATCH_X)
    eax, ecx, edx = gpr(RAX, 4), gpr(RCX, 4), gpr(RDX, 4)
    keep = ctx.label("rto32")
    return [I("cvtsd2ss", s, x(a)), I("movd", eax, s), I("cvtss2sd", s, s), I("ucomisd", s, x(a)),
            I("seta", gpr(RCX, 1)), I("je", Label(keep)), I("jp", Label(keep)), I("test", gpr(RAX, 1), Imm(1)),
            I("jne", Label(keep)), I("movzx", ecx, gpr(RCX, 1)), I("mov", edx, eax), I("shr", edx, Imm(31)),
            I("xor", ecx, edx), I("add", eax, Imm(1)), I("sub", eax, ecx), I("sub", eax, ecx),
            keep, I("movd", x(d), eax)]

