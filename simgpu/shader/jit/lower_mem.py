"""Memory reads for the translator: SMEM loads and GLOBAL/FLAT loads of whole dwords and bytes/shorts.

Addresses are checked against the windows table (ctx C_WINDOWS: VA ranges that translate linearly into
one physical buffer, handed out by MMU.linear_window, with the host address of each): when every active
lane's bytes lie in one readable window, the load is one masked gather from host memory. Otherwise the
wave exits before the instruction (EXIT_CALLBACK): the interpreter runs it for this wave, reporting any
fault exactly as it would, and the tier adds a window for next time. Stores and atomics are sync
instructions (region.is_sync), run by the interpreter in its own order.
"""

from __future__ import annotations

import re

from simgpu.shader.jit.lower import EXIT_CALLBACK, WIN_READ, WINDOW_FIELDS, Lowering, Unsupported, translates
from simgpu.shader.memory.vmem import SADDR_OFF, _offset

VA_LIMIT = 1 << 47  # windows lie in the low canonical half: any larger lane address misses


def window_delta(lw: Lowering, lo: str, hi: str) -> str:
    """host - VA (i64) of a readable window holding [lo, hi); exits to the interpreter if none does.
    The window that served this instruction last time is tried first, then every window in order."""
    b = lw.b
    hint = f"WH{len(lw.hints)}"
    lw.hints.add(hint)
    start, head, test, nxt, found, miss = (b.fresh(n)[1:] for n in ("wstart", "whead", "wtest", "wnext",
                                                                     "wfound", "wmiss"))
    knext = b.fresh("wk")
    b.raw(f"br label %{start}")
    b.label(start)
    h = b.op(f"load i64, ptr %{hint}")
    b.raw(f"br label %{head}")
    b.label(head)
    k = b.op(f"phi i64 [-1, %{start}], [{knext}, %{nxt}]")
    i = b.op(f"select i1 {b.op(f'icmp slt i64 {k}, 0')}, i64 {h}, i64 {k}")
    b.raw(f"br i1 {b.op(f'icmp ult i64 {i}, %nwindows')}, label %{test}, label %{nxt}")
    b.label(test)
    row = b.op(f"getelementptr i64, ptr %windows, i64 {b.op(f'mul i64 {i}, {WINDOW_FIELDS}')}")
    wlo = b.op(f"load i64, ptr {row}")
    whi = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {row}, i64 1')}")
    host = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {row}, i64 2')}")
    flags = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {row}, i64 3')}")
    ok = b.op(f"and i1 {b.op(f'icmp uge i64 {lo}, {wlo}')}, {b.op(f'icmp ule i64 {hi}, {whi}')}")
    readable = b.op(f"and i64 {flags}, {WIN_READ}")
    ok = b.op(f"and i1 {ok}, {b.op(f'icmp ne i64 {readable}, 0')}")
    b.raw(f"br i1 {ok}, label %{found}, label %{nxt}")
    b.label(nxt)
    b.raw(f"{knext} = select i1 {b.op(f'icmp slt i64 {k}, 0')}, i64 0, i64 {b.op(f'add i64 {k}, 1')}")
    b.raw(f"br i1 {b.op(f'icmp ult i64 {knext}, %nwindows')}, label %{head}, label %{miss}")
    b.label(miss)
    lw.exits.append((miss, EXIT_CALLBACK, str(lw.off)))
    b.raw("br label %exit")
    b.label(found)
    b.raw(f"store i64 {i}, ptr %{hint}")
    return b.op(f"sub i64 {host}, {wlo}")


# ---------------------------------------------------------------------------------------------- SMEM


@translates("s_load_b32", "s_load_b64", "s_load_b128", "s_load_b256", "s_load_b512")
def _s_load(lw: Lowering, inst):
    """sopp._s_load: (SGPR pair base [47:0] + signed 21-bit offset + soffset) & ~3, dwords to sdata on
    (destinations past s105 dropped)."""
    b = lw.b
    f = inst.fields
    dwords = inst.info["sdata"]
    base = b.op(f"and i64 {lw.sgpr64(f['sbase'] * 2)}, {(1 << 48) - 1}")
    off = f["offset"] - (1 << 21) if f["offset"] & (1 << 20) else f["offset"]
    addr = b.op(f"add i64 {base}, {off}")
    if f["soffset"] != 124:
        if f["soffset"] >= 128:
            raise Unsupported("soffset")
        soffset = lw.sgpr(f["soffset"])
        addr = b.op(f"add i64 {addr}, {b.op(f'zext i32 {soffset} to i64')}")
    addr = b.op(f"and i64 {addr}, -4")
    delta = window_delta(lw, addr, b.op(f"add i64 {addr}, {4 * dwords}"))
    p = b.op(f"inttoptr i64 {b.op(f'add i64 {addr}, {delta}')} to ptr")
    for k in range(min(dwords, max(0, 106 - f["sdata"]))):
        lw.set_sgpr(f["sdata"] + k, b.op(f"load i32, ptr {b.op(f'getelementptr i32, ptr {p}, i64 {k}')}, align 1"))


# ---------------------------------------------------------------------------------------------- GLOBAL / FLAT

_LOAD = re.compile(r"^(global|flat)_load_(u8|i8|u16|i16|b32|b64|b96|b128)$")
_SIZE = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}


def lane_addresses(lw: Lowering, inst) -> str:
    """<lanes x i64> addresses of a GLOBAL/FLAT instruction (vmem.global_addresses)."""
    b = lw.b
    f = inst.fields
    if inst.mnemonic.startswith("global_") and f["saddr"] != SADDR_OFF:
        base = lw.broadcast64(lw.sgpr64(f["saddr"]))
        low = lw.vgpr(f["addr"])
        addr = b.op(f"add {b.v64} {base}, {b.op(f'zext {b.v32} {low} to {b.v64}')}")
    else:
        addr = lw.vgpr64(f["addr"])
    off = _offset(inst)
    if off:
        addr = b.op(f"add {b.v64} {addr}, {b.splat('i64', off)}")
    return addr


def _reduce(lw: Lowering, kind: str, vec: str) -> str:
    b = lw.b
    name = f"@llvm.vector.reduce.{kind}.v{lw.lanes}i64"
    return b.call("i64", name, [(b.v64, vec)], f"declare i64 {name}({b.v64})")


@translates(*[f"{s}_load_{k}" for s in ("global", "flat") for k in _SIZE])
def _load(lw: Lowering, inst):
    b = lw.b
    kind = _LOAD.match(inst.mnemonic).group(2)
    size = _SIZE[kind]
    vdst = inst.fields["vdst"]
    addr = lane_addresses(lw, inst)
    active = lw.exec_lanes()
    # nothing to do for a wave without active lanes (the interpreter's masked path touches nothing)
    any_lane = b.op(f"icmp ne {b.mask_int} {lw.exec_bits()}, 0")
    go, skip = b.fresh("ld")[1:], b.fresh("ldskip")[1:]
    b.raw(f"br i1 {any_lane}, label %{go}, label %{skip}")
    b.label(go)
    lo = _reduce(lw, "umin", b.op(f"select {b.vmask} {active}, {b.v64} {addr}, {b.v64} {b.splat('i64', -1)}"))
    top = _reduce(lw, "umax", b.op(f"select {b.vmask} {active}, {b.v64} {addr}, {b.v64} {b.splat('i64', 0)}"))
    lw.branch_exit(b.op(f"icmp uge i64 {top}, {VA_LIMIT}"), EXIT_CALLBACK)
    delta = window_delta(lw, lo, b.op(f"add i64 {top}, {size}"))
    host = b.op(f"add {b.v64} {addr}, {lw.broadcast64(delta)}")
    ptrs = b.op(f"inttoptr {b.v64} {host} to {b.vec('ptr')}")
    n = lw.lanes
    if size >= 4:
        for k in range(size // 4):
            p = ptrs if k == 0 else b.op(f"getelementptr i8, {b.vec('ptr')} {ptrs}, {b.v64} {b.splat('i64', 4 * k)}")
            old = lw.vgpr(vdst + k)
            name = f"@llvm.masked.gather.v{n}i32.v{n}p0"
            v = b.call(b.v32, name, [(b.vec("ptr"), p), ("i32", "1"), (b.vmask, active), (b.v32, old)],
                       f"declare {b.v32} {name}({b.vec('ptr')}, i32, {b.vmask}, {b.v32})")
            lw.set_vgpr(vdst + k, v, None)  # inactive lanes kept their value (the gather's pass-through)
    else:
        it = f"i{8 * size}"
        vt = b.vec(it)
        name = f"@llvm.masked.gather.v{n}{it}.v{n}p0"
        v = b.call(vt, name, [(b.vec("ptr"), ptrs), ("i32", "1"), (b.vmask, active), (vt, "zeroinitializer")],
                   f"declare {vt} {name}({b.vec('ptr')}, i32, {b.vmask}, {vt})")
        ext = "sext" if kind[0] == "i" else "zext"
        lw.set_vgpr(vdst, b.op(f"{ext} {vt} {v} to {b.v32}"), active)
    b.raw(f"br label %{skip}")
    b.label(skip)
