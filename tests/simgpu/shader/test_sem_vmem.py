"""FLAT/GLOBAL/SCRATCH semantics against reference models written from the RDNA3 ISA: loads and
stores of every width incl. d16/d16_hi in all three segments, flat aperture routing (global, LDS,
private), addtid, and
every flat/global atomic with and without return, plus LLVM kernels (global atomics, scratch arrays).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from compiler.llvm import compile_ir
from simgpu.shader.operand import PRIVATE_BASE_HI, SHARED_BASE_HI
from simgpu.testbed import Testbed
from tests.simgpu.shader.test_sem_ds import _F32_SPECIAL, _F64_SPECIAL, LOADS, M32, M64, ref_atomic, ref_load, wr
from tests.support import lanes

LANES = 64
SETTINGS = settings(max_examples=3, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])
GLOBAL = 512


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


@cache
def _kernel_cache():
    return {}


def kernel(tb, body: str):
    c = _kernel_cache()
    if (id(tb), body) not in c:
        c[(id(tb), body)] = tb.load_asm(body, args=4, lds=256, scratch=16)
    return c[(id(tb), body)]


# s[4:5] per-lane 64-bit addresses, s[6:7] data (2 x u64 per lane), s[8:9] out, s[10:11] global area
PROLOGUE = """
    s_load_b256 s[4:11], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 3, v0
    v_lshlrev_b32 v20, 4, v0
    global_load_b64 v[2:3], v1, s[4:5]
    global_load_b128 v[4:7], v20, s[6:7]
    v_lshlrev_b32 v21, 2, v0
    v_mul_u32_u24 v22, 0x030507, v0
    ds_store_b32 v21, v22
    v_mov_b32 v10, v22
    v_add_nc_u32 v11, 0x11111111, v22
    v_add_nc_u32 v12, 0x22222222, v22
    v_add_nc_u32 v13, 0x33333333, v22
    scratch_store_b128 off, v[10:13], off
    s_waitcnt vmcnt(0) lgkmcnt(0)
    s_barrier
    v_mov_b32 v8, 0x5a5a5a5a
    v_mov_b32 v9, 0x5a5a5a5a
    v_mov_b32 v14, 0x5a5a5a5a
    v_mov_b32 v15, 0x5a5a5a5a
"""
EPILOGUE = """
    s_waitcnt vmcnt(0) lgkmcnt(0)
    s_barrier
    global_store_b128 v20, v[8:11], s[8:9]
    ds_load_b32 v22, v21
    scratch_load_b128 v[10:13], off, off
    s_waitcnt vmcnt(0) lgkmcnt(0)
    global_store_b32 v21, v22, s[8:9] offset:1024
    v_add_nc_u32 v20, 0x500, v20
    global_store_b128 v20, v[10:13], s[8:9]
    s_endpgm
"""


def init_lds() -> bytearray:
    return bytearray((np.arange(LANES, dtype=np.uint32) * 0x030507).astype(np.uint32).tobytes())


def init_private(lane: int) -> bytearray:
    v = (lane * 0x030507) & M32
    return bytearray(np.array([v, v + 0x11111111, v + 0x22222222, v + 0x33333333], np.uint64).astype(
        np.uint32).tobytes())


def run(tb, op_text: str, addrs, data, gmem: np.ndarray):
    """Run one instruction; returns (v8, v9, v14, v15 per lane), global area, LDS, private memories."""
    k = kernel(tb, PROLOGUE + op_text + EPILOGUE)
    area = tb.upload(gmem)
    full = [int(a) if a >= 1 << 40 else area + int(a) for a in addrs]  # small numbers: offsets into the area
    va = tb.upload(np.array(full, np.uint64))
    vd = tb.upload(np.asarray(data, np.uint64).reshape(LANES, 2))
    out = tb.alloc(0x500 + 16 * LANES)
    tb.launch(k, [va, vd, out, area], (1,), (LANES,))
    res = tb.download(out, np.uint32, (0x500 + 16 * LANES) // 4)
    regs = res[:256].reshape(LANES, 4)
    lds = bytearray(res[256:320].tobytes())
    priv = [bytearray(res[0x500 // 4 + 4 * i: 0x500 // 4 + 4 * i + 4].tobytes()) for i in range(LANES)]
    return regs, bytearray(tb.read(area, GLOBAL)), lds, priv


def seg_addr(kind: int, off: int) -> int:
    """0: offset into the global area, 1: LDS aperture, 2: private aperture."""
    return [off, (SHARED_BASE_HI << 32) | off, (PRIVATE_BASE_HI << 32) | off][kind]


def rd(mem, a, n):
    return sum((mem[a + i] if 0 <= a + i < len(mem) else 0) << (8 * i) for i in range(n))


flat_addrs = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 20)), min_size=LANES, max_size=LANES)
datas = st.lists(st.integers(0, M64), min_size=2 * LANES, max_size=2 * LANES)


@pytest.mark.parametrize("seg", ["flat", "global", "scratch"])
@pytest.mark.parametrize("mn", sorted(LOADS))
@SETTINGS
@given(addrs=flat_addrs, data=datas)
def test_loads(tb, seg, mn, addrs, data):
    name = mn.replace("ds_load_", f"{seg}_load_").replace("u8_d16", "d16_u8").replace("i8_d16", "d16_i8")
    name = name.replace("u16_d16", "d16_b16").replace("d16_u8_hi", "d16_hi_u8").replace("d16_i8_hi", "d16_hi_i8")
    name = name.replace("d16_b16_hi", "d16_hi_b16")
    size = LOADS[mn][0]
    vd = {1: "v8", 2: "v8", 4: "v8", 8: "v[8:9]", 12: "v[8:10]", 16: "v[8:11]"}[size]
    if seg != "flat":  # global: the global area; scratch: the lane's private memory, VGPR offset v2
        addrs = [(0 if seg == "global" else 2, o) for _, o in addrs]
    gmem = np.frombuffer(np.random.default_rng(len(name)).bytes(GLOBAL), np.uint8)
    op = {"flat": f"{name} {vd}, v[2:3] offset:3\n", "global": f"{name} {vd}, v[2:3], off offset:3\n",
          "scratch": f"{name} {vd}, v2, off offset:3\n"}[seg]
    # v10.. are clobbered by the private dump: compare only the loaded dwords
    regs, *_ = run(tb, op, [seg_addr(k, o) for k, o in addrs], data, gmem)
    mems = {0: bytearray(gmem.tobytes()), 1: init_lds()}
    for lane, (k, o) in enumerate(addrs):
        mem = mems.get(k) or init_private(lane)
        want = ref_load(mn, mem, o + 3)
        n = max(1, size // 4)
        assert list(regs[lane][:n]) == want[:n], (name, lane, k, o)


STORES = {"b8": (1, 0), "b16": (2, 0), "b32": (4, 0), "b64": (8, 0), "b96": (12, 0), "b128": (16, 0),
          "d16_hi_b8": (1, 16), "d16_hi_b16": (2, 16)}


@pytest.mark.parametrize("seg", ["flat", "global", "scratch"])
@pytest.mark.parametrize("kind", sorted(STORES))
@SETTINGS
@given(addrs=flat_addrs, data=datas)
def test_stores(tb, seg, kind, addrs, data):
    size, shift = STORES[kind]
    if seg != "flat":
        addrs = [(0 if seg == "global" else 2, o) for _, o in addrs]
    vd = {1: "v4", 2: "v4", 4: "v4", 8: "v[4:5]", 12: "v[4:6]", 16: "v[4:7]"}[size]
    op = {"flat": f"flat_store_{kind} v[2:3], {vd} offset:1\n",
          "global": f"global_store_{kind} v[2:3], {vd}, off offset:1\n",
          "scratch": f"scratch_store_{kind} v2, {vd}, off offset:1\n"}[seg]
    gmem = np.zeros(GLOBAL, np.uint8)
    _, g, lds, priv = run(tb, op, [seg_addr(k, o) for k, o in addrs], data, gmem)
    mems = {0: bytearray(GLOBAL), 1: init_lds()}
    privs = [init_private(lane) for lane in range(LANES)]
    for lane, (k, o) in enumerate(addrs):
        v = (data[2 * lane] | data[2 * lane + 1] << 64) >> shift
        wr(mems[k] if k < 2 else privs[lane], o + 1, size, v)
    assert g == mems[0] and lds == mems[1] and priv == privs


def test_addtid_and_scratch_offsets(tb):
    gmem = np.arange(GLOBAL // 4, dtype=np.uint32)
    op = ("v_mov_b32 v16, 0\ns_mov_b64 s[12:13], s[10:11]\nglobal_load_addtid_b32 v8, s[12:13] offset:8\n"
          "global_store_addtid_b32 v22, s[12:13] offset:256\n")
    regs, g, _, _ = run(tb, op, [0] * LANES, [0] * 128, gmem)
    for lane in range(LANES):
        assert regs[lane][0] == gmem[2 + lane % 32]  # laneID: the lane within its wave
    want = bytearray(gmem.tobytes())
    for lane in range(LANES):
        wr(want, 256 + 4 * (lane % 32), 4, (lane * 0x030507) & M32)
    assert g == want


# ---------------------------------------------------------------------------------------------- atomics

def _cases():
    from simgpu.shader.memory.atomic import ATOMICS as ops
    out = []
    for seg in ("flat", "global"):
        for o in ops + (("csub_u32",) if seg == "global" else ()):
            name, t = o.rsplit("_", 1)
            key = {"swap": "storexchg", "cmpswap": "cmpstore_b"}.get(name, name)
            if name in ("min", "max"):
                key = f"{name}_{t[0]}"
            if t == "f32":
                key = {"add": "add_f", "cmpswap": "cmpstore_f"}.get(name, key)
            out.append((f"{seg}_atomic_{o}", key, int(t[1:]) // 8))
    return out


ATOMICS = _cases()


@pytest.mark.parametrize("mn,key,size", ATOMICS, ids=[a[0] for a in ATOMICS])
@settings(max_examples=2, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])
@given(data=st.data())
def test_atomics(tb, mn, key, size, data):
    special = _F32_SPECIAL if size == 4 else _F64_SPECIAL
    # Lane lists from one byte string each (tests/support/lanes.py: per-element draws were most of this test's time).
    slots = list(zip(data.draw(lanes.integers(0, 2, LANES)), data.draw(lanes.integers(0, 1, LANES)), strict=True))
    if mn.startswith("global"):
        slots = [(0, s) for _, s in slots]
    addrs = [(k, s * size) for k, s in slots]
    d = data.draw(lanes.mixed(8 * size, special + [5, 1 << (8 * size - 1)], 2 * LANES))  # a special or any bits
    glc = data.draw(st.booleans())
    gm = data.draw(lanes.samples(special + [7], GLOBAL // size))
    gmem = np.array(gm, f"<u{size}").view(np.uint8)
    two = key in ("cmpstore_b", "cmpstore_f")
    dreg = {(4, False): "v4", (4, True): "v[4:5]", (8, False): "v[4:5]", (8, True): "v[4:7]"}[(size, two)]
    vd = ("v[8:9]" if size == 8 else "v8") + ", " if glc else ""
    saddr = "" if mn.startswith("flat") else ", off"
    # DATA: src in v[4:5] low dwords, cmp right after; pack lanes' (src, cmp) into the data buffer
    packed = []
    for lane in range(LANES):
        s, c = d[2 * lane], d[2 * lane + 1]
        if size == 4:
            packed += [s | (c << 32), 0]
        else:
            packed += [s, c]
    regs, g, lds, priv = run(tb, f"{mn} {vd}v[2:3], {dreg}{saddr}{' glc' if glc else ''}\n",
                             [seg_addr(k, o) for k, o in addrs], packed, gmem)
    mems = {0: bytearray(gmem.tobytes()), 1: init_lds()}
    privs = [init_private(lane) for lane in range(LANES)]
    for lane, (k, o) in enumerate(addrs):
        mem = mems[k] if k < 2 else privs[lane]
        old = rd(mem, o, size)
        wr(mem, o, size, ref_atomic(key, old, d[2 * lane], d[2 * lane + 1], size))
        if glc:
            got = int(regs[lane][0]) | (int(regs[lane][1]) << 32 if size == 8 else 0)
            assert got == old, (mn, lane, k)
        else:
            assert regs[lane][0] == 0x5A5A5A5A
    assert g == mems[0] and lds == mems[1] and priv == privs, mn


# ---------------------------------------------------------------------------------------------- LLVM kernels

ATOMIC_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @gatomics(ptr addrspace(1) %in, ptr addrspace(1) %acc, ptr addrspace(1) %olds) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %b = mul i32 %gid, 64
  %i = add i32 %b, %tid
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %i
  %v = load i32, ptr addrspace(1) %p
  %old = atomicrmw add ptr addrspace(1) %acc, i32 %v syncscope("agent") monotonic
  %a1 = getelementptr i32, ptr addrspace(1) %acc, i32 1
  %m = atomicrmw max ptr addrspace(1) %a1, i32 %v syncscope("agent") monotonic
  %a2 = getelementptr i32, ptr addrspace(1) %acc, i32 2
  %x = atomicrmw xchg ptr addrspace(1) %a2, i32 %i syncscope("agent") monotonic
  %a3 = getelementptr i32, ptr addrspace(1) %acc, i32 3
  %c = cmpxchg ptr addrspace(1) %a3, i32 0, i32 %i syncscope("agent") monotonic monotonic
  %a4 = getelementptr float, ptr addrspace(1) %acc, i32 4
  %f = uitofp i32 %v to float
  %fo = atomicrmw fadd ptr addrspace(1) %a4, float %f syncscope("agent") monotonic
  %a5 = getelementptr i64, ptr addrspace(1) %acc, i32 3
  %v64 = zext i32 %v to i64
  %o64 = atomicrmw add ptr addrspace(1) %a5, i64 %v64 syncscope("agent") monotonic
  %q = getelementptr i32, ptr addrspace(1) %olds, i32 %i
  store i32 %old, ptr addrspace(1) %q
  ret void
}
"""


def test_llvm_global_atomics(tb):
    k = tb.load(compile_ir(ATOMIC_IR))["gatomics"]
    n = 256
    v = ((np.arange(n, dtype=np.uint32) * 7919) % 1000).astype(np.uint32)
    vin, acc, olds = tb.upload(v), tb.upload(np.zeros(8, np.uint32)), tb.alloc(4 * n)
    tb.launch(k, [vin, acc, olds], (n // 64,), (64,))
    got = tb.download(acc, np.uint32, 8)
    # cmpxchg(0 -> i) in lane order: lane 0 writes 0, lane 1 still sees 0 and writes 1, later lanes fail
    assert got[0] == v.sum() and got[1] == v.max() and got[2] == n - 1 and got[3] == 1
    assert got[4].view(np.float32) == np.float32(v.sum())
    assert got[6] | (int(got[7]) << 32) == v.sum()
    # lane-order application: the returned pre-op values are the exclusive prefix sums
    assert np.array_equal(tb.download(olds, np.uint32, n), np.cumsum(v) - v)


SCRATCH_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @priv(ptr addrspace(1) %idx, ptr addrspace(1) %out) {
entry:
  %arr = alloca [16 x i32], align 4, addrspace(5)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  br label %fill
fill:
  %i = phi i32 [0, %entry], [%i1, %fill]
  %e = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %i
  %val = mul i32 %i, %tid
  store volatile i32 %val, ptr addrspace(5) %e
  %i1 = add i32 %i, 1
  %more = icmp ult i32 %i1, 16
  br i1 %more, label %fill, label %use
use:
  %ip = getelementptr i32, ptr addrspace(1) %idx, i32 %tid
  %j = load i32, ptr addrspace(1) %ip
  %jm = and i32 %j, 15
  %g = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %jm
  %r = load volatile i32, ptr addrspace(5) %g
  %op = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %r, ptr addrspace(1) %op
  ret void
}
"""


def test_llvm_scratch_dynamic_index(tb):
    k = tb.load(compile_ir(SCRATCH_IR))["priv"]
    idx = (np.arange(64, dtype=np.uint32) * 5 + 3) % 16
    vi, out = tb.upload(idx), tb.alloc(256)
    tb.launch(k, [vi, out], (1,), (64,))
    assert np.array_equal(tb.download(out, np.uint32, 64), idx * np.arange(64, dtype=np.uint32))
