"""Memory reads for the translator: SMEM loads and GLOBAL/FLAT loads of whole dwords and bytes/shorts.

Fast path: the windows table (ctx C_WINDOWS) lists VA ranges that translate linearly into one physical
buffer (MMU.linear_window), with the host address of each. The window holding the first active lane's
address is found (the one that served this instruction last time is tried first), every active lane is
checked against it with one vector compare, and the load is a masked gather with 32-bit indices from
the window's host memory (windows are at most 1 GiB).

Slow path, anything else (no window yet, lanes in several windows or in FLAT's LDS/private apertures,
an unmapped page): native code calls the memory helper (ctx C_MEMORY, native.py) with the lane addresses;
it reads them through the interpreter's own routines (the MMU, LDS, scratch) into a buffer and adds a
window for next time; the registers never leave native code. If the read faults, the wave stops before
the instruction and the interpreter runs it with the other waves there, reporting the fault exactly.
Stores and atomics are sync instructions (region.is_sync), run by the interpreter in its own order; a fused
batch runs stores natively (lower_store). Every access marks its site (Lowering.site) for the fused batch's
order check.
"""

from __future__ import annotations

import re

from simgpu.mem.windows import WIN_READ, WINDOW_FIELDS
from simgpu.shader.jit.lower import C_MEMORY, C_NWINDOWS, EXIT_READ, Lowering, Unsupported, translates
from simgpu.shader.jit.lower_lds import lds_addresses, lds_check, lds_row, no_gds
from simgpu.shader.memory.vmem import SADDR_OFF, _offset
from simgpu.shader.scalar.sopp import smem_immediate
from simgpu.shader.state import SMEM_SDATA_END

VA_LIMIT = 1 << 47  # windows lie in the low canonical half
# What the memory helper does (native.NativeCall._memory): reads, or (MEM_WRITABLE) a writable window for a store
MEM_SMEM, MEM_GLOBAL, MEM_FLAT, MEM_LDS, MEM_WRITABLE = range(5)


def find_window(lw: Lowering, lo: str, hi: str, slow: str, access: int = WIN_READ) -> tuple[str, str, str]:
    """(the window's first VA, its end, its host address) for a window holding [lo, hi) that allows `access`
    (WIN_READ, WIN_WRITE), as i64 values; branches to label `slow` if none does. The window that served this
    instruction last is kept in locals (rows of the table never change while a wave runs), so a hit costs
    two compares."""
    b = lw.b
    n = len(lw.hints)
    cached = [f"WLO{n}", f"WHI{n}", f"WHOST{n}"]
    lw.hints.extend(cached)
    hit, head, test, nxt, found, done = (b.fresh(x)[1:] for x in ("whit", "whead", "wtest", "wnext", "wfound",
                                                                  "wdone"))
    k, knext = b.fresh("wk"), b.fresh("wk")
    c_lo, c_hi, c_host = (b.op(f"load i64, ptr %{c}") for c in cached)
    inside = b.op(f"and i1 {b.op(f'icmp uge i64 {lo}, {c_lo}')}, {b.op(f'icmp ule i64 {hi}, {c_hi}')}")
    b.br_rare(b.op(f"xor i1 {inside}, true"), head, hit)
    b.label(hit)
    b.raw(f"br label %{done}")
    b.label(head)
    b.raw(f"br label %{test}")
    b.label(test)
    b.raw(f"{k} = phi i64 [0, %{head}], [{knext}, %{nxt}]")
    count = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_NWINDOWS}')}")  # may have grown
    b.raw(f"br i1 {b.op(f'icmp ult i64 {k}, {count}')}, label %{nxt}, label %{slow}")
    b.label(nxt)
    row = b.op(f"getelementptr i64, ptr %windows, i64 {b.op(f'mul i64 {k}, {WINDOW_FIELDS}')}")
    wlo = b.op(f"load i64, ptr {row}")
    whi = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {row}, i64 1')}")
    flags = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {row}, i64 3')}")
    ok = b.op(f"and i1 {b.op(f'icmp uge i64 {lo}, {wlo}')}, {b.op(f'icmp ule i64 {hi}, {whi}')}")
    readable = b.op(f"and i64 {flags}, {access}")
    ok = b.op(f"and i1 {ok}, {b.op(f'icmp ne i64 {readable}, 0')}")
    b.raw(f"{knext} = add i64 {k}, 1")
    b.raw(f"br i1 {ok}, label %{found}, label %{test}")
    b.label(found)
    host = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {row}, i64 2')}")
    for c, v in zip(cached, (wlo, whi, host), strict=True):
        b.raw(f"store i64 {v}, ptr %{c}")
    b.raw(f"br label %{done}")
    b.label(done)
    out = [b.op(f"phi i64 [{x}, %{hit}], [{y}, %{found}]") for x, y in zip((c_lo, c_hi, c_host), (wlo, whi, host),
                                                                             strict=True)]
    return out[0], out[1], out[2]


def call_helper(lw: Lowering, kind: int, addrs: str, mask: str, size: int, out: str) -> str:
    """The i32 result (0: done) of the memory helper (native.NativeCall._memory) asked to do `kind` for `size` bytes
    per lane at the i64 addresses at `addrs` of the lanes in mask (a read: into `out`)."""
    b = lw.b
    fn = b.op(f"load ptr, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_MEMORY}')}")
    mask64 = mask if lw.lanes == 64 else b.op(f"zext i32 {mask} to i64")
    return b.op(f"call i32 {fn}(i64 %w, i64 {kind}, ptr {addrs}, i64 {mask64}, i64 {size}, ptr {out})")


def memory_helper(lw: Lowering, kind: int, addrs: str, mask: str, size: int, out: str) -> None:
    """Read through the memory helper (call_helper) into `out`; if it fails, the wave stops before this
    instruction."""
    lw.branch_exit(lw.b.op(f"icmp ne i32 {call_helper(lw, kind, addrs, mask, size, out)}, 0"), EXIT_READ)


# ---------------------------------------------------------------------------------------------- SMEM


@translates("s_load_b32", "s_load_b64", "s_load_b128", "s_load_b256", "s_load_b512")
def _s_load(lw: Lowering, inst):
    """sopp._s_load: (SGPR pair base [47:0] + signed immediate offset (21 bits, gfx12: 24) + soffset) & ~3,
    dwords to sdata on (destinations past s105 dropped)."""
    b = lw.b
    f = inst.fields
    offset = str(smem_immediate(inst))
    if f["soffset"] != 124:
        if f["soffset"] >= 128:
            raise Unsupported("soffset")
        soffset = lw.sgpr(f["soffset"])
        offset = b.op(f"add i64 {offset}, {b.op(f'zext i32 {soffset} to i64')}")
    s_load(lw, inst, offset)


def s_load(lw: Lowering, inst, offset: str) -> None:
    """sopp._s_load from the byte offset the family's SMEM encoding gives (an i64 value): dwords at (SGPR pair
    base [47:0] + offset) & ~3 to sdata on."""
    b = lw.b
    f = inst.fields
    dwords = inst.info["sdata"]
    base = b.op(f"and i64 {lw.sgpr64(f['sbase'] * 2)}, {(1 << 48) - 1}")
    addr = b.op(f"add i64 {base}, {offset}")
    addr = b.op(f"and i64 {addr}, -4")
    lw.site(addr, None, 4 * dwords, store=False)
    slow, done = b.fresh("smiss")[1:], b.fresh("sdone")[1:]
    buf = f"%SBUF{lw.off}"
    lw.buffers.append((buf[1:], f"[{dwords} x i32]"))
    wlo, _, host = find_window(lw, addr, b.op(f"add i64 {addr}, {4 * dwords}"), slow)
    inside = b.op(f"sub i64 {addr}, {wlo}")
    p_fast = b.op(f"inttoptr i64 {b.op(f'add i64 {host}, {inside}')} to ptr")
    fast_label = b.fresh("sfast")[1:]
    b.raw(f"br label %{fast_label}")
    b.label(fast_label)
    b.raw(f"br label %{done}")
    b.label(slow)
    abuf = f"%SADDR{lw.off}"
    lw.buffers.append((abuf[1:], "i64"))
    b.raw(f"store i64 {addr}, ptr {abuf}")
    memory_helper(lw, MEM_SMEM, abuf, "1", 4 * dwords, buf)
    slow_end = b.fresh("sslow")[1:]
    b.raw(f"br label %{slow_end}")
    b.label(slow_end)
    b.raw(f"br label %{done}")
    b.label(done)
    p = b.op(f"phi ptr [{p_fast}, %{fast_label}], [{buf}, %{slow_end}]")
    for k in range(min(dwords, max(0, SMEM_SDATA_END - f["sdata"]))):
        lw.set_sgpr(f["sdata"] + k, b.op(f"load i32, ptr {b.op(f'getelementptr i32, ptr {p}, i64 {k}')}, align 1"))


def gather(lw: Lowering, start: str, index: str, active: str, size: int, signed: bool) -> list[str]:
    """Masked gathers of `size` bytes per active lane at byte offsets `index` (<lanes x i32>) from the
    pointer `start`: the dwords of each lane (or its extended sub-dword value). Dword reads whose lanes
    address consecutive dwords (a coalesced access) are one masked vector load instead."""
    b = lw.b
    n = lw.lanes
    if size == 4:
        return [_dword_read(lw, start, index, active)]
    out = []
    for k in range(max(1, size // 4)):
        moved = index if k == 0 else b.op(f"add {b.v32} {index}, {b.splat('i32', 4 * k)}")
        ptrs = b.op(f"getelementptr i8, ptr {start}, {b.v32} {moved}")
        it = "i32" if size >= 4 else f"i{8 * size}"
        vt = b.vec(it)
        name = f"@llvm.masked.gather.v{n}{it}.v{n}p0"
        v = b.call(vt, name, [(b.vec("ptr"), ptrs), ("i32", "1"), (b.vmask, active), (vt, "zeroinitializer")],
                   f"declare {vt} {name}({b.vec('ptr')}, i32, {b.vmask}, {vt})")
        out.append(v if size >= 4 else b.op(f"{'sext' if signed else 'zext'} {vt} {v} to {b.v32}"))
    return out


ROW = 16  # lanes of one row of a 2D workgroup 16 items wide (the usual tile): a group for _rows_read


def consecutive(lw: Lowering, index: str, active: str, elem: str) -> tuple[str, str]:
    """(lane 0's byte offset, i1 whether some active lane is not 4 bytes per lane past it) for the lanes'
    offsets `index` (<lanes x elem>): a whole-dword access of consecutive lanes is one vector access."""
    b = lw.b
    vt = b.vec(elem)
    first = b.op(f"extractelement {vt} {index}, i64 0")
    ramp = "<" + ", ".join(f"{elem} {4 * i}" for i in range(lw.lanes)) + ">"
    expect = b.op(f"add {vt} {b.broadcast(elem, first)}, {ramp}")
    stray = b.op(f"and {b.vmask} {b.op(f'icmp ne {vt} {index}, {expect}')}, {active}")
    return first, b.mask_any(stray)


def _dword_read(lw: Lowering, start: str, index: str, active: str) -> str:
    """One dword per active lane: a masked vector load when the active lanes address consecutive dwords
    from lane 0's offset on; else, when each row of ROW lanes addresses consecutive dwords or a single one
    (2D workgroups: a tile's rows share a column's address or read along a row), a load per row; else a
    masked gather."""
    b = lw.b
    n = lw.lanes
    v = b.v32
    first, stray = consecutive(lw, index, active, "i32")
    line, rows, scattered, done = (b.fresh(x)[1:] for x in ("coal", "rows", "scat", "readdone"))
    b.raw(f"br i1 {stray}, label %{rows}, label %{line}")
    b.label(line)
    p = b.op(f"getelementptr i8, ptr {start}, i32 {first}")
    name = f"@llvm.masked.load.v{n}i32.p0"
    contiguous = b.call(v, name, [("ptr", p), ("i32", "1"), (b.vmask, active), (v, "zeroinitializer")],
                        f"declare {v} {name}(ptr, i32, {b.vmask}, {v})")
    b.raw(f"br label %{done}")
    b.label(rows)
    by_row, fits = _rows_read(lw, start, index, active)
    row_end = b.fresh("rowsdone")[1:]
    b.raw(f"br i1 {fits}, label %{row_end}, label %{scattered}")
    b.label(row_end)
    b.raw(f"br label %{done}")
    b.label(scattered)
    ptrs = b.op(f"getelementptr i8, ptr {start}, {v} {index}")
    name = f"@llvm.masked.gather.v{n}i32.v{n}p0"
    gathered = b.call(v, name, [(b.vec("ptr"), ptrs), ("i32", "1"), (b.vmask, active), (v, "zeroinitializer")],
                      f"declare {v} {name}({b.vec('ptr')}, i32, {b.vmask}, {v})")
    b.raw(f"br label %{done}")
    b.label(done)
    return b.op(f"phi {v} [{contiguous}, %{line}], [{by_row}, %{row_end}], [{gathered}, %{scattered}]")


def _rows_read(lw: Lowering, start: str, index: str, active: str) -> tuple[str, str]:
    """(the wave's dwords read row by row, i1 whether that was right): each row of ROW lanes whose active
    lanes address consecutive dwords from the row's first lane on is one masked load, one whose active
    lanes all address the row's first lane's dword (that lane active) is one load and a broadcast. The
    loads are masked to the rows that qualify, so no lane reads an address it did not ask for."""
    b = lw.b
    r = ROW
    vr, mr = f"<{r} x i32>", f"<{r} x i1>"
    ramp = "<" + ", ".join(f"i32 {4 * i}" for i in range(r)) + ">"
    load_row, load_one = f"@llvm.masked.load.v{r}i32.p0", "@llvm.masked.load.v1i32.p0"
    b.declare(f"declare {vr} {load_row}(ptr, i32, {mr}, {vr})")
    b.declare(f"declare <1 x i32> {load_one}(ptr, i32, <1 x i1>, <1 x i32>)")

    def none_of(mask: str) -> str:
        return b.op(f"icmp eq i{r} {b.op(f'bitcast {mr} {mask} to i{r}')}, 0")

    parts, fits = [], "true"
    for g in range(lw.lanes // r):
        sel = "<" + ", ".join(f"i32 {g * r + i}" for i in range(r)) + ">"
        idx = b.op(f"shufflevector {b.v32} {index}, {b.v32} poison, <{r} x i32> {sel}")
        act = b.op(f"shufflevector {b.vmask} {active}, {b.vmask} poison, <{r} x i32> {sel}")
        f = b.op(f"extractelement {vr} {idx}, i64 0")
        fv = b.op(f"insertelement {vr} poison, i32 {f}, i64 0")
        fv = b.op(f"shufflevector {vr} {fv}, {vr} poison, <{r} x i32> zeroinitializer")
        expect = b.op(f"add {vr} {fv}, {ramp}")
        along = none_of(b.op(f"and {mr} {b.op(f'icmp ne {vr} {idx}, {expect}')}, {act}"))
        same = none_of(b.op(f"and {mr} {b.op(f'icmp ne {vr} {idx}, {fv}')}, {act}"))
        lead = b.op(f"extractelement {mr} {act}, i64 0")  # the single load reads lane 0's own address
        uniform = b.op(f"and i1 {b.op(f'xor i1 {along}, true')}, {b.op(f'and i1 {same}, {lead}')}")
        fits = b.op(f"and i1 {fits}, {b.op(f'or i1 {along}, {uniform}')}")
        p = b.op(f"getelementptr i8, ptr {start}, i32 {f}")
        row_mask = b.op(f"select i1 {along}, {mr} {act}, {mr} zeroinitializer")
        row = b.call(vr, load_row, [("ptr", p), ("i32", "1"), (mr, row_mask), (vr, "zeroinitializer")])
        one_mask = b.op(f"insertelement <1 x i1> poison, i1 {uniform}, i64 0")
        one = b.call("<1 x i32>", load_one, [("ptr", p), ("i32", "1"), ("<1 x i1>", one_mask),
                                             ("<1 x i32>", "zeroinitializer")])
        spread = b.op(f"shufflevector <1 x i32> {one}, <1 x i32> poison, <{r} x i32> zeroinitializer")
        spread = b.op(f"select {mr} {act}, {vr} {spread}, {vr} zeroinitializer")  # inactive lanes read 0
        parts.append(b.op(f"select i1 {along}, {vr} {row}, {vr} {spread}"))
    width = r
    while len(parts) > 1:  # the rows back into one vector of the wave
        t, sel = f"<{width} x i32>", "<" + ", ".join(f"i32 {i}" for i in range(2 * width)) + ">"
        parts = [b.op(f"shufflevector {t} {x}, {t} {y}, <{2 * width} x i32> {sel}")
                 for x, y in zip(parts[::2], parts[1::2], strict=True)]
        width *= 2
    return parts[0], fits


def read_by_helper(lw: Lowering, kind: int, addr: str, exec_bits: str, size: int, signed: bool, tag: str) -> list[str]:
    """The slow path: the memory helper reads `size` bytes at each active lane's address (<lanes x i64>);
    the same values `gather` gives."""
    b = lw.b
    n = lw.lanes
    abuf, vbuf = f"%ADDR{tag}", f"%VAL{tag}"
    lw.buffers.append((abuf[1:], b.v64))
    lw.buffers.append((vbuf[1:], f"[{n * max(size, 4)} x i8]"))
    b.raw(f"store {b.v64} {addr}, ptr {abuf}")
    memory_helper(lw, kind, abuf, exec_bits, size, vbuf)
    out = []
    for k in range(max(1, size // 4)):
        if size >= 4:
            p = b.op(f"getelementptr i8, ptr {vbuf}, i64 {4 * n * k}")
            out.append(b.op(f"load {b.v32}, ptr {p}, align 1"))
        else:
            vt = b.vec(f"i{8 * size}")
            v = b.op(f"load {vt}, ptr {vbuf}, align 1")
            out.append(b.op(f"{'sext' if signed else 'zext'} {vt} {v} to {b.v32}"))
    return out


def merge(lw: Lowering, fast: list[str], slow: list[str], done: str) -> list[str]:
    """Close the fast and the slow path (the current block is the slow path's end) into label `done`: the
    values of whichever ran."""
    b = lw.b
    slow_end = b.fresh("slowend")[1:]
    b.raw(f"br label %{slow_end}")
    b.label(slow_end)
    b.raw(f"br label %{done}")
    b.label(done)
    return [b.op(f"phi {b.v32} [{f}, %{fast[-1]}], [{s}, %{slow_end}]") for f, s in zip(fast[:-1], slow, strict=True)]


def end_fast(lw: Lowering, values: list[str]) -> list[str]:
    """End the fast path (jumping to the merge point later): its values and the label it ends in."""
    b = lw.b
    label = b.fresh("fastend")[1:]
    b.raw(f"br label %{label}")
    b.label(label)
    return values + [label]


# ---------------------------------------------------------------------------------------------- GLOBAL / FLAT

_LOAD = re.compile(r"^(global|flat)_load_(d16_(?:hi_)?)?(u8|i8|u16|i16|b16|b32|b64|b96|b128)$")
_SIZE = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}
_D16 = [f"{s}_load_{h}_{k}" for s in ("global", "flat") for h in ("d16", "d16_hi") for k in ("u8", "i8", "b16")]


def lane_offsets(lw: Lowering, inst) -> tuple[str, str | None, str | None, int]:
    """A GLOBAL/FLAT address (vmem.global_addresses) as its parts: the 32-bit VGPR part (<lanes x i32>),
    the SGPR base (i64, saddr forms) or the VGPR high dwords (<lanes x i32>, 64-bit forms), and the
    instruction offset."""
    f = inst.fields
    low = lw.vgpr(f["addr"])
    if inst.mnemonic.startswith("global_") and f["saddr"] != SADDR_OFF:
        return low, lw.sgpr64(f["saddr"]), None, _offset(inst)
    return low, None, lw.vgpr(f["addr"] + 1), _offset(inst)


def lane_addresses(lw: Lowering, inst, low: str, high: str | None, off: int) -> str:
    """Every lane's 64-bit address (<lanes x i64>), as vmem.global_addresses forms it."""
    b = lw.b
    addr = b.op(f"add {b.v64} {b.op(f'zext {b.v32} {low} to {b.v64}')}, {b.splat('i64', off)}")
    if high is not None:
        high64 = b.op(f"zext {b.v32} {high} to {b.v64}")
        shifted = b.op(f"shl {b.v64} {high64}, {b.splat('i64', 32)}")
        return b.op(f"add {b.v64} {addr}, {shifted}")
    return b.op(f"add {b.v64} {addr}, {lw.broadcast64(lw.sgpr64(inst.fields['saddr']))}")


def _first_active(lw: Lowering, vec: str) -> str:
    """The element of the lowest active lane (EXEC is known to be nonzero)."""
    b = lw.b
    mi = b.mask_int
    lane = b.call(mi, f"@llvm.cttz.{mi}", [(mi, lw.exec_bits()), ("i1", "true")],
                  f"declare {mi} @llvm.cttz.{mi}({mi}, i1)")
    return b.op(f"extractelement {b.v32} {vec}, {mi} {lane}")


@translates(*[f"{s}_load_{k}" for s in ("global", "flat") for k in _SIZE if k != "b16"], *_D16)
def _load(lw: Lowering, inst):
    b = lw.b
    d16, kind = _LOAD.match(inst.mnemonic).group(2, 3)
    size = _SIZE[kind]
    vdst = inst.fields["vdst"]
    low, base, high, off = lane_offsets(lw, inst)
    exec_bits = lw.exec_bits()
    active = lw.exec_lanes()
    go, slow, fast_label, done, skip = (b.fresh(n)[1:] for n in ("ld", "ldslow", "ldfast", "lddone", "ldskip"))
    # nothing to do for a wave without active lanes (the interpreter's masked path touches nothing)
    b.raw(f"br i1 {b.op(f'icmp ne {b.mask_int} {exec_bits}, 0')}, label %{go}, label %{skip}")
    b.label(go)
    addr = lane_addresses(lw, inst, low, high, off)
    lw.site(addr, active, size, store=False)
    if base is None:  # 64-bit VGPR addresses: the fast path needs one high dword for every active lane
        hi0 = _first_active(lw, high)
        differ = b.op(f"and {b.vmask} {b.op(f'icmp ne {b.v32} {high}, {lw.broadcast32(hi0)}')}, {active}")
        check = b.fresh("ldhi")[1:]
        b.br_rare(b.mask_any(differ), slow, check)
        b.label(check)
        base = b.op(f"shl i64 {b.op(f'zext i32 {hi0} to i64')}, 32")
    based = b.op(f"add i64 {base}, {off}")  # every lane's address is based + its low dword
    low0 = _first_active(lw, low)
    first = b.op(f"add i64 {based}, {b.op(f'zext i32 {low0} to i64')}")
    limit = b.fresh("ldva")[1:]
    b.br_rare(b.op(f"icmp uge i64 {first}, {VA_LIMIT}"), slow, limit)
    b.label(limit)
    wlo, whi, host = find_window(lw, first, b.op(f"add i64 {first}, {size}"), slow)
    # lane offsets from the window start, in 32 bits: (based - wlo) + low mod 2^32. A lane is inside if its
    # offset is at most (window size - size) and, since the first active lane's 64-bit address was found
    # in the window, no lane's true offset can differ from its 32-bit one by 2^32 unless the low dwords
    # span more than 3 GiB: that is checked as well, against the first lane's low dword.
    shift = b.op(f"trunc i64 {b.op(f'sub i64 {based}, {wlo}')} to i32")
    index = b.op(f"add {b.v32} {low}, {lw.broadcast32(shift)}")
    span = b.op(f"sub i64 {whi}, {wlo}")
    room = lw.broadcast32(b.op(f"trunc i64 {b.op(f'sub i64 {span}, {size}')} to i32"))
    outside = b.op(f"icmp ugt {b.v32} {index}, {room}")
    lf = lw.broadcast32(low0)
    above = b.op(f"icmp uge {b.v32} {low}, {lf}")
    dist = b.op(f"select {b.vmask} {above}, {b.v32} {b.op(f'sub {b.v32} {low}, {lf}')}, "
                f"{b.v32} {b.op(f'sub {b.v32} {lf}, {low}')}")
    far = b.op(f"icmp ugt {b.v32} {dist}, {room}")
    bad = b.op(f"and {b.vmask} {b.op(f'or {b.vmask} {outside}, {far}')}, {active}")
    b.br_rare(b.mask_any(bad), slow, fast_label)
    b.label(fast_label)
    fast = end_fast(lw, gather(lw, b.op(f"inttoptr i64 {host} to ptr"), index, active, size, kind[0] == "i"))
    b.raw(f"br label %{done}")
    # slow path: the lane addresses to the helper
    b.label(slow)
    kind_code = MEM_FLAT if inst.mnemonic.startswith("flat_") else MEM_GLOBAL
    slow_vals = read_by_helper(lw, kind_code, addr, exec_bits, size, kind[0] == "i", str(lw.off))
    for k, v in enumerate(merge(lw, fast, slow_vals, done)):
        lw.set_vgpr(vdst + k, _into_half(lw, v, vdst, d16) if d16 else v, active)
    b.raw(f"br label %{skip}")
    b.label(skip)


def _into_half(lw: Lowering, value: str, vdst: int, d16: str) -> str:
    """vmem.write_loaded's d16 loads: the loaded 16 bits (a byte extended to 16) into vdst's low half, or its
    high half for d16_hi, the other half kept."""
    b = lw.b
    half = b.op(f"and {b.v32} {value}, {b.splat('i32', 0xFFFF)}")
    old = lw.vgpr(vdst)
    if d16.startswith("d16_hi"):
        kept = b.op(f"and {b.v32} {old}, {b.splat('i32', 0xFFFF)}")
        up = b.op(f"shl {b.v32} {half}, {b.splat('i32', 16)}")
        return b.op(f"or {b.v32} {kept}, {up}")
    kept = b.op(f"and {b.v32} {old}, {b.splat('i32', -65536)}")
    return b.op(f"or {b.v32} {kept}, {half}")


# ---------------------------------------------------------------------------------------------- LDS

_DS_LOAD = re.compile(r"^ds_load_(u8|i8|u16|i16|b32|b64|b96|b128)$")
_DS_2ADDR = re.compile(r"^ds_load_2addr(_stride64)?_(b32|b64)$")


def _lds_read(lw: Lowering, addrs: list[tuple[str, int]], size: int, signed: bool) -> list[str]:
    """LDS reads (lds.ds_mem.lds_read) at the <lanes x i32> addresses plus constant offsets in `addrs`, each
    `size` bytes per active lane: the dwords of every read (or the extended value of a sub-dword read)."""
    b = lw.b
    active = lw.exec_lanes()
    exec_bits = lw.exec_bits()
    row, nbytes = lds_row(lw)
    fast, slow, done = (b.fresh(x)[1:] for x in ("dsfast", "dsslow", "dsdone"))
    wide, bad = lds_addresses(lw, addrs, size, active, nbytes)  # every active lane inside the allocation?
    b.br_rare(b.mask_any(bad), slow, fast)
    b.label(fast)
    lds_check(lw, wide, active, size, store=False)  # (in a barrier-to-barrier interval only)
    values = []
    for a64 in wide:
        values += gather(lw, row, b.op(f"trunc {b.v64} {a64} to {b.v32}"), active, size, signed)
    fast_vals = end_fast(lw, values)
    b.raw(f"br label %{done}")
    b.label(slow)
    slow_vals = []
    for i, a64 in enumerate(wide):
        slow_vals += read_by_helper(lw, MEM_LDS, a64, exec_bits, size, signed, f"{lw.off}_{i}")
    return merge(lw, fast_vals, slow_vals, done)


@translates(*[f"ds_load_{k}" for k in ("u8", "i8", "u16", "i16", "b32", "b64", "b96", "b128")])
def _ds_load(lw: Lowering, inst):
    """ds.ds_address: VGPR addr + 16-bit offset; bytes outside the workgroup's LDS read 0."""
    no_gds(inst)
    kind = _DS_LOAD.match(inst.mnemonic).group(1)
    f = inst.fields
    off = f["offset0"] | (f["offset1"] << 8)
    vals = _lds_read(lw, [(lw.vgpr(f["addr"]), off)], _SIZE[kind], kind[0] == "i")
    active = lw.exec_lanes()
    for k, v in enumerate(vals):
        lw.set_vgpr(f["vdst"] + k, v, active)


@translates("ds_load_2addr_b32", "ds_load_2addr_b64", "ds_load_2addr_stride64_b32", "ds_load_2addr_stride64_b64")
def _ds_load_2addr(lw: Lowering, inst):
    """ds._load_2addr: ADDR + offset0 * size and ADDR + offset1 * size (* 64 for stride64), back to back."""
    no_gds(inst)
    m = _DS_2ADDR.match(inst.mnemonic)
    size = 8 if m.group(2) == "b64" else 4
    scale = size * (64 if m.group(1) else 1)
    f = inst.fields
    addr = lw.vgpr(f["addr"])
    vals = _lds_read(lw, [(addr, f["offset0"] * scale), (addr, f["offset1"] * scale)], size, False)
    active = lw.exec_lanes()
    for k, v in enumerate(vals):
        lw.set_vgpr(f["vdst"] + k, v, active)
