"""Rendering a linearized kernel as LLVM IR for the amdgcn target (compiled by compiler.llvm).

Every IR op keeps its defined semantics in the text: integer division and remainder by 0 give 0 (and
INT_MIN / -1 wraps), shifts by the type's width or more give 0 (or the sign), float max/min propagate NaN,
gated loads read index 0 and select 0 (so a false gate never reads out of bounds), gated stores branch
around the store. Loops are counted blocks (at least two iterations: a one-trip RANGE is a constant);
an accumulator is an SSA value with a phi in the header of every loop that assigns it. A loop whose
trips times body exceed UNROLL_BUDGET uops gets an unroll count that keeps an unrolled body within it:
LLVM unrolls a 16-trip loop fully, and a big fully unrolled body hoists its loads into more registers
than a work-item has (the 4x4 matmul tile spilled to scratch).
"""

from __future__ import annotations

import struct

import numpy as np

from compiler.dtypes import DType, PtrDType, dtypes, to_bf16_bits
from compiler.ir.linearize import LinearKernel, loops_of
from compiler.ir.ops import Ops, UOp

_TYPES = {"bool": "i1", "int8": "i8", "uint8": "i8", "int16": "i16", "uint16": "i16", "int32": "i32",
          "uint32": "i32", "int64": "i64", "uint64": "i64", "float16": "half", "bfloat16": "bfloat",
          "float32": "float", "float64": "double"}
_SUFFIX = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64"}
_SPECIALS = {("group", 0): "workgroup.id.x", ("group", 1): "workgroup.id.y", ("group", 2): "workgroup.id.z",
             ("local", 0): "workitem.id.x", ("local", 1): "workitem.id.y", ("local", 2): "workitem.id.z"}
UNROLL_BUDGET = 512
_INTRINSIC = {Ops.EXP2: "exp2", Ops.LOG2: "log2", Ops.SIN: "sin", Ops.SQRT: "sqrt", Ops.TRUNC: "trunc"}


def lty(dt) -> str:
    """The LLVM type of an IR dtype."""
    if isinstance(dt, PtrDType):
        return f"ptr addrspace({1 if dt.space == 'global' else 3})"
    return _TYPES[dt.name]


def lconst(dt: DType, v) -> str:
    """An LLVM literal of v in type dt (floats by their exact bits)."""
    if dt.kind == "b":
        return "true" if v else "false"
    if dt.is_int:
        return str(int(v))
    if dt.name == "float64" or dt.name == "float32":
        x = float(v) if dt.name == "float64" else float(struct.unpack("<f", struct.pack("<f", float(v)))[0])
        return f"0x{struct.unpack('<Q', struct.pack('<d', x))[0]:016X}"
    if dt.name == "float16":
        return f"0xH{struct.unpack('<H', struct.pack('<e', float(v)))[0]:04X}"
    return f"0xR{int(to_bf16_bits(np.array([v], np.float32))[0]):04X}"


class _Render:
    def __init__(self, k: LinearKernel):
        self.k = k
        self.lines: list[str] = []
        self.acc: dict[UOp, str] = {}  # an accumulator's current SSA value
        self.phis: dict[UOp, list[tuple[UOp, int, str]]] = {}  # loop -> (acc, line to patch, phi name)
        scope = loops_of(k.uops)
        self.assigned: dict[UOp, list[UOp]] = {}  # loop -> accumulators assigned inside it
        for u in k.uops:
            if u.op is Ops.ASSIGN:
                for r in scope[u]:
                    if u.src[0] not in self.assigned.setdefault(r, []):
                        self.assigned[r].append(u.src[0])
        self.decls: set[str] = set()
        self.globals: list[str] = []
        self.names: dict[UOp, str] = {}
        self.n = 0
        self.block = "entry"
        self.loops: dict[UOp, tuple[str, str]] = {}
        self.meta: list[str] = []  # loop metadata nodes
        self.body: dict[UOp, int] = {}  # loop -> uops inside it
        for u in k.uops:
            for r in scope[u] - {u}:
                self.body[r] = self.body.get(r, 0) + 1

    def tmp(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.block = name

    def declare(self, sig: str) -> None:
        self.decls.add(f"declare {sig}")

    def val(self, u: UOp) -> str:
        """The LLVM value of u at the current point (an accumulator is loaded where it is read)."""
        if u.op is Ops.CONST:
            return lconst(u.dtype, u.arg)
        if u.op is Ops.DEFINE_ACC:
            return self.acc[u]
        return self.names[u]

    def render(self) -> str:
        k = self.k
        args = ", ".join(f"{lty(p)} noalias align {p.itemsize} %data{i}" for i, p in enumerate(k.params))
        for u in k.uops:
            self.op(u)
        block = k.geometry.block
        threads = block[0] * block[1] * block[2]
        body = [f"define amdgpu_kernel void @{k.name}({args}) #0 {{", "entry:",
                *self.lines, "  ret void", "}"]
        attrs = f'attributes #0 = {{ nounwind "amdgpu-flat-work-group-size"="1,{threads}" }}'
        return "\n".join([*sorted(self.decls), *self.globals, *body, attrs, *self.meta]) + "\n"

    # ---- one uop ------------------------------------------------------------------------------------------
    def op(self, u: UOp) -> None:  # noqa: C901 - one branch per structural op
        op, s = u.op, u.src
        if op in (Ops.SINK, Ops.CONST):
            return
        if op is Ops.PARAM:
            self.names[u] = f"%data{u.arg}"
        elif op is Ops.LDS:
            name = f"@lds{u.arg}"
            self.globals.append(f"{name} = internal unnamed_addr addrspace(3) global [{u.dtype.size} x "
                                f"{lty(u.dtype.base)}] undef, align 16")
            self.names[u] = name
        elif op is Ops.SPECIAL:
            fn = f"llvm.amdgcn.{_SPECIALS[u.arg[:2]]}"
            self.declare(f"i32 @{fn}()")
            self.names[u] = t = self.tmp()
            self.emit(f"{t} = call i32 @{fn}()")
        elif op is Ops.RANGE:
            self.open_loop(u)
        elif op is Ops.ENDRANGE:
            self.close_loop(s[0])
        elif op is Ops.DEFINE_ACC:
            self.acc[u] = self.val(s[0])
        elif op is Ops.ASSIGN:
            self.acc[s[0]] = self.names[u] = self.val(s[1])
        elif op is Ops.AFTER:
            self.names[u] = self.val(s[0]) if s[0].op is Ops.DEFINE_ACC else self.names[s[0]]
        elif op is Ops.BARRIER:
            self.declare("void @llvm.amdgcn.s.barrier()")
            self.emit('fence syncscope("workgroup") release')
            self.emit("call void @llvm.amdgcn.s.barrier()")
            self.emit('fence syncscope("workgroup") acquire')
        elif op is Ops.LOAD:
            self.load(u)
        elif op is Ops.STORE:
            self.store(u)
        else:
            self.names[u] = self.alu(u)

    def open_loop(self, r: UOp) -> None:
        n = r.arg
        head, latch = f"loop{n}", f"loop{n}.latch"
        pred = self.block
        self.emit(f"br label %{head}")
        self.label(head)
        self.names[r] = f"%r{n}"
        self.emit(f"%r{n} = phi i32 [ 0, %{pred} ], [ %r{n}.next, %{latch} ]")
        self.loops[r] = (head, latch)
        for acc in self.assigned.get(r, []):
            name = f"%acc{acc.arg}.r{n}"
            self.emit(f"{name} = phi {lty(acc.dtype)} [ {self.acc[acc]}, %{pred} ], [ LATCH, %{latch} ]")
            self.phis.setdefault(r, []).append((acc, len(self.lines) - 1, name))
            self.acc[acc] = name

    def close_loop(self, r: UOp) -> None:
        n = r.arg
        head, latch = self.loops[r]
        self.emit(f"br label %{latch}")
        for acc, line, _ in self.phis.get(r, []):
            self.lines[line] = self.lines[line].replace("LATCH", self.acc[acc])
        self.label(latch)
        self.emit(f"%r{n}.next = add i32 %r{n}, 1")
        self.emit(f"%r{n}.more = icmp slt i32 %r{n}.next, {self.val(r.src[0])}")
        self.emit(f"br i1 %r{n}.more, label %{head}, label %loop{n}.exit{self.unroll_hint(r)}")
        self.label(f"loop{n}.exit")

    def unroll_hint(self, r: UOp) -> str:
        """`, !llvm.loop !n` with an unroll count for a loop too big to unroll fully (module docstring)."""
        body, trips = max(self.body.get(r, 1), 1), r.src[0].arg
        if body * trips <= UNROLL_BUDGET:
            return ""
        count = 1
        while count * 2 * body <= UNROLL_BUDGET and count * 2 <= trips:
            count *= 2
        n = len(self.meta)
        self.meta += [f"!{1000 + n} = distinct !{{!{1000 + n}, !{1001 + n}}}",
                      f'!{1001 + n} = !{{!"llvm.loop.unroll.count", i32 {count}}}']
        return f", !llvm.loop !{1000 + n}"

    def address(self, buf: UOp, idx: str) -> str:
        pt = buf.dtype
        p = self.tmp()
        self.emit(f"{p} = getelementptr inbounds {lty(pt.base)}, {lty(pt)} {self.names[buf]}, i32 {idx}")
        return p

    def load(self, u: UOp) -> None:
        buf, idx = u.src[0], self.val(u.src[1])
        gate = self.val(u.src[2]) if len(u.src) > 2 else None
        if gate is not None:
            safe = self.tmp()
            self.emit(f"{safe} = select i1 {gate}, i32 {idx}, i32 0")
            idx = safe
        p = self.address(buf, idx)
        t = self.tmp()
        self.emit(f"{t} = load {lty(u.dtype)}, {lty(buf.dtype)} {p}")
        if gate is not None:
            g = self.tmp()
            self.emit(f"{g} = select i1 {gate}, {lty(u.dtype)} {t}, {lty(u.dtype)} {lconst(u.dtype, 0)}")
            t = g
        self.names[u] = t

    def store(self, u: UOp) -> None:
        buf, idx, v = u.src[0], self.val(u.src[1]), self.val(u.src[2])
        gate = self.val(u.src[3]) if len(u.src) > 3 else None
        if gate is not None:
            n = self.n = self.n + 1
            self.emit(f"br i1 {gate}, label %store{n}, label %store{n}.done")
            self.label(f"store{n}")
        p = self.address(buf, idx)
        self.emit(f"store {lty(u.src[2].dtype)} {v}, {lty(buf.dtype)} {p}")
        if gate is not None:
            self.emit(f"br label %store{n}.done")
            self.label(f"store{n}.done")

    # ---- ALU ------------------------------------------------------------------------------------------------
    def alu(self, u: UOp) -> str:  # noqa: C901 - a table of the IR's ALU ops
        op, dt = u.op, u.dtype
        srcs = [self.val(x) for x in u.src]
        sdt = u.src[0].dtype
        ty, sty = lty(dt), lty(sdt)
        t = self.tmp()
        fl, unsigned = sdt.is_float, sdt.is_unsigned
        if op in (Ops.ADD, Ops.SUB, Ops.MUL):
            self.emit(f"{t} = {'f' if fl else ''}{op.name.lower()} {ty} {srcs[0]}, {srcs[1]}")
        elif op is Ops.FDIV:
            self.emit(f"{t} = fdiv {ty} {srcs[0]}, {srcs[1]}")
        elif op in (Ops.IDIV, Ops.MOD):
            return self.int_div(u, srcs)
        elif op is Ops.NEG:
            self.emit(f"{t} = fneg {ty} {srcs[0]}" if fl else f"{t} = sub {ty} 0, {srcs[0]}")
        elif op in (Ops.MAX, Ops.MIN):
            name = {Ops.MAX: "maximum", Ops.MIN: "minimum"}[op] if fl else \
                (("u" if unsigned else "s") + op.name.lower())
            if dt == dtypes.bool:
                self.emit(f"{t} = {'or' if op is Ops.MAX else 'and'} i1 {srcs[0]}, {srcs[1]}")
            else:
                fn = f"llvm.{name}.{_SUFFIX[dt.name] if fl else ty}"
                self.declare(f"{ty} @{fn}({ty}, {ty})")
                self.emit(f"{t} = call {ty} @{fn}({ty} {srcs[0]}, {ty} {srcs[1]})")
        elif op in (Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE):
            if fl:
                cond = {Ops.CMPLT: "olt", Ops.CMPEQ: "oeq", Ops.CMPNE: "une"}[op]
                self.emit(f"{t} = fcmp {cond} {sty} {srcs[0]}, {srcs[1]}")
            else:
                cond = {Ops.CMPLT: "ult" if unsigned else "slt", Ops.CMPEQ: "eq", Ops.CMPNE: "ne"}[op]
                self.emit(f"{t} = icmp {cond} {sty} {srcs[0]}, {srcs[1]}")
        elif op in (Ops.AND, Ops.OR, Ops.XOR):
            self.emit(f"{t} = {op.name.lower()} {ty} {srcs[0]}, {srcs[1]}")
        elif op is Ops.NOT:
            self.emit(f"{t} = xor {ty} {srcs[0]}, {'true' if dt == dtypes.bool else -1}")
        elif op in (Ops.SHL, Ops.SHR):
            return self.shift(u, srcs)
        elif op is Ops.WHERE:
            self.emit(f"{t} = select i1 {srcs[0]}, {ty} {srcs[1]}, {ty} {srcs[2]}")
        elif op is Ops.MULACC:
            if fl:
                fn = f"llvm.fma.{_SUFFIX[dt.name]}"
                self.declare(f"{ty} @{fn}({ty}, {ty}, {ty})")
                self.emit(f"{t} = call {ty} @{fn}({ty} {srcs[0]}, {ty} {srcs[1]}, {ty} {srcs[2]})")
            else:
                m = self.tmp()
                self.emit(f"{m} = mul {ty} {srcs[0]}, {srcs[1]}")
                self.emit(f"{t} = add {ty} {m}, {srcs[2]}")
        elif op in _INTRINSIC:
            fn = f"llvm.{_INTRINSIC[op]}.{_SUFFIX[dt.name]}"
            self.declare(f"{ty} @{fn}({ty})")
            self.emit(f"{t} = call {ty} @{fn}({ty} {srcs[0]})")
        elif op is Ops.CAST:
            return self.cast(u.src[0].dtype, dt, srcs[0])
        elif op is Ops.BITCAST:
            self.emit(f"{t} = bitcast {sty} {srcs[0]} to {ty}")
        elif op is Ops.WMMA:
            return self.wmma(u, srcs)
        elif op is Ops.GEP:
            self.emit(f"{t} = extractelement <8 x float> {srcs[0]}, i32 {u.arg}")
        else:
            raise NotImplementedError(f"LLVM backend: no rendering for {op.name}")
        return t

    def vector(self, ty: str, elems: list[str], n: int) -> str:
        """A <n x ty> value built from scalars."""
        v = "poison"
        for i, e in enumerate(elems):
            t = self.tmp()
            self.emit(f"{t} = insertelement <{n} x {ty}> {v}, {ty} {e}, i32 {i}")
            v = t
        return v

    def wmma(self, u: UOp, srcs: list[str]) -> str:
        """D = A x B + C on the matrix cores (llvm.amdgcn.wmma.f32.16x16x16.{f16,bf16}, wave32)."""
        el = "half" if u.arg == "float16" else "i16"
        ab = srcs[:32]
        if u.arg == "bfloat16":  # the intrinsic takes bfloat16 bit patterns as i16
            bits = []
            for x in ab:
                t = self.tmp()
                self.emit(f"{t} = bitcast bfloat {x} to i16")
                bits.append(t)
            ab = bits
        a, b = self.vector(el, ab[:16], 16), self.vector(el, ab[16:], 16)
        acc = self.vector("float", srcs[32:], 8)
        fn = f"llvm.amdgcn.wmma.f32.16x16x16.{'f16' if u.arg == 'float16' else 'bf16'}"
        self.declare(f"<8 x float> @{fn}(<16 x {el}>, <16 x {el}>, <8 x float>)")
        t = self.tmp()
        self.emit(f"{t} = call <8 x float> @{fn}(<16 x {el}> {a}, <16 x {el}> {b}, <8 x float> {acc})")
        return t

    def int_div(self, u: UOp, srcs: list[str]) -> str:
        """x // y and x % y with y == 0 -> 0 and (signed) y == -1 -> -x / 0, never LLVM's undefined cases."""
        ty = lty(u.dtype)
        a, b = srcs
        unsigned = u.dtype.is_unsigned
        zero = self.tmp()
        self.emit(f"{zero} = icmp eq {ty} {b}, 0")
        bad = zero
        if not unsigned:
            m1, bad = self.tmp(), self.tmp()
            self.emit(f"{m1} = icmp eq {ty} {b}, -1")
            self.emit(f"{bad} = or i1 {zero}, {m1}")
        d, q, r = self.tmp(), self.tmp(), self.tmp()
        self.emit(f"{d} = select i1 {bad}, {ty} 1, {ty} {b}")
        kind = ("u" if unsigned else "s") + ("div" if u.op is Ops.IDIV else "rem")
        self.emit(f"{q} = {kind} {ty} {a}, {d}")
        if not unsigned:
            alt, q2 = self.tmp(), self.tmp()
            self.emit(f"{alt} = sub {ty} 0, {a}" if u.op is Ops.IDIV else f"{alt} = add {ty} 0, 0")
            self.emit(f"{q2} = select i1 {m1}, {ty} {alt}, {ty} {q}")
            q = q2
        self.emit(f"{r} = select i1 {zero}, {ty} 0, {ty} {q}")
        return r

    def shift(self, u: UOp, srcs: list[str]) -> str:
        """Shifts by >= the width give 0 (logical) or the sign (arithmetic), as NumPy does."""
        dt, ty = u.dtype, lty(u.dtype)
        a, b = srcs
        big, s, r = self.tmp(), self.tmp(), self.tmp()
        self.emit(f"{big} = icmp uge {ty} {b}, {dt.bits}")
        if u.op is Ops.SHL:
            self.emit(f"{s} = shl {ty} {a}, {b}")
            self.emit(f"{r} = select i1 {big}, {ty} 0, {ty} {s}")
        elif dt.is_unsigned:
            self.emit(f"{s} = lshr {ty} {a}, {b}")
            self.emit(f"{r} = select i1 {big}, {ty} 0, {ty} {s}")
        else:
            amt = self.tmp()
            self.emit(f"{amt} = select i1 {big}, {ty} {dt.bits - 1}, {ty} {b}")
            self.emit(f"{r} = ashr {ty} {a}, {amt}")
        return r

    def cast(self, src: DType, dst: DType, v: str) -> str:
        """Value conversion: ints wrap or extend by the source's signedness; floats round to nearest; float->int
        truncates; x -> bool is x != 0."""
        t = self.tmp()
        st, dty = lty(src), lty(dst)
        if dst == dtypes.bool:
            if src.is_float:
                self.emit(f"{t} = fcmp une {st} {v}, {lconst(src, 0)}")
            else:
                self.emit(f"{t} = icmp ne {st} {v}, 0")
        elif src.is_float and dst.is_float:
            if src.itemsize == dst.itemsize:  # float16 <-> bfloat16 goes through float
                mid = self.cast(src, dtypes.float32, v)
                return self.cast(dtypes.float32, dst, mid)
            op = "fpext" if dst.itemsize > src.itemsize else "fptrunc"
            self.emit(f"{t} = {op} {st} {v} to {dty}")
        elif src.is_float:
            self.emit(f"{t} = {'fptoui' if dst.is_unsigned else 'fptosi'} {st} {v} to {dty}")
        elif dst.is_float:
            self.emit(f"{t} = {'uitofp' if src.is_unsigned else 'sitofp'} {st} {v} to {dty}")
        elif dst.bits == src.bits:
            return v
        elif dst.bits < src.bits:
            self.emit(f"{t} = trunc {st} {v} to {dty}")
        else:
            self.emit(f"{t} = {'zext' if src.is_unsigned else 'sext'} {st} {v} to {dty}")
        return t


def render(k: LinearKernel) -> str:
    """LLVM IR text of a linearized kernel."""
    return _Render(k).render()
