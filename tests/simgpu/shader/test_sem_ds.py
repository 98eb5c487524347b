"""DS (LDS) instruction semantics against reference models written from the RDNA3 ISA pseudo-code.

Each hand-assembled kernel runs one workgroup of 64 work-items (two wave32 waves): it fills 256 bytes
of LDS from a buffer, runs the instruction under test with per-lane operands (hypothesis: duplicate
addresses, out-of-range and unaligned addresses, special float values, partial EXEC), then writes the
results and the final LDS back. The references apply lanes in lane order, like the hardware's
per-address serialization that the simulator makes deterministic.
"""

from __future__ import annotations

import struct
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from compiler.llvm import compile_ir
from simgpu.shader.lds.ds_mem import lds_write
from simgpu.testbed import Testbed
from tests.support import lanes

LANES = 64
LDS = 256
M32, M64 = (1 << 32) - 1, (1 << 64) - 1
SETTINGS = settings(max_examples=4, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


_kernels: dict = {}


def kernel(tb, body: str, args: int = 6):
    key = (id(tb), body)
    if key not in _kernels:
        _kernels[key] = tb.load_asm(body, args=args, lds=LDS)
    return _kernels[key]


# prologue: s[4:5] init LDS dwords, s[6:7] addr, s[8:9] data0, s[10:11] data1, s[12:13] out, s14 exec mask
PROLOGUE = """
    s_load_b256 s[4:11], s[0:1], 0x0
    s_load_b64 s[12:13], s[0:1], 0x20
    s_load_b32 s14, s[0:1], 0x28
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    global_load_b32 v2, v1, s[4:5]
    global_load_b32 v3, v1, s[6:7]
    v_lshlrev_b32 v20, 3, v0
    global_load_b64 v[10:11], v20, s[8:9]
    global_load_b64 v[12:13], v20, s[10:11]
    s_waitcnt vmcnt(0)
    ds_store_b32 v1, v2
    s_waitcnt lgkmcnt(0)
    s_barrier
    v_mov_b32 v5, 0x5a5a5a5a
    v_mov_b32 v6, 0x5a5a5a5a
    v_mov_b32 v7, 0x5a5a5a5a
    v_mov_b32 v8, 0x5a5a5a5a
    s_mov_b32 exec_lo, s14
"""
# epilogue: per lane v[5:8] to out[lane*16], then LDS dump to out[1024 + lane*4]
EPILOGUE = """
    s_waitcnt lgkmcnt(0)
    s_mov_b32 exec_lo, -1
    s_barrier
    v_lshlrev_b32 v9, 4, v0
    global_store_b128 v9, v[5:8], s[12:13]
    ds_load_b32 v2, v1
    s_waitcnt lgkmcnt(0)
    global_store_b32 v1, v2, s[12:13] offset:1024
    s_endpgm
"""


def run(tb, op_text: str, init, addr, data0=None, data1=None, exec_mask=M32):
    """Run one DS instruction; returns (v[5:8] per lane as [64, 4] uint32, final LDS bytes)."""
    k = kernel(tb, PROLOGUE + op_text + EPILOGUE)
    z = np.zeros(LANES, np.uint64)
    bufs = [np.asarray(init, np.uint32), np.asarray(addr, np.uint32),
            np.asarray(z if data0 is None else data0, np.uint64), np.asarray(z if data1 is None else data1, np.uint64)]
    vas = [tb.upload(b) for b in bufs]
    out = tb.alloc(1024 + LDS)
    tb.launch(k, vas + [out, exec_mask], (1,), (LANES,))
    res = tb.download(out, np.uint32, 256 + LDS // 4)
    return res[:256].reshape(LANES, 4), bytearray(res[256:].tobytes())


def active(exec_mask: int, lane: int) -> bool:
    return bool(exec_mask >> (lane % 32) & 1)


# ---------------------------------------------------------------------------------------------- references

def rd(mem: bytearray, a: int, n: int) -> int:
    """Little-endian read with out-of-range bytes reading 0."""
    return sum((mem[a + i] if 0 <= a + i < len(mem) else 0) << (8 * i) for i in range(n))


def wr(mem: bytearray, a: int, n: int, v: int) -> None:
    for i in range(n):
        if 0 <= a + i < len(mem):
            mem[a + i] = (v >> (8 * i)) & 0xFF


def sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def isnan_bits(v: int, size: int) -> bool:
    return np.isnan(f32(v) if size == 4 else f64(v))


def ref_fminmax(old: int, src: int, is_min: bool, size: int) -> int:
    """IEEE 754-2008 minNum/maxNum on bits (the gfx11 atomic float min/max)."""
    q = 1 << (22 if size == 4 else 51)
    conv = f32 if size == 4 else f64
    an, bn = isnan_bits(old, size), isnan_bits(src, size)
    if an and not old & q:
        return old | q
    if bn and not src & q:
        return src | q
    if an and bn:
        return old | q
    if an:
        return src
    if bn:
        return old
    a, b = conv(old), conv(src)
    if a == b:
        return (old | src) if is_min else (old & src)
    return old if (a < b) == is_min else src


def ref_fadd(old: int, src: int) -> int:
    q = 1 << 22
    if isnan_bits(old, 4):
        return old | q
    if isnan_bits(src, 4):
        return src | q
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.float32(f32(old)) + np.float32(f32(src))
    return 0x7FC00000 if np.isnan(r) else int(np.float32(r).view(np.uint32))


def ref_atomic(op: str, old: int, src: int, cmp: int, size: int) -> int:
    m = (1 << (8 * size)) - 1
    bits = 8 * size
    fl = f32 if size == 4 else f64
    table = {
        "add": lambda: old + src, "sub": lambda: old - src, "rsub": lambda: src - old,
        "inc": lambda: 0 if old >= src else old + 1, "dec": lambda: src if old == 0 or old > src else old - 1,
        "min_i": lambda: old if sext(old, bits) <= sext(src, bits) else src,
        "max_i": lambda: old if sext(old, bits) >= sext(src, bits) else src,
        "min_u": lambda: min(old, src), "max_u": lambda: max(old, src),
        "and": lambda: old & src, "or": lambda: old | src, "xor": lambda: old ^ src,
        "mskor": lambda: (old & ~src) | cmp, "storexchg": lambda: src,
        "cmpstore_b": lambda: src if old == cmp else old,
        "cmpstore_f": lambda: src if fl(old) == fl(cmp) else old,
        "min_f": lambda: ref_fminmax(old, src, True, size), "max_f": lambda: ref_fminmax(old, src, False, size),
        "add_f": lambda: ref_fadd(old, src), "wrap": lambda: old - src if old >= src else old + cmp,
        "csub": lambda: old - src if old >= src else 0,
    }
    return table[op]() & m


# ---------------------------------------------------------------------------------------------- loads/stores

words = st.lists(st.integers(0, M32), min_size=LANES, max_size=LANES)
lds_addrs = st.lists(st.one_of(st.integers(0, 300), st.sampled_from([0, 1, 2, 3, 250, 252, 254, 255, 256, 260])),
                     min_size=LANES, max_size=LANES)
exec_masks = st.one_of(st.just(M32), st.integers(0, M32))

LOADS = {"ds_load_u8": (1, "u"), "ds_load_i8": (1, "i"), "ds_load_u16": (2, "u"), "ds_load_i16": (2, "i"),
         "ds_load_b32": (4, "u"), "ds_load_b64": (8, "u"), "ds_load_b96": (12, "u"), "ds_load_b128": (16, "u"),
         "ds_load_u8_d16": (1, "lo"), "ds_load_u8_d16_hi": (1, "hi"), "ds_load_i8_d16": (1, "lo"),
         "ds_load_i8_d16_hi": (1, "hi"), "ds_load_u16_d16": (2, "lo"), "ds_load_u16_d16_hi": (2, "hi")}
_VDST = {1: "v5", 2: "v5", 4: "v5", 8: "v[5:6]", 12: "v[5:7]", 16: "v[5:8]"}


def ref_load(mn: str, mem: bytearray, a: int) -> list[int]:
    size, how = LOADS[mn]
    v = rd(mem, a, size)
    prev = 0x5A5A5A5A
    signed = "_i8" in mn or "_i16" in mn
    if signed:
        v = sext(v, 8 * size)
    out = [prev] * 4
    if how in ("u", "i"):
        for i in range(max(1, size // 4)):
            out[i] = (v >> (32 * i)) & M32
    elif how == "lo":
        out[0] = (prev & 0xFFFF0000) | (v & 0xFFFF)
    else:
        out[0] = (prev & 0xFFFF) | ((v & 0xFFFF) << 16)
    return out


@pytest.mark.parametrize("mn", sorted(LOADS))
@SETTINGS
@given(init=words, addr=lds_addrs, offset=st.sampled_from([0, 1, 6, 64]), exec_mask=exec_masks)
def test_ds_loads(tb, mn, init, addr, offset, exec_mask):
    size = LOADS[mn][0]
    res, _ = run(tb, f"{mn} {_VDST[size]}, v3 offset:{offset}\n", init, addr, exec_mask=exec_mask)
    mem = bytearray(np.asarray(init, np.uint32).tobytes())
    for lane in range(LANES):
        want = ref_load(mn, mem, addr[lane] + offset) if active(exec_mask, lane) else [0x5A5A5A5A] * 4
        assert list(res[lane]) == want, (mn, lane, addr[lane])


STORES = {"ds_store_b8": (1, 0), "ds_store_b16": (2, 0), "ds_store_b32": (4, 0), "ds_store_b64": (8, 0),
          "ds_store_b96": (12, 0), "ds_store_b128": (16, 0), "ds_store_b8_d16_hi": (1, 16),
          "ds_store_b16_d16_hi": (2, 16)}
_VDATA = {1: "v10", 2: "v10", 4: "v10", 8: "v[10:11]", 12: "v[10:12]", 16: "v[10:13]"}


@pytest.mark.parametrize("mn", sorted(STORES))
@SETTINGS
@given(init=words, addr=lds_addrs, d0=st.lists(st.integers(0, M64), min_size=LANES, max_size=LANES),
       d1=st.lists(st.integers(0, M64), min_size=LANES, max_size=LANES), exec_mask=exec_masks)
def test_ds_stores(tb, mn, init, addr, d0, d1, exec_mask):
    size, shift = STORES[mn]
    _, lds = run(tb, f"{mn} v3, {_VDATA[size]} offset:3\n", init, addr, d0, d1, exec_mask)
    mem = bytearray(np.asarray(init, np.uint32).tobytes())
    for lane in range(LANES):  # lane order: the highest lane's bytes win
        if active(exec_mask, lane):
            v = d0[lane] | (d1[lane] << 64)
            wr(mem, addr[lane] + 3, size, v >> shift)
    assert lds == mem


@pytest.mark.parametrize("mn", ["ds_load_2addr_b32", "ds_load_2addr_b64", "ds_load_2addr_stride64_b32",
                                "ds_load_2addr_stride64_b64"])
@SETTINGS
@given(init=words, addr=lds_addrs, o0=st.integers(0, 255), o1=st.integers(0, 255))
def test_ds_load_2addr(tb, mn, init, addr, o0, o1):
    size = 8 if mn.endswith("b64") else 4
    scale = size * (64 if "stride64" in mn else 1)
    vd = "v[5:8]" if size == 8 else "v[5:6]"
    res, _ = run(tb, f"{mn} {vd}, v3 offset0:{o0} offset1:{o1}\n", init, addr)
    mem = bytearray(np.asarray(init, np.uint32).tobytes())
    for lane in range(LANES):
        v = rd(mem, addr[lane] + o0 * scale, size) | rd(mem, addr[lane] + o1 * scale, size) << (8 * size)
        want = [(v >> (32 * i)) & M32 for i in range(2 * size // 4)]
        assert list(res[lane][: len(want)]) == want


@pytest.mark.parametrize("mn", ["ds_store_2addr_b32", "ds_store_2addr_b64", "ds_store_2addr_stride64_b32",
                                "ds_store_2addr_stride64_b64"])
@SETTINGS
@given(init=words, addr=lds_addrs, d0=st.lists(st.integers(0, M64), min_size=LANES, max_size=LANES),
       d1=st.lists(st.integers(0, M64), min_size=LANES, max_size=LANES), o0=st.integers(0, 40),
       o1=st.integers(0, 40))
def test_ds_store_2addr(tb, mn, init, addr, d0, d1, o0, o1):
    size = 8 if mn.endswith("b64") else 4
    scale = size * (64 if "stride64" in mn else 1)
    vd = ("v[10:11], v[12:13]" if size == 8 else "v10, v12")
    _, lds = run(tb, f"{mn} v3, {vd} offset0:{o0} offset1:{o1}\n", init, addr, d0, d1)
    mem = bytearray(np.asarray(init, np.uint32).tobytes())
    for lane in range(LANES):  # per lane: first DATA0 at offset0, then DATA1 at offset1
        wr(mem, addr[lane] + o0 * scale, size, d0[lane])
    for lane in range(LANES):
        wr(mem, addr[lane] + o1 * scale, size, d1[lane])
    assert lds == mem


def test_ds_addtid(tb):
    init = np.arange(LANES, dtype=np.uint32) * 3
    res, lds = run(tb, "s_mov_b32 m0, 8\nds_load_addtid_b32 v5 offset:4\nds_store_addtid_b32 v2 offset:0\n",
                   init, np.zeros(LANES))
    mem = bytearray(init.tobytes())
    for lane in range(LANES):  # laneID is the lane within its wave
        assert res[lane][0] == rd(mem, 12 + 4 * (lane % 32), 4)
    for lane in range(LANES):
        wr(mem, 8 + 4 * (lane % 32), 4, int(init[lane]))
    assert lds == mem


# ---------------------------------------------------------------------------------------------- atomics

def _atomic_cases():
    from simgpu.shader.lds.ds import _ATOMIC, ds_mnemonics
    out = []
    for mn in ds_mnemonics():
        m = _ATOMIC.match(mn)
        if m:
            name, rtn, kind, bits = m.groups()
            key = name + ("_" + kind if name in ("min", "max", "cmpstore") else "")
            if name == "add" and kind == "f":
                key = "add_f"
            out.append((mn, key, int(bits) // 8, bool(rtn)))
    return out


ATOMICS = _atomic_cases()
_F32_SPECIAL = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000, 0x00000001, 0x3F800000, 0xBF800000]
_F64_SPECIAL = [0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, 0x7FF8 << 48, 0x7FF4 << 48, 1, 0x3FF0 << 48]


def _values(size: int):
    special = _F32_SPECIAL if size == 4 else _F64_SPECIAL
    top = (1 << (8 * size)) - 1
    return lanes.mixed(8 * size, special + [top, 1 << (8 * size - 1), 5], LANES)  # one of them or any bits


@pytest.mark.parametrize("mn,key,size,rtn", ATOMICS, ids=[a[0] for a in ATOMICS])
@settings(max_examples=3, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])
@given(data=st.data())
def test_ds_atomics(tb, mn, key, size, rtn, data):
    # Lane lists from one byte string each (tests/support/lanes.py: per-element draws were most of this test's time).
    words_ = data.draw(lanes.samples(_F32_SPECIAL + [5, 7, M32, 1 << 31], LANES) if size == 4 else
                       lanes.integers(0, M32, LANES))
    slots = data.draw(lanes.integers(0, 9, LANES))  # few slots: many duplicates
    addr = [s * size for s in slots]
    addr[-1] = LDS  # out of range: no effect, returns 0
    d0, d1 = data.draw(_values(size)), data.draw(_values(size))
    exec_mask = data.draw(exec_masks)
    two = key in ("mskor", "cmpstore_b", "cmpstore_f", "wrap")
    dv = "v[10:11]" if size == 8 else "v10"
    d1v = ("v[12:13]" if size == 8 else "v12") if two else ""
    vd = ("v[5:6]" if size == 8 else "v5") if rtn else ""
    text = f"{mn} " + ", ".join(x for x in (vd, "v3", dv, d1v) if x) + "\n"
    res, lds = run(tb, text, words_, addr, d0, d1, exec_mask)
    mem = bytearray(np.asarray(words_, np.uint32).tobytes())
    m = (1 << (8 * size)) - 1
    for lane in range(LANES):
        if not active(exec_mask, lane):
            continue
        a = addr[lane]
        old = rd(mem, a, size) if a + size <= LDS else 0
        if a + size <= LDS:
            wr(mem, a, size, ref_atomic(key, old, d0[lane] & m, d1[lane] & m, size))
        if rtn:
            got = int(res[lane][0]) | (int(res[lane][1]) << 32 if size == 8 else 0)
            assert got == old, (mn, lane)
    assert lds == mem, mn


def test_ds_storexchg_2addr_and_condxchg(tb):
    init = np.arange(LANES, dtype=np.uint32) + 100
    addr = np.arange(LANES) % 8 * 4
    d0 = np.arange(LANES, dtype=np.uint64) + 1000
    d1 = np.arange(LANES, dtype=np.uint64) + 2000
    res, lds = run(tb, "ds_storexchg_2addr_rtn_b32 v[5:6], v3, v10, v12 offset0:0 offset1:16\n", init, addr, d0, d1)
    mem = bytearray(init.tobytes())
    olds = []
    for lane in range(LANES):
        o0 = rd(mem, addr[lane], 4)
        wr(mem, addr[lane], 4, int(d0[lane]))
        olds.append(o0)
    for lane in range(LANES):
        o1 = rd(mem, addr[lane] + 64, 4)
        wr(mem, addr[lane] + 64, 4, int(d1[lane]))
        assert (res[lane][0], res[lane][1]) == (olds[lane], o1)
    assert lds == mem
    # condxchg: the qword at (addr + offset) & 0xfff8; each half written when its bit 31 is set
    dd = (np.arange(LANES, dtype=np.uint64) * 0x1_0000_0001) | np.where(np.arange(LANES) % 3 == 0, 1 << 31, 0).astype(
        np.uint64) | np.where(np.arange(LANES) % 2 == 0, 1 << 63, 0).astype(np.uint64)
    res, lds = run(tb, "ds_condxchg32_rtn_b64 v[5:6], v3, v[10:11] offset:5\n", init, addr, dd)
    mem = bytearray(init.tobytes())
    for lane in range(LANES):
        a = (addr[lane] + 5) & 0xFFF8
        lo, hi = rd(mem, a, 4), rd(mem, a + 4, 4)
        assert (res[lane][0], res[lane][1]) == (lo, hi)
        v = int(dd[lane])
        if v >> 31 & 1:
            wr(mem, a, 4, v & 0x7FFFFFFF)
        if v >> 63 & 1:
            wr(mem, a + 4, 4, (v >> 32) & 0x7FFFFFFF)
    assert lds == mem


# ---------------------------------------------------------------------------------------------- lane movement

def ref_swizzle(offset: int, lane: int) -> int:
    """The source lane per the ISA pseudo-code (FFT, rotate, quad perm, bitmask)."""
    i = lane
    if offset >= 0xE000:
        mask = offset & 0x1F
        j = int(f"{i & 0x1F:05b}"[::-1], 2) >> bin(mask).count("1")
        j |= i & mask
        return (j & 0x1F) | (i & 0x20)
    if offset >= 0xC000:
        mask = offset & 0x1F
        rot = (offset >> 5) & 0x1F
        rot = -rot if offset >> 10 & 1 else rot
        return ((i & mask) | ((i + rot) % 32 & ~mask & 0x1F)) | (i & 0x20)
    if offset & 0x8000:
        return (i & ~3) + ((offset >> (2 * (i & 3))) & 3)
    j = (((i & 0x1F) & (offset & 0x1F)) | ((offset >> 5) & 0x1F)) ^ ((offset >> 10) & 0x1F)
    return j | (i & 0x20)


@SETTINGS
@given(offset=st.one_of(st.integers(0, 0x7FFF), st.integers(0x8000, 0x80FF), st.integers(0xC000, 0xDFFF),
                        st.integers(0xE000, 0xE01F), st.sampled_from([0x041F, 0x801B, 0xE000, 0xE010, 0xC020,
                                                                      0xC420, 0xC021])),
       exec_mask=exec_masks)
def test_ds_swizzle(tb, offset, exec_mask):
    init = (np.arange(LANES, dtype=np.uint32) + 1) * 0x01010101
    res, _ = run(tb, f"ds_swizzle_b32 v5, v2 offset:{offset}\n", init, np.zeros(LANES), exec_mask=exec_mask)
    for lane in range(LANES):
        base = lane & ~31
        src = base + ref_swizzle(offset, lane % 32)
        want = (int(init[src]) if active(exec_mask, src) else 0) if active(exec_mask, lane) else 0x5A5A5A5A
        assert res[lane][0] == want, (hex(offset), lane)


def test_ds_swizzle_isa_examples():
    """The FFT and rotate examples printed in the ISA (values = lane + 1)."""
    fft0 = [0x1, 0x11, 0x9, 0x19, 0x5, 0x15, 0xD, 0x1D, 0x3, 0x13, 0xB, 0x1B, 0x7, 0x17, 0xF, 0x1F,
            0x2, 0x12, 0xA, 0x1A, 0x6, 0x16, 0xE, 0x1E, 0x4, 0x14, 0xC, 0x1C, 0x8, 0x18, 0x10, 0x20]
    from simgpu.shader.lds.ds_lane import swizzle_lanes
    assert list(swizzle_lanes(0xE000, 32) + 1) == fft0
    assert list(swizzle_lanes(0xE01F, 32)) == list(range(32))
    assert list(swizzle_lanes(0xC000 | (1 << 5), 32) + 1) == list(range(2, 33)) + [1]
    assert list(swizzle_lanes(0xC400 | (1 << 5), 32) + 1) == [32] + list(range(1, 32))


@SETTINGS
@given(addr=st.lists(st.one_of(st.integers(0, 300), st.integers(0, M32)), min_size=LANES, max_size=LANES),
       offset=st.sampled_from([0, 4, 12, 0xFFFC]), exec_mask=exec_masks)
def test_ds_permute_bpermute(tb, addr, offset, exec_mask):
    init = np.arange(LANES, dtype=np.uint32) * 7 + 1
    res, _ = run(tb, f"ds_bpermute_b32 v5, v3, v2 offset:{offset}\nds_permute_b32 v6, v3, v2 offset:{offset}\n",
                 init, addr, exec_mask=exec_mask)
    for half in (0, 32):
        tmp = [0] * 32
        for i in range(32):  # permute: active sources write, highest wins
            if active(exec_mask, i):
                tmp[((addr[half + i] + offset) & M32) // 4 % 32] = int(init[half + i])
        for i in range(32):
            lane = half + i
            src = half + ((addr[lane] + offset) & M32) // 4 % 32
            if active(exec_mask, lane):
                assert res[lane][0] == (init[src] if active(exec_mask, src) else 0)
                assert res[lane][1] == tmp[i]
            else:
                assert res[lane][0] == res[lane][1] == 0x5A5A5A5A


@pytest.mark.parametrize("mn", ["ds_append", "ds_consume"])
@SETTINGS
@given(exec_mask=exec_masks, start=st.integers(0, M32))
def test_ds_append_consume(tb, mn, exec_mask, start):
    init = np.zeros(LANES, np.uint32)
    init[3] = start
    res, lds = run(tb, f"s_mov_b32 m0, 8\n{mn} v5 offset:4\n", init, np.zeros(LANES), exec_mask=exec_mask)
    count = bin(exec_mask).count("1")
    sign = 1 if mn == "ds_append" else -1
    for wave in range(2):
        pre = (start + sign * count * wave) & M32
        for i in range(32):
            lane = wave * 32 + i
            assert res[lane][0] == (pre if active(exec_mask, lane) else 0x5A5A5A5A)
    assert rd(lds, 12, 4) == (start + sign * 2 * count) & M32


def test_ds_nop(tb):
    res, lds = run(tb, "ds_nop\n", np.arange(LANES), np.zeros(LANES))
    assert bytes(lds) == np.arange(LANES, dtype=np.uint32).tobytes()


# ---------------------------------------------------------------------------------------------- LLVM kernels

# The LDS reduction with barriers is the corpus kernel `lds_reduce` (compiler/samples/corpus.py, test_corpus.py).


LDS_ATOMIC_IR = """
@cnt = internal addrspace(3) global [4 x i32] undef, align 4
@fsum = internal addrspace(3) global float undef, align 4
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare i32 @llvm.amdgcn.ds.swizzle(i32, i32)
define amdgpu_kernel void @lds_atomics(ptr addrspace(1) %in, ptr addrspace(1) %out, ptr addrspace(1) %lane) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %is0 = icmp eq i32 %tid, 0
  br i1 %is0, label %init, label %go
init:
  store i32 0, ptr addrspace(3) @cnt
  store i32 0, ptr addrspace(3) getelementptr (i32, ptr addrspace(3) @cnt, i32 1)
  store i32 7, ptr addrspace(3) getelementptr (i32, ptr addrspace(3) @cnt, i32 2)
  store float 0.0, ptr addrspace(3) @fsum
  br label %go
go:
  call void @llvm.amdgcn.s.barrier()
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %tid
  %v = load i32, ptr addrspace(1) %p
  %old = atomicrmw add ptr addrspace(3) @cnt, i32 %v seq_cst
  %m = atomicrmw max ptr addrspace(3) getelementptr (i32, ptr addrspace(3) @cnt, i32 1), i32 %v seq_cst
  %x = atomicrmw xchg ptr addrspace(3) getelementptr (i32, ptr addrspace(3) @cnt, i32 3), i32 %tid seq_cst
  %c = cmpxchg ptr addrspace(3) getelementptr (i32, ptr addrspace(3) @cnt, i32 2), i32 7, i32 %tid seq_cst seq_cst
  %f = uitofp i32 %v to float
  %fo = atomicrmw fadd ptr addrspace(3) @fsum, float %f seq_cst
  %src = xor i32 %tid, 1
  %addr = shl i32 %src, 2
  %bp = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %v)
  %sw = call i32 @llvm.amdgcn.ds.swizzle(i32 %v, i32 31)
  call void @llvm.amdgcn.s.barrier()
  %l1 = getelementptr i32, ptr addrspace(1) %lane, i32 %tid
  store i32 %bp, ptr addrspace(1) %l1
  %t2 = add i32 %tid, 32
  %l2 = getelementptr i32, ptr addrspace(1) %lane, i32 %t2
  store i32 %sw, ptr addrspace(1) %l2
  br i1 %is0, label %write, label %ret
write:
  %a0 = load i32, ptr addrspace(3) @cnt
  %a1 = load i32, ptr addrspace(3) getelementptr (i32, ptr addrspace(3) @cnt, i32 1)
  %a2 = load i32, ptr addrspace(3) getelementptr (i32, ptr addrspace(3) @cnt, i32 2)
  %fs = load float, ptr addrspace(3) @fsum
  %fb = bitcast float %fs to i32
  store i32 %a0, ptr addrspace(1) %out
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 1
  store i32 %a1, ptr addrspace(1) %o1
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 2
  store i32 %a2, ptr addrspace(1) %o2
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 3
  store i32 %fb, ptr addrspace(1) %o3
  br label %ret
ret:
  ret void
}
"""


def test_llvm_lds_atomics_and_lane_ops(tb):
    k = tb.load(compile_ir(LDS_ATOMIC_IR))["lds_atomics"]
    v = (np.arange(32, dtype=np.uint32) * 37) % 101
    va, out, lane = tb.upload(v), tb.alloc(16), tb.alloc(256)
    tb.launch(k, [va, out, lane], (1,), (32,))
    got = tb.download(out, np.uint32, 4)
    assert got[0] == v.sum() and got[1] == v.max() and got[2] == 0  # lane 0's cmpxchg wins (lane order)
    assert got[3].view(np.float32) == np.float32(v.sum())
    lanes = tb.download(lane, np.uint32, 64)
    assert np.array_equal(lanes[:32], v[np.arange(32) ^ 1])
    assert np.array_equal(lanes[32:], v)  # swizzle offset 31: and_mask 0x1f, identity


def _lds_store_reference(lds: np.ndarray, groups: np.ndarray, addr: np.ndarray, data: np.ndarray,
                         mask: np.ndarray) -> None:
    """Lanes in [wave, lane] order, byte by byte: bytes outside the row are dropped, the last writer wins."""
    for wv in range(addr.shape[0]):
        for lane in range(addr.shape[1]):
            if not mask[wv, lane]:
                continue
            for k in range(data.shape[2]):
                a = int(addr[wv, lane]) + k
                if 0 <= a < lds.shape[1]:
                    lds[groups[wv], a] = data[wv, lane, k]


@pytest.mark.parametrize("case", ["permutation", "duplicates", "two_groups", "partial_exec", "out_of_row"])
def test_lds_write_against_lane_order(case):
    """lds_write's paths (one whole unit per lane with EXEC full and distinct units: no masks; distinct found
    by counting or by sorting; duplicates: last_wins) against the lane-order reference."""
    rng = np.random.default_rng(len(case))
    waves, lanes, row = 4, 32, 1024
    groups = np.array([0, 0, 1, 1]) if case == "two_groups" else np.zeros(waves, np.int64)
    addr = (rng.permutation(row // 4)[:waves * lanes] * 4).reshape(waves, lanes).astype(np.int64)
    if case == "duplicates":
        addr = rng.integers(0, 8, (waves, lanes)) * 4
    if case == "out_of_row":
        addr[0, :4] = row + np.arange(4) * 4
    mask = np.ones((waves, lanes), bool)
    if case == "partial_exec":
        mask = rng.random((waves, lanes)) < 0.5
    data = rng.integers(0, 256, (waves, lanes, 4)).astype(np.uint8)
    lds = rng.integers(0, 256, (2, row)).astype(np.uint8)
    want = lds.copy()
    _lds_store_reference(want, groups, addr, data, mask)
    ex = SimpleNamespace(st=SimpleNamespace(lds=lds, group=groups))
    lds_write(ex, np.arange(waves), addr, data, mask)
    np.testing.assert_array_equal(lds, want)
