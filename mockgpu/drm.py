"""The render node's DRM ioctls: DRM_IOCTL_AMDGPU_INFO with the queries a compute runtime makes, answered
for a simulated GPU with the numbers the KFD topology shows (mockgpu.topology; its chip's, simgpu.hw.chips).

Like amdgpu_info_ioctl: return_pointer and return_size must be nonzero (EINVAL), an unknown query or
argument is EINVAL, and the answer is copied to the user's return_pointer (mockgpu.usermem: the caller's
memory, as for every pointer argument of the kfd ioctls), truncated to return_size; an address the caller
does not own is EFAULT. Graphics-only fields of
DEV_INFO (render backends, NGG buffers, GS depths, shadow/CSA areas) stay 0: the simulator has no
graphics pipeline.
"""

from __future__ import annotations

import ctypes
import errno

from mockgpu import topology
from mockgpu.kfd import KfdProcess
from mockgpu.kfd_node import GPUVM_BASE, GPUVM_LIMIT, VRAM_BASE, Node
from mockgpu.memory import GTT_SIZE, PAGE, PT_POOL, KfdError
from runtime.uapi import amdgpu_drm as drm
from runtime.uapi import kfd
from simgpu.hw.chips import Chip

CHIP_REV, EXTERNAL_REV = 0, 1  # A0 silicon: external_rev = rev_id + 1
COMPUTE_RINGS = 4  # kernel compute queues amdgpu exposes to the DRM scheduler (amdgpu_num_kcq on gfx11)


def firmware(chip: Chip) -> dict[int, tuple[int, int, int | None]]:
    """fw_type -> (version, feature, number of engine indexes; None: one per SDMA engine). MEC and SDMA match the
    topology's fw_version and sdma_fw_version; the others are the chip's plausible values (simgpu.hw.chips), not
    taken from a real board."""
    fw = chip.firmware
    return {drm.AMDGPU_INFO_FW_GFX_ME: (*fw["me"], 1), drm.AMDGPU_INFO_FW_GFX_PFP: (*fw["pfp"], 1),
            drm.AMDGPU_INFO_FW_GFX_RLC: (*fw["rlc"], 1), drm.AMDGPU_INFO_FW_GFX_MEC: (chip.mec_fw_version, 38, 2),
            drm.AMDGPU_INFO_FW_MES: (*fw["mes"], 1), drm.AMDGPU_INFO_FW_SDMA: (chip.sdma_fw_version, 60, None)}


def caches(chip: Chip) -> dict[str, int]:
    """The chip's cache sizes (Navi 31: GL0 (TCP) 32 KiB per CU, as the topology's L1 cache, SQC 16/32 KiB, GL1
    256 KiB, L2 6 MiB, 96 MiB MALL) and one L2 channel per 16-bit slice of its GDDR6 bus."""
    return chip.caches | {"num_tcc_blocks": chip.vram_width_bits // 16}


def info(node: Node, process: KfdProcess, a) -> None:
    """DRM_IOCTL_AMDGPU_INFO on node's render node."""
    if not a.return_size or not a.return_pointer:
        raise KfdError(errno.EINVAL, "return_pointer and return_size must be nonzero")
    query = _QUERIES.get(a.query)
    if query is None:
        raise KfdError(errno.EINVAL, f"AMDGPU_INFO query {a.query:#x} is not implemented by mockgpu (docs/driver.md)")
    answer = bytes(query(node, process, a))
    process.user.write(a.return_pointer, answer[:a.return_size])  # copy_to_user: EFAULT for a bad pointer


def usable_vram(node: Node) -> int:
    """VRAM user space can allocate: all of it but the reserved bottom and the page-table pool."""
    return node.gpu.phys.vram_size - PT_POOL - VRAM_BASE


def dev_info(node: Node, process: KfdProcess, a=None):
    """AMDGPU_INFO_DEV_INFO: the device's identity and shape (matching the KFD topology)."""
    shape = topology.gpu_shape(node.gpu)
    chip = shape["chip"]
    se, cus = shape["shader_engines"], shape["compute_units"]
    sh = chip.arrays_per_engine
    cu_per_sh = cus // (se * sh)
    # amdgpu reports the shader engines of one XCC (gfx.config.max_shader_engines) and XCC 0's CU bitmap; the active
    # CU count is the device's (a multi-XCC chip: MI300X's 8 XCCs of 4 SEs)
    se //= chip.xcc
    d = drm.drm_amdgpu_info_device(
        device_id=chip.device_id, chip_rev=CHIP_REV, external_rev=EXTERNAL_REV, pci_rev=chip.pci_revision,
        family=chip.drm_family, num_shader_engines=se, num_shader_arrays_per_engine=sh,
        gpu_counter_freq=shape["timestamp_frequency"] // 1000, max_engine_clock=shape["core_mhz"] * 1000,
        max_memory_clock=chip.mem_clk_max_mhz * 1000, cu_active_number=cus, pcie_gen=4, pcie_num_lanes=16,
        virtual_address_offset=GPUVM_BASE, virtual_address_max=GPUVM_LIMIT + 1, virtual_address_alignment=PAGE,
        pte_fragment_size=512 * PAGE, gart_page_size=PAGE, vram_type=drm.AMDGPU_VRAM_TYPE_GDDR6,
        vram_bit_width=chip.vram_width_bits, wave_front_size=shape["wave_size"], num_shader_visible_vgprs=256,
        num_cu_per_sh=cu_per_sh, **caches(chip))
    for s in range(se):  # amdgpu folds 8 SEs x 2 SHs into [4][4]: row se % 4, column sh + (se / 4) * 2
        for h in range(sh):
            d.cu_bitmap[4 * (s % 4) + h + (s // 4) * 2] = (1 << cu_per_sh) - 1
    ctypes.memmove(d.cu_ao_bitmap, d.cu_bitmap, ctypes.sizeof(d.cu_bitmap))  # dGPU: every CU is always on
    return d


def _vram_gtt(node: Node, process: KfdProcess, a):
    usable = usable_vram(node)
    return drm.drm_amdgpu_info_vram_gtt(vram_size=usable, vram_cpu_accessible_size=usable, gtt_size=GTT_SIZE)


def _heap(total: int, usable: int, used: int):
    return drm.drm_amdgpu_heap_info(total_heap_size=total, usable_heap_size=usable, heap_usage=used,
                                    max_allocation=usable * 3 // 4)


def _memory(node: Node, process: KfdProcess, a):
    usable = usable_vram(node)
    vram = _heap(node.gpu.phys.vram_size, usable, usable - node.vram.available())
    gtt_used = sum(al.size for al in process.allocs.values() if al.kind in ("gtt", "userptr"))
    return drm.drm_amdgpu_memory_info(vram=vram, cpu_accessible_vram=vram, gtt=_heap(GTT_SIZE, GTT_SIZE, gtt_used))


def _fw_version(node: Node, process: KfdProcess, a):
    fw = a.query_fw
    table = firmware(node.gpu.chip)
    if fw.fw_type not in table:
        raise KfdError(errno.EINVAL, f"firmware type {fw.fw_type:#x} is not reported by mockgpu")
    ver, feature, indexes = table[fw.fw_type]
    limit = node.gpu.properties()["sdma_engines"] if indexes is None else indexes
    if fw.index >= limit:
        raise KfdError(errno.EINVAL, f"firmware type {fw.fw_type:#x} has no engine index {fw.index}")
    return drm.drm_amdgpu_info_firmware(ver=ver, feature=feature)


def _hw_ip(node: Node, a) -> tuple:
    ip = a.query_hw_ip
    if ip.ip_instance >= drm.AMDGPU_HW_IP_INSTANCE_MAX_COUNT or ip.type >= drm.AMDGPU_HW_IP_NUM:
        raise KfdError(errno.EINVAL, f"no hardware IP type {ip.type} instance {ip.ip_instance}")
    chip = node.gpu.chip
    sdma = node.gpu.properties()["sdma_engines"]
    gc, dma = chip.gc_version[:2], chip.sdma_version[:2]
    # type -> (major, minor, rings, ib start alignment, ib size alignment); no multimedia engines are emulated
    return {drm.AMDGPU_HW_IP_GFX: (*gc, 1, 32, 32), drm.AMDGPU_HW_IP_COMPUTE: (*gc, COMPUTE_RINGS, 32, 32),
            drm.AMDGPU_HW_IP_DMA: (*dma, sdma, 256, 4)}.get(ip.type, (0, 0, 0, 0, 0))


def _hw_ip_info(node: Node, process: KfdProcess, a):
    major, minor, rings, start, size = _hw_ip(node, a)
    return drm.drm_amdgpu_info_hw_ip(hw_ip_version_major=major, hw_ip_version_minor=minor,
                                     ib_start_alignment=start, ib_size_alignment=size,
                                     available_rings=(1 << rings) - 1,
                                     ip_discovery_version=(major << 16) | (minor << 8))


def _hw_ip_count(node: Node, process: KfdProcess, a):
    return ctypes.c_uint32(1 if _hw_ip(node, a)[2] else 0)


def _timestamp(node: Node, process: KfdProcess, a):
    return ctypes.c_uint64(node.gpu.clock.timestamp())


def _accel_working(node: Node, process: KfdProcess, a):
    return ctypes.c_uint32(1)


_QUERIES = {drm.AMDGPU_INFO_ACCEL_WORKING: _accel_working, drm.AMDGPU_INFO_HW_IP_INFO: _hw_ip_info,
            drm.AMDGPU_INFO_HW_IP_COUNT: _hw_ip_count, drm.AMDGPU_INFO_TIMESTAMP: _timestamp,
            drm.AMDGPU_INFO_FW_VERSION: _fw_version, drm.AMDGPU_INFO_VRAM_GTT: _vram_gtt,
            drm.AMDGPU_INFO_DEV_INFO: dev_info, drm.AMDGPU_INFO_MEMORY: _memory}


def ioctl(node: Node, process: KfdProcess, request: int, buf) -> None:
    """A DRM ioctl on a render node: only AMDGPU_INFO is emulated (EINVAL for the others, like an unknown
    driver command; ENOTTY for a request that is not DRM's)."""
    if kfd.ioc_type(request) != drm.DRM_IOCTL_BASE:
        raise KfdError(errno.ENOTTY, f"request {request:#x} is not a DRM ioctl")
    if kfd.ioc_nr(request) != drm.DRM_COMMAND_BASE + drm.DRM_AMDGPU_INFO:
        raise KfdError(errno.EINVAL, f"DRM ioctl {kfd.ioc_nr(request):#x} is not emulated (docs/driver.md)")
    usize = kfd.ioc_size(request)
    if len(buf) < usize:
        raise KfdError(errno.EFAULT, f"argument buffer of {len(buf)} bytes is shorter than {usize}")
    # drm_ioctl copies in the user's size and zero-extends to the kernel's; INFO is _IOW (nothing copied back).
    data = bytearray(max(ctypes.sizeof(drm.drm_amdgpu_info), usize))
    if request >> 30 & kfd.IOC_WRITE:
        data[:usize] = bytes(buf[:usize])
    info(node, process, drm.drm_amdgpu_info.from_buffer(data))
