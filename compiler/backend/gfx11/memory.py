"""Loads and stores: global memory (saddr form: the buffer's SGPR base plus a 32-bit VGPR byte offset), scalar
loads (s_load) for uniform 4- and 8-byte values, LDS (ds_*), and gated accesses.

- Offsets: an index `x + c` folds c into the instruction's offset field (global: signed 13 bits, LDS: unsigned
  16 bits plus the array's place in LDS, SMEM: unsigned 20 bits).
- A gated load reads index 0 where its gate is false and selects 0 (index 0 is inside every buffer), as the
  LLVM backend does; a gated store runs under EXEC = EXEC & gate (s_and_saveexec, skipped by s_cbranch_execz
  when no lane is left), or behind a uniform branch on SCC when the gate is scalar. Consecutive stores under one
  gate share the region.
- Widest legal width: ungated vector loads of one buffer at consecutive indices `B + c` (same B, in one loop
  nest, with no store to that buffer or barrier between them) become one load of up to 16 bytes (b64, b96,
  b128) when the first element's address is aligned to the width (LDS; global: 4 bytes), so the 16
  consecutive LDS words a tiled matmul reads per row are 4 ds_load_b128. float16/bfloat16 elements combine
  only for WMMA operands, which want them packed two to a register.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.gfx11.operands import EXEC
from compiler.backend.gfx11.select import RULES, C, GfxSelector, nregs
from compiler.backend.mir import Imm, MInst, Sub, label
from compiler.dtypes import dtypes
from compiler.ir.linearize import loops_of
from compiler.ir.ops import Ops, UOp
from compiler.ir.ranges import value_range
from compiler.ir.symbolic import linear

_VLOAD = {1: "u8", 2: "u16", 4: "b32", 8: "b64", 12: "b96", 16: "b128"}
_VSTORE = {1: "b8", 2: "b16", 4: "b32", 8: "b64", 12: "b96", 16: "b128"}
GLOBAL_OFFSET = range(-4096, 4096)
LDS_OFFSET = range(0, 65536)
SMEM_OFFSET = range(0, 1 << 20)


@dataclass
class Packed:
    """A 16-bit element of a combined load: half `half` of the 32-bit register `word`."""

    word: Sub
    half: int
    dtype: object


def buffer_of(u: UOp) -> UOp:
    """The PARAM or LDS a pointer operand names (through AFTER)."""
    while u.op is Ops.AFTER:
        u = u.src[0]
    return u


def index_form(s: GfxSelector, idx: UOp) -> tuple[frozenset, int]:
    """idx as (terms, c): the linear form sum(k * term) + c (compiler.ir.symbolic.linear), memoized."""
    memo = s.linear_memo
    if idx not in memo:
        terms, c = linear(idx)
        memo[idx] = (frozenset(terms.items()), int(c))
    return memo[idx]


def split_index(s: GfxSelector, idx: UOp, at: UOp | None = None) -> tuple[UOp | None, int]:
    """idx as (B, c) with idx == B + c, B a uop that already has a value (None for a constant index), so loads
    at B, B+1, B+2 share one address register and differ in their offset fields. Without such a B: (idx, 0)."""
    terms, c = index_form(s, idx)
    if not terms:
        return None, c
    if c == 0:
        return idx, 0
    b = base_of(s).get(terms)
    if b is not None and b in s.val and (at is None or s.pos.get(b, 1 << 30) < s.pos.get(at, 0)) \
            and value_range(b)[0] >= 0:  # the VGPR/SGPR offset is unsigned: B must not go below 0 (flips)
        return b, c
    return idx, 0


def base_of(s: GfxSelector) -> dict[frozenset, UOp]:
    """Integer uops by their linear form's terms, for those with no constant part (the first in kernel order).
    Any int32 uop may be a base (a MOD or AND too: lane % 16 + 16k addresses a WMMA operand's column)."""
    if s.bases is None:
        s.bases = {}
        for u in s.k.uops:
            if u.dtype == dtypes.int32 and u.op is not Ops.CONST:
                terms, c = index_form(s, u)
                if c == 0 and terms:
                    s.bases.setdefault(terms, u)
    return s.bases


def multiple(u: UOp | None, depth: int = 0) -> int:
    """A number u's value is always a multiple of (1 when unknown; capped at 2**16)."""
    cap = 1 << 16
    if u is None:
        return cap
    if depth > 12:
        return 1
    if u.op is Ops.CONST:
        v = abs(int(u.arg))
        return cap if v == 0 else math.gcd(v, cap)
    if u.op is Ops.MUL:
        return min(cap, multiple(u.src[0], depth + 1) * multiple(u.src[1], depth + 1))
    if u.op in (Ops.ADD, Ops.SUB):
        return math.gcd(multiple(u.src[0], depth + 1), multiple(u.src[1], depth + 1))
    if u.op is Ops.SHL and u.src[1].op is Ops.CONST and 0 <= u.src[1].arg < 16:
        return min(cap, multiple(u.src[0], depth + 1) << int(u.src[1].arg))
    return 1


# ---- planning: which loads combine -----------------------------------------------------------------------------
def plan(s: GfxSelector) -> None:
    """Find load groups to combine (module docstring)."""
    uops = s.k.uops
    scope = loops_of(uops)
    groups: dict[tuple, list[tuple[int, UOp]]] = {}
    sgroups: dict[tuple, list[tuple[int, UOp]]] = {}
    cut = 0  # a store or barrier ends every group (conservative: any buffer)
    for u in uops:
        if u.op in (Ops.STORE, Ops.BARRIER, Ops.RANGE, Ops.ENDRANGE):
            cut += 1
            continue
        if u.op is not Ops.LOAD or len(u.src) > 2:
            continue
        size = u.dtype.itemsize
        if u in s.scalar:
            if size in (4, 8) and buffer_of(u.src[0]).op is not Ops.LDS:
                terms, c = index_form(s, u.src[1])
                sgroups.setdefault((buffer_of(u.src[0]), terms, u.dtype, scope[u], cut), []).append((c, u))
            continue
        if size == 2 and not all(x.op is Ops.WMMA for x in s.users[u]):
            continue
        if size not in (2, 4, 8) or u.dtype == dtypes.bool:
            continue
        terms, c = index_form(s, u.src[1])
        key = (buffer_of(u.src[0]), terms, u.dtype, scope[u], cut)
        groups.setdefault(key, []).append((c, u))
    for (buf, terms, dt, _, _), members in groups.items():
        if len(members) < 2:
            continue
        members.sort(key=lambda m: m[0])
        lds = buf.op is Ops.LDS
        size = dt.itemsize
        base_align = size
        if terms:
            g = 0
            for t, k in terms:
                g = math.gcd(g, abs(k) * multiple(t))
            base_align = min(g, 1 << 16) * size
        if lds:
            base_align = math.gcd(base_align, 1 << 16)  # LDS arrays start 16-byte aligned
        run: list[tuple[int, UOp]] = []
        for m in members + [(None, None)]:
            if run and (m[0] is None or m[0] != run[-1][0] + 1 or m[0] == run[-1][0]):
                _chunks(s, run, size, base_align, lds)
                run = []
            if m[0] is not None:
                if run and m[0] == run[-1][0]:
                    continue
                run.append(m)
    for members in sgroups.values():
        _smem_chunks(s, members)


def _smem_chunks(s: GfxSelector, members: list[tuple[int, UOp]]) -> None:
    """Uniform loads of consecutive elements as s_load_b64..b256 (SMEM needs only dword alignment)."""
    members = sorted({c: u for c, u in members}.items())
    i = 0
    while i < len(members):
        j = i + 1
        while j < len(members) and members[j][0] == members[j - 1][0] + 1:
            j += 1
        per = members[i][1].dtype.itemsize // 4
        while i < j:
            n = next((w // per for w in (8, 4, 2) if w // per >= 2 and i + w // per <= j), 1)
            chunk = [u for _, u in members[i:i + n]]
            if n > 1 and _loadable_first(s, chunk):
                first, tup = min(chunk, key=lambda u: s.pos[u]), object()
                for k, u in enumerate(chunk):
                    s.smem_combined[u] = (first, k, n, chunk[0], tup)
            i += n


def _chunks(s: GfxSelector, run: list[tuple[int, UOp]], size: int, base_align: int, lds: bool) -> None:
    """Split a run of consecutive elements into combined loads of 8..16 bytes; consecutive loads share one
    register tuple of up to 8 registers (a WMMA operand is one)."""
    chunks: list[list[UOp]] = []
    i = 0
    while i < len(run):
        c0 = run[i][0]
        best = 1
        for width in (16, 12, 8):
            n = width // size
            if n < 2 or i + n > len(run):
                continue
            align_need = 16 if (lds and width == 16) else 8 if (lds and width in (8, 12)) else 4
            if base_align % align_need == 0 and (c0 * size) % align_need == 0:
                best = n
                break
        if best > 1:
            chunks.append([run[i + k][1] for k in range(best)])
        elif chunks and chunks[-1] is not None:
            chunks.append(None)  # a gap: the next chunk starts a new tuple
        i += best
    tup, dwords = None, 0
    for chunk in chunks:
        if chunk is not None and not _loadable_first(s, chunk):
            chunk = None
        if chunk is None:
            tup = None
            continue
        n = len(chunk) * size // 4
        if tup is None or dwords + n > 8:
            tup, dwords = object(), 0
        first = min(chunk, key=lambda u: s.pos[u])
        for k, u in enumerate(chunk):
            s.combined[u] = (first, k, len(chunk), tup, dwords, chunk[0])
        dwords += n
    s.tuple_dwords = getattr(s, "tuple_dwords", {})
    for chunk in chunks:
        if chunk is not None and chunk[0] in s.combined:
            t = s.combined[chunk[0]][3]
            s.tuple_dwords[t] = max(s.tuple_dwords.get(t, 0), s.combined[chunk[0]][4] + len(chunk) * size // 4)


def _loadable_first(s: GfxSelector, chunk: list[UOp]) -> bool:
    """Whether a combined load can issue where its first member (in kernel order) is: the lowest element's
    index is computed by then (the members may come in any order: x[2i+1] * 3 + x[2i] reads 2i+1 first)."""
    first = min(chunk, key=lambda u: s.pos[u])
    idx = chunk[0].src[1]
    return first is chunk[0] or idx.op is Ops.CONST or s.pos.get(idx, 1 << 30) < s.pos[first]


# ---- addresses --------------------------------------------------------------------------------------------------
def _scaled(s: GfxSelector, x, size: int, rc: str):
    """x * size (bytes from an element index) in class rc; constants stay constants."""
    if isinstance(x, C):
        return C(int(x.value) * size, dtypes.int32, None)
    if size == 1:
        return x
    sh = size.bit_length() - 1
    if rc == "s" and x.rc == "s":
        d = s.sreg().all
        s.sop("s_lshl_b32", d, x, opnd.imm(sh, "b32"), flags=("scc",))
        return d
    d = s.vreg().all
    s.vop("v_lshlrev_b32", d, opnd.imm(sh, "b32"), x)
    return d


def _scaled_at(s: GfxSelector, base: UOp, size: int, rc: str):
    """base * size computed once, at base's own position (so every access through base shares it)."""
    key = (base, size, rc)
    if key not in s.scaled:
        x = s.src(base)
        if isinstance(x, Sub) and x.rc == "v":
            rc = "v"
        with s.at(base):
            s.scaled[key] = _scaled(s, x, size, rc)
    return s.scaled[key]


def _gate_index(s: GfxSelector, x, gate):
    """The index to read: x where the gate holds, 0 elsewhere."""
    if gate is None:
        return x
    g = s.src(gate)
    if isinstance(g, C):
        return x if g.value else C(0, dtypes.int32, None)
    if gate in s.scalar and (isinstance(x, C) or x.rc == "s"):
        d = s.sreg().all
        s.sop("s_cmp_lg_u32", g, opnd.imm(0, "b32"), ndef=0, flags=("scc",))
        s.sop("s_cselect_b32", d, s.b32(x), opnd.imm(0, "b32"), flags=("use_scc",))
        return d
    d = s.vreg().all
    s.vop("v_cndmask_b32_e64", d, opnd.imm(0, "b32"), s.b32(x), g, fixed_scalar=(2,))
    return d


def _address(s: GfxSelector, idx: UOp, gate: UOp | None, size: int, offsets: range, extra: int = 0,
             want: str = "v"):
    """(register or None, immediate byte offset) addressing element idx; want 'v' (VGPR offset) or 's' (SGPR)."""
    base, c = split_index(s, idx, s.current) if gate is None else (idx, 0)
    off = c * size + extra
    if off not in offsets:
        base, off = idx, extra
    if base is None:
        return None, off
    if gate is None and base.op is not Ops.CONST:
        b = _scaled_at(s, base, size, want)
    else:
        b = _scaled(s, _gate_index(s, s.src(base), gate), size, want)
    if isinstance(b, C):
        off2 = int(b.value) + off
        if off2 in offsets:
            return None, off2
        b = s.materialize(C(int(b.value), dtypes.int32, None), want) if want == "s" else s.in_vgpr(
            C(int(b.value), dtypes.int32, None), dtypes.int32)
    if want == "v" and b.rc == "s":
        b = s.in_vgpr(b, dtypes.int32)
    return b, off


def _off(off: int) -> str:
    return f"offset:{off}" if off else ""


# ---- loads ------------------------------------------------------------------------------------------------------
def _load_suffix(dt, size: int) -> str:
    if size == 1:
        return "i8" if dt.kind == "i" else "u8"
    if size == 2:
        return "i16" if dt.kind == "i" else "u16"
    return _VLOAD[size]


@RULES.rule(Ops.LOAD)
def _load(s: GfxSelector, u: UOp) -> None:
    buf = buffer_of(u.src[0])
    if u in s.combined:
        _combined_load(s, u)
        return
    if u in s.smem_combined:
        _smem_combined_load(s, u, buf)
        return
    if u in s.d16:
        _d16_load(s, u, buf)
        return
    gate = u.src[2] if len(u.src) > 2 else None
    if gate is not None and gate.op is Ops.CONST:
        if not gate.arg:
            s.set(u, C(0, u.dtype, None))
            return
        gate = None
    if buf.op is Ops.LDS:
        _lds_load(s, u, buf, gate)
    elif u in s.scalar:
        _smem_load(s, u, buf, gate)
    else:
        _global_load(s, u, buf, gate)


def _finish_load(s: GfxSelector, u: UOp, raw: Sub, gate: UOp | None) -> None:
    """Turn loaded bits into u's value (bool masks, bfloat16 in float32 form) and zero it where the gate fails."""
    dt = u.dtype
    if dt == dtypes.bool:
        m = s.sreg().all
        s.vop("v_cmp_ne_u32_e64", m, opnd.imm(0, "b32"), raw)
        if gate is not None:
            g = s.src(gate)
            s.sop("s_and_b32", m, m, g, flags=("scc",))
        s.set(u, m)
        return
    if dt.name == "bfloat16":
        t = s.vreg().all
        s.vop("v_lshlrev_b32", t, opnd.imm(16, "b32"), raw)
        raw = t
    if gate is not None:
        g = s.src(gate)
        out = s.vreg(nregs(dt))
        for i in range(nregs(dt)):
            s.vop("v_cndmask_b32_e64", out[i], opnd.imm(0, "b32"), Sub(raw.reg, raw.off + i, 1), g,
                  fixed_scalar=(2,))
        raw = out.all
    s.set(u, raw)


def _global_load(s: GfxSelector, u: UOp, buf: UOp, gate: UOp | None) -> None:
    dt = u.dtype
    size = dt.itemsize
    voff, off = _address(s, u.src[1], gate, size, GLOBAL_OFFSET)
    if voff is None:
        voff = s.zero_vgpr()
    d = s.vreg(nregs(dt)).all
    s.emit(MInst(f"global_load_{_load_suffix(dt, size)}", [d, voff, s.src(buf)], 1, _off(off),
                 flags=frozenset({"vmem", "load"})))
    _finish_load(s, u, d, gate)


def _lds_load(s: GfxSelector, u: UOp, buf: UOp, gate: UOp | None) -> None:
    dt = u.dtype
    size = dt.itemsize
    addr, off = _address(s, u.src[1], gate, size, LDS_OFFSET, extra=s.lds_offset[buf.arg])
    if addr is None:
        addr = s.zero_vgpr()
    d = s.vreg(nregs(dt)).all
    s.emit(MInst(f"ds_load_{_load_suffix(dt, size)}", [d, addr], 1, _off(off), flags=frozenset({"lds", "load"})))
    _finish_load(s, u, d, gate)


def _smem_load(s: GfxSelector, u: UOp, buf: UOp, gate: UOp | None) -> None:
    dt = u.dtype
    size = dt.itemsize
    soff, off = _address(s, u.src[1], gate, size, SMEM_OFFSET, want="s")
    d = s.sreg(nregs(dt)).all
    _s_load(s, d, buf, soff, off)
    if gate is not None:
        g = s.src(gate)
        out = s.sreg(nregs(dt))
        s.sop("s_cmp_lg_u32", g, opnd.imm(0, "b32"), ndef=0, flags=("scc",))
        for i in range(nregs(dt)):
            s.sop("s_cselect_b32", out[i], Sub(d.reg, d.off + i, 1), opnd.imm(0, "b32"), flags=("use_scc",))
        d = out.all
    s.set(u, d)


def _s_load(s: GfxSelector, d: Sub, buf: UOp, soff, off: int) -> None:
    """s_load_b{32 * len(d)} d from the buffer at SGPR offset soff (or none) plus the immediate off."""
    ops = [d, s.src(buf)] + ([soff] if soff is not None else [Imm(off, hex(off))])
    mods = f"offset:{hex(off)}" if soff is not None and off else ""
    s.emit(MInst(f"s_load_b{32 * d.n}", ops, 1, mods, flags=frozenset({"smem", "load"})))


def _smem_combined_load(s: GfxSelector, u: UOp, buf: UOp) -> None:
    """A uniform element of an s_load of consecutive elements, issued by the first of them in kernel order."""
    first, k, n, low, tup = s.smem_combined[u]
    r = nregs(u.dtype)
    if u is first:
        soff, off = _address(s, low.src[1], None, u.dtype.itemsize, SMEM_OFFSET, want="s")
        d = s.sreg(n * r).all
        _s_load(s, d, buf, soff, off)
        s.smem_regs[tup] = d
    d = s.smem_regs[tup]
    s.set(u, Sub(d.reg, d.off + k * r, r))


def _d16_load(s: GfxSelector, u: UOp, buf: UOp) -> None:
    """A 16-bit element loaded into its half of a WMMA operand register (the other half kept)."""
    word, half = s.d16[u]
    lds = buf.op is Ops.LDS
    extra = s.lds_offset[buf.arg] if lds else 0
    addr, off = _address(s, u.src[1], None, 2, LDS_OFFSET if lds else GLOBAL_OFFSET, extra=extra)
    if addr is None:
        addr = s.zero_vgpr()
    if lds:
        op = "ds_load_u16_d16_hi" if half else "ds_load_u16_d16"
        s.emit(MInst(op, [word, addr], 1, _off(off), flags=frozenset({"lds", "load"}), rmw=True))
    else:
        op = "global_load_d16_hi_b16" if half else "global_load_d16_b16"
        s.emit(MInst(op, [word, addr, s.src(buf)], 1, _off(off), flags=frozenset({"vmem", "load"}), rmw=True))
    s.set(u, Packed(word, half, u.dtype))


def _combined_load(s: GfxSelector, u: UOp) -> None:
    leader, k, n, tup, first, low = s.combined[u]
    size = u.dtype.itemsize
    if tup not in s.combined_regs:
        s.combined_regs[tup] = s.vreg(s.tuple_dwords[tup])
    d = s.combined_regs[tup]
    if u is leader:  # the first member in kernel order issues the load of them all, at the lowest element
        buf = buffer_of(u.src[0])
        dwords = n * size // 4
        lds = buf.op is Ops.LDS
        extra = s.lds_offset[buf.arg] if lds else 0
        addr, off = _address(s, low.src[1], None, size, LDS_OFFSET if lds else GLOBAL_OFFSET, extra=extra)
        if addr is None:
            addr = s.zero_vgpr()
        dst = d.part(first, dwords)
        if lds:
            s.emit(MInst(f"ds_load_b{32 * dwords}", [dst, addr], 1, _off(off), flags=frozenset({"lds", "load"})))
        else:
            s.emit(MInst(f"global_load_b{32 * dwords}", [dst, addr, s.src(buf)], 1, _off(off),
                         flags=frozenset({"vmem", "load"})))
    if size == 2:
        s.set(u, Packed(d[first + k // 2], k % 2, u.dtype))
    else:
        r = nregs(u.dtype)
        s.set(u, d.part(first + k * r, r))


# ---- stores -----------------------------------------------------------------------------------------------------
def _store_data(s: GfxSelector, v: UOp, lds: bool) -> tuple[Sub, str]:
    """(VGPR data, store suffix) for a stored value. A bfloat16 value is a float32 whose high half is the
    bfloat16: it stores the high half (global_store_d16_hi_b16; LDS spells it ds_store_b16_d16_hi)."""
    dt = v.dtype
    x = s.src(v)
    if dt == dtypes.bool:
        d = s.vreg().all
        s.vop("v_cndmask_b32_e64", d, opnd.imm(0, "b32"), opnd.imm(1, "b32"), s.mask_of(x), fixed_scalar=(2,))
        return d, "b8"
    if isinstance(x, Packed):
        x = s.unpack(v)
    x = s.in_vgpr(x, dt)
    if dt.name == "bfloat16":
        return x, "b16_d16_hi" if lds else "d16_hi_b16"
    return x, _VSTORE[dt.itemsize]


def _region_continues(s: GfxSelector, u: UOp) -> bool:
    """Whether the next uop is a store under the same gate (the EXEC region stays open)."""
    i = s.pos[u] + 1
    uops = s.k.uops
    return i < len(uops) and uops[i].op is Ops.STORE and len(uops[i].src) > 3 and uops[i].src[3] is u.src[3]


def _region_opens(s: GfxSelector, u: UOp) -> bool:
    i = s.pos[u] - 1
    uops = s.k.uops
    return not (i >= 0 and uops[i].op is Ops.STORE and len(uops[i].src) > 3 and uops[i].src[3] is u.src[3])


def _last_effect(s: GfxSelector, u: UOp) -> bool:
    """Whether nothing but the kernel's end follows u."""
    return all(x.op is Ops.SINK for x in s.k.uops[s.pos[u] + 1:])


@RULES.rule(Ops.STORE)
def _store(s: GfxSelector, u: UOp) -> None:
    buf = buffer_of(u.src[0])
    gate = u.src[3] if len(u.src) > 3 else None
    if gate is not None and gate.op is Ops.CONST:
        if not gate.arg:
            return
        gate = None
    lds = buf.op is Ops.LDS
    data, suffix = _store_data(s, u.src[2], lds)
    size = u.src[2].dtype.itemsize
    extra = s.lds_offset[buf.arg] if lds else 0
    addr, off = _address(s, u.src[1], None, size, LDS_OFFSET if lds else GLOBAL_OFFSET, extra=extra)
    if addr is None:
        addr = s.zero_vgpr()
    scalar_gate = gate is not None and gate in s.scalar
    if gate is not None and _region_opens(s, u):
        g = s.mask_of(s.src(gate))
        s.region_end = s.new_label("skip")
        if scalar_gate:
            s.sop("s_cmp_lg_u32", g, opnd.imm(0, "b32"), ndef=0, flags=("scc",))
            s.emit(MInst("s_cbranch_scc0", target=s.region_end, flags=frozenset({"use_scc", "branch"})))
        else:
            s.region_save = s.sreg().all
            s.sop("s_and_saveexec_b32", s.region_save, g, flags=("scc", "exec"))
            s.emit(MInst("s_cbranch_execz", target=s.region_end, flags=frozenset({"branch"})))
    if lds:
        s.emit(MInst(f"ds_store_{suffix}", [addr, data], 0, _off(off), flags=frozenset({"lds", "store"})))
    else:
        s.emit(MInst(f"global_store_{suffix}", [addr, data, s.src(buf)], 0, _off(off),
                     flags=frozenset({"vmem", "store"})))
    if gate is not None and not _region_continues(s, u):
        s.emit(label(s.region_end))
        if not scalar_gate and not _last_effect(s, u):
            s.sop("s_mov_b32", EXEC, s.region_save, flags=("exec",))
