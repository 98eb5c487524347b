"""The instructions tests/simgpu/shader/test_sem_llvm_fold.py checks against LLVM's constant folding, each as an
instruction text for the engine and the LLVM IR (plain operations or llvm.amdgcn.* intrinsics) that means
the same on its operands. Where LLVM's operation differs from the instruction outside some domain (NaN
payloads, poison), the case narrows the comparison and says why."""

from __future__ import annotations

from tests.support.llvm_fold import Case
from tests.support.vfloat_harness import mode_word

FT = {"f16": "half", "f32": "float", "f64": "double"}
IT = {16: "i16", 32: "i32", 64: "i64"}


def regs(t: str) -> tuple[str, str, str, str]:
    """(dst, src0, src1, src2) registers of the harness for an operand type."""
    if t in ("f64", "i64", "u64", "b64"):
        return "v[20:21]", "v[10:11]", "v[12:13]", "v[14:15]"
    return "v20", "v10", "v12", "v14"


def intrinsic(name: str, ret: str, *args: str) -> str:
    return f"declare {ret} @{name}({', '.join(args)})"


_FMT = {"half": (10, 5), "float": (23, 8), "double": (52, 11)}  # mantissa bits, exponent bits


def _fields(v: int, t: str) -> tuple[int, int]:
    """(exponent field, mantissa field) of float bits v of IR type t."""
    m, e = _FMT[t]
    return (v >> m) & ((1 << e) - 1), v & ((1 << m) - 1)


def is_nan(v: int, t: str) -> bool:
    exp, man = _fields(v, t)
    return exp == (1 << _FMT[t][1]) - 1 and man != 0


def is_snan(v: int, t: str) -> bool:
    return is_nan(v, t) and not (v >> (_FMT[t][0] - 1)) & 1


def is_denormal(v: int, t: str) -> bool:
    exp, man = _fields(v, t)
    return exp == 0 and man != 0


def not_finite(v: int, t: str) -> bool:
    return _fields(v, t)[0] == (1 << _FMT[t][1]) - 1


CASES: list[Case] = []


def add(*cases: Case) -> None:
    CASES.extend(cases)


# ---------------------------------------------------------------------------------------------- float arithmetic

for t, ft in FT.items():
    d, a, b, c = regs(t)
    ops = {"add": "fadd", "mul": "fmul"} | ({"sub": "fsub"} if t != "f64" else {})
    for name, irop in ops.items():
        add(Case(f"v_{name}_{t} {d}, {a}, {b}", (ft, ft), f"%r = {irop} {ft} %x0, %x1", ft))
    if t != "f64":
        add(Case(f"v_subrev_{t} {d}, {a}, {b}", (ft, ft), f"%r = fsub {ft} %x1, %x0", ft))
    fma = f"llvm.fma.{t}"
    add(Case(f"v_fma_{t} {d}, {a}, {b}, {c}", (ft, ft, ft), f"%r = call {ft} @{fma}({ft} %x0, {ft} %x1, {ft} %x2)",
             ft, (intrinsic(fma, ft, ft, ft, ft),)))
    ld = f"llvm.ldexp.{t}.{'i16' if t == 'f16' else 'i32'}"
    it = "i16" if t == "f16" else "i32"
    add(Case(f"v_ldexp_{t} {d}, {a}, v12", (ft, it), f"%r = call {ft} @{ld}({ft} %x0, {it} %x1)", ft,
             (intrinsic(ld, ft, ft, it),), gen=(t, "exp")))
    for name, fn in (("trunc", "trunc"), ("ceil", "ceil"), ("floor", "floor"), ("rndne", "roundeven")):
        add(Case(f"v_{name}_{t} {d}, {a}", (ft,), f"%r = call {ft} @llvm.{fn}.{t}({ft} %x0)", ft,
                 (intrinsic(f"llvm.{fn}.{t}", ft, ft),)))
    add(Case(f"v_fract_{t} {d}, {a}", (ft,), f"%r = call {ft} @llvm.amdgcn.fract.{t}({ft} %x0)", ft,
             (intrinsic(f"llvm.amdgcn.fract.{t}", ft, ft),)))
    add(Case(f"v_frexp_mant_{t} {d}, {a}", (ft,), f"%r = call {ft} @llvm.amdgcn.frexp.mant.{t}({ft} %x0)", ft,
             (intrinsic(f"llvm.amdgcn.frexp.mant.{t}", ft, ft),), skip=lambda r, ft=ft: is_snan(r[0], ft),
             note="the reference passes a NaN through unchanged (D0 = S0); LLVM's fold quiets a signaling one"))
    et = "i16" if t == "f16" else "i32"
    add(Case(f"v_frexp_exp_{et}_{t} v20, {a}", (ft,), f"%r = call {et} @llvm.amdgcn.frexp.exp.{et}.{t}({ft} %x0)",
             et, (intrinsic(f"llvm.amdgcn.frexp.exp.{et}.{t}", et, ft),)))
    # v_min/v_max: in IEEE mode a quiet NaN yields the other operand (llvm.minnum), a signaling NaN a quiet
    # NaN (compared as NaN only: LLVM's quieted payload is unspecified); with IEEE off any NaN yields the
    # other operand and -0 < +0 (IEEE 754-2019 minimumNumber: llvm.minimumnum).
    # With IEEE off and both operands NaN the reference returns S0 as it is (a signaling NaN too), where
    # minimumnum quiets it.
    for name in ("min", "max"):
        for ieee, fn in ((1, f"{name}num"), (0, f"{name}imumnum")):
            add(Case(f"v_{name}_{t} {d}, {a}, {b}", (ft, ft), f"%r = call {ft} @llvm.{fn}.{t}({ft} %x0, {ft} %x1)",
                     ft, (intrinsic(f"llvm.{fn}.{t}", ft, ft, ft),), mode=mode_word(ieee=ieee), nan_bits=not ieee,
                     skip=None if ieee else (lambda r, ft=ft: is_nan(r[0], ft) and is_nan(r[1], ft))))

for t, ft in (("f16", "half"), ("f32", "float")):
    d, a, b, c = regs(t)
    for name in ("min3", "max3"):
        fn = f"llvm.{name[:3]}num.{t}"
        # IEEE mode: a signaling NaN in the inner min/max becomes a quiet NaN that the outer one then drops
        # (the reference's v_min_f32 rules); LLVM's minnum drops a signaling NaN at once.
        add(Case(f"v_{name}_{t} {d}, {a}, {b}, {c}", (ft, ft, ft),
                 f"%m = call {ft} @{fn}({ft} %x0, {ft} %x1)\n%r = call {ft} @{fn}({ft} %m, {ft} %x2)", ft,
                 (intrinsic(fn, ft, ft, ft),), nan_bits=False, skip=lambda r, ft=ft: any(is_snan(x, ft) for x in r)))
    add(Case(f"v_med3_{t} {d}, {a}, {b}, {c}", (ft, ft, ft),
             f"%r = call {ft} @llvm.amdgcn.fmed3.{t}({ft} %x0, {ft} %x1, {ft} %x2)", ft,
             (intrinsic(f"llvm.amdgcn.fmed3.{t}", ft, ft, ft, ft),), nan_bits=False))
    add(Case(f"v_fmac_{t} {d}, {a}, {b}", (ft, ft, ft),
             f"%r = call {ft} @llvm.fma.{t}({ft} %x0, {ft} %x1, {ft} %x2)", ft,
             (intrinsic(f"llvm.fma.{t}", ft, ft, ft, ft),), extra={"acc": 2}))
add(Case("v_fmaak_f32 v20, v10, v12, 0x3fc00000", ("float", "float"),
         "%r = call float @llvm.fma.f32(float %x0, float %x1, float 1.5)", "float",
         (intrinsic("llvm.fma.f32", "float", "float", "float", "float"),)))
add(Case("v_fmamk_f32 v20, v10, 0xbfc00000, v12", ("float", "float"),
         "%r = call float @llvm.fma.f32(float %x0, float -1.5, float %x1)", "float",
         (intrinsic("llvm.fma.f32", "float", "float", "float", "float"),)))
for name in ("cubeid", "cubesc", "cubetc", "cubema"):
    add(Case(f"v_{name}_f32 v20, v10, v12, v14", ("float", "float", "float"),
             f"%r = call float @llvm.amdgcn.{name}(float %x0, float %x1, float %x2)", "float",
             (intrinsic(f"llvm.amdgcn.{name}", "float", "float", "float", "float"),), gen=("cube",) * 3))
add(Case("v_trig_preop_f64 v[20:21], v[10:11], v12", ("double", "i32"),
         "%r = call double @llvm.amdgcn.trig.preop.f64(double %x0, i32 %x1)", "double",
         (intrinsic("llvm.amdgcn.trig.preop.f64", "double", "double", "i32"),), gen=("f64", "small"),
         skip=lambda r: not_finite(r[0], "double"),
         note="the reference's pseudo-code has no inf/NaN case (it reads the table); LLVM's fold returns NaN/0"))

# ---------------------------------------------------------------------------------------------- transcendentals

# v_rcp_f32 and v_sqrt_f32 flush denormal inputs and results whatever MODE says (the reference's notes:
# "Denormals are flushed"); LLVM's folds do not: those rows are left out. (LLVM does not fold
# llvm.amdgcn.rsq: v_rsq_* are in test_sem_vtrans.)
_F32_FLUSHES = lambda r: is_denormal(r[0], "float") or _fields(r[0], "float")[0] >= 253  # noqa: E731
for t, ft in FT.items():
    d, a, _, _ = regs(t)
    add(Case(f"v_rcp_{t} {d}, {a}", (ft,), f"%r = call {ft} @llvm.amdgcn.rcp.{t}({ft} %x0)", ft,
             (intrinsic(f"llvm.amdgcn.rcp.{t}", ft, ft),), nan_bits=False, skip=_F32_FLUSHES if t == "f32" else None))
    add(Case(f"v_sqrt_{t} {d}, {a}", (ft,), f"%r = call {ft} @llvm.sqrt.{t}({ft} %x0)", ft,
             (intrinsic(f"llvm.sqrt.{t}", ft, ft),), nan_bits=False,
             skip=(lambda r: is_denormal(r[0], "float")) if t == "f32" else None))
# sin/cos: the sign of an exact zero result is left out (the reference gives sin(-0.0) = -0.0, LLVM's fold
# +0.0); exp2 folds only where the result is exact.
for t, ft in (("f16", "half"), ("f32", "float")):
    for name, fn in (("exp", "exp2"), ("log", "log"), ("sin", "sin"), ("cos", "cos")):
        add(Case(f"v_{name}_{t} v20, v10", (ft,), f"%r = call {ft} @llvm.amdgcn.{fn}.{t}({ft} %x0)", ft,
                 (intrinsic(f"llvm.amdgcn.{fn}.{t}", ft, ft),), nan_bits=False, zero_sign=name not in ("sin", "cos"),
                 min_folded=8 if name == "exp" else 64))

# ---------------------------------------------------------------------------------------------- conversions

CONV = [  # (instruction, source type, result type, IR)
    ("v_cvt_f32_f16", "half", "float", "fpext half %x0 to float"),
    ("v_cvt_f16_f32", "float", "half", "fptrunc float %x0 to half"),
    ("v_cvt_f64_f32", "float", "double", "fpext float %x0 to double"),
    ("v_cvt_f32_f64", "double", "float", "fptrunc double %x0 to float"),
    ("v_cvt_f32_i32", "i32", "float", "sitofp i32 %x0 to float"),
    ("v_cvt_f32_u32", "i32", "float", "uitofp i32 %x0 to float"),
    ("v_cvt_f64_i32", "i32", "double", "sitofp i32 %x0 to double"),
    ("v_cvt_f64_u32", "i32", "double", "uitofp i32 %x0 to double"),
    ("v_cvt_f16_i16", "i16", "half", "sitofp i16 %x0 to half"),
    ("v_cvt_f16_u16", "i16", "half", "uitofp i16 %x0 to half"),
    # float -> integer: truncate, saturate, NaN -> 0: LLVM's saturating conversions say exactly that
    ("v_cvt_i32_f32", "float", "i32", "call i32 @llvm.fptosi.sat.i32.f32(float %x0)"),
    ("v_cvt_u32_f32", "float", "i32", "call i32 @llvm.fptoui.sat.i32.f32(float %x0)"),
    ("v_cvt_i32_f64", "double", "i32", "call i32 @llvm.fptosi.sat.i32.f64(double %x0)"),
    ("v_cvt_u32_f64", "double", "i32", "call i32 @llvm.fptoui.sat.i32.f64(double %x0)"),
    ("v_cvt_i16_f16", "half", "i16", "call i16 @llvm.fptosi.sat.i16.f16(half %x0)"),
    ("v_cvt_u16_f16", "half", "i16", "call i16 @llvm.fptoui.sat.i16.f16(half %x0)"),
]
for inst, st, rt, ir in CONV:
    d = "v[20:21]" if rt == "double" else "v20"
    a = "v[10:11]" if st == "double" else "v10"
    decls = ()
    if "@" in ir:
        fn = ir.split("@")[1].split("(")[0]
        decls = (intrinsic(fn, rt, st),)
    add(Case(f"{inst} {d}, {a}", (st,), f"%r = {ir}", rt, decls))
add(Case("v_cvt_floor_i32_f32 v20, v10", ("float",),
         "%f = call float @llvm.floor.f32(float %x0)\n%r = call i32 @llvm.fptosi.sat.i32.f32(float %f)", "i32",
         (intrinsic("llvm.floor.f32", "float", "float"), intrinsic("llvm.fptosi.sat.i32.f32", "i32", "float"))))
add(Case("v_cvt_nearest_i32_f32 v20, v10", ("float",),  # the reference: f32_to_i32(floor(S0.f32 + 0.5F))
         "%h = fadd float %x0, 0.5\n%f = call float @llvm.floor.f32(float %h)\n"
         "%r = call i32 @llvm.fptosi.sat.i32.f32(float %f)", "i32",
         (intrinsic("llvm.floor.f32", "float", "float"), intrinsic("llvm.fptosi.sat.i32.f32", "i32", "float"))))
add(Case("v_cvt_pk_rtz_f16_f32 v20, v10, v12", ("float", "float"),
         "%r = call <2 x half> @llvm.amdgcn.cvt.pkrtz(float %x0, float %x1)", "<2 x half>",
         (intrinsic("llvm.amdgcn.cvt.pkrtz", "<2 x half>", "float", "float"),)))
for k in range(4):
    add(Case(f"v_cvt_f32_ubyte{k} v20, v10", ("i32",),
             f"%s = lshr i32 %x0, {8 * k}\n%b = and i32 %s, 255\n%r = uitofp i32 %b to float", "float"))

# ---------------------------------------------------------------------------------------------- compares

FCMP = {"f": "false", "lt": "olt", "eq": "oeq", "le": "ole", "gt": "ogt", "lg": "one", "ge": "oge", "o": "ord",
        "u": "uno", "nge": "ult", "nlg": "ueq", "ngt": "ule", "nle": "ugt", "neq": "une", "nlt": "uge",
        "t": "true"}
ICMP = {"lt": "lt", "eq": "eq", "le": "le", "gt": "gt", "ne": "ne", "ge": "ge"}
for t, ft in FT.items():
    _, a, b, _ = regs(t)
    for name, pred in FCMP.items():
        add(Case(f"v_cmp_{name}_{t}_e32 vcc_lo, {a}, {b}", (ft, ft), f"%r = fcmp {pred} {ft} %x0, %x1", "i1"))
        add(Case(f"v_cmpx_{name}_{t}_e32 {a}, {b}", (ft, ft), f"%r = fcmp {pred} {ft} %x0, %x1", "i1",
                 extra={"exec": True}))
    add(Case(f"v_cmp_class_{t}_e32 vcc_lo, {a}, v12", (ft, "i32"),
             f"%r = call i1 @llvm.amdgcn.class.{t}({ft} %x0, i32 %x1)", "i1",
             (intrinsic(f"llvm.amdgcn.class.{t}", "i1", ft, "i32"),), gen=(t, "class")))
for bits in (16, 32, 64):
    it = IT[bits]
    _, a, b, _ = regs("i64" if bits == 64 else "i32")
    for sign in ("i", "u"):
        for name, pred in ICMP.items():
            p = pred if pred in ("eq", "ne") else ("s" if sign == "i" else "u") + pred
            add(Case(f"v_cmp_{name}_{sign}{bits}_e32 vcc_lo, {a}, {b}", (it, it), f"%r = icmp {p} {it} %x0, %x1",
                     "i1"))

# ---------------------------------------------------------------------------------------------- integer ALU

INT32 = {  # instruction (operands v10, v12, v14 -> v20) -> IR over i32 %x0, %x1, %x2
    "v_add_nc_u32 v20, v10, v12": "%r = add i32 %x0, %x1",
    "v_sub_nc_u32 v20, v10, v12": "%r = sub i32 %x0, %x1",
    "v_subrev_nc_u32 v20, v10, v12": "%r = sub i32 %x1, %x0",
    "v_add_nc_u32_e64 v20, v10, v12 clamp": "%r = call i32 @llvm.uadd.sat.i32(i32 %x0, i32 %x1)",
    "v_sub_nc_u32_e64 v20, v10, v12 clamp": "%r = call i32 @llvm.usub.sat.i32(i32 %x0, i32 %x1)",
    "v_add_nc_i32 v20, v10, v12 clamp": "%r = call i32 @llvm.sadd.sat.i32(i32 %x0, i32 %x1)",
    "v_sub_nc_i32 v20, v10, v12 clamp": "%r = call i32 @llvm.ssub.sat.i32(i32 %x0, i32 %x1)",
    "v_mul_lo_u32 v20, v10, v12": "%r = mul i32 %x0, %x1",
    "v_mul_hi_u32 v20, v10, v12": "%a = zext i32 %x0 to i64\n%b = zext i32 %x1 to i64\n%m = mul i64 %a, %b\n"
                                  "%s = lshr i64 %m, 32\n%r = trunc i64 %s to i32",
    "v_mul_hi_i32 v20, v10, v12": "%a = sext i32 %x0 to i64\n%b = sext i32 %x1 to i64\n%m = mul i64 %a, %b\n"
                                  "%s = lshr i64 %m, 32\n%r = trunc i64 %s to i32",
    # (LLVM does not fold llvm.amdgcn.mul.u24 and friends: the 24-bit operands as plain IR)
    "v_mul_u32_u24 v20, v10, v12": "%a = and i32 %x0, 16777215\n%b = and i32 %x1, 16777215\n%r = mul i32 %a, %b",
    "v_mul_i32_i24 v20, v10, v12": "%p = shl i32 %x0, 8\n%a = ashr i32 %p, 8\n%q = shl i32 %x1, 8\n"
                                   "%b = ashr i32 %q, 8\n%r = mul i32 %a, %b",
    "v_mul_hi_u32_u24 v20, v10, v12": "%a = and i32 %x0, 16777215\n%b = and i32 %x1, 16777215\n"
                                      "%c = zext i32 %a to i64\n%d = zext i32 %b to i64\n%m = mul i64 %c, %d\n"
                                      "%s = lshr i64 %m, 32\n%r = trunc i64 %s to i32",
    "v_mul_hi_i32_i24 v20, v10, v12": "%p = shl i32 %x0, 8\n%a = ashr i32 %p, 8\n%q = shl i32 %x1, 8\n"
                                      "%b = ashr i32 %q, 8\n%c = sext i32 %a to i64\n%d = sext i32 %b to i64\n"
                                      "%m = mul i64 %c, %d\n%s = lshr i64 %m, 32\n%r = trunc i64 %s to i32",
    "v_and_b32 v20, v10, v12": "%r = and i32 %x0, %x1",
    "v_or_b32 v20, v10, v12": "%r = or i32 %x0, %x1",
    "v_xor_b32 v20, v10, v12": "%r = xor i32 %x0, %x1",
    "v_xnor_b32 v20, v10, v12": "%x = xor i32 %x0, %x1\n%r = xor i32 %x, -1",
    "v_not_b32 v20, v10": "%r = xor i32 %x0, -1",
    "v_lshlrev_b32 v20, v10, v12": "%s = and i32 %x0, 31\n%r = shl i32 %x1, %s",
    "v_lshrrev_b32 v20, v10, v12": "%s = and i32 %x0, 31\n%r = lshr i32 %x1, %s",
    "v_ashrrev_i32 v20, v10, v12": "%s = and i32 %x0, 31\n%r = ashr i32 %x1, %s",
    "v_max_i32 v20, v10, v12": "%r = call i32 @llvm.smax.i32(i32 %x0, i32 %x1)",
    "v_max_u32 v20, v10, v12": "%r = call i32 @llvm.umax.i32(i32 %x0, i32 %x1)",
    "v_min_i32 v20, v10, v12": "%r = call i32 @llvm.smin.i32(i32 %x0, i32 %x1)",
    "v_min_u32 v20, v10, v12": "%r = call i32 @llvm.umin.i32(i32 %x0, i32 %x1)",
    "v_bfrev_b32 v20, v10": "%r = call i32 @llvm.bitreverse.i32(i32 %x0)",
    "v_cls_i32 v20, v10": "%s = ashr i32 %x0, 31\n%v = xor i32 %x0, %s\n%c = call i32 @llvm.ctlz.i32(i32 %v, i1 0)\n"
                          "%z = icmp eq i32 %v, 0\n%r = select i1 %z, i32 -1, i32 %c",
    "v_clz_i32_u32 v20, v10": "%c = call i32 @llvm.ctlz.i32(i32 %x0, i1 0)\n%z = icmp eq i32 %x0, 0\n"
                              "%r = select i1 %z, i32 -1, i32 %c",
    "v_ctz_i32_b32 v20, v10": "%c = call i32 @llvm.cttz.i32(i32 %x0, i1 0)\n%z = icmp eq i32 %x0, 0\n"
                              "%r = select i1 %z, i32 -1, i32 %c",
    "v_bcnt_u32_b32 v20, v10, v12": "%c = call i32 @llvm.ctpop.i32(i32 %x0)\n%r = add i32 %c, %x1",
    "v_bfe_u32 v20, v10, v12, v14": "%r = call i32 @llvm.amdgcn.ubfe.i32(i32 %x0, i32 %x1, i32 %x2)",
    "v_bfe_i32 v20, v10, v12, v14": "%r = call i32 @llvm.amdgcn.sbfe.i32(i32 %x0, i32 %x1, i32 %x2)",
    "v_bfi_b32 v20, v10, v12, v14": "%p = and i32 %x0, %x1\n%n = xor i32 %x0, -1\n%q = and i32 %n, %x2\n"
                                    "%r = or i32 %p, %q",
    "v_bfm_b32 v20, v10, v12": "%w = and i32 %x0, 31\n%o = and i32 %x1, 31\n%b = shl i32 1, %w\n"
                               "%m = sub i32 %b, 1\n%r = shl i32 %m, %o",
    "v_alignbit_b32 v20, v10, v12, v14": "%r = call i32 @llvm.fshr.i32(i32 %x0, i32 %x1, i32 %x2)",
    "v_alignbyte_b32 v20, v10, v12, v14": "%k = and i32 %x2, 3\n%s = shl i32 %k, 3\n"
                                          "%r = call i32 @llvm.fshr.i32(i32 %x0, i32 %x1, i32 %s)",
    "v_perm_b32 v20, v10, v12, v14": "%r = call i32 @llvm.amdgcn.perm(i32 %x0, i32 %x1, i32 %x2)",
    "v_add3_u32 v20, v10, v12, v14": "%s = add i32 %x0, %x1\n%r = add i32 %s, %x2",
    "v_lshl_add_u32 v20, v10, v12, v14": "%s = and i32 %x1, 31\n%l = shl i32 %x0, %s\n%r = add i32 %l, %x2",
    "v_add_lshl_u32 v20, v10, v12, v14": "%a = add i32 %x0, %x1\n%s = and i32 %x2, 31\n%r = shl i32 %a, %s",
    "v_lshl_or_b32 v20, v10, v12, v14": "%s = and i32 %x1, 31\n%l = shl i32 %x0, %s\n%r = or i32 %l, %x2",
    "v_and_or_b32 v20, v10, v12, v14": "%a = and i32 %x0, %x1\n%r = or i32 %a, %x2",
    "v_or3_b32 v20, v10, v12, v14": "%a = or i32 %x0, %x1\n%r = or i32 %a, %x2",
    "v_xor3_b32 v20, v10, v12, v14": "%a = xor i32 %x0, %x1\n%r = xor i32 %a, %x2",
    "v_xad_u32 v20, v10, v12, v14": "%a = xor i32 %x0, %x1\n%r = add i32 %a, %x2",
    "v_max3_i32 v20, v10, v12, v14": "%m = call i32 @llvm.smax.i32(i32 %x0, i32 %x1)\n"
                                     "%r = call i32 @llvm.smax.i32(i32 %m, i32 %x2)",
    "v_min3_u32 v20, v10, v12, v14": "%m = call i32 @llvm.umin.i32(i32 %x0, i32 %x1)\n"
                                     "%r = call i32 @llvm.umin.i32(i32 %m, i32 %x2)",
    "v_mad_u32_u24 v20, v10, v12, v14": "%a = and i32 %x0, 16777215\n%b = and i32 %x1, 16777215\n"
                                        "%m = mul i32 %a, %b\n%r = add i32 %m, %x2",
    "v_mad_i32_i24 v20, v10, v12, v14": "%p = shl i32 %x0, 8\n%a = ashr i32 %p, 8\n%q = shl i32 %x1, 8\n"
                                        "%b = ashr i32 %q, 8\n%m = mul i32 %a, %b\n%r = add i32 %m, %x2",
}
_DECLS32 = {
    "uadd.sat": intrinsic("llvm.uadd.sat.i32", "i32", "i32", "i32"),
    "usub.sat": intrinsic("llvm.usub.sat.i32", "i32", "i32", "i32"),
    "sadd.sat": intrinsic("llvm.sadd.sat.i32", "i32", "i32", "i32"),
    "ssub.sat": intrinsic("llvm.ssub.sat.i32", "i32", "i32", "i32"),
    "mul.u24": intrinsic("llvm.amdgcn.mul.u24.i32", "i32", "i32", "i32"),
    "mul.i24": intrinsic("llvm.amdgcn.mul.i24.i32", "i32", "i32", "i32"),
    "mulhi.u24": intrinsic("llvm.amdgcn.mulhi.u24", "i32", "i32", "i32"),
    "mulhi.i24": intrinsic("llvm.amdgcn.mulhi.i24", "i32", "i32", "i32"),
    "smax": intrinsic("llvm.smax.i32", "i32", "i32", "i32"),
    "umax": intrinsic("llvm.umax.i32", "i32", "i32", "i32"),
    "smin": intrinsic("llvm.smin.i32", "i32", "i32", "i32"),
    "umin": intrinsic("llvm.umin.i32", "i32", "i32", "i32"),
    "bitreverse": intrinsic("llvm.bitreverse.i32", "i32", "i32"),
    "sffbh": intrinsic("llvm.amdgcn.sffbh.i32", "i32", "i32"),
    "ctlz": intrinsic("llvm.ctlz.i32", "i32", "i32", "i1"),
    "cttz": intrinsic("llvm.cttz.i32", "i32", "i32", "i1"),
    "ctpop": intrinsic("llvm.ctpop.i32", "i32", "i32"),
    "ubfe": intrinsic("llvm.amdgcn.ubfe.i32", "i32", "i32", "i32", "i32"),
    "sbfe": intrinsic("llvm.amdgcn.sbfe.i32", "i32", "i32", "i32", "i32"),
    "fshr": intrinsic("llvm.fshr.i32", "i32", "i32", "i32", "i32"),
    "alignbyte": intrinsic("llvm.amdgcn.alignbyte", "i32", "i32", "i32", "i32"),
    "perm": intrinsic("llvm.amdgcn.perm", "i32", "i32", "i32", "i32"),
    "cvt.pk.u16": intrinsic("llvm.amdgcn.cvt.pk.u16", "<2 x i16>", "i32", "i32"),
    "cvt.pk.i16": intrinsic("llvm.amdgcn.cvt.pk.i16", "<2 x i16>", "i32", "i32"),
}


def _decls_for(ir: str) -> tuple[str, ...]:
    return tuple(decl for key, decl in _DECLS32.items() if f"@llvm.{key}" in ir or f"@llvm.amdgcn.{key}" in ir)


for text, ir in INT32.items():
    nsrc = text.count(",")
    rtype = "i32"
    gen = ("shift32", "i32") if "rev_b32" in text or "rev_i32" in text else ()
    add(Case(text, ("i32",) * nsrc, ir, rtype, _decls_for(ir), gen=gen))

add(Case("v_add_co_u32 v20, vcc_lo, v10, v12", ("i32", "i32"),
         "%s = call {i32, i1} @llvm.uadd.with.overflow.i32(i32 %x0, i32 %x1)\n%r = extractvalue {i32, i1} %s, 1",
         "i1", (intrinsic("llvm.uadd.with.overflow.i32", "{i32, i1}", "i32", "i32"),), note="the carry"))
add(Case("v_sub_co_u32 v20, vcc_lo, v10, v12", ("i32", "i32"),
         "%s = call {i32, i1} @llvm.usub.with.overflow.i32(i32 %x0, i32 %x1)\n%r = extractvalue {i32, i1} %s, 1",
         "i1", (intrinsic("llvm.usub.with.overflow.i32", "{i32, i1}", "i32", "i32"),), note="the borrow"))
add(Case("v_mad_u64_u32 v[20:21], null, v10, v12, v[14:15]", ("i32", "i32", "i64"),
         "%a = zext i32 %x0 to i64\n%b = zext i32 %x1 to i64\n%m = mul i64 %a, %b\n%r = add i64 %m, %x2", "i64"))
add(Case("v_mad_i64_i32 v[20:21], null, v10, v12, v[14:15]", ("i32", "i32", "i64"),
         "%a = sext i32 %x0 to i64\n%b = sext i32 %x1 to i64\n%m = mul i64 %a, %b\n%r = add i64 %m, %x2", "i64"))
for name, op in (("lshlrev_b64", "shl"), ("lshrrev_b64", "lshr"), ("ashrrev_i64", "ashr")):
    add(Case(f"v_{name} v[20:21], v10, v[12:13]", ("i32", "i64"),
             f"%s = and i32 %x0, 63\n%w = zext i32 %s to i64\n%r = {op} i64 %x1, %w", "i64", gen=("shift32", "i64")))

INT16 = {  # 16-bit VALU: operands the low halves of v10, v12, v14
    "v_add_nc_u16 v20, v10, v12": "%r = add i16 %x0, %x1",
    "v_sub_nc_u16 v20, v10, v12": "%r = sub i16 %x0, %x1",
    "v_mul_lo_u16 v20, v10, v12": "%r = mul i16 %x0, %x1",
    "v_add_nc_i16 v20, v10, v12 clamp": "%r = call i16 @llvm.sadd.sat.i16(i16 %x0, i16 %x1)",
    "v_add_nc_u16 v20, v10, v12 clamp": "%r = call i16 @llvm.uadd.sat.i16(i16 %x0, i16 %x1)",
    "v_sub_nc_i16 v20, v10, v12 clamp": "%r = call i16 @llvm.ssub.sat.i16(i16 %x0, i16 %x1)",
    "v_max_i16 v20, v10, v12": "%r = call i16 @llvm.smax.i16(i16 %x0, i16 %x1)",
    "v_min_u16 v20, v10, v12": "%r = call i16 @llvm.umin.i16(i16 %x0, i16 %x1)",
    "v_lshlrev_b16 v20, v10, v12": "%s = and i16 %x0, 15\n%r = shl i16 %x1, %s",
    "v_lshrrev_b16 v20, v10, v12": "%s = and i16 %x0, 15\n%r = lshr i16 %x1, %s",
    "v_ashrrev_i16 v20, v10, v12": "%s = and i16 %x0, 15\n%r = ashr i16 %x1, %s",
    "v_mad_u16 v20, v10, v12, v14": "%m = mul i16 %x0, %x1\n%r = add i16 %m, %x2",
}
for text, ir in INT16.items():
    fns = sorted({w.split("(")[0][1:] for w in ir.split() if w.startswith("@")})
    decls = tuple(intrinsic(fn, "i16", *(["i16"] * 2)) for fn in fns)
    add(Case(text, ("i16",) * text.count(","), ir, "i16", decls))

# ---------------------------------------------------------------------------------------------- packed 16-bit

PK = {
    "v_pk_add_f16": ("<2 x half>", "%r = fadd <2 x half> %x0, %x1"),
    "v_pk_mul_f16": ("<2 x half>", "%r = fmul <2 x half> %x0, %x1"),
    "v_pk_fma_f16": ("<2 x half>", "%r = call <2 x half> @llvm.fma.v2f16(<2 x half> %x0, <2 x half> %x1, "
                                   "<2 x half> %x2)"),
    "v_pk_add_u16": ("<2 x i16>", "%r = add <2 x i16> %x0, %x1"),
    "v_pk_sub_u16": ("<2 x i16>", "%r = sub <2 x i16> %x0, %x1"),
    "v_pk_mul_lo_u16": ("<2 x i16>", "%r = mul <2 x i16> %x0, %x1"),
    "v_pk_mad_u16": ("<2 x i16>", "%m = mul <2 x i16> %x0, %x1\n%r = add <2 x i16> %m, %x2"),
    "v_pk_max_i16": ("<2 x i16>", "%r = call <2 x i16> @llvm.smax.v2i16(<2 x i16> %x0, <2 x i16> %x1)"),
    "v_pk_min_u16": ("<2 x i16>", "%r = call <2 x i16> @llvm.umin.v2i16(<2 x i16> %x0, <2 x i16> %x1)"),
    "v_pk_lshlrev_b16": ("<2 x i16>", "%s = and <2 x i16> %x0, <i16 15, i16 15>\n%r = shl <2 x i16> %x1, %s"),
    "v_pk_ashrrev_i16": ("<2 x i16>", "%s = and <2 x i16> %x0, <i16 15, i16 15>\n%r = ashr <2 x i16> %x1, %s"),
}
for name, (vt, ir) in PK.items():
    n = 3 if "%x2" in ir else 2
    decls = ()
    if "@" in ir:
        fn = ir.split("@")[1].split("(")[0]
        decls = (intrinsic(fn, vt, *([vt] * n)),)
    add(Case(f"{name} v20, " + ", ".join(["v10", "v12", "v14"][:n]), (vt,) * n, ir, vt, decls))
add(Case("v_pk_add_i16 v20, v10, v12 clamp", ("<2 x i16>",) * 2,
         "%r = call <2 x i16> @llvm.sadd.sat.v2i16(<2 x i16> %x0, <2 x i16> %x1)", "<2 x i16>",
         (intrinsic("llvm.sadd.sat.v2i16", "<2 x i16>", "<2 x i16>", "<2 x i16>"),)))
add(Case("v_pk_max_f16 v20, v10, v12", ("<2 x half>",) * 2,
         "%r = call <2 x half> @llvm.maxnum.v2f16(<2 x half> %x0, <2 x half> %x1)", "<2 x half>",
         (intrinsic("llvm.maxnum.v2f16", "<2 x half>", "<2 x half>", "<2 x half>"),), nan_bits=False))

# ---------------------------------------------------------------------------------------------- scalar ALU
# Each wave runs the instruction on its first lane's operands (v_readfirstlane), the case's rows repeated
# across the wave's 32 lanes; the result returns through v20/v21 and SCC through VCC.

SALU = {
    "s_add_u32": "%r = add i32 %x0, %x1", "s_sub_u32": "%r = sub i32 %x0, %x1",
    "s_mul_i32": "%r = mul i32 %x0, %x1",
    "s_mul_hi_u32": INT32["v_mul_hi_u32 v20, v10, v12"], "s_mul_hi_i32": INT32["v_mul_hi_i32 v20, v10, v12"],
    "s_and_b32": "%r = and i32 %x0, %x1", "s_or_b32": "%r = or i32 %x0, %x1", "s_xor_b32": "%r = xor i32 %x0, %x1",
    "s_lshl_b32": "%s = and i32 %x1, 31\n%r = shl i32 %x0, %s",
    "s_lshr_b32": "%s = and i32 %x1, 31\n%r = lshr i32 %x0, %s",
    "s_ashr_i32": "%s = and i32 %x1, 31\n%r = ashr i32 %x0, %s",
    "s_min_i32": "%r = call i32 @llvm.smin.i32(i32 %x0, i32 %x1)",
    "s_max_u32": "%r = call i32 @llvm.umax.i32(i32 %x0, i32 %x1)",
    # S_ABSDIFF_I32 wraps the difference (see test_sem_salu): llvm.abs with INT_MIN not poison agrees
    "s_absdiff_i32": "%d = sub i32 %x0, %x1\n%r = call i32 @llvm.abs.i32(i32 %d, i1 0)",
    "s_brev_b32": "%r = call i32 @llvm.bitreverse.i32(i32 %x0)",
    "s_bcnt1_i32_b32": "%r = call i32 @llvm.ctpop.i32(i32 %x0)",
    "s_abs_i32": "%r = call i32 @llvm.abs.i32(i32 %x0, i1 0)",
    "s_sext_i32_i16": "%t = trunc i32 %x0 to i16\n%r = sext i16 %t to i32",
    "s_sext_i32_i8": "%t = trunc i32 %x0 to i8\n%r = sext i8 %t to i32",
    "s_cls_i32": INT32["v_cls_i32 v20, v10"],
}
_DECLS32["abs"] = intrinsic("llvm.abs.i32", "i32", "i32", "i1")
for name, ir in SALU.items():
    one = "%x1" not in ir
    text = f"{name} s40, s30" + ("" if one else ", s32")
    add(Case(text, ("i32",) * (1 if one else 2), ir, "i32", _decls_for(ir), extra={"scalar": True}))
add(Case("s_add_u32 s40, s30, s32", ("i32", "i32"),
         "%s = call {i32, i1} @llvm.uadd.with.overflow.i32(i32 %x0, i32 %x1)\n%r = extractvalue {i32, i1} %s, 1",
         "i1", (intrinsic("llvm.uadd.with.overflow.i32", "{i32, i1}", "i32", "i32"),), extra={"scalar": True},
         note="SCC: the carry"))
