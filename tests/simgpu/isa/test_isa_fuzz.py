"""Hypothesis: bad bytes and bad text give the codec's own errors only; valid instructions survive
disassemble -> assemble -> decode unchanged."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.isa import AsmError, DecodeError, assemble, decode, disassemble
from simgpu.isa.encodings import ENCODINGS
from tests.support.isa_golden import pairs_by_encoding

FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.binary(min_size=0, max_size=64))
def test_random_bytes_decode_or_raise_decode_error(data):
    try:
        disassemble(data)
    except DecodeError as e:
        assert 0 <= e.offset < max(len(data), 1) + 16


@FAST
@given(st.text(alphabet=st.sampled_from(list("sv_[]:,0123456789 xabcdefglmnoprtu()|-.;\n")), max_size=60))
def test_random_text_assembles_or_raises_asm_error(text):
    try:
        assemble(text)
    except AsmError as e:
        assert e.line >= 1


ALL_ENCODINGS = sorted(pairs_by_encoding())


@FAST
@given(st.sampled_from(ALL_ENCODINGS), st.data())
def test_disassemble_assemble_decode_is_identity(enc, data):
    base, _ = data.draw(st.sampled_from(pairs_by_encoding()[enc]))
    layout = ENCODINGS[enc]
    word = int.from_bytes(base[:layout.size], "little")
    fields = layout.unpack(word)
    for f in layout.fields:
        if f.name != "op" and data.draw(st.booleans()):
            fields[f.name] = data.draw(st.integers(0, f.mask))
    mutated = layout.pack(fields).to_bytes(layout.size, "little") + base[layout.size:] + bytes(4)
    try:
        inst = decode(mutated)
    except DecodeError:
        return
    text = inst.text()
    if "invalid" in text.lower():  # LLVM's spelling of a word that is not a valid instruction (e.g.
        return  # exp invalid_target_17, /*Invalid register*/): llvm-mc does not assemble it either
    again = decode(assemble(text))
    assert again.text() == text
