"""The vector-ALU codec (VOP1/VOP2/VOPC/VOP3/VOP3P/VOPD/VINTERP, DPP) agrees with llvm-mc on every golden pair."""

import random

import pytest

from simgpu.isa import AsmError, DecodeError, assemble, decode
from tests.support.isa_golden import check_pair, pairs_by_encoding

VALU_ENCODINGS = ["VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VOPD", "VINTERP"]


@pytest.mark.parametrize("enc", VALU_ENCODINGS)
def test_golden_pairs_of_encoding_all_pass(enc):
    pairs = pairs_by_encoding()[enc]
    fails = [(d.hex(), t, why) for d, t in pairs if (why := check_pair(d, t))]
    assert not fails, f"{len(fails)}/{len(pairs)} {enc} pairs differ, e.g. {fails[:3]}"


@pytest.mark.parametrize("enc", VALU_ENCODINGS)
def test_random_words_decode_or_raise_decode_error(enc):
    """Arbitrary bits under a valu encoding's fixed bits never escape as anything but DecodeError."""
    from simgpu.isa.encodings import ENCODINGS, identify
    e = ENCODINGS[enc]
    r = random.Random(enc)
    free = ((1 << e.fixed_lo) - 1) | (((1 << 32) - 1) << 32 if e.size == 8 else 0)
    for _ in range(3000):
        word = e.fixed_word | (r.getrandbits(64) & free)
        if identify(word & 0xFFFFFFFF) != enc:
            continue
        data = word.to_bytes(8, "little")[:e.size] + r.getrandbits(64).to_bytes(8, "little")
        try:
            inst = decode(data[:r.choice([e.size, len(data)])])
        except DecodeError:
            continue
        assert inst.encode() == data[:inst.size]


def test_truncated_literal_is_a_decode_error():
    with pytest.raises(DecodeError):
        decode(bytes.fromhex("ff1c007e"))  # v_cvt_off_f32_i4_e32 with its literal missing


def test_bad_assembly_is_an_asm_error_naming_the_token():
    with pytest.raises(AsmError) as e:
        assemble("v_add_f32_e32 v1, v2, s3")  # vsrc1 must be a VGPR
    assert e.value.token == "s3"
    with pytest.raises(AsmError):
        assemble("v_fma_f32 v1, v2, v3")  # one source short
    with pytest.raises(AsmError):
        assemble("v_mov_b32_e32 v1, 0x1, 0x2")


def test_literal_equal_to_an_inline_constant_is_folded_like_llvm_mc():
    assert assemble("v_mov_b32_e32 v1, 0x3f800000") == assemble("v_mov_b32_e32 v1, 1.0")
