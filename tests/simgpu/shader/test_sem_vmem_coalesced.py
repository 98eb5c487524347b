"""The coalesced fast path of GLOBAL/FLAT loads and stores (sem_vmem._coalesced_span): a batch whose
lanes address consecutive dwords copies one slice of memory. A kernel copies a buffer with every
addressing form and size; the copy must equal the source (numpy), the fast path must be taken where
it applies (full EXEC, linear mapping in VRAM or the system aperture, misaligned too), and where the
range runs into a guard page or a read-only page the fault (and memory after it) must be exactly
what the per-lane path gives.
"""

from contextlib import contextmanager

import numpy as np
import pytest

from simgpu.fault import HardwareFault
from simgpu.shader.memory import vmem as sem_vmem
from simgpu.testbed import VMID, Testbed

PAGE = 4096
GROUPS = 8
SIZES = {"b32": 4, "b64": 8, "b128": 16}
REGS = {"b32": "v10", "b64": "v[10:11]", "b128": "v[10:13]"}


def copy_kernel(seg: str, saddr: bool, kind: str, offset: int, partial_exec: bool) -> str:
    """out[i] = in[i] for element i = 256 * group + item, addressed as `seg`/`saddr` says."""
    off = f" offset:{offset}" if offset else ""
    reg = REGS[kind]
    text = f"""
        s_load_b256 s[4:11], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        s_lshl_b32 s12, s2, 8
        v_add_nc_u32 v1, s12, v0
        v_lshlrev_b32 v2, {SIZES[kind].bit_length() - 1}, v1
        v_add_nc_u32 v2, s8, v2
        v_add_co_u32 v4, vcc_lo, s4, v2
        v_mov_b32 v5, s5
        v_add_co_ci_u32_e32 v5, vcc_lo, 0, v5, vcc_lo
        v_add_co_u32 v8, vcc_lo, s6, v2
        v_mov_b32 v9, s7
        v_add_co_ci_u32_e32 v9, vcc_lo, 0, v9, vcc_lo
        {"s_mov_b32 exec_lo, 0x7fffffff" if partial_exec else ""}
    """
    if saddr:
        text += (f"global_load_{kind} {reg}, v2, s[4:5]{off}\ns_waitcnt vmcnt(0)\n"
                 f"global_store_{kind} v2, {reg}, s[6:7]{off}\n")
    else:
        so = ", off" if seg == "global" else ""
        text += (f"{seg}_load_{kind} {reg}, v[4:5]{so}{off}\ns_waitcnt vmcnt(0) lgkmcnt(0)\n"
                 f"{seg}_store_{kind} v[8:9], {reg}{so}{off}\n")
    return text + "s_endpgm\n"


def _map_system(tb: Testbed, data: np.ndarray, pa: int) -> int:
    size = -(-data.size // PAGE) * PAGE
    va = tb._next_va
    tb._next_va += size + PAGE
    tb.phys.add_system(pa, np.zeros(size, np.uint8))
    tb.tables.map(va, size, pa, system=True)
    tb.mmu.invalidate(VMID, (va, va + size))
    tb.write(va, data.tobytes())
    return va


def buffers(tb: Testbed, layout: str, nbytes: int, src: np.ndarray) -> tuple[int, int]:
    """(source VA, destination VA); the destination is filled with 0xEE."""
    fill = np.full(nbytes + 2 * PAGE, 0xEE, np.uint8)
    if layout == "system":
        return _map_system(tb, src, 1 << 40), _map_system(tb, fill, (1 << 40) + (4 << 20))
    if layout == "short_src":  # the source ends a page early: the guard page after it faults
        return tb.upload(src[:nbytes - PAGE]), tb.upload(fill)
    if layout == "readonly_dst":
        dst = tb.upload(fill)
        size = -(-fill.size // PAGE) * PAGE
        tb.tables.map(dst, size, tb.mmu.translate(VMID, dst).pa, writeable=False)
        tb.mmu.invalidate(VMID, (dst, dst + size))
        return tb.upload(src), dst
    return tb.upload(src), tb.upload(fill)


@contextmanager
def fast_path(name: str, fast: bool, off):
    """sem_vmem's fast path `name` (off: what it returns when it does not apply) taken when it applies, if `fast`,
    else never; yields the list of whether each call took it."""
    real, taken = getattr(sem_vmem, name), []

    def spy(*a):
        got = real(*a) if fast else off
        taken.append(got is not off)
        return got
    setattr(sem_vmem, name, spy)
    try:
        yield taken
    finally:
        setattr(sem_vmem, name, real)


def launch_fault(tb: Testbed, text: str, args: list[int]) -> tuple | None:
    """Launch kernel `text` over GROUPS groups of 256: None, or the fault's (kind, address, access, wave, pc)."""
    try:
        tb.launch(tb.load_asm(text, args=4), args, (GROUPS,), (256,))
    except HardwareFault as e:
        return e.kind, e.address, e.access, e.wave, e.pc
    return None


def run(case, fast: bool):
    seg, saddr, kind, offset, partial, layout, shift = case
    with fast_path("_coalesced_span", fast, None) as taken:
        tb = Testbed(vram_size=1 << 28)
        nbytes = GROUPS * 256 * SIZES[kind]
        src = np.random.default_rng(1).integers(0, 256, nbytes + 2 * PAGE, dtype=np.uint8)
        vsrc, vdst = buffers(tb, layout, nbytes, src)
        k = tb.load_asm(copy_kernel(seg, saddr, kind, offset, partial), args=4)
        fault = None
        try:
            tb.launch(k, [vsrc, vdst, shift + PAGE, 0], (GROUPS,), (256,))
        except HardwareFault as e:
            fault = (e.kind, e.address, e.access, e.vmid, e.wave, e.pc)
        out = np.frombuffer(tb.read(vdst, nbytes + 2 * PAGE), np.uint8)
    return fault, out, src, any(taken)


FORMS = [("global", False), ("global", True), ("flat", False)]


@pytest.mark.parametrize("seg,saddr", FORMS)
@pytest.mark.parametrize("kind", sorted(SIZES))
@pytest.mark.parametrize("layout,shift", [("vram", 0), ("vram", 2), ("system", 0)])
def test_coalesced_copy_matches_numpy_and_takes_the_fast_path(seg, saddr, kind, layout, shift):
    offset = 4 if seg == "flat" else -8
    fault, out, src, taken = run((seg, saddr, kind, offset, False, layout, shift), fast=True)
    assert fault is None and taken
    start = PAGE + shift + offset  # the kernel argument adds PAGE + shift, the instruction its offset
    nbytes = GROUPS * 256 * SIZES[kind]
    assert np.array_equal(out[start:start + nbytes], src[start:start + nbytes])
    assert (out[:start] == 0xEE).all() and (out[start + nbytes:] == 0xEE).all()


@pytest.mark.parametrize("seg,saddr", FORMS)
@pytest.mark.parametrize("layout,partial", [("short_src", False), ("readonly_dst", False), ("vram", True)])
def test_faults_and_partial_exec_match_the_per_lane_path(seg, saddr, layout, partial):
    case = (seg, saddr, "b64", 0, partial, layout, 0)
    fast, slow = run(case, fast=True), run(case, fast=False)
    assert fast[0] == slow[0] and np.array_equal(fast[1], slow[1])
    if layout != "vram":
        assert fast[0] is not None and fast[0][0] == "page_fault"


# ---- gathered loads: every lane's address in one linearly mapped range, in any pattern -------------------

def gather_kernel(kind: str, pattern: str) -> str:
    """out[item] = in[f(item)] for f = pattern: 'bcast' (all lanes one element), 'stride' (every 5th
    element), 'perm' (lanes reversed in each wave); 64-bit VGPR addresses for the load."""
    index = {"bcast": "v_mov_b32 v1, 3",
             "stride": "v_mul_u32_u24 v1, v1, 5",
             "perm": "v_xor_b32 v1, 31, v1"}[pattern]
    return f"""
        s_load_b256 s[4:11], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        s_lshl_b32 s12, s2, 8
        v_add_nc_u32 v1, s12, v0
        v_lshlrev_b32 v3, {SIZES[kind].bit_length() - 1}, v1
        {index}
        v_lshlrev_b32 v2, {SIZES[kind].bit_length() - 1}, v1
        v_add_co_u32 v4, vcc_lo, s4, v2
        v_mov_b32 v5, s5
        v_add_co_ci_u32_e32 v5, vcc_lo, 0, v5, vcc_lo
        global_load_{kind} {REGS[kind]}, v[4:5], off
        s_waitcnt vmcnt(0)
        global_store_{kind} v3, {REGS[kind]}, s[6:7]
        s_endpgm
    """


def run_gather(kind: str, pattern: str, src_pages: int | None, fast: bool):
    with fast_path("_gathered_load", fast, False) as taken:
        tb = Testbed(vram_size=1 << 28)
        n = GROUPS * 256
        src = np.random.default_rng(2).integers(0, 2**32, n * SIZES[kind] // 4 * 5, dtype=np.uint32)
        vsrc = tb.upload(src if src_pages is None else src[:src_pages * PAGE // 4])
        vdst = tb.alloc(n * SIZES[kind])
        fault = launch_fault(tb, gather_kernel(kind, pattern), [vsrc, vdst, 0, 0])
        out = np.frombuffer(tb.read(vdst, n * SIZES[kind]), np.uint32)
    return fault, out, src, any(taken)


@pytest.mark.parametrize("kind", sorted(SIZES))
@pytest.mark.parametrize("pattern", ["bcast", "stride", "perm"])
def test_gathered_load_matches_numpy(kind, pattern):
    fault, out, src, taken = run_gather(kind, pattern, None, fast=True)
    assert fault is None and taken
    n, dw = GROUPS * 256, SIZES[kind] // 4
    item = np.arange(n)
    index = {"bcast": np.full(n, 3), "stride": item * 5, "perm": item ^ 31}[pattern]
    want = src.reshape(-1, dw)[index].reshape(-1)
    assert np.array_equal(out, want)


def test_gathered_load_past_the_mapping_faults_like_the_per_lane_path():
    fast, slow = run_gather("b32", "stride", 2, fast=True), run_gather("b32", "stride", 2, fast=False)
    assert fast[0] is not None and fast[0][0] == "page_fault" and fast[0] == slow[0]
    assert np.array_equal(fast[1], slow[1])


# ---- scattered stores: every lane's dwords in one linearly mapped range, no two lanes sharing one ----------

def scatter_kernel(kind: str, pattern: str) -> str:
    """out[f(item)] = in[item] for f = pattern: 'stride' (every 5th element), 'perm' (lanes reversed in each
    wave), 'column' (item 16 * r + c to element 512 * c + r: a column block of a 512-wide matrix, lanes a row
    apart), 'collide' (two lanes per element: the per-lane path decides, the higher lane wins)."""
    index = {"stride": "v_mul_u32_u24 v1, v1, 5",
             "perm": "v_xor_b32 v1, 31, v1",
             "column": "v_lshrrev_b32 v6, 4, v1\nv_and_b32 v7, 15, v1\nv_lshl_add_u32 v1, v7, 9, v6",
             "collide": "v_lshrrev_b32 v1, 1, v1"}[pattern]
    shift = SIZES[kind].bit_length() - 1
    return f"""
        s_load_b256 s[4:11], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        s_lshl_b32 s12, s2, 8
        v_add_nc_u32 v1, s12, v0
        v_lshlrev_b32 v2, {shift}, v1
        global_load_{kind} {REGS[kind]}, v2, s[4:5]
        {index}
        v_lshlrev_b32 v3, {shift}, v1
        v_add_co_u32 v4, vcc_lo, s6, v3
        v_mov_b32 v5, s7
        v_add_co_ci_u32_e32 v5, vcc_lo, 0, v5, vcc_lo
        s_waitcnt vmcnt(0)
        global_store_{kind} v[4:5], {REGS[kind]}, off
        s_endpgm
    """


def run_scatter(kind: str, pattern: str, dst_pages: int | None, fast: bool):
    with fast_path("_scattered_store", fast, False) as taken:
        tb = Testbed(vram_size=1 << 28)
        n, dw = GROUPS * 256, SIZES[kind] // 4
        src = np.random.default_rng(3).integers(0, 2**32, n * dw, dtype=np.uint32)
        words = n * dw * 5 if dst_pages is None else dst_pages * PAGE // 4
        vdst = tb.upload(np.full(words, 0xEEEEEEEE, np.uint32))
        fault = launch_fault(tb, scatter_kernel(kind, pattern), [tb.upload(src), vdst, 0, 0])
        out = np.frombuffer(tb.read(vdst, words * 4), np.uint32)
    return fault, out, src, any(taken)


@pytest.mark.parametrize("kind", sorted(SIZES))
@pytest.mark.parametrize("pattern", ["stride", "perm", "column"])
def test_scattered_store_matches_numpy(kind, pattern):
    fault, out, src, taken = run_scatter(kind, pattern, None, fast=True)
    assert fault is None and taken
    n, dw = GROUPS * 256, SIZES[kind] // 4
    item = np.arange(n)
    index = {"stride": item * 5, "perm": item ^ 31, "column": (item & 15) * 512 + (item >> 4)}[pattern]
    want = np.full(n * dw * 5, 0xEEEEEEEE, np.uint32).reshape(-1, dw)
    want[index] = src.reshape(-1, dw)
    assert np.array_equal(out, want.reshape(-1))


@pytest.mark.parametrize("kind", sorted(SIZES))
def test_colliding_lanes_take_the_per_lane_path(kind):
    fast, slow = run_scatter(kind, "collide", None, fast=True), run_scatter(kind, "collide", None, fast=False)
    assert fast[0] is None and not fast[3] and np.array_equal(fast[1], slow[1])
    n, dw = GROUPS * 256, SIZES[kind] // 4
    want = np.full(n * dw * 5, 0xEEEEEEEE, np.uint32).reshape(-1, dw)
    want[np.arange(n // 2)] = fast[2].reshape(-1, dw)[1::2]  # of lanes 2e and 2e + 1, the higher one's value
    assert np.array_equal(fast[1], want.reshape(-1))


def test_scattered_store_past_the_mapping_faults_like_the_per_lane_path():
    fast, slow = run_scatter("b32", "stride", 2, fast=True), run_scatter("b32", "stride", 2, fast=False)
    assert fast[0] is not None and fast[0][0] == "page_fault" and fast[0] == slow[0]
    assert np.array_equal(fast[1], slow[1])
