"""gfx1201 (RDNA4): the codec decodes, prints, re-encodes and assembles as llvm-mc-19 -mcpu=gfx1201 does.

Golden pairs (run always): python -m tools.gen_isa_golden --arch gfx1201 (tests/data/isa/gfx1201_golden.tsv.gz).
Tables: python -m tools.isatab_scalar --arch gfx1201, likewise isatab_valu and isatab_memory (their deltas from
gfx1100's tables are simgpu/isa/data/gfx1201/*.json). Fresh random words are checked against a live llvm-mc each
run (skipped only without Debian llvm-19). Coverage: python -m tools.isa_report --arch gfx1201.
"""

import random
import re
import subprocess

import pytest

from simgpu.isa import AsmError, DecodeError, assemble, decode, disassemble
from simgpu.isa.arch import ARCHES, apply_delta, make_delta
from tests import DATA
from tests.support.isa_golden import (
    check_form_coverage,
    check_fresh_random_words,
    check_pair,
    golden_pairs,
    pairs_by_encoding,
)
from tests.support.llvm import llvm_tool_or_skip
from wiring.cli import main as cli

ARCH = "gfx1201"
ENCODINGS = ["SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VOPD",
             "VINTERP", "LDSDIR", "DS", "EXP", "VBUFFER", "VFLAT", "VSCRATCH", "VGLOBAL", "VIMAGE", "VSAMPLE"]


def test_golden_file_has_every_gfx12_encoding():
    assert sorted(pairs_by_encoding(arch=ARCH)) == sorted(ENCODINGS)
    assert len(golden_pairs(arch=ARCH)) > 20000


@pytest.mark.parametrize("enc", ENCODINGS)
def test_golden_pairs_all_agree(enc):
    pairs = pairs_by_encoding(arch=ARCH)[enc]
    fails = [(d.hex(), t, why) for d, t in pairs if (why := check_pair(d, t, arch=ARCH))]
    assert not fails, f"{len(fails)}/{len(pairs)} differ, e.g. {fails[:3]}"


@pytest.mark.parametrize("enc", ["VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VOPD", "VINTERP"])
def test_true16_golden_pairs_all_agree(enc):
    """LLVM's True16 mode (-mattr=+real-true16) on gfx1201: python -m tools.gen_isa_golden --arch gfx1201 --true16
    (tests/data/isa/gfx1201_true16_golden.tsv.gz)."""
    pairs = pairs_by_encoding(true16=True, arch=ARCH)[enc]
    fails = [(d.hex(), t, why) for d, t in pairs if (why := check_pair(d, t, true16=True, arch=ARCH))]
    assert pairs and not fails, f"{len(fails)}/{len(pairs)} differ, e.g. {fails[:3]}"


def test_every_form_llvm_mc_decodes_has_golden_pairs():
    """Every form (mnemonic as printed; a VOPD half) of every opcode llvm-mc decodes, as the table sweep found
    them, has golden pairs: with test_golden_pairs_all_agree, tools.isa_report's 100% form coverage."""
    check_form_coverage(ARCH)


@pytest.mark.parametrize("enc", ENCODINGS)
def test_fresh_random_encodings_agree_with_llvm_mc(enc):
    llvm_tool_or_skip("llvm-mc")
    check_fresh_random_words(enc, ARCH)


# Lines and bytes as llvm-mc-19 -mcpu=gfx1201 -show-encoding prints them.
EXAMPLES = [
    ("s_wait_loadcnt 0x3", "0300c0bf"),
    ("s_wait_kmcnt 0x0", "0000c7bf"),
    ("s_wait_loadcnt_dscnt 0x0", "0000c8bf"),
    ("s_wait_alu depctr_va_vdst(0)", "9f0f88bf"),
    ("s_load_b32 s1, s[2:3], 0x10", "410000f4100000f8"),
    ("s_load_b32 s1, s[2:3], s5 offset:0x10", "410000f41000000a"),
    ("s_load_b32 s1, s[2:3], 0x0 th:TH_LOAD_NT", "410080f4000000f8"),
    ("s_prefetch_data s[2:3], 0x10, m0, 7", "c1c104f4100000fa"),
    ("global_load_b32 v1, v2, s[4:5] offset:-8", "040005ee0100000002f8ffff"),
    ("buffer_load_b32 v1, v2, s[4:7], s3 offen offset:16", "030005c40108804002100000"),
    ("scratch_load_b32 v1, off, s2 offset:4", "020005ed0100000000040000"),
    ("flat_load_b32 v1, v[2:3]", "7c0005ec0100000002000000"),
    ("ds_load_b32 v1, v2 offset:8", "0800d8d802000001"),
    ("image_sample v[0:3], [v4, v5], s[8:15], s[16:19] dmask:0xf dim:SQ_RSRC_IMG_2D", "01c0c6e70010000804050000"),
    ("v_swmmac_f32_16x16x32_f16 v[0:7], v[8:11], v[12:19], v20 index_key:1", "004850cc0819521c"),
    ("v_cvt_f32_fp8_e64 v1, v2 byte_sel:1", "0110ecd502010000"),
    ("v_dual_max_num_f32 v0, v1, v2 :: v_dual_min_num_f32 v3, v4, v5", "010596ca040b0200"),
    ("export mrt0 v1, v2, v3, v4 done row_en", "0f2800f801020304"),
]


@pytest.mark.parametrize("text, hexbytes", EXAMPLES)
def test_examples_assemble_and_decode_as_llvm_mc(text, hexbytes):
    data = bytes.fromhex(hexbytes)
    assert assemble(text, arch=ARCH) == data
    assert disassemble(data, arch=ARCH) == [text]


def test_gfx1100_stays_the_default():
    """Without arch the codec is gfx1100's: one word is v_dot2acc_f32_f16 there, v_add_f64_e32 on gfx1201; the
    split waitcnt instructions are gfx1201's only."""
    word = bytes.fromhex("040d0404")
    assert disassemble(word) == disassemble(word, arch="gfx1100") == ["v_dot2acc_f32_f16 v2, v4, v6"]
    assert disassemble(word, arch=ARCH) == ["v_add_f64_e32 v[2:3], v[4:5], v[6:7]"]
    assert decode(word, arch=ARCH).arch == ARCH and decode(word).arch == "gfx1100"
    with pytest.raises(DecodeError):
        decode(bytes.fromhex("0000c0bf"))  # s_wait_loadcnt 0x0 on gfx1201
    with pytest.raises(AsmError):
        assemble("s_wait_loadcnt 0x0")  # not a gfx1100 instruction
    with pytest.raises(AsmError):
        assemble("s_waitcnt_vscnt null, 0", arch=ARCH)  # not a gfx1201 one (LLVM 19 keeps s_waitcnt)
    with pytest.raises(DecodeError):
        decode(bytes.fromhex("040005ee0100000002f8ffff"))  # VGLOBAL's fixed bits are no gfx11 encoding


def test_unknown_architecture_is_a_value_error():
    with pytest.raises(ValueError, match="gfx9000"):
        disassemble(b"\0\0\x80\xbf", arch="gfx9000")
    assert set(ARCHES) >= {"gfx1100", ARCH}


def test_table_deltas_round_trip():
    base = {"a": {"1": {"m": "x", "ops": [1]}, "2": {"m": "y"}}, "b": [1, 2], "c": 1}
    full = {"a": {"1": {"m": "x", "ops": [2]}, "3": {"m": "z"}}, "b": [1, 2], "d": {"e": 1}}
    delta = make_delta(base, full)
    assert apply_delta(base, delta) == full
    assert delta == {"~": ["c"], "a": {"~": ["2"], "1": {"ops": [2]}, "3": {"m": "z"}}, "d": {"e": 1}}


def test_random_gfx12_bytes_only_raise_decode_error():
    r = random.Random(12)
    for top in (0xC4, 0xEC, 0xED, 0xEE, 0xD0, 0xE4, 0xF4, 0xD8, 0xCE, 0xF8, 0xCC, 0xD4):
        for _ in range(300):
            data = bytearray(r.randbytes(24))
            data[3] = top | (data[3] & 3) if top not in (0xEC, 0xED, 0xEE, 0xCE, 0xCC) else top
            try:
                decode(bytes(data), arch=ARCH).text()
            except DecodeError:
                pass


# clang-19 output for gfx1201 (tests/data/isa/gfx1201_kernels.cl says how it was compiled): global, LDS, atomics,
# f64/f16/i64 arithmetic, WMMA, the split waitcnts.
KERNELS = DATA / "isa" / "gfx1201_kernels.o"


def _listing(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("\t") or re.match(r"[0-9a-f]{16} <", line)]


def test_disasm_decodes_a_clang_gfx1201_object(capsys):
    """`simgpu disasm` decodes a gfx1201 code object as gfx1201 (its e_flags processor): every word."""
    assert cli(["disasm", str(KERNELS)]) == 0
    out = capsys.readouterr().out
    assert "undecodable" not in out and "v_wmma_f32_16x16x16_f16" in out and "s_wait_loadcnt" in out


def test_disasm_matches_llvm_objdump_for_gfx1201(capsys):
    objdump = llvm_tool_or_skip("llvm-objdump")
    assert cli(["disasm", str(KERNELS)]) == 0
    ours = _listing(capsys.readouterr().out)
    theirs = subprocess.run([objdump, "-d", f"--mcpu={ARCH}", str(KERNELS)], capture_output=True, text=True).stdout
    assert ours == _listing(theirs) and len(ours) > 500
