"""The gfx12 (SOC24) register declarations against an independent source: the register tables tinygrad generates
from amdgpu's gc_12_0_0 / mmhub_4_1_0 / osssys_7_0_0 / nbif_6_3_1 / hdp_7_0_0 / mp_14_0_2 headers (offset, base
segment and the fields we declare). Skipped without tinygrad."""

import pytest

from simgpu.hw import discovery, soc24

# Which header each block's registers come from on Navi 48 (MP1's mailbox keeps MP 11.0's header, as amdgpu does).
HEADERS = {"GC": "gc_12_0_0", "MMHUB": "mmhub_4_1_0", "OSSSYS": "osssys_7_0_0", "NBIO": "nbif_6_3_1",
           "HDP": "hdp_7_0_0", "MP0": "mp_14_0_2", "MP1": "mp_11_0_0"}
# Declared on every part although the nbif header leaves it out: amdgpu reads VRAM size at this fixed dword.
NOT_IN_HEADERS = {"RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE"}


@pytest.fixture(scope="module")
def headers():
    regs = pytest.importorskip("tinygrad.runtime.autogen.am.regs")
    return {block: getattr(regs, mod) for block, mod in HEADERS.items()}


@pytest.mark.parametrize("name", sorted(set(soc24.REGISTERS) - NOT_IN_HEADERS))
def test_each_gfx12_register_is_where_the_header_puts_it(headers, name):
    reg = soc24.REGISTERS[name]
    table = headers[reg.block]
    entry = table.get(f"reg{name}") or table.get(f"mm{name}")
    assert entry is not None, f"{name} is not in {HEADERS[reg.block]}"
    offset, segment, fields = entry
    assert (reg.segment, reg.offset) == (segment, offset), name
    for fname, f in reg.fields.fields.items():
        assert fname in fields, f"{name}.{fname}"
        assert (f.lo, f.lo + f.width - 1) == tuple(fields[fname]), f"{name}.{fname}"


def test_the_soc21_names_the_model_uses_reach_gfx12_registers():
    m = soc24.navi48_map()
    assert m.at(m["SDMA0_F32_CNTL"]).name == "SDMA0_MCU_CNTL"
    assert m.at(m["MP0_SMN_C2PMSG_35"]).name == "MPASP_SMN_C2PMSG_35"
    assert m.at(m["GCVM_L2_PROTECTION_FAULT_STATUS"]).name == "GCVM_L2_PROTECTION_FAULT_STATUS_LO32"
    assert m.bases == discovery.block_bases(discovery.NAVI48_IP_BLOCKS)
