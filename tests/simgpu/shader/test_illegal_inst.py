"""The illegal-instruction exception (SQ_WAVE_TRAPSTS.ILLEGAL_INST), raised by every semantic function through one
method, Exec.illegal_inst: the fault's kind, message, VMID, PC and instruction for the paths no other test reaches
(the others: test_shader_engine, test_shader_fuzz, test_sem_mimg, test_sem_gfx12, test_sem_table).

Each kernel is `s_nop 0`, the instruction, `s_endpgm`; where the assembler (like llvm-mc) refuses the operand that
faults, the instruction is assembled with a legal one and the field is changed in its bytes."""

from __future__ import annotations

import pytest

from simgpu.fault import HardwareFault
from simgpu.isa import assemble, decode
from simgpu.shader.vector import valu, vopd
from simgpu.testbed import Testbed

S1, SCC = 1, 253  # operand codes: an SGPR where a VGPR is needed, and SCC where a float source is read


def _fault(text: str, arch: str = "gfx1100", **fields) -> tuple[HardwareFault, int, str]:
    """The fault of a one-wave kernel running `text` (its `fields` changed), its PC and the instruction's text."""
    tb = Testbed(vram_size=1 << 26, arch=arch)
    k = tb.load_asm(f"s_nop 0\n{text}\ns_endpgm", args=0, vgprs=32)
    inst = decode(assemble(text, arch=arch), arch=arch)
    inst.fields.update(fields)
    tb.write(k.code_address + 4, inst.encode())
    with pytest.raises(HardwareFault) as e:
        tb.launch(k, [], (1,), (32,))
    return e.value, k.code_address + 4, inst.mnemonic


@pytest.mark.parametrize("text, arch, fields, message", [
    ("v_readlane_b32 s0, v1, 0", "gfx1100", {"src0": S1}, "v_readlane_b32: source must be a VGPR"),
    ("v_movrels_b32_dpp v1, v2 row_shl:1", "gfx1100", {}, "v_movrels_b32_dpp: DPP forms are not implemented"),
    ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]", "gfx1100", {"src0": S1},
     "WMMA A/B operands must be VGPRs"),
    ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]", "gfx1100", {"src2": S1},
     "WMMA C operand must be VGPRs"),
    ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]", "gfx1201", {"src1": S1},
     "v_wmma_f32_16x16x16_f16: its src1 operand must be VGPRs"),
    ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]", "gfx1201", {"src2": S1},
     "WMMA C operand must be VGPRs or an inline constant"),
    ("s_barrier_signal 1", "gfx1201", {}, "named barrier 1 is not implemented (only the workgroup barrier, -1)"),
    ("s_barrier_wait 0xfffe", "gfx1201", {}, "the trap barrier is not implemented"),
    ("s_add_f32 s0, s1, s2", "gfx1201", {"ssrc0": SCC}, f"operand code {SCC} for f32"),
])
def test_the_fault_names_the_instruction_and_the_wave(text, arch, fields, message):
    f, pc, mnemonic = _fault(text, arch, **fields)
    assert (f.kind, f.message, f.pc, f.wave) == ("illegal_instruction", message, pc, 0)
    assert f.instruction.startswith(mnemonic) and f"vmid {f.vmid}," in str(f)
    assert f.registers["exec"] == 0xFFFFFFFF  # the wave's register snapshot is in the report


def test_a_dual_issue_op_without_a_single_issue_twin_is_an_illegal_instruction(monkeypatch):
    """VOPD runs each half as its single-issue twin (vopd.py): a half whose twin has no semantics faults."""
    monkeypatch.delitem(valu.SPECS, "v_mul_f32")
    monkeypatch.setattr(vopd, "_SPECS", {})
    f, pc, _ = _fault("v_dual_add_f32 v0, v1, v2 :: v_dual_mul_f32 v3, v4, v5")
    assert (f.kind, f.message, f.pc) == ("illegal_instruction", "v_dual_mul_f32: v_mul_f32 not implemented", pc)
