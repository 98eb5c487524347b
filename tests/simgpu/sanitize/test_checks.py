"""The sanitizers' parts: selection, the footprint of every memory instruction, hand-written hazards, and
the corpus of llvmlite kernels (compiler/samples) clean with every check on."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.samples import corpus
from simgpu.sanitize import CHECKS, parse_checks
from simgpu.sanitize.footprint import covered, touches_memory
from simgpu.shader import semantics
from simgpu.testbed import Testbed


def test_selection():
    assert parse_checks("all") == parse_checks("memcheck,initcheck,racecheck,hazards") == frozenset(CHECKS)
    assert parse_checks("") == parse_checks(None) == parse_checks("0") == frozenset()
    assert parse_checks(" MemCheck , hazards") == {"memcheck", "hazards"}
    with pytest.raises(ValueError, match="unknown sanitizer check.*synccheck"):
        parse_checks("memcheck,synccheck")


def test_every_memory_instruction_has_a_footprint():
    missing = sorted(m for m in semantics.implemented() if touches_memory(m) and not covered(m))
    assert missing == []


@pytest.mark.parametrize("k", corpus(), ids=lambda k: k.name)
def test_corpus_kernels_are_clean(k):
    tb = Testbed(vram_size=1 << 28, sanitize="all")
    loaded = tb.load(k.code_object())[k.name]
    args = k.inputs(np.random.default_rng(0))
    vas = [tb.upload(a) if isinstance(a, np.ndarray) else a for a in args]
    tb.launch(loaded, vas, k.grid, k.block, k.shared)
    after = [tb.download(va, a.dtype, a.size) if isinstance(a, np.ndarray) else a
             for va, a in zip(vas, args, strict=True)]
    assert k.mismatch(args, after) is None  # the sanitizers change no result
    assert [f.text() for f in tb.sanitizer.findings] == []


def _hazards(body: str, wave64: bool = False, vgprs: int = 32):
    tb = Testbed(vram_size=1 << 28, sanitize="hazards")
    k = tb.load_asm(body, name="h", args=0, vgprs=vgprs, wave32=not wave64)
    tb.launch(k, [], (1,), (64 if wave64 else 32,))
    return [(f.what, f.pc - k.code_address) for f in tb.sanitizer.findings]


def test_permlane_right_after_vcmpx():
    body = "v_cmpx_ne_u32_e32 0, v0\n{}\nv_permlane16_b32 v1, v0, 0, 0\ns_endpgm"
    assert _hazards(body.format("v_nop")) == [("v_permlane after v_cmpx", 8)]
    assert _hazards(body.format("v_mov_b32 v2, v0")) == []


def test_wmma_reading_the_previous_result():
    body = ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n{}\n"
            "v_wmma_f32_16x16x16_f16 v[24:31], v[0:7], v[16:23], v[24:31]\ns_endpgm")
    assert _hazards(body.format("s_nop 0")) == [("WMMA reads the previous WMMA's result as A or B", 12)]
    assert _hazards(body.format("v_nop")) == []


def test_wave64_mask_write():
    # the assembler writes wave32 syntax; s4 as a VOP3 mask operand is the pair s[4:5] in a wave64 kernel
    body = ("v_cmp_eq_u32_e64 s4, 0, v0\nv_cndmask_b32_e64 v1, 0, 1, s4\ns_mov_b64 s[4:5], -1\n{}\n"
            "s_and_b64 s[6:7], s[4:5], exec\ns_endpgm")
    assert _hazards(body.format("s_nop 0"), wave64=True) == [
        ("SALU reads an SGPR a VALU used as a lane mask, after an SALU wrote it", 24)]
    assert _hazards(body.format("s_waitcnt_depctr 0xfffe"), wave64=True) == []
    assert _hazards(body.format("s_nop 0")) == []  # wave32 has no such hazard


def test_wave64_partial_forwarding():
    body = ("v_mov_b32 v1, 1\ns_mov_b64 exec, -1\nv_mov_b32 v2, 2\n{}v_add_nc_u32 v3, v1, v2\ns_endpgm")
    assert _hazards(body.format(""), wave64=True) == [("VALU partial forwarding across an EXEC write", 12)]
    assert _hazards(body.format("v_nop\n" * 5), wave64=True) == []


def test_scratch_sgpr_plus_vgpr_offsets_that_carry():
    body = "s_mov_b32 s8, 3\nv_mov_b32 v1, {}\nscratch_store_b8 v1, v0, s8\ns_endpgm"
    tb = Testbed(vram_size=1 << 28, sanitize="hazards")
    k = tb.load_asm(body.format(1), name="h", args=0, scratch=64)
    tb.launch(k, [], (1,), (32,))
    [f] = tb.sanitizer.findings
    assert f.what == "scratch SGPR+VGPR offset carries out of bit 1" and f.lane == 0 and f.lanes == 32
    tb2 = Testbed(vram_size=1 << 28, sanitize="hazards")
    tb2.launch(tb2.load_asm(body.format(4), name="h", args=0, scratch=64), [], (1,), (32,))
    assert list(tb2.sanitizer.findings) == []
