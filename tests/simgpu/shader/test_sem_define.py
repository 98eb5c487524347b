"""One definition, two tiers: a definition in the expression form (sem.expr) is what both the interpreter and the
JIT run. A test-only override of V_ADD_NC_U32's and of V_ADD_F32's definition (vector.valu.override) changes the
result of a kernel in the interpreter and in the JIT alike (the JIT compiling the loop natively, checked by its
counters); the oracle is numpy's arithmetic on the lane ids, not our code. Then the generated kernels of a few
definitions against numpy and the ISA's own formulas, and every defined float opcode the JIT translates in both
tiers on float specials under several MODEs (the interpreter, checked against exact rationals and numpy by
test_sem_vfloat.py & co., is the reference). And no hand-written translator shadows a definition: the JIT's
translator of each of the ~670 defined opcodes is the one generated from it (issue 30)."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.isa import assemble, decode
from simgpu.isa.arch import get_arch
from simgpu.isa.inst import families
from simgpu.shader.jit import jit_tier, lower, region, translate
from simgpu.shader.scalar.define import SPECS as SALU_SPECS
from simgpu.shader.sem.expr import Definition, cast, is_float, select
from simgpu.shader.sem.numpy_gen import numpy_kernel
from simgpu.shader.semantics import base_name, implemented
from simgpu.shader.state import HW_MODE
from simgpu.shader.vector.gfx9 import OWN_SPECS as GFX9_SPECS
from simgpu.shader.vector.valu import SPECS, TYPES, override
from simgpu.shader.vector.vop3p import PACKED
from simgpu.testbed import Testbed
from tests.simgpu.shader.test_jit_tier import LOOP as JIT_TIER_LOOP
from tests.support import tiers
from tests.support.mode_kernels import WAITS, code_object, workgroup_id

N = 40  # loop trips: v1 += lane id each trip
LOOP = JIT_TIER_LOOP.format(n=N)


def _run(jit: bool, loop: str = LOOP) -> tuple[np.ndarray, int]:
    """The 32 words the loop stores, and the instructions the JIT ran natively (0 in the interpreter)."""
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("eager") if jit else None
    k = tb.load_asm(loop, args=1, vgprs=8)
    out = tb.alloc(4 * 32)
    tb.launch(k, [out], (1,), (32,))
    native = tb.engine.jit.stats.native_instructions if jit else 0
    if jit:
        assert not tb.engine.jit.stats.failures, tb.engine.jit.stats.failures
    return tb.download(out, np.uint32, 32), native


def test_an_override_of_v_add_nc_u32_changes_both_tiers():
    lanes = np.arange(32, dtype=np.uint64)
    added = (lanes * N).astype(np.uint32)
    xored = np.zeros(32, np.uint32)  # v1 ^= lane, an even number of times
    for want, definition in ((added, None), (xored, lambda a, b, clamp: a ^ b), (added, None)):
        if definition is None:
            results = [_run(False), _run(True)]
        else:
            with override("v_add_nc_u32", definition):
                results = [_run(False), _run(True)]
        (interp, _), (jit, native) = results
        assert native > N, "the JIT ran the loop natively"
        assert np.array_equal(interp, want)
        assert np.array_equal(jit, want)


class _Ctx:
    def __init__(self, clamp: bool = False, carry: bool = True, lanes: int = 32):
        self.clamp, self.carry, self.lanes = clamp, carry, lanes


def test_generated_kernels_follow_the_definitions():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 32, (3, 32), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, (3, 32), dtype=np.uint64).astype(np.uint32)
    a[0, :4] = [0, 0xFFFFFFFF, 0x80000000, 7]
    # a saturating add: the clamped body and the wrapping one, picked by the instruction's clamp bit
    sat = numpy_kernel(Definition(("u32", "u32"), lambda x, y, clamp: (
        cast(select(cast(x, "u64") + cast(y, "u64") > 0xFFFFFFFF, 0xFFFFFFFF, cast(x, "u64") + cast(y, "u64")),
             "u32") if clamp else x + y), clamp=True))
    exact = a.astype(np.uint64) + b.astype(np.uint64)
    assert np.array_equal(sat(_Ctx(clamp=True), a, b), np.minimum(exact, 0xFFFFFFFF).astype(np.uint32))
    assert np.array_equal(sat(_Ctx(), a, b), (exact & 0xFFFFFFFF).astype(np.uint32))
    # a carry-out that goes to null is not computed
    carry = numpy_kernel(Definition(("u32", "u32"), lambda x, y: (x + y, x + y < x)))
    d, c = carry(_Ctx(), a, b)
    assert np.array_equal(c, exact > 0xFFFFFFFF) and carry(_Ctx(carry=False), a, b)[1] is None
    # signed types: >> is arithmetic, < compares signed, casts sign-extend
    sra = numpy_kernel(Definition(("i32",), lambda x: cast(x >> 4, "i64") * 2))
    assert np.array_equal(sra(_Ctx(), a.view(np.int32)), (a.view(np.int32).astype(np.int64) >> 4) * 2)


# ---------------------------------------------------------------------------------------------- floats

LOOP_F32 = f"""
    s_load_b64 s[4:5], s[0:1], 0x0
    s_mov_b32 s7, 0x3c800000
    v_cvt_f32_u32 v2, v0
    v_fma_f32 v2, v2, s7, 1.0
    v_mov_b32 v1, 1.0
    s_mov_b32 s6, {N}
loop:
    v_add_f32 v1, v1, v2
    s_add_u32 s6, s6, -1
    s_cmp_lg_u32 s6, 0
    s_cbranch_scc1 loop
    v_lshlrev_b32 v2, 2, v0
    s_waitcnt lgkmcnt(0)
    global_store_b32 v2, v1, s[4:5]
    s_endpgm
"""


def test_an_override_of_v_add_f32_changes_both_tiers():
    """v1 = 1.0, then N times v1 = v_add_f32(v1, 1 + lane / 64); overridden to a product, the same loop multiplies.
    The oracle is numpy's float32 arithmetic."""
    step = np.arange(32, dtype=np.float32) * np.float32(1 / 64) + np.float32(1)
    want = {}
    for name, fn in (("add", np.add), ("mul", np.multiply)):
        acc = np.ones(32, np.float32)
        for _ in range(N):
            acc = fn(acc, step)
        want[name] = acc.view(np.uint32)
    for expect, definition in (("add", None), ("mul", lambda a, b: a * b), ("add", None)):
        if definition is None:
            results = [_run(False, LOOP_F32), _run(True, LOOP_F32)]
        else:
            with override("v_add_f32", definition):
                results = [_run(False, LOOP_F32), _run(True, LOOP_F32)]
        (interp, _), (jit, native) = results
        assert native > N, "the JIT ran the loop natively"
        assert np.array_equal(interp, want[expect])
        assert np.array_equal(jit, want[expect])


def _defined_specs():
    """(mnemonic, family or None, spec) of every opcode defined in the expression form: the VALU (vector.valu), its
    packed forms (vector.vop3p), gfx9's own VALU (vector.gfx9) and the SALU (scalar.define)."""
    implemented()  # every semantics module loaded: the tables complete
    for name, spec in SPECS.items():
        yield name, spec.family, spec
    for name, (spec, family) in PACKED.items():
        yield name, family, spec
    for name, spec in GFX9_SPECS.items():
        yield name, "gfx9", spec
    for name, spec in SALU_SPECS.items():
        yield name, spec.family, spec


def test_every_defined_opcode_is_translated_from_its_definition():
    """No hand-written IR shadows a definition: the JIT's translator of every defined opcode is the one generated
    from that opcode's definition (lower.from_definition), so a change to the definition reaches both tiers."""
    translate.load_translators()
    checked = 0
    for name, family, spec in _defined_specs():
        if spec.definition is None:
            continue
        table = lower.TRANSLATORS if family is None else lower.FAMILY_TRANSLATORS.get(family, {})
        fn = table.get(name)
        assert fn is not None, f"{name} ({family or 'shared'}) is defined but has no translator"
        assert getattr(fn, "spec", None) is spec, f"{name}: its translator is not generated from its definition"
        checked += 1
    assert checked > 600  # (the VALU's, packed, gfx9's and the SALU's definitions: 672 today)


F32_SPECIALS = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FA00000, 1, 0x807FFFFF,
                0x00800000, 0x3F800000, 0xBF800000, 0x4B000000, 0x7F7FFFFF, 0x00400000, 0x3EFFFFFF, 0x3F000000,
                0xBF400000, 0x4F800000, 0xCF000000, 0x477FFF00, 0x3F7FFFFF]
F64_SPECIALS = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000001,
                0x7FF0000000000001, 1, 0x800FFFFFFFFFFFFF, 0x0010000000000000, 0x3FF0000000000000, 0xBFE8000000000000,
                0x4330000000000000, 0x7FEFFFFFFFFFFFFF, 0x41F0000000000000, 0xC1E0000000000000, 0x3FDFFFFFFFFFFFFF]


def _float_instructions(arch: str) -> list[str]:
    """One instruction per defined float opcode of `arch` the JIT translates (32- and 64-bit operands): 32-bit
    sources v1-v3, 64-bit ones v[4:5], v[6:7], v[8:9]; its own result register from v12 up (or VCC, EXEC)."""
    implemented()
    family = get_arch(arch).family
    names = {base_name(m) for fam in families() for m in fam.mnemonics(arch)}
    out, r = [], 12
    for name, spec in sorted(SPECS.items()):
        types = (*spec.srcs, spec.dst or spec.srcs[0])
        if spec.definition is None or not any(is_float(t) for t in types) or min(TYPES[t][1] for t in types) < 32:
            continue
        if name not in names or spec.family not in (None, family):  # (another architecture's, or its own meaning)
            continue
        srcs = [f"v[{4 + 2 * i}:{5 + 2 * i}]" if TYPES[t][1] == 64 else f"v{1 + i}" for i, t in enumerate(spec.srcs)]
        if name.startswith("v_fmamk"):
            srcs[1] = "0x3fc00000"
        elif name.startswith("v_fmaak"):
            srcs[2] = "0xbf400000"
        srcs += ["vcc_lo"] if spec.mask_in and not spec.vcc_in else []  # (v_div_fmas reads VCC unnamed)
        if spec.compare:  # the lane mask kept in a VGPR (EXEC restored after a cmpx)
            out += [f"{name} {', '.join(([] if spec.cmpx else ['vcc_lo']) + srcs)}",
                    f"v_mov_b32 v{r}, {'exec_lo' if spec.cmpx else 'vcc_lo'}", "s_mov_b32 exec_lo, s30"]
            r += 1
            continue
        wide = TYPES[spec.dst][1] == 64
        r += wide and r % 2
        if spec.acc:
            out.append(f"v_mov_b32 v{r}, v3")
        carry = ["vcc_lo"] if spec.carry_out else []  # (v_div_scale: VCC, which v_div_fmas then reads)
        out.append(f"{name} {', '.join([f'v[{r}:{r + 1}]' if wide else f'v{r}'] + carry + srcs)}")
        r += 1 + wide
    assert r <= 256
    return out


def _float_kernel(mode: dict, arch: str) -> tuple[bytes, list[str]]:
    """The code object of a kernel running every instruction of _float_instructions on registers loaded per lane
    from its argument, and the instructions. (The workgroup id: s2 on gfx11, ttmp9 on gfx12.)"""
    asm = _float_instructions(arch)
    smem, vmem = WAITS[arch]
    body = ["s_load_b64 s[4:5], s[0:1], 0x0", f"v_lshl_add_u32 v31, {workgroup_id(arch)}, 6, v0",
            "v_lshlrev_b32 v31, 6, v31",
            "s_mov_b32 s30, exec_lo",
            smem, "global_load_b128 v[1:4], v31, s[4:5]",
            "global_load_b128 v[5:8], v31, s[4:5] offset:16", "global_load_b32 v9, v31, s[4:5] offset:32",
            vmem, *asm, "s_endpgm"]
    return code_object(body, mode, arch), asm


def _float_inputs(rng, lanes: int) -> np.ndarray:
    """16 dwords per lane: v1, v2 run through every pair of f32 specials and v[4:5], v[6:7] through every pair of
    f64 specials; v3, v[8:9] and the lanes after those pairs take specials, small integers and random bits."""
    f32 = rng.choice(np.array(F32_SPECIALS, np.uint32), (lanes, 3))
    f32 = np.where(rng.random((lanes, 3)) < 0.3, rng.integers(0, 1 << 32, (lanes, 3), dtype=np.uint64), f32)
    f32 = np.where(rng.random((lanes, 3)) < 0.1, rng.integers(0, 1024, (lanes, 3)), f32).astype(np.uint32)
    pairs = np.array([(a, b) for a in F32_SPECIALS for b in F32_SPECIALS], np.uint32)
    f32[:len(pairs), :2] = pairs
    f64 = rng.choice(np.array(F64_SPECIALS, np.uint64), (lanes, 3))
    rand = rng.standard_normal((lanes, 3)) * np.exp2(rng.integers(-40, 40, (lanes, 3)))
    f64 = np.where(rng.random((lanes, 3)) < 0.3, rand.view(np.uint64), f64)
    pairs = np.array([(a, b) for a in F64_SPECIALS for b in F64_SPECIALS], np.uint64)
    f64[:len(pairs), :2] = pairs
    words = np.zeros((lanes, 16), np.uint32)
    words[:, :3] = f32
    words[:, 3:9] = f64.view(np.uint32).reshape(lanes, 6)
    return words


MODES = [{}, {"float_denorm_mode_32": 0, "float_denorm_mode_16_64": 0, "enable_ieee_mode": 0},
         {"float_denorm_mode_32": 1, "float_denorm_mode_16_64": 2},
         {"float_denorm_mode_32": 2, "float_denorm_mode_16_64": 1, "enable_ieee_mode": 0},
         {"float_round_mode_32": 3, "float_round_mode_16_64": 1}]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("mode", MODES, ids=["default", "flush-legacy", "in-out", "out-in-legacy", "rtz"])
def test_float_definitions_agree_in_both_tiers(mode, arch):
    """Every defined float opcode of the architecture the JIT translates (gfx1201's: the shared ones it decodes and
    its own, v_min_num_f32 & co.), on float specials (NaN payloads, signed zeros, denormals, infinities) and random
    values, under MODEs that flush or keep denormals with IEEE on and off (gfx12's MODE has no IEEE bit): the JIT's
    results are the interpreter's bit for bit; each instruction is native in the JIT unless MODE rounds other
    than to nearest even (then the interpreter runs it in both)."""
    code, asm = _float_kernel(mode, arch)
    assert len([a for a in asm if not a.startswith(("v_mov", "s_mov"))]) > 120
    groups = 9  # 576 lanes: the 529 pairs of f32 specials and more
    data = _float_inputs(np.random.default_rng(7), 64 * groups)
    pair = tiers.pair(arch=arch)
    with tiers.mode_codegen(mode):  # (the default MODE at the default code generation, the others at the quickest)
        for tb in pair:
            tb.launch(tb.load(code)["k"], [tb.upload(data)], (groups,), (64,))
    tiers.assert_same(*pair)  # (the registers at exit hold every result)
    if "float_round_mode_32" not in mode:
        mode_reg = int(pair[0].engine.exit_states[0][0].hwreg[0, HW_MODE])
        classify = translate.classifier(lower.Lowering(32, mode_reg, 256), 256, lambda inst: True)
        foreign = [a for a in asm if classify(decode(assemble(a, arch=arch), arch=arch), 0)[0] != region.NATIVE]
        assert not foreign, foreign
