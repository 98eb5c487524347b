"""gfx942 (CDNA3, family gfx9): the codec decodes, prints, re-encodes and assembles as llvm-mc-19 -mcpu=gfx942 does.

Golden pairs (run always): python -m tools.gen_isa_golden --arch gfx942 (tests/data/isa/gfx942_golden.tsv.gz).
Tables: python -m tools.isatab_scalar --arch gfx942, likewise isatab_valu and isatab_memory (stored whole in
simgpu/isa/data/gfx942/, a base of their own). Fresh random words are checked against a live llvm-mc each run
(skipped only without Debian llvm-19). Coverage: python -m tools.isa_report --arch gfx942.
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.isa import AsmError, DecodeError, assemble, decode, disassemble
from simgpu.isa.arch import get_arch
from tests.support.isa_golden import (
    check_form_coverage,
    check_fresh_random_words,
    check_pair,
    golden_pairs,
    pairs_by_encoding,
)
from tests.support.llvm import llvm_tool_or_skip

ARCH = "gfx942"
ENCODINGS = ["SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "DS", "FLAT",
             "MUBUF", "MTBUF"]
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_golden_file_has_every_gfx9_encoding():
    assert sorted(pairs_by_encoding(arch=ARCH)) == sorted(ENCODINGS)
    assert len(golden_pairs(arch=ARCH)) > 10000


@pytest.mark.parametrize("enc", ENCODINGS)
def test_golden_pairs_all_agree(enc):
    pairs = pairs_by_encoding(arch=ARCH)[enc]
    fails = [(d.hex(), t, why) for d, t in pairs if (why := check_pair(d, t, arch=ARCH))]
    assert not fails, f"{len(fails)}/{len(pairs)} differ, e.g. {fails[:3]}"


def test_every_form_llvm_mc_decodes_has_golden_pairs():
    """Every form (mnemonic as printed) of every opcode llvm-mc decodes, as the table sweep found them, has golden
    pairs: with test_golden_pairs_all_agree, tools.isa_report's 100% form coverage."""
    check_form_coverage(ARCH)


@pytest.mark.parametrize("enc", ENCODINGS)
def test_fresh_random_encodings_agree_with_llvm_mc(enc):
    llvm_tool_or_skip("llvm-mc")
    check_fresh_random_words(enc, ARCH)


# Lines and bytes as llvm-mc-19 -mcpu=gfx942 -show-encoding prints them.
EXAMPLES = [
    ("s_mov_b32 s1, flat_scratch_lo", "660081be"),
    ("s_mov_b64 s[2:3], xnack_mask", "680182be"),
    ("s_waitcnt vmcnt(0) lgkmcnt(0)", "70008cbf"),
    ("s_sendmsghalt 199", "c70091bf"),  # no message 7 with bit 7 set: a number (gfx11 would print sendmsg(199, 0, 0))
    ("s_sendmsghalt sendmsg(MSG_HALT_WAVES)", "060091bf"),  # 134 prints the same: the text assembles to 6
    ("s_rfe_restore_b64 0.15915494309189532, s2", "f8028095"),  # its ssrc0 is a 64-bit source (no sdst printed)
    ("s_cbranch_g_fork s[2:3], 0.15915494309189532", "02f88094"),
    ("s_load_dword s1, s[2:3], 0x10", "410002c010000000"),
    ("s_load_dword s1, s[2:3], s4", "410000c004000000"),
    ("s_load_dword s1, s[2:3], s4 offset:0x10", "414002c010000008"),
    ("s_load_dwordx2 s[2:3], s[4:5], 0x10 glc", "820007c010000000"),
    ("s_set_gpr_idx_on s20, gpr_idx(SRC0,DST)", "140911bf"),
    ("v_add_f32_e32 v1, v2, v3", "02070202"),
    ("v_mov_b32_e32 v1, m0", "7c02027e"),
    ("v_add_co_u32_e64 v1, s[4:5], v2, v3", "010419d102070200"),
    ("v_add_f32_dpp v1, v2, v3 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf", "fa060202 02e400ff"),
    ("v_mov_b64_dpp v[0:1], v[2:3] row_newbcast:1 row_mask:0xf bank_mask:0xf", "fa70007e 025101ff"),
    ("v_add_f32_dpp v1, v2, v3 wave_shl:1 row_mask:0xf bank_mask:0xf", "fa060202 023001ff"),
    ("v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]", "0040b0d302091a1c"),
    ("v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]", "0080ccd300050204"),
    ("v_mfma_f32_32x32x8_f16 v[0:15], v[0:1], v[2:3], v[0:15] cbsz:1 abid:2 blgp:3", "0011ccd300050264"),
    ("v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10 cbsz:1 abid:1", "0009e2d3040d2a04"),
    ("v_accvgpr_read_b32 v1, a2", "0140d8d302010018"),
    ("v_accvgpr_write_b32 a1, v2", "0140d9d302010018"),
    ("v_accvgpr_mov_b32 a1, a2", "02a5027e"),
    ("ds_read_b32 v1, v2 offset:8", "08006cd802000001"),
    ("ds_read_b32 a1, v2 offset:8", "08006cda02000001"),
    ("global_load_dword v1, v[2:3], off sc0 nt sc1", "008053de02007f01"),
    ("global_load_dword a1, v2, s[2:3] offset:-8", "f89f50dc02008201"),
    ("flat_load_dword v1, v[2:3] sc0", "000051dc02000001"),
    ("scratch_load_dword v1, off, s2 offset:4", "044050dc00000201"),
    ("buffer_load_dword v1, v2, s[4:7], s3 offen offset:16 sc0 nt sc1", "10d052e002010103"),
    ("tbuffer_load_format_x v1, v2, s[4:7], s3 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT] offen offset:16",
     "1010a0eb02010103"),
]


@pytest.mark.parametrize("text, hexbytes", EXAMPLES)
def test_examples_assemble_and_decode_as_llvm_mc(text, hexbytes):
    data = bytes.fromhex(hexbytes.replace(" ", ""))
    assert assemble(text, arch=ARCH) == data
    assert disassemble(data, arch=ARCH) == [text]


def test_get_arch_gfx942_and_gfx1100_stays_the_default():
    """gfx942 is a gfx9 architecture with tables of its own; without arch the codec is gfx1100's, whose M0 and
    null codes are swapped against gfx9's (v_mov_b32 from code 124: null there, m0 here)."""
    a = get_arch(ARCH)
    assert a.family == "gfx9" and a.base is None
    word = bytes.fromhex("7c02027e")
    assert disassemble(word) == ["v_mov_b32_e32 v1, null"]
    assert disassemble(word, arch=ARCH) == ["v_mov_b32_e32 v1, m0"]
    with pytest.raises(AsmError):
        assemble("v_accvgpr_mov_b32 a1, a2")  # no AGPRs on gfx1100
    with pytest.raises(DecodeError):
        decode(bytes.fromhex("0080ccd300050204"))  # VOP3P-MAI's fixed bits are no gfx11 encoding


def test_random_gfx9_bytes_only_raise_decode_error():
    r = random.Random(942)
    for top in (0xC0, 0xD0, 0xD1, 0xD3, 0xD8, 0xDA, 0xDC, 0xDE, 0xE0, 0xE8, 0xEA, 0xBE, 0xBF, 0x7E, 0x7C, 0x02):
        for _ in range(200):
            data = bytearray(r.randbytes(16))
            data[3] = top
            try:
                decode(bytes(data), arch=ARCH).text()
            except DecodeError:
                pass


@FAST
@given(st.sampled_from(ENCODINGS), st.data())
def test_disassemble_assemble_decode_is_identity(enc, data):
    """A golden word with random fields changed: where the codec decodes it, its text assembles back to a word
    that prints the same."""
    base, _ = data.draw(st.sampled_from(pairs_by_encoding(arch=ARCH)[enc]))
    layout = get_arch(ARCH).encodings[enc]
    fields = layout.unpack(int.from_bytes(base[:layout.size], "little"))
    for f in layout.fields:
        if f.name != "op" and data.draw(st.booleans()):
            fields[f.name] = data.draw(st.integers(0, f.mask))
    mutated = layout.pack(fields).to_bytes(layout.size, "little") + base[layout.size:] + bytes(4)
    try:
        text = decode(mutated, arch=ARCH).text()
    except DecodeError:
        return
    if "invalid" in text.lower():  # LLVM's own /*Invalid ...*/ notes: not assemblable there either
        return
    assert decode(assemble(text, arch=ARCH), arch=ARCH).text() == text


@FAST
@given(st.text(alphabet=st.sampled_from(list("sva_[]:,0123456789 xbcdefglmnoprtu()|-.;\n")), max_size=60))
def test_random_text_assembles_or_raises_asm_error(text):
    try:
        assemble(text, arch=ARCH)
    except AsmError as e:
        assert e.line >= 1
