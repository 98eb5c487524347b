"""The compute micro-engine (MEC) as a driver programs it: GRBM_GFX_CNTL selection, the RS64 firmware start, and the
hardware queue descriptors (HQDs) that become simulated queues.

GRBM_GFX_CNTL (ME, pipe, queue, VMID) selects which copy of the banked registers MMIO reaches: the 56 HQD
registers (CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI, the v11 compute MQD's register image, which gfx12's v12 MQD
keeps) per ME/pipe/queue, the MEC's program counter start per pipe (and gfx12's graphics PFP/ME ones, kept per pipe),
SH_MEM_CONFIG/BASES per VMID. gfx1100, gfx1201 and each gfx942 XCC have one MEC (ME 1) with 4 pipes of 8 queues; ME 0
is the graphics ME, which this simulator does not model.

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

gfx9 (MI300X, GC 9.4.3): one MEC per XCC, each with its own GRBM_GFX_CNTL, HQDs and SH_MEM banks (the GC block's
instance: simgpu.hw.soc15). Its F32 MEC runs the PSP-loaded CP_MEC firmware once CP_MEC_CNTL lets ME1 out of halt and
reset, and the MQD is a v9_mqd (the same register image at dword 0x80). An AQL queue spread over the XCCs (SPX) is
one HQD per XCC on the same ring: each XCC's MQD (at 4 KiB strides, compute_current_logic_xcc_id its XCC) names the
same ring, doorbell and AQL control. The model runs the queue once, as the first XCC's HQD (the waves of every XCC
are one device here, docs/device.md); the others are checked against it and kept as its members. Only the HQD that
runs the queue needs its doorbell inside its XCC's CP_MEC_DOORBELL_RANGE.
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
    """MEC 1's pipes and HQDs over a SOC's register file, per XCC."""

    def __init__(self, soc):
        self.soc, regs = soc, soc.regs
        self.gfx9 = regs.has("CP_MEC_CNTL")  # gfx9's F32 MEC, started by CP_MEC_CNTL (not RS64)
        self.xccs = len(regs.instances(gc.CP_HQD_ACTIVE))
        self.banks: dict[tuple, dict[int, int]] = {}  # (xcc, me, pipe, queue) -> HQD register values by offset
        self.pipe_banks: dict[tuple, dict[int, int]] = {}  # (xcc, me, pipe) -> CP_MEC_RS64_PRGRM_CNTR_START(_HI)
        self.vmid_banks: dict[tuple, dict[int, int]] = {}  # (xcc, vmid) -> SH_MEM_CONFIG / SH_MEM_BASES
        self.queues: dict[tuple, object] = {}  # (xcc, me, pipe, queue) -> the simulated Queue it runs
        self.members: dict[tuple, tuple] = {}  # (xcc, me, pipe, queue) -> the HQD running the queue it is part of
        for x in range(self.xccs):
            self._install(x)

    def _install(self, x: int) -> None:
        regs = self.soc.regs
        for r in filter(regs.has, _HQD_REGS):  # (gfx12 leaves dword 26 of the image unnamed)
            regs.on_read(r, lambda r=r, x=x: self._hqd_read(x, r), x)
            regs.on_write(r, lambda v, r=r, x=x: self._hqd_write(x, r, v), x)
        pipe_regs = ["CP_MEC_RS64_PRGRM_CNTR_START", "CP_MEC_RS64_PRGRM_CNTR_START_HI", "CP_PFP_PRGRM_CNTR_START",
                     "CP_PFP_PRGRM_CNTR_START_HI", "CP_ME_PRGRM_CNTR_START", "CP_ME_PRGRM_CNTR_START_HI"]
        for r in map(regs.declared, filter(regs.has, pipe_regs)):  # gfx12's graphics ME/PFP: per pipe of ME 0
            regs.on_read(r, lambda r=r, x=x: self._pipe_bank(x).get(r.offset, 0), x)
            regs.on_write(r, lambda v, r=r, x=x: self._pipe_bank(x).__setitem__(r.offset, v), x)
        for r in (gc.SH_MEM_CONFIG, gc.SH_MEM_BASES):
            regs.on_read(r, lambda r=r, x=x: self.vmid_banks.get((x, self._select(x)[3]), {}).get(r.offset, r.reset),
                         x)
            regs.on_write(r, lambda v, r=r, x=x: self.vmid_banks.setdefault((x, self._select(x)[3]), {})
                          .__setitem__(r.offset, v), x)
        regs.on_write(gc.GRBM_GFX_CNTL, lambda v: None, x)
        regs.on_write(gc.GRBM_SOFT_RESET, lambda v, x=x: self._soft_reset(x, v), x)
        regs.on_write("CP_MEC_CNTL" if self.gfx9 else gc.CP_MEC_RS64_CNTL, lambda v: None, x)
        # The RLC grants safe mode at once (clears CMD): nothing else runs on the graphics core between accesses.
        regs.on_write(gc.RLC_SAFE_MODE, lambda v, x=x: regs.set(gc.RLC_SAFE_MODE, v & ~1, x), x)
        regs.on_read(gc.CP_STAT, lambda: 0, x)  # the CP is never busy between MMIO accesses: work runs synchronously

    def reset(self) -> None:
        """Power-on: no queues, every bank cleared."""
        for key in list(self.queues):
            self._remove(key)
        self.members.clear()
        self.banks.clear()
        self.pipe_banks.clear()
        self.vmid_banks.clear()

    # ---- banking ----------------------------------------------------------------------------------------------------
    def _select(self, x: int) -> tuple[int, int, int, int]:
        v = self.soc.regs.get(gc.GRBM_GFX_CNTL, x)
        f = gc.GRBM_GFX_CNTL.fields
        return f.meid.get(v), f.pipeid.get(v), f.queueid.get(v), f.vmid.get(v)

    def _bank(self, x: int) -> tuple[tuple, dict[int, int]]:
        me, pipe, queue, _ = self._select(x)
        return (x, me, pipe, queue), self.banks.setdefault((x, me, pipe, queue), {})

    def _pipe_bank(self, x: int) -> dict[int, int]:
        me, pipe, _, _ = self._select(x)
        return self.pipe_banks.setdefault((x, me, pipe), {})

    def _hqd_read(self, x: int, r) -> int:
        key, bank = self._bank(x)
        q = self.queues.get(key)
        if r is gc.CP_HQD_ACTIVE:
            return int(q is not None or key in self.members)
        if q is not None and r in (gc.CP_HQD_PQ_RPTR, gc.CP_HQD_PQ_WPTR_LO, gc.CP_HQD_PQ_WPTR_HI):
            dwords = q.unit // 4 if q.fmt == "aql" else 1  # the pointers count dwords
            ptr = (q.rptr if r is gc.CP_HQD_PQ_RPTR else q.wptr) * dwords
            return (ptr >> 32 if r is gc.CP_HQD_PQ_WPTR_HI else ptr) & 0xFFFFFFFF
        return bank.get(r.offset, r.reset)

    def _hqd_write(self, x: int, r, value: int) -> None:
        key, bank = self._bank(x)
        bank[r.offset] = value
        if r is gc.CP_HQD_ACTIVE:
            if value & 1 and key not in self.queues and key not in self.members:
                self._activate(key, bank)
            elif not value & 1:
                self._remove(key)
        elif r is gc.CP_HQD_DEQUEUE_REQUEST and self.soc.regs.declared(r).get(value, "dequeue_req"):
            self._remove(key)
            bank[gc.CP_HQD_ACTIVE.offset] = 0

    # ---- activation -------------------------------------------------------------------------------------------------
    def _mec_running(self, x: int) -> str:
        """Why XCC x's MEC cannot run a queue ("" when it can)."""
        fw = "CP_MEC" if self.gfx9 else "RS64_MEC"
        if fw not in self.soc.psp.firmware:
            return f"the MEC firmware was not loaded (PSP LOAD_IP_FW {fw})"
        if self.gfx9:
            cntl = self.soc.regs.get("CP_MEC_CNTL", x)
            f = self.soc.regs.declared("CP_MEC_CNTL").fields
            if f.mec_me1_halt.get(cntl) or f.mec_me1_pipe0_reset.get(cntl):
                return f"the MEC is halted or in reset (XCC {x}'s CP_MEC_CNTL = {cntl:#x}: MEC_ME1_HALT, " \
                       "MEC_ME1_PIPE0_RESET)"
            return ""
        cntl = self.soc.regs.get(gc.CP_MEC_RS64_CNTL, x)
        f = gc.CP_MEC_RS64_CNTL.fields
        if f.mec_halt.get(cntl) or f.mec_pipe0_reset.get(cntl) or not f.mec_pipe0_active.get(cntl):
            return f"the MEC is halted or in reset (CP_MEC_RS64_CNTL = {cntl:#x}: MEC_HALT, MEC_PIPE0_RESET, " \
                   "MEC_PIPE0_ACTIVE)"
        return ""

    def _activate(self, key: tuple, bank: dict[int, int]) -> None:
        x, me, pipe, queue = key
        where = f"CP_HQD_ACTIVE ({f'XCC {x} ' if self.xccs > 1 else ''}ME {me} pipe {pipe} queue {queue})"

        def reg(r) -> int:
            return bank.get(r.offset, r.reset)

        def refuse(why: str):
            bank[gc.CP_HQD_ACTIVE.offset] = 0
            raise MMIOError(f"{where}: {why}")

        if me != MEC_ME or pipe >= MEC_PIPES or queue >= MEC_QUEUES:
            refuse(f"no such compute queue: {self.soc.gpu.arch} has MEC {MEC_ME} with {MEC_PIPES} pipes of "
                   f"{MEC_QUEUES} queues (GRBM_GFX_CNTL)")
        why = self._mec_running(x)
        if why:
            refuse(f"queue activated while {why}")
        mqd = self._mqd(reg, refuse)
        lead = next((k for k in self.queues if k[1:] == key[1:]), None) if self.xccs > 1 else None
        if lead is not None and self._same_queue(lead, bank, mqd, x, refuse):
            self.members[key] = lead
            return
        self._create(key, bank, where, refuse)

    def _mqd(self, reg, refuse) -> hwmqd.ComputeMQD:
        """The MQD CP_MQD_BASE_ADDR points at, checked against the HQD registers loaded from it."""
        kind = "v9" if self.gfx9 else "v11/v12 compute"
        mqd_addr = (reg(gc.CP_MQD_BASE_ADDR) & ~3) | (reg(gc.CP_MQD_BASE_ADDR_HI) & 0xFFFF) << 32
        if not mqd_addr:
            refuse("queue activated before its MQD is valid: CP_MQD_BASE_ADDR is 0")
        try:
            image = self.soc.gpu.phys.read(self.soc.gchub.mc_to_pa(mqd_addr, hwmqd.MQD_SIZE, "MQD"), hwmqd.MQD_SIZE)
        except MMIOError as e:
            refuse(f"queue activated before its MQD is valid: CP_MQD_BASE_ADDR {mqd_addr:#x}: {e}")
        mqd = (hwmqd.V9MQD if self.gfx9 else hwmqd.ComputeMQD).unpack(image)
        if mqd.header != hwmqd.MQD_HEADER:
            refuse(f"queue activated before its MQD is valid: the MQD at CP_MQD_BASE_ADDR {mqd_addr:#x} has header "
                   f"{mqd.header:#010x}, not the {kind} MQD's {hwmqd.MQD_HEADER:#010x}")
        if (mqd.cp_mqd_base_addr_lo | mqd.cp_mqd_base_addr_hi << 32) & ~3 != mqd_addr:
            refuse(f"queue activated before its MQD is valid: the MQD at {mqd_addr:#x} names itself at "
                   f"{mqd.cp_mqd_base_addr_lo | mqd.cp_mqd_base_addr_hi << 32:#x} (cp_mqd_base_addr_lo/hi)")
        for name, fld in _CHECKED.items():
            r = gc.REGISTERS[name]
            if reg(r) != getattr(mqd, fld):
                refuse(f"queue activated before its MQD is valid: {name} = {reg(r):#x} but the MQD at "
                       f"{mqd_addr:#x} holds {fld} = {getattr(mqd, fld):#x}")
        return mqd

    def _same_queue(self, lead: tuple, bank: dict[int, int], mqd, x: int, refuse) -> bool:
        """Whether XCC x's HQD is another XCC's share of the AQL queue `lead` runs (else it is a queue of its own)."""
        theirs = self.banks[lead]
        same = ("CP_HQD_PQ_BASE", "CP_HQD_PQ_BASE_HI", "CP_HQD_PQ_DOORBELL_CONTROL", "CP_HQD_AQL_CONTROL")
        if not gc.CP_HQD_AQL_CONTROL.get(theirs.get(gc.CP_HQD_AQL_CONTROL.offset, 0), "control0"):
            return False
        if any(bank.get(gc.REGISTERS[n].offset, 0) != theirs.get(gc.REGISTERS[n].offset, 0) for n in same):
            refuse(f"XCC {x}'s HQD shares XCC {lead[0]}'s AQL queue slot but not its ring, doorbell or AQL control "
                   f"({', '.join(same)})")
        if mqd.compute_current_logic_xcc_id != x:
            refuse(f"XCC {x}'s share of an AQL queue: its MQD's compute_current_logic_xcc_id is "
                   f"{mqd.compute_current_logic_xcc_id}, not {x}")
        return True

    def _create(self, key, bank, where, refuse) -> None:
        def reg(r) -> int:
            return bank.get(r.offset, r.reset)

        x = key[0]
        ring = (reg(gc.CP_HQD_PQ_BASE) | (reg(gc.CP_HQD_PQ_BASE_HI) & 0xFF) << 32) << 8
        if not ring:
            refuse("CP_HQD_PQ_BASE is 0: the queue has no ring")
        control = reg(gc.CP_HQD_PQ_CONTROL)
        size = 4 << (gc.CP_HQD_PQ_CONTROL.get(control, "queue_size") + 1)
        doorbell = reg(gc.CP_HQD_PQ_DOORBELL_CONTROL)
        if not gc.CP_HQD_PQ_DOORBELL_CONTROL.get(doorbell, "doorbell_en"):
            refuse("CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_EN is 0: nothing could ever start the queue")
        offset = gc.CP_HQD_PQ_DOORBELL_CONTROL.get(doorbell, "doorbell_offset") << 2  # bytes in the doorbell BAR
        regs = self.soc.regs
        lo = regs.declared(gc.CP_MEC_DOORBELL_RANGE_LOWER).get(regs.get(gc.CP_MEC_DOORBELL_RANGE_LOWER, x),
                                                               "doorbell_range_lower") << 2
        hi = regs.declared(gc.CP_MEC_DOORBELL_RANGE_UPPER).get(regs.get(gc.CP_MEC_DOORBELL_RANGE_UPPER, x),
                                                               "doorbell_range_upper") << 2
        if not lo <= offset <= hi:
            refuse(f"doorbell at byte {offset:#x} (CP_HQD_PQ_DOORBELL_CONTROL) is outside the MEC's doorbell range "
                   f"[{lo:#x}, {hi:#x}] (CP_MEC_DOORBELL_RANGE_LOWER/UPPER)")
        vmid = gc.CP_HQD_VMID.get(reg(gc.CP_HQD_VMID), "vmid")
        if not self.soc.gchubs[x].enabled[vmid]:
            refuse(f"CP_HQD_VMID {vmid}: that VM context is not enabled (GCVM_CONTEXT{vmid}_CNTL)")
        if reg(gc.CP_HQD_PQ_RPTR) or reg(gc.CP_HQD_PQ_WPTR_LO) or reg(gc.CP_HQD_PQ_WPTR_HI):
            refuse("CP_HQD_PQ_RPTR / CP_HQD_PQ_WPTR_LO/HI are not 0: resuming a queue mid-ring is not modelled")
        rptr = (reg(gc.CP_HQD_PQ_RPTR_REPORT_ADDR) & ~3) | (reg(gc.CP_HQD_PQ_RPTR_REPORT_ADDR_HI) & 0xFFFF) << 32
        wptr = (reg(gc.CP_HQD_PQ_WPTR_POLL_ADDR) & ~7) | (reg(gc.CP_HQD_PQ_WPTR_POLL_ADDR_HI) & 0xFFFF) << 32
        fmt = "aql" if gc.CP_HQD_AQL_CONTROL.get(reg(gc.CP_HQD_AQL_CONTROL), "control0") else "pm4"
        _, me, pipe, queue = key
        xcc = f"x{x}." if self.xccs > 1 else ""
        try:
            q = self.soc.gpu.create_queue(fmt, ring, size, vmid, offset // 8, rptr, wptr,
                                          name=f"hqd{xcc}{me}.{pipe}.{queue}", engine=pipe)
        except ValueError as e:
            refuse(str(e))
        self.queues[key] = q
        self.soc.queue_owner[q.name] = ("cp", me, pipe, queue)

    def _remove(self, key: tuple) -> None:
        if self.members.pop(key, None) is not None:
            return
        q = self.queues.pop(key, None)
        if q is None:
            return
        for member in [k for k, lead in self.members.items() if lead == key]:
            del self.members[member]
        if q in self.soc.gpu.queues:
            self.soc.gpu.destroy_queue(q)
        self.soc.queue_owner.pop(q.name, None)

    def _soft_reset(self, x: int, value: int) -> None:
        r = self.soc.regs.declared(gc.GRBM_SOFT_RESET)
        if r.get(value, "soft_reset_cp") or r.get(value, "soft_reset_cpc"):
            for key in [k for k in (*self.queues, *self.members) if k[0] == x]:
                self._remove(key)
                self.banks[key][gc.CP_HQD_ACTIVE.offset] = 0
        for engine in range(gc.SDMA_ENGINES):
            if f"soft_reset_sdma{engine}" in r.fields.fields and r.get(value, f"soft_reset_sdma{engine}"):
                self.soc.sdma.remove(engine)

    def describe(self) -> list[str]:
        """The active HQDs."""
        out = [f"HQD {f'XCC {x} ' if self.xccs > 1 else ''}ME {me} pipe {p} queue {q}: "
               f"{self.queues[(x, me, p, q)].name}" for x, me, p, q in sorted(self.queues)]
        return out + [f"HQD XCC {k[0]} ME {k[1]} pipe {k[2]} queue {k[3]}: part of {self.queues[lead].name}"
                      for k, lead in sorted(self.members.items())]
