"""The vector-ALU codec in LLVM's True16 mode agrees with `llvm-mc -mattr=+real-true16` on every golden pair
(tests/data/isa/gfx1100_true16_golden.tsv.gz; regenerate: python -m tools.gen_isa_golden --true16): 16-bit
VGPR halves printed vN.l/vN.h, and encodings only that mode decodes (v_mov_b16_e64, the e32 forms' high
halves). Compilers with real True16 registers (the LLVM inside Triton 3.9) emit them."""

import pytest

from simgpu.isa import DecodeError, assemble, decode, disassemble
from tests.support.isa_golden import check_pair, pairs_by_encoding

VALU_ENCODINGS = ["VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VOPD", "VINTERP"]


@pytest.mark.parametrize("enc", VALU_ENCODINGS)
def test_true16_golden_pairs_of_encoding_all_pass(enc):
    pairs = pairs_by_encoding(true16=True)[enc]
    fails = [(d.hex(), t, why) for d, t in pairs if (why := check_pair(d, t, true16=True))]
    assert not fails, f"{len(fails)}/{len(pairs)} {enc} pairs differ, e.g. {fails[:3]}"


def test_true16_golden_has_the_encodings_only_that_mode_decodes():
    only16 = [(d, t) for d, t in pairs_by_encoding(true16=True)["VOP3"] if t.startswith("v_mov_b16_e64")]
    assert only16
    for data, _ in only16:
        with pytest.raises(DecodeError):
            decode(data)  # llvm-mc's default mode: not an instruction
    highs = [t for d, t in pairs_by_encoding(true16=True)["VOP2"] if ".h" in t]
    assert highs


def test_v_mov_b16_e64_from_triton():
    # The bytes the LLVM inside Triton 3.9 emits for a half living in v128-v255 (issue 21): decodable in
    # True16 mode, by the engine's lenient mode (true16=None), and assembled from both LLVM 19's and
    # LLVM 20's spellings.
    data = bytes.fromhex("20409cd58b010000")
    assert decode(data, true16=True).text() == "v_mov_b16_e64 v32.h, v139.l op_sel:[0,1]"
    assert decode(data, true16=None).mnemonic == "v_mov_b16_e64"
    assert disassemble(data, true16=True) == ["v_mov_b16_e64 v32.h, v139.l op_sel:[0,1]"]
    assert assemble("v_mov_b16_e64 v32.h, v139.l op_sel:[0,1]") == data
    assert assemble("v_mov_b16_e64 v32.h, v139.l") == data
    assert assemble("v_mov_b16_e64 v32.l, v139.l op_sel:[0,1]") == data  # LLVM 19's disassembly text


def test_both_syntaxes_assemble():
    assert assemble("v_add_f16_e32 v5, v1, v2") == assemble("v_add_f16_e32 v5.l, v1.l, v2.l")
    assert assemble("v_add_f16 v5.h, v1.h, v2.h") == bytes.fromhex("81050b65")
    with pytest.raises(Exception):  # noqa: B017 - an AsmError: the e32 halves address v0-v127 only
        assemble("v_add_f16_e32 v200.h, v1.h, v2.h")


@pytest.mark.parametrize("enc", ["VOP1", "VOP2", "VOP3"])
def test_true16_random_words_round_trip_or_raise(enc):
    """Random words decode in True16 mode or raise DecodeError; what decodes encodes back, and its text
    assembles to an instruction that prints the same text (unused fields and a 16-bit literal's high half
    are not in the text, so the bytes may differ)."""
    import random

    from simgpu.isa.encodings import ENCODINGS, identify
    e = ENCODINGS[enc]
    r = random.Random("t16" + enc)
    free = ((1 << e.fixed_lo) - 1) | (((1 << 32) - 1) << 32 if e.size == 8 else 0)
    ops = sorted({op for d, t in pairs_by_encoding(true16=True)[enc] if ".h" in t or ".l" in t
                  for op in [e.unpack(int.from_bytes(d[:e.size], "little"))["op"]]})
    done = 0
    for _ in range(1200):
        vals = e.unpack(e.fixed_word | (r.getrandbits(64) & free))
        vals["op"] = r.choice(ops)
        word = e.pack(vals)
        if identify(word & 0xFFFFFFFF) != enc:
            continue
        data = word.to_bytes(8, "little")[:e.size] + r.getrandbits(32).to_bytes(4, "little")
        try:
            inst = decode(data, true16=True)
        except DecodeError:
            continue
        assert inst.encode() == data[:inst.size]
        text = inst.text()
        if "/*" not in text:  # LLVM's invalid-operand notes are not assembly
            assert decode(assemble(text), true16=True).text() == text
        done += 1
    assert done > 50
