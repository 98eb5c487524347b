"""Index proofs (SIMGPU_CHECK_OOB=1): every load and store of a linearized kernel is proven inside its buffer
with z3, for all values of the ids and loop variables the launch allows, under the access's gate.

The proof reads the final, linearized IR, so it checks what the backend renders. Integer index arithmetic
becomes z3 integer arithmetic (IDIV/MOD with the IR's truncating semantics); anything the proof cannot
see through (loaded values, accumulators, float-to-int conversions) becomes a fresh variable over its
type's range, which can only make a proof fail, never pass wrongly. Index arithmetic whose value range
(compiler.ir.ranges) may leave its type is refused too, with or without the proof (check_ranges): the integer
proof would not describe the wrapped value the hardware computes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from compiler.dtypes import DType
from compiler.errors import CompileError
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import Ops, UOp
from compiler.ir.ranges import vrange

_WRAPPING = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.SHL, Ops.MULACC}


@dataclass
class ProofResult:
    """What a proof checked and how long it took."""

    accesses: int
    seconds: float


def fmt(u: UOp) -> str:
    """An index expression as infix text (ids and loop variables by name)."""
    if u.op is Ops.CONST:
        return str(u.arg)
    if u.op is Ops.SPECIAL:
        return _special_name(u)
    if u.op is Ops.RANGE:
        return f"loop{u.arg}"
    sym = {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.IDIV: "//", Ops.MOD: "%", Ops.CMPLT: "<", Ops.CMPEQ: "==",
           Ops.CMPNE: "!=", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^", Ops.SHL: "<<", Ops.SHR: ">>"}
    if u.op in sym:
        return f"({fmt(u.src[0])} {sym[u.op]} {fmt(u.src[1])})"
    if u.op is Ops.NOT:
        return f"!{fmt(u.src[0])}"
    if u.op is Ops.WHERE:
        return f"({fmt(u.src[1])} if {fmt(u.src[0])} else {fmt(u.src[2])})"
    return f"{u.op.name.lower()}({', '.join(fmt(s) for s in u.src)})"


def _special_name(u: UOp) -> str:
    kind, axis, _ = u.arg
    return f"{'group_id' if kind == 'group' else 'local_id'}.{'xyz'[axis]}"


class _Z3:
    """Translation of IR nodes to z3 terms, with the variables' bounds."""

    def __init__(self):
        import z3
        self.z3 = z3
        self.terms: dict[UOp, object] = {}
        self.bounds: list = []
        self.named: dict[str, object] = {}
        self.fresh = 0

    def var(self, name: str, dt: DType | None, lo=None, hi=None):
        z3 = self.z3
        if dt is not None and dt.kind == "b":
            return z3.Bool(name)
        v = z3.Int(name)
        lo = dt.min if lo is None and dt is not None else lo
        hi = dt.max if hi is None and dt is not None else hi
        if lo is not None:
            self.bounds.append(v >= lo)
        if hi is not None:
            self.bounds.append(v <= hi)
        return v

    def unknown(self, u: UOp):
        self.fresh += 1
        dt = u.dtype if isinstance(u.dtype, DType) and not u.dtype.is_float else None
        return self.var(f"v{self.fresh}", dt)

    def term(self, u: UOp):
        if u not in self.terms:
            self.terms[u] = self._term(u)
        return self.terms[u]

    def _term(self, u: UOp):  # noqa: C901 - one case per op
        z3, op = self.z3, u.op
        dt = u.dtype
        if not isinstance(dt, DType) or (dt.is_float and op not in (Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE)):
            return self.unknown(u)
        if op is Ops.CONST:
            return z3.BoolVal(bool(u.arg)) if dt.kind == "b" else z3.IntVal(int(u.arg))
        if op is Ops.SPECIAL:
            v = self.var(_special_name(u), None, 0, u.arg[2] - 1)
            self.named[_special_name(u)] = v
            return v
        if op is Ops.RANGE:
            v = self.var(f"loop{u.arg}", None, 0, u.src[0].arg - 1)
            self.named[f"loop{u.arg}"] = v
            return v
        s = u.src
        if op in (Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE) and s[0].dtype.is_float:
            return self.unknown(u)
        t = [self.term(x) for x in s] if op not in (Ops.LOAD, Ops.DEFINE_ACC, Ops.AFTER, Ops.ASSIGN) else []
        if op is Ops.ADD:
            return t[0] + t[1] if dt.kind != "b" else z3.Or(t[0], t[1])
        if op is Ops.SUB:
            return t[0] - t[1]
        if op is Ops.MUL:
            return t[0] * t[1] if dt.kind != "b" else z3.And(t[0], t[1])
        if op is Ops.NEG:
            return -t[0]
        if op is Ops.MULACC:
            return t[0] * t[1] + t[2]
        if op in (Ops.IDIV, Ops.MOD):
            return self.divmod(op, t[0], t[1], s[1])
        if op in (Ops.MAX, Ops.MIN):
            if dt.kind == "b":
                return (z3.Or if op is Ops.MAX else z3.And)(t[0], t[1])
            return z3.If(t[0] >= t[1], t[0], t[1]) if op is Ops.MAX else z3.If(t[0] <= t[1], t[0], t[1])
        if op is Ops.CMPLT:
            return t[0] < t[1] if s[0].dtype.kind != "b" else z3.And(z3.Not(t[0]), t[1])
        if op is Ops.CMPEQ:
            return t[0] == t[1]
        if op is Ops.CMPNE:
            return t[0] != t[1]
        if dt.kind == "b" and op in (Ops.AND, Ops.OR, Ops.XOR, Ops.NOT):
            return {Ops.AND: z3.And, Ops.OR: z3.Or, Ops.XOR: z3.Xor, Ops.NOT: z3.Not}[op](*t)
        if op is Ops.WHERE:
            return z3.If(t[0], t[1], t[2])
        if op is Ops.SHL and s[1].op is Ops.CONST and 0 <= s[1].arg < dt.bits:
            return t[0] * (1 << s[1].arg)
        if op is Ops.CAST and isinstance(s[0].dtype, DType) and not s[0].dtype.is_float:
            src = s[0].dtype
            if src.kind == "b":
                return z3.If(t[0], z3.IntVal(1), z3.IntVal(0)) if dt.kind != "b" else t[0]
            if dt.kind == "b":
                return t[0] != 0
            if dt.min <= src.min and src.max <= dt.max:
                return t[0]
        return self.unknown(u)

    def divmod(self, op: Ops, a, b, bu: UOp):
        z3 = self.z3
        if bu.op is Ops.CONST and bu.arg > 0:
            q = z3.If(a >= 0, a / bu.arg, -((-a) / bu.arg))
            return q if op is Ops.IDIV else a - bu.arg * q
        q = z3.If(b == 0, 0, z3.If(a >= 0, z3.If(b > 0, a / b, -(a / -b)),
                                   z3.If(b > 0, -((-a) / b), (-a) / -b)))
        return q if op is Ops.IDIV else z3.If(b == 0, 0, a - b * q)


def _buffer(u: UOp) -> UOp:
    while u.op is Ops.AFTER:
        u = u.src[0]
    return u


def _buffer_name(u: UOp) -> str:
    return f"data{u.arg}" if u.op is Ops.PARAM else f"lds{u.arg}"


def _check_wrap(k: LinearKernel, access: UOp, idx: UOp) -> None:
    for x in idx.toposort():
        if x.op in _WRAPPING and isinstance(x.dtype, DType) and x.dtype.is_int and \
                vrange(x) == (x.dtype.min, x.dtype.max):
            raise CompileError(f"kernel {k.name}: index {fmt(idx)} of {_buffer_name(_buffer(access.src[0]))}: "
                               f"{fmt(x)} may overflow {x.dtype.name}")


def check_ranges(k: LinearKernel) -> None:
    """CompileError when the index arithmetic of an access may leave its integer type (value ranges, no z3). It
    runs for every kernel, proven or not: an index is 64-bit where it must be (compiler.ir.lower) or refused,
    never wrapped."""
    for u in k.uops:
        if u.op in (Ops.LOAD, Ops.STORE):
            _check_wrap(k, u, u.src[1])


def prove(k: LinearKernel) -> ProofResult:
    """Prove every access of k inside its buffer; CompileError naming kernel, buffer, index and a counterexample."""
    start = time.perf_counter()
    tr = _Z3()
    z3 = tr.z3
    solver = _solver(z3)
    accesses = [u for u in k.uops if u.op in (Ops.LOAD, Ops.STORE)]
    for u in accesses:
        buf = _buffer(u.src[0])
        size = buf.dtype.size
        idx = u.src[1]
        _check_wrap(k, u, idx)
        gated = len(u.src) == (3 if u.op is Ops.LOAD else 4)
        if idx.op is Ops.CONST and not gated and 0 <= idx.arg < size:
            continue
        i = tr.term(idx)
        gate = tr.term(u.src[-1]) if gated else z3.BoolVal(True)
        solver.push()
        solver.add(*tr.bounds, gate, z3.Or(i < 0, i >= size))
        result = solver.check()
        solver.pop()
        if result != z3.unsat:
            raise CompileError(_refuted(k, u, buf, idx, size, gated, tr))
    return ProofResult(len(accesses), time.perf_counter() - start)


_local = threading.local()


def _solver(z3):
    """This thread's solver, shared by every proof: each access is checked inside its own push/pop, so nothing of
    one check outlives it. Making a solver and its first push cost about 4 ms, most of a small kernel's proof (the
    ops suite proves over a thousand kernels per process)."""
    solver = getattr(_local, "solver", None)
    if solver is None:
        solver = _local.solver = z3.Solver()
    return solver


def _refuted(k, u, buf, idx, size, gated, tr) -> str:
    """The failure message, its counterexample from a fresh solver: the same whatever this process proved before
    (the shared solver's model could depend on its history)."""
    z3 = tr.z3
    solver = z3.Solver()
    gate = tr.term(u.src[-1]) if gated else z3.BoolVal(True)
    i = tr.term(idx)
    solver.push()
    solver.add(*tr.bounds, gate, z3.Or(i < 0, i >= size))
    result = solver.check()
    model = solver.model() if result == z3.sat else None
    return _failure(k, u, buf, idx, size, gated, model, tr, result)


def _failure(k, u, buf, idx, size, gated, model, tr, result) -> str:
    what = "load from" if u.op is Ops.LOAD else "store to"
    msg = (f"kernel {k.name}: {what} {_buffer_name(buf)} ({size} x {buf.dtype.base.name}) at index {fmt(idx)}"
           + (f" (gate {fmt(u.src[-1])})" if gated else "") + " may be out of bounds")
    if model is None:
        return msg + f" (z3: {result})"
    vals = {n: model.eval(v, model_completion=True) for n, v in sorted(tr.named.items())}
    at = model.eval(tr.term(idx), model_completion=True)
    return msg + f": index {at} with " + ", ".join(f"{n}={v}" for n, v in vals.items())
