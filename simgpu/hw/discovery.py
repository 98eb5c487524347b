"""The IP discovery table: the binary a gfx10+ GPU keeps at the top of VRAM saying which IP blocks it has, their
versions and the base addresses of their registers -- and what this simulated Navi 31 lists in it.

Format (amdgpu's drivers/gpu/drm/amd/include/discovery.h, packed little-endian): a binary header (signature
0x28211407, version, checksum and size of the binary, and a table list: offset/checksum/size of the IP discovery,
GC, harvest ... tables), then the IP discovery table (signature "IPDS", version, size, die list), per die a die
header (die id, IP count) followed by its IP entries (hw id, instance, base-address count, major/minor/revision,
variant, then the 32-bit base addresses), the GC info table (gpu_info_header "GC" + gc_info_v1_2 on RDNA, v2_1 on
CDNA3) and, where a part has one, the harvest table (signature "HARV", version, 32 (hw id, instance) entries naming
the instances fused off). A multi-die part (MI300X: one die per AID) lists each die's blocks under its own die
header; instance numbers are global (GC 0..7 are the eight XCCs, SDMA 0..15 four per AID). The table
lives DISCOVERY_TMR_OFFSET below the end of VRAM, at most DISCOVERY_TMR_SIZE bytes (amdgpu_discovery.c); a
checksum is the 16-bit sum of the bytes it covers.

`build_table` writes the binary, `parse_table` reads one (the runtime's AM driver and the tests use it); both from
the same Records. May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from simgpu.hw.bits import Record

BINARY_SIGNATURE = 0x28211407
DISCOVERY_TABLE_SIGNATURE = 0x53445049  # "IPDS"
GC_TABLE_ID = 0x4347  # "GC"
HARVEST_TABLE_SIGNATURE = 0x56524148  # "HARV"
HARVEST_ENTRIES = 32
DISCOVERY_TMR_OFFSET = 64 << 10  # the table starts this far below the end of VRAM
DISCOVERY_TMR_SIZE = 10 << 10
TOTAL_TABLES = 6
IP_DISCOVERY, GC, HARVEST_INFO, VCN_INFO, MALL_INFO, NPS_INFO = range(TOTAL_TABLES)
MAX_DIES = 16
IP_TABLE_VERSION = 3  # ip_v3 entries: 32-bit bases, the low nibble of the last byte is the sub-revision

# Hardware ids (amdgpu's soc15_hw_ip.h) of the blocks below.
MP1_HWID, GC_HWID, MMHUB_HWID, ATHUB_HWID, OSSSYS_HWID, HDP_HWID = 1, 11, 34, 35, 40, 41
SDMA0_HWID, SDMA1_HWID, NBIF_HWID, MP0_HWID = 42, 43, 108, 255


class TableInfo(Record):
    """table_info: where one table of the binary is."""

    LAYOUT = (("offset", "H"), ("checksum", "H"), ("size", "H"), (None, "H"))


class BinaryHeader(Record):
    """binary_header (v1): the start of the binary; `tables` are TOTAL_TABLES table_info records."""

    LAYOUT = (("binary_signature", "I"), ("version_major", "H"), ("version_minor", "H"), ("binary_checksum", "H"),
              ("binary_size", "H"), ("tables", f"{TOTAL_TABLES * TableInfo.SIZE}s"))


class IpDiscoveryHeader(Record):
    """ip_discovery_header: `dies` is MAX_DIES (die_id, die_offset) pairs of u16."""

    LAYOUT = (("signature", "I"), ("version", "H"), ("size", "H"), ("id", "I"), ("num_dies", "H"),
              ("dies", f"{2 * MAX_DIES}H"), ("flags", "H"))


class DieHeader(Record):
    """die_header."""

    LAYOUT = (("die_id", "H"), ("num_ips", "H"))


class IpEntry(Record):
    """ip_v3 without its base addresses (num_base_address u32s follow it)."""

    LAYOUT = (("hw_id", "H"), ("instance_number", "B"), ("num_base_address", "B"), ("major", "B"), ("minor", "B"),
              ("revision", "B"), ("sub_revision_variant", "B"))


class GpuInfoHeader(Record):
    """gpu_info_header, at the start of the GC table."""

    LAYOUT = (("table_id", "I"), ("version_major", "H"), ("version_minor", "H"), ("size", "I"))


GC_INFO_V1_2_FIELDS = (
    "gc_num_se", "gc_num_wgp0_per_sa", "gc_num_wgp1_per_sa", "gc_num_rb_per_se", "gc_num_gl2c", "gc_num_gprs",
    "gc_num_max_gs_thds", "gc_gs_table_depth", "gc_gsprim_buff_depth", "gc_parameter_cache_depth",
    "gc_double_offchip_lds_buffer", "gc_wave_size", "gc_max_waves_per_simd", "gc_max_scratch_slots_per_cu",
    "gc_lds_size", "gc_num_sc_per_se", "gc_num_sa_per_se", "gc_num_packer_per_sc", "gc_num_gl2a",
    "gc_num_tcp_per_sa", "gc_num_sdp_interface", "gc_num_tcps", "gc_num_tcp_per_wpg", "gc_tcp_l1_size",
    "gc_num_sqc_per_wgp", "gc_l1_instruction_cache_size_per_sqc", "gc_l1_data_cache_size_per_sqc",
    "gc_gl1c_per_sa", "gc_gl1c_size_per_instance", "gc_gl2c_per_gpu")


class GcInfo(Record):
    """gc_info_v1_2 (header included): the shape of the graphics core."""

    LAYOUT = (("header", f"{GpuInfoHeader.SIZE}s"),) + tuple((name, "I") for name in GC_INFO_V1_2_FIELDS)


# gc_info_v2_1 (gfx9 parts: v2_0's fields, then the cache sizes v2_1 adds); on GC 9.4.3 every value is one XCC's.
GC_INFO_V2_1_FIELDS = (
    "gc_num_se", "gc_num_cu_per_sh", "gc_num_sh_per_se", "gc_num_rb_per_se", "gc_num_tccs", "gc_num_gprs",
    "gc_num_max_gs_thds", "gc_gs_table_depth", "gc_gsprim_buff_depth", "gc_parameter_cache_depth",
    "gc_double_offchip_lds_buffer", "gc_wave_size", "gc_max_waves_per_simd", "gc_max_scratch_slots_per_cu",
    "gc_lds_size", "gc_num_sc_per_se", "gc_num_packer_per_sc", "gc_num_tcp_per_sh", "gc_tcp_size_per_cu",
    "gc_num_sdp_interface", "gc_num_cu_per_sqc", "gc_instruction_cache_size_per_sqc",
    "gc_scalar_data_cache_size_per_sqc", "gc_tcc_size")


class GcInfoV2_1(Record):
    """gc_info_v2_1 (header included)."""

    LAYOUT = (("header", f"{GpuInfoHeader.SIZE}s"),) + tuple((name, "I") for name in GC_INFO_V2_1_FIELDS)


# (version major, minor) -> (record, its fields)
GC_INFO_VERSIONS = {(1, 2): (GcInfo, GC_INFO_V1_2_FIELDS), (2, 1): (GcInfoV2_1, GC_INFO_V2_1_FIELDS)}


class HarvestInfo(Record):
    """harvest_info: one fused-off IP instance (hw_id 0: an unused entry)."""

    LAYOUT = (("hw_id", "H"), ("number_instance", "B"), (None, "B"))


class HarvestTableHeader(Record):
    """harvest_info_header; HARVEST_ENTRIES HarvestInfo follow it (harvest_table)."""

    LAYOUT = (("signature", "I"), ("version", "I"))


@dataclass(frozen=True)
class IpBlock:
    """One IP block instance as the discovery table lists it."""

    name: str
    hw_id: int
    instance: int
    version: tuple[int, int, int]
    bases: tuple[int, ...]  # register base address per segment (dwords)
    die: int = 0  # the die whose list carries it (MI300X: the AID)


# The Navi 31 blocks this simulator answers for. Versions are the gfx1100 (RX 7900 XTX) ones; base addresses are the
# segments of amdgpu's navi10_ip_offset.h (amdgpu takes them from the table, so any consistent set works). NBIF's
# segment 2 places the HDP flush registers (simgpu.hw.regs); MP0 and MP1 share one register space.
NAVI31_IP_BLOCKS = (
    IpBlock("GC", GC_HWID, 0, (11, 0, 0), (0x1260, 0xA000, 0x1C000, 0x2402C00)),
    IpBlock("SDMA0", SDMA0_HWID, 0, (6, 0, 0), (0x1260, 0xA000, 0x1C000, 0x2402C00)),
    IpBlock("SDMA1", SDMA1_HWID, 0, (6, 0, 0), (0x1260, 0xA000, 0x1C000, 0x2402C00)),
    IpBlock("NBIF", NBIF_HWID, 0, (4, 3, 0), (0x0, 0x14, 0xD20, 0x10400, 0x241B000, 0x4040000)),
    IpBlock("HDP", HDP_HWID, 0, (6, 0, 0), (0xF20, 0x240A400)),
    IpBlock("MMHUB", MMHUB_HWID, 0, (3, 0, 0), (0x1A000, 0x2408800)),
    IpBlock("ATHUB", ATHUB_HWID, 0, (3, 0, 0), (0xC00, 0x2408C00)),
    IpBlock("OSSSYS", OSSSYS_HWID, 0, (6, 0, 0), (0x10A0, 0x240A000)),
    IpBlock("MP0", MP0_HWID, 0, (13, 0, 0), (0x16000, 0x243FC00, 0xDC0000, 0xE00000, 0xE40000, 0x243FC00)),
    IpBlock("MP1", MP1_HWID, 0, (13, 0, 0), (0x16000, 0x243FC00, 0xDC0000, 0xE00000, 0xE40000, 0x243FC00)),
)


# The Navi 48 (RX 9070 XT, gfx1201) blocks: amdgpu's IP versions for GC 12.0.1 (amdgpu_discovery.c: SDMA 7.0.1,
# NBIF 6.3.1, HDP 7.0.0, MMHUB/ATHUB 4.1.0, OSSSYS 7.0.0, MP0/MP1 14.0.3 -- the psp_14_0_3 / smu_14_0_3 firmware).
# Base addresses: Navi 31's set (a driver takes them from the table; the real Navi 48 values are not used here), as
# tinygrad's own RDNA4 AM mock does.
_NAVI48_VERSIONS = {"GC": (12, 0, 1), "SDMA0": (7, 0, 1), "SDMA1": (7, 0, 1), "NBIF": (6, 3, 1), "HDP": (7, 0, 0),
                    "MMHUB": (4, 1, 0), "ATHUB": (4, 1, 0), "OSSSYS": (7, 0, 0), "MP0": (14, 0, 3), "MP1": (14, 0, 3)}
NAVI48_IP_BLOCKS = tuple(IpBlock(b.name, b.hw_id, b.instance, _NAVI48_VERSIONS[b.name], b.bases)
                         for b in NAVI31_IP_BLOCKS)

# MI300X (gfx942, Aqua Vanjaram): four AIDs (I/O dies), one die of the table each; two XCCs (GC 9.4.3) and four
# SDMA 4.4.2 engines sit on every AID, and each AID has its MMHUB 1.8.0. The blocks a driver reaches on AID 0 only --
# NBIO 7.9.0 (the PCIe function), OSSSYS 4.4.2 (the IH), HDP 4.4.2, MP0/MP1 13.0.6 (PSP, SMU) -- are listed once, on
# die 0; the other AIDs' copies are reached through NBIO's SMN window (PCIE_INDEX2 with the AID in the high bits).
# Versions are amdgpu's for GC 9.4.3 (amdgpu_discovery.c, aqua_vanjaram.c). Base addresses: gfx9's segments
# (GC 0x2000 / 0xA000, as vega10_ip_offset.h) for XCC 0 and AID 0, every further XCC 0x40000 dwords (1 MiB) higher so
# that an XCC's registers differ from XCC 0's only above bit 16 (what amdgpu's NORMALIZE_XCC_REG_OFFSET assumes);
# XCCs 1..7 lie beyond the 1 MiB MMIO BAR and are reached through RSMU_INDEX/DATA. MI300X's real bases are not
# used (not public); a driver takes them from the table, so any consistent set works.
MI300X_AIDS, MI300X_XCCS, MI300X_SDMAS = 4, 8, 16
XCC_STRIDE = 0x40000  # dwords between two XCCs' register bases
_GC_BASES = (0x2000, 0xA000, 0x1C000, 0x2402C00)
_NBIO_BASES = (0x0, 0x14, 0xD20, 0x10400, 0x241B000, 0x4040000, 0x4080000, 0x40C0000, 0x4100000)  # nbio_7_9: 9 segs
_MP_BASES = (0x16000, 0x243FC00, 0xDC0000, 0xE00000, 0xE40000, 0x243FC00)


def _aqua_blocks(gc, sdma, mmhub, nbio, hdp, osssys, mp) -> tuple[IpBlock, ...]:
    """The four-die table of an MI300-family part at these IP versions: two XCCs, four SDMA engines and an MMHUB on
    every die (AID), NBIO / HDP / OSSSYS / MP0 / MP1 once on die 0, at the bases described above."""
    return (
        *(IpBlock("GC", GC_HWID, x, gc, tuple(b + x * XCC_STRIDE for b in _GC_BASES), x // 2)
          for x in range(MI300X_XCCS)),
        *(IpBlock("SDMA0", SDMA0_HWID, i, sdma, (0x4000 + 0x100 * i,), i // 4) for i in range(MI300X_SDMAS)),
        *(IpBlock("MMHUB", MMHUB_HWID, a, mmhub, (0x1A000 + 0x1000 * a, 0x2408800), a) for a in range(MI300X_AIDS)),
        IpBlock("NBIF", NBIF_HWID, 0, nbio, _NBIO_BASES),
        IpBlock("HDP", HDP_HWID, 0, hdp, (0xF20, 0x240A400)),
        IpBlock("OSSSYS", OSSSYS_HWID, 0, osssys, (0x10A0, 0x240A000)),
        IpBlock("MP0", MP0_HWID, 0, mp, _MP_BASES),
        IpBlock("MP1", MP1_HWID, 0, mp, _MP_BASES),
    )


MI300X_IP_BLOCKS = _aqua_blocks(gc=(9, 4, 3), sdma=(4, 4, 2), mmhub=(1, 8, 0), nbio=(7, 9, 0), hdp=(4, 4, 2),
                                osssys=(4, 4, 2), mp=(13, 0, 6))

# MI350X (gfx950, CDNA4): MI300X's table at GC 9.5.0's IP versions. Where each comes from (amdgpu):
# - GC 9.5.0 per XCC (gfx_v9_4_3.c drives it; gc_9_5_0_mec/rlc firmware);
# - SDMA 4.4.4: sdma_v4_4_2.c serves 4.4.2, 4.4.4 and 4.4.5; 4.4.5 came with GC 9.4.4 (its gc_9_4_4 / sdma_4_4_5 /
#   psp_13_0_14 firmware set), 4.4.4 with the GC 9.5.0 work (tinygrad 0.14 also pairs its sdma_4_4_2 register table
#   with 4.4.2 and 4.4.4 only);
# - MMHUB 1.8.1: gmc_v9_0.c gives it mmhub_v1_8's functions, added with UMC 12.5.0 (MI350's memory controller);
# - MP0/MP1 13.0.12: psp_v13_0.c (psp_13_0_12_sos) and smu_v13_0_6_ppt.c's 13.0.12 branch (smu_v13_0_12), whose
#   firmware comes with the IFWI (amdgpu, like tinygrad, loads no SMU image for it); vcn_v5_0_1.c keys on MP0 13.0.12;
# - NBIO 7.9.0, HDP 4.4.2, OSSSYS 4.4.2: MI300X's. nbio_v7_9.c serves 7.9.0 and 7.9.1, hdp_v4_0.c 4.4.2 and 4.4.5,
#   vega20_ih.c OSSSYS 4.4.2, 4.4.4 and 4.4.5; which of each MI350X reports is not confirmed. OSSSYS 4.4.2 is the one
#   tinygrad 0.14 can drive: on any other it programs IH_MSI_STORM_CTRL, which its osssys_4_4_2 table lacks.
# - Die layout: MI350X has two I/O dies of four XCDs; how its binary groups the blocks into dies is not public here.
#   The table keeps MI300X's four-die grouping (four SDMA engines and an MMHUB a die), which is what tinygrad 0.14's
#   AID logic assumes (sixteen engines, an AID per four).
MI350X_IP_BLOCKS = _aqua_blocks(gc=(9, 5, 0), sdma=(4, 4, 4), mmhub=(1, 8, 1), nbio=(7, 9, 0), hdp=(4, 4, 2),
                                osssys=(4, 4, 2), mp=(13, 0, 12))

# The parts whose whole table is modelled, by architecture (what the KFD sysfs lists too; MI300X's table, whose
# dies the sysfs does not yet lay out, is the PCI function's only: simgpu.soc).
PART_IP_BLOCKS = {"gfx1100": NAVI31_IP_BLOCKS, "gfx1201": NAVI48_IP_BLOCKS}


def block_bases(blocks=NAVI31_IP_BLOCKS) -> dict[str, tuple[int, ...]]:
    """Block name -> base addresses, what register declarations (simgpu.hw.mmio) resolve against; NBIO is NBIF."""
    out: dict[str, tuple[int, ...]] = {}
    for b in sorted(blocks, key=lambda b: b.instance):  # a banked block's instance 0
        out.setdefault(b.name, b.bases)
    if "NBIF" in out:
        out["NBIO"] = out["NBIF"]
    return out


def block_instances(blocks) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Block name -> every instance's base addresses, by instance number (the banked blocks of a multi-die part)."""
    out: dict[str, list[IpBlock]] = {}
    for b in blocks:
        out.setdefault(b.name, []).append(b)
    inst = {name: tuple(b.bases for b in sorted(bs, key=lambda b: b.instance)) for name, bs in out.items()}
    if "NBIF" in inst:
        inst["NBIO"] = inst["NBIF"]
    return inst


def checksum(data: bytes) -> int:
    """amdgpu_discovery_calculate_checksum: the 16-bit sum of the bytes."""
    return sum(data) & 0xFFFF


def build_table(blocks=NAVI31_IP_BLOCKS, gc_info: dict | None = None, gc_info_version: tuple[int, int] = (1, 2),
                harvest: tuple[tuple[int, int], ...] | None = None) -> bytes:
    """The discovery binary listing `blocks` (under their dies, in die order), a GC info table of that version with
    the given values, and -- if `harvest` is given, even empty -- a harvest table of those (hw_id, instance)s."""
    head = BinaryHeader.SIZE
    dies = sorted({b.die for b in blocks})
    if len(dies) > MAX_DIES:
        raise ValueError(f"{len(dies)} dies: the IP discovery header lists at most {MAX_DIES}")
    die_info, body, at = [], b"", head + IpDiscoveryHeader.SIZE
    for die in dies:
        mine = [b for b in blocks if b.die == die]
        data = DieHeader(die, len(mine)).pack() + b"".join(_ip_entry(b) for b in mine)
        die_info += [die, at]
        body, at = body + data, at + len(data)
    die_info += [0] * (2 * MAX_DIES - len(die_info))
    ip_size = IpDiscoveryHeader.SIZE + len(body)
    ip_table = IpDiscoveryHeader(DISCOVERY_TABLE_SIGNATURE, IP_TABLE_VERSION, ip_size, 0, len(dies), tuple(die_info),
                                 0).pack() + body
    gc = _gc_table(gc_info or {}, gc_info_version)
    tables = [TableInfo(head, checksum(ip_table), len(ip_table)),
              TableInfo(head + len(ip_table), checksum(gc), len(gc))]
    payload = ip_table + gc
    if harvest is not None:
        harv = _harvest_table(harvest)
        tables.append(TableInfo(head + len(payload), checksum(harv), len(harv)))
        payload += harv
    tables += [TableInfo()] * (TOTAL_TABLES - len(tables))
    size = head + len(payload)
    if size > DISCOVERY_TMR_SIZE:
        raise ValueError(f"discovery binary of {size} bytes exceeds {DISCOVERY_TMR_SIZE}")
    hdr = BinaryHeader(BINARY_SIGNATURE, 1, 0, 0, size, b"".join(t.pack() for t in tables))
    after_checksum = BinaryHeader.offset("binary_size")  # the binary checksum covers what follows its own field
    hdr.binary_checksum = checksum((hdr.pack() + payload)[after_checksum:size])
    return hdr.pack() + payload


def _ip_entry(b: IpBlock) -> bytes:
    return IpEntry(b.hw_id, b.instance, len(b.bases), *b.version, 0).pack() + struct.pack(f"<{len(b.bases)}I", *b.bases)


def _gc_table(gc_info: dict, version: tuple[int, int]) -> bytes:
    if version not in GC_INFO_VERSIONS:
        raise ValueError(f"gc_info v{version[0]}.{version[1]} is not one this builder writes "
                         f"({list(GC_INFO_VERSIONS)})")
    record, fields = GC_INFO_VERSIONS[version]
    unknown = set(gc_info) - set(fields)
    if unknown:
        raise ValueError(f"gc_info v{version[0]}.{version[1]} has no field {sorted(unknown)[0]!r}")
    values = dict.fromkeys(fields, 0) | gc_info
    return record(GpuInfoHeader(GC_TABLE_ID, *version, record.SIZE).pack(), *(values[n] for n in fields)).pack()


def _harvest_table(entries: tuple[tuple[int, int], ...]) -> bytes:
    if len(entries) > HARVEST_ENTRIES:
        raise ValueError(f"{len(entries)} harvested instances: the harvest table holds {HARVEST_ENTRIES}")
    rows = [HarvestInfo(hw_id, inst) for hw_id, inst in entries]
    rows += [HarvestInfo()] * (HARVEST_ENTRIES - len(rows))
    return HarvestTableHeader(HARVEST_TABLE_SIGNATURE, 1).pack() + b"".join(r.pack() for r in rows)


@dataclass
class Discovery:
    """A parsed discovery binary."""

    blocks: list[IpBlock]
    gc_info: dict[str, int]
    gc_info_version: tuple[int, int] = (1, 2)
    harvested: tuple[tuple[int, int], ...] = ()  # (hw_id, instance) the harvest table names

    def find(self, hw_id: int, instance: int = 0) -> IpBlock | None:
        """The block with that hardware id and instance."""
        return next((b for b in self.blocks if b.hw_id == hw_id and b.instance == instance), None)

    def live(self, hw_id: int) -> list[IpBlock]:
        """The instances of a block the harvest table does not name, by instance number."""
        return sorted((b for b in self.blocks if b.hw_id == hw_id and (hw_id, b.instance) not in self.harvested),
                      key=lambda b: b.instance)


class DiscoveryError(ValueError):
    """A discovery binary that does not parse: names the table and byte offset."""


def parse_table(data: bytes) -> Discovery:
    """Read a discovery binary (checking signatures, sizes and checksums)."""
    if len(data) < BinaryHeader.SIZE:
        raise DiscoveryError(f"discovery binary of {len(data)} bytes is shorter than its header")
    hdr = BinaryHeader.unpack(data)
    if hdr.binary_signature != BINARY_SIGNATURE:
        raise DiscoveryError(f"binary signature {hdr.binary_signature:#x} at byte 0, expected {BINARY_SIGNATURE:#x}")
    if not BinaryHeader.SIZE <= hdr.binary_size <= len(data):
        raise DiscoveryError(f"binary_size {hdr.binary_size} does not fit the {len(data)} bytes read")
    data = data[:hdr.binary_size]
    start = BinaryHeader.offset("binary_size")
    if checksum(data[start:]) != hdr.binary_checksum:
        raise DiscoveryError(f"binary checksum {hdr.binary_checksum:#x} does not match the bytes")
    tables = [TableInfo.unpack(hdr.tables[i * TableInfo.SIZE:]) for i in range(TOTAL_TABLES)]
    for name, t in (("IP discovery", tables[IP_DISCOVERY]), ("GC", tables[GC]), ("harvest", tables[HARVEST_INFO])):
        if (t.offset or name != "harvest") and (t.offset + t.size > hdr.binary_size
                                                or checksum(data[t.offset:t.offset + t.size]) != t.checksum):
            raise DiscoveryError(f"{name} table at byte {t.offset} (+{t.size}): bad bounds or checksum")
    try:
        blocks = _parse_dies(data, tables[IP_DISCOVERY].offset)
        version, gc_info = _parse_gc(data, tables[GC].offset)
        harvested = _parse_harvest(data, tables[HARVEST_INFO]) if tables[HARVEST_INFO].offset else ()
    except struct.error as e:
        raise DiscoveryError(f"a table runs past the binary's {len(data)} bytes ({e})") from None
    return Discovery(blocks, gc_info, version, harvested)


def _parse_dies(data: bytes, at: int) -> list[IpBlock]:
    ih = IpDiscoveryHeader.unpack(data[at:])
    if ih.signature != DISCOVERY_TABLE_SIGNATURE:
        raise DiscoveryError(f"IP discovery signature {ih.signature:#x} at byte {at}")
    if ih.num_dies > MAX_DIES:
        raise DiscoveryError(f"IP discovery header at byte {at} lists {ih.num_dies} dies (at most {MAX_DIES})")
    blocks = []
    for d in range(ih.num_dies):
        pos = ih.dies[2 * d + 1]
        die = DieHeader.unpack(data[pos:])
        pos += DieHeader.SIZE
        for _ in range(die.num_ips):
            ip = IpEntry.unpack(data[pos:])
            pos += IpEntry.SIZE
            bases = struct.unpack_from(f"<{ip.num_base_address}I", data, pos)
            pos += 4 * ip.num_base_address
            blocks.append(IpBlock(_NAMES.get(ip.hw_id, f"hw_id {ip.hw_id}"), ip.hw_id, ip.instance_number,
                                  (ip.major, ip.minor, ip.revision), tuple(bases), die.die_id))
    return blocks


def _parse_gc(data: bytes, at: int) -> tuple[tuple[int, int], dict[str, int]]:
    head = GpuInfoHeader.unpack(data[at:])
    version = (head.version_major, head.version_minor)
    if head.table_id != GC_TABLE_ID or version not in GC_INFO_VERSIONS:
        raise DiscoveryError(f"GC table at byte {at}: id {head.table_id:#x} v{version[0]}.{version[1]} is not a "
                             f"gc_info this parser reads ({list(GC_INFO_VERSIONS)})")
    record, fields = GC_INFO_VERSIONS[version]
    gc = record.unpack(data[at:])
    return version, {name: getattr(gc, name) for name in fields}


def _parse_harvest(data: bytes, t: TableInfo) -> tuple[tuple[int, int], ...]:
    head = HarvestTableHeader.unpack(data[t.offset:])
    if head.signature != HARVEST_TABLE_SIGNATURE:
        raise DiscoveryError(f"harvest table signature {head.signature:#x} at byte {t.offset}")
    rows = (HarvestInfo.unpack(data[t.offset + HarvestTableHeader.SIZE + i * HarvestInfo.SIZE:])
            for i in range(HARVEST_ENTRIES))
    return tuple((r.hw_id, r.number_instance) for r in rows if r.hw_id)


_NAMES = {MP1_HWID: "MP1", GC_HWID: "GC", MMHUB_HWID: "MMHUB", ATHUB_HWID: "ATHUB", OSSSYS_HWID: "OSSSYS",
          HDP_HWID: "HDP", SDMA0_HWID: "SDMA0", SDMA1_HWID: "SDMA1", NBIF_HWID: "NBIF", MP0_HWID: "MP0"}
