"""NBIO 4.3.0 (NBIF) registers (nbio_4_3_0_offset.h / _sh_mask.h) and the HDP 6.0.0 ones a driver touches
(hdp_6_0_0_offset.h): VRAM size, indirect register access, the doorbell aperture, the host data path (HDP) flush
and its remapped page, the S2A doorbell routing entries.

RSMU_INDEX / RSMU_DATA reach registers beyond the MMIO BAR: the index is a byte address (dword address * 4).
BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL holds the byte offset in the MMIO BAR where amdgpu remaps the HDP memory flush
(MMIO_REG_HOLE_OFFSET, 0x80000 - 4 KiB; + 4 for the register coherency flush).

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw.bits import Field, Layout
from simgpu.hw.mmio import Reg, family, name_registers

MMIO_REG_HOLE_OFFSET = 0x80000 - 4096  # byte offset of the remapped page in the MMIO BAR
HDP_MEM_FLUSH_CNTL_OFFSET, HDP_REG_FLUSH_CNTL_OFFSET = 0, 4  # within that page (KFD_MMIO_REMAP_HDP_*)

RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE = Reg("NBIO", 2, 0xC3)  # VRAM size in MiB (read at the fixed dword 0xDE3)
BIF_BX0_PCIE_INDEX2 = Reg("NBIO", 0, 0xE)
BIF_BX0_PCIE_DATA2 = Reg("NBIO", 0, 0xF)
BIF_BX0_PCIE_INDEX2_HI = Reg("NBIO", 0, 0x11)
BIF_BX_PF0_RSMU_INDEX = Reg("NBIO", 1, 0x0)
BIF_BX_PF0_RSMU_DATA = Reg("NBIO", 1, 0x1)
BIF_BX_PF0_RSMU_INDEX_HI = Reg("NBIO", 1, 0x2)
RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = Reg("NBIO", 2, 0xC0, Layout(bif_doorbell_aper_en=Field(0)))
BIF_BX0_BIF_DOORBELL_INT_CNTL = Reg("NBIO", 2, 0xFE, Layout(doorbell_interrupt_status=Field(0),
                                                           ras_cntlr_interrupt_status=Field(1),
                                                           ras_athub_err_event_interrupt_status=Field(2)))
BIF_BX_PF0_GPU_HDP_FLUSH_REQ = Reg("NBIO", 2, 0x106)  # one bit per client (cp0..9, sdma0/1, ...)
BIF_BX_PF0_GPU_HDP_FLUSH_DONE = Reg("NBIO", 2, 0x107)
BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = Reg("NBIO", 2, 0x12D, Layout(address=Field(2, 17)),
                                       reset=MMIO_REG_HOLE_OFFSET + HDP_MEM_FLUSH_CNTL_OFFSET)
# Beyond the BAR: reached through RSMU_INDEX/DATA.
S2A_DOORBELL_ENTRY_CTRL = family("NBIO", 3, 0x4F7640, 1, 16, name="S2A_DOORBELL_ENTRY_{i}_CTRL")
RCC_DEV0_EPF2_STRAP2 = Reg("NBIO", 5, 0xD102, Layout(strap_no_soft_reset_dev0_f2=Field(7)))

HDP_MEM_POWER_CTRL = Reg("HDP", 0, 0xD4, Layout(atomic_mem_power_ctrl_en=Field(0), atomic_mem_power_ds_en=Field(2)))

REGISTERS = name_registers(globals())
