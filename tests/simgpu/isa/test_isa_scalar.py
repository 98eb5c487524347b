"""The scalar family (SOP1/SOP2/SOPC/SOPK/SOPP/SMEM) agrees with llvm-mc on every golden pair.

Golden pairs: python -m tools.gen_isa_golden; tables: python -m tools.isatab_scalar.
"""

import pytest

from simgpu.isa import AsmError, assemble, disassemble
from tests.support.isa_golden import check_pair, pairs_by_encoding

SCALAR = ["SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM"]


@pytest.mark.parametrize("enc", SCALAR)
def test_golden_pairs_all_agree(enc):
    pairs = pairs_by_encoding()[enc]
    assert len(pairs) > 100
    fails = [(d.hex(), t, why) for d, t in pairs if (why := check_pair(d, t))]
    assert not fails, f"{len(fails)}/{len(pairs)} differ, e.g. {fails[:3]}"


def test_branch_labels_resolve_both_ways():
    code = assemble("""
    start:
        s_add_u32 s0, s0, 1      ; comment
        s_cmp_lg_u32 s0, 10
        s_cbranch_scc1 start
        s_branch end
        s_nop 0
    end:
        s_endpgm
    """)
    lines = disassemble(code)
    assert lines[2] == "s_cbranch_scc1 65533"  # -3 dwords back from the next instruction
    assert lines[3] == "s_branch 1"
    assert lines[-1] == "s_endpgm"


def test_asm_error_names_line_column_and_token():
    with pytest.raises(AsmError) as e:
        assemble("s_nop 0\n  s_frobnicate s0\n")
    assert e.value.line == 2 and e.value.column == 3 and e.value.token == "s_frobnicate"
    with pytest.raises(AsmError) as e:
        assemble("s_cbranch_scc0 nowhere")
    assert e.value.token == "nowhere"
