"""LOAD and STORE: global buffers through their base register, LDS at its fixed address (runtime.cpu.abi), an
element index scaled by the item size in the addressing mode.

An index whose value range may be negative is sign-extended to 64 bits first (movsxd); a non-negative int32
index is used as it is (its register's upper half is zero). A constant index, and a constant added to a
non-negative index, go into the displacement. A gated access is a branch around it (a false gate loads 0 and
touches no memory). float16 moves as its 16-bit pattern (converted at the access), bfloat16 as the upper half
of its float32, bool as a byte 0/1.
"""

from __future__ import annotations

from compiler.backend.x86.select import RULES, C, X86Selector, imm, is_float
from compiler.dtypes import DType
from compiler.ir.ops import Ops, UOp
from compiler.ir.ranges import vmin

_LOAD_KIND = {"bool": "u8", "uint8": "u8", "int8": "s8", "uint16": "u16", "int16": "s16", "int32": "32",
              "uint32": "32", "int64": "64", "uint64": "64", "float32": "f32", "float64": "f64",
              "float16": "u16", "bfloat16": "u16"}
_STORE_KIND = {1: "8", 2: "16", 4: "32", 8: "64"}
DISP_MAX = (1 << 31) - 1


def address_of(s: X86Selector, buf, idx: UOp, itemsize: int) -> tuple[str, list]:
    """(mods, operands) of [base + index*itemsize + disp] for compiler.backend.x86.expand.address."""
    disp = 0
    if idx.op is Ops.ADD and idx.src[1].op is Ops.CONST and vmin(idx.src[0]) >= 0 and vmin(idx) >= 0 and \
            abs(int(idx.src[1].arg) * itemsize) < 1 << 24:
        disp, idx = int(idx.src[1].arg) * itemsize, idx.src[0]
    i = s.src(idx)
    ops: list = []
    mods = ""
    if isinstance(buf, C):  # LDS: a fixed address
        disp += int(buf.value)
    else:
        ops.append(buf)
        mods += "b"
    if isinstance(i, C) and abs(int(i.value) * itemsize + disp) <= DISP_MAX:
        disp += int(i.value) * itemsize
    else:
        r = s.reg(i)
        if idx.dtype.itemsize < 8 and vmin(idx) < 0:
            t = s.g()
            s.op("movsxd", t, r)
            r = t
        ops.append(r)
        mods += "i"
    return mods, [*ops, imm(itemsize), imm(disp)]


@RULES.rule(Ops.LOAD)
def _load(s: X86Selector, u: UOp) -> None:
    dt: DType = u.dtype
    buf = s.src(u.src[0])
    gate = s.src(u.src[2]) if len(u.src) > 2 else None
    if isinstance(gate, C):
        if not gate.value:
            s.copy(s.dst(u), C(0.0 if is_float(dt) else 0, dt, None), dt)
            return
        gate = None
    mods, ops = address_of(s, buf, u.src[1], dt.itemsize)
    flags = frozenset({"gated"}) if gate is not None else frozenset()
    tail = [gate] if gate is not None else []
    kind = _LOAD_KIND[dt.name]
    if dt.name in ("float16", "bfloat16"):
        bits = s.g()
        s.op(f"ld.{kind}", bits, *ops, *tail, mods=mods, flags=flags)
        if dt.name == "float16":
            s.op("f16.value", s.dst(u), bits)
        else:
            t = s.g()
            s.op("shl32", t, bits, imm(16))
            s.op("movd.gx", s.dst(u), t)
        return
    s.op(f"ld.{kind}", s.dst(u), *ops, *tail, mods=mods, flags=flags)


@RULES.rule(Ops.STORE)
def _store(s: X86Selector, u: UOp) -> None:
    buf = s.src(u.src[0])
    value_uop = u.src[2]
    dt: DType = value_uop.dtype
    gate = s.src(u.src[3]) if len(u.src) > 3 else None
    if isinstance(gate, C):
        if not gate.value:
            return
        gate = None
    v = s.rsrc(value_uop)
    if dt.name == "float16":
        t = s.g()
        s.op("f16.bits", t, v)
        v, kind = t, "16"
    elif dt.name == "bfloat16":
        t, r = s.g(), s.g()
        s.op("movd.xg", t, v)
        s.op("shr32", r, t, imm(16))
        v, kind = r, "16"
    elif dt.name == "float32":
        kind = "f32"
    elif dt.name == "float64":
        kind = "f64"
    else:
        kind = _STORE_KIND[dt.itemsize]
    mods, ops = address_of(s, buf, u.src[1], dt.itemsize)
    flags = frozenset({"gated"}) if gate is not None else frozenset()
    s.op(f"st.{kind}", *ops, v, *([gate] if gate is not None else []), ndef=0, mods=mods, flags=flags)

