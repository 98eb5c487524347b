"""MUBUF/MTBUF semantics with real gfx11 buffer resource descriptors, against a reference model of
the RDNA3 ISA buffer addressing and range checking (OOB_SELECT), written here independently."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from compiler.llvm import compile_ir
from simgpu.testbed import Testbed
from tests.simgpu.shader.test_sem_ds import _F32_SPECIAL, _F64_SPECIAL, M32, rd, ref_atomic, wr
from tests.support import lanes

LANES = 64
AREA = 1024
SETTINGS = settings(max_examples=4, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


_kernels: dict = {}


def kernel(tb, body):
    if (id(tb), body) not in _kernels:
        _kernels[(id(tb), body)] = tb.load_asm(body, args=4)
    return _kernels[(id(tb), body)]


def vsharp(base: int, stride=0, num_records=AREA, oob=3, add_tid=0, fmt=20, dst_sel=(4, 5, 6, 7), swizzle=0,
           index_stride=0) -> list[int]:
    """The four dwords of a gfx11 buffer resource descriptor."""
    w1 = (base >> 32) & 0xFFFF | stride << 16 | swizzle << 30
    w3 = dst_sel[0] | dst_sel[1] << 3 | dst_sel[2] << 6 | dst_sel[3] << 9 | fmt << 12 | index_stride << 21 | \
        add_tid << 23 | oob << 28
    return [base & M32, w1, num_records, w3]


# s[4:5] V# pointer, s[6:7] per-lane (index, offset, data0, data1) dwords, s[8:9] out, s10 soffset
PROLOGUE = """
    s_load_b256 s[4:11], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_load_b128 s[12:15], s[4:5], 0x0
    v_lshlrev_b32 v1, 4, v0
    global_load_b128 v[2:5], v1, s[6:7]
    global_load_b128 v[6:9], v1, s[6:7] offset:1024
    v_mov_b32 v10, 0x5a5a5a5a
    v_mov_b32 v11, 0x5a5a5a5a
    v_mov_b32 v12, 0x5a5a5a5a
    v_mov_b32 v13, 0x5a5a5a5a
    v_mov_b32 v14, 0x5a5a5a5a
    s_waitcnt vmcnt(0) lgkmcnt(0)
"""
EPILOGUE = """
    s_waitcnt vmcnt(0)
    global_store_b128 v1, v[10:13], s[8:9]
    global_store_b32 v1, v14, s[8:9] offset:1024
    global_store_b128 v1, v[6:9], s[8:9] offset:2048
    s_endpgm
"""


def run(tb, op, desc_fn, index, offset, data, soffset=0, area=None):
    """Run one buffer instruction on a fresh area; returns (v[10:14] per lane, v[6:9], area bytes)."""
    area_bytes = np.zeros(AREA, np.uint8) if area is None else area
    a = tb.upload(area_bytes)
    dv = tb.upload(np.array(desc_fn(a), np.uint32))
    per = np.zeros((2, LANES, 4), np.uint32)
    per[0, :, 0], per[0, :, 1] = index, offset
    per[1] = np.asarray(data, np.uint32).reshape(LANES, 4)
    out = tb.alloc(3072)
    tb.launch(kernel(tb, PROLOGUE + op + EPILOGUE), [dv, tb.upload(per), out, soffset], (1,), (LANES,))
    res = tb.download(out, np.uint32, 768)
    regs = np.concatenate([res[:256].reshape(LANES, 4), res[256:512].reshape(LANES, 4)[:, :1]], axis=1)
    return regs, res[512:].reshape(LANES, 4), bytearray(tb.read(a, AREA))


def ref_in_range(d: dict, index: int, offset: int, boff: int, start: int, length: int) -> bool:
    """OOB_SELECT per the ISA (soffset excluded)."""
    nr, stride, oob = d["num_records"], d["stride"], d["oob"]
    if oob == 0 or (oob == 3 and d["swizzle"] and stride):
        return index < nr and offset + start + length <= stride
    if oob == 1:
        return index < nr
    if oob == 2:
        return nr != 0
    return boff + start + length <= nr


def ref_lane(d: dict, lane: int, idxen: bool, offen: bool, index: int, voff: int, inst_off: int):
    idx = (index if idxen else 0) + (lane % 32 if d["add_tid"] else 0)
    off = (voff if offen else 0) + inst_off
    return idx, off, idx * d["stride"] + off


SIZES = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}
_VD = {1: "v10", 2: "v10", 4: "v10", 8: "v[10:11]", 12: "v[10:12]", 16: "v[10:13]"}
descs = st.fixed_dictionaries({"stride": st.sampled_from([0, 4, 12, 16, 20]),
                               "num_records": st.sampled_from([0, 5, 16, 100, 255, AREA]),
                               "oob": st.integers(0, 3), "add_tid": st.integers(0, 1), "swizzle": st.just(0)})
lane_vals = st.lists(st.integers(0, 40), min_size=LANES, max_size=LANES)


@pytest.mark.parametrize("kind", sorted(SIZES))
@SETTINGS
@given(d=descs, index=lane_vals, voff=lane_vals, idxen=st.booleans(), offen=st.booleans(),
       soffset=st.sampled_from([0, 3, 64]), inst_off=st.sampled_from([0, 1, 8]), tfe=st.booleans())
def test_buffer_loads(tb, kind, d, index, voff, idxen, offen, soffset, inst_off, tfe):
    size = SIZES[kind]
    vaddr = "v[2:3]" if idxen and offen else ("v2" if idxen or offen else "off")
    if offen and not idxen:  # an offset alone sits in the first vaddr register
        index, voff = voff, index
    mods = " ".join(m for m, on in (("idxen", idxen), ("offen", offen), ("tfe", tfe)) if on)
    vd = _VD[size] if not tfe else {1: "v[10:11]", 2: "v[10:11]", 4: "v[10:11]", 8: "v[10:12]",
                                     12: "v[10:13]", 16: "v[10:14]"}[size]
    op = f"buffer_load_{kind} {vd}, {vaddr}, s[12:15], s10 {mods} offset:{inst_off}\n"
    area = np.frombuffer(np.random.default_rng(size).bytes(AREA), np.uint8)
    regs, _, _ = run(tb, op, lambda a: vsharp(a, d["stride"], d["num_records"], d["oob"], d["add_tid"]),
                     index, voff, np.zeros((LANES, 4)), soffset, area)
    mem = bytearray(area.tobytes())
    for lane in range(LANES):
        if offen and not idxen:
            idx, off, boff = ref_lane(d, lane, False, True, 0, index[lane], inst_off)
        else:
            idx, off, boff = ref_lane(d, lane, idxen, offen, index[lane], voff[lane], inst_off)
        parts = [(0, size)] if size <= 4 else [(4 * k, 4) for k in range(size // 4)]
        val = 0
        for start, length in parts:
            if ref_in_range(d, idx, off, boff, start, length):
                val |= rd(mem, soffset + boff + start, length) << (8 * start)
        if kind in ("i8", "i16") and val >> (8 * size - 1):
            val -= 1 << (8 * size)
        n = max(1, size // 4)
        want = [(val >> (32 * i)) & M32 for i in range(n)] + ([0] if tfe else [])
        assert list(regs[lane][: len(want)]) == want, (kind, lane, d, idx, off)


STORES = {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16, "d16_hi_b8": 1, "d16_hi_b16": 2}


@pytest.mark.parametrize("kind", sorted(STORES))
@SETTINGS
@given(d=descs, index=lane_vals, voff=lane_vals, data=st.lists(st.integers(0, M32), min_size=4 * LANES,
                                                              max_size=4 * LANES))
def test_buffer_stores(tb, kind, d, index, voff, data):
    size = STORES[kind]
    vd = {1: "v6", 2: "v6", 4: "v6", 8: "v[6:7]", 12: "v[6:8]", 16: "v[6:9]"}[size]
    op = f"buffer_store_{kind} {vd}, v[2:3], s[12:15], s10 idxen offen offset:4\n"
    _, _, got = run(tb, op, lambda a: vsharp(a, d["stride"], d["num_records"], d["oob"], d["add_tid"]),
                    index, voff, data, 8)
    mem = bytearray(AREA)
    for lane in range(LANES):
        idx, off, boff = ref_lane(d, lane, True, True, index[lane], voff[lane], 4)
        val = sum(data[4 * lane + i] << (32 * i) for i in range(4))
        if "d16_hi" in kind:
            val >>= 16
        parts = [(0, size)] if size <= 4 else [(4 * k, 4) for k in range(size // 4)]
        for start, length in parts:
            if ref_in_range(d, idx, off, boff, start, length):
                wr(mem, 8 + boff + start, length, val >> (8 * start))
    assert got == mem


def _atomic_cases():
    out = []
    for o in ("swap_b32", "cmpswap_b32", "add_u32", "sub_u32", "csub_u32", "min_i32", "max_i32", "min_u32",
              "max_u32", "and_b32", "or_b32", "xor_b32", "inc_u32", "dec_u32", "add_f32", "min_f32", "max_f32",
              "cmpswap_f32", "swap_b64", "cmpswap_b64", "add_u64", "sub_u64", "min_i64", "max_i64", "min_u64",
              "max_u64", "and_b64", "or_b64", "xor_b64", "inc_u64", "dec_u64"):
        name, t = o.rsplit("_", 1)
        key = {"swap": "storexchg", "cmpswap": "cmpstore_b"}.get(name, name)
        if name in ("min", "max"):
            key = f"{name}_{t[0]}"
        if t == "f32":
            key = {"add": "add_f", "cmpswap": "cmpstore_f"}.get(name, key)
        out.append((f"buffer_atomic_{o}", key, int(t[1:]) // 8))
    return out


ATOMICS = _atomic_cases()


@pytest.mark.parametrize("mn,key,size", ATOMICS, ids=[a[0] for a in ATOMICS])
@settings(max_examples=3, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])
@given(data=st.data())
def test_buffer_atomics(tb, mn, key, size, data):
    special = _F32_SPECIAL if size == 4 else _F64_SPECIAL
    # Lane lists from one byte string each (tests/support/lanes.py: per-element draws were most of this test's time).
    index = data.draw(lanes.integers(0, 5, LANES))
    glc = data.draw(st.booleans())
    src = data.draw(lanes.mixed(8 * size, special + [5], LANES))  # a special value or any bits
    cmp = data.draw(lanes.mixed(8 * size, special + [5], LANES))
    init = data.draw(lanes.samples(special + [7], AREA // size))
    area = np.array(init, f"<u{size}").view(np.uint8)
    two = key.startswith("cmpstore")
    dw = size // 4 * (2 if two else 1)
    vd = "v6" if dw == 1 else f"v[6:{5 + dw}]"
    packed = np.zeros((LANES, 4), np.uint32)
    for lane in range(LANES):
        words = [src[lane] & M32, src[lane] >> 32] if size == 8 else [src[lane]]
        words += ([cmp[lane] & M32, cmp[lane] >> 32] if size == 8 else [cmp[lane]]) if two else []
        packed[lane, : len(words)] = words
    stride = 8 if size == 4 else 16
    op = f"{mn} {vd}, v2, s[12:15], 0 idxen{' glc' if glc else ''}\n"
    _, v69, got = run(tb, op, lambda a: vsharp(a, stride, 5, 1), index, np.zeros(LANES), packed, 0, area)
    mem = bytearray(area.tobytes())
    for lane in range(LANES):
        i = index[lane]
        live = i < 5  # OOB_SELECT 1: index < num_records
        old = rd(mem, i * stride, size) if live else 0
        if live:
            wr(mem, i * stride, size, ref_atomic(key, old, src[lane], cmp[lane], size))
        ret = int(v69[lane][0]) | (int(v69[lane][1]) << 32 if size == 8 else 0)
        assert ret == (old if glc else int(packed[lane][0]) | (int(packed[lane][1]) << 32 if size == 8 else 0)), \
            (mn, lane)
    assert got == mem


# ---------------------------------------------------------------------------------------------- formats

FMT = {"8_unorm": 1, "8_snorm": 2, "8_uscaled": 3, "8_sscaled": 4, "8_uint": 5, "8_sint": 6, "16_unorm": 7,
       "16_snorm": 8, "16_uint": 11, "16_sint": 12, "16_float": 13, "8_8_unorm": 14, "32_uint": 20, "32_sint": 21,
       "32_float": 22, "16_16_float": 29, "8_8_8_8_unorm": 42, "8_8_8_8_sint": 47, "32_32_float": 50,
       "16_16_16_16_snorm": 52, "32_32_32_float": 60, "32_32_32_32_uint": 61}


def fmt_info(name: str):
    parts = name.split("_")
    return int(parts[0]), len(parts) - 1, parts[-1]


def ref_decode(raw: int, bits: int, kind: str) -> int:
    s = raw - (1 << bits) if raw >> (bits - 1) & 1 else raw

    def fbits(x: float) -> int:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if kind == "unorm":
        return fbits(raw / ((1 << bits) - 1))
    if kind == "snorm":
        return fbits(max(s / ((1 << (bits - 1)) - 1), -1.0))
    if kind == "uscaled":
        return fbits(float(raw))
    if kind == "sscaled":
        return fbits(float(s))
    if kind == "uint":
        return raw
    if kind == "sint":
        return s & M32
    return fbits(float(np.frombuffer(struct.pack("<H", raw), np.float16)[0])) if bits == 16 else raw


@pytest.mark.parametrize("fmt", sorted(FMT))
@pytest.mark.parametrize("mn", ["buffer_load_format_xyzw", "tbuffer_load_format_xyzw", "tbuffer_load_format_xy"])
def test_format_loads(tb, mn, fmt):
    bits, comps, kind = fmt_info(fmt)
    esize = bits // 8 * comps
    area = np.frombuffer(np.random.default_rng(FMT[fmt]).bytes(AREA), np.uint8)
    index = (np.arange(LANES) * 7) % 40
    tfmt = f" format:{FMT[fmt]}" if mn.startswith("t") else ""
    nch = 4 if mn.endswith("xyzw") else 2
    vd = "v[10:13]" if nch == 4 else "v[10:11]"
    sel = (4, 5, 6, 7) if mn.startswith("t") else (7, 6, 1, 4)  # buffer_load_format: a swizzled dst_sel
    regs, _, _ = run(tb, f"{mn} {vd}, v2, s[12:15], 0{tfmt} idxen\n",
                     lambda a: vsharp(a, esize, 30, 3, fmt=FMT[fmt], dst_sel=sel), index, np.zeros(LANES),
                     np.zeros((LANES, 4)), 0, area)
    mem = bytearray(area.tobytes())
    one = 1 if kind in ("uint", "sint") else 0x3F800000
    for lane in range(LANES):
        b = index[lane] * esize
        live = b + esize <= 30
        comp = [ref_decode(rd(mem, b + i * bits // 8, bits // 8), bits, kind) if live else 0 for i in range(comps)]
        comp += [0] * (3 - len(comp)) + ([one] if comps < 4 else [])
        comp = comp[:4]
        want = [{0: 0, 1: one, 4: comp[0], 5: comp[1], 6: comp[2], 7: comp[3]}[s] for s in sel][:nch]
        assert list(regs[lane][:nch]) == want, (fmt, lane)


def ref_encode(v: int, bits: int, kind: str) -> int:
    f = struct.unpack("<f", struct.pack("<I", v))[0]
    m = (1 << bits) - 1
    if kind == "unorm":
        return 0 if f != f else int(np.rint(min(max(f, 0.0), 1.0) * m))
    if kind == "snorm":
        return (0 if f != f else int(np.rint(min(max(f, -1.0), 1.0) * ((1 << (bits - 1)) - 1)))) & m
    if kind in ("uint", "sint"):
        return v & m
    if bits == 16:
        return int(np.float16(np.float32(f)).view(np.uint16))
    return v


@pytest.mark.parametrize("fmt", ["8_unorm", "16_snorm", "8_8_8_8_unorm", "16_16_float", "32_32_32_32_uint",
                                 "8_8_8_8_sint", "32_float", "16_16_16_16_snorm"])
def test_format_stores(tb, fmt):
    bits, comps, kind = fmt_info(fmt)
    esize = bits // 8 * comps
    vals = np.array(([0x3F000000, 0xBF800000, 0x3E800000, 0x7FC00000, 0x40000000, 0x3F7FFFFF, 0x00000001,
                      0x80000000, 300, 0xFFFFFF80] * 30)[: 4 * LANES], np.uint32)
    index = np.arange(LANES) % 50
    _, _, got = run(tb, f"tbuffer_store_format_xyzw v[6:9], v2, s[12:15], 0 format:{FMT[fmt]} idxen\n",
                    lambda a: vsharp(a, esize, 40, 1), index, np.zeros(LANES), vals)
    mem = bytearray(AREA)
    for lane in range(LANES):
        if index[lane] < 40:
            for c in range(comps):
                wr(mem, index[lane] * esize + c * bits // 8, bits // 8, ref_encode(int(vals[4 * lane + c]), bits, kind))
    assert got == mem


@pytest.mark.parametrize("fmt", ["8_8_8_8_sint", "16_16_16_16_snorm", "32_32_32_32_uint"])
@pytest.mark.parametrize("chans", ["xyz", "x"])
def test_format_stores_with_fewer_components(tb, fmt, chans):
    """Storing xyz (or x) to a four-component format writes only those components' bytes: 3 bytes or
    6 of an 8-bit or 16-bit element (found by the engine fuzz test, which hit a 3-byte store)."""
    bits, comps, kind = fmt_info(fmt)
    esize = bits // 8 * comps
    vals = np.array(([0x3F000000, 0xBF800000, 0x3E800000, 0x7FC00000, 0x40000000, 300, 0xFFFFFF80] * 40)[: 4 * LANES],
                    np.uint32)
    index = np.arange(LANES) % 50
    regs = {"xyz": "v[6:8]", "x": "v6"}[chans]
    area = np.full(AREA, 0xA5, np.uint8)
    _, _, got = run(tb, f"tbuffer_store_format_{chans} {regs}, v2, s[12:15], 0 format:{FMT[fmt]} idxen\n",
                    lambda a: vsharp(a, esize, 40, 1), index, np.zeros(LANES), vals, area=area)
    mem = bytearray(area.tobytes())
    for lane in range(LANES):
        if index[lane] < 40:
            for c in range(len(chans)):
                wr(mem, index[lane] * esize + c * bits // 8, bits // 8, ref_encode(int(vals[4 * lane + c]), bits, kind))
    assert got == mem


def test_d16_format_and_cache_invalidates(tb):
    area = np.arange(AREA // 2, dtype=np.uint16) * 257
    index = np.arange(LANES) % 8
    op = ("buffer_gl0_inv\nbuffer_gl1_inv\n"
          "buffer_load_d16_format_xyz v[10:11], v2, s[12:15], 0 idxen\n"
          "buffer_load_d16_hi_format_x v12, v2, s[12:15], 0 idxen\n")
    regs, _, _ = run(tb, op, lambda a: vsharp(a, 8, 64, 3, fmt=FMT["16_16_16_16_snorm"] - 1),  # 16_16_16_16_unorm
                     index, np.zeros(LANES), np.zeros((LANES, 4)), 0, area.view(np.uint8))
    for lane in range(LANES):
        e = area[index[lane] * 4: index[lane] * 4 + 4].astype(np.float64) / 65535
        h = e.astype(np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)
        assert regs[lane][0] == h[0] | h[1] << 16 and regs[lane][1] & 0xFFFF == h[2]
        assert regs[lane][2] == (0x5A5A & 0xFFFF) | h[0] << 16


# ---------------------------------------------------------------------------------------------- LLVM kernels

BUFFER_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.amdgcn.raw.buffer.load.f32(<4 x i32>, i32, i32, i32)
declare void @llvm.amdgcn.raw.buffer.store.f32(float, <4 x i32>, i32, i32, i32)
declare <2 x i32> @llvm.amdgcn.struct.buffer.load.v2i32(<4 x i32>, i32, i32, i32, i32)
declare i32 @llvm.amdgcn.raw.buffer.atomic.add.i32(i32, <4 x i32>, i32, i32, i32)
define amdgpu_kernel void @buf(<4 x i32> %rin, <4 x i32> %rout, <4 x i32> %rs, <4 x i32> %rc) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %off = shl i32 %tid, 2
  %v = call float @llvm.amdgcn.raw.buffer.load.f32(<4 x i32> %rin, i32 %off, i32 0, i32 0)
  %w = fmul float %v, 2.0
  call void @llvm.amdgcn.raw.buffer.store.f32(float %w, <4 x i32> %rout, i32 %off, i32 0, i32 0)
  %s = call <2 x i32> @llvm.amdgcn.struct.buffer.load.v2i32(<4 x i32> %rs, i32 %tid, i32 4, i32 0, i32 0)
  %s0 = extractelement <2 x i32> %s, i32 0
  %s1 = extractelement <2 x i32> %s, i32 1
  %sum = add i32 %s0, %s1
  %o2 = add i32 %off, 256
  %sf = bitcast i32 %sum to float
  call void @llvm.amdgcn.raw.buffer.store.f32(float %sf, <4 x i32> %rout, i32 %o2, i32 0, i32 0)
  %old = call i32 @llvm.amdgcn.raw.buffer.atomic.add.i32(i32 %tid, <4 x i32> %rc, i32 0, i32 0, i32 0)
  ret void
}
"""


def test_llvm_raw_and_struct_buffers(tb):
    k = tb.load(compile_ir(BUFFER_IR))["buf"]
    x = np.arange(64, dtype=np.float32) * 1.5
    s = np.arange(64 * 3, dtype=np.uint32)  # 12-byte records; the load reads dwords 1 and 2
    vin, vout, vs, vc = tb.upload(x), tb.alloc(512), tb.upload(s), tb.upload(np.zeros(4, np.uint32))
    descs = (vsharp(vin, 0, 4 * 40), vsharp(vout, 0, 512), vsharp(vs, 12, 50, oob=0), vsharp(vc, 0, 4))
    tb.launch(k, [int.from_bytes(np.array(d, np.uint32).tobytes(), "little") for d in descs], (1,), (64,))
    out = tb.download(vout, np.float32, 128)
    want = np.where(np.arange(64) < 40, x * 2, 0)  # loads past num_records read 0
    assert np.array_equal(out[:64], want)
    rec = s.reshape(64, 3)
    sums = np.where(np.arange(64) < 50, rec[:, 1] + rec[:, 2], 0).astype(np.uint32)
    assert np.array_equal(out[64:].view(np.uint32), sums)
    assert tb.download(vc, np.uint32, 1)[0] == np.arange(64).sum()

