"""GLOBAL/FLAT stores, for the fused launch (fused.py).

In a round, stores stay sync instructions (region.is_sync): a wave parks before one and the interpreter
runs it for every wave there. A fused batch, which runs each wave from its start to its end, runs them
here, as vmem._store / MMU.scatter do: every active lane's dwords, lane after lane (where lanes overlap,
the highest lane's bytes are the ones left), into a window that allows writes (lower_mem.find_window with
WIN_WRITE). With no such window the memory helper is asked for one (MEM_WRITABLE); if it cannot make one
(a fault, memory that does not translate linearly) the wave exits with EXIT_WRITE and the batch is undone.

Undo log (ctx C_UNDO, C_UNDO_N entries used): before each write the old dwords are kept, so a batch that
cannot finish (or whose order check fails) is put back exactly. An entry is UNDO_WORDS(lanes) int64: the
host address of dword 0, a bit mask of the dwords written, then `lanes` old dwords (dword i at address +
4 i); or, for a byte or short store, the address, minus the count of bytes and the old bytes (never a
byte outside the window). A dword store whose active lanes address consecutive dwords is one entry and
one masked vector store; any other store is an entry per lane.
"""

from __future__ import annotations

import re

from simgpu.mem.windows import WIN_WRITE
from simgpu.shader.jit.lower import C_UNDO, C_UNDO_N, EXIT_WRITE, Lowering, translates
from simgpu.shader.jit.lower_mem import (
    MEM_WRITABLE,
    VA_LIMIT,
    call_helper,
    consecutive,
    find_window,
    lane_addresses,
    lane_offsets,
)

_STORE = re.compile(r"^(global|flat)_store_(d16_hi_)?(b8|b16|b32|b64|b96|b128)$")
_SIZE = {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}
_FORMS = [f"{s}_store_{k}" for s in ("global", "flat") for k in _SIZE] + \
    [f"{s}_store_d16_hi_{k}" for s in ("global", "flat") for k in ("b8", "b16")]


def undo_words(lanes: int) -> int:
    """int64 words of one undo log entry: address, dword mask, `lanes` old dwords."""
    return 2 + lanes // 2


@translates(*_FORMS)
def _store(lw: Lowering, inst):
    """The store in a fused batch: the site's order check, a writable window holding every active lane's
    bytes (from the helper on a miss; none: EXIT_WRITE), then the undo entries and the writes."""
    b = lw.b
    high_half, kind = _STORE.match(inst.mnemonic).group(2, 3)
    size = _SIZE[kind]
    low, _base, high, off = lane_offsets(lw, inst)
    data = [lw.vgpr(inst.fields["data"] + k) for k in range(max(size // 4, 1))]
    if high_half:  # vmem.store_data: the high half of the register
        data = [b.op(f"lshr {b.v32} {data[0]}, {b.splat('i32', 16)}")]
    exec_bits = lw.exec_bits()
    active = lw.exec_lanes()
    go, skip = b.fresh("st")[1:], b.fresh("stskip")[1:]
    b.raw(f"br i1 {b.op(f'icmp ne {b.mask_int} {exec_bits}, 0')}, label %{go}, label %{skip}")
    b.label(go)
    addr = lane_addresses(lw, inst, low, high, off)
    lw.site(addr, active, size, store=True)
    lo, hi = lw.extent(addr, active, size)
    ask, again, fail, fast = (b.fresh(x)[1:] for x in ("stask", "stagain", "stfail", "stfast"))
    inrange = b.fresh("strange")[1:]
    b.br_rare(b.op(f"icmp ugt i64 {hi}, {VA_LIMIT}"), fail, inrange)
    b.label(inrange)
    first = find_window(lw, lo, hi, ask, WIN_WRITE)
    came = [(first, b.fresh("stfirst")[1:])]
    b.raw(f"br label %{came[0][1]}")
    b.label(came[0][1])
    b.raw(f"br label %{fast}")
    b.label(ask)  # no writable window yet: the helper makes one if the memory allows
    abuf = f"%SADDR{lw.off}"
    lw.buffers.append((abuf[1:], b.v64))
    b.raw(f"store {b.v64} {addr}, ptr {abuf}")
    r = call_helper(lw, MEM_WRITABLE, abuf, exec_bits, size, "null")
    b.raw(f"br i1 {b.op(f'icmp eq i32 {r}, 0')}, label %{again}, label %{fail}")
    b.label(again)
    second = find_window(lw, lo, hi, fail, WIN_WRITE)
    came.append((second, b.fresh("stsecond")[1:]))
    b.raw(f"br label %{came[1][1]}")
    b.label(came[1][1])
    b.raw(f"br label %{fast}")
    b.label(fail)
    lw.exit_here(EXIT_WRITE)
    b.label(fast)
    wlo = b.op("phi i64 " + ", ".join(f"[{w[0]}, %{lab}]" for w, lab in came))
    host = b.op("phi i64 " + ", ".join(f"[{w[2]}, %{lab}]" for w, lab in came))
    index = b.op(f"sub {b.v64} {addr}, {lw.broadcast64(wlo)}")  # inside the window: < 1 GiB each
    if size == 4:
        _contiguous_or_lanes(lw, host, index, exec_bits, active, data)
    else:
        _by_lane(lw, host, index, exec_bits, data, size)
    b.raw(f"br label %{skip}")
    b.label(skip)


def _entry(lw: Lowering, ptr: str, mask: str) -> str:
    """Start an undo entry (the address `ptr`, i64, and the dword mask or minus the byte count, i64): a
    pointer to its old dwords (or bytes)."""
    b = lw.b
    nump = b.op(f"getelementptr i64, ptr %ctx, i64 {C_UNDO_N}")
    n = b.op(f"load i64, ptr {nump}")
    b.raw(f"store i64 {b.op(f'add i64 {n}, 1')}, ptr {nump}")
    log = b.op(f"load ptr, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_UNDO}')}")
    e = b.op(f"getelementptr i64, ptr {log}, i64 {b.op(f'mul i64 {n}, {undo_words(lw.lanes)}')}")
    b.raw(f"store i64 {ptr}, ptr {e}")
    b.raw(f"store i64 {mask}, ptr {b.op(f'getelementptr i64, ptr {e}, i64 1')}")
    return b.op(f"getelementptr i64, ptr {e}, i64 2")


def _contiguous_or_lanes(lw: Lowering, host: str, index: str, exec_bits: str, active: str, data: list[str]) -> None:
    """One dword per lane: one masked vector store when the active lanes address consecutive dwords (from lane
    0's place on), else lane by lane."""
    b = lw.b
    n = lw.lanes
    first, stray = consecutive(lw, index, active, "i64")
    line, lanes, done = (b.fresh(x)[1:] for x in ("stline", "stlanes", "stdone"))
    b.raw(f"br i1 {stray}, label %{lanes}, label %{line}")
    b.label(line)
    p = b.op(f"add i64 {host}, {first}")
    ptr = b.op(f"inttoptr i64 {p} to ptr")
    mask64 = exec_bits if n == 64 else b.op(f"zext i32 {exec_bits} to i64")
    old_at = _entry(lw, p, mask64)
    load, store = f"@llvm.masked.load.v{n}i32.p0", f"@llvm.masked.store.v{n}i32.p0"
    old = b.call(b.v32, load, [("ptr", ptr), ("i32", "1"), (b.vmask, active), (b.v32, "zeroinitializer")],
                 f"declare {b.v32} {load}(ptr, i32, {b.vmask}, {b.v32})")
    b.raw(f"store {b.v32} {old}, ptr {old_at}, align 4")
    b.call("void", store, [(b.v32, data[0]), ("ptr", ptr), ("i32", "1"), (b.vmask, active)],
           f"declare void {store}({b.v32}, ptr, i32, {b.vmask})")
    b.raw(f"br label %{done}")
    b.label(lanes)
    _by_lane(lw, host, index, exec_bits, data, 4)
    b.raw(f"br label %{done}")
    b.label(done)


def _by_lane(lw: Lowering, host: str, index: str, exec_bits: str, data: list[str], size: int) -> None:
    """Each active lane's `size` bytes (whole dwords, or a byte or short), lane after lane (an undo entry
    each)."""
    b = lw.b
    mi = b.mask_int
    pre, head, body, done = (b.fresh(x)[1:] for x in ("lnpre", "lnhead", "lnbody", "lndone"))
    b.raw(f"br label %{pre}")
    b.label(pre)
    b.raw(f"br label %{head}")
    b.label(head)
    m, rest = b.fresh("lnm"), b.fresh("lnrest")
    b.raw(f"{m} = phi {mi} [{exec_bits}, %{pre}], [{rest}, %{body}]")
    b.raw(f"br i1 {b.op(f'icmp eq {mi} {m}, 0')}, label %{done}, label %{body}")
    b.label(body)
    lane = b.call(mi, f"@llvm.cttz.{mi}", [(mi, m), ("i1", "true")], f"declare {mi} @llvm.cttz.{mi}({mi}, i1)")
    b.raw(f"{rest} = and {mi} {m}, {b.op(f'sub {mi} {m}, 1')}")
    p = b.op(f"add i64 {host}, {b.op(f'extractelement {b.v64} {index}, {mi} {lane}')}")
    ptr = b.op(f"inttoptr i64 {p} to ptr")
    if size < 4:  # the old bytes and the new ones, exactly `size` of them
        it = f"i{8 * size}"
        old_at = _entry(lw, p, str(-size))
        b.raw(f"store {it} {b.op(f'load {it}, ptr {ptr}, align 1')}, ptr {old_at}")
        val = b.op(f"extractelement {b.v32} {data[0]}, {mi} {lane}")
        b.raw(f"store {it} {b.op(f'trunc i32 {val} to {it}')}, ptr {ptr}, align 1")
    else:
        old_at = _entry(lw, p, str((1 << len(data)) - 1))
        for k, vec in enumerate(data):
            at = b.op(f"getelementptr i32, ptr {ptr}, i64 {k}")
            keep = b.op(f"getelementptr i32, ptr {old_at}, i64 {k}")
            b.raw(f"store i32 {b.op(f'load i32, ptr {at}, align 1')}, ptr {keep}")
            b.raw(f"store i32 {b.op(f'extractelement {b.v32} {vec}, {mi} {lane}')}, ptr {at}, align 1")
    b.raw(f"br label %{head}")
    b.label(done)
