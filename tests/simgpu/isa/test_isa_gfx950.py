"""gfx950 (CDNA4): the codec decodes, prints, re-encodes and assembles gfx950's additions to gfx942 as LLVM 22 does.

Golden pairs (run always): PYTHONPATH=$PWD python -m tools.gen_isa_golden_gfx950 (tests/data/isa/gfx950_golden.tsv.gz):
the instructions llvmlite's LLVM 22 compiles the gfx950 IR kernels to (its printed text, its object's bytes) and
random words of every opcode gfx950 adds, kept where Triton's LLVM assembles the codec's text back to the word.
Tables: PYTHONPATH=$PWD python -m tools.isatab_gfx950 (simgpu/isa/data/gfx950/, deltas of gfx942's). The live tests
(a fresh compile, fresh random words) need Triton's code generator library (tools/llvm22.py) and skip without it.
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.isa import DecodeError, assemble, decode, disassemble
from simgpu.isa.arch import get_arch
from tests.support.isa_golden import check_pair, golden_pairs, pairs_by_encoding

ARCH = "gfx950"
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _llvm22_or_skip():
    from tools import llvm22
    if llvm22.codegen_library() is None:
        pytest.skip("needs Triton 3.9's libtriton_amd_codegen.so (SIMGPU_LLVM22_CODEGEN; tools/gen_triton_corpus.py)")
    return llvm22


def _new_mnemonics() -> set[str]:
    from tools.isatab_gfx950 import TEMPLATES
    return {line.split()[0] for line in TEMPLATES}


def test_gfx950_is_gfx942_plus_its_deltas():
    a = get_arch(ARCH)
    assert (a.family, a.base) == ("gfx9", "gfx942")
    # a gfx950 word gfx942 does not have: v_prng_b32 v1, v2
    assert decode(bytes.fromhex("02b1027e"), arch=ARCH).text() == "v_prng_b32_e32 v1, v2"
    with pytest.raises(DecodeError):
        decode(bytes.fromhex("02b1027e"), arch="gfx942")
    assert decode(bytes.fromhex("02b1027e")).mnemonic != "v_prng_b32_e32"  # gfx1100 stays the default


@pytest.mark.parametrize("enc", sorted(pairs_by_encoding(arch=ARCH)))
def test_golden_pairs_all_agree(enc):
    pairs = pairs_by_encoding(arch=ARCH)[enc]
    fails = [(d.hex(), t, why) for d, t in pairs if (why := check_pair(d, t, arch=ARCH))]
    assert not fails, f"{len(fails)}/{len(pairs)} differ, e.g. {fails[:3]}"


def test_every_new_mnemonic_has_golden_pairs():
    printed = {t.split()[0] for _, t in golden_pairs(arch=ARCH)}
    assert _new_mnemonics() <= printed, sorted(_new_mnemonics() - printed)
    assert len(golden_pairs(arch=ARCH)) > 900


# LLVM 22's text and bytes (llvmlite's compiles, Triton's assembler)
EXAMPLES = [
    ("v_prng_b32_e32 v3, v1", "01b1067e"),
    ("v_permlane16_swap_b32_e32 v5, v4", "04b30a7e"),
    ("v_permlane32_swap_b32_e32 v179, v182", "b6b5667f"),
    ("v_cvt_pk_bf16_f32 v7, v1, v2", "070068d201050200"),
    ("v_dot2c_f32_bf16_e32 v9, v7, v7", "070f122c"),
    ("v_minimum3_f32 v1, v1, v2, v9", "0100a8d201052604"),
    ("v_bitop3_b32 v4, v0, v2, v1 bitop3:0xc6", "040034d2000506dc"),
    ("v_bitop3_b32 v7, v0, v1, v2 bitop3:4", "070034d200030a84"),
    ("v_mfma_f32_32x32x16_f16 v[0:15], v[16:19], v[20:23], v[0:15] cbsz:1 abid:1 blgp:2",
     "0009d5d310290244"),
    ("v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:7], v[12:17], v[0:3] cbsz:4 blgp:3", "0004add304190264"),
    ("v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[4:11], 0, v1, v2 op_sel:[1,1,0] op_sel_hi:[1,1,0]",
     "0018acd3010502180088add304090202"),
    ("v_mfma_ld_scale_b32 v20, v21", "0040acd3142b0218"),
    ("ds_read_b64_tr_b8 v[0:1], v2 offset:16", "1000c4d902000000"),
    ("global_load_lds_dwordx4 v2, s[4:5] offset:16", "1080f4dd02000400"),
    ("buffer_load_dwordx4 v1, s[0:3], 0 offen lds", "00105de001000080"),
]


@pytest.mark.parametrize("text, hexbytes", EXAMPLES)
def test_examples(text, hexbytes):
    assert check_pair(bytes.fromhex(hexbytes), text, arch=ARCH) is None


def test_permlane_swaps_take_vgprs_only():
    """LLVM refuses an SGPR, a constant, DPP and SDWA for v_permlane16/32_swap_b32; the codec too."""
    from simgpu.isa import AsmError
    for bad in ("v_permlane16_swap_b32 v0, s0", "v_permlane32_swap_b32 v0, 1.0", "v_permlane16_swap_b32_sdwa v0, v1"):
        with pytest.raises(AsmError):
            assemble(bad, arch=ARCH)
    with pytest.raises(DecodeError):
        decode(bytes.fromhex("00b2007e"), arch=ARCH)  # src0 s0


def test_a_fresh_compile_is_golden():
    """llvmlite compiles the gfx950 kernels again: every instruction pair is in the golden file."""
    llvm22 = _llvm22_or_skip()
    from tools.gen_isa_golden_gfx950 import compiled
    fresh = compiled()
    assert fresh <= set(golden_pairs(arch=ARCH))
    assert {t.split()[0] for _, t in fresh} & _new_mnemonics()
    del llvm22


def test_fresh_random_words_agree_with_llvm22():
    """Fresh random words of every new opcode (a new seed each run): those the codec decodes print text LLVM 22
    assembles back to the word, or fare as the gfx942 template opcode's (tools.gen_isa_golden_gfx950.judged)."""
    llvm22 = _llvm22_or_skip()
    from tools import gen_isa_golden_gfx950 as gen
    seed = random.randrange(1 << 30)
    asm = llvm22.assembler(ARCH)
    keep, bad, _ = gen.judged(gen.random_words(8, random.Random(seed)), asm, gen.templates(asm))
    assert len(keep) >= 50, f"seed {seed}: only {len(keep)} kept"
    assert not bad, f"seed {seed}: {len(bad)} disagree, e.g. {bad[:3]}"


@FAST
@given(st.sampled_from(sorted({d for d, _ in golden_pairs(arch=ARCH)})), st.data())
def test_disassemble_assemble_decode_is_identity(word, data):
    """Golden words with a random register field changed: when the codec decodes them, its text assembles back."""
    b = bytearray(word)
    b[data.draw(st.integers(0, len(b) - 1))] ^= 1 << data.draw(st.integers(0, 7))
    try:
        lines = disassemble(bytes(b), arch=ARCH)
    except DecodeError:
        return
    assert disassemble(assemble("\n".join(lines), arch=ARCH), arch=ARCH) == lines


def test_f8f6f4_widths_follow_the_formats_and_abid_marks_the_scaled_pair():
    """A's width follows cbsz, B's blgp (8, 6 or 4 VGPRs); the MFMA word of a scaled MFMA (abid 1) does not decode
    alone, and v_mfma_ld_scale_b32 fetches the 16 bytes the pair may take (LLVM 22's bytes)."""
    from simgpu.isa import AsmError, fetch_size
    with pytest.raises(AsmError):
        assemble("v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3] blgp:2", arch=ARCH)
    with pytest.raises(DecodeError, match="abid"):
        decode(bytes.fromhex("0008add304190204"), arch=ARCH)
    assert fetch_size(0xD3AC0000, arch=ARCH) == 16 and fetch_size(0xD3AD0000, arch=ARCH) == 12
    alone = decode(bytes.fromhex("0040acd3142b0218") + bytes.fromhex("0000add304190204"), arch=ARCH)
    assert alone.size == 8 and alone.text() == "v_mfma_ld_scale_b32 v20, v21"  # op_sel_hi2 set: not a scale word
