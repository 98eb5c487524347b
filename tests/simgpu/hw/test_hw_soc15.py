"""The MI300X (gfx942, GC 9.4.3) and MI350X (gfx950, GC 9.5.0) discovery binaries and banked register map against an
independent client and source:
tinygrad's AM driver (PyPI, unmodified) parses the binary with its own discovery code (`AMDev._run_discovery`, then
`_build_regs`: tests/support/am_tinygrad.discover), and its register tables generated from amdgpu's gc_9_4_3 /
mmhub_1_8_0 / osssys_4_4_2 / nbio_7_9_0 / hdp_4_4_2 / sdma_4_4_2 / mp headers give every offset, base segment and
declared field. MI350X's blocks (GC 9.5.0, MMHUB 1.8.1, SDMA 4.4.4, MP 13.0.12) resolve to the same tables in
tinygrad (its newest table of the same major version at or below each), so one check of the declarations serves
both; every instance is checked per part. Skipped without tinygrad."""

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


@pytest.fixture(scope="module")
def amd950():
    """tinygrad's view of a simulated MI350X's discovery binary."""
    pytest.importorskip("tinygrad.runtime.support.am.amdev")
    return am_tinygrad.discover(SOC(GPU(vram_size=512 << 20, arch="gfx950")))


MAPS = {"gfx942": soc15.mi300x_map, "gfx950": soc15.mi350x_map}


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


def test_tinygrad_reads_mi350x_versions_instances_and_gc_info(amd950):
    from tinygrad.runtime.autogen.am import am
    v = amd950.ip_ver
    assert (v[am.GC_HWIP], v[am.SDMA0_HWIP], v[am.MMHUB_HWIP]) == ((9, 5, 0), (4, 4, 4), (1, 8, 1))
    assert v[am.MP0_HWIP] == v[am.MP1_HWIP] == (13, 0, 12)
    assert (v[am.NBIO_HWIP], v[am.OSSSYS_HWIP], v[am.HDP_HWIP]) == ((7, 9, 0), (4, 4, 2), (4, 4, 2))
    assert sorted(amd950.regs_offset[am.GC_HWIP]) == list(range(8))
    assert sorted(amd950.regs_offset[am.SDMA0_HWIP]) == list(range(16))  # AM_SDMA programs sixteen engines
    assert amd950.aids == [0, 1, 2, 3] and not any(amd950.harvested.values())
    gc = amd950.gc_info
    assert (gc.header.version_major, gc.header.version_minor) == (2, 1)
    assert (gc.gc_num_se, gc.gc_num_cu_per_sh, gc.gc_wave_size, gc.gc_lds_size) == (4, 9, 64, 160)
    assert amd950.reserved_vram_size == 384 << 20  # tinygrad's GC 9.5 reservation
    assert "regSDMA_GFX_RB_CNTL" in amd950.__dict__  # SDMA 4.4.4 gets its register table (4.4.5 would not)


def test_tinygrad_takes_mi350xs_registers_from_the_tables_checked_here(amd950):
    """What tinygrad loads for each MI350X block is the header this file checks the declarations against."""
    from tinygrad.runtime.autogen.am import am, regs
    from tinygrad.runtime.support.amd import import_module
    blocks = {"GC": ("gc", am.GC_HWIP), "MMHUB": ("mmhub", am.MMHUB_HWIP), "OSSSYS": ("osssys", am.OSSSYS_HWIP),
              "NBIO": ("nbio", am.NBIO_HWIP), "HDP": ("hdp", am.HDP_HWIP), "MP0": ("mp", am.MP0_HWIP),
              "SDMA0": ("sdma", am.SDMA0_HWIP)}
    for block, (prefix, hwip) in blocks.items():
        assert import_module(prefix, amd950.ip_ver[hwip], submod="regs") is getattr(regs, HEADERS[block]), block


@pytest.mark.parametrize("arch", sorted(MAPS))
def test_every_instance_of_every_register_is_where_tinygrad_addresses_it(arch, request):
    """For each register both sides know, each instance tinygrad would program (inst=XCC, SDMA engine, AID) is at
    the address the banked map gives it, and the map names that address back."""
    amd = request.getfixturevalue("amd" if arch == "gfx942" else "amd950")
    m = MAPS[arch]()
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


def test_gfx942_protocol_numbers_and_structures_match_tinygrads_headers():
    """SMU 13.0.6's (and 13.0.12's) messages and clocks, the gfx9 firmware types, SOC15 IH ids, the v1/v2.1 firmware
    and v9 MQD layouts, against tinygrad's autogen of smu_v13_0_6_ppsmc.h (and smu_v13_0_12_ppsmc.h), psp_gfx_if.h,
    soc15_ih_clientid.h, the irqsrcs headers, amdgpu_ucode.h and v9_structs.h."""
    import ctypes
    am = pytest.importorskip("tinygrad.runtime.autogen.am.am")
    from tinygrad.runtime.autogen.am import smu_13_0_6, smu_13_0_12

    from simgpu.hw import ih, mqd, psp, smu, ucode
    for mod in (smu_13_0_6, smu_13_0_12):  # MI350X's SMU 13.0.12 numbers every modelled message as 13.0.6 does
        for m in smu.Msg13_6:
            assert getattr(mod, f"PPSMC_MSG_{m.name}") == m.value, (mod.__name__, m.name)
        for c in smu.Clock13_6:
            assert getattr(mod, f"PPCLK_{c.name}") == c.value, (mod.__name__, c.name)
    for name in ("CP_MEC", "CP_MEC_ME1", "SDMA0", "SDMA1", "SDMA2", "SDMA3", "P2S_TABLE", "REG_LIST"):
        assert getattr(am, f"GFX_FW_TYPE_{name}") == psp.FW_TYPE[name], name
    assert am.GFX_CMD_ID_SRIOV_SPATIAL_PART == psp.Cmd.SRIOV_SPATIAL_PART
    for c in ih.Soc15Client:
        assert getattr(am, f"SOC15_IH_CLIENTID_{c.name}") == c.value, c.name
    sources = {"CP_EOP_INTERRUPT": "GFX_9_0__SRCID__CP_EOP_INTERRUPT",
               "SQ_INTERRUPT_ID": "GFX_9_0__SRCID__SQ_INTERRUPT_ID",
               "CP_BAD_OPCODE_ERROR": "GFX_9_0__SRCID__CP_BAD_OPCODE_ERROR",
               "SDMA_TRAP": "SDMA0_4_0__SRCID__SDMA_TRAP", "SDMA_SRBMWRITE": "SDMA0_4_0__SRCID__SDMA_SRBMWRITE"}
    for name, theirs in sources.items():
        assert getattr(am, theirs) == ih.Soc15Source[name].value, name
    pairs = [(ucode.SdmaHeaderV1, am.struct_sdma_firmware_header_v1_0),
             (ucode.GfxHeaderV1, am.struct_gfx_firmware_header_v1_0),
             (ucode.SmcSoftPptableEntry, am.struct_smc_soft_pptable_entry),
             (psp.SpatialPart, am.struct_psp_gfx_cmd_sriov_spatial_part),
             (discovery.GcInfoV2_1, am.struct_gc_info_v2_1), (mqd.V9MQD, am.struct_v9_mqd)]
    for ours, theirs in pairs:
        assert ours.SIZE == ctypes.sizeof(theirs), ours.__name__
    for name in ("compute_current_logic_xcc_id", "compute_tg_chunk_size", "cp_mqd_stride_size", "cp_hqd_aql_control",
                 "cp_mqd_base_addr_lo", "compute_static_thread_mgmt_se3"):
        assert mqd.V9MQD.offset(name) == getattr(am.struct_v9_mqd, name).offset, name
    rlc = am.struct_rlc_firmware_header_v2_1
    srm = "save_restore_list_srm_offset_bytes"
    assert ucode.RlcHeaderV2_3.offset(srm) == getattr(rlc, srm).offset


def test_the_gfx942_firmware_containers_are_checked():
    from simgpu.hw import ucode
    files = ucode.synthetic_set()
    parts = {p.name: p.data for p in ucode.check("gc_9_4_3_mec.bin", files["gc_9_4_3_mec.bin"])}
    ucode_size = ucode.CommonHeader.unpack(files["gc_9_4_3_mec.bin"]).ucode_size_bytes
    assert len(parts["CP_MEC"]) + len(parts["CP_MEC_ME1"]) == ucode_size
    bad = bytearray(files["gc_9_4_3_mec.bin"])
    bad[ucode.GfxHeaderV1.offset("jt_size"):ucode.GfxHeaderV1.offset("jt_size") + 4] = (1 << 20).to_bytes(4, "little")
    with pytest.raises(ucode.FirmwareError, match="jt_offset/jt_size"):
        ucode.check("gc_9_4_3_mec.bin", bytes(bad))
    assert {p.name for p in ucode.check("smu_13_0_6.bin", files["smu_13_0_6.bin"])} == {"SMU", "P2S_TABLE"}
    assert "PSP_RL" in {p.name for p in ucode.check("psp_13_0_6_sos.bin", files["psp_13_0_6_sos.bin"])}


def test_the_gfx950_firmware_set_is_gfx942s_containers_at_its_versions():
    """psp_13_0_12_sos (with its register list), sdma_4_4_4 (v1), gc_9_5_0_mec (v1) and gc_9_5_0_rlc (v2.1), each
    naming its own IP version; no SMC file (SMU 13.0.12 runs from the IFWI); a file of the other part's version is
    refused by name."""
    from simgpu.hw import ucode
    files = ucode.synthetic_set()
    assert set(ucode.GFX950_FILES) <= set(files) and "smu_13_0_12.bin" not in ucode.FILES
    for name, ((major, minor), version) in ucode.GFX950_FILES.items():
        h = ucode.CommonHeader.unpack(files[name])
        assert (h.ip_version_major, h.ip_version_minor) == (major, minor), name
        assert (h.header_version_major, h.header_version_minor) == version, name
    assert "PSP_RL" in {p.name for p in ucode.check("psp_13_0_12_sos.bin", files["psp_13_0_12_sos.bin"])}
    assert {p.name for p in ucode.check("gc_9_5_0_rlc.bin", files["gc_9_5_0_rlc.bin"])} >= {"RLC_G"}
    assert files["gc_9_5_0_mec.bin"] != files["gc_9_4_3_mec.bin"]
    with pytest.raises(ucode.FirmwareError, match="IP version 9.4 .* expected 9.5"):
        ucode.check("gc_9_5_0_mec.bin", files["gc_9_4_3_mec.bin"])


def test_the_smn_window_reaches_another_aids_nbio_registers_and_refuses_the_rest():
    from simgpu.soc.regfile import MMIOError
    soc = SOC(GPU(vram_size=512 << 20, arch="gfx942"))
    regs = soc.regs
    fence = regs.addr("XCC_DOORBELL_FENCE")

    def smn(address: int, hi: int) -> None:
        regs.write(regs.addr("BIF_BX0_PCIE_INDEX2"), address)
        regs.write(regs.addr("BIF_BX0_PCIE_INDEX2_HI"), hi)

    smn(fence * 4, 0b100 | 2)  # AID 2's copy
    regs.write(regs.addr("BIF_BX0_PCIE_DATA2"), 0x10000)
    assert soc.nbio.remote[(2, fence)] == 0x10000 and regs.get("XCC_DOORBELL_FENCE") == 0  # AID 0's untouched
    assert regs.read(regs.addr("BIF_BX0_PCIE_DATA2")) == 0x10000
    smn(fence * 4, 0)  # AID 0's own, through the window
    regs.write(regs.addr("BIF_BX0_PCIE_DATA2"), 0xFF)
    assert regs.get("XCC_DOORBELL_FENCE") == 0xFF
    smn(fence * 4, 0b100 | 3)
    assert regs.read(regs.addr("BIF_BX0_PCIE_DATA2")) == 0  # AID 3's: its reset value
    smn(fence * 4, 0b100)  # bit 34 with AID 0 named as "remote": not an AID address
    with pytest.raises(MMIOError, match="not an AID"):
        regs.write(regs.addr("BIF_BX0_PCIE_DATA2"), 1)
    smn(regs.addr("CP_STAT") * 4, 0b100 | 1)  # another AID's GC register: not kept
    with pytest.raises(MMIOError, match="NBIO registers only"):
        regs.read(regs.addr("BIF_BX0_PCIE_DATA2"))
