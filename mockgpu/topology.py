"""The KFD sysfs topology the mock driver shows: /sys/devices/virtual/kfd/kfd/topology/.

Node 0 is the CPU, nodes 1.. are the simulated GPUs, with the property names amdkfd prints (kfd_topology.c) and
each GPU's chip's values (simgpu.hw.chips: Navi 31 / Radeon RX 7900 XTX for gfx1100, Navi 48 / Radeon RX 9070 XT
for gfx1201, MI300X for gfx942), shared with the render node's AMDGPU_INFO answers (mockgpu.drm). The links between
nodes (io_links/, p2p_links/) and the XGMI hive are mockgpu.iolinks' and mockgpu.hive's.
"""

from __future__ import annotations

from mockgpu import hive as xgmi
from mockgpu import iolinks
from simgpu.hw import discovery
from simgpu.hw.chips import Chip, get_chip

TOPOLOGY = "/sys/devices/virtual/kfd/kfd/topology"


def chip_of(props: dict) -> Chip:
    """The chip of a GPU's properties (gpu_shape adds it; a bare properties dict names its gfx_target)."""
    return props.get("chip") or get_chip(props.get("gfx_target"))


def _props(d: dict) -> str:
    return "".join(f"{k} {v}\n" for k, v in d.items())


def _links(io: list[dict], p2p: list[dict]) -> dict[str, str]:
    """The io_links/N and p2p_links/N property files of one node."""
    files = {f"io_links/{n}/properties": _props(link) for n, link in enumerate(io)}
    return files | {f"p2p_links/{n}/properties": _props(link) for n, link in enumerate(p2p)}


def cpu_node(io: list[dict] | None = None, p2p: list[dict] | None = None) -> dict[str, str]:
    """Files of the CPU node (relative to nodes/0), with its links to the GPUs."""
    io, p2p = io or [], p2p or []
    props = {"cpu_cores_count": 16, "simd_count": 0, "mem_banks_count": 1, "caches_count": 0,
             "io_links_count": len(io), "p2p_links_count": len(p2p), "cpu_core_id_base": 0, "simd_id_base": 0,
             "max_waves_per_simd": 0,
             "lds_size_in_kb": 0, "gds_size_in_kb": 0, "num_gws": 0, "wave_front_size": 0, "array_count": 0,
             "simd_arrays_per_engine": 0, "cu_per_simd_array": 0, "simd_per_cu": 0, "max_slots_scratch_cu": 0,
             "gfx_target_version": 0, "vendor_id": 0, "device_id": 0, "location_id": 0, "domain": 0,
             "drm_render_minor": 0, "hive_id": 0, "num_sdma_engines": 0, "num_sdma_xgmi_engines": 0,
             "num_sdma_queues_per_engine": 0, "num_cp_queues": 0, "max_engine_clk_ccompute": 4500}
    return {"gpu_id": "0\n", "name": "\n", "properties": _props(props),
            "mem_banks/0/properties": _props({"heap_type": 0, "size_in_bytes": 64 << 30, "flags": 0, "width": 64,
                                              "mem_clk_max": 4800})} | _links(io, p2p)


def gpu_node(index: int, gpu_id: int, props: dict, io: list[dict], p2p: list[dict] | None = None,
             hive_id: int = 0) -> dict[str, str]:
    """Files of a GPU node (relative to nodes/N) from simgpu.GPU.properties() plus its core clock ("core_mhz"), its
    links (mockgpu.iolinks) and its XGMI hive id (0: none)."""
    chip = chip_of(props)
    p2p = p2p or []
    se, cus, simds = props["shader_engines"], props["compute_units"], props["simds_per_cu"]
    arrays = se * chip.arrays_per_engine
    sdma, sdma_xgmi = xgmi.sdma_engines(chip)
    reserved = bin(chip.sdma_reserved_queues).count("1") // max(1, chip.sdma_engines)  # queues kept per engine
    p = {"cpu_cores_count": 0, "simd_count": cus * simds, "mem_banks_count": 1, "caches_count": 1,
         "io_links_count": len(io), "p2p_links_count": len(p2p), "cpu_core_id_base": 0,
         "simd_id_base": 0x80001000 + index * 0x400, "max_waves_per_simd": chip.max_waves_per_simd,
         "lds_size_in_kb": props["lds_bytes"] >> 10,
         "gds_size_in_kb": 0, "num_gws": 64, "wave_front_size": props["wave_size"], "array_count": arrays,
         "simd_arrays_per_engine": chip.arrays_per_engine, "cu_per_simd_array": cus // arrays, "simd_per_cu": simds,
         "max_slots_scratch_cu": 32, "gfx_target_version": chip.gfx_target_version, "vendor_id": 0x1002,
         "device_id": chip.device_id,
         "location_id": 0x300 + 0x100 * index, "domain": 0, "drm_render_minor": 128 + index, "hive_id": hive_id,
         "num_sdma_engines": sdma, "num_sdma_xgmi_engines": sdma_xgmi,
         "num_sdma_queues_per_engine": chip.sdma_queues_per_engine - reserved,
         "num_cp_queues": 8, "max_engine_clk_fcompute": props["core_mhz"], "local_mem_size": 0,
         "fw_version": chip.mec_fw_version,
         "capability": 0x28A8, "debug_prop": 0, "sdma_fw_version": chip.sdma_fw_version,
         "unique_id": 0x5A11C0DE00 + index,
         "num_xcc": chip.xcc, "max_engine_clk_ccompute": 4500}
    return {"gpu_id": f"{gpu_id}\n", "name": "ip discovery\n", "properties": _props(p),
            "mem_banks/0/properties": _props({"heap_type": 1, "size_in_bytes": props["vram_size"], "flags": 0,
                                              "width": chip.vram_width_bits, "mem_clk_max": chip.mem_clk_max_mhz}),
            "caches/0/properties": _props({"processor_id_low": p["simd_id_base"], "level": 1, "size": 32,
                                           "cache_line_size": 128, "cache_lines_per_tag": 1, "association": 64,
                                           "latency": 1, "type": 5, "sibling_map": "1,0,0,0"})} | _links(io, p2p)


# The IP blocks of amdgpu's sysfs (amdgpu_discovery.c: ip_discovery/die/#die/#hw_id/#instance/) are those of the
# discovery table the device itself holds at the top of its VRAM (simgpu.hw.discovery, what an AM driver reads):
# GC 11.0.0 is gfx1100; SDMA 6.0.0 per engine (HW_IP_INFO's DMA 6.0); NBIF 4.3.0 holds the HDP flush registers;
# gfx1201 lists Navi 48's table (GC 12.0.1, SDMA 7.0.1, NBIF 6.3.1, ...). A chip without a modelled table (gfx942)
# lists only the blocks a KFD client reads (GC, SDMA, NBIF) with its own versions and Navi 31's base addresses.
DRM_CLASS = "/sys/class/drm"
_KFD_BLOCKS = ("GC", "SDMA0", "SDMA1", "NBIF")


def ip_blocks(chip: Chip, sdma_engines: int) -> list[discovery.IpBlock]:
    """The IP blocks the ip_discovery sysfs of a `chip` lists."""
    table = discovery.PART_IP_BLOCKS.get(chip.arch, discovery.NAVI31_IP_BLOCKS)
    blocks = [b for b in table if not b.name.startswith("SDMA") or int(b.name[4:]) < sdma_engines]
    if chip.arch in discovery.PART_IP_BLOCKS:
        return blocks
    versions = {"GC": chip.gc_version, "SDMA0": chip.sdma_version, "SDMA1": chip.sdma_version,
                "NBIF": chip.nbif_version}
    return [discovery.IpBlock(b.name, b.hw_id, b.instance, versions[b.name], b.bases) for b in blocks
            if b.name in _KFD_BLOCKS]


def ip_discovery(sdma_engines: int, chip: Chip | None = None) -> dict[str, str]:
    """The files of device/ip_discovery/ (relative to it) for one GPU; each hw_id directory also appears under
    the block's name, as amdgpu links it."""
    blocks = ip_blocks(chip or get_chip(), sdma_engines)
    files = {"die/0/num_ips": f"{len(blocks)}\n"}
    for b in blocks:
        (major, minor, rev), inst = b.version, b.instance
        attrs = {"hw_id": b.hw_id, "num_instance": inst, "major": major, "minor": minor, "revision": rev,
                 "harvest": "0x0", "num_base_addresses": len(b.bases),
                 "base_addr": "".join(f"0x{a:08X}\n" for a in b.bases).rstrip("\n")}
        for d in (str(b.hw_id), b.name):
            files.update({f"die/0/{d}/{inst}/{k}": f"{v}\n" for k, v in attrs.items()})
    return files


def build(gpus: list[tuple[int, dict]], atomics: list[bool] | None = None) -> dict[str, str]:
    """Every sysfs file: absolute path -> contents, for (gpu_id, properties) of each GPU: the KFD topology and,
    per render node, /sys/class/drm/renderD<minor>/device/ip_discovery. `atomics[i]`: GPU i's PCIe function
    completes AtomicOps (default: none does, as simgpu.soc's config space says)."""
    files = {f"{TOPOLOGY}/generation_id": "1\n",
             f"{TOPOLOGY}/system_properties": _props({"platform_oem": 0, "platform_id": 0, "platform_rev": 0})}
    chips = [chip_of(p) for _, p in gpus]
    io, p2p = iolinks.build(chips, atomics or [False] * len(gpus))
    hives = xgmi.hives(chips)
    nodes = [cpu_node(io[0], p2p[0])] + [
        gpu_node(i, gid, p, io[i + 1], p2p[i + 1], getattr(xgmi.hive_of(hives, i), "hive_id", 0))
        for i, (gid, p) in enumerate(gpus)]
    for n, node in enumerate(nodes):
        for rel, text in node.items():
            files[f"{TOPOLOGY}/nodes/{n}/{rel}"] = text
    for i, (_, p) in enumerate(gpus):
        device = f"{DRM_CLASS}/renderD{128 + i}/device"
        files[f"{DRM_CLASS}/renderD{128 + i}/dev"] = f"226:{128 + i}\n"
        files[f"{device}/vendor"], files[f"{device}/device"] = "0x1002\n", f"0x{chip_of(p).device_id:04x}\n"
        for rel, text in ip_discovery(p["sdma_engines"], chip_of(p)).items():
            files[f"{device}/ip_discovery/{rel}"] = text
    return files


def listing(files: dict[str, str], extra: list[str]) -> dict[str, set[str]]:
    """Directory -> entries for every directory above the given files (and extra paths)."""
    dirs: dict[str, set[str]] = {}
    for path in list(files) + extra:
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i]) or "/"
            dirs.setdefault(parent, set()).add(parts[i])
    return dirs


def gpu_shape(gpu) -> dict:
    """What the topology (and the render node's AMDGPU_INFO) reports of a simgpu.GPU: its properties()
    plus the core clock its virtual clock runs at and its chip."""
    return gpu.properties() | {"core_mhz": gpu.clock.core_mhz, "chip": gpu.chip}
