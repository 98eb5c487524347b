"""Packed math in both tiers: every v_pk_* of an architecture the JIT translates (vector.vop3p.PACKED, each lane half
its VALU opcode's definition) runs natively, with op_sel/op_sel_hi, neg_lo/neg_hi, clamp and VGPR, SGPR, inline
constant and literal sources, on f16 specials in both halves (NaN payloads, signed zeros, denormals, infinities)
and random bits, under MODEs that keep or flush f16 denormals with IEEE on and off; the JIT's registers are the
interpreter's bit for bit. The interpreter is checked against reference arithmetic by test_sem_vop3p.py."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.isa import assemble, decode
from simgpu.isa.inst import families
from simgpu.shader.jit import lower, region, translate
from simgpu.shader.semantics import base_name, family_of, implemented
from simgpu.shader.state import HW_MODE
from simgpu.shader.vector.vop3p import PACKED
from tests.support import tiers
from tests.support.mode_kernels import WAITS, code_object, f16_inputs, workgroup_id

# (sources, op_sel, op_sel_hi, neg_lo, neg_hi, clamp): s8 holds a pair of f16 specials
FORMS = [("v1, v2, v3", 0, 7, 0, 0, 0), ("v1, v2, v3", 5, 2, 3, 4, 1), ("v2, s8, v1", 2, 5, 1, 2, 0),
         ("v3, 2.0, v2", 3, 7, 6, 1, 1), ("-1, v1, 0x3c00bc01", 6, 1, 0, 5, 0), ("0.5, v3, v1", 1, 0, 2, 7, 1)]


def _bits(x: int, n: int) -> str:
    return "[" + ",".join(str((x >> i) & 1) for i in range(n)) + "]"


def _instructions(arch: str) -> list[str]:
    implemented()
    names = {base_name(m) for fam in families() for m in fam.mnemonics(arch)}
    out, r = [], 12
    for name, (spec, family) in sorted(PACKED.items()):
        if name not in names or family not in (None, family_of(arch)) or spec.dst not in ("f16", "u16", "i16"):
            continue
        n = len(spec.srcs)
        for srcs, osel, oshi, nlo, nhi, clamp in FORMS:
            mods = f" op_sel:{_bits(osel, n)} op_sel_hi:{_bits(oshi, n)}"
            mods += f" neg_lo:{_bits(nlo, n)} neg_hi:{_bits(nhi, n)}" if spec.dst == "f16" else ""
            out.append(f"{name} v{r}, {', '.join(srcs.split(', ')[:n])}{mods}{' clamp' if clamp else ''}")
            r += 1
    assert r <= 256
    return out


def _kernel(mode: dict, arch: str) -> tuple[bytes, list[str]]:
    asm = _instructions(arch)
    smem, vmem = WAITS[arch]
    body = ["s_load_b64 s[4:5], s[0:1], 0x0", f"v_lshl_add_u32 v31, {workgroup_id(arch)}, 6, v0",
            "v_lshlrev_b32 v31, 4, v31",
            "s_mov_b32 s8, 0x7d00bc01", smem, "global_load_b96 v[1:3], v31, s[4:5]", vmem, *asm, "s_endpgm"]
    return code_object(body, mode, arch), asm


MODES = [{}, {"float_denorm_mode_16_64": 0, "enable_ieee_mode": 0}, {"float_denorm_mode_16_64": 1},
         {"float_round_mode_16_64": 3}]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("mode", MODES, ids=["default", "flush-legacy", "flush-out", "rtz"])
def test_packed_math_agrees_in_both_tiers(mode, arch):
    code, asm = _kernel(mode, arch)
    groups = 7  # 448 lanes: the 400 pairs of specials and more
    data = f16_inputs(np.random.default_rng(3), 64 * groups)
    pair = tiers.pair(arch=arch)
    for tb in pair:
        tb.launch(tb.load(code)["k"], [tb.upload(data)], (groups,), (64,))
    tiers.assert_same(*pair)  # (the registers at exit hold every result)
    if "float_round_mode_16_64" in mode:
        return  # (f16 arithmetic rounding other than to nearest even runs in the interpreter in both)
    mode_reg = int(pair[0].engine.exit_states[0][0].hwreg[0, HW_MODE])
    classify = translate.classifier(lower.Lowering(32, mode_reg, 256), 256, lambda inst: True)
    foreign = [a for a in asm if classify(decode(assemble(a, arch=arch), arch=arch), 0)[0] != region.NATIVE]
    # an f16 fma: LLVM without native f16 arithmetic rounds it twice (through fmaf), so the interpreter runs it
    assert foreign and all(a.startswith("v_pk_fma_f16") for a in foreign), foreign
