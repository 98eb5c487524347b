"""LDS in barrier-to-barrier intervals (barrier.py): native DS stores and the LDS order check.

In a round, DS stores stay sync instructions (region.is_sync): a wave parks before one and the interpreter
runs it for every wave there. In a barrier-to-barrier interval (ctx C_B2B) each wave of a batch runs alone
to its next s_barrier, so the stores run here, as lds.ds_mem.lds_write does: the active lanes' bytes into
the wave's workgroup row, lane after lane (where lanes overlap, the highest lane's bytes are the ones left).

The order check. The interpreter runs the waves of a workgroup interleaved (lowest PC first), the interval
runs them one after the other, in wave order; the two can differ only where two waves of the group touch one
LDS byte and one of them stores. Each such pair is caught at the later wave's access:
- store after another wave's store: exactly, by dword. A store tags the dwords it writes (ctx C_WRITERS: an
  int64 per dword of each group's row, the interval's epoch C_EPOCH or'd with the wave's index + 1; a tag of
  an earlier epoch is no tag, so nothing is cleared between intervals) and first finds no other wave's tag;
- load after another wave's store, store after another wave's load: by hulls. Per group (ctx C_GROUP_HULLS,
  HULL_FIELDS int64 per group) the wave accessing now, its own load and store hulls ([lo, hi) of the byte
  extents, unsigned) and the union of the earlier waves' (the own ones join it when the next wave of the
  group starts: the waves of a group run one after the other). A load must not overlap the earlier waves'
  store hull, a store their load hull.
Hulls are cheap for the loads of a tiled loop (an extent and two compares, no per-lane tags) and exact enough
for kernels without races: within an interval their loads and stores of another wave's bytes do not mix. A
failed check exits with EXIT_CONFLICT, an access outside the row or not naturally aligned with EXIT_WRITE
(the interpreter's per-byte rules for those are not mirrored here): either way the interval is undone and
runs in rounds.
"""

from __future__ import annotations

import re

from simgpu.shader.jit.lower import (
    C_EPOCH,
    C_GROUP,
    C_GROUP_HULLS,
    C_LDS,
    C_LDS_BYTES,
    C_LDS_DWORDS,
    C_WRITERS,
    EXIT_CONFLICT,
    EXIT_WRITE,
    Lowering,
    Unsupported,
    translates,
)

WAVE_BITS = 24  # a tag's low bits: the wave's index in the batch + 1 (the epoch above them)
# per group: the wave accessing now, its load hull, its store hull, the earlier waves' load and store hulls
OWNER, OWN_LOADS, OWN_STORES, PRIOR_LOADS, PRIOR_STORES, HULL_FIELDS = 0, 1, 3, 5, 7, 9
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
    lo, hi = _extent(lw, addrs, active, size)
    group = _group(lw)
    at = b.op(f"mul i64 {group}, {HULL_FIELDS}")
    hulls = b.op(f"getelementptr i64, ptr {_field(lw, C_GROUP_HULLS, 'ptr')}, i64 {at}")
    _own(lw, hulls)
    plo, phi = (_slot(lw, hulls, (PRIOR_LOADS if store else PRIOR_STORES) + k)[1] for k in (0, 1))
    clash = b.op(f"and i1 {b.op(f'icmp ult i64 {lo}, {phi}')}, {b.op(f'icmp ult i64 {plo}, {hi}')}")
    tagged = []
    if store:
        epoch = _field(lw, C_EPOCH)
        tv = lw.broadcast64(b.op(f"or i64 {epoch}, {b.op('add i64 %w, 1')}"))
        ev = lw.broadcast64(epoch)
        row = lw.broadcast64(b.op(f"mul i64 {group}, {_field(lw, C_LDS_DWORDS)}"))
        writers = _field(lw, C_WRITERS, "ptr")
        n, vp, v64 = lw.lanes, b.vec("ptr"), b.v64
        gather = f"@llvm.masked.gather.v{n}i64.v{n}p0"
        two = b.splat("i64", 2)
        for a in addrs:
            first = b.op(f"add {v64} {b.op(f'lshr {v64} {a}, {two}')}, {row}")
            for k in range(max(size // 4, 1)):
                idx = first if k == 0 else b.op(f"add {v64} {first}, {b.splat('i64', k)}")
                wp = b.op(f"getelementptr i64, ptr {writers}, {v64} {idx}")
                tags = b.call(v64, gather, [(vp, wp), ("i32", "8"), (b.vmask, active), (v64, "zeroinitializer")],
                              f"declare {v64} {gather}({vp}, i32, {b.vmask}, {v64})")
                now = b.op(f"icmp uge {v64} {tags}, {ev}")
                other = b.op(f"and {b.vmask} {now}, {b.op(f'icmp ne {v64} {tags}, {tv}')}")
                other = b.op(f"and {b.vmask} {other}, {active}")
                clash = b.op(f"or i1 {clash}, {b.mask_any(other)}")
                tagged.append(wp)
    lw.branch_exit(clash, EXIT_CONFLICT)
    for wp in tagged:  # (only once every check passed)
        scatter = f"@llvm.masked.scatter.v{lw.lanes}i64.v{lw.lanes}p0"
        b.call("void", scatter, [(b.v64, tv), (b.vec("ptr"), wp), ("i32", "8"), (b.vmask, active)],
               f"declare void {scatter}({b.v64}, {b.vec('ptr')}, i32, {b.vmask})")
    own = OWN_STORES if store else OWN_LOADS
    for k, (fn, v) in enumerate((("umin", lo), ("umax", hi))):
        p, cur = _slot(lw, hulls, own + k)
        grown = b.call("i64", f"@llvm.{fn}.i64", [("i64", cur), ("i64", v)], f"declare i64 @llvm.{fn}.i64(i64, i64)")
        b.raw(f"store i64 {grown}, ptr {p}")
    b.raw(f"br label %{cont}")
    b.label(cont)


def _extent(lw: Lowering, addrs: list[str], active: str, size: int) -> tuple[str, str]:
    """[lo, hi) of the active lanes' bytes over every address vector (lo > hi when no lane is active)."""
    b = lw.b
    lo = hi = None
    for a in addrs:
        alo, ahi = lw.extent(a, active, size)
        lo = alo if lo is None else b.call("i64", "@llvm.umin.i64", [("i64", lo), ("i64", alo)],
                                            "declare i64 @llvm.umin.i64(i64, i64)")
        hi = ahi if hi is None else b.call("i64", "@llvm.umax.i64", [("i64", hi), ("i64", ahi)],
                                            "declare i64 @llvm.umax.i64(i64, i64)")
    return lo, hi


def _slot(lw: Lowering, hulls: str, index: int) -> tuple[str, str]:
    """(pointer, value) of a group's hull field."""
    b = lw.b
    p = b.op(f"getelementptr i64, ptr {hulls}, i64 {index}")
    return p, b.op(f"load i64, ptr {p}")


def _own(lw: Lowering, hulls: str) -> None:
    """Make this wave the group's owner: the previous owner's hulls join the earlier waves' (barrier.py resets
    the group's fields to no owner and empty hulls, [U64_MAX, 0), before each interval)."""
    b = lw.b
    op, owner = _slot(lw, hulls, OWNER)
    roll, done = b.fresh("ldsown")[1:], b.fresh("ldsowned")[1:]
    b.br_rare(b.op(f"icmp ne i64 {owner}, %w"), roll, done)
    b.label(roll)
    for own, prior in ((OWN_LOADS, PRIOR_LOADS), (OWN_STORES, PRIOR_STORES)):
        for k, fn in enumerate(("umin", "umax")):
            sp, mine = _slot(lw, hulls, own + k)
            pp, theirs = _slot(lw, hulls, prior + k)
            joined = b.call("i64", f"@llvm.{fn}.i64", [("i64", mine), ("i64", theirs)],
                            f"declare i64 @llvm.{fn}.i64(i64, i64)")
            b.raw(f"store i64 {joined}, ptr {pp}")
            b.raw(f"store i64 {-1 if k == 0 else 0}, ptr {sp}")
    b.raw(f"store i64 %w, ptr {op}")
    b.raw(f"br label %{done}")
    b.label(done)


def lds_addresses(lw: Lowering, addrs: list[tuple[str, int]], size: int, active: str, nbytes: str):
    """(<lanes x i64> byte addresses of each (<lanes x i32> address, constant offset), the <lanes x i1> mask of
    active lanes whose `size` bytes at one of them leave the row of `nbytes`): 64-bit sums, so nothing wraps."""
    b = lw.b
    room = lw.broadcast64(b.op(f"sub i64 {nbytes}, {size}"))
    wide, bad = [], None
    for addr, off in addrs:
        a64 = b.op(f"add {b.v64} {b.op(f'zext {b.v32} {addr} to {b.v64}')}, {b.splat('i64', off)}")
        wide.append(a64)
        out = b.op(f"and {b.vmask} {b.op(f'icmp sgt {b.v64} {a64}, {room}')}, {active}")
        bad = out if bad is None else b.op(f"or {b.vmask} {bad}, {out}")
    return wide, bad


def _addresses(lw: Lowering, addr: str, offsets: list[int], size: int, active: str) -> list[str]:
    """<lanes x i64> byte addresses VGPR addr + each offset; a lane with bytes outside the row exits
    (EXIT_WRITE: the interval is undone)."""
    wide, bad = lds_addresses(lw, [(addr, off) for off in offsets], size, active, lds_row(lw)[1])
    lw.branch_exit(lw.b.mask_any(bad), EXIT_WRITE)
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


def no_gds(inst) -> None:
    """The translators cover LDS only: a GDS access runs in the interpreter."""
    if inst.fields.get("gds"):
        raise Unsupported("GDS")


@translates(*[f"ds_store_{k}" for k in _SIZE], "ds_store_b8_d16_hi", "ds_store_b16_d16_hi")
def _ds_store(lw: Lowering, inst):
    """ds._store: VGPR addr + 16-bit offset; in an interval only (translate.build_module parks rounds)."""
    no_gds(inst)
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
    no_gds(inst)
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
