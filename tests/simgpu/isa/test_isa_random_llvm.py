"""Fresh random encodings every run, checked against a live llvm-mc (skips without Debian llvm-19).

Random field values are packed for opcodes seen in the golden set; the words llvm-mc decodes and
re-assembles to the same bytes are kept; on each, our decode -> text must equal llvm-mc's text,
encode must give the bytes back, and assembling the text must give the bytes.
"""

import pytest

from tests.support.isa_golden import check_fresh_random_words
from tests.support.llvm import llvm_tool_or_skip

CHECKED = ["SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VOPD",
           "VINTERP", "DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "EXP", "LDSDIR"]


@pytest.mark.parametrize("enc", CHECKED)
def test_fresh_random_encodings_agree_with_llvm_mc(enc):
    llvm_tool_or_skip("llvm-mc")
    check_fresh_random_words(enc)
