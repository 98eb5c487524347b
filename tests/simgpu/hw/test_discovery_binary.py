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
