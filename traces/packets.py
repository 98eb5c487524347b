"""Decoding of the packets a ring carries (PM4 type 3, AQL, SDMA v6) into one-line descriptions plus the facts
`show` and `export` need: the kernel code address of a dispatch, the addresses the GPU writes timestamps to,
and the copies SDMA makes (so a reader can follow data into memory the host never maps)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from simgpu.hw import aql, regs, sdma
from simgpu.hw import pm4 as hw
from simgpu.hw.bits import u64 as _u64

_KD_ENTRY_OFFSET = 16  # kernel_code_entry_byte_offset (i64) in the 64-byte kernel descriptor


@dataclass
class Packet:
    """One decoded packet: its text and what it means for time and memory."""

    text: str
    kind: str = "other"  # "dispatch", "copy", "other"
    code: int | None = None  # dispatch: kernel code VA
    stamp: int | None = None  # VA the GPU writes a 64-bit timestamp to (RELEASE_MEM GPU_CLOCK, SDMA TIMESTAMP)
    signal: int | None = None  # AQL completion signal VA (amd_signal_t start_ts/end_ts)
    copy: tuple[int, int, int] | None = None  # SDMA COPY_LINEAR (dst, src, bytes)
    fill: tuple[int, int, int] | None = None  # SDMA CONST_FILL (dst, dword value, bytes)


def _name(enum, v: int) -> str:
    try:
        return enum(v).name
    except ValueError:
        return f"{v:#x}"


# ---- PM4 --------------------------------------------------------------------------------------------
def _pm4_release_mem(b: list[int]) -> Packet:
    cntl = hw.RELEASE_MEM_DATA_CNTL.unpack(b[1])
    data_sel = cntl["data_sel"]
    addr = _u64(b[2], b[3])
    text = (f"RELEASE_MEM event={_name(hw.Event, hw.EVENT_CNTL.event_type.get(b[0]))} "
            f"data_sel={_name(hw.DataSel, data_sel)} int_sel={_name(hw.IntSel, cntl['int_sel'])} addr={addr:#x}")
    if data_sel in (hw.DataSel.DATA32, hw.DataSel.DATA64):
        text += f" data={_u64(b[4], b[5]):#x}"
    return Packet(text, stamp=addr if data_sel == hw.DataSel.GPU_CLOCK else None)


def _pm4_set_sh_reg(b: list[int], state: dict[int, int]) -> Packet:
    base = regs.SH_REG_START + hw.REG_OFFSET.get(b[0])
    pairs = []
    for i, v in enumerate(b[1:]):
        state[base + i] = v
        pairs.append(f"{regs.name(base + i)}={v:#x}")
    return Packet("SET_SH_REG " + " ".join(pairs))


def _pm4_body(op: int, b: list[int], state: dict[int, int]) -> Packet:
    if op == hw.Op.SET_SH_REG and b:
        return _pm4_set_sh_reg(b, state)
    if op == hw.Op.DISPATCH_DIRECT and len(b) >= 4:
        code = regs.address_of(state.get(regs.COMPUTE_PGM_LO, 0), state.get(regs.COMPUTE_PGM_HI, 0))
        block = [regs.NUM_THREAD.num_thread_full.get(state.get(r, 0))
                 for r in (regs.COMPUTE_NUM_THREAD_X, regs.COMPUTE_NUM_THREAD_Y, regs.COMPUTE_NUM_THREAD_Z)]
        return Packet(f"DISPATCH_DIRECT groups={b[0]}x{b[1]}x{b[2]} block={'x'.join(map(str, block))} "
                      f"initiator={b[3]:#x} code={code:#x}", "dispatch", code=code)
    if op == hw.Op.RELEASE_MEM and len(b) >= 7:
        return _pm4_release_mem(b)
    if op == hw.Op.WRITE_DATA and len(b) >= 3:
        return Packet(f"WRITE_DATA dst_sel={hw.WRITE_DATA_CONTROL.dst_sel.get(b[0])} addr={_u64(b[1], b[2]):#x} "
                      f"dwords={len(b) - 3}")
    if op == hw.Op.WAIT_REG_MEM and len(b) >= 5:
        return Packet(f"WAIT_REG_MEM func={_name(hw.Compare, hw.WAIT_REG_MEM_CONTROL.function.get(b[0]))} "
                      f"addr={_u64(b[1], b[2]):#x} "
                      f"ref={b[3]:#x} mask={b[4]:#x}")
    if op == hw.Op.INDIRECT_BUFFER and len(b) >= 3:
        return Packet(f"INDIRECT_BUFFER addr={_u64(b[0], hw.IB_BASE_HI.get(b[1])):#x} "
                      f"dwords={hw.IB_CONTROL.ib_size.get(b[2])}")
    if op == hw.Op.EVENT_WRITE and b:
        event = hw.EVENT_CNTL.unpack(b[0])
        return Packet(f"EVENT_WRITE event={_name(hw.Event, event['event_type'])} index={event['event_index']}")
    if op == hw.Op.DISPATCH_INDIRECT and len(b) >= 2:
        return Packet(f"DISPATCH_INDIRECT addr={_u64(b[0], b[1]):#x}", "dispatch",
                      code=regs.address_of(state.get(regs.COMPUTE_PGM_LO, 0), state.get(regs.COMPUTE_PGM_HI, 0)))
    return Packet(f"{_name(hw.Op, op)} ({len(b)} dwords)")


def decode_pm4(dwords: list[int], state: dict[int, int]) -> list[Packet]:
    """PM4 packets of a dword run; `state` is the queue's SH register file (updated by SET_SH_REG)."""
    out, i = [], 0
    while i < len(dwords):
        ptype, op, n = hw.parse_header(dwords[i])
        if dwords[i] == hw.PACKET_TYPE2:
            i += 1
            continue
        if ptype != 3:
            out.append(Packet(f"type-{ptype} header {dwords[i]:#010x} (not decoded; rest of the run skipped)"))
            break
        out.append(_pm4_body(op, dwords[i + 1:i + 1 + n], state))
        i += 1 + n
    return out


# ---- AQL --------------------------------------------------------------------------------------------
def decode_aql(data: bytes, read) -> list[Packet]:
    """AQL packets of 64-byte slots; `read(va, n)` reads reconstructed memory (for the kernel's code entry)."""
    out = []
    for pos in range(0, len(data) - aql.PACKET_SIZE + 1, aql.PACKET_SIZE):
        raw = data[pos:pos + aql.PACKET_SIZE]
        ptype, barrier, acq, rel = aql.parse_header(int.from_bytes(raw[:2], "little"))
        name = _name(aql.PacketType, ptype)
        if ptype == aql.PacketType.KERNEL_DISPATCH:
            k = aql.KernelDispatchPacket.unpack(raw)
            kobj, signal = k.kernel_object, k.completion_signal
            code = kobj + struct.unpack("<q", read(kobj + _KD_ENTRY_OFFSET, 8))[0]
            grid, wg = "x".join(map(str, k.grid_size)), "x".join(map(str, k.workgroup_size))
            out.append(Packet(f"AQL KERNEL_DISPATCH dims={aql.SETUP.dimensions.get(k.setup)} grid={grid} "
                              f"workgroup={wg} private={k.private_segment_size} group={k.group_segment_size} "
                              f"kernel_object={kobj:#x} kernarg={k.kernarg_address:#x} signal={signal:#x} "
                              f"code={code:#x}", "dispatch", code=code, signal=signal or None))
        elif ptype in (aql.PacketType.BARRIER_AND, aql.PacketType.BARRIER_OR):
            b = aql.BarrierPacket.unpack(raw)
            deps = [f"{d:#x}" for d in b.dep_signals if d]
            out.append(Packet(f"AQL {name} deps=[{', '.join(deps)}] signal={b.completion_signal:#x}"))
        else:
            out.append(Packet(f"AQL {name} barrier={int(barrier)} acquire={acq} release={rel}"))
    return out


# ---- SDMA -------------------------------------------------------------------------------------------
def _sdma_length(op: int, sub: int, d: list[int], i: int) -> int:
    if op == sdma.Op.NOP:
        return 1 + sdma.NOP_HEADER.count.get(d[i])
    if op == sdma.Op.WRITE:
        return 4 + (sdma.WRITE_COUNT.get(d[i + 3]) + 1 if i + 3 < len(d) else 0)
    return sdma.LENGTH.get((op, sub), 0)


def _sdma_packet(op: int, sub: int, p: list[int]) -> Packet:
    if op == sdma.Op.COPY and sub == sdma.SUBOP_COPY_LINEAR:
        n, src, dst = sdma.COPY_LINEAR_COUNT.get(p[1]) + 1, _u64(p[3], p[4]), _u64(p[5], p[6])
        return Packet(f"SDMA COPY_LINEAR dst={dst:#x} src={src:#x} bytes={n}", "copy", copy=(dst, src, n))
    if op == sdma.Op.CONST_FILL:
        n, dst = sdma.CONST_FILL_COUNT.get(p[4]) + 1, _u64(p[1], p[2])
        return Packet(f"SDMA CONST_FILL dst={dst:#x} value={p[3]:#x} bytes={n}", "copy", fill=(dst, p[3], n))
    if op == sdma.Op.WRITE:
        return Packet(f"SDMA WRITE_UNTILED dst={_u64(p[1], p[2]):#x} dwords={len(p) - 4}")
    if op == sdma.Op.FENCE:
        return Packet(f"SDMA FENCE addr={_u64(p[1], p[2]):#x} value={p[3]:#x}")
    if op == sdma.Op.TRAP:
        return Packet(f"SDMA TRAP int_context={sdma.TRAP_INT_CONTEXT.get(p[1]):#x}")
    if op == sdma.Op.TIMESTAMP and sub != sdma.SUBOP_TIMESTAMP_SET:
        addr = _u64(p[1], p[2])
        return Packet(f"SDMA TIMESTAMP addr={addr:#x}", stamp=addr)
    if op == sdma.Op.POLL_REGMEM:
        return Packet(f"SDMA POLL_REGMEM addr={_u64(p[1], p[2]):#x} ref={p[3]:#x} mask={p[4]:#x}")
    kind = "copy" if op == sdma.Op.COPY else "other"
    return Packet(f"SDMA {_name(sdma.Op, op)} sub_op={sub} ({len(p)} dwords)", kind)


def decode_sdma(dwords: list[int]) -> list[Packet]:
    """SDMA packets of a dword run."""
    out, i = [], 0
    while i < len(dwords):
        op, sub = sdma.parse_header(dwords[i])
        n = _sdma_length(op, sub, dwords, i)
        if n == 0 or i + n > len(dwords):
            out.append(Packet(f"SDMA header {dwords[i]:#010x} (unknown length; rest of the run skipped)"))
            break
        out.append(_sdma_packet(op, sub, dwords[i:i + n]))
        i += n
    return out
