"""The GPU as a PCI function through the OS seam (mockgpu.pci): sysfs identity and resources, configuration space,
`enable`, the BARs -- VRAM (BAR0, holding the IP discovery table the KFD side's ip_discovery sysfs describes),
doorbells (BAR2) and registers (BAR5) -- and tinygrad's AM driver booting through them as it opens a real device."""

import errno

import numpy as np
import pytest

from mockgpu import MockOS
from runtime.os import MAP_SHARED, PROT_READ, PROT_WRITE
from simgpu.hw import discovery
from simgpu.hw import pci as hwpci
from tests.support.am_tinygrad import boot_through

DEV = "/sys/bus/pci/devices/0000:03:00.0"
RW = PROT_READ | PROT_WRITE


@pytest.fixture(scope="module")
def m():
    return MockOS(devices=2, vram_size=1 << 30)


def test_sysfs_names_a_navi31_vga_function_per_gpu(m):
    assert sorted(m.listdir("/sys/bus/pci/devices")) == ["0000:03:00.0", "0000:04:00.0"]
    assert m.read_text(f"{DEV}/vendor") == "0x1002\n"
    assert m.read_text(f"{DEV}/device") == "0x744c\n"
    assert m.read_text(f"{DEV}/class") == "0x030000\n"
    assert {"config", "enable", "resource", "resource0", "resource2", "resource5"} <= set(m.listdir(DEV))


def test_resource_lines_give_each_bar_its_size_and_flags(m):
    lines = [tuple(int(x, 16) for x in line.split()) for line in m.read_text(f"{DEV}/resource").splitlines()]
    (s0, e0, f0), (s2, e2, f2), (s5, e5, f5) = lines[0], lines[2], lines[5]
    assert e0 - s0 + 1 == 1 << 30 and f0 & hwpci.IORESOURCE_MEM and f0 & hwpci.IORESOURCE_PREFETCH
    assert e2 - s2 + 1 == 2 << 20 and f2 & hwpci.IORESOURCE_MEM_64
    assert e5 - s5 + 1 == 1 << 20 and not f5 & hwpci.IORESOURCE_PREFETCH


def test_config_space_reads_ids_and_sizes_a_bar_the_way_pci_enumeration_does():
    m = MockOS(devices=1, vram_size=1 << 30)
    fd = m.open(f"{DEV}/config")
    assert int.from_bytes(m.pread(fd, 4, 0), "little") == 0x744C_1002
    bar5 = hwpci.BASE_ADDRESS_0 + 4 * 5
    saved = m.pread(fd, 4, bar5)
    m.pwrite(fd, b"\xff\xff\xff\xff", bar5)
    assert int.from_bytes(m.pread(fd, 4, bar5), "little") & ~0xF == (~((1 << 20) - 1)) & 0xFFFFFFFF
    m.pwrite(fd, saved, bar5)
    assert m.pread(fd, 4, bar5) == saved
    m.pwrite(fd, b"\x00\x00", hwpci.VENDOR_ID)  # read-only
    assert int.from_bytes(m.pread(fd, 2, 0), "little") == 0x1002


def test_enable_turns_memory_decoding_on():
    m = MockOS(devices=1, vram_size=1 << 30)
    fd = m.open(f"{DEV}/enable")
    m.pwrite(fd, b"1", 0)
    assert m.pread(fd, 2, 0) == b"1\n"
    cfg = m.open(f"{DEV}/config")
    assert int.from_bytes(m.pread(cfg, 2, hwpci.COMMAND), "little") & hwpci.COMMAND_MEMORY
    with pytest.raises(OSError) as e:
        m.pwrite(fd, b"x", 0)
    assert e.value.errno == errno.EINVAL


def test_bar0_is_vram_with_the_discovery_table_the_kfd_sysfs_describes(m):
    fd = m.open(f"{DEV}/resource0")
    bar = m.mmap(fd, 1 << 30, RW, MAP_SHARED, 0)
    table = discovery.parse_table(bytes(bar.view[(1 << 30) - (64 << 10):(1 << 30) - (54 << 10)]))
    sysfs = "/sys/class/drm/renderD128/device/ip_discovery/die/0"
    for block in table.blocks:
        if block.name.startswith("SDMA") and not m.exists(f"{sysfs}/{block.hw_id}"):
            continue
        d = f"{sysfs}/{block.hw_id}/{block.instance}"
        version = tuple(int(m.read_text(f"{d}/{k}")) for k in ("major", "minor", "revision"))
        bases = tuple(int(x, 16) for x in m.read_text(f"{d}/base_addr").split())
        assert (version, bases) == (block.version, block.bases), block.name
    bar.view[0x1000:0x1004] = b"vram"
    assert bytes(m.simulator("0000:03:00.0").phys.vram[0x1000:0x1004]) == b"vram"  # the same bytes the GPU sees


def test_bar5_registers_through_mmio_read_and_write(m):
    fd = m.open(f"{DEV}/resource5")
    bar = m.mmap(fd, 1 << 20, RW, MAP_SHARED, 0)
    assert m.mmio_read(bar, 0xDE3 * 4) == 1024  # RCC_CONFIG_MEMSIZE, MiB
    with pytest.raises(OSError) as e:
        m.mmio_read(bar, 0x3219 * 4)  # no register there: the device faults, naming the block
    assert e.value.errno == errno.EIO and "GC segment 0" in str(e.value)
    with pytest.raises(OSError) as e:
        m.mmap(fd, 2 << 20, RW, MAP_SHARED, 0)
    assert e.value.errno == errno.EINVAL


def test_firmware_files_are_served_where_amdgpu_loads_them(m):
    assert "gc_11_0_0_mec.bin" in m.listdir("/lib/firmware/amdgpu")
    fd = m.open("/lib/firmware/amdgpu/psp_13_0_0_sos.bin")
    head = m.pread(fd, 4, 0)
    assert int.from_bytes(head, "little") > 256  # common_firmware_header.size_bytes


def test_tinygrad_boots_the_device_through_the_seam_and_runs_an_sdma_copy():
    m = MockOS(devices=1, vram_size=1 << 30)
    adev = boot_through(m)
    soc = m.socs[0]
    assert soc.psp.autoloaded and soc.gchub.enabled[0] and not soc.bus_errors
    vm = adev.mm.valloc(0x3000, contiguous=True)
    pa, va = vm.paddrs[0][0], vm.va_addr
    from simgpu.hw import sdma
    cmds = sdma.const_fill(va + 0x2000, 0x5A5A5A5A, 64)
    vram = soc.gpu.phys.vram
    vram[pa:pa + 4 * len(cmds)] = np.array(cmds, "<u4").view(np.uint8)
    doorbell = adev.sdma.setup_ring(va, 0x1000, va + 0x1000, va + 0x1008, idx=0)
    vram[pa + 0x1008:pa + 0x1010] = np.array([4 * len(cmds)], "<u8").view(np.uint8)
    adev.doorbell64[doorbell] = 4 * len(cmds)
    assert (vram[pa + 0x2000:pa + 0x2040].view("<u4") == 0x5A5A5A5A).all()
