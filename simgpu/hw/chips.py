"""The GPUs simgpu simulates, one `Chip` per architecture: what a client sees of the device (its KFD topology, the
render node's AMDGPU_INFO answers, its PCI identity) and the shape the simulator gives it.

gfx1100 (Navi 31, Radeon RX 7900 XTX) is the default; every value of its entry is what the simulator reported
before there were other chips. gfx1201 (Navi 48, Radeon RX 9070 XT) is RDNA4. Where a value comes from:

- shapes (shader engines, arrays, CUs, SIMDs, wave size, LDS): the chips' public specifications and amdgpu
  (gfx_v12_0 / the GC info table: Navi 48 is 4 SEs x 2 SAs x 4 WGPs x 2 CUs = 64 CUs, 64 KiB of LDS a workgroup);
- gfx_target_version: amdkfd's kfd_topology.c computes it from the GC IP version (12.0.1 -> 120001);
- IP versions (what a KFD client reads from ip_discovery in sysfs): GC 12.0.1 is gfx1201; SDMA 7.0.1 and NBIF 6.3.1
  are Navi 48's blocks in amdgpu's IP tables (tinygrad picks its register layouts by these three);
- PCI ids: 0x744C is the RX 7900 XTX, 0x7550 the RX 9070 (XT) (Navi 48; its revision 0xC0 is not confirmed);
  DRM family: amdgpu_drm.h's
  AMDGPU_FAMILY_GC_11_0_0 (145) and AMDGPU_FAMILY_GC_12_0_0 (152);
- firmware versions are plausible values, not read from a board: for gfx1201 the MEC/ME/PFP/MES versions are the
  minimums amdgpu's gfx_v12_0 checks for user queues (so a real gfx1201 with current firmware reports at least these);
- memory: both are 20 Gbps GDDR6 (384- and 256-bit buses); the memory clock reported is Navi 31's for both (not
  confirmed for Navi 48).

gfx942 is the AMD Instinct MI300X (CDNA3, "Aqua Vanjaram"), one KFD node in SPX mode:
- GC 9.4.3 (Aqua Vanjaram's graphics IP: gfx_v9_4_3.c; GC 9.4.2 is Aldebaran, gfx90a), which amdkfd's
  kgd2kfd_probe maps to gfx_target_version 90402 for every revision after the first (not by the major * 10000 +
  minor * 100 + stepping rule of other chips); SDMA 4.4.2 and NBIO 7.9.0 are its blocks in amdgpu's IP tables
  (sdma_v4_4_2.c, nbio_v7_9.c); DRM family AMDGPU_FAMILY_AI (141, every gfx9); PCI device 0x74A1 (rocminfo's "Chip
  ID" on an MI300X; its PCI revision is not confirmed);
- shape: 8 XCDs x 4 shader engines x 1 shader array, 304 active CUs (38 of 40 per XCD) of 4 SIMDs, wave64, 64 KiB
  of LDS a workgroup, 8 waves per SIMD; the topology's num_xcc is 8. cu_per_simd_array is computed here as active
  CUs / arrays (9), where amdgpu reports the physical slots (10); DEV_INFO's shader engines are one XCC's (4);
- memory: 8 HBM3 stacks of 1024 bits, 1300 MHz; caches as rocminfo prints them (L1 32 KiB, L2 4 MiB per XCD,
  256 MiB Infinity Cache); MEC/SDMA firmware versions are plausible values (gfx942 has no MES: its ME/PFP/RLC/MES
  entries are 0).
- SDMA and XGMI: 16 SDMA 4.4.2 instances (4 per I/O die), 8 queues each, none reserved (amdkfd reserves 2 queues an
  engine only on SDMA 6.x: bitmap 0xF, kept here for gfx1201's 7.0.1 too, which reported 6 queues an engine before);
  XGMI links of 16 lanes at 32 GT/s (amdgpu_xgmi_early_init for GC 9.4.3), i.e. 64000 MB/s a link and direction.
- AM: its PCI function's register side is modelled (am=True): MI300X's four-die discovery table and the banked
  gc_9_4_3 / mmhub_1_8_0 / sdma_4_4_2 / nbio_7_9_0 map of simgpu.hw.soc15 (docs/device.md, "AM per architecture").

gfx950 is the AMD Instinct MI350X (CDNA4), one KFD node in SPX mode, the gfx942 model with CDNA4's differences:
- GC 9.5.0, which amdkfd's kgd2kfd_probe maps to gfx_target_version 90500 with the same kfd2kgd functions as GC 9.4.3
  (gc_9_4_3_kfd2kgd: the same MQD, PM4 and HIQ paths), and gfx_v9_4_3.c drives both; SDMA 4.4.4 (sdma_v4_4_2.c
  serves 4.4.2, 4.4.4 and 4.4.5 with one packet set: no SDMA packet delta; 4.4.5 is GC 9.4.4's, which came with the
  gc_9_4_4 / sdma_4_4_5 / psp_13_0_14 firmware, 4.4.4 GC 9.5.0's: simgpu.hw.discovery.MI350X_IP_BLOCKS);
  NBIO 7.9.0 as for MI300X (nbio_v7_9.c serves 7.9.0 and 7.9.1; which of the two MI350X reports is not confirmed;
  tinygrad's mock driver reports 7.9.0);
  DRM family AMDGPU_FAMILY_AI (141); PCI device 0x75A0 (MI350X in pci.ids; its revision is not confirmed);
- shape: 8 XCDs x 4 shader engines x 1 shader array, 256 active CUs (32 per XCD) of 4 SIMDs, wave64, 8 waves per
  SIMD; 160 KiB of LDS per CU, all of it addressable by one workgroup (CDNA4 ISA; tinygrad sizes its CWSR area from
  the topology's lds_size_in_kb on GC 9.5 for this reason);
- memory: 8 HBM3E stacks of 1024 bits; the memory clock reported is MI300X's (MI350X's is not confirmed); caches as
  MI300X's (L1 32 KiB, L2 4 MiB per XCD, 256 MiB Infinity Cache, the public MI350X figures); firmware versions are
  plausible values (gfx950 has no MES).
- AM: its PCI function's register side is modelled (am=True): MI350X's discovery table (GC 9.5.0, SDMA 4.4.4, MMHUB
  1.8.1, MP 13.0.12) over gfx942's banked map, PSP/SMU 13.0.12 (docs/device.md, "AM per architecture").

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simgpu import settings

DEFAULT_ARCH = "gfx1100"


@dataclass(frozen=True)
class Chip:
    """One simulated GPU model (an architecture and the part that carries it)."""

    arch: str  # the processor name code objects are built for ("gfx1100")
    family: str  # the ISA family ("gfx11", "gfx12"): what the shader engine executes
    part: str  # the marketing name of the modelled board
    asic: str  # the chip's code name
    gfx_target_version: int  # KFD topology: major * 10000 + minor * 100 + stepping
    gc_version: tuple[int, int, int]
    sdma_version: tuple[int, int, int]
    nbif_version: tuple[int, int, int]
    device_id: int  # PCI device id (vendor 0x1002)
    pci_revision: int
    drm_family: int  # AMDGPU_INFO_DEV_INFO.family
    shader_engines: int
    arrays_per_engine: int
    compute_units: int
    simds_per_cu: int = 2
    wave_size: int = 32  # the default wave size (kernels pick 32 or 64 in their descriptor)
    lds_bytes: int = 64 << 10  # LDS a workgroup may use
    max_waves_per_simd: int = 16
    sdma_engines: int = 2
    vram_width_bits: int = 256
    mem_clk_max_mhz: int = 1249
    mec_fw_version: int = 0
    sdma_fw_version: int = 0
    firmware: dict[str, tuple[int, int]] = field(default_factory=dict)  # ME/PFP/RLC/MES (version, feature)
    caches: dict[str, int] = field(default_factory=dict)  # AMDGPU_INFO_DEV_INFO cache fields
    am: bool = False  # whether the PCI function's register side (AM bring-up, IP discovery binary) is modelled
    xcc: int = 1  # compute dies (XCCs) the KFD node spans (MI300X in SPX mode: 8)
    sdma_queues_per_engine: int = 8  # hardware queues of one SDMA engine (amdkfd's device_info)
    sdma_reserved_queues: int = 0  # bitmap of SDMA queues amdgpu keeps (bit i: engine i % n, queue i // n)
    xgmi_gts: int = 0  # XGMI link rate in GT/s (16 lanes a link); 0: no XGMI, the chip joins no hive

    @property
    def cu_per_array(self) -> int:
        return self.compute_units // (self.shader_engines * self.arrays_per_engine)


CHIPS: dict[str, Chip] = {c.arch: c for c in (
    Chip("gfx1100", "gfx11", "Radeon RX 7900 XTX", "Navi 31", 110000, (11, 0, 0), (6, 0, 0), (4, 3, 0),
         device_id=0x744C, pci_revision=0xC8, drm_family=145, shader_engines=6, arrays_per_engine=2,
         compute_units=96, vram_width_bits=384, mec_fw_version=550, sdma_fw_version=21, sdma_reserved_queues=0xF,
         firmware={"me": (1470, 29), "pfp": (1470, 29), "rlc": (98, 1), "mes": (104, 1)},
         # GL0 (TCP) 32 KiB per CU, SQC 16/32 KiB, GL1 256 KiB, L2 6 MiB, 96 MiB MALL
         caches={"tcp_cache_size": 32, "num_sqc_per_wgp": 1, "sqc_data_cache_size": 16, "sqc_inst_cache_size": 32,
                 "gl1c_cache_size": 256, "gl2c_cache_size": 6 << 10, "mall_size": 96 << 20},
         am=True),
    Chip("gfx1201", "gfx12", "Radeon RX 9070 XT", "Navi 48", 120001, (12, 0, 1), (7, 0, 1), (6, 3, 1),
         device_id=0x7550, pci_revision=0xC0, drm_family=152, shader_engines=4, arrays_per_engine=2,
         compute_units=64, vram_width_bits=256, mec_fw_version=3050, sdma_fw_version=31, sdma_reserved_queues=0xF,
         firmware={"me": (2780, 1), "pfp": (2840, 1), "rlc": (112, 1), "mes": (123, 1)},
         # RX 9070 XT: L2 8 MiB, 64 MiB Infinity Cache (public figures); GL0/SQC as Navi 31 and GL1 0 are not confirmed
         caches={"tcp_cache_size": 32, "num_sqc_per_wgp": 1, "sqc_data_cache_size": 16, "sqc_inst_cache_size": 32,
                 "gl1c_cache_size": 0, "gl2c_cache_size": 8 << 10, "mall_size": 64 << 20},
         am=True),
    # MI300X (docs/device.md, "gfx942"): 8 XCDs x 4 shader engines x 1 array, 304 active CUs of 4 SIMDs, wave64
    Chip("gfx942", "gfx9", "AMD Instinct MI300X", "Aqua Vanjaram", 90402, (9, 4, 3), (4, 4, 2), (7, 9, 0),
         device_id=0x74A1, pci_revision=0x00, drm_family=141, shader_engines=32, arrays_per_engine=1,
         compute_units=304, simds_per_cu=4, wave_size=64, max_waves_per_simd=8, vram_width_bits=8192,
         mem_clk_max_mhz=1300, mec_fw_version=177, sdma_fw_version=19, xcc=8, sdma_engines=16, xgmi_gts=32,
         firmware={"me": (0, 0), "pfp": (0, 0), "rlc": (0, 0), "mes": (0, 0)},
         # rocminfo on an MI300X: L1 32 KiB per CU, L2 4 MiB per XCD, 256 MiB Infinity Cache (MALL)
         caches={"tcp_cache_size": 32, "num_sqc_per_wgp": 1, "sqc_data_cache_size": 16, "sqc_inst_cache_size": 64,
                 "gl1c_cache_size": 0, "gl2c_cache_size": 4 << 10, "mall_size": 256 << 20},
         am=True),
    # MI350X (docs/device.md, "gfx950"): 8 XCDs x 4 shader engines x 1 array, 256 active CUs of 4 SIMDs, wave64,
    # 160 KiB of LDS
    Chip("gfx950", "gfx9", "AMD Instinct MI350X", "CDNA4", 90500, (9, 5, 0), (4, 4, 4), (7, 9, 0),
         device_id=0x75A0, pci_revision=0x00, drm_family=141, shader_engines=32, arrays_per_engine=1,
         compute_units=256, simds_per_cu=4, wave_size=64, lds_bytes=160 << 10, max_waves_per_simd=8,
         vram_width_bits=8192, mem_clk_max_mhz=1300, mec_fw_version=21, sdma_fw_version=19, xcc=8,
         firmware={"me": (0, 0), "pfp": (0, 0), "rlc": (0, 0), "mes": (0, 0)},
         caches={"tcp_cache_size": 32, "num_sqc_per_wgp": 1, "sqc_data_cache_size": 16, "sqc_inst_cache_size": 64,
                 "gl1c_cache_size": 0, "gl2c_cache_size": 4 << 10, "mall_size": 256 << 20},
         am=True),
)}


def get_chip(arch: str | None = None) -> Chip:
    """The Chip of an architecture name (None: the default, gfx1100); ValueError naming the known ones."""
    c = CHIPS.get(arch or DEFAULT_ARCH)
    if c is None:
        raise ValueError(f"unknown GPU architecture {arch!r}; simgpu simulates {', '.join(CHIPS)}")
    return c


def device_arches(n: int, arch: str | list[str] | tuple[str, ...] | None = None) -> list[str]:
    """The architecture of each of `n` devices: `arch` (a name, a comma-separated list or a sequence; else
    SIMGPU_ARCH), one for all or one per device; ValueError for an unknown name or a list of the wrong length."""
    if arch is None:
        names = list(settings.get("SIMGPU_ARCH"))
    else:
        names = [a.strip() for a in arch.split(",")] if isinstance(arch, str) else list(arch)
    for a in names:
        get_chip(a)  # ValueError naming the known architectures
    if len(names) == 1:
        return names * n
    if len(names) != n:
        raise ValueError(f"{len(names)} architectures ({', '.join(names)}) for {n} devices: give one for all, or "
                         "one per device")
    return names
