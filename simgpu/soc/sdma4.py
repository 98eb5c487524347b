"""SDMA 4.4.2 (MI300X: sixteen engines, four per AID) as a driver programs it: each engine's GFX queue
(SDMA_GFX_* in simgpu.hw.soc15, one register block per engine).

Setting SDMA_GFX_RB_CNTL.RB_ENABLE starts the engine's ring: RB_BASE/_HI << 8, 4 << RB_SIZE bytes, VMID RB_VMID, the
doorbell at DOORBELL_OFFSET (dwords) when SDMA_GFX_DOORBELL.ENABLE, the rptr written back to RB_RPTR_ADDR when
RPTR_WRITEBACK_ENABLE. The engines must have their firmware (PSP LOAD_IP_FW SDMA0..3: SDMA 4.x engines share one
ucode, loaded into four slots) and the ring's VM context must be enabled; otherwise the write is refused with an
MMIOError naming the register. RB_RPTR/_HI and RB_WPTR/_HI read the live pointers (bytes); clearing RB_ENABLE
removes the queue. The queues run the SDMA packets of simgpu.sdma (SDMA 4.4's forms, docs/device.md). The GFX queue
is the one a compute driver uses: the page and RLC queues are not modelled.
"""

from __future__ import annotations

from simgpu.hw import soc15
from simgpu.soc.regfile import MMIOError
from simgpu.soc.sdma import SDMARings

_FIRMWARE = ("SDMA0", "SDMA1", "SDMA2", "SDMA3")  # GFX_FW_TYPE_SDMA0..3: the ucode slots of SDMA 4.x


class SDMA4Queues(SDMARings):
    """The GFX queue of each SDMA 4.4.2 engine."""

    LABEL = "GFX queue"

    def __init__(self, soc):
        super().__init__(soc)
        regs = soc.regs
        self.engines = len(regs.instances(soc15.SDMA_GFX_RB_CNTL))
        for e in range(self.engines):
            regs.on_write(soc15.SDMA_GFX_RB_CNTL, lambda v, e=e: self._rb_cntl(e, v), e)
            for lo, hi, which in (("SDMA_GFX_RB_RPTR", "SDMA_GFX_RB_RPTR_HI", "rptr"),
                                  ("SDMA_GFX_RB_WPTR", "SDMA_GFX_RB_WPTR_HI", "wptr")):
                regs.on_read(lo, lambda e=e, r=lo, w=which: self._ptr(e, r, w, False), e)
                regs.on_read(hi, lambda e=e, r=hi, w=which: self._ptr(e, r, w, True), e)

    def _ptr(self, engine: int, reg: str, which: str, hi: bool) -> int:
        q = self.queues.get(engine)
        if q is None:
            return self.soc.regs.get(reg, engine)
        return (getattr(q, which) >> (32 if hi else 0)) & 0xFFFFFFFF

    def _rb_cntl(self, engine: int, value: int) -> None:
        rb = soc15.SDMA_GFX_RB_CNTL
        if not rb.get(value, "rb_enable"):
            self.remove(engine)
            return
        if engine in self.queues:
            return
        regs = self.soc.regs

        def get(name: str) -> int:
            return regs.get(name, engine)

        def refuse(why: str):
            raise MMIOError(f"SDMA_GFX_RB_CNTL (SDMA{engine}): RB_ENABLE refused: {why}")

        missing = [f for f in _FIRMWARE if f not in self.soc.psp.firmware]
        if missing:
            refuse(f"SDMA has no firmware (PSP LOAD_IP_FW {', '.join(missing)})")
        ring = (get("SDMA_GFX_RB_BASE") | get("SDMA_GFX_RB_BASE_HI") << 32) << 8
        if not ring:
            refuse("SDMA_GFX_RB_BASE is 0")
        vmid = rb.get(value, "rb_vmid")
        if not self.soc.gchub.enabled[vmid]:
            refuse(f"RB_VMID {vmid}: that VM context is not enabled (GCVM_CONTEXT{vmid}_CNTL)")
        if get("SDMA_GFX_RB_RPTR") or get("SDMA_GFX_RB_WPTR"):
            refuse("RB_RPTR / RB_WPTR are not 0: resuming a ring mid-way is not modelled")
        doorbell = None
        if soc15.SDMA_GFX_DOORBELL.get(get("SDMA_GFX_DOORBELL"), "enable"):
            doorbell = (soc15.SDMA_GFX_DOORBELL_OFFSET.get(get("SDMA_GFX_DOORBELL_OFFSET"), "offset") << 2) // 8
        rptr_addr = get("SDMA_GFX_RB_RPTR_ADDR_LO") & ~3 | get("SDMA_GFX_RB_RPTR_ADDR_HI") << 32
        self.start(engine, refuse, ring, 4 << rb.get(value, "rb_size"), vmid, doorbell,
                   rptr_addr if rb.get(value, "rptr_writeback_enable") else 0, 0, name=f"sdma{engine}.gfx")
