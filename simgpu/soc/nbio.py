"""NBIO 4.3 / HDP 6.0 as a driver sees them (simgpu.hw.soc21.nbio): VRAM size, indirect register access, the
doorbell aperture switch and the host data path (HDP) flushes.

- RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE reads the VRAM size in MiB (what a driver reads first, at the fixed dword 0xDE3).
- BIF_BX_PF0_RSMU_INDEX / _DATA: DATA reads and writes the register whose byte address INDEX holds (the way to the
  registers beyond the 1 MiB MMIO BAR: the S2A doorbell routing, RCC straps).
- RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN: doorbell BAR writes reach the queues only while it is 1.
- BIF_BX0_PCIE_INDEX2 / _HI / PCIE_DATA2: the SMN window; with INDEX2_HI's AID bits (MI300X) it reaches another
  AID's NBIO registers (XCC_DOORBELL_FENCE, the S2A doorbell routing), which the model keeps as storage per AID.
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
        regs.on_read(hw.BIF_BX0_PCIE_DATA2, self._smn_read)
        regs.on_write(hw.BIF_BX0_PCIE_DATA2, self._smn_write)
        self.hdp_flushes = 0
        self.remote: dict[tuple[int, int], int] = {}  # (AID, dword) -> a remote AID's register, written through SMN

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

    # ---- the SMN window (PCIE_INDEX2 / PCIE_INDEX2_HI / PCIE_DATA2) ------------------------------------------------
    def _smn_target(self) -> tuple[int, int]:
        """(AID, dword) the window points at: INDEX2 is a byte address; INDEX2_HI's bits 34:32 of it select another
        AID's copy of the register (bit 34 set, the AID in 33:32: aqua_vanjaram's extended SMN addressing)."""
        regs = self.soc.regs
        index = regs.get(hw.BIF_BX0_PCIE_INDEX2) | (regs.get(hw.BIF_BX0_PCIE_INDEX2_HI) & 0xFF) << 32
        if index % 4:
            raise MMIOError(f"BIF_BX0_PCIE_INDEX2 {index:#x} is not a dword-aligned register byte address")
        ext = index >> 32
        if ext and not (ext & 0b100 and 0 < ext & 0b11 < self.soc.aids):
            raise MMIOError(f"BIF_BX0_PCIE_INDEX2_HI {ext:#x}: not an AID of this part (bit 2 set and AID 1.."
                            f"{self.soc.aids - 1} in bits 1:0; it has {self.soc.aids} AID(s))")
        return (ext & 0b11 if ext else 0), (index & 0xFFFFFFFF) // 4

    def _smn_read(self) -> int:
        aid, dword = self._smn_target()
        if aid == 0:
            return self.soc.regs.read(dword)
        self._remote_reg(aid, dword)
        return self.remote.get((aid, dword), self.soc.regs.map.at(dword).reset)

    def _smn_write(self, value: int) -> None:
        aid, dword = self._smn_target()
        if aid == 0:
            self.soc.regs.write(dword, value)
        else:
            self._remote_reg(aid, dword)
            self.remote[(aid, dword)] = value  # another AID's NBIO routing: kept (its doorbells are not routed)

    def _remote_reg(self, aid: int, dword: int) -> None:
        reg = self.soc.regs.map.at(dword)
        if reg is None or reg.block != "NBIO":
            raise MMIOError(f"SMN access to AID {aid} at {self.soc.regs.map.describe(dword)}: the model keeps the "
                            "other AIDs' NBIO registers only")

    def _hdp_flush(self, value: int) -> None:
        self.hdp_flushes += 1
        self.soc.regs.set(hw.BIF_BX_PF0_GPU_HDP_FLUSH_DONE, value)

    def remap_flush(self) -> None:
        """A write to the remapped HDP flush page."""
        self.hdp_flushes += 1
