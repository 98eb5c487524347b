"""LDS in barrier-to-barrier intervals (barrier.py): native DS stores and the LDS order check.

In a round, DS stores stay sync instructions (region.is_sync): a wave parks before one and the interpreter
runs it for every wave there. In a barrier-to-barrier interval (ctx C_B2B) each wave of a batch runs alone
to its next s_barrier, so the stores run here, as lds.ds_mem.lds_write does: the active lanes' bytes into
the wave's workgroup row, lane after lane (where lanes overlap, the highest lane's bytes are the ones left).

The order check. The interpreter runs the waves of a workgroup interleaved (lowest PC first), the interval
runs them one after the other; the two can differ only where two waves of the group touch one LDS dword and
one of them stores. So every LDS access of an interval tags the dwords it touches (ctx C_WRITERS and
C_READERS: an int64 per dword of each group's row; a tag is the interval's epoch, C_EPOCH, or'd with the
wave's index + 1, and READERS holds MANY once a second wave reads a dword) and first checks them: a store
finds no tag of another wave of this interval in either array, a load none in WRITERS. A tag from an
earlier epoch is no tag, so nothing is cleared between intervals. A failed check exits with EXIT_CONFLICT,
an access outside the row or not naturally aligned with EXIT_WRITE (the interpreter's per-byte rules for
those are not mirrored here): either way the interval is undone and runs in rounds.
"""

from __future__ import annotations

import re

from simgpu.shader.jit.lower import (
    C_EPOCH,
    C_GROUP,
    C_LDS,
    C_LDS_BYTES,
    C_LDS_DWORDS,
    C_READERS,
    C_WRITERS,
    EXIT_CONFLICT,
    EXIT_WRITE,
    Lowering,
    Unsupported,
    translates,
)

WAVE_BITS = 24  # a tag's low bits: the wave's index in the batch + 1 (the epoch above them)
MANY = (1 << WAVE_BITS) - 1  # a READERS tag: more than one wave read the dword this interval
_STORE = re.compile(r"^ds_store_(b8|b16|b32|b64|b96|b128)(_d16_hi)?$")
_STORE_2ADDR = re.compile(r"^ds_store_2addr(_stride64)?_(b32|b64)$")
_SIZE = {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}


def lds_row(lw: Lowering) -> tuple[str, str]:
    """(pointer to this wave's workgroup's LDS bytes, their count as i64)."""
    b = lw.b
    lw.fusable = False  # a fused batch has no LDS (it runs kernels without any)
    base = b.op(f"load ptr, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_LDS}')}")
    size = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_LDS_BYTES}')}")
    return b.op(f"getelementptr i8, ptr {base}, i64 {b.op(f'mul i64 {_group(lw)}, {size}')}"), size


def _group(lw: Lowering) -> str:
    b = lw.b
    groups = b.op(f"load ptr, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_GROUP}')}")
    return b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {groups}, i64 %w')}")


def _field(lw: Lowering, index: int, ty: str = "i64") -> str:
    b = lw.b
    return b.op(f"load {ty}, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {index}')}")


def lds_check(lw: Lowering, addrs: list[str], active: str, size: int, store: bool) -> None:
    """The interval's order check for an LDS access (module docstring) at the <lanes x i64> byte addresses
    `addrs` (inside the row), `size` bytes each for the lanes of `active`; only in an interval (%b2b)."""
    b = lw.b
    check, cont = b.fresh("ldschk")[1:], b.fresh("ldschkdone")[1:]
    b.raw(f"br i1 %b2b, label %{check}, label %{cont}")
    b.label(check)
    align = min(size, 4) - 1
    if align:
        mask, odd = b.splat("i64", align), None
        for a in addrs:
            low = b.op(f"and {b.v64} {a}, {mask}")
            off = b.op(f"and {b.vmask} {b.op(f'icmp ne {b.v64} {low}, zeroinitializer')}, {active}")
            odd = off if odd is None else b.op(f"or {b.vmask} {odd}, {off}")
        lw.branch_exit(b.mask_any(odd), EXIT_WRITE)
    epoch = _field(lw, C_EPOCH)
    tag = b.op(f"or i64 {epoch}, {b.op('add i64 %w, 1')}")
    ev, tv = lw.broadcast64(epoch), lw.broadcast64(tag)
    row = lw.broadcast64(b.op(f"mul i64 {_group(lw)}, {_field(lw, C_LDS_DWORDS)}"))
    writers, readers = _field(lw, C_WRITERS, "ptr"), _field(lw, C_READERS, "ptr")
    n = lw.lanes
    vp, v64 = b.vec("ptr"), b.v64
    gather = f"@llvm.masked.gather.v{n}i64.v{n}p0"
    gdecl = f"declare {v64} {gather}({vp}, i32, {b.vmask}, {v64})"
    scatter = f"@llvm.masked.scatter.v{n}i64.v{n}p0"
    sdecl = f"declare void {scatter}({v64}, {vp}, i32, {b.vmask})"
    updates = []
    clash = None
    for a in addrs:
        dword = b.op(f"lshr {v64} {a}, {b.splat('i64', 2)}")
        first = b.op(f"add {v64} {dword}, {row}")
        for k in range(max(size // 4, 1)):
            idx = first if k == 0 else b.op(f"add {v64} {first}, {b.splat('i64', k)}")
            wp = b.op(f"getelementptr i64, ptr {writers}, {v64} {idx}")
            rp = b.op(f"getelementptr i64, ptr {readers}, {v64} {idx}")
            w = b.call(v64, gather, [(vp, wp), ("i32", "8"), (b.vmask, active), (v64, "zeroinitializer")], gdecl)
            r = b.call(v64, gather, [(vp, rp), ("i32", "8"), (b.vmask, active), (v64, "zeroinitializer")], gdecl)
            wother = _other(lw, w, ev, tv)
            if store:
                bad = b.op(f"or {b.vmask} {wother}, {_other(lw, r, ev, tv)}")
                updates.append((tv, wp))
            else:
                bad = wother
                fresh = b.op(f"or {b.vmask} {b.op(f'icmp ult {v64} {r}, {ev}')}, {b.op(f'icmp eq {v64} {r}, {tv}')}")
                many = lw.broadcast64(b.op(f"or i64 {epoch}, {MANY}"))
                updates.append((b.op(f"select {b.vmask} {fresh}, {v64} {tv}, {v64} {many}"), rp))
            bad = b.op(f"and {b.vmask} {bad}, {active}")
            clash = bad if clash is None else b.op(f"or {b.vmask} {clash}, {bad}")
    lw.branch_exit(b.mask_any(clash), EXIT_CONFLICT)
    for value, ptrs in updates:  # (only once every check passed)
        b.call("void", scatter, [(v64, value), (vp, ptrs), ("i32", "8"), (b.vmask, active)], sdecl)
    b.raw(f"br label %{cont}")
    b.label(cont)


def _other(lw: Lowering, tags: str, ev: str, tv: str) -> str:
    """Lanes whose tag is another wave's of this interval (this epoch's, not `tv`)."""
    b = lw.b
    now = b.op(f"icmp uge {b.v64} {tags}, {ev}")
    return b.op(f"and {b.vmask} {now}, {b.op(f'icmp ne {b.v64} {tags}, {tv}')}")


def _addresses(lw: Lowering, addr: str, offsets: list[int], size: int, active: str) -> list[str]:
    """<lanes x i64> byte addresses VGPR addr + each offset; a lane with bytes outside the row exits
    (EXIT_WRITE: the interval is undone)."""
    b = lw.b
    _row, nbytes = lds_row(lw)
    room = lw.broadcast64(b.op(f"sub i64 {nbytes}, {size}"))
    wide, bad = [], None
    for off in offsets:
        a64 = b.op(f"add {b.v64} {b.op(f'zext {b.v32} {addr} to {b.v64}')}, {b.splat('i64', off)}")
        wide.append(a64)
        out = b.op(f"and {b.vmask} {b.op(f'icmp sgt {b.v64} {a64}, {room}')}, {active}")
        bad = out if bad is None else b.op(f"or {b.vmask} {bad}, {out}")
    lw.branch_exit(b.mask_any(bad), EXIT_WRITE)
    return wide


def _write(lw: Lowering, a64: str, data: list[str], size: int, active: str, exec_bits: str) -> None:
    """lds_write for one address vector: one masked scatter for whole dwords (lanes in order: the highest lane
    wins), else lane after lane with all of a lane's bytes."""
    b = lw.b
    row, _n = lds_row(lw)
    ptrs = b.op(f"getelementptr i8, ptr {row}, {b.v64} {a64}")
    vp, n = b.vec("ptr"), lw.lanes
    if size == 4:
        name = f"@llvm.masked.scatter.v{n}i32.v{n}p0"
        b.call("void", name, [(b.v32, data[0]), (vp, ptrs), ("i32", "4"), (b.vmask, active)],
               f"declare void {name}({b.v32}, {vp}, i32, {b.vmask})")
        return
    mi = b.mask_int
    pre, head, body, done = (b.fresh(x)[1:] for x in ("dspre", "dshead", "dsbody", "dsdone"))
    b.raw(f"br label %{pre}")
    b.label(pre)
    b.raw(f"br label %{head}")
    b.label(head)
    m, rest = b.fresh("dsm"), b.fresh("dsrest")
    b.raw(f"{m} = phi {mi} [{exec_bits}, %{pre}], [{rest}, %{body}]")
    b.raw(f"br i1 {b.op(f'icmp eq {mi} {m}, 0')}, label %{done}, label %{body}")
    b.label(body)
    lane = b.call(mi, f"@llvm.cttz.{mi}", [(mi, m), ("i1", "true")], f"declare {mi} @llvm.cttz.{mi}({mi}, i1)")
    b.raw(f"{rest} = and {mi} {m}, {b.op(f'sub {mi} {m}, 1')}")
    ptr = b.op(f"extractelement {vp} {ptrs}, {mi} {lane}")
    if size < 4:
        it = f"i{8 * size}"
        val = b.op(f"extractelement {b.v32} {data[0]}, {mi} {lane}")
        b.raw(f"store {it} {b.op(f'trunc i32 {val} to {it}')}, ptr {ptr}, align 1")
    else:
        for k, vec in enumerate(data):
            at = b.op(f"getelementptr i32, ptr {ptr}, i64 {k}")
            b.raw(f"store i32 {b.op(f'extractelement {b.v32} {vec}, {mi} {lane}')}, ptr {at}, align 4")
    b.raw(f"br label %{head}")
    b.label(done)


def _store_data(lw: Lowering, first: int, size: int, high_half: bool) -> list[str]:
    """vmem.store_data: the data VGPRs from `first` (a d16_hi store takes the high half)."""
    b = lw.b
    data = [lw.vgpr(first + k) for k in range(max(size // 4, 1))]
    if high_half:
        data = [b.op(f"lshr {b.v32} {data[0]}, {b.splat('i32', 16)}")]
    return data


def _common(lw: Lowering, inst) -> None:
    if inst.fields.get("gds"):
        raise Unsupported("GDS")


@translates(*[f"ds_store_{k}" for k in _SIZE], "ds_store_b8_d16_hi", "ds_store_b16_d16_hi")
def _ds_store(lw: Lowering, inst):
    """ds._store: VGPR addr + 16-bit offset; in an interval only (translate.build_module parks rounds)."""
    _common(lw, inst)
    kind, high_half = _STORE.match(inst.mnemonic).group(1, 2)
    size = _SIZE[kind]
    f = inst.fields
    data = _store_data(lw, f["data0"], size, bool(high_half))
    active, exec_bits = lw.exec_lanes(), lw.exec_bits()
    (a64,) = _addresses(lw, lw.vgpr(f["addr"]), [f["offset0"] | (f["offset1"] << 8)], size, active)
    lds_check(lw, [a64], active, size, store=True)
    _write(lw, a64, data, size, active, exec_bits)


@translates("ds_store_2addr_b32", "ds_store_2addr_b64", "ds_store_2addr_stride64_b32", "ds_store_2addr_stride64_b64")
def _ds_store_2addr(lw: Lowering, inst):
    """ds._store_2addr: DATA0 at ADDR + offset0 * size, then DATA1 at ADDR + offset1 * size (* 64 for stride64)."""
    _common(lw, inst)
    m = _STORE_2ADDR.match(inst.mnemonic)
    size = 8 if m.group(2) == "b64" else 4
    scale = size * (64 if m.group(1) else 1)
    f = inst.fields
    data0, data1 = _store_data(lw, f["data0"], size, False), _store_data(lw, f["data1"], size, False)
    active, exec_bits = lw.exec_lanes(), lw.exec_bits()
    a0, a1 = _addresses(lw, lw.vgpr(f["addr"]), [f["offset0"] * scale, f["offset1"] * scale], size, active)
    lds_check(lw, [a0, a1], active, size, store=True)
    _write(lw, a0, data0, size, active, exec_bits)
    _write(lw, a1, data1, size, active, exec_bits)
