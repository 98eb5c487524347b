"""Simulated GPUs of another architecture (issue 31): `MockOS(arch=...)` / SIMGPU_ARCH make gfx1201 (RDNA4,
Navi 48) devices, alone or mixed with gfx1100s. What a client reads must be that chip's -- the KFD topology, the
render node's IP discovery and AMDGPU_INFO answers, the PCI identity -- and a code object must match the
device's processor. gfx1100 stays the default, unchanged."""

import dataclasses
import errno

import numpy as np
import pytest

from compiler.llvm import compile_ir
from mockgpu import MockOS
from mockgpu.driver import device_arches
from runtime import Device
from runtime.os import TOPOLOGY
from runtime.uapi import kfd
from simgpu.gpu import GPU
from simgpu.hw import discovery
from simgpu.hw.chips import CHIPS, get_chip
from simgpu.isa.codeobject import CodeObjectError
from simgpu.soc import MMIOError
from tests import DATA
from tests.mockgpu.test_mockgpu_sysfs import GC, NBIF, SDMA0, SDMA1, _ip_versions, _props

CORPUS = {"gfx1100": DATA / "opencl" / "corpus.so", "gfx1201": DATA / "opencl" / "corpus_gfx1201.so",
          "gfx942": DATA / "opencl" / "corpus_gfx942.so"}


def saxpy_code_object(arch: str) -> bytes:
    """A code object of `arch` with corpus.cl's saxpy: clang-19's OpenCL corpus, or for gfx950 (which clang-19 cannot
    build) the same kernel in LLVM IR compiled by llvmlite's LLVM 22."""
    if arch in CORPUS:
        return CORPUS[arch].read_bytes()
    return compile_ir((DATA / "kernels" / "saxpy.ll").read_text(), mcpu=arch)


def _node(m: MockOS, node: int = 1) -> dict:
    return _props(m.read_text(f"{TOPOLOGY}/nodes/{node}/properties"))


def test_a_gfx1201_topology_is_navi48s():
    p = _node(MockOS(vram_size=1 << 28, arch="gfx1201"))
    assert p["gfx_target_version"] == 120001 and p["device_id"] == 0x7550
    # 4 SEs x 2 SAs x 8 CUs (4 WGPs) = 64 CUs of 2 SIMDs; wave32, 64 KiB LDS per workgroup
    assert (p["simd_count"], p["array_count"], p["simd_arrays_per_engine"], p["cu_per_simd_array"]) == (128, 8, 2, 8)
    assert (p["simd_per_cu"], p["wave_front_size"], p["lds_size_in_kb"], p["max_waves_per_simd"]) == (2, 32, 64, 16)
    assert p["num_sdma_engines"] == 2 and p["fw_version"] == get_chip("gfx1201").mec_fw_version
    # what tinygrad derives from it: 4 shader engines, 64 CUs
    assert p["array_count"] // p["simd_arrays_per_engine"] == 4 and p["simd_count"] // p["simd_per_cu"] == 64


def test_gfx1100_stays_the_default_and_unchanged():
    p = _node(MockOS(vram_size=1 << 28))
    assert p["gfx_target_version"] == 110000 and p["device_id"] == 0x744C
    assert (p["simd_count"], p["array_count"], p["cu_per_simd_array"], p["lds_size_in_kb"]) == (192, 12, 8, 64)
    assert MockOS(vram_size=1 << 28).gpus[0].arch == "gfx1100" == GPU(1 << 24).arch


def test_a_gfx1201_render_node_lists_its_ip_versions_and_answers_amdgpu_info():
    m = MockOS(vram_size=1 << 28, arch="gfx1201")
    p = _node(m)
    ips = _ip_versions(m, p["drm_render_minor"])
    # Navi 48's discovery table (the one its PCI function holds): the KFD-visible blocks among the others
    assert {k: v for k, v in ips.items() if k in (GC, SDMA0, SDMA1, NBIF)} == \
        {GC: [(12, 0, 1)], SDMA0: [(7, 0, 1)], SDMA1: [(7, 0, 1)], NBIF: [(6, 3, 1)]}
    assert ips[discovery.MP0_HWID] == [(14, 0, 3)] and ips[discovery.MMHUB_HWID] == [(4, 1, 0)]
    with Device("AMD:0", os=m) as dev:
        d = dev.dev_info
        assert (d.device_id, d.family, d.num_shader_engines, d.num_shader_arrays_per_engine) == (0x7550, 152, 4, 2)
        assert (d.cu_active_number, d.num_cu_per_sh, d.vram_bit_width) == (64, 8, 256)
        assert (dev.hw_ip["compute"].hw_ip_version_major, dev.hw_ip["compute"].hw_ip_version_minor) == (12, 0)
        assert (dev.hw_ip["dma"].hw_ip_version_major, dev.hw_ip["dma"].hw_ip_version_minor) == (7, 0)
        assert dev.firmware["mec"] == get_chip("gfx1201").mec_fw_version
        assert bin(d.cu_bitmap[0]).count("1") == 8  # SE 0, SA 0: 8 CUs


def test_mixed_architectures_one_per_device():
    m = MockOS(devices=3, vram_size=1 << 28, arch="gfx1100,gfx1201,gfx1100")
    assert [g.arch for g in m.gpus] == ["gfx1100", "gfx1201", "gfx1100"]
    assert [_node(m, n)["gfx_target_version"] for n in (1, 2, 3)] == [110000, 120001, 110000]
    assert [Device(f"AMD:{i}", os=m).arch for i in range(3)] == ["gfx1100", "gfx1201", "gfx1100"]
    assert device_arches(2, ["gfx1201", "gfx1100"]) == ["gfx1201", "gfx1100"]


def test_architecture_errors_name_what_is_known():
    with pytest.raises(ValueError, match="gfx1100, gfx1201, gfx942, gfx950"):
        MockOS(arch="gfx1250")
    with pytest.raises(ValueError, match="2 architectures .* for 3 devices"):
        device_arches(3, "gfx1100,gfx1201")


def test_simgpu_arch_picks_the_devices_architecture(monkeypatch):
    monkeypatch.setenv("SIMGPU_ARCH", "gfx1201")
    assert MockOS(vram_size=1 << 28).gpus[0].arch == "gfx1201"
    monkeypatch.setenv("SIMGPU_ARCH", "gfx1201,gfx1100")
    assert [g.arch for g in MockOS(devices=2, vram_size=1 << 28).gpus] == ["gfx1201", "gfx1100"]
    monkeypatch.setenv("SIMGPU_ARCH", "rdna4")
    with pytest.raises(ValueError, match="SIMGPU_ARCH"):
        MockOS(vram_size=1 << 28)


def test_device_arch_requires_that_architecture():
    m = MockOS(devices=2, vram_size=1 << 28, arch="gfx1100,gfx1201")
    with Device("AMD:1", os=m, arch="gfx1201") as dev:
        assert dev.arch == "gfx1201"
    with pytest.raises(RuntimeError, match="AMD:0 is a gfx1100, not a gfx1201"):
        Device("AMD:0", os=m, arch="gfx1201")
    with Device("AMD:0", os=m) as dev:  # the refused Device released what it opened
        assert dev.arch == "gfx1100"


@pytest.mark.parametrize("arch", sorted(CHIPS))
def test_a_code_object_loads_on_its_processor_only(arch):
    other = next(a for a in CHIPS if a != arch)
    m = MockOS(devices=2, vram_size=1 << 28, arch=[arch, other])
    with Device("AMD:0", os=m) as dev:
        assert "saxpy" in dev.load(saxpy_code_object(arch)).kernels
        with pytest.raises(CodeObjectError, match=f"built for {other}.*is a {arch}: compile it with -mcpu={arch}"):
            dev.load(saxpy_code_object(other))


def test_gfx1201_runs_its_kernel_and_the_gfx1100_next_to_it_runs_its_own():
    m = MockOS(devices=2, vram_size=1 << 28, arch="gfx1201,gfx1100")
    for i, arch in enumerate(("gfx1201", "gfx1100")):
        with Device(f"AMD:{i}", os=m, queue="aql") as dev:
            k = dev.load(CORPUS[arch].read_bytes())["saxpy"]
            x, y = np.arange(256, dtype=np.float32), np.ones(256, np.float32)
            bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
            k(by, bx, 2.0, 256, grid=(1,), block=(256,))
            assert np.array_equal(by.copyout(np.empty_like(y)), 2 * x + 1)
    assert m.gpus[0].engine.counters.per_opcode["s_wait_kmcnt"] > 0  # gfx1201 code ran on the gfx1201
    assert "s_wait_kmcnt" not in m.gpus[1].engine.counters.per_opcode


def test_a_gfx950_pci_function_answers_from_mi350xs_table():
    m = MockOS(vram_size=1 << 28, arch="gfx950")
    soc = m.socs[0]
    assert (soc.pci.config[2] | soc.pci.config[3] << 8) == 0x75A0
    assert soc.mmio_read(0xDE3 * 4) == 256  # RCC_CONFIG_MEMSIZE: VRAM in MiB, at the fixed dword
    gc = {b.version for b in soc.part.blocks if b.name == "GC"}
    assert gc == {(9, 5, 0)} and soc.regs.instances("CP_HQD_ACTIVE") == range(8)


def test_a_chip_whose_register_side_is_not_modelled_refuses_register_access(monkeypatch):
    m = MockOS(vram_size=1 << 28, arch="gfx950")
    soc = m.socs[0]
    monkeypatch.setattr(soc.gpu, "chip", dataclasses.replace(soc.gpu.chip, am=False))
    with pytest.raises(MMIOError, match="gfx950 .* not modelled"):
        soc.mmio_read(0)
    with pytest.raises(MMIOError, match="not modelled"):
        soc.doorbell_write(0, 1)


def test_a_gfx942_pci_function_answers_from_mi300xs_banked_register_map():
    m = MockOS(vram_size=1 << 28, arch="gfx942")
    soc = m.socs[0]
    assert (soc.pci.config[2] | soc.pci.config[3] << 8) == 0x74A1
    assert soc.mmio_read(0xDE3 * 4) == 256  # RCC_CONFIG_MEMSIZE: VRAM in MiB, at the fixed dword
    # XCC 0's and XCC 1's GRBM_GFX_CNTL are two registers: each XCC selects its own HQD bank
    x0, x1 = soc.regs.addr("GRBM_GFX_CNTL"), soc.regs.addr("GRBM_GFX_CNTL", 1)
    soc.mmio_write(x0 * 4, 0x4)
    soc.regs.write(x1, 0x5)  # (beyond the BAR: a driver goes through RSMU_INDEX/DATA)
    assert soc.mmio_read(x0 * 4) == 0x4 and soc.regs.read(x1) == 0x5


def test_a_gfx1201_pci_function_answers_from_navi48s_register_map():
    m = MockOS(vram_size=1 << 28, arch="gfx1201")
    soc = m.socs[0]
    assert (soc.pci.config[2] | soc.pci.config[3] << 8) == 0x7550
    assert soc.mmio_read(0xDE3 * 4) == 256  # RCC_CONFIG_MEMSIZE: VRAM in MiB, at the fixed dword
    assert soc.regs.map.at(soc.regs.addr("SDMA0_F32_CNTL")).name == "SDMA0_MCU_CNTL"


def test_xnack_refusal_names_the_architectures():
    m = MockOS(devices=2, vram_size=1 << 28, arch="gfx1100,gfx1201")
    fd = m.open("/dev/kfd")
    with pytest.raises(OSError) as e:
        m.ioctl(fd, kfd.AMDKFD_IOC_SET_XNACK_MODE, kfd.kfd_ioctl_set_xnack_mode_args(xnack_enabled=1).pack())
    assert e.value.errno == errno.EPERM and "gfx1100, gfx1201 does not support XNACK" in str(e.value)


def test_a_gfx950_topology_is_mi350xs():
    """amdkfd's view of an MI350X (GC 9.5.0 -> 90500; simgpu.hw.chips says where each value comes from)."""
    m = MockOS(vram_size=1 << 28, arch="gfx950")
    p = _node(m)
    assert p["gfx_target_version"] == 90500 and p["device_id"] == 0x75A0 and p["num_xcc"] == 8
    # 8 XCDs x 4 SEs x 1 SA x 8 CUs = 256 CUs of 4 SIMDs; wave64, 160 KiB of LDS, 8 waves per SIMD
    assert (p["simd_count"], p["array_count"], p["simd_arrays_per_engine"], p["cu_per_simd_array"]) == (1024, 32, 1, 8)
    assert (p["simd_per_cu"], p["wave_front_size"], p["lds_size_in_kb"], p["max_waves_per_simd"]) == (4, 64, 160, 8)
    ips = _ip_versions(m, p["drm_render_minor"])
    assert ips == {GC: [(9, 5, 0)], SDMA0: [(4, 4, 4)], SDMA1: [(4, 4, 4)], NBIF: [(7, 9, 0)]}
    with Device("AMD:0", os=m) as dev:
        assert dev.arch == "gfx950" and dev.dev_info.family == 141
        assert (dev.hw_ip["compute"].hw_ip_version_major, dev.hw_ip["compute"].hw_ip_version_minor) == (9, 5)


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_gfx950_runs_llvm_22s_saxpy_beside_a_gfx942(queue):
    """A gfx950 and a gfx942 in one machine, each running its own compiler's saxpy over `queue`."""
    m = MockOS(devices=2, vram_size=1 << 28, arch="gfx950,gfx942")
    for i, arch in enumerate(("gfx950", "gfx942")):
        with Device(f"AMD:{i}", os=m, queue=queue) as dev:
            k = dev.load(saxpy_code_object(arch))["saxpy"]
            x, y = np.arange(300, dtype=np.float32), np.ones(300, np.float32)
            bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
            k(by, bx, 2.0, 300, grid=(2,), block=(256,))
            assert np.array_equal(by.copyout(np.empty_like(y)), 2 * x + 1)
    assert m.gpus[0].engine.counters.dispatches == m.gpus[1].engine.counters.dispatches == 1


def test_a_gfx950_workgroup_may_use_160_kib_of_lds():
    """CDNA4's LDS: one workgroup allocates more than gfx942's 64 KiB; beyond 160 KiB the launch is refused."""
    m = MockOS(vram_size=1 << 28, arch="gfx950")
    with Device("AMD:0", os=m) as dev:
        k = dev.load(saxpy_code_object("gfx950"))["saxpy"]
        y = np.ones(256, np.float32)
        by, bx = dev.alloc(y.nbytes).copyin(y), dev.alloc(y.nbytes).copyin(y)
        k(by, bx, 1.0, 256, grid=(1,), block=(256,), shared=160 << 10)
        assert np.array_equal(by.copyout(np.empty_like(y)), y + 1)
        with pytest.raises(Exception, match="LDS|lds|shared"):
            k(by, bx, 1.0, 256, grid=(1,), block=(256,), shared=(160 << 10) + 512)


_BIG_LDS = """target triple = "amdgcn-amd-amdhsa"
@tile = internal addrspace(3) global [36864 x float] poison  ; 144 KiB: more than any gfx942 workgroup has
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
define amdgpu_kernel void @spread(ptr addrspace(1) %y) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %far = mul i32 %t, 144
  %p = getelementptr float, ptr addrspace(3) @tile, i32 %far
  %v = uitofp i32 %t to float
  store float %v, ptr addrspace(3) %p
  call void @llvm.amdgcn.s.barrier()
  %o = sub i32 255, %t
  %faro = mul i32 %o, 144
  %q = getelementptr float, ptr addrspace(3) @tile, i32 %faro
  %w = load float, ptr addrspace(3) %q
  %py = getelementptr float, ptr addrspace(1) %y, i32 %t
  store float %w, ptr addrspace(1) %py
  ret void
}
"""


def test_a_gfx950_kernel_with_144_kib_of_static_lds_loads_and_runs():
    """LLVM 22 lets a gfx950 kernel allocate past 64 KiB of LDS; its descriptor loads and the workgroup sees it all."""
    co = compile_ir(_BIG_LDS, mcpu="gfx950")
    m = MockOS(vram_size=1 << 28, arch="gfx950")
    with Device("AMD:0", os=m) as dev:
        k = dev.load(co)["spread"]
        assert k.descriptor.group_segment_fixed_size == 144 << 10
        out = dev.alloc(1024)
        k(out, grid=(1,), block=(256,))
        assert np.array_equal(out.copyout(np.empty(256, np.float32)), np.arange(255, -1, -1, dtype=np.float32))
