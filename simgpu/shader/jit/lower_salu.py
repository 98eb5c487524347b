"""Translators of the scalar ALU (SOP1, SOP2, SOPC, SOPK) and of the SOPP/SMEM instructions that change
nothing (waits, hints): the same operations as simgpu.shader.scalar, on i32/i64 values of one wave.

Sources are read as scalar.alu reads them (widths from the instruction's table entry, null as 0, a
32-bit literal zero-extended into a 64-bit operand, sign-extended into the signed ones of
scalar.alu.SIGNED64); results are written like scalar.alu.write_sgpr.
"""

from __future__ import annotations

from simgpu.shader.jit.lower import Lowering, Unsupported, translates
from simgpu.shader.scalar.alu import SIGNED64
from simgpu.shader.state import EXEC_LO

M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF


def _widths(inst) -> dict[str, int]:
    return {slot[0]: slot[1] for slot in inst.info.get("ops", [])}


def sources(lw: Lowering, inst) -> tuple[list[str], list[bool]]:
    """(ssrc0, ssrc1 as present, their widths as 64-bit flags)."""
    w = _widths(inst)
    names = [n for n in ("ssrc0", "ssrc1") if n in w]
    wide = [w[n] == 2 for n in names]
    return [lw.salu_src(inst.fields[n], wd, inst.literal, (inst.mnemonic, n) in SIGNED64)
            for n, wd in zip(names, wide, strict=True)], wide


def dst_wide(inst) -> bool:
    return _widths(inst).get("sdst", 1) == 2


def _ty(wide: bool) -> str:
    return "i64" if wide else "i32"


def _to(lw: Lowering, v: str, src_wide: bool, wide: bool) -> str:
    """A source value at the destination's width (zero-extended up, truncated down)."""
    if src_wide == wide:
        return v
    return lw.b.op(f"zext i32 {v} to i64" if wide else f"trunc i64 {v} to i32")


def write(lw: Lowering, inst, value: str, wide: bool) -> None:
    code = inst.fields["sdst"]
    if wide:
        lw.set_sgpr64(code, value)
    else:
        lw.set_sgpr(code, value)


def _nonzero(lw: Lowering, v: str, wide: bool) -> str:
    return lw.b.op(f"icmp ne {_ty(wide)} {v}, 0")


# ---------------------------------------------------------------------------------------------- SOP2


def _two(lw: Lowering, inst) -> tuple[str, str, bool]:
    """Both sources at the destination width (scalar ops work on values of that width)."""
    (a, b), (wa, wb) = sources(lw, inst)
    wide = dst_wide(inst)
    return _to(lw, a, wa, wide), _to(lw, b, wb, wide), wide


@translates("s_add_u32", "s_sub_u32", "s_addc_u32", "s_subb_u32", "s_add_i32", "s_sub_i32")
def _arith(lw: Lowering, inst):
    b = lw.b
    (a, c), _ = sources(lw, inst)
    m = inst.mnemonic
    if m in ("s_add_i32", "s_sub_i32"):
        x, y = b.op(f"sext i32 {a} to i64"), b.op(f"sext i32 {c} to i64")
        full = b.op(f"{'add' if m == 's_add_i32' else 'sub'} i64 {x}, {y}")
        lo = b.op(f"trunc i64 {full} to i32")
        back = b.op(f"sext i32 {lo} to i64")
        carry = b.op(f"icmp ne i64 {back}, {full}")
    else:
        x, y = b.op(f"zext i32 {a} to i64"), b.op(f"zext i32 {c} to i64")
        if m in ("s_addc_u32", "s_subb_u32"):
            y = b.op(f"add i64 {y}, {b.op(f'zext i1 {lw.scc()} to i64')}")
        if m in ("s_add_u32", "s_addc_u32"):
            full = b.op(f"add i64 {x}, {y}")
            carry = b.op(f"icmp ugt i64 {full}, {M32}")
        else:
            full = b.op(f"sub i64 {x}, {y}")
            carry = b.op(f"icmp ugt i64 {y}, {x}")
        lo = b.op(f"trunc i64 {full} to i32")
    lw.set_sgpr(inst.fields["sdst"], lo)
    lw.set_scc(carry)


def _wrapping(op: str):
    """gfx12's s_add_nc_u64 / s_sub_nc_u64 / s_mul_u64 (scalar/gfx12.py): D = S0 op S1 mod 2^64, SCC unchanged."""
    def fn(lw: Lowering, inst):
        a, c, wide = _two(lw, inst)
        write(lw, inst, lw.b.op(f"{op} {_ty(wide)} {a}, {c}"), wide)
    return fn


translates("s_add_nc_u64", family="gfx12")(_wrapping("add"))
translates("s_sub_nc_u64", family="gfx12")(_wrapping("sub"))
translates("s_mul_u64", family="gfx12")(_wrapping("mul"))


_LOGIC = {"and": "and", "or": "or", "xor": "xor", "nand": "and", "nor": "or", "xnor": "xor",
          "and_not1": "and", "or_not1": "or"}


def _logic(name: str):
    def fn(lw: Lowering, inst):
        b = lw.b
        x, y, wide = _two(lw, inst)
        t = _ty(wide)
        if name in ("and_not1", "or_not1"):
            y = b.op(f"xor {t} {y}, -1")
        r = b.op(f"{_LOGIC[name]} {t} {x}, {y}")
        if name in ("nand", "nor", "xnor"):
            r = b.op(f"xor {t} {r}, -1")
        write(lw, inst, r, wide)
        lw.set_scc(_nonzero(lw, r, wide))
    return fn


for _n in _LOGIC:
    translates(f"s_{_n}_b32", f"s_{_n}_b64")(_logic(_n))


def _shift(kind: str):
    def fn(lw: Lowering, inst):
        b = lw.b
        (a, s), (wa, _ws) = sources(lw, inst)
        wide = dst_wide(inst)
        t = _ty(wide)
        a = _to(lw, a, wa, wide)
        amount = b.op(f"and i32 {_to(lw, s, _ws, False)}, {63 if wide else 31}")
        amount = b.op(f"zext i32 {amount} to i64") if wide else amount
        r = b.op(f"{kind} {t} {a}, {amount}")
        write(lw, inst, r, wide)
        lw.set_scc(_nonzero(lw, r, wide))
    return fn


translates("s_lshl_b32", "s_lshl_b64")(_shift("shl"))
translates("s_lshr_b32", "s_lshr_b64")(_shift("lshr"))
translates("s_ashr_i32", "s_ashr_i64")(_shift("ashr"))


@translates("s_cselect_b32", "s_cselect_b64")
def _cselect(lw: Lowering, inst):
    x, y, wide = _two(lw, inst)
    write(lw, inst, lw.b.op(f"select i1 {lw.scc()}, {_ty(wide)} {x}, {_ty(wide)} {y}"), wide)


def _lshl_add(n: int):
    """scalar.sop2._lshl_add: SCC is the carry out of the 64-bit (S0 << n) + S1."""
    def fn(lw: Lowering, inst):
        b = lw.b
        (a, c), _ = sources(lw, inst)
        sh = b.op(f"shl i64 {b.op(f'zext i32 {a} to i64')}, {n}")
        full = b.op(f"add i64 {sh}, {b.op(f'zext i32 {c} to i64')}")
        lw.set_sgpr(inst.fields["sdst"], b.op(f"trunc i64 {full} to i32"))
        lw.set_scc(b.op(f"icmp ugt i64 {full}, {M32}"))
    return fn


for _n in range(1, 5):
    translates(f"s_lshl{_n}_add_u32")(_lshl_add(_n))


def _minmax(pred: str):
    def fn(lw: Lowering, inst):
        b = lw.b
        (x, y), _ = sources(lw, inst)
        pick = b.op(f"icmp {pred} i32 {x}, {y}")
        lw.set_sgpr(inst.fields["sdst"], b.op(f"select i1 {pick}, i32 {x}, i32 {y}"))
        lw.set_scc(pick)
    return fn


translates("s_min_i32")(_minmax("slt"))
translates("s_min_u32")(_minmax("ult"))
translates("s_max_i32")(_minmax("sge"))
translates("s_max_u32")(_minmax("uge"))


def _bfe(signed: bool):
    """scalar.sop2._bfe in 64-bit arithmetic: offset S1[5:0] (4:0), width S1[22:16] capped at the size; the
    signed forms shift the sign-extended source arithmetically."""
    def fn(lw: Lowering, inst):
        b = lw.b
        (a, c), (wa, wc) = sources(lw, inst)
        wide = dst_wide(inst)
        bits = 64 if wide else 32
        x = b.op(f"{'sext' if signed else 'zext'} i32 {a} to i64") if not wa else a
        s = b.op(f"zext i32 {c} to i64") if not wc else c
        off = b.op(f"and i64 {s}, {bits - 1}")
        width = b.op(f"and i64 {b.op(f'lshr i64 {s}, 16')}, 127")
        width = b.op(f"select i1 {b.op(f'icmp ugt i64 {width}, {bits}')}, i64 {bits}, i64 {width}")
        low = b.op(f"and i64 {width}, 63")
        mask = b.op(f"sub i64 {b.op(f'shl i64 1, {low}')}, 1")
        mask = b.op(f"select i1 {b.op(f'icmp uge i64 {width}, 64')}, i64 -1, i64 {mask}")
        # the signed forms shift the signed source: a field past the top reads copies of its sign
        shift = "ashr" if signed else "lshr"
        v = b.op(f"and i64 {b.op(f'{shift} i64 {x}, {off}')}, {mask}")
        if signed:
            top = b.op(f"and i64 {b.op(f'add i64 {width}, 63')}, 63")
            sign = b.op(f"and i64 {b.op(f'lshr i64 {v}, {top}')}, 1")
            ext = b.op(f"and i1 {b.op(f'icmp eq i64 {sign}, 1')}, {b.op(f'icmp ult i64 {width}, 64')}")
            inv = b.op(f"xor i64 {mask}, -1")
            v = b.op(f"or i64 {v}, {b.op(f'select i1 {ext}, i64 {inv}, i64 0')}")
        r = v if wide else b.op(f"trunc i64 {v} to i32")
        write(lw, inst, r, wide)
        lw.set_scc(_nonzero(lw, r, wide))
    return fn


translates("s_bfe_u32", "s_bfe_u64")(_bfe(False))
translates("s_bfe_i32", "s_bfe_i64")(_bfe(True))


@translates("s_bfm_b32", "s_bfm_b64")
def _bfm(lw: Lowering, inst):
    b = lw.b
    x, y, wide = _two(lw, inst)
    t = _ty(wide)
    m = 63 if wide else 31
    amount = b.op(f"and {t} {x}, {m}")
    ones = b.op(f"sub {t} {b.op(f'shl {t} 1, {amount}')}, 1")
    write(lw, inst, b.op(f"shl {t} {ones}, {b.op(f'and {t} {y}, {m}')}"), wide)


@translates("s_mul_i32", "s_mul_hi_u32", "s_mul_hi_i32")
def _mul(lw: Lowering, inst):
    b = lw.b
    (x, y), _ = sources(lw, inst)
    m = inst.mnemonic
    if m == "s_mul_i32":
        r = b.op(f"mul i32 {x}, {y}")
    else:
        ext = "sext" if m == "s_mul_hi_i32" else "zext"
        p = b.op(f"mul i64 {b.op(f'{ext} i32 {x} to i64')}, {b.op(f'{ext} i32 {y} to i64')}")
        r = b.op(f"trunc i64 {b.op(f'lshr i64 {p}, 32')} to i32")
    lw.set_sgpr(inst.fields["sdst"], r)


@translates("s_absdiff_i32")
def _absdiff(lw: Lowering, inst):
    b = lw.b
    (x, y), _ = sources(lw, inst)
    d = b.op(f"sub i32 {x}, {y}")  # wrapped to 32 bits before negating (scalar.sop2._absdiff)
    neg = b.op(f"sub i32 0, {d}")
    isneg = b.op(f"icmp slt i32 {d}, 0")
    r = b.op(f"select i1 {isneg}, i32 {neg}, i32 {d}")
    lw.set_sgpr(inst.fields["sdst"], r)
    lw.set_scc(_nonzero(lw, r, False))


def _pack(sel0: int, sel1: int):
    def fn(lw: Lowering, inst):
        b = lw.b
        (x, y), _ = sources(lw, inst)
        lo = b.op(f"and i32 {b.op(f'lshr i32 {x}, {16 * sel0}')}, 65535")
        hi = b.op(f"shl i32 {b.op(f'lshr i32 {y}, {16 * sel1}')}, 16")
        lw.set_sgpr(inst.fields["sdst"], b.op(f"or i32 {lo}, {hi}"))
    return fn


for _s0, _s1, _nm in ((0, 0, "ll"), (0, 1, "lh"), (1, 1, "hh"), (1, 0, "hl")):
    translates(f"s_pack_{_nm}_b32_b16")(_pack(_s0, _s1))


# ---------------------------------------------------------------------------------------------- SOP1


def _one(lw: Lowering, inst) -> tuple[str, bool, bool]:
    (a,), (wa,) = sources(lw, inst)
    return a, wa, dst_wide(inst)


@translates("s_mov_b32", "s_mov_b64")
def _mov(lw: Lowering, inst):
    a, wa, wide = _one(lw, inst)
    write(lw, inst, _to(lw, a, wa, wide), wide)


@translates("s_not_b32", "s_not_b64")
def _not(lw: Lowering, inst):
    a, wa, wide = _one(lw, inst)
    r = lw.b.op(f"xor {_ty(wide)} {_to(lw, a, wa, wide)}, -1")
    write(lw, inst, r, wide)
    lw.set_scc(_nonzero(lw, r, wide))


@translates("s_cmov_b32", "s_cmov_b64")
def _cmov(lw: Lowering, inst):
    a, wa, wide = _one(lw, inst)
    code = inst.fields["sdst"]
    if code >= 127 and wide or code >= 128:
        raise Unsupported("cmov destination")
    cur = lw.sgpr64(code) if wide else lw.sgpr(code)
    write(lw, inst, lw.b.op(f"select i1 {lw.scc()}, {_ty(wide)} {_to(lw, a, wa, wide)}, {_ty(wide)} {cur}"), wide)


@translates("s_bcnt1_i32_b32", "s_bcnt1_i32_b64", "s_bcnt0_i32_b32", "s_bcnt0_i32_b64")
def _bcnt(lw: Lowering, inst):
    b = lw.b
    a, wa, wide = _one(lw, inst)
    t = _ty(wa)
    n = b.call(t, f"@llvm.ctpop.{t}", [(t, a)], f"declare {t} @llvm.ctpop.{t}({t})")
    if "bcnt0" in inst.mnemonic:
        n = b.op(f"sub {t} {64 if wa else 32}, {n}")
    r = _to(lw, n, wa, wide)
    write(lw, inst, r, wide)
    lw.set_scc(_nonzero(lw, r, wide))


@translates("s_sext_i32_i8", "s_sext_i32_i16")
def _sext(lw: Lowering, inst):
    b = lw.b
    a, _, _ = _one(lw, inst)
    n = 8 if inst.mnemonic.endswith("i8") else 16
    lw.set_sgpr(inst.fields["sdst"], b.op(f"sext i{n} {b.op(f'trunc i32 {a} to i{n}')} to i32"))


@translates("s_abs_i32")
def _abs(lw: Lowering, inst):
    b = lw.b
    a, _, _ = _one(lw, inst)
    neg = b.op(f"icmp slt i32 {a}, 0")
    r = b.op(f"select i1 {neg}, i32 {b.op(f'sub i32 0, {a}')}, i32 {a}")
    lw.set_sgpr(inst.fields["sdst"], r)
    lw.set_scc(_nonzero(lw, r, False))


@translates("s_brev_b32", "s_brev_b64")
def _brev(lw: Lowering, inst):
    a, wa, wide = _one(lw, inst)
    t = _ty(wa)
    r = lw.b.call(t, f"@llvm.bitreverse.{t}", [(t, a)], f"declare {t} @llvm.bitreverse.{t}({t})")
    write(lw, inst, _to(lw, r, wa, wide), wide)


_SAVEEXEC = {"and": ("and", False, False, False), "or": ("or", False, False, False),
             "xor": ("xor", False, False, False), "nand": ("and", False, False, True),
             "nor": ("or", False, False, True), "xnor": ("xor", False, False, True),
             "and_not0": ("and", True, False, False), "or_not0": ("or", True, False, False),
             "and_not1": ("and", False, True, False), "or_not1": ("or", False, True, False)}


def _saveexec(name: str, wrexec: bool = False):
    """EXEC = f(S0, EXEC); SDST = the old EXEC (the new one for wrexec); SCC = EXEC != 0 (sop1._saveexec)."""
    op, inv_s, inv_e, inv_r = _SAVEEXEC[name]

    def fn(lw: Lowering, inst):
        b = lw.b
        a, wa, wide = _one(lw, inst)
        t = _ty(wide)
        s = _to(lw, a, wa, wide)
        old = lw.sgpr64(EXEC_LO) if wide else lw.sgpr(EXEC_LO)
        x = b.op(f"xor {t} {s}, -1") if inv_s else s
        e = b.op(f"xor {t} {old}, -1") if inv_e else old
        new = b.op(f"{op} {t} {x}, {e}")
        if inv_r:
            new = b.op(f"xor {t} {new}, -1")
        if wide:
            lw.set_sgpr64(EXEC_LO, new)
        else:
            lw.set_sgpr(EXEC_LO, new)
        write(lw, inst, new if wrexec else old, wide)
        lw.set_scc(_nonzero(lw, new, wide))
    return fn


for _n in _SAVEEXEC:
    translates(f"s_{_n}_saveexec_b32", f"s_{_n}_saveexec_b64")(_saveexec(_n))
for _n in ("and_not0", "and_not1"):
    translates(f"s_{_n}_wrexec_b32", f"s_{_n}_wrexec_b64")(_saveexec(_n, True))


@translates("s_getpc_b64")
def _getpc(lw: Lowering, inst):
    lw.set_sgpr64(inst.fields["sdst"], lw.b.op(f"add i64 %base, {lw.off + inst.size}"))


@translates("s_bitset0_b32", "s_bitset0_b64", "s_bitset1_b32", "s_bitset1_b64")
def _bitset(lw: Lowering, inst):
    b = lw.b
    a, wa, wide = _one(lw, inst)
    code = inst.fields["sdst"]
    if code >= 127 and wide or code >= 128:
        raise Unsupported("bitset destination")
    t = _ty(wide)
    cur = lw.sgpr64(code) if wide else lw.sgpr(code)
    bit = b.op(f"shl {t} 1, {b.op(f'and {t} {_to(lw, a, wa, wide)}, {63 if wide else 31}')}")
    if "bitset1" in inst.mnemonic:
        r = b.op(f"or {t} {cur}, {bit}")
    else:
        r = b.op(f"and {t} {cur}, {b.op(f'xor {t} {bit}, -1')}")
    write(lw, inst, r, wide)


# ---------------------------------------------------------------------------------------------- SOPC

_PRED = {"eq": "eq", "lg": "ne", "gt": "gt", "ge": "ge", "lt": "lt", "le": "le"}


def _cmp(cond: str, signed: bool, bits: int):
    pred = _PRED[cond] if cond in ("eq", "lg") else ("s" if signed else "u") + _PRED[cond]

    def fn(lw: Lowering, inst):
        (a, c), _ = sources(lw, inst)
        lw.set_scc(lw.b.op(f"icmp {pred} i{bits} {a}, {c}"))
    return fn


for _c in _PRED:
    translates(f"s_cmp_{_c}_i32")(_cmp(_c, True, 32))
    translates(f"s_cmp_{_c}_u32")(_cmp(_c, False, 32))
translates("s_cmp_eq_u64")(_cmp("eq", False, 64))
translates("s_cmp_lg_u64")(_cmp("lg", False, 64))


@translates("s_bitcmp0_b32", "s_bitcmp1_b32", "s_bitcmp0_b64", "s_bitcmp1_b64")
def _bitcmp(lw: Lowering, inst):
    b = lw.b
    (a, c), (wa, wc) = sources(lw, inst)
    t = _ty(wa)
    amount = b.op(f"and {t} {_to(lw, c, wc, wa)}, {63 if wa else 31}")
    bit = b.op(f"and {t} {b.op(f'lshr {t} {a}, {amount}')}, 1")
    lw.set_scc(b.op(f"icmp eq {t} {bit}, {1 if 'bitcmp1' in inst.mnemonic else 0}"))


# ---------------------------------------------------------------------------------------------- SOPK


def _simm(inst, signed: bool) -> int:
    v = inst.fields["simm16"]
    return v - 0x10000 if signed and v & 0x8000 else v


@translates("s_movk_i32")
def _movk(lw: Lowering, inst):
    lw.set_sgpr(inst.fields["sdst"], str(_simm(inst, True)))


@translates("s_cmovk_i32")
def _cmovk(lw: Lowering, inst):
    code = inst.fields["sdst"]
    if code >= 128:
        raise Unsupported("cmovk destination")
    cur = lw.sgpr(code)
    lw.set_sgpr(code, lw.b.op(f"select i1 {lw.scc()}, i32 {_simm(inst, True)}, i32 {cur}"))


def _cmpk(cond: str, signed: bool):
    pred = _PRED[cond] if cond in ("eq", "lg") else ("s" if signed else "u") + _PRED[cond]

    def fn(lw: Lowering, inst):
        code = inst.fields["sdst"]
        if code >= 128:
            raise Unsupported("cmpk operand")
        a = lw.sgpr(code)
        k = _simm(inst, signed)
        if signed:
            lw.set_scc(lw.b.op(f"icmp {pred} i32 {a}, {k}"))
        else:  # an unsigned compare against the zero-extended 16-bit immediate
            lw.set_scc(lw.b.op(f"icmp {pred} i64 {lw.b.op(f'zext i32 {a} to i64')}, {k}"))
    return fn


for _c in _PRED:
    translates(f"s_cmpk_{_c}_i32")(_cmpk(_c, True))
    translates(f"s_cmpk_{_c}_u32")(_cmpk(_c, False))


@translates("s_addk_i32")
def _addk(lw: Lowering, inst):
    b = lw.b
    code = inst.fields["sdst"]
    if code >= 128:
        raise Unsupported("addk operand")
    full = b.op(f"add i64 {b.op(f'sext i32 {lw.sgpr(code)} to i64')}, {_simm(inst, True)}")
    lo = b.op(f"trunc i64 {full} to i32")
    lw.set_sgpr(code, lo)
    lw.set_scc(b.op(f"icmp ne i64 {b.op(f'sext i32 {lo} to i64')}, {full}"))


@translates("s_mulk_i32")
def _mulk(lw: Lowering, inst):
    code = inst.fields["sdst"]
    if code >= 128:
        raise Unsupported("mulk operand")
    lw.set_sgpr(code, lw.b.op(f"mul i32 {lw.sgpr(code)}, {_simm(inst, True)}"))


# ---------------------------------------------------------------------------------------------- no-ops

_NOPS = ("s_nop", "s_setkill", "s_sethalt", "s_set_inst_prefetch_distance", "s_clause", "s_delay_alu",
         "s_waitcnt_depctr", "s_waitcnt", "s_wait_idle", "s_wait_event", "s_setprio", "s_incperflevel",
         "s_decperflevel", "s_ttracedata", "s_ttracedata_imm", "s_wakeup", "s_version", "s_waitcnt_vscnt",
         "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt", "s_gl1_inv", "s_dcache_inv", "s_atc_probe",
         "s_atc_probe_buffer", "v_nop", "v_pipeflush", "s_sendmsg", "buffer_gl0_inv", "buffer_gl1_inv")


@translates(*_NOPS)
def _nop(lw: Lowering, inst):
    """Waits, hints and cache invalidations change nothing in the simulator (it has no caches: mubuf.py);
    s_sendmsg only matters for MSG_INTERRUPT, which region.is_sync keeps out of native code."""
    if inst.mnemonic.startswith("v_"):
        lw.count_lanes()


# gfx12's own no-ops (scalar/gfx12.py, memory/gfx12.py): the split waits, prefetches, cache write-backs
_GFX12_NOPS = ("s_wait_loadcnt", "s_wait_storecnt", "s_wait_samplecnt", "s_wait_bvhcnt", "s_wait_kmcnt",
               "s_wait_dscnt", "s_wait_expcnt", "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_wait_alu",
               "s_sleep_var", "s_singleuse_vdst", "s_wakeup_barrier", "s_prefetch_inst", "s_prefetch_inst_pc_rel",
               "s_prefetch_data", "s_prefetch_data_pc_rel", "s_buffer_prefetch_data", "global_inv", "global_wb",
               "global_wbinv")
translates(*_GFX12_NOPS, family="gfx12")(_nop)
