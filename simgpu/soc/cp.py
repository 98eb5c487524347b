"""The compute micro-engine (MEC) as a driver programs it: GRBM_GFX_CNTL selection, the RS64 firmware start, and the
hardware queue descriptors (HQDs) that become simulated queues.

GRBM_GFX_CNTL (ME, pipe, queue, VMID) selects which copy of the banked registers MMIO reaches: the 56 HQD
registers (CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI, the v11 compute MQD's register image, which gfx12's v12 MQD
keeps) per ME/pipe/queue, the MEC's program counter start per pipe (and gfx12's graphics PFP/ME ones, kept per pipe),
SH_MEM_CONFIG/BASES per VMID. gfx1100 and gfx1201 have one MEC (ME 1) with 4 pipes of 8 queues; ME 0 is the graphics
ME, which this simulator does not model.

Writing 1 to CP_HQD_ACTIVE activates the selected HQD. The MEC must be running (its firmware loaded through the
PSP, CP_MEC_RS64_CNTL out of halt and reset) and the HQD must describe a queue: CP_MQD_BASE_ADDR pointing at a v11
compute MQD (its header, its own address in cp_mqd_base_addr, and the register image the HQD registers were loaded
from -- ring, size, VMID, doorbell, pointers, AQL control must agree), a ring base, a doorbell inside
CP_MEC_DOORBELL_RANGE, the VMID's VM context enabled. Otherwise the write is refused with an MMIOError naming the
register. Then the queue runs: PM4 or AQL (CP_HQD_AQL_CONTROL.CONTROL0), ring at CP_HQD_PQ_BASE << 8 of
4 << (QUEUE_SIZE + 1) bytes, its doorbell slot DOORBELL_OFFSET / 2, rptr reported at PQ_RPTR_REPORT_ADDR, wptr
polled at PQ_WPTR_POLL_ADDR. CP_HQD_ACTIVE reads back 1 while it exists; CP_HQD_PQ_RPTR and _WPTR_LO/HI read the
live pointers. Writing CP_HQD_DEQUEUE_REQUEST (or 0 to CP_HQD_ACTIVE, or a GRBM_SOFT_RESET of the CP) removes the
queue.
"""

from __future__ import annotations

from simgpu.hw import mqd as hwmqd
from simgpu.hw.soc21 import gc
from simgpu.soc.regfile import MMIOError

MEC_ME, MEC_PIPES, MEC_QUEUES = 1, 4, 8
_HQD_REGS = [r for r in gc.REGISTERS.values() if gc.HQD_FIRST <= r.offset <= gc.HQD_LAST and r.segment == 0
             and r.block == "GC"]
# HQD register -> the MQD image field the check compares it with (those that say what the queue is).
_CHECKED = {"CP_HQD_VMID": "cp_hqd_vmid", "CP_HQD_PQ_BASE": "cp_hqd_pq_base_lo",
            "CP_HQD_PQ_BASE_HI": "cp_hqd_pq_base_hi",
            "CP_HQD_PQ_CONTROL": "cp_hqd_pq_control", "CP_HQD_PQ_DOORBELL_CONTROL": "cp_hqd_pq_doorbell_control",
            "CP_HQD_PQ_RPTR_REPORT_ADDR": "cp_hqd_pq_rptr_report_addr_lo",
            "CP_HQD_PQ_RPTR_REPORT_ADDR_HI": "cp_hqd_pq_rptr_report_addr_hi",
            "CP_HQD_PQ_WPTR_POLL_ADDR": "cp_hqd_pq_wptr_poll_addr_lo",
            "CP_HQD_PQ_WPTR_POLL_ADDR_HI": "cp_hqd_pq_wptr_poll_addr_hi", "CP_HQD_AQL_CONTROL": "cp_hqd_aql_control"}


class MEC:
    """MEC 1's pipes and HQDs over a SOC's register file."""

    def __init__(self, soc):
        self.soc, regs = soc, soc.regs
        self.banks: dict[tuple, dict[int, int]] = {}  # (me, pipe, queue) -> HQD register values by offset
        self.pipe_banks: dict[tuple, dict[int, int]] = {}  # (me, pipe) -> CP_MEC_RS64_PRGRM_CNTR_START(_HI)
        self.vmid_banks: dict[int, dict[int, int]] = {}  # vmid -> SH_MEM_CONFIG / SH_MEM_BASES
        self.queues: dict[tuple, object] = {}  # (me, pipe, queue) -> the simulated Queue
        for r in filter(regs.has, _HQD_REGS):  # (gfx12 leaves dword 26 of the image unnamed)
            regs.on_read(r, lambda r=r: self._hqd_read(r))
            regs.on_write(r, lambda v, r=r: self._hqd_write(r, v))
        pipe_regs = ["CP_MEC_RS64_PRGRM_CNTR_START", "CP_MEC_RS64_PRGRM_CNTR_START_HI", "CP_PFP_PRGRM_CNTR_START",
                     "CP_PFP_PRGRM_CNTR_START_HI", "CP_ME_PRGRM_CNTR_START", "CP_ME_PRGRM_CNTR_START_HI"]
        for r in map(regs.declared, filter(regs.has, pipe_regs)):  # gfx12's graphics ME/PFP: per pipe of ME 0
            regs.on_read(r, lambda r=r: self._pipe_bank().get(r.offset, 0))
            regs.on_write(r, lambda v, r=r: self._pipe_bank().__setitem__(r.offset, v))
        for r in (gc.SH_MEM_CONFIG, gc.SH_MEM_BASES):
            regs.on_read(r, lambda r=r: self.vmid_banks.get(self._select()[3], {}).get(r.offset, r.reset))
            regs.on_write(r, lambda v, r=r: self.vmid_banks.setdefault(self._select()[3], {}).__setitem__(r.offset, v))
        regs.on_write(gc.GRBM_GFX_CNTL, lambda v: None)
        regs.on_write(gc.GRBM_SOFT_RESET, self._soft_reset)
        regs.on_write(gc.CP_MEC_RS64_CNTL, lambda v: None)
        # The RLC grants safe mode at once (clears CMD): nothing else runs on the graphics core between accesses.
        regs.on_write(gc.RLC_SAFE_MODE, lambda v: regs.set(gc.RLC_SAFE_MODE, v & ~1))
        regs.on_read(gc.CP_STAT, lambda: 0)  # the CP is never busy between MMIO accesses: work runs synchronously

    def reset(self) -> None:
        """Power-on: no queues, every bank cleared."""
        for key in list(self.queues):
            self._remove(key)
        self.banks.clear()
        self.pipe_banks.clear()
        self.vmid_banks.clear()

    # ---- banking ----------------------------------------------------------------------------------------------------
    def _select(self) -> tuple[int, int, int, int]:
        v = self.soc.regs.get(gc.GRBM_GFX_CNTL)
        f = gc.GRBM_GFX_CNTL.fields
        return f.meid.get(v), f.pipeid.get(v), f.queueid.get(v), f.vmid.get(v)

    def _bank(self) -> tuple[tuple, dict[int, int]]:
        me, pipe, queue, _ = self._select()
        return (me, pipe, queue), self.banks.setdefault((me, pipe, queue), {})

    def _pipe_bank(self) -> dict[int, int]:
        me, pipe, _, _ = self._select()
        return self.pipe_banks.setdefault((me, pipe), {})

    def _hqd_read(self, r) -> int:
        key, bank = self._bank()
        q = self.queues.get(key)
        if r is gc.CP_HQD_ACTIVE:
            return int(q is not None)
        if q is not None and r in (gc.CP_HQD_PQ_RPTR, gc.CP_HQD_PQ_WPTR_LO, gc.CP_HQD_PQ_WPTR_HI):
            dwords = q.unit // 4 if q.fmt == "aql" else 1  # the pointers count dwords
            ptr = (q.rptr if r is gc.CP_HQD_PQ_RPTR else q.wptr) * dwords
            return (ptr >> 32 if r is gc.CP_HQD_PQ_WPTR_HI else ptr) & 0xFFFFFFFF
        return bank.get(r.offset, r.reset)

    def _hqd_write(self, r, value: int) -> None:
        key, bank = self._bank()
        bank[r.offset] = value
        if r is gc.CP_HQD_ACTIVE:
            if value & 1 and key not in self.queues:
                self._activate(key, bank)
            elif not value & 1 and key in self.queues:
                self._remove(key)
        elif r is gc.CP_HQD_DEQUEUE_REQUEST and gc.CP_HQD_DEQUEUE_REQUEST.get(value, "dequeue_req"):
            if key in self.queues:
                self._remove(key)
            bank[gc.CP_HQD_ACTIVE.offset] = 0

    # ---- activation -------------------------------------------------------------------------------------------------
    def _mec_running(self) -> str:
        """Why the MEC cannot run a queue ("" when it can)."""
        if "RS64_MEC" not in self.soc.psp.firmware:
            return "the MEC firmware was not loaded (PSP LOAD_IP_FW RS64_MEC)"
        cntl = self.soc.regs.get(gc.CP_MEC_RS64_CNTL)
        f = gc.CP_MEC_RS64_CNTL.fields
        if f.mec_halt.get(cntl) or f.mec_pipe0_reset.get(cntl) or not f.mec_pipe0_active.get(cntl):
            return f"the MEC is halted or in reset (CP_MEC_RS64_CNTL = {cntl:#x}: MEC_HALT, MEC_PIPE0_RESET, " \
                   "MEC_PIPE0_ACTIVE)"
        return ""

    def _activate(self, key: tuple, bank: dict[int, int]) -> None:
        me, pipe, queue = key
        where = f"CP_HQD_ACTIVE (ME {me} pipe {pipe} queue {queue})"

        def reg(r) -> int:
            return bank.get(r.offset, r.reset)

        def refuse(why: str):
            bank[gc.CP_HQD_ACTIVE.offset] = 0
            raise MMIOError(f"{where}: {why}")

        if me != MEC_ME or pipe >= MEC_PIPES or queue >= MEC_QUEUES:
            refuse(f"no such compute queue: {self.soc.gpu.arch} has MEC {MEC_ME} with {MEC_PIPES} pipes of "
                   f"{MEC_QUEUES} queues (GRBM_GFX_CNTL)")
        why = self._mec_running()
        if why:
            refuse(f"queue activated while {why}")
        mqd_addr = (reg(gc.CP_MQD_BASE_ADDR) & ~3) | (reg(gc.CP_MQD_BASE_ADDR_HI) & 0xFFFF) << 32
        if not mqd_addr:
            refuse("queue activated before its MQD is valid: CP_MQD_BASE_ADDR is 0")
        try:
            image = self.soc.gpu.phys.read(self.soc.gchub.mc_to_pa(mqd_addr, hwmqd.MQD_SIZE, where), hwmqd.MQD_SIZE)
        except MMIOError as e:
            refuse(f"queue activated before its MQD is valid: CP_MQD_BASE_ADDR {mqd_addr:#x}: {e}")
        mqd = hwmqd.ComputeMQD.unpack(image)
        if mqd.header != hwmqd.MQD_HEADER:
            refuse(f"queue activated before its MQD is valid: the MQD at CP_MQD_BASE_ADDR {mqd_addr:#x} has header "
                   f"{mqd.header:#010x}, not the v11/v12 compute MQD's {hwmqd.MQD_HEADER:#010x}")
        if (mqd.cp_mqd_base_addr_lo | mqd.cp_mqd_base_addr_hi << 32) & ~3 != mqd_addr:
            refuse(f"queue activated before its MQD is valid: the MQD at {mqd_addr:#x} names itself at "
                   f"{mqd.cp_mqd_base_addr_lo | mqd.cp_mqd_base_addr_hi << 32:#x} (cp_mqd_base_addr_lo/hi)")
        for name, fld in _CHECKED.items():
            r = gc.REGISTERS[name]
            if reg(r) != getattr(mqd, fld):
                refuse(f"queue activated before its MQD is valid: {name} = {reg(r):#x} but the MQD at "
                       f"{mqd_addr:#x} holds {fld} = {getattr(mqd, fld):#x}")
        self._create(key, bank, where, refuse)

    def _create(self, key, bank, where, refuse) -> None:
        def reg(r) -> int:
            return bank.get(r.offset, r.reset)

        ring = (reg(gc.CP_HQD_PQ_BASE) | (reg(gc.CP_HQD_PQ_BASE_HI) & 0xFF) << 32) << 8
        if not ring:
            refuse("CP_HQD_PQ_BASE is 0: the queue has no ring")
        control = reg(gc.CP_HQD_PQ_CONTROL)
        size = 4 << (gc.CP_HQD_PQ_CONTROL.get(control, "queue_size") + 1)
        doorbell = reg(gc.CP_HQD_PQ_DOORBELL_CONTROL)
        if not gc.CP_HQD_PQ_DOORBELL_CONTROL.get(doorbell, "doorbell_en"):
            refuse("CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_EN is 0: nothing could ever start the queue")
        offset = gc.CP_HQD_PQ_DOORBELL_CONTROL.get(doorbell, "doorbell_offset") << 2  # bytes in the doorbell BAR
        lo = self.soc.regs.get(gc.CP_MEC_DOORBELL_RANGE_LOWER) & 0xFFC
        hi = self.soc.regs.get(gc.CP_MEC_DOORBELL_RANGE_UPPER) & 0xFFC
        if not lo <= offset <= hi:
            refuse(f"doorbell at byte {offset:#x} (CP_HQD_PQ_DOORBELL_CONTROL) is outside the MEC's doorbell range "
                   f"[{lo:#x}, {hi:#x}] (CP_MEC_DOORBELL_RANGE_LOWER/UPPER)")
        vmid = gc.CP_HQD_VMID.get(reg(gc.CP_HQD_VMID), "vmid")
        if not self.soc.gchub.enabled[vmid]:
            refuse(f"CP_HQD_VMID {vmid}: that VM context is not enabled (GCVM_CONTEXT{vmid}_CNTL)")
        if reg(gc.CP_HQD_PQ_RPTR) or reg(gc.CP_HQD_PQ_WPTR_LO) or reg(gc.CP_HQD_PQ_WPTR_HI):
            refuse("CP_HQD_PQ_RPTR / CP_HQD_PQ_WPTR_LO/HI are not 0: resuming a queue mid-ring is not modelled")
        rptr = (reg(gc.CP_HQD_PQ_RPTR_REPORT_ADDR) & ~3) | (reg(gc.CP_HQD_PQ_RPTR_REPORT_ADDR_HI) & 0xFFFF) << 32
        wptr = (reg(gc.CP_HQD_PQ_WPTR_POLL_ADDR) & ~7) | (reg(gc.CP_HQD_PQ_WPTR_POLL_ADDR_HI) & 0xFFFF) << 32
        fmt = "aql" if gc.CP_HQD_AQL_CONTROL.get(reg(gc.CP_HQD_AQL_CONTROL), "control0") else "pm4"
        me, pipe, queue = key
        try:
            q = self.soc.gpu.create_queue(fmt, ring, size, vmid, offset // 8, rptr, wptr,
                                          name=f"hqd{me}.{pipe}.{queue}", engine=pipe)
        except ValueError as e:
            refuse(str(e))
        self.queues[key] = q
        self.soc.queue_owner[q.name] = ("cp", me, pipe, queue)

    def _remove(self, key: tuple) -> None:
        q = self.queues.pop(key)
        if q in self.soc.gpu.queues:
            self.soc.gpu.destroy_queue(q)
        self.soc.queue_owner.pop(q.name, None)

    def _soft_reset(self, value: int) -> None:
        if gc.GRBM_SOFT_RESET.get(value, "soft_reset_cp") or gc.GRBM_SOFT_RESET.get(value, "soft_reset_cpc"):
            for key in list(self.queues):
                self._remove(key)
                self.banks[key][gc.CP_HQD_ACTIVE.offset] = 0
        for engine in range(gc.SDMA_ENGINES):
            if gc.GRBM_SOFT_RESET.get(value, f"soft_reset_sdma{engine}"):
                self.soc.sdma.remove(engine)

    def describe(self) -> list[str]:
        """The active HQDs."""
        return [f"HQD ME {me} pipe {p} queue {q}: {self.queues[(me, p, q)].name}" for me, p, q in sorted(self.queues)]
