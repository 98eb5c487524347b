"""The interrupt handler (OSSSYS 6.0): writes IH entries (simgpu.hw.ih) into the ring a driver set up.

Ring 0 is IH_RB_BASE/_HI (MC address >> 8, in the frame buffer) of 4 << IH_RB_CNTL.RB_SIZE bytes. Pointers are byte
offsets in the ring: the IH advances IH_RB_WPTR (offset in bits 17:2, RB_OVERFLOW in bit 0), the driver writes
IH_RB_RPTR as it consumes. With RB_CNTL.WPTR_WRITEBACK_ENABLE the IH also stores the wptr at IH_RB_WPTR_ADDR. A full
ring (the next entry would reach the rptr) drops the entry and, with WPTR_OVERFLOW_ENABLE, sets RB_OVERFLOW until
RB_CNTL.WPTR_OVERFLOW_CLEAR is written. A disabled ring (RB_ENABLE 0) drops everything; `dropped` counts both.
Ring 1 (IH_RB_*_RING1, amdgpu's page-fault ring) is programmable storage: every entry goes to ring 0.
"""

from __future__ import annotations

from simgpu.hw import ih as hw
from simgpu.hw.soc21 import oss
from simgpu.soc.regfile import MMIOError, RegisterFile


class InterruptHandler:
    """Ring 0 of the IH."""

    def __init__(self, regs: RegisterFile, mc_to_pa, phys):
        self.regs, self.mc_to_pa, self.phys = regs, mc_to_pa, phys
        self.wptr = 0  # bytes into the ring
        self.overflow = False
        self.posted = self.dropped = 0
        regs.on_read(oss.IH_RB_WPTR, self._read_wptr)
        regs.on_write(oss.IH_RB_WPTR, self._write_wptr)
        regs.on_write(oss.IH_RB_CNTL, self._cntl)
        regs.on_write(oss.IH_RB_RPTR, lambda v: None)  # the driver's consumption: read when posting

    def reset(self) -> None:
        """Power-on state."""
        self.wptr, self.overflow, self.posted, self.dropped = 0, False, 0, 0

    @property
    def size(self) -> int:
        """Ring size in bytes."""
        return 4 << oss.RB_CNTL.rb_size.get(self.regs.get(oss.IH_RB_CNTL))

    def _read_wptr(self) -> int:
        return oss.RB_WPTR.pack(offset=self.wptr >> 2, rb_overflow=self.overflow)

    def _write_wptr(self, value: int) -> None:
        self.wptr = (oss.RB_WPTR.offset.get(value) << 2) % max(self.size, hw.ENTRY_SIZE)
        self.overflow = bool(oss.RB_WPTR.rb_overflow.get(value))

    def _cntl(self, value: int) -> None:
        if oss.RB_CNTL.wptr_overflow_clear.get(value):
            self.overflow = False

    def post(self, entry: hw.Entry) -> bool:
        """Write one entry at the wptr; False if the ring is off or full (the entry is dropped)."""
        cntl = self.regs.get(oss.IH_RB_CNTL)
        if not oss.RB_CNTL.rb_enable.get(cntl):
            self.dropped += 1
            return False
        size = self.size
        rptr = (self.regs.get(oss.IH_RB_RPTR) & 0x3FFFC) % size
        if (self.wptr + hw.ENTRY_SIZE) % size == rptr:
            self.dropped += 1
            self.overflow |= bool(oss.RB_CNTL.wptr_overflow_enable.get(cntl))
            return False
        base = (self.regs.get(oss.IH_RB_BASE) | (self.regs.get(oss.IH_RB_BASE_HI) & 0xFF) << 32) << 8
        try:
            self.phys.write(self.mc_to_pa(base + self.wptr, hw.ENTRY_SIZE, "IH ring (IH_RB_BASE)"), entry.pack())
            self.wptr = (self.wptr + hw.ENTRY_SIZE) % size
            if oss.RB_CNTL.wptr_writeback_enable.get(cntl):
                addr = (self.regs.get(oss.IH_RB_WPTR_ADDR_LO) & ~3) | (self.regs.get(oss.IH_RB_WPTR_ADDR_HI) << 32)
                self.phys.write(self.mc_to_pa(addr, 4, "IH wptr writeback (IH_RB_WPTR_ADDR)"),
                                self._read_wptr().to_bytes(4, "little"))
        except MMIOError:
            self.dropped += 1  # a ring outside the frame buffer: nothing to write to (describe() shows the base)
            return False
        self.posted += 1
        return True

    def describe(self) -> list[str]:
        """The ring's state."""
        cntl = self.regs.get(oss.IH_RB_CNTL)
        if not oss.RB_CNTL.rb_enable.get(cntl) and not self.dropped:
            return []
        base = (self.regs.get(oss.IH_RB_BASE) | (self.regs.get(oss.IH_RB_BASE_HI) & 0xFF) << 32) << 8
        return [f"IH ring 0: base MC {base:#x}, {self.size} bytes, wptr {self.wptr:#x}, rptr "
                f"{self.regs.get(oss.IH_RB_RPTR) & 0x3FFFC:#x}, {self.posted} entries written, {self.dropped} dropped"
                + (", OVERFLOW" if self.overflow else "")]
