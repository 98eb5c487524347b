"""The SOC21 definitions of simgpu.hw against an oracle this project did not write: tinygrad's autogen of the amdgpu
headers (tinygrad/runtime/autogen/am from PyPI). Every declared register has the header's offset and base index and
every declared field its bit range; the v11 compute MQD, the firmware headers, the PSP structures and the discovery
binary have the C structures' sizes and offsets; tinygrad's own parsers read our discovery table and our synthetic
firmware set."""

import ctypes

import pytest

from simgpu.hw import discovery, ih, mqd, psp, smu, ucode
from simgpu.hw.soc21 import REGISTERS, navi31_map


@pytest.fixture(scope="module")
def am():
    try:
        from tinygrad.runtime.autogen.am import am, regs
    except ImportError as e:
        pytest.skip(f"tinygrad is not installed ({e}); pip install -e '.[test]'")
    return am, regs


# Our block -> the tinygrad register module with that IP's header (MP0 and MP1 live in mp_13_0_0).
_MODULES = {"GC": "gc_11_0_0", "MMHUB": "mmhub_3_0_0", "OSSSYS": "osssys_6_0_0", "MP0": "mp_13_0_0",
            "MP1": "mp_13_0_0", "NBIO": "nbio_4_3_0", "HDP": "hdp_6_0_0"}
# Registers tinygrad's autogen leaves out (it drops some defines): name -> where amdgpu's header has it.
_NOT_IN_AUTOGEN = {"RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE"}


def test_every_register_matches_the_header(am):
    _, regs = am
    checked = 0
    for name, reg in REGISTERS.items():
        module = getattr(regs, _MODULES[reg.block])
        entry = module.get(f"reg{name}") or module.get(f"mm{name}")
        if entry is None:
            assert name in _NOT_IN_AUTOGEN, f"{name} is not in {_MODULES[reg.block]}"
            continue
        offset, segment, fields = entry
        assert (reg.offset, reg.segment) == (offset, segment), name
        for fname, f in reg.fields.fields.items():
            assert fname in fields, f"{name}.{fname}"
            assert (f.lo, f.lo + f.width - 1) == fields[fname], f"{name}.{fname}"
        checked += 1
    assert checked > 800


def test_register_map_has_no_collisions_and_names_unknown_addresses():
    m = navi31_map()
    assert len(m.by_address) == len(REGISTERS)
    assert m["BIF_BX_PF0_GPU_HDP_FLUSH_REQ"] == 0xE26 and m["RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE"] == 0xDE3
    assert "GC segment 0 + 0x1fb9" in m.describe(0x1260 + 0x1FB9)


def test_structures_have_the_c_sizes_and_offsets(am):
    a, _ = am
    assert mqd.ComputeMQD.SIZE == ctypes.sizeof(a.struct_v11_compute_mqd) == mqd.MQD_SIZE
    for name in ("cp_mqd_base_addr_lo", "cp_hqd_pq_base_lo", "cp_hqd_pq_doorbell_control", "cp_hqd_aql_control",
                 "cp_hqd_pq_wptr_hi", "compute_static_thread_mgmt_se4", "cp_hqd_eop_control"):
        assert mqd.ComputeMQD.offset(name) == getattr(a.struct_v11_compute_mqd, name).offset, name
    pairs = [(ucode.CommonHeader, a.struct_common_firmware_header),
             (ucode.SmcHeaderV2_1, a.struct_smc_firmware_header_v2_1),
             (ucode.SdmaHeaderV2, a.struct_sdma_firmware_header_v2_0),
             (ucode.GfxHeaderV2, a.struct_gfx_firmware_header_v2_0),
             (ucode.ImuHeaderV1, a.struct_imu_firmware_header_v1_0),
             (ucode.RlcHeaderV2_3, a.struct_rlc_firmware_header_v2_3), (ucode.PspBinDesc, a.struct_psp_fw_bin_desc),
             (psp.RingFrame, a.struct_psp_gfx_rb_frame), (psp.Resp, a.struct_psp_gfx_resp),
             (discovery.BinaryHeader, a.struct_binary_header),
             (discovery.IpDiscoveryHeader, a.struct_ip_discovery_header),
             (discovery.GcInfo, a.struct_gc_info_v1_2)]
    for ours, theirs in pairs:
        assert ours.SIZE == ctypes.sizeof(theirs), ours.__name__
    assert psp.RESP_OFFSET == a.struct_psp_gfx_cmd_resp.resp.offset
    assert psp.CMD_OFFSET == a.struct_psp_gfx_cmd_resp.cmd.offset
    rlc = a.struct_rlc_firmware_header_v2_3
    assert ucode.RlcHeaderV2_3.offset("rlcv_ucode_offset_bytes") == rlc.rlcv_ucode_offset_bytes.offset


def test_protocol_numbers_match(am):
    a, _ = am
    from tinygrad.runtime.autogen.am import smu_13_0_0
    for cmd in psp.BootloaderCmd:
        assert getattr(a, f"PSP_BL__{cmd.name}") == cmd.value
    for cmd in psp.Cmd:
        assert getattr(a, f"GFX_CMD_ID_{cmd.name}") == cmd.value
    for name, value in psp.FW_TYPE.items():
        assert getattr(a, f"GFX_FW_TYPE_{name}") == value, name
    for name, value in ucode.PSP_FW_TYPE.items():
        assert getattr(a, f"PSP_FW_TYPE_{name}") == value, name
    for m in smu.Msg:
        assert getattr(smu_13_0_0, f"PPSMC_MSG_{m.name}") == m.value, m.name
    for c in ih.Client:
        assert getattr(a, f"SOC21_IH_CLIENTID_{c.name}") == c.value
    for s in ih.Source:
        assert getattr(a, f"GFX_11_0_0__SRCID__{s.name}") == s.value
    assert a.hw_id_map[a.GC_HWIP] == discovery.GC_HWID and a.hw_id_map[a.MP0_HWIP] == discovery.MP0_HWID


def test_ih_entry_round_trips_through_the_soc15_macros(am):
    a, _ = am
    e = ih.Entry(ih.Client.GFX, ih.Source.UTCL2_FAULT, ring_id=5, vmid=3, timestamp=0x123456789AB, pasid=7,
                 context=(*ih.vm_fault_context(0x1234_5678_9000, True), 0, 0))
    words = list(memoryview(e.pack()).cast("I"))
    assert a.SOC15_CLIENT_ID_FROM_IH_ENTRY(words) == 10 and a.SOC15_SOURCE_ID_FROM_IH_ENTRY(words) == 0
    assert a.SOC15_RING_ID_FROM_IH_ENTRY(words) == 5 and a.SOC15_VMID_FROM_IH_ENTRY(words) == 3
    assert a.SOC15_PASID_FROM_IH_ENTRY(words) == 7
    assert ih.Entry.unpack(e.pack()) == e
    assert ih.vm_fault_address(e) == 0x1234_5678_9000


def test_discovery_table_parses_with_tinygrads_structures(am):
    a, _ = am
    blob = bytearray(discovery.build_table(gc_info={"gc_num_se": 6, "gc_num_sa_per_se": 2}))
    bhdr = a.struct_binary_header.from_buffer(blob)
    assert bhdr.binary_signature == a.BINARY_SIGNATURE
    ihdr = a.struct_ip_discovery_header.from_buffer(blob, bhdr.table_list[a.IP_DISCOVERY].offset)
    assert ihdr.signature == a.DISCOVERY_TABLE_SIGNATURE and ihdr.num_dies == 1
    dhdr = a.struct_die_header.from_buffer(blob, ihdr.die_info[0].die_offset)
    assert dhdr.num_ips == len(discovery.NAVI31_IP_BLOCKS)
    pos = ihdr.die_info[0].die_offset + ctypes.sizeof(dhdr)
    seen = {}
    for _ in range(dhdr.num_ips):
        ip = a.struct_ip_v4.from_buffer(blob, pos)
        seen[ip.hw_id] = (ip.major, ip.minor, ip.revision)
        pos += 8 + 4 * ip.num_base_address
    assert seen[discovery.GC_HWID] == (11, 0, 0) and seen[discovery.MP0_HWID] == (13, 0, 0)
    gc = a.struct_gc_info_v1_2.from_buffer(blob, bhdr.table_list[a.GC].offset)
    assert (gc.header.version_major, gc.header.version_minor, gc.gc_num_se) == (1, 2, 6)
    parsed = discovery.parse_table(bytes(blob))
    assert [b.bases for b in parsed.blocks] == [b.bases for b in discovery.NAVI31_IP_BLOCKS]


def test_discovery_parse_names_what_is_wrong():
    blob = bytearray(discovery.build_table())
    blob[0] ^= 1
    with pytest.raises(discovery.DiscoveryError, match="binary signature"):
        discovery.parse_table(bytes(blob))
    blob = bytearray(discovery.build_table())
    blob[100] ^= 0xFF
    with pytest.raises(discovery.DiscoveryError, match="checksum"):
        discovery.parse_table(bytes(blob))


class _Dev:
    """Just enough of tinygrad's AMDev for its AMFirmware parser: the IP versions."""

    def __init__(self, a, mp, sdma, gc):
        self.ip_ver = {a.MP0_HWIP: mp, a.MP1_HWIP: mp, a.SDMA0_HWIP: sdma, a.GC_HWIP: gc}
        self.devfmt = "test"


# Each part's IP versions (MP, SDMA, GC), its files, and the names of its sOS and SMU files.
PARTS = {"gfx1100": ((13, 0, 0), (6, 0, 0), (11, 0, 0), ucode.GFX1100_FILES, "psp_13_0_0_sos.bin", "smu_13_0_0.bin"),
         "gfx1201": ((14, 0, 3), (7, 0, 1), (12, 0, 1), ucode.GFX1201_FILES, "psp_14_0_3_sos.bin", "smu_14_0_3.bin")}


@pytest.mark.parametrize("part", sorted(PARTS))
def test_tinygrads_firmware_parser_reads_the_synthetic_set(am, monkeypatch, part):
    a, _ = am
    from tinygrad.runtime.support.am import amdev
    mp, sdma, gc, names, sos, smu = PARTS[part]
    files = {n: f for n, f in ucode.synthetic_set().items() if n in names}
    monkeypatch.setattr(amdev, "fetch_fw", lambda path, name, sha: files[name])  # instead of its download
    fw = amdev.AMFirmware(_Dev(a, mp, sdma, gc))
    comps = {p.name: p.data for p in ucode.check(sos, files[sos])}
    assert {a.enum_psp_fw_type[t][len("PSP_FW_TYPE_"):] for t in fw.sos_fw} == set(comps)
    assert bytes(fw.sos_fw[a.PSP_FW_TYPE_PSP_SOS]) == comps["PSP_SOS"]
    theirs = {a.enum_psp_gfx_fw_type[t][len("GFX_FW_TYPE_"):]: bytes(d) for types, d in fw.descs for t in types}
    ours = {p.name: p.data for n, f in files.items() if n != sos for p in ucode.check(n, f)}
    ours.pop("SMU")  # tinygrad keeps the SMU's part apart (smu_psp_desc): loaded before the TMR
    assert theirs == ours
    assert bytes(fw.smu_psp_desc[1]) == ucode.check(smu, files[smu])[0].data
    assert fw.ucode_start["MEC"] == ucode.MEC_START


@pytest.mark.parametrize("name", sorted(ucode.FILES))
def test_a_bad_header_is_named(name):
    good = ucode.synthetic_set()[name]
    bad = bytearray(good)
    bad[0:4] = (len(good) + 4).to_bytes(4, "little")
    with pytest.raises(ucode.FirmwareError, match="size_bytes"):
        ucode.check(name, bytes(bad))
    bad = bytearray(good)
    bad[8:10] = (9).to_bytes(2, "little")
    with pytest.raises(ucode.FirmwareError, match="header version 9"):
        ucode.check(name, bytes(bad))
    bad = bytearray(good)
    bad[24:28] = (len(good) - 16).to_bytes(4, "little")  # payload offset near the end: its size runs past it
    with pytest.raises(ucode.FirmwareError, match=name):
        ucode.check(name, bytes(bad))
