"""The MI300X (gfx942, GC 9.4.3) discovery binary and banked register map against an independent client and source:
tinygrad's AM driver (PyPI, unmodified) parses the binary with its own discovery code (`AMDev._run_discovery`, then
`_build_regs`: tests/support/am_tinygrad.discover), and its register tables generated from amdgpu's gc_9_4_3 /
mmhub_1_8_0 / osssys_4_4_2 / nbio_7_9_0 / hdp_4_4_2 / sdma_4_4_2 / mp headers give every offset, base segment and
declared field. Skipped without tinygrad."""

import pytest

from simgpu.gpu import GPU
from simgpu.hw import discovery, soc15
from simgpu.soc import SOC
from tests.support import am_tinygrad

# Which header each block's registers come from (MP0's PSP mailbox: tinygrad loads mp_13_0_0 for MP 13.0.6, the
# newest 13.0.x table it has; MP1's SMU mailbox keeps MP 11.0's header, as amdgpu does).
HEADERS = {"GC": "gc_9_4_3", "MMHUB": "mmhub_1_8_0", "OSSSYS": "osssys_4_4_2", "NBIO": "nbio_7_9_0",
           "HDP": "hdp_4_4_2", "MP0": "mp_13_0_0", "MP1": "mp_11_0_0", "SDMA0": "sdma_4_4_2"}
NOT_IN_HEADERS = {"RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE"}  # amdgpu reads VRAM size at this fixed dword on every part


@pytest.fixture(scope="module")
def headers():
    regs = pytest.importorskip("tinygrad.runtime.autogen.am.regs")
    return {block: getattr(regs, mod) for block, mod in HEADERS.items()}


@pytest.fixture(scope="module")
def amd():
    """tinygrad's view of a simulated MI300X's discovery binary."""
    pytest.importorskip("tinygrad.runtime.support.am.amdev")
    return am_tinygrad.discover(SOC(GPU(vram_size=512 << 20, arch="gfx942")))


@pytest.mark.parametrize("name", sorted(set(soc15.REGISTERS) - NOT_IN_HEADERS))
def test_each_gfx942_register_is_where_the_header_puts_it(headers, name):
    reg = soc15.REGISTERS[name]
    table = headers[reg.block]
    entry = table.get(f"reg{name}") or table.get(f"mm{name}")
    assert entry is not None, f"{name} is not in {HEADERS[reg.block]}"
    offset, segment, fields = entry
    assert (reg.segment, reg.offset) == (segment, offset), name
    for fname, f in reg.fields.fields.items():
        assert fname in fields, f"{name}.{fname}"
        assert (f.lo, f.lo + f.width - 1) == tuple(fields[fname]), f"{name}.{fname}"


def test_tinygrad_reads_mi300x_versions_instances_and_gc_info(amd):
    from tinygrad.runtime.autogen.am import am
    assert amd.ip_ver[am.GC_HWIP] == (9, 4, 3) and amd.ip_ver[am.SDMA0_HWIP] == (4, 4, 2)
    assert amd.ip_ver[am.MMHUB_HWIP] == (1, 8, 0) and amd.ip_ver[am.NBIO_HWIP] == (7, 9, 0)
    assert amd.ip_ver[am.OSSSYS_HWIP] == (4, 4, 2) and amd.ip_ver[am.HDP_HWIP] == (4, 4, 2)
    assert amd.ip_ver[am.MP0_HWIP] == amd.ip_ver[am.MP1_HWIP] == (13, 0, 6)
    assert sorted(amd.regs_offset[am.GC_HWIP]) == list(range(8))  # AM_GFX counts these as its XCCs
    assert sorted(amd.regs_offset[am.SDMA0_HWIP]) == list(range(16))
    assert sorted(amd.regs_offset[am.MMHUB_HWIP]) == list(range(4))  # AM_GMC's vmhubs
    assert amd.aids == [0, 1, 2, 3] and not any(amd.harvested.values())
    gc = amd.gc_info
    assert (gc.header.version_major, gc.header.version_minor) == (2, 1)
    assert (gc.gc_num_se, gc.gc_num_cu_per_sh, gc.gc_wave_size, gc.gc_lds_size, gc.gc_tcc_size) == (4, 10, 64, 64, 4096)
    assert amd.reserved_vram_size == 384 << 20  # tinygrad's GC 9.4 reservation


def test_tinygrad_drops_harvested_instances_and_dead_aids():
    pytest.importorskip("tinygrad.runtime.support.am.amdev")
    soc = SOC(GPU(vram_size=512 << 20, arch="gfx942"))
    harvest = ((discovery.GC_HWID, 7), (discovery.SDMA0_HWID, 13))
    soc.gpu.phys.write(soc.discovery_offset, discovery.build_table(
        discovery.MI300X_IP_BLOCKS, {"gc_num_se": 4}, (2, 1), harvest))
    amd = am_tinygrad.discover(soc)
    from tinygrad.runtime.autogen.am import am
    assert amd.harvested[am.GC_HWIP] == {7} and amd.harvested[am.SDMA0_HWIP] == {13}
    assert amd.aids == [0, 1, 2]  # AID 3 has three live SDMA engines: not a whole group, never touched


def test_every_instance_of_every_register_is_where_tinygrad_addresses_it(amd):
    """For each register both sides know, each instance tinygrad would program (inst=XCC, SDMA engine, AID) is at
    the address the banked map gives it, and the map names that address back."""
    m = soc15.mi300x_map()
    checked = 0
    for name in sorted(set(m.by_name) - NOT_IN_HEADERS):
        theirs = amd.__dict__.get(f"reg{name}") or amd.__dict__.get(f"mm{name}")
        if theirs is None:
            continue
        for inst, addr in theirs.addr.items():
            assert m.address(name, inst) == addr, (name, inst)
            assert m.at(addr) is m.by_name[name] and m.instance_at.get(addr, 0) == inst, (name, inst)
            checked += 1
    assert checked > 3000  # GC's ~560 registers x 8 XCCs, SDMA's 46 x 16, the hubs' x 4, ...


def test_the_banked_map_puts_no_two_registers_at_one_address():
    m = soc15.mi300x_map()
    seen = {}
    for reg in {id(r): r for r in m.by_name.values()}.values():
        for inst in range(max(1, len(m.instances.get(reg.block, ())))):
            addr = m.address(reg.name, inst)
            assert addr not in seen, (reg.name, inst, seen.get(addr))
            seen[addr] = (reg.name, inst)
    assert len(seen) == len(m.by_address)
    assert m.describe(m.address("CP_HQD_ACTIVE", 3)) == "CP_HQD_ACTIVE (GC instance 3)"
    with pytest.raises(ValueError, match="8 instance"):
        m.address("CP_HQD_ACTIVE", 8)
