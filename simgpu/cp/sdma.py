"""The SDMA engine (v6's packets; on gfx942 SDMA 4.4's narrower fields): processes an SDMA queue's ring (byte
pointers) and one level of indirect buffer.

Packet layouts come from simgpu.hw.sdma; the fields SDMA 4.4 declares narrower are decoded in the chip's version,
and a v5+ value in them (a count past 22 bits, FENCE cache fields) is refused, naming it. Copies and fills go
through the MMU page by page (simgpu.cp.dma); POLL_REGMEM and looping atomics block the queue until satisfied; TRAP
raises an interrupt event.
"""

from __future__ import annotations

from struct import pack_into, unpack_from

from simgpu import clock as costs
from simgpu.cp.queue import (
    Frame,
    PacketError,
    Queue,
    canonical,
    observed_u32,
    packet_va,
    read_dwords,
    read_frame,
    window_dwords,
    write_u32,
    write_u64,
)
from simgpu.hw import pm4 as hw_pm4
from simgpu.hw import sdma as hw
from simgpu.hw.bits import Field, u64
from simgpu.interrupt import Interrupt, Kind, Source

MAX_SUB_WINDOW_ROWS = 1 << 18  # simulator limit: rows (y * z) of one sub-window copy


FETCH_DWORDS = 8  # dwords read at a packet's start: the header and, for most packets, all of it (COPY_LINEAR 7)
_DWORDS = [f"<{n}I" for n in range(FETCH_DWORDS + 1)]
PAGE_DWORDS = 4096 // 4


def _fetch(mmu, vmid: int, va: int, n: int, window: list) -> list[int]:
    """The n dwords at `va`, one read: SDMAProcessor.execute asks for up to FETCH_DWORDS at a packet's start, never
    past the stream's end (wptr, the IB's length), the ring's wrap or the header's page -- so the read faults only
    where the header's own read would. The packet's own dwords are read at its start, after the packets before it
    ran, as one read each did before.

    `window` ([page, memory, MMU generation] for one execute call) keeps the memory of the page the last packet came
    from (the MMU's page_view: live memory, so a packet sees what the packets before it wrote) until the MMU's next
    invalidation or eviction: execute unpacks the next packet on that page from it at once, and calls this for the
    others. A page not remembered yet is read through the MMU, which translates and faults."""
    got = window_dwords(mmu, vmid, va, n, window)
    return got if got is not None else mmu.dwords(vmid, va, n)


def _rptr_report(mmu, q: Queue) -> memoryview | None:
    """The memory of the page the queue reports its rptr to, for one execute call (the MMU's page_view for a write:
    None where the translation is not cached yet, or the MMU marks writes for a sanitizer; then report_rptr)."""
    if not q.rptr_addr or q.rptr_addr & 4095 > 4096 - 8:
        return None
    return mmu.page_view(q.vmid, q.rptr_addr, "write")


class SDMAProcessor:
    """Runs SDMA packets for the SDMA queues of one device."""

    def __init__(self, gpu):
        self.gpu = gpu
        self.v4 = gpu.chip.sdma_version[0] == 4
        self.handlers = {
            (hw.Op.COPY, hw.SUBOP_COPY_LINEAR): self.copy_linear,
            (hw.Op.COPY, hw.SUBOP_COPY_LINEAR_SUB_WIND): self.copy_sub_window,
            (hw.Op.WRITE, hw.SUBOP_WRITE_LINEAR): self.write_untiled, (hw.Op.INDIRECT, 0): self.indirect,
            (hw.Op.FENCE, 0): self.fence, (hw.Op.TRAP, 0): self.trap, (hw.Op.POLL_REGMEM, 0): self.poll_regmem,
            (hw.Op.ATOMIC, 0): self.atomic, (hw.Op.CONST_FILL, 0): self.const_fill,
            (hw.Op.TIMESTAMP, hw.SUBOP_TIMESTAMP_SET): self.timestamp_set,
            (hw.Op.TIMESTAMP, hw.SUBOP_TIMESTAMP_GET): self.timestamp_get,
            (hw.Op.TIMESTAMP, hw.SUBOP_TIMESTAMP_GET_GLOBAL): self.timestamp_get, (hw.Op.GCR_REQ, 0): self.gcr_req}
        # header & 0xFFFF (op, sub-op) -> (handler, dwords) of every fixed-length packet: one look per packet
        self.kinds = {op | sub << 8: (self.handlers[op, sub], n) for (op, sub), n in hw.LENGTH.items()}

    def execute(self, q: Queue, budget: int) -> tuple[str, int]:
        """Process packets until idle, blocked or out of budget; returns (status, packets run)."""
        if q.wptr % 4:
            raise PacketError(f"SDMA wptr {q.wptr} is not dword aligned")
        ring = q.stack[0]
        ring.end = q.wptr // 4
        done, mmu, vmid, stack, clock = 0, self.gpu.mmu, q.vmid, q.stack, self.gpu.clock
        kinds, window = self.kinds, [None, None, None]
        report, report_at = _rptr_report(mmu, q), q.rptr_addr & 4095
        while done < budget:
            top = stack[-1]
            pos = top.pos
            if pos >= top.end:
                if len(stack) == 1:
                    return "idle", done
                stack.pop()
                continue
            # The packet's first dwords (_fetch): from the page the last packet came from while the MMU's generation
            # holds, here without a call (five packets a copy round), else through _fetch.
            if top.ring:
                off = pos % top.size_dw
                va = top.base + 4 * off
                n = min(FETCH_DWORDS, top.end - pos, PAGE_DWORDS - ((va & 4095) >> 2), top.size_dw - off)
            else:
                va = top.base + 4 * pos
                n = min(FETCH_DWORDS, top.end - pos, PAGE_DWORDS - ((va & 4095) >> 2))
            if window[0] == va >> 12 and window[1] is not None and window[2] == mmu.generation:
                head = list(unpack_from(_DWORDS[n], window[1], va & 4095))  # (n >= 1: pos < end)
            else:
                q.current = (top, pos, [])
                head = _fetch(mmu, vmid, va, n, window)
            kind = kinds.get(head[0] & 0xFFFF)  # op and sub-op: the fixed-length packets (hw.LENGTH)
            if kind is not None and pos + kind[1] <= top.end:
                handler, length = kind
            else:
                q.current = (top, pos, head[:1])
                key, length = self._length(q, top, head)
                if pos + length > top.end:
                    raise PacketError(f"packet of {length} dwords runs past the end of the "
                                      f"{'ring (wptr)' if top.ring else 'indirect buffer'} ({top.end - pos} left)")
                handler = self.handlers.get(key)
            if length <= len(head):
                pkt = head[:length]
            else:  # (the rest of a packet that crosses the header's page: a fault there names the header)
                q.current = (top, pos, head[:1])
                pkt = read_frame(mmu, vmid, top, pos, length)
            q.current = (top, pos, pkt)
            result = handler(q, pkt) if handler is not None else None
            if isinstance(result, str):
                q.waiting = f"{result} (packet at {top.where(pos)})"
                return "blocked", done
            clock.cycles += costs.SDMA_PACKET_CYCLES  # (Clock.advance, without the call: five a copy round)
            top.pos = pos + length
            done += 1
            if result is not None:  # an INDIRECT's frame
                if len(stack) > 1:
                    raise PacketError("SDMA INDIRECT inside an indirect buffer")
                stack.append(result)
            if len(stack) == 1:
                if report is None:
                    self.gpu.report_rptr(q, top.pos * 4)
                else:  # (report_rptr's write, into the page's memory)
                    q.rptr = rptr = top.pos * 4
                    pack_into("<Q", report, report_at, rptr & 0xFFFFFFFFFFFFFFFF)
        return "budget", done

    def _length(self, q: Queue, top: Frame, head: list[int]) -> tuple[tuple[int, int], int]:
        """The packet's handler key and length in dwords, from its first dwords as fetched (`head`: at least one)."""
        h = head[0]
        op, sub = hw.parse_header(h)
        if op == hw.Op.NOP:
            return (op, sub), 1 + hw.NOP_HEADER.count.get(h)
        if (op, sub) == (hw.Op.WRITE, hw.SUBOP_WRITE_LINEAR):
            if top.pos + 4 > top.end:
                raise PacketError("WRITE_UNTILED header runs past the end of the stream")
            word = head[3] if len(head) > 3 else read_frame(self.gpu.mmu, q.vmid, top, top.pos + 3, 1)[0]
            return (op, sub), 4 + hw.WRITE_COUNT.get(word) + 1
        length = hw.LENGTH.get((op, sub))
        if length is None:
            name = hw.Op(op).name if op in hw.Op._value2member_map_ else f"{op:#x}"
            raise PacketError(f"unsupported SDMA packet op {name} sub-op {sub}")
        return (op, sub), length

    # ---------------------------------------------------------------------------------------------- packets
    def _count(self, word: int, name: str, v4: Field, v6: Field) -> int:
        """A COPY_LINEAR / CONST_FILL byte count (count + 1) in the engine's field width."""
        if not self.v4:
            return v6.get(word) + 1
        if word >> v4.width:
            raise PacketError(f"{name} count {word:#x} does not fit SDMA 4.4's {v4.width}-bit field (at most "
                              f"{v4.mask + 1} bytes a packet; the {v6.width}-bit count is SDMA 5+'s)")
        return v4.get(word) + 1

    def copy_linear(self, q: Queue, p: list[int]) -> None:
        if hw.COPY_HEADER.broadcast.get(p[0]):
            raise PacketError("COPY_LINEAR broadcast is not supported")
        nbytes = self._count(p[1], "COPY_LINEAR", hw.COPY_LINEAR_COUNT_V4, hw.COPY_LINEAR_COUNT)
        self.gpu.dma.copy(q.vmid, packet_va(p[5], p[6]), packet_va(p[3], p[4]), nbytes)

    def copy_sub_window(self, q: Queue, p: list[int]) -> None:
        es = 1 << hw.SUB_WIND_HEADER.element_size.get(p[0])
        if es > 16:
            raise PacketError(f"COPY_LINEAR_SUB_WINDOW element size {es} bytes (at most 16)")
        src, (sx, sy, sz), spitch, sslice = hw.sub_window_surface(p, 1)
        dst, (dx, dy, dz), dpitch, dslice = hw.sub_window_surface(p, 6)
        src, dst = canonical(src), canonical(dst)
        rect = hw.SUB_WIND_XY.unpack(p[11])
        rx, ry, rz = rect["x"] + 1, rect["y"] + 1, hw.SUB_WIND_RECT_Z.get(p[12]) + 1
        if self.v4 and max(sz, dz, rz - 1) > hw.SUB_WIND_Z_V4.mask:
            raise PacketError(f"COPY_LINEAR_SUB_WINDOW z ({sz}, {dz}) or depth {rz} does not fit SDMA 4.4's 11-bit "
                              "fields (13 bits are SDMA 5+'s)")
        if ry * rz > MAX_SUB_WINDOW_ROWS:
            raise PacketError(f"sub-window of {ry * rz} rows exceeds the simulator limit {MAX_SUB_WINDOW_ROWS}")
        mmu, row = self.gpu.mmu, rx * es
        first_dst = dst + (dz * dslice + dy * dpitch + dx) * es
        first_src = src + (sz * sslice + sy * spitch + sx) * es
        self.gpu.clock.advance_transfer(row * ry * rz, self.gpu.dma.link(q.vmid, first_dst, "write"),
                                        self.gpu.dma.link(q.vmid, first_src, "read"))
        for z in range(rz):
            for y in range(ry):
                s = src + ((sz + z) * sslice + (sy + y) * spitch + sx) * es
                d = dst + ((dz + z) * dslice + (dy + y) * dpitch + dx) * es
                mmu.write(q.vmid, d, mmu.read(q.vmid, s, row))

    def write_untiled(self, q: Queue, p: list[int]) -> None:
        data, dst = p[4:], canonical(u64(p[1], p[2]) & ~3)
        self.gpu.clock.advance_transfer(4 * len(data), self.gpu.dma.link(q.vmid, dst, "write"))
        self.gpu.mmu.write(q.vmid, dst, b"".join(v.to_bytes(4, "little") for v in data))

    def const_fill(self, q: Queue, p: list[int]) -> None:
        size = hw.CONST_FILL_HEADER.fillsize.get(p[0])
        if size not in (0, 2):
            raise PacketError(f"CONST_FILL fill size {size} (only 0 = byte and 2 = dword)")
        pattern = p[3].to_bytes(4, "little")[:1 if size == 0 else 4]
        nbytes = self._count(p[4], "CONST_FILL", hw.CONST_FILL_COUNT_V4, hw.CONST_FILL_COUNT)
        self.gpu.dma.fill(q.vmid, canonical(u64(p[1], p[2])), pattern, nbytes)

    def fence(self, q: Queue, p: list[int]) -> None:
        if self.v4 and p[0] & hw.FENCE_HEADER_RESERVED_V4:
            raise PacketError(f"FENCE header bits {p[0] & hw.FENCE_HEADER_RESERVED_V4:#010x} are SDMA 5+'s cache "
                              f"fields (MTYPE {hw.FENCE_HEADER.mtype.get(p[0])}, ...), reserved on SDMA 4.4")
        addr = packet_va(p[1], p[2]) & ~3
        page = self.gpu.mmu.page_view(q.vmid, addr, "write")  # (the dword is aligned: it lies in one page)
        if page is None:  # not cached yet, or a sanitizer marks CP writes: through the MMU, which faults
            write_u32(self.gpu.mmu, q.vmid, addr, p[3])
        else:
            pack_into("<I", page, addr & 4095, p[3] & 0xFFFFFFFF)

    def trap(self, q: Queue, p: list[int]) -> None:
        self.gpu.interrupt(Interrupt(Source.SDMA, Kind.SDMA_TRAP, q.name, context_id=hw.TRAP_INT_CONTEXT.get(p[1])))

    def poll_regmem(self, q: Queue, p: list[int]) -> str | None:
        h = p[0]
        if hw.POLL_HEADER.hdp_flush.get(h):
            return None  # an HDP flush request: there is no host data path cache to flush
        func = hw.POLL_HEADER.func.get(h)
        if func == 7:
            raise PacketError("POLL_REGMEM compare function 7 is reserved")
        ref, mask = p[3], p[4]
        if hw.POLL_HEADER.mem_poll.get(h):
            addr = packet_va(p[1], p[2]) & ~3
            gpu = self.gpu
            value = read_dwords(gpu.mmu, q.vmid, addr, 1)[0] if gpu.observer is None else \
                observed_u32(gpu, "POLL_REGMEM", q.vmid, addr)
        else:
            reg = hw.POLL_REG_ADDR.get(p[1])
            value = self.gpu.pm4.read_reg(q, reg)
        if hw_pm4.compare(func, value & mask, ref):
            return None
        what = f"memory at VA {addr:#x}" if hw.POLL_HEADER.mem_poll.get(h) else f"register {reg:#x}"  # (a wait only)
        return f"POLL_REGMEM: {what} = {value:#x}; waiting for (value & {mask:#x}) {hw_pm4.Compare(func).name} {ref:#x}"

    def atomic(self, q: Queue, p: list[int]) -> str | None:
        head = hw.ATOMIC_HEADER.unpack(p[0])
        return self.gpu.dma.atomic(q, head["operation"], canonical(u64(p[1], p[2])), u64(p[3], p[4]), u64(p[5], p[6]),
                                   loop=bool(head["loop"]), what="SDMA ATOMIC")

    def timestamp_set(self, q: Queue, p: list[int]) -> None:
        q.local_ts_offset = u64(p[1], p[2]) - self.gpu.clock.timestamp()

    def timestamp_get(self, q: Queue, p: list[int]) -> None:
        addr = canonical(u64(p[1], p[2]))
        if addr % 8:
            raise PacketError(f"TIMESTAMP address {addr:#x} is not 8-byte aligned")
        local = hw.HEADER.sub_op.get(p[0]) == hw.SUBOP_TIMESTAMP_GET
        write_u64(self.gpu.mmu, q.vmid, addr, self.gpu.clock.timestamp() + (q.local_ts_offset if local else 0))

    def gcr_req(self, q: Queue, p: list[int]) -> None:
        return None  # caches are not modelled

    def indirect(self, q: Queue, p: list[int]) -> Frame | None:
        size = hw.INDIRECT_SIZE.get(p[3])
        if size == 0:
            return None
        return Frame(canonical(u64(p[1], p[2]) & ~0x1F), size, 0, size)
