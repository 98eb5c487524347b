"""Hypothesis: bad bytes and bad text give the codec's own errors only; valid instructions survive
disassemble -> assemble -> decode unchanged. Mutations of valid text of every multi-part syntax (VOPD,
DPP16/DPP8, op_sel and neg modifiers, clamp/omod, MIMG dmask/dim, buffer formats, offsets, s_waitcnt,
s_waitcnt_depctr and s_delay_alu fields, hwreg, sendmsg) assemble or raise AsmError with a line and column."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.isa import AsmError, DecodeError, assemble, decode, disassemble
from simgpu.isa.encodings import ENCODINGS
from tests.support.isa_golden import golden_pairs, pairs_by_encoding

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


# ---------------------------------------------------------------------------------------------- mutated text

# Text that marks a syntax, and valid lines with it beyond the golden pairs (checked against llvm-mc by hand).
SYNTAXES = {
    "vopd": ("::", []),
    "dpp16": ("quad_perm:|row_", []),
    "dpp8": ("dpp8:", []),
    "op_sel": ("op_sel", []),
    "neg_abs": (r"neg_lo:|neg_hi:|\|", []),
    "clamp_omod": ("clamp|mul:|div:", []),
    "mimg": ("dmask:|dim:", []),
    "buffer_format": ("format:", []),
    "offsets": ("offset:|offset0:|offset1:", []),
    "waitcnt": ("vmcnt\\(|lgkmcnt\\(|expcnt\\(|depctr_",
                ["s_waitcnt vmcnt(0) lgkmcnt(0)", "s_waitcnt expcnt(1) & lgkmcnt(2)",
                 "s_waitcnt_depctr depctr_va_vdst(0) depctr_sa_sdst(0)"]),
    "delay_alu": ("instid0", ["s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(SALU_CYCLE_1)",
                              "s_delay_alu instid0(TRANS32_DEP_2)"]),
    "hwreg": ("hwreg\\(", ["s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 4)", "s_setreg_imm32_b32 hwreg(HW_REG_MODE), 0xf"]),
    "sendmsg": ("sendmsg\\(", ["s_sendmsg sendmsg(MSG_INTERRUPT)", "s_sendmsg sendmsg(12, 0, 1)"]),
}
PIECES = [",", ":", "::", "[", "]", "(", ")", "|", "-", " ", "0x", "1.0", "-1", "0xffffffff", "99999999999999999999",
          "s[0:1]", "v[2:3]", "s[1:0]", "v[:3]", "s106", "v256", "ttmp[0:3]", "vcc", "exec", "m0", "null", "off",
          "dmask:", "dim:", "SQ_RSRC_IMG_9D", "format:", "[BUF_FMT_8_UNORM, BUF_NUM_FORMAT_X]", "op_sel:[", "[0,1,2,3]",
          "quad_perm:[", "row_shr:", "dpp8:[", "fi:", "offset:", "offset0:", "hwreg(", "sendmsg(", "vmcnt(", "instid0(",
          "v_dual_mov_b32", "neg(", "abs(", "sext(", "|v1", "-|v1|", "lbl", "@", "\t", ";", "glc", "tfe", "a16",
          "clamp"]


def _syntax_lines(marker: str, extra: list[str]) -> list[str]:
    return sorted({t for _, t in golden_pairs() if re.search(marker, t)}) + extra


SYNTAX_LINES = {name: _syntax_lines(marker, extra) for name, (marker, extra) in SYNTAXES.items()}
_TOKENS = re.compile(r"\s+|[,\[\]():|]|[^\s,\[\]():|]+")


def _mutate(text: str, edits: list[tuple[int, float, float, str]]) -> str:
    """Apply edits (kind, where, how far, piece) to the tokens of `text`: delete a run, insert or replace with
    a piece, duplicate a token, truncate, or put a piece in the middle of a token."""
    for kind, where, span, piece in edits:
        toks = _TOKENS.findall(text) or [""]
        i = int(where * len(toks))
        j = min(len(toks), i + 1 + int(span * 3))
        if kind == 0:
            del toks[i:j]
        elif kind == 1:
            toks.insert(i, piece)
        elif kind == 2:
            toks[i:j] = [piece]
        elif kind == 3:
            toks.insert(i, toks[min(i, len(toks) - 1)])
        elif kind == 4:
            toks = toks[:i]
        else:
            t = toks[min(i, len(toks) - 1)]
            c = int(span * len(t))
            toks[min(i, len(toks) - 1)] = t[:c] + piece + t[c:]
        text = "".join(toks)
    return text


def test_the_lines_added_to_the_golden_ones_are_valid():
    for _, extra in SYNTAXES.values():
        for text in extra:
            assemble(text)


EDITS = st.lists(st.tuples(st.integers(0, 5), st.floats(0, 0.999), st.floats(0, 0.999), st.sampled_from(PIECES)),
                 min_size=1, max_size=4)


@pytest.mark.parametrize("syntax", sorted(SYNTAXES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_text_assembles_or_raises_asm_error_with_position(syntax, data):
    lines = SYNTAX_LINES[syntax]
    assert lines, f"no valid {syntax} lines to mutate"
    text = _mutate(data.draw(st.sampled_from(lines)), data.draw(EDITS))
    where = data.draw(st.sampled_from(["", "lbl:\n  s_nop 0\n", "\n\n"]))
    try:
        assemble(where + text)
    except AsmError as e:
        assert e.line >= 1 and e.column >= 1, (text, str(e))


@pytest.mark.parametrize("text", [
    "v_dual_mul_f32 s[0:1] , ::",  # IndexError before: nothing after '::'
    "v_dual_fmamk_f32 v0, 0x598, v0 ::",
    "buffer_atomic_xor_b64 v[152:153], off, s[0:3], offset0:0",  # KeyError before: a DS modifier on MUBUF
    "s_getreg_b32 s79, hwreg(50, 24, dim|:25)",  # line 0, column 0 before
    "s_getreg_b32 s0, hwreg(1, 0, 33)", "s_getreg_b32 s0, hwreg(64)", "s_getreg_b32 s0, hwreg(1, 3)",
    "s_sendmsg sendmsg(300)", "s_sendmsg sendmsg(MSG_INTERRUPT, 0)", "s_waitcnt vmcnt(64)",
    "s_waitcnt_depctr depctr_va_vdst(15) depctr_va_vdst(3)", "s_delay_alu instid0(VALU_DEP_1) instid0(VALU_DEP_2)",
])
def test_malformed_line_gives_asm_error_at_its_line(text):
    with pytest.raises(AsmError) as e:
        assemble("s_nop 0\n  " + text)
    assert (e.value.line, e.value.column) == (2, 3)
