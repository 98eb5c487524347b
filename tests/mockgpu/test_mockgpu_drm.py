"""The render node's DRM_IOCTL_AMDGPU_INFO on MockOS: the runtime's queries answer with Navi 31 values
consistent with the KFD topology; bad queries, arguments and return pointers give amdgpu's errnos."""

import ctypes
import errno

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockgpu import MockOS
from runtime.os import MAP_ANONYMOUS, MAP_PRIVATE, TOPOLOGY
from runtime.uapi import amdgpu_drm as D


def _props(text: str) -> dict:
    return {k: v for k, _, v in (line.partition(" ") for line in text.splitlines())}


@pytest.fixture(scope="module")
def drv():
    m = MockOS(devices=2, vram_size=1 << 30)
    host = m.mmap(-1, 1 << 16, 3, MAP_PRIVATE | MAP_ANONYMOUS)
    return m, m.open("/dev/dri/renderD128"), m.open("/dev/dri/renderD129"), host


def query(m, fd, host, q, result, size=None, ptr=None, **arg):
    """Issue AMDGPU_INFO; the answer parsed as `result` from the host page."""
    size = ctypes.sizeof(result) if size is None else size
    host.view[:1024] = bytes(1024)
    a = D.drm_amdgpu_info(return_pointer=host.addr if ptr is None else ptr, return_size=size, query=q)
    for k, v in arg.items():
        setattr(a, k, v)
    m.ioctl(fd, D.DRM_IOCTL_AMDGPU_INFO, a.pack())
    return result.unpack(host.view)


def errno_of(m, fd, host, q, result=D.drm_amdgpu_info_firmware, **kw) -> int:
    with pytest.raises(OSError) as e:
        query(m, fd, host, q, result, **kw)
    return e.value.errno


def test_dev_info_matches_the_topology(drv):
    m, fd, fd1, host = drv
    p = _props(m.read_text(f"{TOPOLOGY}/nodes/1/properties"))
    bank = _props(m.read_text(f"{TOPOLOGY}/nodes/1/mem_banks/0/properties"))
    d = query(m, fd, host, D.AMDGPU_INFO_DEV_INFO, D.drm_amdgpu_info_device)
    assert d.family == D.AMDGPU_FAMILY_GC_11_0_0 and d.device_id == int(p["device_id"]) == 0x744C
    assert d.num_shader_engines * d.num_shader_arrays_per_engine == int(p["array_count"]) == 12
    assert d.num_shader_arrays_per_engine == int(p["simd_arrays_per_engine"])
    assert d.cu_active_number == int(p["simd_count"]) // int(p["simd_per_cu"]) == 96
    assert d.num_cu_per_sh == int(p["cu_per_simd_array"]) == 8
    assert sum(bin(x).count("1") for x in d.cu_bitmap) == 96
    assert d.wave_front_size == int(p["wave_front_size"]) == 32
    assert d.max_engine_clock == int(p["max_engine_clk_fcompute"]) * 1000  # KHz
    assert d.max_memory_clock == int(bank["mem_clk_max"]) * 1000 and d.vram_bit_width == int(bank["width"])
    assert d.gpu_counter_freq == 100_000  # KHz: the 100 MHz timestamp counter
    assert d.tcp_cache_size == int(_props(m.read_text(f"{TOPOLOGY}/nodes/1/caches/0/properties"))["size"])
    assert d.virtual_address_offset < d.virtual_address_max
    assert query(m, fd1, host, D.AMDGPU_INFO_DEV_INFO, D.drm_amdgpu_info_device).device_id == 0x744C


def test_dev_info_is_truncated_to_return_size(drv):
    m, fd, _, host = drv
    host.view[:1024] = b"\xAA" * 1024
    a = D.drm_amdgpu_info(return_pointer=host.addr, return_size=12, query=D.AMDGPU_INFO_DEV_INFO)
    m.ioctl(fd, D.DRM_IOCTL_AMDGPU_INFO, a.pack())
    assert bytes(host.view[12:16]) == b"\xAA" * 4  # an older, shorter struct: nothing past return_size
    assert int.from_bytes(host.view[:4], "little") == 0x744C


def test_memory_queries_follow_allocations(drv):
    m, fd, _, host = drv
    vg = query(m, fd, host, D.AMDGPU_INFO_VRAM_GTT, D.drm_amdgpu_info_vram_gtt)
    mem = query(m, fd, host, D.AMDGPU_INFO_MEMORY, D.drm_amdgpu_memory_info)
    size = int(_props(m.read_text(f"{TOPOLOGY}/nodes/1/mem_banks/0/properties"))["size_in_bytes"])
    assert mem.vram.total_heap_size == size and 0 < vg.vram_size <= size
    assert mem.vram.usable_heap_size == vg.vram_size == vg.vram_cpu_accessible_size
    assert mem.vram.max_allocation == vg.vram_size * 3 // 4 and mem.gtt.total_heap_size == vg.gtt_size > 0
    assert mem.vram.heap_usage == 0


def test_firmware_versions(drv):
    m, fd, _, host = drv
    p = _props(m.read_text(f"{TOPOLOGY}/nodes/1/properties"))

    def fw(t, index=0):
        return query(m, fd, host, D.AMDGPU_INFO_FW_VERSION, D.drm_amdgpu_info_firmware,
                     query_fw=D.drm_amdgpu_query_fw(fw_type=t, index=index))

    assert fw(D.AMDGPU_INFO_FW_GFX_MEC).ver == int(p["fw_version"])
    assert fw(D.AMDGPU_INFO_FW_SDMA, 1).ver == int(p["sdma_fw_version"])
    assert fw(D.AMDGPU_INFO_FW_GFX_ME).ver and fw(D.AMDGPU_INFO_FW_GFX_RLC).ver and fw(D.AMDGPU_INFO_FW_GFX_PFP).ver
    for t, index in ((0x03, 0), (0x7F, 0), (D.AMDGPU_INFO_FW_SDMA, 2), (D.AMDGPU_INFO_FW_GFX_ME, 1)):
        assert errno_of(m, fd, host, D.AMDGPU_INFO_FW_VERSION,
                        query_fw=D.drm_amdgpu_query_fw(fw_type=t, index=index)) == errno.EINVAL


def test_hw_ip_info(drv):
    m, fd, _, host = drv
    p = _props(m.read_text(f"{TOPOLOGY}/nodes/1/properties"))

    def ip(t, inst=0):
        return query(m, fd, host, D.AMDGPU_INFO_HW_IP_INFO, D.drm_amdgpu_info_hw_ip, query_hw_ip=(t, inst))

    gfx, comp, dma = ip(D.AMDGPU_HW_IP_GFX), ip(D.AMDGPU_HW_IP_COMPUTE), ip(D.AMDGPU_HW_IP_DMA)
    assert (gfx.hw_ip_version_major, comp.hw_ip_version_major, dma.hw_ip_version_major) == (11, 11, 6)
    assert gfx.available_rings and comp.available_rings
    # amdgpu counts every SDMA instance; amdkfd splits them into PCIe and XGMI engines (gfx942: 2 + 14)
    assert bin(dma.available_rings).count("1") == int(p["num_sdma_engines"]) + int(p["num_sdma_xgmi_engines"])
    assert (comp.ib_start_alignment, dma.ib_start_alignment, dma.ib_size_alignment) == (32, 256, 4)
    assert ip(6).available_rings == 0  # VCN: no multimedia engines in the simulator
    for t, inst in ((D.AMDGPU_HW_IP_NUM, 0), (D.AMDGPU_HW_IP_GFX, 1)):
        assert errno_of(m, fd, host, D.AMDGPU_INFO_HW_IP_INFO, query_hw_ip=(t, inst)) == errno.EINVAL
    count = query(m, fd, host, D.AMDGPU_INFO_HW_IP_COUNT, D.drm_amdgpu_info_firmware, size=4,
                  query_hw_ip=(D.AMDGPU_HW_IP_DMA, 0))
    assert count.ver == 1  # one SDMA IP instance (a u32 answer)


def test_errnos(drv):
    m, fd, _, host = drv
    info = D.AMDGPU_INFO_DEV_INFO
    assert errno_of(m, fd, host, 0x7777) == errno.EINVAL  # unknown query
    assert errno_of(m, fd, host, info, size=0) == errno.EINVAL
    assert errno_of(m, fd, host, info, ptr=0) == errno.EINVAL
    assert errno_of(m, fd, host, info, ptr=0x1234) == errno.EFAULT  # not the process's memory
    assert errno_of(m, fd, host, info, D.drm_amdgpu_info_device, ptr=host.addr + (1 << 16) - 8) == errno.EFAULT
    kfd_fd = m.open("/dev/kfd")
    a = D.drm_amdgpu_info(return_pointer=host.addr, return_size=8, query=info)
    for f, req, err in ((kfd_fd, D.DRM_IOCTL_AMDGPU_INFO, errno.ENOTTY),  # a DRM request on /dev/kfd
                        (fd, 0xC0206440, errno.EINVAL),  # DRM_IOCTL_AMDGPU_GEM_CREATE: not emulated
                        (fd, 0x40204B05, errno.ENOTTY),  # not a DRM request
                        (9999, D.DRM_IOCTL_AMDGPU_INFO, errno.EBADF)):
        with pytest.raises(OSError) as e:
            m.ioctl(f, req, a.pack())
        assert e.value.errno == err, hex(req)
    with pytest.raises(OSError) as e:
        m.ioctl(fd, D.DRM_IOCTL_AMDGPU_INFO, bytearray(8))  # shorter than the struct
    assert e.value.errno == errno.EFAULT


_FUZZ = MockOS(devices=1, vram_size=1 << 28, user=False)  # random pointers must not reach our memory
_FUZZ_FD = _FUZZ.open("/dev/dri/renderD128")
_FUZZ_HOST = _FUZZ.mmap(-1, 1 << 16, 3, MAP_PRIVATE | MAP_ANONYMOUS)


@settings(max_examples=300, deadline=None)
@given(q=st.one_of(st.sampled_from([0x00, 0x02, 0x03, 0x05, 0x0E, 0x14, 0x16, 0x19]), st.integers(0, 0xFFFFFFFF)),
       size=st.integers(0, 1 << 12), ptr=st.sampled_from([0, 8, _FUZZ_HOST.addr, _FUZZ_HOST.addr + 0xFF00]),
       arg=st.binary(min_size=16, max_size=16), req=st.sampled_from([D.DRM_IOCTL_AMDGPU_INFO, 0xC0106445]))
def test_fuzzed_info_only_raises_kernel_errnos(q, size, ptr, arg, req):
    a = D.drm_amdgpu_info(return_pointer=ptr, return_size=size, query=q)
    buf = a.pack()
    buf[16:32] = arg
    try:
        _FUZZ.ioctl(_FUZZ_FD, req, buf)
    except OSError as e:
        assert e.errno in (errno.EINVAL, errno.EFAULT), e
