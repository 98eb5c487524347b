"""tinygrad's AM driver (tinygrad.runtime.support.am, from PyPI, unmodified) in this process, over a simgpu.soc.SOC:
the outside client of the emulated PCI function.

AMDev needs a PCI device object (config space, BAR mappings). `SocPCI` gives it one: BAR0 is the GPU's VRAM (a real
pointer: tinygrad writes page tables and MQDs with plain stores), BAR2/BAR5 are objects whose item accesses are the
SOC's doorbell and register accesses (tinygrad indexes its BAR views, one access per register). Its firmware comes
from simgpu.hw.ucode's synthetic set in place of the linux-firmware download (the one substitution: the synthetic
files have valid headers but not the real files' hashes).
"""

from __future__ import annotations

import pytest

from simgpu.gpu import GPU
from simgpu.hw import ucode
from simgpu.soc import SOC

__test__ = False


class _RegisterBar:
    """A BAR2 / BAR5 view as tinygrad indexes it: element k of a 32-bit ('I') or 64-bit ('Q') view."""

    def __init__(self, soc: SOC, index: int, fmt: str):
        self.soc, self.index, self.size = soc, index, 8 if fmt == "Q" else 4
        self.nbytes = soc.pci.bars[index].size

    def __len__(self) -> int:
        return self.nbytes // self.size

    def __getitem__(self, k: int) -> int:
        if self.index == 5:
            return self.soc.mmio_read(k * 4)
        return self.soc.doorbell_read(k * self.size, self.size)

    def __setitem__(self, k: int, v: int) -> None:
        if self.index == 5:
            self.soc.mmio_write(k * 4, v)
        else:
            self.soc.doorbell_write(k * self.size, v, self.size)


class SocPCI:
    """What tinygrad's AMDev asks of a PCIDevice."""

    def __init__(self, soc: SOC):
        from tinygrad.runtime.support.hcq import MMIOInterface
        self.soc, self.pcibus, self._mmio = soc, "0000:03:00.0", MMIOInterface

    def read_config(self, offset: int, size: int) -> int:
        return int.from_bytes(self.soc.pci.read(offset, size), "little")

    def write_config_flush(self, offset: int, value: int, size: int) -> None:
        self.soc.pci.write(offset, value.to_bytes(size, "little"))

    def map_bar(self, bar: int, off: int = 0, addr: int = 0, size: int | None = None, fmt: str = "B"):
        if bar == 0:
            vram = self.soc.gpu.phys.vram
            return self._mmio(vram.ctypes.data, vram.size, fmt=fmt)
        return _RegisterBar(self.soc, bar, fmt)


def device(vram_size: int = 512 << 20) -> SOC:
    """A fresh simulated GPU's SOC."""
    return SOC(GPU(vram_size=vram_size))


def boot(soc: SOC | None = None, firmware: dict[str, bytes] | None = None):
    """(AMDev, SOC): tinygrad's AM driver booted on a simulated GPU (a fresh one unless given)."""
    amdev = pytest.importorskip("tinygrad.runtime.support.am.amdev")
    files = ucode.synthetic_set() if firmware is None else firmware
    soc = device() if soc is None else soc
    saved = amdev.fetch_fw
    amdev.fetch_fw = lambda path, name, sha256: files[name]
    try:
        return amdev.AMDev(SocPCI(soc)), soc
    finally:
        amdev.fetch_fw = saved


class _SeamBar:
    """BAR2 / BAR5 mapped through an OS seam: each item access is one mmio_read / mmio_write of the mapping."""

    def __init__(self, os_, mapping, fmt: str):
        self.os, self.mapping, self.size = os_, mapping, 8 if fmt == "Q" else 4

    def __len__(self) -> int:
        return self.mapping.length // self.size

    def __getitem__(self, k: int) -> int:
        return self.os.mmio_read(self.mapping, k * self.size, self.size)

    def __setitem__(self, k: int, v: int) -> None:
        self.os.mmio_write(self.mapping, k * self.size, v, self.size)


class SeamPCI:
    """What tinygrad's AMDev asks of a PCIDevice, answered through an `OS` (runtime.os): sysfs `enable`, `config`
    (pread/pwrite) and the `resource0/2/5` BAR files (mmap), as tinygrad's PCIDevice opens them."""

    def __init__(self, os_, pcibus: str = "0000:03:00.0"):
        from tinygrad.runtime.support.hcq import MMIOInterface
        self.os, self.pcibus, self._mmio = os_, pcibus, MMIOInterface
        self.dir = f"/sys/bus/pci/devices/{pcibus}"
        fd = os_.open(f"{self.dir}/enable")
        os_.pwrite(fd, b"1", 0)
        os_.close(fd)
        self.cfg = os_.open(f"{self.dir}/config")
        self.mappings = []

    def read_config(self, offset: int, size: int) -> int:
        return int.from_bytes(self.os.pread(self.cfg, size, offset), "little")

    def write_config_flush(self, offset: int, value: int, size: int) -> None:
        self.os.pwrite(self.cfg, value.to_bytes(size, "little"), offset)

    def map_bar(self, bar: int, off: int = 0, addr: int = 0, size: int | None = None, fmt: str = "B"):
        import numpy as np

        from runtime.os import MAP_SHARED, PROT_READ, PROT_WRITE
        fd = self.os.open(f"{self.dir}/resource{bar}")
        start, end, _ = (int(x, 16) for x in self.os.read_text(f"{self.dir}/resource").splitlines()[bar].split())
        m = self.os.mmap(fd, end - start + 1, PROT_READ | PROT_WRITE, MAP_SHARED, 0)
        self.mappings.append(m)
        if bar == 0:
            return self._mmio(np.frombuffer(m.view, np.uint8).ctypes.data, m.length, fmt=fmt)
        return _SeamBar(self.os, m, fmt)


def boot_through(os_, pcibus: str = "0000:03:00.0", firmware: dict[str, bytes] | None = None):
    """tinygrad's AMDev booted on the PCI function an OS seam offers (MockOS's, or a recording of it)."""
    amdev = pytest.importorskip("tinygrad.runtime.support.am.amdev")
    files = ucode.synthetic_set() if firmware is None else firmware
    saved = amdev.fetch_fw
    amdev.fetch_fw = lambda path, name, sha256: files[name]
    try:
        return amdev.AMDev(SeamPCI(os_, pcibus))
    finally:
        amdev.fetch_fw = saved


def discover(soc: SOC):
    """tinygrad's AMDev after its own `_run_discovery` and `_build_regs` over this SOC's VRAM (the discovery binary
    at its top, read through a BAR0 view): its IP versions, per-instance base addresses, harvested instances, GC
    info and register objects -- what it would program, without booting. The one register these read,
    RCC_CONFIG_MEMSIZE (dword 0xDE3), is answered with the VRAM size as NBIO does (a part whose MMIO side is not
    modelled, gfx942, refuses the bus read itself)."""
    amdev = pytest.importorskip("tinygrad.runtime.support.am.amdev")
    from tinygrad.runtime.support.hcq import MMIOInterface
    dev = object.__new__(amdev.AMDev)
    vram = soc.gpu.phys.vram
    dev.vram = MMIOInterface(vram.ctypes.data, vram.size, fmt="B")
    dev.rreg = lambda reg: soc.gpu.phys.vram_size >> 20 if reg == 0xDE3 else soc.regs.peek(reg)
    dev._run_discovery()
    dev._build_regs()
    return dev
