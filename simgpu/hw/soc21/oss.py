"""OSSSYS 6.0.0 registers: the interrupt handler (IH) rings (osssys_6_0_0_offset.h / _sh_mask.h).

Ring 0 (the "IH_RB_*" registers) and ring 1 ("*_RING1"): base (address >> 8, in the MC address space), size
(RB_CNTL.RB_SIZE = log2 of the size in dwords), the write pointer the IH advances (byte offset, with the overflow
flag) and the read pointer the driver advances; ring 0 also writes its wptr to memory at IH_RB_WPTR_ADDR.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw.bits import Field, Layout
from simgpu.hw.mmio import Reg, name_registers

RB_CNTL = Layout(rb_enable=Field(0), rb_size=Field(1, 5), wptr_writeback_enable=Field(8), rb_full_drain_enable=Field(9),
                 wptr_overflow_enable=Field(16), enable_intr=Field(17), mc_snoop=Field(20), rptr_rearm=Field(21),
                 mc_vmid=Field(24, 4), mc_space=Field(28, 3), wptr_overflow_clear=Field(31))
RB_CNTL_RING1 = Layout(rb_enable=Field(0), rb_size=Field(1, 5), rb_full_drain_enable=Field(9),
                       wptr_overflow_enable=Field(16), mc_snoop=Field(20), mc_vmid=Field(24, 4), mc_space=Field(28, 3),
                       wptr_overflow_clear=Field(31))
RB_RPTR = Layout(offset=Field(2, 16))  # bytes
RB_WPTR = Layout(rb_overflow=Field(0), offset=Field(2, 16))
DOORBELL_RPTR = Layout(offset=Field(0, 26), enable=Field(28))

IH_RB_CNTL = Reg("OSSSYS", 0, 0x80, RB_CNTL)
IH_RB_BASE = Reg("OSSSYS", 0, 0x81)
IH_RB_BASE_HI = Reg("OSSSYS", 0, 0x82, Layout(addr=Field(0, 8)))
IH_RB_RPTR = Reg("OSSSYS", 0, 0x83, RB_RPTR)
IH_RB_WPTR = Reg("OSSSYS", 0, 0x84, RB_WPTR)
IH_RB_WPTR_ADDR_HI = Reg("OSSSYS", 0, 0x85, Layout(addr=Field(0, 16)))
IH_RB_WPTR_ADDR_LO = Reg("OSSSYS", 0, 0x86, Layout(addr=Field(2, 30)))
IH_DOORBELL_RPTR = Reg("OSSSYS", 0, 0x87, DOORBELL_RPTR)
IH_RB_CNTL_RING1 = Reg("OSSSYS", 0, 0x8C, RB_CNTL_RING1)
IH_RB_BASE_RING1 = Reg("OSSSYS", 0, 0x8D)
IH_RB_BASE_HI_RING1 = Reg("OSSSYS", 0, 0x8E, Layout(addr=Field(0, 8)))
IH_RB_RPTR_RING1 = Reg("OSSSYS", 0, 0x8F, RB_RPTR)
IH_RB_WPTR_RING1 = Reg("OSSSYS", 0, 0x90, RB_WPTR)
IH_DOORBELL_RPTR_RING1 = Reg("OSSSYS", 0, 0x93, DOORBELL_RPTR)
IH_CNTL = Reg("OSSSYS", 0, 0xC0)
IH_CNTL2 = Reg("OSSSYS", 0, 0xC1)
IH_RB_STATUS = Reg("OSSSYS", 0, 0xD4, Layout(rb_full=Field(0), rb_overflow=Field(2), rb1_full=Field(4),
                                             rb1_overflow=Field(6)))
IH_INT_FLOOD_CNTL = Reg("OSSSYS", 0, 0xD5, Layout(flood_cntl_enable=Field(3)))
IH_STORM_CLIENT_LIST_CNTL = Reg("OSSSYS", 0, 0xDA)
IH_MSI_STORM_CTRL = Reg("OSSSYS", 0, 0xF1, Layout(delay=Field(0, 12)))

REGISTERS = name_registers(globals())
