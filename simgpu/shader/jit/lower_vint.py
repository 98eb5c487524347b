"""VALU integer operations for the translator (the interpreter's vector.int_arith, int_bits, int_mul,
cmp_int and lane.py), over <lanes x i32/i64> values: moves and selects, adds with carries, shifts and
logic, multiplies and multiply-adds, bit fields and counts, min/max, integer compares, lane reads."""

from __future__ import annotations

from simgpu.shader.jit.lower import Lowering, Unsupported, translates
from simgpu.shader.jit.lower_valu import Op, _signed, emits, scalar_src


def _c(op: Op, v: int, bits: int = 32) -> str:
    return op.b.splat(f"i{bits}", _signed(str(v), bits))


def _bin(instr: str):
    return lambda op, a, b: op.b.op(f"{instr} {op.b.v32} {a}, {b}")


# ---------------------------------------------------------------------------------------------- moves


@emits("v_mov_b32")
def _mov(op: Op, a):
    return a


@emits("v_cndmask_b32")
def _cndmask(op: Op, a, b, m):
    return op.b.op(f"select {op.b.vmask} {m}, {op.b.vf32} {b}, {op.b.vf32} {a}")


# ---------------------------------------------------------------------------------------------- add/sub

emits("v_add_nc_u32", "v_add_nc_i32")(_bin("add"))
emits("v_sub_nc_u32", "v_sub_nc_i32")(_bin("sub"))
emits("v_subrev_nc_u32")(lambda op, a, b: op.b.op(f"sub {op.b.v32} {b}, {a}"))
emits("v_and_b32")(_bin("and"))
emits("v_or_b32")(_bin("or"))
emits("v_xor_b32")(_bin("xor"))
emits("v_mul_lo_u32")(_bin("mul"))


def _carry(kind: str, with_carry: bool):
    """int_arith._carry_wrap: the carry of an add is a wrapped sum below an operand, the borrow of a
    subtract a subtrahend above the minuend (then again for the carry-in)."""
    def fn(op: Op, a, b, *m):
        bl = op.b
        v = bl.v32
        x, y = (b, a) if kind == "rsub" else (a, b)
        cin = bl.op(f"zext {bl.vmask} {m[0]} to {v}") if with_carry else None
        if kind == "add":
            d = bl.op(f"add {v} {x}, {y}")
            carry = bl.op(f"icmp ult {v} {d}, {x}")
            if cin is not None:
                d2 = bl.op(f"add {v} {d}, {cin}")
                carry = bl.op(f"or {bl.vmask} {carry}, {bl.op(f'icmp ult {v} {d2}, {d}')}")
                d = d2
        else:
            d = bl.op(f"sub {v} {x}, {y}")
            carry = bl.op(f"icmp ugt {v} {y}, {x}")
            if cin is not None:
                carry = bl.op(f"or {bl.vmask} {carry}, {bl.op(f'icmp ugt {v} {cin}, {d}')}")
                d = bl.op(f"sub {v} {d}, {cin}")
        return d, carry
    return fn


emits("v_add_co_u32")(_carry("add", False))
emits("v_sub_co_u32")(_carry("sub", False))
emits("v_subrev_co_u32")(_carry("rsub", False))
emits("v_add_co_ci_u32")(_carry("add", True))
emits("v_sub_co_ci_u32")(_carry("sub", True))
emits("v_subrev_co_ci_u32")(_carry("rsub", True))


@emits("v_add3_u32")
def _add3(op: Op, a, b, c):
    v = op.b.v32
    return op.b.op(f"add {v} {op.b.op(f'add {v} {a}, {b}')}, {c}")


@emits("v_xad_u32")
def _xad(op: Op, a, b, c):
    v = op.b.v32
    return op.b.op(f"add {v} {op.b.op(f'xor {v} {a}, {b}')}, {c}")


# ---------------------------------------------------------------------------------------------- shifts and logic


def _m(op: Op, s, bits: int = 32):
    return op.b.op(f"and {op.b.v32} {s}, {_c(op, bits - 1)}")


emits("v_lshlrev_b32")(lambda op, s, v: op.b.op(f"shl {op.b.v32} {v}, {_m(op, s)}"))
emits("v_lshrrev_b32")(lambda op, s, v: op.b.op(f"lshr {op.b.v32} {v}, {_m(op, s)}"))
emits("v_ashrrev_i32")(lambda op, s, v: op.b.op(f"ashr {op.b.v32} {v}, {_m(op, s)}"))


def _shift64(kind: str):
    def fn(op: Op, s, v):
        b = op.b
        amount = b.op(f"zext {b.v32} {_m(op, s, 64)} to {b.v64}")
        return b.op(f"{kind} {b.v64} {v}, {amount}")
    return fn


emits("v_lshlrev_b64")(_shift64("shl"))
emits("v_lshrrev_b64")(_shift64("lshr"))
emits("v_ashrrev_i64")(_shift64("ashr"))


@emits("v_lshl_add_u32")
def _lshl_add(op: Op, a, s, c):
    v = op.b.v32
    return op.b.op(f"add {v} {op.b.op(f'shl {v} {a}, {_m(op, s)}')}, {c}")


@emits("v_add_lshl_u32")
def _add_lshl(op: Op, a, b, s):
    v = op.b.v32
    return op.b.op(f"shl {v} {op.b.op(f'add {v} {a}, {b}')}, {_m(op, s)}")


@emits("v_lshl_or_b32")
def _lshl_or(op: Op, a, s, c):
    v = op.b.v32
    return op.b.op(f"or {v} {op.b.op(f'shl {v} {a}, {_m(op, s)}')}, {c}")


emits("v_not_b32")(lambda op, a: op.b.op(f"xor {op.b.v32} {a}, {_c(op, -1)}"))
emits("v_xnor_b32")(lambda op, a, b: op.b.op(f"xor {op.b.v32} {op.b.op(f'xor {op.b.v32} {a}, {b}')}, {_c(op, -1)}"))
emits("v_and_or_b32")(lambda op, a, b, c: op.b.op(f"or {op.b.v32} {op.b.op(f'and {op.b.v32} {a}, {b}')}, {c}"))
emits("v_or3_b32")(lambda op, a, b, c: op.b.op(f"or {op.b.v32} {op.b.op(f'or {op.b.v32} {a}, {b}')}, {c}"))
emits("v_xor3_b32")(lambda op, a, b, c: op.b.op(f"xor {op.b.v32} {op.b.op(f'xor {op.b.v32} {a}, {b}')}, {c}"))


# ---------------------------------------------------------------------------------------------- multiplies


def _wide(op: Op, x, signed: bool):
    return op.b.op(f"{'sext' if signed else 'zext'} {op.b.v32} {x} to {op.b.v64}")


def _hi(op: Op, p):
    b = op.b
    return b.op(f"trunc {b.v64} {b.op(f'lshr {b.v64} {p}, {_c(op, 32, 64)}')} to {b.v32}")


emits("v_mul_hi_u32")(lambda op, a, b: _hi(op, op.b.op(f"mul {op.b.v64} {_wide(op, a, False)}, {_wide(op, b, False)}")))
emits("v_mul_hi_i32")(lambda op, a, b: _hi(op, op.b.op(f"mul {op.b.v64} {_wide(op, a, True)}, {_wide(op, b, True)}")))


def _u24(op: Op, x):
    return op.b.op(f"and {op.b.v32} {x}, {_c(op, 0xFFFFFF)}")


def _i24(op: Op, x):
    b = op.b
    return b.op(f"ashr {b.v32} {b.op(f'shl {b.v32} {x}, {_c(op, 8)}')}, {_c(op, 8)}")


def _prod24(op: Op, a, b, signed: bool):
    f = _i24 if signed else _u24
    return op.b.op(f"mul {op.b.v64} {_wide(op, f(op, a), signed)}, {_wide(op, f(op, b), signed)}")


emits("v_mul_u32_u24")(lambda op, a, b: op.b.op(f"mul {op.b.v32} {_u24(op, a)}, {_u24(op, b)}"))
emits("v_mul_i32_i24")(lambda op, a, b: op.b.op(f"mul {op.b.v32} {_i24(op, a)}, {_i24(op, b)}"))
emits("v_mul_hi_u32_u24")(lambda op, a, b: _hi(op, _prod24(op, a, b, False)))
emits("v_mul_hi_i32_i24")(lambda op, a, b: _hi(op, _prod24(op, a, b, True)))
def _mad24(signed: bool):
    def fn(op: Op, a, b, c):
        f = _i24 if signed else _u24
        return op.b.op(f"add {op.b.v32} {op.b.op(f'mul {op.b.v32} {f(op, a)}, {f(op, b)}')}, {c}")
    return fn


emits("v_mad_u32_u24")(_mad24(False))
emits("v_mad_i32_i24")(_mad24(True))


@emits("v_mad_u64_u32")
def _mad_u64(op: Op, a, b, acc):
    """65-bit S0 * S1 + S2: the carry is bit 64 (the sum wrapped below the product)."""
    bl = op.b
    prod = bl.op(f"mul {bl.v64} {_wide(op, a, False)}, {_wide(op, b, False)}")
    full = bl.op(f"add {bl.v64} {prod}, {acc}")
    return full, (bl.op(f"icmp ult {bl.v64} {full}, {prod}") if op.carry_used else None)


@emits("v_mad_i64_i32")
def _mad_i64(op: Op, a, b, acc):
    bl = op.b
    v, m = bl.v64, bl.vmask
    prod = bl.op(f"mul {v} {_wide(op, a, True)}, {_wide(op, b, True)}")
    full = bl.op(f"add {v} {prod}, {acc}")
    zero = bl.splat("i64", 0)
    pneg, aneg, fneg = (bl.op(f"icmp slt {v} {x}, {zero}") for x in (prod, acc, full))
    overflow = bl.op(f"and {m} {bl.op(f'icmp eq {m} {pneg}, {aneg}')}, {bl.op(f'icmp ne {m} {fneg}, {pneg}')}")
    return full, bl.op(f"select {m} {overflow}, {m} {pneg}, {m} {fneg}")


# ---------------------------------------------------------------------------------------------- bit fields and counts


@emits("v_bfe_u32")
def _bfe_u(op: Op, a, off, width):
    b = op.b
    ones = b.op(f"sub {b.v32} {b.op(f'shl {b.v32} {_c(op, 1)}, {_m(op, width)}')}, {_c(op, 1)}")
    return b.op(f"and {b.v32} {b.op(f'lshr {b.v32} {a}, {_m(op, off)}')}, {ones}")


@emits("v_bfe_i32")
def _bfe_i(op: Op, a, off, width):
    b = op.b
    v = b.v32
    wd = _m(op, width)
    ones = b.op(f"sub {v} {b.op(f'shl {v} {_c(op, 1)}, {wd}')}, {_c(op, 1)}")
    tmp = b.op(f"and {v} {b.op(f'ashr {v} {a}, {_m(op, off)}')}, {ones}")
    top = b.op(f"shl {v} {_c(op, 1)}, {b.op(f'sub {v} {wd}, {_c(op, 1)}')}")
    sign = b.op(f"select {b.vmask} {b.op(f'icmp eq {v} {wd}, {_c(op, 0)}')}, {v} {_c(op, 0)}, {v} {top}")
    return b.op(f"sub {v} {b.op(f'xor {v} {tmp}, {sign}')}, {sign}")


@emits("v_bfi_b32")
def _bfi(op: Op, m, a, c):
    b = op.b
    inv = b.op(f"xor {b.v32} {m}, {_c(op, -1)}")
    return b.op(f"or {b.v32} {b.op(f'and {b.v32} {m}, {a}')}, {b.op(f'and {b.v32} {inv}, {c}')}")


@emits("v_bfm_b32")
def _bfm(op: Op, w, off):
    b = op.b
    bit = b.op(f"shl {b.v32} {_c(op, 1)}, {_m(op, w)}")
    return b.op(f"shl {b.v32} {b.op(f'sub {b.v32} {bit}, {_c(op, 1)}')}, {_m(op, off)}")


def _align(op: Op, a, b, s, bytes_: bool):
    bl = op.b
    pair = bl.op(f"or {bl.v64} {bl.op(f'shl {bl.v64} {_wide(op, a, False)}, {_c(op, 32, 64)}')}, {_wide(op, b, False)}")
    amount = bl.op(f"mul {bl.v32} {bl.op(f'and {bl.v32} {s}, {_c(op, 3)}')}, {_c(op, 8)}") if bytes_ else _m(op, s)
    return bl.op(f"trunc {bl.v64} {bl.op(f'lshr {bl.v64} {pair}, {_wide(op, amount, False)}')} to {bl.v32}")


emits("v_alignbit_b32")(lambda op, a, b, s: _align(op, a, b, s, False))
emits("v_alignbyte_b32")(lambda op, a, b, s: _align(op, a, b, s, True))


def _intrinsic(op: Op, name: str, *args, extra: str = ""):
    b = op.b
    v = b.v32
    decl_args = ", ".join([v] * len(args) + ([extra.split()[0]] if extra else []))
    call_args = [(v, x) for x in args] + ([tuple(extra.split())] if extra else [])
    suffix = f"v{op.lw.lanes}i32"
    return b.call(v, f"@llvm.{name}.{suffix}", call_args, f"declare {v} @llvm.{name}.{suffix}({decl_args})")


emits("v_bfrev_b32")(lambda op, a: _intrinsic(op, "bitreverse", a))
emits("v_bcnt_u32_b32")(lambda op, a, c: op.b.op(f"add {op.b.v32} {_intrinsic(op, 'ctpop', a)}, {c}"))


def _count_or_minus_one(op: Op, n, x):
    b = op.b
    return b.op(f"select {b.vmask} {b.op(f'icmp eq {b.v32} {x}, {_c(op, 0)}')}, {b.v32} {_c(op, -1)}, {b.v32} {n}")


emits("v_clz_i32_u32")(lambda op, a: _count_or_minus_one(op, _intrinsic(op, "ctlz", a, extra="i1 false"), a))
emits("v_ctz_i32_b32")(lambda op, a: _count_or_minus_one(op, _intrinsic(op, "cttz", a, extra="i1 false"), a))


@emits("v_cls_i32")
def _cls(op: Op, a):
    b = op.b
    y = b.op(f"xor {b.v32} {a}, {b.op(f'ashr {b.v32} {a}, {_c(op, 31)}')}")
    return _count_or_minus_one(op, _intrinsic(op, "ctlz", y, extra="i1 false"), y)


def _mbcnt(hi: bool):
    def fn(op: Op, a, c):
        b = op.b
        lanes = op.lw.lanes
        below = []
        for lane in range(lanes):
            shift = lane - 32 if hi else lane
            below.append(0xFFFFFFFF if shift >= 32 else 0 if shift <= 0 else (1 << shift) - 1)
        mask = "<" + ", ".join(f"i32 {_signed(str(m), 32)}" for m in below) + ">"
        return b.op(f"add {b.v32} {_intrinsic(op, 'ctpop', b.op(f'and {b.v32} {a}, {mask}'))}, {c}")
    return fn


emits("v_mbcnt_lo_u32_b32")(_mbcnt(False))
emits("v_mbcnt_hi_u32_b32")(_mbcnt(True))


# ---------------------------------------------------------------------------------------------- min/max


def _pick(pred: str):
    def fn(op: Op, a, b):
        bl = op.b
        return bl.op(f"select {bl.vmask} {bl.op(f'icmp {pred} {bl.v32} {a}, {b}')}, {bl.v32} {a}, {bl.v32} {b}")
    return fn


for _s, _lt, _gt in (("i32", "slt", "sgt"), ("u32", "ult", "ugt")):
    _mn, _mx = _pick(_lt), _pick(_gt)
    emits(f"v_min_{_s}")(_mn)
    emits(f"v_max_{_s}")(_mx)
    emits(f"v_min3_{_s}")(lambda op, a, b, c, mn=_mn: mn(op, mn(op, a, b), c))
    emits(f"v_max3_{_s}")(lambda op, a, b, c, mx=_mx: mx(op, mx(op, a, b), c))
    emits(f"v_med3_{_s}")(lambda op, a, b, c, mn=_mn, mx=_mx: mx(op, mn(op, a, b), mn(op, mx(op, a, b), c)))
    emits(f"v_maxmin_{_s}")(lambda op, a, b, c, mn=_mn, mx=_mx: mn(op, mx(op, a, b), c))
    emits(f"v_minmax_{_s}")(lambda op, a, b, c, mn=_mn, mx=_mx: mx(op, mn(op, a, b), c))


# ---------------------------------------------------------------------------------------------- compares

_IPRED = {"lt": "lt", "eq": "eq", "le": "le", "gt": "gt", "ne": "ne", "ge": "ge"}


def _icmp(cond: str, signed: bool, bits: int):
    pred = cond if cond in ("eq", "ne") else ("s" if signed else "u") + cond

    def fn(op: Op, a, b):
        v = op.b.v64 if bits == 64 else op.b.v32
        if cond in ("f", "t"):
            return op.b.splat("i1", "true" if cond == "t" else "false")
        return op.b.op(f"icmp {pred} {v} {a}, {b}")
    return fn


for _t in ("i32", "u32", "i64", "u64"):
    for _cond in list(_IPRED) + ["f", "t"]:
        _fn = _icmp(_cond, _t[0] == "i", int(_t[1:]))
        emits(f"v_cmp_{_cond}_{_t}", f"v_cmpx_{_cond}_{_t}")(_fn)


# ---------------------------------------------------------------------------------------------- lane reads/writes


def _count(lw: Lowering, inst):
    if inst.dpp is not None:
        raise Unsupported("DPP")
    lw.count_lanes()


@translates("v_readfirstlane_b32")
def _readfirstlane(lw: Lowering, inst):
    """SGPR = the source of the lowest active lane (lane 0 when EXEC is zero)."""
    _count(lw, inst)
    b = lw.b
    code = inst.fields["src0"]
    if code >= 256:
        vals = lw.vgpr(code - 256)
        mi = b.mask_int
        ex = lw.exec_bits()
        first = b.call(mi, f"@llvm.cttz.{mi}", [(mi, ex), ("i1", "false")], f"declare {mi} @llvm.cttz.{mi}({mi}, i1)")
        lane = b.op(f"select i1 {b.op(f'icmp eq {mi} {ex}, 0')}, {mi} 0, {mi} {first}")
        value = b.op(f"extractelement {b.v32} {vals}, {mi} {lane}")
    else:
        value = scalar_src(lw, inst, code)
    lw.set_sgpr(inst.fields["vdst"], value)


@translates("v_readlane_b32")
def _readlane(lw: Lowering, inst):
    """SGPR = VGPR[lane S1 mod lanes]; EXEC is ignored."""
    _count(lw, inst)
    b = lw.b
    code = inst.fields["src0"]
    if code < 256:
        raise Unsupported("readlane of a non-VGPR")
    lane = b.op(f"and i32 {scalar_src(lw, inst, inst.fields['src1'])}, {lw.lanes - 1}")
    lw.set_sgpr(inst.fields["vdst"], b.op(f"extractelement {b.v32} {lw.vgpr(code - 256)}, i32 {lane}"))


@translates("v_writelane_b32")
def _writelane(lw: Lowering, inst):
    """VGPR[lane S1 mod lanes] = S0 (a scalar), regardless of EXEC."""
    _count(lw, inst)
    b = lw.b
    val = scalar_src(lw, inst, inst.fields["src0"])
    lane = b.op(f"and i32 {scalar_src(lw, inst, inst.fields['src1'])}, {lw.lanes - 1}")
    r = inst.fields["vdst"]
    lw.set_vgpr(r, b.op(f"insertelement {b.v32} {lw.vgpr(r)}, i32 {_signed(val, 32)}, i32 {lane}"), None)


# ---------------------------------------------------------------------------------------------- 64-bit shifts


def _shift_pair(kind: str):
    """v_lshlrev_b64 & co. by a constant amount on the two 32-bit halves (as valu's pair plan does it in the
    interpreter: the same results, and no 64-bit lanes); other forms go through the generic path."""
    def fn(lw: Lowering, inst):
        from simgpu.shader.jit.lower_valu import EMITTERS, valu
        from simgpu.shader.operand import constant
        from simgpu.shader.vector.valu import SPECS
        f = inst.fields
        code = f["src0"]
        amount = (inst.literal or 0) if code == 255 else constant(code, "b32") if 128 <= code < 255 else None
        if (inst.encoding != "VOP3" or inst.dpp is not None or amount is None or f["src1"] < 256
                or f["abs"] or f["neg"] or f["omod"] or f["clamp"] or f["op_sel"]):
            return valu(lw, inst, SPECS[inst.mnemonic], EMITTERS[inst.mnemonic])
        b = lw.b
        v = b.v32
        n = amount & 63
        lw.count_lanes()
        r = f["src1"] - 256
        lo, hi = lw.vgpr(r), lw.vgpr(r + 1)

        def c(x):
            return b.splat("i32", x)
        if n == 0:
            out_lo, out_hi = lo, hi
        elif kind == "shl":
            if n >= 32:
                out_lo, out_hi = c(0), b.op(f"shl {v} {lo}, {c(n - 32)}")
            else:
                out_lo = b.op(f"shl {v} {lo}, {c(n)}")
                out_hi = b.op(f"or {v} {b.op(f'shl {v} {hi}, {c(n)}')}, {b.op(f'lshr {v} {lo}, {c(32 - n)}')}")
        else:
            top = "ashr" if kind == "ashr" else "lshr"
            if n >= 32:
                out_lo = b.op(f"{top} {v} {hi}, {c(n - 32)}")
                out_hi = b.op(f"ashr {v} {hi}, {c(31)}") if kind == "ashr" else c(0)
            else:
                out_lo = b.op(f"or {v} {b.op(f'lshr {v} {lo}, {c(n)}')}, {b.op(f'shl {v} {hi}, {c(32 - n)}')}")
                out_hi = b.op(f"{top} {v} {hi}, {c(n)}")
        active = lw.exec_lanes()
        lw.set_vgpr(f["vdst"], out_lo, active)
        lw.set_vgpr(f["vdst"] + 1, out_hi, active)
    return fn


translates("v_lshlrev_b64")(_shift_pair("shl"))
translates("v_lshrrev_b64")(_shift_pair("lshr"))
translates("v_ashrrev_i64")(_shift_pair("ashr"))
