"""NBIO 4.3 / HDP 6.0 as a driver sees them (simgpu.hw.soc21.nbio): VRAM size, indirect register access, the
doorbell aperture switch and the host data path (HDP) flushes.

- RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE reads the VRAM size in MiB (what a driver reads first, at the fixed dword 0xDE3).
- BIF_BX_PF0_RSMU_INDEX / _DATA: DATA reads and writes the register whose byte address INDEX holds (the way to the
  registers beyond the 1 MiB MMIO BAR: the S2A doorbell routing, RCC straps).
- RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN: doorbell BAR writes reach the queues only while it is 1.
- BIF_BX_PF0_GPU_HDP_FLUSH_REQ: the flush completes at once (the model has no HDP cache) and DONE reads the bits.
  The remapped page of BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL (byte 0x7F000 of the MMIO BAR, +4 for the register flush)
  counts flushes.
"""

from __future__ import annotations

from simgpu.hw.soc21 import nbio as hw
from simgpu.soc.regfile import MMIOError


class NBIO:
    """The bus interface's registers."""

    def __init__(self, soc, vram_size: int):
        self.soc, regs = soc, soc.regs
        regs.set_reset(hw.RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE, vram_size >> 20)
        regs.on_read(hw.RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE, lambda: regs.get(hw.RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE))
        regs.on_read(hw.BIF_BX_PF0_RSMU_DATA, self._indirect_read)
        regs.on_write(hw.BIF_BX_PF0_RSMU_DATA, self._indirect_write)
        regs.on_write(hw.BIF_BX_PF0_GPU_HDP_FLUSH_REQ, self._hdp_flush)
        regs.on_write(hw.RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN, lambda v: None)
        self.hdp_flushes = 0

    @property
    def doorbells_enabled(self) -> bool:
        """RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN."""
        return bool(self.soc.regs.get(hw.RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN) & 1)

    def _target(self) -> int:
        index = self.soc.regs.get(hw.BIF_BX_PF0_RSMU_INDEX) | self.soc.regs.get(hw.BIF_BX_PF0_RSMU_INDEX_HI) << 32
        if index % 4:
            raise MMIOError(f"BIF_BX_PF0_RSMU_INDEX {index:#x} is not a dword-aligned register byte address")
        return index // 4

    def _indirect_read(self) -> int:
        return self.soc.regs.read(self._target())

    def _indirect_write(self, value: int) -> None:
        self.soc.regs.write(self._target(), value)

    def _hdp_flush(self, value: int) -> None:
        self.hdp_flushes += 1
        self.soc.regs.set(hw.BIF_BX_PF0_GPU_HDP_FLUSH_DONE, value)

    def remap_flush(self) -> None:
        """A write to the remapped HDP flush page."""
        self.hdp_flushes += 1
