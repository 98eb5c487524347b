"""The x86-64 selector: value conventions, operands and the kernel's structure (the grid walk, ids, loops,
accumulators, barriers); the ALU, conversion and memory rules live in their own modules and register in RULES.

Values (register class 'g': a general-purpose register, 'x': an XMM register; one register per value):

- bool: 0 or 1 in a GPR. int8/16, uint8/16: the value sign- or zero-extended to 32 bits (every op that can
  leave the range re-extends). int32/uint32: 32 bits. Every value of 32 bits or less has the upper half of
  its 64-bit register zero (32-bit instructions guarantee it), so a non-negative int32 index addresses memory
  as it is. int64/uint64: the whole register.
- float32 / float64: the low lane of an XMM register. float16 and bfloat16: a float32 that the 16-bit type
  represents exactly; arithmetic is float32 arithmetic rounded back once (for + - * / and sqrt that is the
  correctly rounded 16-bit result: float32 has 24 >= 2*11+2 bits).

Constants stay `C` operands (immediates where an instruction takes one) until a register is needed; then they
are made once per kernel and register class, before the grid loops, as are the buffer addresses.

The grid walk: without barriers, loops over the group ids (z, y, x) and the local ids (z, y, x) wrap the
kernel's body, so one work-item after another runs it and loop-invariant values stay in registers. With
barriers each work-item of a workgroup runs the body as a fiber on its own stack (compiler.backend.x86.target):
the body reads its ids from the kernarg page's scheduler words at entry, and a BARRIER is a call to the switch
routine, which saves every register.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.backend.isel import SelectionRules, Selector, value_rules
from compiler.backend.mir import Imm, MInst, Sub, label
from compiler.dtypes import DType, dtypes
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import Ops, UOp
from runtime.cpu import abi

RULES = value_rules(SelectionRules())
LDS_ALIGN = 16
SCHED_CUR, SCHED_RSP, SCHED_GROUP = abi.SCHED, abi.SCHED + 8, abi.SCHED + 16  # group id of axis a at +8*a


@dataclass(frozen=True)
class C:
    """A constant operand: value, dtype, and the CONST uop (where a register copy of it is made)."""

    value: object
    dtype: DType
    uop: UOp | None = None


def imm(v: int) -> Imm:
    """An immediate operand of machine IR."""
    return Imm(int(v), str(int(v)))


def is_float(dt) -> bool:
    return isinstance(dt, DType) and dt.is_float


def rc_of(dt) -> str:
    """The register class of a dtype's values."""
    return "x" if is_float(dt) else "g"


def w(dt: DType) -> str:
    """The integer operation width of a dtype ('64' for 8-byte types, else '32')."""
    return "64" if dt.itemsize == 8 else "32"


def ft(dt: DType) -> str:
    """The SSE scalar suffix of a float dtype (float16/bfloat16 compute as float32)."""
    return "sd" if dt.name == "float64" else "ss"


def const_bits(value, dt: DType) -> int:
    """The bits of a constant as its register holds it (module docstring)."""
    import struct
    if dt.kind == "b":
        return int(bool(value))
    if dt.name == "float64":
        return struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    if dt.is_float:
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    v = int(value)
    return v & ((1 << 64) - 1) if dt.itemsize == 8 else v & 0xFFFFFFFF


def fits_imm(x, dt: DType) -> bool:
    """Whether a constant integer operand can be an instruction's (sign-extended 32-bit) immediate."""
    if not isinstance(x, C) or is_float(dt):
        return False
    if dt.itemsize < 8:
        return True
    v = int(x.value)
    return -(1 << 31) <= v < (1 << 31)


class X86Selector(Selector):
    """Selects x86-64 machine IR for one kernel (module docstring)."""

    rules = RULES

    def __init__(self, kernel: LinearKernel, fibers: bool):
        super().__init__(kernel)
        self.fibers = fibers
        self.const_regs: dict[tuple, Sub] = {}
        self.lds_address: dict[int, int] = {}
        off = 0
        for u in kernel.uops:
            if u.op is Ops.LDS:
                off = -(-off // LDS_ALIGN) * LDS_ALIGN
                self.lds_address[u.arg] = abi.LDS_BASE + off
                off += u.dtype.size * u.dtype.itemsize
        self.lds_bytes = off
        self.ids: dict[tuple[str, int], Sub] = {}
        self.nlabels = 0
        self.hoisted: list[MInst] = []  # before the grid loops: buffer addresses and constants
        self.loops_seen = 0  # RANGEs and ENDRANGEs so far: values made between two of them stay there
        self.widened: dict[tuple[UOp, int], Sub] = {}  # float32 values as float64 (compiler.backend.x86.alu)

    def run(self) -> list[MInst]:
        """The kernel's machine IR: the grid walk or fiber entry around every uop's instructions."""
        if self.fibers:
            self._fiber_ids()
        else:
            self._grid_loops()
        code = super().run()
        return [*self.hoisted, *code]

    # ---- structure -----------------------------------------------------------------------------------------
    def _extents(self) -> list[tuple[str, int, int]]:
        g = self.k.geometry
        return [(kind, axis, (g.grid if kind == "group" else g.block)[axis])
                for kind in ("group", "local") for axis in (2, 1, 0)]

    def _grid_loops(self) -> None:
        """Loops over every id with more than one value, outermost group z, innermost local x."""
        tails = []
        for kind, axis, n in self._extents():
            if n <= 1:
                continue
            r = self.g()
            self.prologue.append(MInst("li", [r, imm(0)], 1))
            name = self.label(f"{kind}{'xyz'[axis]}")
            self.prologue.append(label(name))
            self.ids[(kind, axis)] = r
            tails.append((r, n, name))
        for r, n, name in reversed(tails):
            self.epilogue.append(MInst("add32", [r, r, imm(self.step(r))], 1))
            self.epilogue.append(MInst("br.b.32", [r, imm(n)], 0, target=name))

    def step(self, r: Sub) -> int:
        """How many work-items one pass of the body runs along the id in r (compiler.backend.x86.vector: 4)."""
        return 1

    def _fiber_ids(self) -> None:
        """Ids of a fiber: group ids from the scheduler words, local ids from the work-item's index."""
        used = {u.arg[:2] for u in self.k.uops if u.op is Ops.SPECIAL}
        block = self.k.geometry.block
        cur = None
        for kind, axis in sorted(used):
            r = self.g()
            if kind == "group":
                self.prologue.append(MInst("ld.32", [r, imm(1), imm(SCHED_GROUP + 8 * axis)], 1))
            else:
                if cur is None:
                    cur = self.g()
                    self.prologue.append(MInst("ld.32", [cur, imm(1), imm(SCHED_CUR)], 1))
                below = 1
                for a in range(axis):
                    below *= block[a]
                t = cur
                if below > 1:
                    t = self.g()
                    self.prologue += [MInst("li", [(k := self.g()), imm(below)], 1), MInst("divu32", [t, cur, k], 1)]
                if any(block[a] > 1 for a in range(axis + 1, 3)):
                    q = self.g()
                    self.prologue += [MInst("li", [(k := self.g()), imm(block[axis])], 1),
                                      MInst("remu32", [q, t, k], 1)]
                    t = q
                self.prologue.append(MInst("mov", [r, t], 1))
            self.ids[(kind, axis)] = r

    # ---- registers and values ------------------------------------------------------------------------------
    def g(self) -> Sub:
        """A fresh general-purpose virtual register."""
        return self.regs.new("g").all

    def x(self) -> Sub:
        """A fresh XMM virtual register."""
        return self.regs.new("x").all

    def label(self, stem: str) -> str:
        self.nlabels += 1
        return f".L{stem}{self.nlabels}"

    def dst(self, u: UOp) -> Sub:
        """A fresh register for u's value, recorded."""
        r = self.regs.new(rc_of(u.dtype)).all
        self.val[u] = r
        return r


    def src(self, u: UOp):
        """u's value: a register or a constant C."""
        if u.op is Ops.CONST:
            return C(u.arg, u.dtype, u)
        v = self.val.get(u)
        if v is None:
            raise AssertionError(f"{self.name()}: {u.op.name} used before it has a value")
        return v

    def reg(self, v) -> Sub:
        """v in a register (constants materialized)."""
        return self.materialize(v) if isinstance(v, C) else v

    def rsrc(self, u: UOp) -> Sub:
        """u's value in a register."""
        return self.reg(self.src(u))

    def operand(self, v, dt: DType):
        """An integer source: an immediate when the constant fits, else a register."""
        if fits_imm(v, dt):
            return imm(const_bits(v.value, dt) if dt.itemsize < 8 else int(v.value))
        return self.reg(v)

    def materialize(self, c: C) -> Sub:
        """A constant in a register (made once per kernel and class, before the grid loops: a constant the
        allocator has to spill is reloaded from the stack, one instruction like making it again)."""
        rc = rc_of(c.dtype)
        bits = const_bits(c.value, c.dtype)
        wide = c.dtype.itemsize == 8
        key = (bits, rc, wide)
        if key in self.const_regs:
            return self.const_regs[key]
        r = self.regs.new(rc).all
        if rc == "g":
            m = MInst("li", [r, imm(bits)], 1)
        else:
            m = MInst("fli64" if wide else "fli32", [r, imm(bits)], 1)
        self.hoisted.append(m)
        self.const_regs[key] = r
        return r

    def copy(self, d: Sub, v, dt: DType) -> None:
        """d <- a value (register or constant) of dtype dt."""
        if isinstance(v, C):
            bits = const_bits(v.value, dt)
            if is_float(dt):
                self.emit(MInst("fli64" if dt.itemsize == 8 else "fli32", [d, imm(bits)], 1))
            else:
                self.emit(MInst("li", [d, imm(bits)], 1))
        elif v is not d:
            self.emit(MInst("fmov" if d.rc == "x" else "mov", [d, v], 1))

    def op(self, name: str, *ops, ndef: int = 1, **kw) -> MInst:
        """Emit one machine-IR instruction."""
        return self.emit(MInst(name, list(ops), ndef, **kw))

    def normalize(self, d: Sub, t: Sub, dt: DType) -> None:
        """d <- t re-extended to dt's convention (module docstring): small integers only, else a copy."""
        ext = {"int8": "movsx8", "uint8": "movzx8", "int16": "movsx16", "uint16": "movzx16"}.get(dt.name)
        if ext:
            self.op(ext, d, t)
        else:
            self.copy(d, t, dt)


def copy_of(m: MInst) -> tuple[Sub, Sub] | None:
    """(destination, source) when m is a plain register copy (for compiler.backend.coalesce)."""
    if m.op in ("mov", "fmov"):
        d, s = m.ops
        if isinstance(d, Sub) and isinstance(s, Sub):
            return d, s
    return None


# ---- structure rules ---------------------------------------------------------------------------------------------
@RULES.rule(Ops.SINK)
def _sink(s: X86Selector, u: UOp) -> None:
    pass


@RULES.rule(Ops.PARAM)
def _param(s: X86Selector, u: UOp) -> None:
    s.hoisted.append(MInst("ld.64", [s.dst(u), imm(1), imm(abi.KERNARG + 8 * u.arg)], 1))


@RULES.rule(Ops.CONST)
def _const(s: X86Selector, u: UOp) -> None:
    pass  # an operand; a register only where an instruction needs one (X86Selector.materialize)


@RULES.rule(Ops.LDS)
def _lds(s: X86Selector, u: UOp) -> None:
    s.set(u, C(s.lds_address[u.arg], dtypes.int64, None))


@RULES.rule(Ops.SPECIAL)
def _special(s: X86Selector, u: UOp) -> None:
    s.set(u, s.ids[u.arg[:2]])


@RULES.rule(Ops.RANGE)
def _range(s: X86Selector, u: UOp) -> None:
    s.loops_seen += 1
    r = s.dst(u)
    s.op("li", r, imm(0))
    s.emit(label(f".Lloop{s.pos[u]}"))


@RULES.rule(Ops.ENDRANGE)
def _endrange(s: X86Selector, u: UOp) -> None:
    s.loops_seen += 1
    rng = u.src[0]
    r = s.val[rng]
    s.op("add32", r, r, imm(1))
    s.emit(MInst("br.l.32", [r, s.operand(s.src(rng.src[0]), dtypes.int32)], 0, target=f".Lloop{s.pos[rng]}"))


@RULES.rule(Ops.DEFINE_ACC)
def _define_acc(s: X86Selector, u: UOp) -> None:
    s.copy(s.dst(u), s.src(u.src[0]), u.dtype)


@RULES.rule(Ops.BARRIER)
def _barrier(s: X86Selector, u: UOp) -> None:
    s.op("call.barrier", ndef=0)
