"""The gfx11 selector: value conventions, operand legalization and the kernel's structure (arguments, ids, loops,
accumulators, barriers); the ALU, conversion and memory rules live in their own modules and register in RULES.

Values in registers (one register = 32 bits; SGPR class 's', VGPR class 'v'):

- int32/uint32/float32: one register. int64/uint64/float64: an aligned pair (s) or a pair (v), low half first.
- int8/16, uint8/16: one register holding the value sign- or zero-extended to 32 bits (every op that can leave
  the range re-extends: LLVM's promotion of small integers).
- float16: the low 16 bits of a register (the high half is not defined).
- bfloat16: a float32 whose low 16 bits are zero (the value exactly): arithmetic is float32 arithmetic
  rounded back to bfloat16, conversions to float32 are free.
- bool: a lane mask in one SGPR (bit l for lane l), whether uniform (all ones or zero) or not.

A uop in `scalar` (compiler.backend.gfx11.uniform) lives in SGPRs and is computed by the scalar unit; any
other value lives in VGPRs. Constants stay `C` operands until an instruction needs them in a register.

Legalization (gfx10+ VOP3): a VALU instruction reads at most two scalar values (SGPRs and the literal count;
one SGPR read twice counts once) and at most one literal; SALU instructions at most one literal. Extra ones
are copied to VGPRs (SGPRs for SALU) first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.gfx11.operands import NULL
from compiler.backend.gfx11.uniform import scalar_values
from compiler.backend.isel import SelectionRules, Selector, value_rules
from compiler.backend.mir import Imm, MInst, Phys, Sub, VReg, label
from compiler.dtypes import DType, dtypes
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import Ops, UOp

RULES = value_rules(SelectionRules())
LDS_ALIGN = 16
WAVE_LANES = 32  # the kernels are wave32 (target.py counts their waves so)


@dataclass(frozen=True)
class C:
    """A constant operand: its value, dtype, and the CONST uop (where a register copy of it is made)."""

    value: object
    dtype: DType
    uop: UOp | None = None


def nregs(dt) -> int:
    """Registers per value of dtype dt."""
    return 2 if isinstance(dt, DType) and dt.itemsize == 8 else 1


def fkind(dt: DType) -> str:
    """The float operand kind of a float dtype ('f32' for float32 and bfloat16)."""
    return {"float16": "f16", "float64": "f64"}.get(dt.name, "f32")


def const_bits(value, dt: DType) -> int:
    """The bit pattern of a constant as its register(s) hold it (module docstring)."""
    if dt.kind == "b":
        return 0xFFFFFFFF if value else 0
    if dt.is_float:
        if dt.name == "float64":
            return opnd.f64_bits(float(value))
        if dt.name == "float16":
            return opnd.f16_bits(float(value))
        bits = opnd.f32_bits(float(value))
        return bits & 0xFFFF0000 if dt.name == "bfloat16" else bits
    v = int(value)
    return v & ((1 << 64) - 1) if dt.itemsize == 8 else v & 0xFFFFFFFF


class GfxSelector(Selector):
    """Selects gfx11 instructions for one kernel (module docstring)."""

    rules = RULES

    def __init__(self, kernel: LinearKernel):
        super().__init__(kernel)
        self.scalar = scalar_values(kernel)
        self.const_regs: dict[tuple, Sub] = {}
        self.labels = 0
        self.lds_offset: dict[int, int] = {}
        off = 0
        for u in kernel.uops:
            if u.op is Ops.LDS:
                off = -(-off // LDS_ALIGN) * LDS_ALIGN
                self.lds_offset[u.arg] = off
                off += u.dtype.size * u.dtype.itemsize
        self.lds_bytes = off
        self.kernarg = self.regs.new("s", 2, fixed=0, name="kernarg")
        self.uses_dims = {"group": set(), "local": set()}
        for u in kernel.uops:
            if u.op is Ops.SPECIAL:
                self.uses_dims[u.arg[0]].add(u.arg[1])
        self.group_ids = {}
        sg = 2
        for axis in sorted(self.uses_dims["group"]):
            self.group_ids[axis] = self.regs.new("s", 1, fixed=sg, name=f"group{axis}")
            sg += 1
        self.workitem = self.regs.new("v", 1, fixed=0, name="workitem")
        self.local_ids: dict[int, Sub] = {}
        self.zero_v: Sub | None = None
        self.params: dict[int, Sub] = {}
        self.wmma_acc: dict[UOp, Sub] = {}
        self.extract: dict = {}
        self.linear_memo: dict = {}
        self.bases: dict | None = None
        self.scaled: dict = {}
        self.combined: dict = {}
        self.combined_regs: dict = {}
        self.smem_combined: dict = {}  # uniform loads combined into one s_load (compiler.backend.gfx11.memory)
        self.smem_regs: dict = {}
        self.d16: dict = {}

    def run(self, plans: Sequence[Callable[[GfxSelector], None]] = ()) -> list[MInst]:
        """The kernel's code: the entry (what the hardware put in registers, arguments, ids), then every uop; `plans`
        decide before selection what the rules read (compiler.backend.gfx11.target.PLANS)."""
        self.prologue.append(MInst("pseudo.entry", [self.kernarg.all, self.workitem.all,
                                                    *(r.all for r in self.group_ids.values())],
                                   2 + len(self.group_ids)))
        _params_prologue(self)
        _workitem_prologue(self)
        for plan in plans:
            plan(self)
        return super().run()

    # ---- registers and values --------------------------------------------------------------------------------
    def sreg(self, n: int = 1) -> VReg:
        """A fresh SGPR (tuple)."""
        return self.regs.new("s", n)

    def vreg(self, n: int = 1) -> VReg:
        """A fresh VGPR (tuple)."""
        return self.regs.new("v", n)

    def dst(self, u: UOp, rc: str | None = None) -> Sub:
        """A fresh register for u's value (class: SGPR for scalar values and bools) and record it."""
        if rc is None:
            rc = "s" if (u in self.scalar or u.dtype == dtypes.bool) else "v"
        r = self.regs.new(rc, nregs(u.dtype)).all
        self.val[u] = r
        return r

    def src(self, u: UOp):
        """u's value: a register operand or a constant C (a packed 16-bit element is extracted first)."""
        if u.op is Ops.CONST:
            return C(u.arg, u.dtype, u)
        v = self.val.get(u)
        if v is None:
            raise AssertionError(f"{self.name()}: {u.op.name} used before it has a value")
        if not isinstance(v, (Sub, C)):
            return self.unpack(u)
        return v

    def unpack(self, u: UOp) -> Sub:
        """A 16-bit element of a combined load in its own register, in the dtype's convention (at the load)."""
        if u in self.extract:
            return self.extract[u]
        p = self.val[u]
        dt = p.dtype
        with self.at(u):
            t = self.vreg().all
            if dt.name == "float16":
                if p.half == 0:
                    t = p.word
                else:
                    self.vop("v_lshrrev_b32", t, opnd.imm(16, "b32"), p.word)
            elif dt.name == "bfloat16":
                if p.half == 0:
                    self.vop("v_lshlrev_b32", t, opnd.imm(16, "b32"), p.word)
                else:
                    self.vop("v_and_b32", t, opnd.imm(0xFFFF0000, "b32"), p.word)
            else:
                op = "v_bfe_i32" if dt.kind == "i" else "v_bfe_u32"
                self.vop(op, t, p.word, opnd.imm(16 * p.half, "b32"), opnd.imm(16, "b32"))
        self.extract[u] = t
        return t


    def new_label(self, stem: str) -> str:
        self.labels += 1
        return f".L{stem}{self.labels}"

    # ---- operands -------------------------------------------------------------------------------------------
    def imm_or_reg(self, x, kind: str, rc: str = "s"):
        """x as a 32-bit (or 64-bit float/int) source operand: an immediate when it has one, else a register."""
        if isinstance(x, C):
            bits = const_bits(x.value, x.dtype)
            if kind in ("f64", "b64"):
                im = opnd.imm(bits, kind)
            elif kind == "f16":
                im = opnd.imm(bits & 0xFFFF, "f16")
            elif kind == "f32":
                im = opnd.imm(bits & 0xFFFFFFFF, "f32")
            else:
                im = opnd.imm(bits & 0xFFFFFFFF, kind)
            if im is not None:
                return im
            return self.materialize(x, rc)
        return x

    def materialize(self, x: C, rc: str = "s") -> Sub:
        """A constant in a register (made once per kernel and class, at its CONST's position)."""
        bits = const_bits(x.value, x.dtype)
        n = nregs(x.dtype)
        key = (bits, n, rc)
        if key in self.const_regs:
            return self.const_regs[key]
        r = self.regs.new(rc, n)
        target = self.slot[x.uop] if x.uop is not None and x.uop in self.slot else self.cur
        saved, self.cur = self.cur, target
        for i in range(n):
            word = (bits >> (32 * i)) & 0xFFFFFFFF
            if rc == "s":
                self.emit(MInst("s_mov_b32", [r[i], opnd.imm(word, "b32")], 1))
            else:
                self.emit(MInst("v_mov_b32", [r[i], opnd.imm(word, "b32")], 1))
        self.cur = saved
        self.const_regs[key] = r.all
        return r.all

    def lo(self, x):
        """The low 32 bits of a 64-bit value (register half or constant word)."""
        if isinstance(x, C):
            return C(const_bits(x.value, x.dtype) & 0xFFFFFFFF, dtypes.uint32, None)
        return Sub(x.reg, x.off, 1)

    def hi(self, x):
        """The high 32 bits of a 64-bit value."""
        if isinstance(x, C):
            return C(const_bits(x.value, x.dtype) >> 32, dtypes.uint32, None)
        return Sub(x.reg, x.off + 1, 1)

    def b32(self, x, rc: str = "s"):
        """A 32-bit integer source operand (constants by their bits)."""
        return self.imm_or_reg(x, "b32", rc)

    def zero_vgpr(self) -> Sub:
        """A VGPR holding 0 in every lane (made once, in the prologue)."""
        if self.zero_v is None:
            r = self.vreg()
            self.prologue.append(MInst("v_mov_b32", [r.all, opnd.imm(0, "b32")], 1))
            self.zero_v = r.all
        return self.zero_v

    # ---- emission --------------------------------------------------------------------------------------------
    def sop(self, op: str, *ops, ndef: int = 1, flags=(), mods: str = "") -> MInst:
        """A scalar ALU instruction (at most one literal: others are copied to SGPRs)."""
        ops = list(ops)
        lits = [i for i, o in enumerate(ops[ndef:], ndef) if isinstance(o, Imm) and not opnd.is_inline(o)]
        for i in lits[1:]:
            if ops[i] != ops[lits[0]]:
                t = self.sreg()
                self.emit(MInst("s_mov_b32", [t.all, ops[i]], 1))
                ops[i] = t.all
        return self.emit(MInst(op, ops, ndef, mods, flags=frozenset(flags)))

    def vop(self, op: str, *ops, ndef: int = 1, flags=(), mods: str = "", fixed_scalar: tuple[int, ...] = (),
            early: bool = False, rmw: bool = False) -> MInst:
        """A vector ALU instruction, its scalar sources legalized (module docstring). fixed_scalar: source indices
        (counting from the first source) that must stay scalar (a lane-mask operand)."""
        ops = list(ops)
        keys: list = []
        lit = None
        order = sorted(range(len(ops) - ndef), key=lambda i: i not in fixed_scalar)
        for i in order:
            o = ops[ndef + i]
            key = None
            if isinstance(o, Sub) and o.rc == "s":
                key = ("s", o.reg.id, o.off)
            elif isinstance(o, Phys) and o.name not in ("null", "off", "exec_lo"):
                key = ("p", o.name)
            elif isinstance(o, Imm) and not opnd.is_inline(o):
                key = ("lit", o.value)
                if lit is not None and lit != o.value:
                    key = ("lit2", o.value)
            if key is None:
                continue
            if key in keys:
                continue
            if len(keys) < 2 and key[0] != "lit2" and not (key[0] == "lit" and lit is not None):
                keys.append(key)
                if key[0] == "lit":
                    lit = o.value
                continue
            ops[ndef + i] = self.to_vgpr(o)
        fl = set(flags)
        if early:
            fl.add("early")
        return self.emit(MInst(op, ops, ndef, mods, flags=frozenset(fl), rmw=rmw))

    def to_vgpr(self, o) -> Sub:
        """A scalar operand (SGPR or immediate, possibly with modifiers) copied into a fresh VGPR (modifiers kept)."""
        neg, ab = getattr(o, "neg", False), getattr(o, "abs", False)
        if isinstance(o, Sub):
            base = Sub(o.reg, o.off, o.n)
            t = self.vreg(o.n)
            for i in range(o.n):
                self.emit(MInst("v_mov_b32", [t[i], Sub(o.reg, o.off + i, 1)], 1))
            return Sub(t, 0, o.n, neg, ab)
        t = self.vreg()
        base = o if not isinstance(o, Phys) else Phys(o.name)
        self.emit(MInst("v_mov_b32", [t.all, base], 1))
        return Sub(t, 0, 1, neg, ab)

    def copy(self, dst: Sub, srcv, dt) -> None:
        """dst <- a value of dtype dt (register or constant), in dst's class."""
        n = nregs(dt)
        if isinstance(srcv, Sub) and srcv.reg is dst.reg and srcv.off == dst.off:
            return
        for i in range(n):
            s = srcv if n == 1 else (self.lo(srcv) if i == 0 else self.hi(srcv))
            d = Sub(dst.reg, dst.off + i, 1)
            if dst.rc == "s":
                if isinstance(s, Sub) and s.rc == "v":
                    self.emit(MInst("v_readfirstlane_b32", [d, s], 1))
                else:
                    self.emit(MInst("s_mov_b32", [d, self.b32(s)], 1))
            else:
                self.emit(MInst("v_mov_b32", [d, self.b32(s)], 1))

    def in_vgpr(self, x, dt) -> Sub:
        """x (register or constant) in VGPR(s)."""
        if isinstance(x, Sub) and x.rc == "v":
            return x
        t = self.vreg(nregs(dt)).all
        self.copy(t, x, dt)
        return t

    def in_sgpr(self, x, dt) -> Sub:
        """x in SGPR(s) (a VGPR value is uniform here: its first active lane)."""
        if isinstance(x, Sub) and x.rc == "s":
            return x
        t = self.sreg(nregs(dt)).all
        self.copy(t, x, dt)
        return t

    def mask_of(self, x) -> Sub:
        """A bool operand as a lane-mask SGPR (constants as all ones or zero)."""
        if isinstance(x, C):
            return self.materialize(C(bool(x.value), dtypes.bool, x.uop), "s")
        return x


# ---- structure ---------------------------------------------------------------------------------------------------
def _params_prologue(s: GfxSelector) -> None:
    """Load the kernel's buffer pointers from the kernarg segment, in as few s_load instructions as fit."""
    used = sorted({u.arg for u in s.k.uops if u.op is Ops.PARAM})
    i = 0
    while i < len(used):
        j = i
        while j + 1 < len(used) and used[j + 1] == used[j] + 1 and j + 1 - i < 8:
            j += 1
        n = j - i + 1
        size = 2 * n
        width = 2 if size <= 2 else 4 if size <= 4 else 8 if size <= 8 else 16
        r = s.regs.new("s", width)
        s.prologue.append(MInst(f"s_load_b{32 * width}", [r.all, s.kernarg.all, Imm(8 * used[i], hex(8 * used[i]))], 1,
                                flags=frozenset({"smem", "load"})))
        for k in range(n):
            s.params[used[i + k]] = r.part(2 * k, 2)
        i = j + 1


def _workitem_prologue(s: GfxSelector) -> None:
    dims = s.uses_dims["local"]
    if not dims:
        return
    packed = max(dims) > 0 or s.k.geometry.block[1] > 1 or s.k.geometry.block[2] > 1
    for axis in sorted(dims):
        if not packed:
            s.local_ids[axis] = s.workitem.all
            continue
        r = s.vreg()
        if axis == 0:
            s.prologue.append(MInst("v_and_b32", [r.all, opnd.imm(0x3FF, "b32"), s.workitem.all], 1))
        else:
            s.prologue.append(MInst("v_bfe_u32", [r.all, s.workitem.all, opnd.imm(10 * axis, "b32"),
                                                  opnd.imm(10, "b32")], 1))
        s.local_ids[axis] = r.all


def workitem_dims(k: LinearKernel) -> int:
    """How many work-item id dimensions the kernel needs in v0 (1: x only, unpacked)."""
    dims = {u.arg[1] for u in k.uops if u.op is Ops.SPECIAL and u.arg[0] == "local"}
    g = k.geometry.block
    if not dims or (max(dims) == 0 and g[1] == 1 and g[2] == 1):
        return 1
    return 3


@RULES.rule(Ops.SINK)
def _sink(s: GfxSelector, u: UOp) -> None:
    s.epilogue.append(MInst("s_endpgm"))


@RULES.rule(Ops.PARAM)
def _param(s: GfxSelector, u: UOp) -> None:
    s.set(u, s.params[u.arg])


@RULES.rule(Ops.CONST)
def _const(s: GfxSelector, u: UOp) -> None:
    pass  # an operand: made a register only where an instruction needs one (GfxSelector.materialize)


@RULES.rule(Ops.LDS)
def _lds(s: GfxSelector, u: UOp) -> None:
    s.set(u, C(s.lds_offset[u.arg], dtypes.int32, None))


@RULES.rule(Ops.SPECIAL)
def _special(s: GfxSelector, u: UOp) -> None:
    kind, axis, _ = u.arg
    s.set(u, s.group_ids[axis].all if kind == "group" else s.local_ids[axis])


@RULES.rule(Ops.RANGE)
def _range(s: GfxSelector, u: UOp) -> None:
    r = s.dst(u, "s")
    s.sop("s_mov_b32", r, opnd.imm(0, "b32"))
    s.emit(label(f".Lloop{s.pos[u]}"))


@RULES.rule(Ops.ENDRANGE)
def _endrange(s: GfxSelector, u: UOp) -> None:
    rng = u.src[0]
    r = s.val[rng]
    s.sop("s_add_i32", r, r, opnd.imm(1, "b32"), flags=("scc",))
    s.sop("s_cmp_lt_i32", r, s.b32(s.src(rng.src[0])), ndef=0, flags=("scc",))
    s.emit(MInst("s_cbranch_scc1", target=f".Lloop{s.pos[rng]}", flags=frozenset({"use_scc", "branch"})))


@RULES.rule(Ops.DEFINE_ACC)
def _define_acc(s: GfxSelector, u: UOp) -> None:
    if u in s.wmma_acc:
        r = s.wmma_acc[u]
        s.set(u, r)
    else:
        r = s.dst(u)
    s.copy(r, s.src(u.src[0]), u.dtype)


@RULES.rule(Ops.BARRIER)
def _barrier(s: GfxSelector, u: UOp) -> None:
    # A workgroup of one wave (the kernels are wave32) needs no s_barrier: its LDS operations run in program
    # order, so a load after a store sees it (LLVM's AMDGPU backend makes such barriers wave barriers, which emit
    # nothing). On the simulated GPU each s_barrier ends a step of the JIT tier (an interval): a group
    # reduction's LDS tree of 32 lanes had five.
    if prod(s.k.geometry.block) <= WAVE_LANES:
        return
    s.emit(MInst("s_barrier", flags=frozenset({"barrier"})))


def null() -> Phys:
    """The null destination (an unused carry or mask result)."""
    return NULL
