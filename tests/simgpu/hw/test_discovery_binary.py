"""The IP discovery binary a simulated PCI function keeps at the top of its VRAM, read by a parser written here from
amdgpu's include/discovery.h field offsets (struct.unpack_from at the header's byte offsets; not simgpu.hw.discovery's
Records), its checksums as amdgpu_discovery.c verifies them, and the IP versions of each modelled part checked
against the published ones (hardware ids from soc15_hw_ip.h, written out here)."""

import struct

import pytest

from simgpu.gpu import GPU
from simgpu.soc import SOC

# soc15_hw_ip.h
HWID = {"MP1": 1, "GC": 11, "MMHUB": 34, "ATHUB": 35, "OSSSYS": 40, "HDP": 41, "SDMA0": 42, "SDMA1": 43, "NBIF": 108,
        "MP0": 255}
# What amdgpu_discovery.c lists for each part (Navi 31: gfx1100 / RX 7900 XTX; Navi 48: gfx1201 / RX 9070 XT).
VERSIONS = {
    "gfx1100": {"GC": (11, 0, 0), "SDMA0": (6, 0, 0), "SDMA1": (6, 0, 0), "NBIF": (4, 3, 0), "HDP": (6, 0, 0),
                "MMHUB": (3, 0, 0), "ATHUB": (3, 0, 0), "OSSSYS": (6, 0, 0), "MP0": (13, 0, 0), "MP1": (13, 0, 0)},
    "gfx1201": {"GC": (12, 0, 1), "SDMA0": (7, 0, 1), "SDMA1": (7, 0, 1), "NBIF": (6, 3, 1), "HDP": (7, 0, 0),
                "MMHUB": (4, 1, 0), "ATHUB": (4, 1, 0), "OSSSYS": (7, 0, 0), "MP0": (14, 0, 3), "MP1": (14, 0, 3)},
}
SHAPE = {"gfx1100": (6, 2, 4), "gfx1201": (4, 2, 4)}  # shader engines, arrays per engine, WGPs per array
DISCOVERY_TMR_OFFSET, DISCOVERY_TMR_SIZE = 64 << 10, 10 << 10  # amdgpu_discovery.c


def _sum16(data: bytes) -> int:
    return sum(data) & 0xFFFF


def parse(blob: bytes) -> dict:
    """discovery.h, by byte offset: binary_header, ip_discovery_header, die_header + ip_v3 entries, gc_info v1.x."""
    sig, vmaj, _vmin, checksum, size = struct.unpack_from("<IHHHH", blob, 0)
    assert sig == 0x28211407 and vmaj == 1  # BINARY_SIGNATURE
    assert _sum16(blob[10:size]) == checksum  # covers what follows binary_size's offset
    tables = [struct.unpack_from("<HHH", blob, 12 + 8 * i) for i in range(6)]  # table_info {offset, checksum, size}
    ip_off, ip_sum, ip_size = tables[0]  # IP_DISCOVERY
    assert _sum16(blob[ip_off:ip_off + ip_size]) == ip_sum
    ip_sig, _ver, _size, _id, num_dies = struct.unpack_from("<IHHIH", blob, ip_off)
    assert ip_sig == 0x53445049  # DISCOVERY_TABLE_SIGNATURE "IPDS"
    base_addr_64 = blob[ip_off + 14 + 4 * 16] & 1  # after die_info[16]
    ips = {}
    for d in range(num_dies):
        _die_id, die_offset = struct.unpack_from("<HH", blob, ip_off + 14 + 4 * d)
        _, num_ips = struct.unpack_from("<HH", blob, die_offset)
        at = die_offset + 4
        for _ in range(num_ips):
            hw_id, inst, nbases, major, minor, rev = struct.unpack_from("<HBBBBB", blob, at)
            width = 8 if base_addr_64 else 4
            bases = struct.unpack_from(f"<{nbases}{'Q' if base_addr_64 else 'I'}", blob, at + 8)
            ips[(hw_id, inst)] = ((major, minor, rev), bases)
            at += 8 + width * nbases
    gc_off, gc_sum, gc_size = tables[1]  # GC
    assert _sum16(blob[gc_off:gc_off + gc_size]) == gc_sum
    table_id, gmaj, gmin, _ = struct.unpack_from("<IHHI", blob, gc_off)
    assert table_id == 0x4347  # GC_TABLE_ID
    se, wgp0, wgp1 = struct.unpack_from("<III", blob, gc_off + 12)  # gc_info_v1_x: num_se, wgp0/wgp1 per SA
    wave, lds = struct.unpack_from("<I", blob, gc_off + 56)[0], struct.unpack_from("<I", blob, gc_off + 68)[0]
    sa_per_se = struct.unpack_from("<I", blob, gc_off + 76)[0]
    return {"ips": ips, "gc_info": (gmaj, gmin), "shape": (se, sa_per_se, wgp0 + wgp1), "wave": wave, "lds": lds}


@pytest.mark.parametrize("arch", sorted(VERSIONS))
def test_the_discovery_binary_in_vram_lists_the_parts_ip_versions(arch):
    soc = SOC(GPU(vram_size=256 << 20, arch=arch))
    vram = soc.gpu.phys.vram_size
    blob = soc.gpu.phys.read(vram - DISCOVERY_TMR_OFFSET, DISCOVERY_TMR_SIZE)
    t = parse(blob)
    assert {name: t["ips"][(hw, 0)][0] for name, hw in HWID.items()} == VERSIONS[arch]
    assert len(t["ips"]) == len(HWID)
    assert t["gc_info"][0] == 1 and t["shape"] == SHAPE[arch] and (t["wave"], t["lds"]) == (32, 64)
    # every register a driver reads first resolves against these bases: RCC_CONFIG_MEMSIZE at NBIF segment 2 + 0xC3
    assert t["ips"][(HWID["NBIF"], 0)][1][2] + 0xC3 == 0xDE3
    assert soc.mmio_read(0xDE3 * 4) == vram >> 20


# MI300X (gfx942): four AIDs, one die each; GC instance x (XCC x) on die x // 2, SDMA i on die i // 4, MMHUB a on
# die a; the AID-0-only blocks once, on die 0. Versions: amdgpu's for GC 9.4.3.
MI300X_VERSIONS = {"GC": (9, 4, 3), "SDMA0": (4, 4, 2), "MMHUB": (1, 8, 0), "NBIF": (7, 9, 0), "HDP": (4, 4, 2),
                   "OSSSYS": (4, 4, 2), "MP0": (13, 0, 6), "MP1": (13, 0, 6)}
# MI350X (gfx950): the same layout at GC 9.5.0's versions -- SDMA 4.4.4, MMHUB 1.8.1, MP0/MP1 13.0.12 (amdgpu's
# sdma_v4_4_2.c, gmc_v9_0.c's mmhub_v1_8 for 1.8.1, psp_v13_0.c / smu_v13_0_6_ppt.c for 13.0.12); NBIO, HDP and
# OSSSYS as MI300X's (simgpu.hw.discovery says why).
MI350X_VERSIONS = MI300X_VERSIONS | {"GC": (9, 5, 0), "SDMA0": (4, 4, 4), "MMHUB": (1, 8, 1), "MP0": (13, 0, 12),
                                     "MP1": (13, 0, 12)}
AQUA_VERSIONS = {"gfx942": MI300X_VERSIONS, "gfx950": MI350X_VERSIONS}
MI300X_COUNT = {"GC": 8, "SDMA0": 16, "MMHUB": 4, "NBIF": 1, "HDP": 1, "OSSSYS": 1, "MP0": 1, "MP1": 1}
MI300X_DIE = {"GC": lambda i: i // 2, "SDMA0": lambda i: i // 4, "MMHUB": lambda i: i}
# gc_info v2.1, one XCC's: MI300X 10 CU slots of an XCD (38 of 40 active), 64 KiB LDS; MI350X 9 slots (32 of 36
# active), CDNA4's 160 KiB LDS
GC_INFO = {"gfx942": {"se": 4, "cu_per_sh": 10, "sh_per_se": 1, "tccs": 16, "wave": 64, "waves_per_simd": 8,
                      "lds": 64, "tcp_size_per_cu": 32, "tcc_size": 4096}}
GC_INFO["gfx950"] = GC_INFO["gfx942"] | {"cu_per_sh": 9, "lds": 160}


def parse_dies(blob: bytes) -> dict:
    """(hw_id, instance) -> (die id, version) over every die of the IP discovery table (discovery.h offsets)."""
    ip_off = struct.unpack_from("<H", blob, 12)[0]
    num_dies = struct.unpack_from("<H", blob, ip_off + 12)[0]
    out = {}
    for d in range(num_dies):
        _, die_offset = struct.unpack_from("<HH", blob, ip_off + 14 + 4 * d)
        die_id, num_ips = struct.unpack_from("<HH", blob, die_offset)
        at = die_offset + 4
        for _ in range(num_ips):
            hw_id, inst, nbases, major, minor, rev = struct.unpack_from("<HBBBBB", blob, at)
            assert (hw_id, inst) not in out, (hw_id, inst)
            out[(hw_id, inst)] = (die_id, (major, minor, rev))
            at += 8 + 4 * nbases
    return {"dies": num_dies, "ips": out}


def parse_harvest(blob: bytes) -> list | None:
    """harvest_table: table_list[HARVEST_INFO]; signature "HARV", version, 32 {u16 hw_id, u8 instance, u8}."""
    off, csum, size = struct.unpack_from("<HHH", blob, 12 + 8 * 2)
    if off == 0:
        return None
    assert _sum16(blob[off:off + size]) == csum and size == 8 + 32 * 4
    assert struct.unpack_from("<I", blob, off)[0] == 0x56524148
    rows = [struct.unpack_from("<HB", blob, off + 8 + 4 * i) for i in range(32)]
    return [r for r in rows if r[0]]


def parse_gc_info_v2_1(blob: bytes) -> dict:
    """gc_info_v2_1 by byte offset from the GC table's start (12-byte gpu_info_header, then 24 u32)."""
    off, csum, size = struct.unpack_from("<HHH", blob, 12 + 8 * 1)
    assert _sum16(blob[off:off + size]) == csum
    table_id, vmaj, vmin, nbytes = struct.unpack_from("<IHHI", blob, off)
    assert (table_id, vmaj, vmin) == (0x4347, 2, 1) and nbytes == size == 12 + 24 * 4
    u32 = lambda at: struct.unpack_from("<I", blob, off + at)[0]  # noqa: E731
    return {"se": u32(12), "cu_per_sh": u32(16), "sh_per_se": u32(20), "tccs": u32(28), "wave": u32(56),
            "waves_per_simd": u32(60), "lds": u32(68), "tcp_size_per_cu": u32(84), "tcc_size": u32(104)}


def _gfx942_blob(soc) -> bytes:
    return soc.gpu.phys.read(soc.gpu.phys.vram_size - DISCOVERY_TMR_OFFSET, DISCOVERY_TMR_SIZE)


@pytest.mark.parametrize("arch", sorted(AQUA_VERSIONS))
def test_mi300x_and_mi350x_discovery_binaries_list_four_dies_of_banked_blocks(arch):
    soc = SOC(GPU(vram_size=256 << 20, arch=arch))
    blob = _gfx942_blob(soc)
    assert blob == _gfx942_blob(SOC(GPU(vram_size=256 << 20, arch=arch)))  # the same bytes every time
    sig, _, _, checksum, size = struct.unpack_from("<IHHHH", blob, 0)
    assert sig == 0x28211407 and _sum16(blob[10:size]) == checksum
    t = parse_dies(blob)
    assert t["dies"] == 4
    hwids = HWID | {"SDMA0": 42}
    for name, count in MI300X_COUNT.items():
        listed = {inst: v for (hw, inst), v in t["ips"].items() if hw == hwids[name]}
        assert sorted(listed) == list(range(count)), name
        for inst, (die, version) in listed.items():
            assert version == AQUA_VERSIONS[arch][name], (name, inst)
            assert die == MI300X_DIE.get(name, lambda i: 0)(inst), (name, inst)
    assert len(t["ips"]) == sum(MI300X_COUNT.values())
    assert parse_harvest(blob) == []  # the table is there; no listed instance is fused off
    assert parse_gc_info_v2_1(blob) == GC_INFO[arch]


def test_a_harvest_table_names_the_fused_off_instances():
    from simgpu.hw import discovery
    harvest = ((discovery.GC_HWID, 7), (discovery.SDMA0_HWID, 13))
    blob = discovery.build_table(discovery.MI300X_IP_BLOCKS, {"gc_num_se": 4}, (2, 1), harvest)
    assert parse_harvest(blob) == [(11, 7), (42, 13)]
    assert discovery.parse_table(blob).harvested == harvest
    assert [b.instance for b in discovery.parse_table(blob).live(discovery.GC_HWID)] == list(range(7))


def test_a_die_offset_past_the_binary_is_a_discovery_error_not_a_crash():
    """A hostile binary whose checksums are right but whose die list points past its end (what a driver reading a
    corrupt table meets): parse_table names it."""
    from simgpu.hw import discovery
    blob = bytearray(discovery.build_table(discovery.MI300X_IP_BLOCKS, {}, (2, 1), ()))
    ip_off, _, ip_size = struct.unpack_from("<HHH", blob, 12)
    struct.pack_into("<H", blob, ip_off + 14 + 4 * 3 + 2, 0xFFF0)  # die 3's die_offset
    struct.pack_into("<H", blob, 14, _sum16(blob[ip_off:ip_off + ip_size]))
    struct.pack_into("<H", blob, 8, _sum16(blob[10:struct.unpack_from("<H", blob, 10)[0]]))
    with pytest.raises(discovery.DiscoveryError, match="past the binary"):
        discovery.parse_table(bytes(blob))
