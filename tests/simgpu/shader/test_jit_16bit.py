"""16-bit VALU forms in both tiers: every defined opcode with a 16-bit operand or result (valu.SPECS) of an
architecture the JIT translates runs natively on low and high register halves: VGPR halves picked by bit 7 of the
register number (VOP1/VOP2/VOPC) or op_sel (VOP3), the destination's half likewise (the other half kept), SGPR,
inline constant and literal sources; on f16 specials (NaN payloads, signed zeros, denormals, infinities) and random
bits in both halves, under MODEs that keep or flush denormals, with IEEE on and off. The JIT's registers are the
interpreter's bit for bit (the interpreter is checked against numpy and exact references by test_sem_vfloat.py,
test_sem_vint.py & co.). The default MODE's kernels compile at the JIT's default code generation, as users' kernels do;
the flush modes' at tiers.FUZZ_CODEGEN (tiers.mode_codegen: the same IR passes; only LLVM's instruction selection,
scheduling and register allocation are its quickest, which do not change what the code computes): code generation
was two thirds of this file's CPU time."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from simgpu.isa import assemble, decode
from simgpu.isa.arch import get_arch
from simgpu.isa.errors import AsmError
from simgpu.isa.inst import families
from simgpu.shader.jit import lower, region, translate
from simgpu.shader.semantics import base_name, implemented
from simgpu.shader.state import HW_MODE
from simgpu.shader.vector.valu import SPECS, TYPES
from tests.support import tiers
from tests.support.mode_kernels import WAITS, code_object, f16_inputs, workgroup_id

# every f16 fma (v_fma_f16, v_fmac_f16, v_fmamk/fmaak_f16) stays the interpreter's: LLVM without native f16
# arithmetic rounds it twice, through fmaf (jit.lower_sem)
FMA16 = ("v_fma_f16", "v_fmac_f16", "v_fmamk_f16", "v_fmaak_f16")


def _forms(name: str, spec) -> list[list[str]]:
    """Operand lists of the instruction's forms (a result register is prepended later): low halves, high halves
    (v129-v131 hold v1-v3 rotated by 16 bits; in e32 forms they name v1.h-v3.h), scalar and constant sources, and
    VOP3 op_sel."""
    n = len(spec.srcs)
    srcs = [[f"v{1 + i}" for i in range(n)], [f"v{129 + i}" for i in range(n)],
            ["s8", *[f"v{2 + i}" for i in range(n - 1)]], ["2.0" if "f16" in name else "-1", *[f"v{1 + i}" for i in
                                                                                             range(n - 1)]]]
    if name.startswith(("v_fmamk", "v_fmaak")):
        srcs = [[f"v{1 + i}" for i in range(n)] for _ in range(2)]
        srcs[0][1 if name.startswith("v_fmamk") else 2] = "0x3e00"
        srcs[1][1 if name.startswith("v_fmamk") else 2] = "0xbc01"
    srcs = [s + (["vcc_lo"] if spec.mask_in else []) for s in srcs]
    forms = [(s, "") for s in srcs]
    forms += [(srcs[0], f" op_sel:[{','.join('1' if (k + i) % 2 else '0' for i in range(n + 1))}]")
              for k in (0, 1)]
    return forms


def _instructions(arch: str) -> list[str]:
    """Every form of every 16-bit opcode of `arch`, each with its own result (or compare mask) register."""
    implemented()
    family = get_arch(arch).family
    names = {base_name(m) for fam in families() for m in fam.mnemonics(arch)}
    out = []
    for name, spec in sorted(SPECS.items()):
        types = (*spec.srcs, *([spec.dst] if spec.dst else []))
        if spec.definition is None or min(TYPES[t][1] for t in types) != 16 or name not in names:
            continue
        if spec.family not in (None, family):
            continue
        for srcs, mods in _forms(name, spec):
            for high_dst in (False, True):
                out.append((name, spec, srcs, mods, high_dst))
    return out


@cache
def _kernels(arch: str) -> list[list[str]]:
    """The instructions that assemble, in kernels, each writing its own register from v12 to v127 (the high-half
    destination of an e32 form is v128 + r: vr.h); a compare's mask is kept in a VGPR and EXEC restored after a
    cmpx. (The same for every MODE: made once an architecture.)"""
    kernels, lines, r = [], [], 12
    for name, spec, srcs, mods, high_dst in _instructions(arch):
        if spec.compare:
            if high_dst:
                continue
            text = f"{name} {', '.join(([] if spec.cmpx else ['vcc_lo']) + srcs)}{mods}"
            post = [f"v_mov_b32 v{r}, {'exec_lo' if spec.cmpx else 'vcc_lo'}", "s_mov_b32 exec_lo, s30"]
        else:
            text = f"{name} {', '.join([f'v{128 + r if high_dst else r}', *srcs])}{mods}"
            post = []
        try:
            assemble(text, arch=arch)
        except AsmError:
            continue
        lines += ([] if spec.compare else [f"v_mov_b32 v{r}, v3"]) + [text] + post  # (the kept half: v3's)
        r += 1
        if r == 128:
            kernels.append(lines)
            lines, r = [], 12
    return kernels + [lines]


def _code(body: list[str], mode: dict, arch: str) -> bytes:
    smem, vmem = WAITS[arch]
    prologue = ["s_load_b64 s[4:5], s[0:1], 0x0", f"v_lshl_add_u32 v31, {workgroup_id(arch)}, 6, v0",
                "v_lshlrev_b32 v31, 4, v31",
                "s_mov_b32 s8, 0x7d00bc01", "s_mov_b32 s30, exec_lo", smem,
                "global_load_b96 v[1:3], v31, s[4:5]", vmem,
                "v_alignbit_b32 v129, v1, v1, 16", "v_alignbit_b32 v130, v2, v2, 16", "v_alignbit_b32 v131, v3, v3, 16"]
    return code_object(prologue + body + ["s_endpgm"], mode, arch)


MODES = [{}, {"float_denorm_mode_16_64": 0, "enable_ieee_mode": 0}, {"float_denorm_mode_16_64": 2}]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("mode", MODES, ids=["default", "flush-legacy", "flush-in"])
def test_16bit_forms_agree_in_both_tiers(mode, arch):
    kernels = _kernels(arch)
    assert sum(len(k) for k in kernels) > 500
    data = f16_inputs(np.random.default_rng(11), 64 * 7)  # 448 lanes: the 400 pairs of specials and more
    for body in kernels:
        code = _code(body, mode, arch)
        pair = tiers.pair(arch=arch)
        with tiers.mode_codegen(mode):
            for tb in pair:
                tb.launch(tb.load(code)["k"], [tb.upload(data)], (7,), (64,))
        tiers.assert_same(*pair)  # (the registers at exit hold every result)
        mode_reg = int(pair[0].engine.exit_states[0][0].hwreg[0, HW_MODE])
        classify = translate.classifier(lower.Lowering(32, mode_reg, 256), 256, lambda inst: True)
        foreign = [a for a in body if classify(decode(assemble(a, arch=arch), arch=arch), 0)[0] != region.NATIVE
                   and not a.startswith(FMA16)]
        assert not foreign, foreign
