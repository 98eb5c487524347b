"""The SDMA v6 engines' queue 0 as a driver programs it (SDMA0/1_QUEUE0_* in simgpu.hw.soc21.gc).

Setting QUEUE0_RB_CNTL.RB_ENABLE starts the ring: RB_BASE/_HI << 8, 4 << RB_SIZE bytes, VMID RB_VMID, the doorbell
at DOORBELL_OFFSET (dwords) when QUEUE0_DOORBELL.ENABLE, the rptr written back to RB_RPTR_ADDR when
RPTR_WRITEBACK_ENABLE, the wptr polled at RB_WPTR_POLL_ADDR when F32_WPTR_POLL_ENABLE. The engine must be running
(its firmware loaded through the PSP and SDMAn_F32_CNTL out of halt) and the ring's VM context enabled; otherwise the
write is refused with an MMIOError naming the register. RB_RPTR/_HI and RB_WPTR/_HI read the live pointers (bytes);
a write of RB_WPTR to a running ring is a doorbell without the doorbell. Clearing RB_ENABLE (or a GRBM_SOFT_RESET
of the engine) removes the queue.
"""

from __future__ import annotations

from simgpu.hw.soc21 import gc
from simgpu.soc.regfile import MMIOError


class SDMARings:
    """What every generation's SDMA engines share: one ring an engine, started as a queue of the GPU (the SoC
    records which engine owns it), stopped on RB_ENABLE's clearing or a reset. LABEL names the ring in describe()."""

    LABEL = "queue 0"

    def __init__(self, soc):
        self.soc = soc
        self.queues: dict[int, object] = {}

    def reset(self) -> None:
        """Power-on: no rings."""
        for e in list(self.queues):
            self.remove(e)

    def start(self, engine: int, refuse, *args, **kwargs) -> None:
        """Start an engine's ring: GPU.create_queue("sdma", *args, engine=engine, **kwargs); what it refuses, refuse()
        raises as the register write's error."""
        try:
            q = self.soc.gpu.create_queue("sdma", *args, engine=engine, **kwargs)
        except ValueError as e:
            refuse(str(e))
        self.queues[engine] = q
        self.soc.queue_owner[q.name] = ("sdma", engine)

    def remove(self, engine: int) -> None:
        """Stop an engine's ring."""
        q = self.queues.pop(engine, None)
        if q is not None:
            if q in self.soc.gpu.queues:
                self.soc.gpu.destroy_queue(q)
            self.soc.queue_owner.pop(q.name, None)

    def describe(self) -> list[str]:
        """The running rings."""
        return [f"SDMA{e} {self.LABEL}: {q.name}" for e, q in sorted(self.queues.items())]


class SDMAQueues(SDMARings):
    """Queue 0 of each SDMA engine."""

    def __init__(self, soc):
        super().__init__(soc)
        regs = soc.regs
        for e in range(gc.SDMA_ENGINES):
            regs.on_write(gc.SDMA_I__QUEUE0_RB_CNTL[e], lambda v, e=e: self._rb_cntl(e, v))
            for r, hi in ((gc.SDMA_I__QUEUE0_RB_RPTR[e], False), (gc.SDMA_I__QUEUE0_RB_RPTR_HI[e], True)):
                regs.on_read(r, lambda e=e, r=r, hi=hi: self._ptr(e, r, "rptr", hi))
            for r, hi in ((gc.SDMA_I__QUEUE0_RB_WPTR[e], False), (gc.SDMA_I__QUEUE0_RB_WPTR_HI[e], True)):
                regs.on_read(r, lambda e=e, r=r, hi=hi: self._ptr(e, r, "wptr", hi))
            regs.on_write(gc.SDMA_I__QUEUE0_RB_WPTR[e], lambda v, e=e: self._wptr(e))
            regs.on_write(gc.SDMA_I__F32_CNTL[e], lambda v: None)

    def _ptr(self, engine: int, reg, which: str, hi: bool) -> int:
        q = self.queues.get(engine)
        if q is None:
            return self.soc.regs.get(reg)
        return (getattr(q, which) >> (32 if hi else 0)) & 0xFFFFFFFF

    def _wptr(self, engine: int) -> None:
        q = self.queues.get(engine)
        if q is not None:
            regs = self.soc.regs
            value = regs.get(gc.SDMA_I__QUEUE0_RB_WPTR[engine]) | regs.get(gc.SDMA_I__QUEUE0_RB_WPTR_HI[engine]) << 32
            if value > q.wptr:
                q.wptr = value
                self.soc.gpu.run_queue(q)

    def _rb_cntl(self, engine: int, value: int) -> None:
        rb = gc.SDMA_I__QUEUE0_RB_CNTL[engine]
        if not rb.get(value, "rb_enable"):
            self.remove(engine)
            return
        if engine in self.queues:
            return
        regs, name = self.soc.regs, rb.name

        def get(family) -> int:
            return regs.get(family[engine])

        def refuse(why: str):
            raise MMIOError(f"{name}: RB_ENABLE refused: {why}")

        if not any(f"SDMA_UCODE_TH{t}" in self.soc.psp.firmware for t in (0, 1)):
            refuse(f"SDMA{engine} has no firmware (PSP LOAD_IP_FW SDMA_UCODE_TH0/TH1)")
        if gc.SDMA_F32_CNTL.halt.get(get(gc.SDMA_I__F32_CNTL)):
            refuse(f"SDMA{engine} is halted ({regs.declared(gc.SDMA_I__F32_CNTL[engine]).name}.HALT)")
        ring = (get(gc.SDMA_I__QUEUE0_RB_BASE) | get(gc.SDMA_I__QUEUE0_RB_BASE_HI) << 32) << 8
        if not ring:
            refuse(f"SDMA{engine}_QUEUE0_RB_BASE is 0")
        rb = regs.declared(rb)  # SDMA 7 calls the poll enable MCU_WPTR_POLL_ENABLE (the same bit)
        poll = "mcu_wptr_poll_enable" if "mcu_wptr_poll_enable" in rb.fields.fields else "f32_wptr_poll_enable"
        size = 4 << rb.get(value, "rb_size")
        vmid = rb.get(value, "rb_vmid")
        if not self.soc.gchub.enabled[vmid]:
            refuse(f"RB_VMID {vmid}: that VM context is not enabled (GCVM_CONTEXT{vmid}_CNTL)")
        if get(gc.SDMA_I__QUEUE0_RB_RPTR) or get(gc.SDMA_I__QUEUE0_RB_WPTR):
            refuse("RB_RPTR / RB_WPTR are not 0: resuming a ring mid-way is not modelled")
        doorbell = None
        if gc.SDMA_DOORBELL.enable.get(get(gc.SDMA_I__QUEUE0_DOORBELL)):
            doorbell = (gc.SDMA_DOORBELL_OFFSET.offset.get(get(gc.SDMA_I__QUEUE0_DOORBELL_OFFSET)) << 2) // 8
        rptr_addr = get(gc.SDMA_I__QUEUE0_RB_RPTR_ADDR_LO) & ~3 | get(gc.SDMA_I__QUEUE0_RB_RPTR_ADDR_HI) << 32
        wptr_addr = get(gc.SDMA_I__QUEUE0_RB_WPTR_POLL_ADDR_LO) & ~3 | get(gc.SDMA_I__QUEUE0_RB_WPTR_POLL_ADDR_HI) << 32
        self.start(engine, refuse, ring, size, vmid, doorbell,
                   rptr_addr if rb.get(value, "rptr_writeback_enable") else 0, wptr_addr if rb.get(value, poll) else 0,
                   name=f"sdma{engine}.0")
