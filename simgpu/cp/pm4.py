"""The PM4 command processor of a compute queue (MEC): parses type-3 packets from the ring and IBs.

Execution state is a stack of frames: the ring (positions in dwords, wrapping, ending at wptr) and the
indirect buffers it called. A packet whose wait is not satisfied leaves the stack as it is and reports
the queue blocked; the next run retries that packet. A bad packet raises PacketError, which the device
turns into the queue's error report. Packet layouts come from simgpu.hw.pm4 (shared with the runtime); the
packets gfx9 lays out differently (ACQUIRE_MEM, RELEASE_MEM's cache actions, COMPUTE_PGM_RSRC3's address) are
decoded in the device's family's form from simgpu.hw.pm4_gfx9, and the other family's form is refused by name.
"""

from __future__ import annotations

from collections.abc import Callable

from simgpu import clock as costs
from simgpu.cp import launch
from simgpu.cp.queue import (
    Frame,
    PacketError,
    Queue,
    canonical,
    observed_u32,
    read_dwords,
    read_frame,
    window_dwords,
    write_u32,
    write_u64,
)
from simgpu.hw import pm4 as hw
from simgpu.hw import pm4_gfx9, regs
from simgpu.hw.bits import u64
from simgpu.interrupt import Interrupt, Kind, Source

MAX_IB_DEPTH = 4  # ring + nested IBs (hardware has IB1 and IB2; chaining does not nest)


class Block:
    """A packet's wait is not satisfied: what it waits for."""

    def __init__(self, why: str):
        self.why = why


class Push:
    """A packet starts an indirect buffer (call, or jump when chained)."""

    def __init__(self, frame: Frame, chain: bool):
        self.frame, self.chain = frame, chain


class Skip:
    """Skip dwords after this packet (PRED_EXEC not selected)."""

    def __init__(self, dwords: int):
        self.dwords = dwords


def _words(mmu, vmid: int, top: Frame, pos: int, n: int, window: list) -> list[int]:
    """read_frame(pos, n), from the page window (queue.window_dwords; a packet may write the invalidation register,
    which moves the MMU's generation) when the n dwords lie in one page and do not wrap the ring; else through the
    MMU, which translates and faults."""
    va = top.base + 4 * (pos % top.size_dw if top.ring else pos)
    if (va & 4095) + 4 * n <= 4096 and (not top.ring or pos % top.size_dw + n <= top.size_dw):
        got = window_dwords(mmu, vmid, va, n, window)
        if got is not None:
            return got
    return read_frame(mmu, vmid, top, pos, n)


def _addr(lo: int, hi: int, align: int = 4) -> int:
    """A packet address (low bits below the alignment are other fields or ignored)."""
    return canonical(u64(lo, hi) & ~(align - 1))


class PM4Processor:
    """Runs PM4 packets for the queues of one device."""

    def __init__(self, gpu):
        self.gpu = gpu
        self.family = gpu.chip.family
        self.gfx9 = self.family == "gfx9"
        self.handlers: dict[int, Callable] = {
            hw.Op.NOP: self.nop, hw.Op.SET_SH_REG: self.set_sh_reg, hw.Op.SET_UCONFIG_REG: self.set_uconfig_reg,
            hw.Op.WRITE_DATA: self.write_data, hw.Op.COPY_DATA: self.copy_data, hw.Op.WAIT_REG_MEM: self.wait_reg_mem,
            hw.Op.RELEASE_MEM: self.release_mem, hw.Op.ACQUIRE_MEM: self.acquire_mem,
            hw.Op.EVENT_WRITE: self.event_write, hw.Op.DISPATCH_DIRECT: self.dispatch_direct,
            hw.Op.DISPATCH_INDIRECT: self.dispatch_indirect, hw.Op.INDIRECT_BUFFER: self.indirect_buffer,
            hw.Op.PRED_EXEC: self.pred_exec, hw.Op.DMA_DATA: self.dma_data, hw.Op.ATOMIC_MEM: self.atomic_mem}

    # ---------------------------------------------------------------------------------------------- stepping
    def execute(self, q: Queue, stack: list[Frame], budget: int) -> tuple[str, int]:
        """Run packets until the base frame is exhausted ('idle'), a wait blocks ('blocked') or the budget ends
        ('budget'); returns (status, packets run). Raises PacketError (with q.current set) for a bad packet."""
        mmu, done, window = self.gpu.mmu, 0, [None, None, None]
        while done < budget:
            top = stack[-1]
            if top.pos >= top.end:
                if len(stack) == 1:
                    return "idle", done
                stack.pop()
                continue
            q.current = (top, top.pos, [])
            h = _words(mmu, q.vmid, top, top.pos, 1, window)[0]
            q.current = (top, top.pos, [h])
            ptype, op, nbody = hw.parse_header(h)
            if ptype == 2:
                top.pos += 1
                self.gpu.clock.advance(1)
                if top.ring and len(stack) == 1:
                    self.gpu.report_rptr(q, top.pos)
                continue
            if ptype != 3:
                raise PacketError(f"type-{ptype} packet on a compute queue (only type 3 and type-2 filler are valid)")
            if top.pos + 1 + nbody > top.end:
                raise PacketError(f"packet of {1 + nbody} dwords runs past the end of the "
                                  f"{'ring (wptr)' if top.ring else 'indirect buffer'} ({top.end - top.pos} left)")
            body = _words(mmu, q.vmid, top, top.pos + 1, nbody, window)
            q.current = (top, top.pos, [h, *body])
            handler = self.handlers.get(op)
            if handler is None:
                raise PacketError(f"unsupported PM4 opcode {_opname(op)} on a compute queue")
            act = handler(q, body)
            if isinstance(act, Block):
                q.waiting = f"{act.why} (packet {_opname(op)} at {top.where(top.pos)})"
                return "blocked", done
            self.gpu.clock.advance(costs.PM4_PACKET_CYCLES)
            top.pos += 1 + nbody
            done += 1
            if isinstance(act, Skip):
                if top.pos + act.dwords > top.end:
                    raise PacketError(f"PRED_EXEC skips {act.dwords} dwords past the end of the stream")
                top.pos += act.dwords
            if top.ring and len(stack) == 1:
                self.gpu.report_rptr(q, top.pos)
            if isinstance(act, Push):
                self._push(stack, act)
        return "budget", done

    @staticmethod
    def _push(stack: list[Frame], act: Push) -> None:
        if act.chain and len(stack) > 1:
            stack[-1] = act.frame  # a chained IB replaces the current one: no return
            return
        if len(stack) >= MAX_IB_DEPTH:
            raise PacketError(f"indirect buffers nested deeper than {MAX_IB_DEPTH - 1} levels")
        stack.append(act.frame)

    # ---------------------------------------------------------------------------------------------- registers
    def read_reg(self, q: Queue, reg: int) -> int:
        """A register as the CP reads it: the queue's SH state, then the device's other registers."""
        if regs.SH_REG_START <= reg < regs.SH_REG_END:
            return q.regs.get(reg, 0)
        if reg in self.gpu.perfmon.registers:  # counters and thread-trace state read live (simgpu.profile)
            return self.gpu.perfmon.read(q, reg)
        return self.gpu.regs.get(reg, 0)

    def write_reg(self, q: Queue, reg: int, value: int) -> None:
        """Write an SH register (per queue) or another register (device-wide)."""
        perfmon = self.gpu.perfmon
        if regs.SH_REG_START <= reg < regs.SH_REG_END:
            if self.gfx9 and reg == regs.COMPUTE_PGM_RSRC3:
                raise PacketError(f"register {reg:#x} is gfx10+'s COMPUTE_PGM_RSRC3; gfx9 has none there (its "
                                  f"COMPUTE_PGM_RSRC3 is {regs.COMPUTE_PGM_RSRC3_GFX9:#x})")
            q.regs[reg] = value & 0xFFFFFFFF
            if perfmon.tracing:
                perfmon.sh_written(q, reg, value & 0xFFFFFFFF)
        else:
            self.gpu.write_reg(reg, value)
            if reg in perfmon.registers:
                perfmon.write(q, reg, value & 0xFFFFFFFF)

    @staticmethod
    def _need(body: list[int], n: int, name: str, exact: bool = True) -> None:
        if len(body) < n or (exact and len(body) != n):
            raise PacketError(f"{name} needs {n}{'' if exact else '+'} body dwords, has {len(body)}")

    # ---------------------------------------------------------------------------------------------- packets
    def nop(self, q: Queue, body: list[int]) -> None:
        return None

    def set_sh_reg(self, q: Queue, body: list[int]) -> None:
        self._set_regs(q, body, regs.SH_REG_START, regs.SH_REG_END, "SET_SH_REG")

    def set_uconfig_reg(self, q: Queue, body: list[int]) -> None:
        self._set_regs(q, body, regs.UCONFIG_REG_START, regs.UCONFIG_REG_END, "SET_UCONFIG_REG")

    def _set_regs(self, q: Queue, body: list[int], start: int, end: int, name: str) -> None:
        self._need(body, 2, name, exact=False)
        first = start + hw.REG_OFFSET.get(body[0])
        if first + len(body) - 1 > end:
            raise PacketError(f"{name} writes registers {first:#x}..{first + len(body) - 2:#x} outside "
                              f"[{start:#x}, {end:#x})")
        if start == regs.SH_REG_START and not self.gfx9 and not self.gpu.perfmon.tracing:
            # the queue's own SH state, nothing watching it: write_reg's work without its per-register tests
            # (an SH write cannot start a trace, so one test serves the packet)
            q.regs.update(zip(range(first, first + len(body) - 1), (v & 0xFFFFFFFF for v in body[1:]), strict=True))
            return
        for i, v in enumerate(body[1:]):
            self.write_reg(q, first + i, v)

    def write_data(self, q: Queue, body: list[int]) -> None:
        self._need(body, 4, "WRITE_DATA", exact=False)
        ctl, data = hw.WRITE_DATA_CONTROL.unpack(body[0]), body[3:]
        dst, one = ctl["dst_sel"], ctl["wr_one_addr"]
        self.gpu.clock.advance(costs.PM4_DWORD_CYCLES * len(data))
        if dst == hw.WriteDst.REGISTER:
            for i, v in enumerate(data):
                self.write_reg(q, hw.REG_ADDR.get(body[1]) + (0 if one else i), v)
        elif dst in (hw.WriteDst.MEMORY_SYNC, hw.WriteDst.TC_L2, hw.WriteDst.MEMORY):
            addr = _addr(body[1], body[2])
            if one:
                write_u32(self.gpu.mmu, q.vmid, addr, data[-1])
            else:
                self.gpu.mmu.write(q.vmid, addr, b"".join(v.to_bytes(4, "little") for v in data))
        else:
            raise PacketError(f"WRITE_DATA DST_SEL {dst} (GDS/reserved) is not supported")

    def copy_data(self, q: Queue, body: list[int]) -> None:
        self._need(body, 5, "COPY_DATA")
        ctl = hw.COPY_DATA_CONTROL.unpack(body[0])
        src, dst, wide = ctl["src_sel"], ctl["dst_sel"], bool(ctl["count_sel"])
        value = self._copy_source(q, src, body, wide)
        if dst == hw.CopyDst.REGISTER:
            reg = hw.REG_ADDR.get(body[3])
            self.write_reg(q, reg, value)
            if wide:
                self.write_reg(q, reg + 1, value >> 32)
        elif dst in (hw.CopyDst.TC_L2, hw.CopyDst.MEMORY):
            addr = _addr(body[3], body[4], 8 if wide else 4)
            (write_u64 if wide else write_u32)(self.gpu.mmu, q.vmid, addr, value)
        else:
            raise PacketError(f"COPY_DATA DST_SEL {dst} (GDS/perfcounter/reserved) is not supported")

    def _copy_source(self, q: Queue, src: int, body: list[int], wide: bool) -> int:
        mmu = self.gpu.mmu
        if src in (hw.CopySrc.REGISTER, hw.CopySrc.PERFCOUNTERS):  # a counter is read as its register
            reg = hw.REG_ADDR.get(body[1])
            lo = self.read_reg(q, reg)
            return u64(lo, self.read_reg(q, reg + 1)) if wide else lo
        if src in (hw.CopySrc.MEMORY, hw.CopySrc.TC_L2):
            words = read_dwords(mmu, q.vmid, _addr(body[1], body[2], 8 if wide else 4), 2 if wide else 1)
            return u64(*words) if wide else words[0]
        if src == hw.CopySrc.IMMEDIATE:
            return u64(body[1], body[2]) if wide else body[1]
        if src in (hw.CopySrc.GPU_CLOCK, hw.CopySrc.SYSTEM_CLOCK):
            ts = self.gpu.clock.timestamp()
            return ts if wide else ts & 0xFFFFFFFF
        if src == hw.CopySrc.ATOMIC_RETURN:
            return q.atomic_return if wide else q.atomic_return & 0xFFFFFFFF
        raise PacketError(f"COPY_DATA SRC_SEL {src} (GDS/perfcounter/reserved) is not supported")

    def wait_reg_mem(self, q: Queue, body: list[int]) -> Block | None:
        self._need(body, 6, "WAIT_REG_MEM")
        ctl, ref, mask = hw.WAIT_REG_MEM_CONTROL.unpack(body[0]), body[3], body[4]
        func, space, operation = ctl["function"], ctl["mem_space"], ctl["operation"]
        if func == 7:
            raise PacketError("WAIT_REG_MEM compare function 7 is reserved")
        if operation == hw.WAIT_REG_MEM_WRITE_WAIT:
            if space != hw.MemSpace.REGISTER:
                raise PacketError("WAIT_REG_MEM OPERATION 1 (write, then wait) works on registers only")
            # Write REFERENCE to the first register once, then poll the second (amdgpu's HDP flush and
            # reg_write_reg_wait); a blocked retry of the same packet does not write again.
            if q.written_by != q.current[:2]:
                self.write_reg(q, hw.REG_ADDR.get(body[1]), ref)
                q.written_by = q.current[:2]
            poll = hw.REG_ADDR.get(body[2])
            value, what = self.read_reg(q, poll), f"register {regs.name(poll)}"
        elif operation != 0:
            raise PacketError(f"WAIT_REG_MEM OPERATION {operation} (preemptable waits) is not supported")
        elif space == hw.MemSpace.MEMORY:
            addr = _addr(body[1], body[2])
            gpu = self.gpu
            value = read_dwords(gpu.mmu, q.vmid, addr, 1)[0] if gpu.observer is None else \
                observed_u32(gpu, "WAIT_REG_MEM", q.vmid, addr)
            what = f"memory at VA {addr:#x}"
        elif space == hw.MemSpace.REGISTER:
            reg = hw.REG_ADDR.get(body[1])
            value, what = self.read_reg(q, reg), f"register {regs.name(reg)}"
        else:
            raise PacketError(f"WAIT_REG_MEM MEM_SPACE {space} is reserved")
        if hw.compare(func, value & mask, ref):
            q.written_by = None
            return None
        return Block(f"WAIT_REG_MEM: {what} = {value:#x}; waiting for (value & {mask:#x}) "
                     f"{hw.Compare(func).name} {ref:#x}")

    def release_mem(self, q: Queue, body: list[int]) -> None:
        self._need(body, 7, "RELEASE_MEM")
        # Caches are not modelled: the cache actions (gfx9's EOP_TC_*, gfx10+'s GCR_CNTL) change no result, but
        # gfx9 reserves the bits only gfx10+ defines.
        if self.gfx9 and (why := pm4_gfx9.release_mem_reserved(body[0])):
            raise PacketError(why)
        cntl = hw.RELEASE_MEM_DATA_CNTL.unpack(body[1])
        data_sel, int_sel, dst_sel = cntl["data_sel"], cntl["int_sel"], cntl["dst_sel"]
        if data_sel > hw.DataSel.SYSTEM_CLOCK:
            raise PacketError(f"RELEASE_MEM DATA_SEL {data_sel} (GDS/reserved) is not supported")
        if int_sel > hw.IntSel.INT_AFTER_WRITE:
            raise PacketError(f"RELEASE_MEM INT_SEL {int_sel} is not supported")
        if dst_sel > 1:
            raise PacketError(f"RELEASE_MEM DST_SEL {dst_sel} is not supported")
        value = None
        if data_sel == hw.DataSel.DATA32:
            value = body[4]
            write_u32(self.gpu.mmu, q.vmid, _addr(body[2], body[3]), value)
        elif data_sel != hw.DataSel.NONE:
            ts = data_sel in (hw.DataSel.GPU_CLOCK, hw.DataSel.SYSTEM_CLOCK)
            value = self.gpu.clock.timestamp() if ts else u64(body[4], body[5])
            write_u64(self.gpu.mmu, q.vmid, _addr(body[2], body[3], 8), value)
        if int_sel != hw.IntSel.NONE:
            self.gpu.interrupt(Interrupt(Source.CP, Kind.END_OF_PIPE, q.name, context_id=body[6], data=value))

    def acquire_mem(self, q: Queue, body: list[int]) -> None:
        # Caches are not modelled (every access goes to memory), so an acquire has nothing to invalidate; its form
        # is the family's: gfx9's 6 dwords with CP_COHER_CNTL first, gfx10+'s 7 with GCR_CNTL last.
        if self.gfx9:
            if len(body) == 7:
                raise PacketError("ACQUIRE_MEM with 7 body dwords is gfx10+'s form (GCR_CNTL last); gfx9 takes 6 (CP_"
                                  "COHER_CNTL, COHER_SIZE, COHER_SIZE_HI, COHER_BASE, COHER_BASE_HI, POLL_INTERVAL)")
            self._need(body, pm4_gfx9.ACQUIRE_MEM_BODY_DWORDS, "ACQUIRE_MEM")
            if bad := body[0] & ~pm4_gfx9.COHER_CNTL_DEFINED:
                raise PacketError(f"ACQUIRE_MEM CP_COHER_CNTL bits {bad:#010x} are reserved on gfx9")
        elif len(body) == pm4_gfx9.ACQUIRE_MEM_BODY_DWORDS:
            raise PacketError(f"ACQUIRE_MEM with 6 body dwords is gfx9's form (CP_COHER_CNTL cache actions); "
                              f"{self.family} takes 7 (GCR_CNTL last)")
        else:
            self._need(body, 7, "ACQUIRE_MEM")

    def event_write(self, q: Queue, body: list[int]) -> None:
        if len(body) not in (1, 3):
            raise PacketError(f"EVENT_WRITE needs 1 or 3 body dwords, has {len(body)}")
        event = hw.EVENT_CNTL.event_type.get(body[0])
        if event not in hw.Event._value2member_map_:
            raise PacketError(f"EVENT_WRITE event type {event:#x} is not a compute event")
        name = hw.Event(event).name
        if name.startswith(("THREAD_TRACE", "PERFCOUNTER", "PIPELINESTAT", "SAMPLE")):
            q.trace.append((name, self.gpu.clock.timestamp()))
        self.gpu.perfmon.event(q, name, event)
        # CS_PARTIAL_FLUSH and cache events: dispatches complete synchronously and caches are not modelled.

    def dispatch_direct(self, q: Queue, body: list[int]) -> None:
        self._need(body, 4, "DISPATCH_DIRECT")
        self._dispatch(q, tuple(body[:3]), body[3])

    def dispatch_indirect(self, q: Queue, body: list[int]) -> None:
        self._need(body, 3, "DISPATCH_INDIRECT")
        dims = read_dwords(self.gpu.mmu, q.vmid, _addr(body[0], body[1]), 3)
        self._dispatch(q, tuple(dims), body[2])

    def _dispatch(self, q: Queue, dims: tuple, initiator: int) -> None:
        if self.gfx9 and regs.DISPATCH_INITIATOR.cs_w32_en.get(initiator):
            raise PacketError("COMPUTE_DISPATCH_INITIATOR.CS_W32_EN is gfx10+'s: gfx9 runs wave64 only")
        for i, d in enumerate(dims):
            self.write_reg(q, regs.COMPUTE_DIM_X + i, d)
        self.write_reg(q, regs.COMPUTE_DISPATCH_INITIATOR, initiator)
        d = launch.pm4_dispatch(q, dims, initiator, self.gpu.chip.family)
        if d is not None:
            launch.run(self.gpu, q, d)

    def indirect_buffer(self, q: Queue, body: list[int]) -> Push | None:
        self._need(body, 3, "INDIRECT_BUFFER")
        control = hw.IB_CONTROL.unpack(body[2])
        size = control["ib_size"]
        if size == 0:
            return None
        base = canonical(u64(body[0] & ~3, hw.IB_BASE_HI.get(body[1])))
        return Push(Frame(base, size, 0, size), bool(control["chain"]))

    def pred_exec(self, q: Queue, body: list[int]) -> Skip | None:
        self._need(body, 1, "PRED_EXEC")
        count, select = hw.PRED_EXEC_CNTL.exec_count.get(body[0]), hw.PRED_EXEC_CNTL.device_select.get(body[0])
        return None if select & self.gpu.device_mask else Skip(count)

    def dma_data(self, q: Queue, body: list[int]) -> None:
        self._need(body, 6, "DMA_DATA")
        ctl, cmd = hw.DMA_DATA_CONTROL.unpack(body[0]), hw.DMA_DATA_COMMAND.unpack(body[5])
        src_sel, dst_sel, nbytes = ctl["src_sel"], ctl["dst_sel"], cmd["byte_count"]
        if src_sel == hw.DmaSrc.GDS or dst_sel in (hw.DmaDst.GDS, 2):
            raise PacketError(f"DMA_DATA SRC_SEL {src_sel} / DST_SEL {dst_sel} (GDS/reserved) is not supported")
        if cmd["sas"] or cmd["das"]:
            raise PacketError("DMA_DATA register address spaces (SAS/DAS) are not supported")
        dst = canonical(u64(body[3], body[4]))
        if src_sel == hw.DmaSrc.DATA:
            self.gpu.dma.fill(q.vmid, dst, body[1].to_bytes(4, "little"), nbytes, fixed_dst=bool(cmd["daic"]))
        else:
            src = canonical(u64(body[1], body[2]))
            self.gpu.dma.copy(q.vmid, dst, src, nbytes, fixed_src=bool(cmd["saic"]), fixed_dst=bool(cmd["daic"]))

    def atomic_mem(self, q: Queue, body: list[int]) -> Block | None:
        self._need(body, 8, "ATOMIC_MEM")
        ctl = hw.ATOMIC_MEM_CONTROL.unpack(body[0])
        op, command = ctl["atomic"], ctl["command"]
        addr = canonical(u64(body[1], body[2]))
        src, cmp = u64(body[3], body[4]), u64(body[5], body[6])
        result = self.gpu.dma.atomic(q, op, addr, src, cmp, loop=command == hw.AtomicCommand.LOOP_UNTIL_COMPARE,
                                     what="ATOMIC_MEM")
        return Block(result) if isinstance(result, str) else None


def _opname(op: int) -> str:
    return hw.Op(op).name if op in hw.Op._value2member_map_ else f"{op:#04x}"
