"""Simulated physical memory, gfx11 page tables and the GPUVM MMU (simgpu.hw.gmc, simgpu.mem).

Oracles: the PTE/PDE bit positions are amdgpu's (amdgpu_vm.h, gmc_v11_0.c); lane accesses are checked
against a flat numpy byte model of the mapped range, atomics against a lane-by-lane Python model.
"""

from __future__ import annotations

import hashlib
import math
import os
import struct
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.fault import HardwareFault
from simgpu.hw import gmc
from simgpu.mem import MMU, PageTableBuilder, PhysicalMemory, bump_allocator
from simgpu.mem import atomics as atom

PAGE = gmc.PAGE_SIZE
VMID = 8
VRAM = 1 << 30
SYS_PA = 0x40_0000_0000  # where the tests put a host buffer in the system aperture
BASE = 0x1_0000_0000  # VA of the scattered test range
NPAGES = 8
HYP = settings(max_examples=100, deadline=None)


def make(vram: int = VRAM):
    """A fresh PhysicalMemory, PageTableBuilder (tables in the first 8 MiB) and MMU with VMID 8 set."""
    phys = PhysicalMemory(vram)
    pt = PageTableBuilder(phys, bump_allocator(0, 8 << 20))
    mmu = MMU(phys)
    mmu.set_root(VMID, pt.root_pde)
    return phys, pt, mmu


def scattered_range(seed: int = 1):
    """NPAGES virtual pages at BASE mapped to shuffled VRAM pages and two system pages, random contents."""
    phys, pt, mmu = make()
    sysbuf = phys.add_system(SYS_PA, np.zeros(4 * PAGE, dtype=np.uint8))
    rng = np.random.default_rng(seed)
    vram_pages = (rng.permutation(64)[:NPAGES] + 4096) * PAGE  # somewhere beyond the table pool
    for i in range(NPAGES):
        system = i in (2, 5)  # two pages live in host memory
        pa = SYS_PA + (i % 4) * PAGE if system else int(vram_pages[i])
        pt.map(BASE + i * PAGE, PAGE, pa, system=system)
    model = rng.integers(0, 256, NPAGES * PAGE, dtype=np.uint8)
    mmu.write(VMID, BASE, model.tobytes())
    return phys, pt, mmu, model, sysbuf


def dump(mmu: MMU) -> np.ndarray:
    """The whole scattered range as the MMU sees it."""
    return np.frombuffer(mmu.read(VMID, BASE, NPAGES * PAGE), dtype=np.uint8)


# ---- PTE / PDE format ------------------------------------------------------------------------------------
def test_bit_positions_match_amdgpu():
    assert (gmc.PTE_VALID, gmc.PTE_SYSTEM, gmc.PTE_SNOOPED, gmc.PTE_TMZ) == (1, 2, 4, 8)
    assert (gmc.PTE_EXECUTABLE, gmc.PTE_READABLE, gmc.PTE_WRITEABLE) == (1 << 4, 1 << 5, 1 << 6)
    assert gmc.encode_pte(0, valid=False, readable=False, writeable=False, fragment=9) == 9 << 7
    assert gmc.encode_pte(0, valid=False, readable=False, writeable=False, mtype=gmc.MType.UC) == 3 << 48
    assert (gmc.PTE_PRT, gmc.PDE_PTE, gmc.PTE_TF) == (1 << 51, 1 << 54, 1 << 56)
    assert gmc.encode_pde(0x1000, valid=False, bfs=9) == 0x1000 | 9 << 59
    assert [gmc.level_shift(lv) for lv in gmc.Level] == [39, 30, 21, 12]
    assert gmc.level_index(0x0000_8040_2010_0000, gmc.Level.PDB2) == 256


@HYP
@given(addr=st.integers(0, (1 << 36) - 1), flags=st.lists(st.booleans(), min_size=7, max_size=7),
       fragment=st.integers(0, 31), mtype=st.integers(0, 7), prt=st.booleans())
def test_pte_roundtrip(addr, flags, fragment, mtype, prt):
    pte = gmc.PTE(addr << 12, *flags, fragment=fragment, mtype=mtype, prt=prt)
    word = pte.encode()
    assert gmc.PTE.decode(word) == pte
    assert gmc.PTE.decode(word | gmc.PDE_PTE) == pte  # a huge-page PDE reads as the same PTE
    assert gmc.is_huge(gmc.encode_huge_pde(addr << 12)) and not gmc.is_huge(word)


@HYP
@given(addr=st.integers(0, (1 << 42) - 1), valid=st.booleans(), system=st.booleans(), coherent=st.booleans(),
       bfs=st.integers(0, 31))
def test_pde_roundtrip(addr, valid, system, coherent, bfs):
    pde = gmc.PDE(addr << 6, valid, system, coherent, bfs)
    assert gmc.PDE.decode(pde.encode()) == pde


def test_encode_rejects_bad_fields():
    for bad in (lambda: gmc.encode_pte(0x1001), lambda: gmc.encode_pte(1 << 48), lambda: gmc.encode_pte(0, fragment=32),
                lambda: gmc.encode_pde(0x20), lambda: gmc.encode_pde(0x1000, bfs=40)):
        with pytest.raises(ValueError):
            bad()


# ---- physical memory ---------------------------------------------------------------------------------------
def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="measures RSS through Linux /proc")
def test_24gib_vram_is_cheap():
    before, t0 = _rss_kib(), time.perf_counter()
    phys = PhysicalMemory()  # default 24 GiB
    phys.write(phys.vram_size - 8, b"12345678")
    phys.write(12 << 30, b"x")
    elapsed = time.perf_counter() - t0
    assert phys.vram_size == 24 << 30
    assert phys.read(phys.vram_size - 8, 8) == b"12345678" and phys.read(12 << 30, 2) == b"x\0"
    assert elapsed < 0.5 and _rss_kib() - before < 32 * 1024


def test_small_accesses_follow_a_replaced_system_buffer_and_a_remap():
    """RangeAccess remembers the memory of a page small accesses used (a launch's packets and rptr reports): a
    system buffer replaced at the same address, or a page mapped elsewhere and invalidated, is seen at once."""
    phys, pt, mmu = make()
    old = phys.add_system(SYS_PA, np.zeros(PAGE, dtype=np.uint8))
    pt.map(BASE, PAGE, SYS_PA, system=True, fragments=False)
    mmu.write(VMID, BASE + 8, b"one!")
    assert mmu.read(VMID, BASE + 8, 4) == b"one!" and old[8:12].tobytes() == b"one!"
    phys.remove_system(SYS_PA)
    new = phys.add_system(SYS_PA, np.zeros(PAGE, dtype=np.uint8))
    assert mmu.read(VMID, BASE + 8, 4) == bytes(4)
    mmu.write(VMID, BASE + 8, b"two!")
    assert new[8:12].tobytes() == b"two!" and old[8:12].tobytes() == b"one!"
    pt.unmap(BASE, PAGE)
    pt.map(BASE, PAGE, 0x100_0000, fragments=False)
    mmu.invalidate(VMID, (BASE, BASE + PAGE))
    mmu.write(VMID, BASE + 8, b"vram")
    assert phys.read(0x100_0008, 4) == b"vram" and new[8:12].tobytes() == b"two!"
    pt.unmap(BASE, PAGE)
    mmu.invalidate(VMID, (BASE, BASE + PAGE))
    with pytest.raises(HardwareFault):
        mmu.read(VMID, BASE + 8, 4)


def test_physical_bounds_and_system_aperture():
    phys = PhysicalMemory(1 << 20)
    with pytest.raises(ValueError):
        phys.read((1 << 20) - 4, 8)
    buf = np.zeros(2 * PAGE, dtype=np.uint8)
    phys.add_system(SYS_PA, buf)
    phys.add_system(SYS_PA + 2 * PAGE, bytearray(PAGE))  # adjacent: a copy may span both
    phys.write(SYS_PA + 2 * PAGE - 2, b"abcd", system=True)
    assert buf[-2:].tobytes() == b"ab" and phys.read(SYS_PA + 2 * PAGE - 2, 4, system=True) == b"abcd"
    with pytest.raises(ValueError):
        phys.read(SYS_PA + 3 * PAGE - 1, 2, system=True)
    with pytest.raises(ValueError):
        phys.add_system(SYS_PA + PAGE, np.zeros(PAGE, dtype=np.uint8))  # overlap
    view = phys.view(SYS_PA, 16, system=True)
    view[0] = 7
    assert buf[0] == 7  # zero copy
    phys.remove_system(SYS_PA)
    with pytest.raises(ValueError):
        phys.read(SYS_PA, 1, system=True)


# ---- walks, huge pages, fragments, TLB ------------------------------------------------------------------------
def test_map_translate_unmap_4k_pages():
    phys, pt, mmu = make()
    pas = [0x2345000, 0x1000000, 0x3000000]
    pt.map_pages(BASE, pas, fragments=False)
    for i, pa in enumerate(pas):
        assert pt.entry(BASE + i * PAGE) == (gmc.Level.PTB, gmc.encode_pte(pa))
        assert mmu.translate(VMID, BASE + i * PAGE + 0x123) == (pa + 0x123, False, False)
    pt.unmap(BASE + PAGE, PAGE)
    mmu.invalidate(VMID, (BASE + PAGE, BASE + 2 * PAGE))
    with pytest.raises(HardwareFault, match="PTE not valid"):
        mmu.translate(VMID, BASE + PAGE)
    assert mmu.translate(VMID, BASE + 2 * PAGE).pa == pas[2]


def test_huge_pages_pdb0_and_pdb1():
    phys, pt, mmu = make(vram=4 << 30)
    pt.map(0x4000_0000, 1 << 30, 1 << 30)  # 1 GiB aligned: one PDB1 huge entry
    pt.map(0x8060_0000, 4 << 20, 0x6_0000 << 12)  # 2 MiB aligned: PDB0 huge entries
    level, word = pt.entry(0x4000_0000)
    assert level == gmc.Level.PDB1 and word & gmc.PDE_PTE and gmc.pte_fragment(word) == 18
    level, word = pt.entry(0x8080_0000)
    assert level == gmc.Level.PDB0 and word & gmc.PDE_PTE
    rng = np.random.default_rng(0)
    for off in rng.integers(0, 1 << 30, 50).tolist():
        assert mmu.translate(VMID, 0x4000_0000 + off).pa == (1 << 30) + off
    for off in rng.integers(0, 4 << 20, 50).tolist():
        assert mmu.translate(VMID, 0x8060_0000 + off).pa == 0x6000_0000 + off
    with pytest.raises(HardwareFault):
        mmu.translate(VMID, 0x8060_0000 + (4 << 20))


def test_fragment_translation_any_page_one_walk():
    phys, pt, mmu = make()
    pt.map(BASE, 64 * PAGE, 0x400_0000)  # 256 KiB: one fragment of 2^6 pages in the PTB
    assert gmc.pte_fragment(pt.entry(BASE + 5 * PAGE)[1]) == 6
    walks = mmu.walks
    order = np.random.default_rng(3).permutation(64)
    for i in order.tolist():
        assert mmu.translate(VMID, BASE + i * PAGE + 7).pa == 0x400_0000 + i * PAGE + 7
    assert mmu.walks == walks + 1  # the first walk cached the whole fragment


@HYP
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 700), st.booleans()), min_size=1, max_size=6),
       st.integers(0, 2**32 - 1), st.booleans())
def test_page_values_of_many_misses_match_a_walk_of_each_page(layout, seed, shuffled):
    """UTCL2.page_values translates the misses inside one fragment or huge-page leaf together. Oracle: the walk of
    each page on its own (PageWalker.walk_page, no cache), over ranges of fragments, single pages and holes, the
    pages asked for sorted or not; and one walk per leaf, not per page."""
    phys, pt, mmu = make()
    va, pa = BASE + 5 * PAGE, 0x100_0000 + 5 * PAGE  # congruent in the low bits: fragments and a 2 MiB page
    for kind, n, system in layout:
        if kind:  # mapped: 1 fragments, 2 single pages, 3 fragments in the system aperture
            pt.map(va, n * PAGE, pa, system=kind == 3, fragments=kind != 2)
        va, pa = va + n * PAGE, pa + (n + int(system)) * PAGE  # a gap in PA breaks contiguity
    rng = np.random.default_rng(seed)
    pages = np.unique(rng.integers(BASE >> 12, va >> 12, 3000)).astype(np.uint64)
    if shuffled:
        pages = rng.permutation(pages)
    walks = mmu.walks
    got = mmu.tlb.page_values(VMID, pages)
    walked = mmu.walks - walks
    want = []
    for vpn in pages.tolist():
        leaf = mmu.walker.walk_page(VMID, vpn)
        want.append(-1 if isinstance(leaf, str) else ((leaf.pa_page + vpn - leaf.va_page) << 8) | leaf.bits)
    assert got.tolist() == want
    if not shuffled:  # sorted: one walk per leaf touched (a faulting page walks each time, as before)
        leaves = {(lf.va_page, lf.log2) for lf in map(lambda p: mmu.walker.walk_page(VMID, p), pages.tolist())
                  if not isinstance(lf, str)}
        faults = sum(v < 0 for v in want)
        assert walked == len(leaves) + faults
    assert mmu.tlb.page_values(VMID, pages).tolist() == want  # now from the page cache


def test_fragment_with_unaligned_pa_is_extrapolated_linearly():
    phys, pt, mmu = make()
    pt.map(BASE, PAGE, 0x10_0000, fragments=False)  # builds the tables down to the PTB
    ptb = pt._table(gmc.Level.PTB, BASE >> 12, create=False)
    words = [gmc.encode_pte(0x30_3000 + i * PAGE, fragment=4) for i in range(16)]
    phys.write(ptb, np.array(words, dtype="<u8").tobytes())
    mmu.invalidate()
    for i in (9, 0, 15, 3):
        assert mmu.translate(VMID, BASE + i * PAGE).pa == 0x30_3000 + i * PAGE


def test_builder_splits_huge_pages_and_frees_replaced_tables():
    phys = PhysicalMemory(VRAM)
    freed = []
    pt = PageTableBuilder(phys, bump_allocator(0, 8 << 20), freed.append)
    mmu = MMU(phys)
    mmu.set_root(VMID, pt.root)
    pt.map(BASE, 2 * PAGE, 0x100_0000, fragments=False)  # builds a PTB under the PDB0 entry
    ptb = pt._table(gmc.Level.PTB, BASE >> 12, create=False)
    pt.map(BASE, 2 << 20, 0x200_0000)  # one 2 MiB huge entry replaces that PTB
    assert freed == [ptb] and pt.entry(BASE)[0] == gmc.Level.PDB0
    pt.unmap(BASE + 5 * PAGE, PAGE)  # splits the huge entry back into a PTB
    mmu.invalidate(VMID)
    assert pt.entry(BASE)[0] == gmc.Level.PTB
    for i in (0, 4, 6, 511):
        assert mmu.translate(VMID, BASE + i * PAGE).pa == 0x200_0000 + i * PAGE
    with pytest.raises(HardwareFault):
        mmu.translate(VMID, BASE + 5 * PAGE)
    pt.unmap(BASE, 2 << 20)  # a whole PDB0 entry: cleared at PDB0, its PTB freed
    mmu.invalidate(VMID)
    assert pt.entry(BASE) == (gmc.Level.PDB0, gmc.PDE_PTE) and len(freed) == 2
    assert mmu.walk(VMID, BASE + PAGE) == "PDE not valid at PDB0 (huge-page entry)"


@HYP
@given(maps=st.lists(st.tuples(st.integers(0, 1535), st.integers(1, 1100), st.booleans()), min_size=1, max_size=4),
       cut=st.tuples(st.integers(0, 1535), st.integers(1, 1100)))
def test_unmapping_a_range_clears_what_unmapping_its_pages_one_by_one_does(maps, cut):
    """PageTableBuilder.unmap clears a run of PTEs with one walk of the tree per table: the page-table memory ends
    as unmapping the range piece by piece leaves it (each whole aligned 2 MiB / 1 GiB entry at its level, every other
    page alone at the PTB, huge entries split), over mappings with and without fragments (huge entries)."""
    tables = []
    for piecewise in (False, True):
        phys = PhysicalMemory(64 << 20)
        pt = PageTableBuilder(phys, bump_allocator(0, 8 << 20))
        for first, n, fragments in maps:
            pt.map(BASE + first * PAGE, n * PAGE, (16 << 20) + first * PAGE, fragments=fragments)
        vpn, n = (BASE >> 12) + cut[0], cut[1]
        while piecewise and n:
            step = next((k for k in (1 << 18, 1 << 9) if vpn % k == 0 and n >= k), 1)
            pt.unmap(vpn * PAGE, step * PAGE)
            vpn, n = vpn + step, n - step
        if not piecewise:
            pt.unmap(vpn * PAGE, n * PAGE)
        tables.append(phys.vram[:8 << 20].copy())
    assert np.array_equal(*tables)


def test_tlb_stale_until_invalidate():
    phys, pt, mmu = make()
    pt.map(BASE, PAGE, 0x100_0000, fragments=False)
    phys.write(0x100_0000, b"old!")
    phys.write(0x200_0000, b"new!")
    assert mmu.read(VMID, BASE, 4) == b"old!"
    pt.unmap(BASE, PAGE)
    pt.map(BASE, PAGE, 0x200_0000, fragments=False)
    assert mmu.read(VMID, BASE, 4) == b"old!"  # stale, like hardware
    mmu.invalidate(VMID, (BASE + PAGE, BASE + 2 * PAGE))  # another range: still stale
    assert mmu.read(VMID, BASE, 4) == b"old!"
    mmu.invalidate(VMID + 1)  # another VMID: still stale
    assert mmu.read(VMID, BASE, 4) == b"old!"
    mmu.invalidate(VMID, (BASE, BASE + PAGE))
    assert mmu.read(VMID, BASE, 4) == b"new!"


def test_vmids_are_separate_and_canonical_high_addresses_work():
    phys, pt, mmu = make()
    high = 0xFFFF_8000_0000_0000
    pt.map(high, PAGE, 0x100_0000)
    pt2 = PageTableBuilder(phys, bump_allocator(8 << 20, 9 << 20))
    pt2.map(high, PAGE, 0x200_0000)
    mmu.set_root(VMID + 1, pt2.root)
    assert pt.entry(high)[0] == gmc.Level.PTB
    assert mmu.translate(VMID, high + 8).pa == 0x100_0008
    assert mmu.translate(VMID + 1, high + 8).pa == 0x200_0008
    with pytest.raises(HardwareFault, match="canonical"):
        mmu.translate(VMID, 0x0000_8000_0000_0000)
    with pytest.raises(HardwareFault, match="no page table"):
        mmu.translate(3, high)


def test_vm_context_range_and_vmid0_system_aperture():
    """A VM context translates only its [start, end] pages (VM_CONTEXTn_PAGE_TABLE_START/END_ADDR); VMID 0's system
    aperture reaches VRAM physically at address - FB base (what MC addresses of a driver's own buffers use). The
    walker indexes the tables by the offset from START_ADDR (amdgpu's GART table: entry i maps gart_start + i pages)."""
    phys, pt, mmu = make()
    pt.map(0, 2 * PAGE, 0x100_0000)
    mmu.set_context(VMID, pt.root_pde, BASE >> 12, (BASE >> 12) + 1)
    assert mmu.translate(VMID, BASE + PAGE + 4).pa == 0x100_1004
    pt.map(2 * PAGE, PAGE, 0x200_0000)
    with pytest.raises(HardwareFault, match="outside VM context 8's range"):
        mmu.translate(VMID, BASE + 2 * PAGE)
    fb = 0x80_0000_0000
    mmu.set_context(0, pt.root_pde, BASE >> 12, (BASE >> 12) + 16)
    mmu.set_system_aperture(fb, fb + (256 << 20) - 1, fb)
    phys.write(0x300_0010, b"aperture")
    assert mmu.read(0, fb + 0x300_0010, 8) == b"aperture"
    assert mmu.translate(0, BASE + 8).pa == 0x100_0008  # the page tables still serve the rest
    with pytest.raises(HardwareFault):
        mmu.translate(VMID, fb + 0x300_0010)  # only VMID 0 has the aperture
    mmu.set_system_aperture(None)
    with pytest.raises(HardwareFault, match="outside VM context 0's range"):
        mmu.translate(0, fb + 0x300_0010)


def test_prt_holes_read_zero_and_drop_writes():
    phys, pt, mmu = make()
    pt.map(BASE, 2 * PAGE, 0x100_0000, fragments=False)
    ptb = pt._table(gmc.Level.PTB, BASE >> 12, create=False)
    phys.write_u64(ptb + 8 * ((BASE >> 12) % 512 + 1), gmc.PTE_PRT | gmc.PTE_SYSTEM)  # second page: a PRT hole
    phys.write(0x100_0000 + 2 * PAGE, b"\xff" * 16)  # what the hole must not expose
    mmu.write(VMID, BASE + PAGE - 4, b"abcdefgh")
    assert mmu.read(VMID, BASE + PAGE - 4, 8) == b"abcd\0\0\0\0"
    addrs = np.array([BASE + PAGE - 2, BASE + PAGE], dtype=np.uint64)
    assert mmu.gather(VMID, addrs, 4).tolist() == [0x6463, 0]
    assert mmu.atomic(VMID, "add", addrs[1:], np.ones(1, np.uint32)).tolist() == [0]


@HYP
@given(src=st.integers(0, NPAGES * PAGE // 2), dst=st.integers(0, NPAGES * PAGE // 2),
       n=st.integers(0, NPAGES * PAGE // 2), seed=st.integers(0, 3))
def test_copy_is_write_of_read_on_scattered_pages(src, dst, n, seed):
    """RangeAccess.copy (SDMA's copies) moves memory to memory, piece by physically contiguous piece: the result is
    write(dst, read(src)) -- the source read whole first -- on the byte model, overlapping ends included."""
    phys, pt, mmu, model, _ = scattered_range(seed)
    mmu.copy(VMID, BASE + dst, BASE + src, n)
    want = model.copy()
    want[dst:dst + n] = model[src:src + n]
    np.testing.assert_array_equal(dump(mmu), want)


def test_copy_between_apart_ranges_moves_memory_to_memory(monkeypatch):
    """Ends in different memory (VRAM to VRAM elsewhere, VRAM to a host buffer) copy view to view, without read()."""
    phys, pt, mmu = make()
    host = phys.add_system(SYS_PA, np.zeros(8 * PAGE, dtype=np.uint8))
    a, b, h = BASE, BASE + (64 << 20), BASE + (128 << 20)
    pt.map(a, 8 * PAGE, 0x100_0000)
    pt.map(b, 8 * PAGE, 0x200_0000)
    pt.map(h, 8 * PAGE, SYS_PA, system=True)
    data = np.random.default_rng(3).integers(0, 256, 8 * PAGE, dtype=np.uint8)
    mmu.write(VMID, a, data.tobytes())
    monkeypatch.setattr(mmu.ranges, "read", None)  # (the overlapping ends' path reads first: it must not run)
    mmu.copy(VMID, b + 100, a + 5, 6 * PAGE)
    mmu.copy(VMID, h + 3, a, 5 * PAGE + 7)
    monkeypatch.undo()
    assert mmu.read(VMID, b + 100, 6 * PAGE) == data[5:5 + 6 * PAGE].tobytes()
    assert host[3:3 + 5 * PAGE + 7].tobytes() == data[:5 * PAGE + 7].tobytes()


def test_copy_checks_every_page_first_and_reads_prt_holes_as_zero():
    phys, pt, mmu, model, _ = scattered_range()
    ro = BASE + NPAGES * PAGE
    pt.map(ro, PAGE, 0x300_0000, writeable=False, fragments=False)
    with pytest.raises(HardwareFault) as e:  # the destination's last page is read-only: nothing is written
        mmu.copy(VMID, ro - 2 * PAGE, BASE, 3 * PAGE)
    assert (e.value.address, e.value.access) == (ro, "write")
    with pytest.raises(HardwareFault) as e:  # the source runs off the mapping
        mmu.copy(VMID, BASE, ro, 2 * PAGE)
    assert (e.value.address, e.value.access) == (ro + PAGE, "read")
    np.testing.assert_array_equal(dump(mmu), model)
    hole = ro + 4 * PAGE
    pt.map(hole, 2 * PAGE, 0x500_0000, fragments=False)
    ptb = pt._table(gmc.Level.PTB, hole >> 12, create=False)
    phys.write_u64(ptb + 8 * ((hole >> 12) % 512 + 1), gmc.PTE_PRT | gmc.PTE_SYSTEM)  # second page: a PRT hole
    mmu.copy(VMID, BASE, hole, 2 * PAGE)  # the hole reads zero ...
    want = model.copy()
    want[:PAGE], want[PAGE:2 * PAGE] = 0, 0
    np.testing.assert_array_equal(dump(mmu), want)
    mmu.copy(VMID, hole, BASE + 2 * PAGE, 2 * PAGE)  # ... and drops what is written to it
    assert mmu.read(VMID, hole, PAGE) == model[2 * PAGE:3 * PAGE].tobytes()
    assert mmu.read(VMID, hole + PAGE, PAGE) == bytes(PAGE)


# ---- gather / scatter vs a byte model ------------------------------------------------------------------------
def _expected_gather(model: np.ndarray, offs: np.ndarray, size: int, mask) -> np.ndarray:
    dt = "<u4" if size == 16 else f"<u{size}"
    rows = np.stack([model[o:o + size] for o in offs.tolist()]) if offs.size else np.zeros((0, size), np.uint8)
    vals = np.ascontiguousarray(rows).view(dt)
    vals = vals if size == 16 else vals.reshape(-1)
    if mask is not None:
        vals = vals.copy()
        vals[~mask] = 0
    return vals


@HYP
@given(seed=st.integers(0, 2**32 - 1), size=st.sampled_from([1, 2, 4, 8, 16]), n=st.integers(1, 96),
       aligned=st.booleans(), use_mask=st.booleans())
def test_gather_scatter_match_byte_model(seed, size, n, aligned, use_mask):
    phys, pt, mmu, model, _ = scattered_range()
    rng = np.random.default_rng(seed)
    limit = NPAGES * PAGE - size
    offs = rng.integers(0, limit // size + 1, n) * size if aligned else rng.integers(0, limit + 1, n)
    offs[: n // 4] = rng.choice([PAGE - 1, 2 * PAGE - 3, 3 * PAGE - 8, 6 * PAGE - 12], n // 4)  # page crossings
    offs = np.minimum(offs, limit)
    mask = rng.random(n) < 0.7 if use_mask else None
    addrs = (BASE + offs).astype(np.uint64)
    got = mmu.gather(VMID, addrs, size, mask)
    np.testing.assert_array_equal(got, _expected_gather(model, offs, size, mask))

    vals = rng.integers(0, 2**63, (n, 4) if size == 16 else n, dtype=np.uint64)
    vals = vals.astype("<u4") if size == 16 else vals.astype(f"<u{min(size, 8)}")
    mmu.scatter(VMID, addrs, vals, size, mask)
    raw = np.ascontiguousarray(vals).view(np.uint8).reshape(n, size)
    for lane in range(n):  # serial reference: later lanes overwrite earlier ones
        if mask is None or mask[lane]:
            model[offs[lane]:offs[lane] + size] = raw[lane]
    np.testing.assert_array_equal(dump(mmu), model)


def test_scatter_duplicates_highest_lane_wins_and_16_byte_crossing():
    phys, pt, mmu, model, sysbuf = scattered_range()
    addrs = np.full(5, BASE + 64, dtype=np.uint64)
    mmu.scatter(VMID, addrs, np.arange(10, 15, dtype=np.uint32), 4, mask=np.array([1, 1, 1, 0, 1], bool))
    assert mmu.gather(VMID, addrs[:1], 4).tolist() == [14]
    va = BASE + 2 * PAGE - 8  # page 1 (VRAM) into page 2 (system memory)
    data = np.array([[0x11111111, 0x22222222, 0x33333333, 0x44444444]], dtype=np.uint32)
    mmu.scatter(VMID, np.array([va], np.uint64), data, 16)
    assert sysbuf[2 * PAGE:2 * PAGE + 8].view("<u4").tolist() == [0x33333333, 0x44444444]
    np.testing.assert_array_equal(mmu.gather(VMID, np.array([va], np.uint64), 16), data)


@HYP
@given(seed=st.integers(0, 2**32 - 1), size=st.sampled_from([1, 2, 4, 8, 16]), n=st.integers(2, 300),
       kind=st.sampled_from(["permuted", "strided", "overlapping", "duplicates"]))
def test_scatter_out_of_order_in_a_linear_range_matches_byte_model(seed, size, n, kind):
    # lanes not ascending within one linearly mapped range (the fast path when no two lanes share a byte,
    # as a tiled matrix product's stores: rows of lanes, workgroups side by side), against a serial byte model
    phys, pt, mmu = make()
    span = 4 * PAGE
    pt.map(BASE, span, 64 << 20)
    rng = np.random.default_rng(seed)
    model = rng.integers(0, 256, span, dtype=np.uint8)
    mmu.write(VMID, BASE, model.tobytes())
    slots = span // size
    if kind == "permuted":
        offs = rng.permutation(min(n, slots)) * size
    elif kind == "strided":  # rows of 8 lanes, rows far apart, the rows in reverse
        offs = ((np.arange(n) % 8) + (np.arange(n) // 8)[::-1] * 97 % (slots // 8 - 1) * 8) * size % (slots * size)
    elif kind == "overlapping":  # a 4-byte step: 8- and 16-byte lanes share bytes
        offs = rng.permutation(min(n, slots)) * 4 % (span - size)
    else:
        offs = rng.integers(0, 16, n) * size
    m = len(offs)
    vals = rng.integers(0, 2**63, (m, 4) if size == 16 else m, dtype=np.uint64)
    vals = vals.astype("<u4") if size == 16 else vals.astype(f"<u{min(size, 8)}")
    mmu.scatter(VMID, (BASE + offs).astype(np.uint64), vals, size)
    raw = np.ascontiguousarray(vals).view(np.uint8).reshape(m, size)
    for lane in range(m):  # serial reference: later lanes overwrite earlier ones
        model[offs[lane]:offs[lane] + size] = raw[lane]
    np.testing.assert_array_equal(np.frombuffer(mmu.read(VMID, BASE, span), np.uint8), model)


def test_wave_shaped_lanes():
    phys, pt, mmu, model, _ = scattered_range()
    addrs = (BASE + 4 * np.arange(3 * 32)).reshape(3, 32).astype(np.uint64)  # [waves, lanes]
    mask = np.ones((3, 32), bool)
    mask[1, 5] = False
    mmu.scatter(VMID, addrs, np.arange(96, dtype=np.uint32).reshape(3, 32), 4, mask)
    got = mmu.gather(VMID, addrs, 4)
    assert got.shape == (3, 32) and got[2, 31] == 95 and got[1, 5] == model[4 * 37:4 * 38].view("<u4")[0]
    assert mmu.gather(VMID, addrs, 16, mask).shape == (3, 32, 4)
    old = mmu.atomic(VMID, "swap", addrs, np.zeros((3, 32), np.uint32), mask=mask)
    assert old.shape == (3, 32) and old[1, 5] == 0 and old[2, 31] == 95


# ---- atomics --------------------------------------------------------------------------------------------------
_F = {4: ("<f", 22), 8: ("<d", 51)}


def _ref_fminmax(old: int, src: int, is_min: bool, size: int) -> int:
    fmt, qbit = _F[size]
    q = 1 << qbit
    fo, fs = (struct.unpack(fmt, x.to_bytes(size, "little"))[0] for x in (old, src))
    o_nan, s_nan = math.isnan(fo), math.isnan(fs)
    if o_nan and not old & q:
        return old | q
    if s_nan and not src & q:
        return src | q
    if o_nan and s_nan:
        return old | q
    if o_nan or s_nan:
        return src if o_nan else old
    if fo == fs:
        return (old | src) if is_min else (old & src)
    return old if (fo < fs) == is_min else src


def _ref_fadd(old: int, src: int, size: int) -> int:
    fmt, qbit = _F[size]
    fo, fs = (struct.unpack(fmt, x.to_bytes(size, "little"))[0] for x in (old, src))
    if math.isnan(fo) or math.isnan(fs):
        return (old if math.isnan(fo) else src) | 1 << qbit
    if math.isinf(fo) and math.isinf(fs) and fo != fs:
        return 0x7FC00000 if size == 4 else 0x7FF8 << 48
    r = np.float32(fo) + np.float32(fs) if size == 4 else fo + fs  # float32 + float32 rounds once, to f32
    return int.from_bytes(struct.pack(fmt, r), "little")


def _ref_op(op: str, old: int, src: int, cmp: int, size: int) -> int:
    bits = 8 * size
    m = (1 << bits) - 1

    def s(x):
        return x - (1 << bits) if x >> (bits - 1) else x

    simple = {"add": (old + src) & m, "sub": (old - src) & m, "and": old & src, "or": old | src, "xor": old ^ src,
              "umin": min(old, src), "umax": max(old, src), "smin": old if s(old) <= s(src) else src,
              "smax": old if s(old) >= s(src) else src, "inc": 0 if old >= src else old + 1,
              "dec": src if old == 0 or old > src else old - 1, "swap": src, "cmpswap": src if old == cmp else old}
    if op in simple:
        return simple[op]
    if op == "fadd":
        return _ref_fadd(old, src, size)
    return _ref_fminmax(old, src, op == "fmin", size)


_SPECIAL32 = [0, 0x80000000, 0x7FC00000, 0x7F800001, 0xFFC00001, 0x7F800000, 0xFF800000, 0x3F800000, 0xBF800000,
              0x00000001, 0x7FFFFFFF, 0xFFFFFFFF, 5, 7]
_SPECIAL64 = [0, 1 << 63, 0x7FF8 << 48, 0x7FF0_0000_0000_0001, 0xFFF8_0000_0000_0001, 0x7FF0 << 48,
              0xFFF0 << 48, 0x3FF0 << 48, 0xBFF0 << 48, 1, (1 << 63) - 1, (1 << 64) - 1, 5, 7]


@HYP
@given(data=st.data(), op=st.sampled_from(sorted(atom.OPS)), size=st.sampled_from([4, 8]), n=st.integers(1, 48))
def test_atomics_match_serial_model(data, op, size, n):
    phys, pt, mmu, model, _ = scattered_range()
    slots = [BASE + 8 * k for k in range(3)] + [BASE + 2 * PAGE + 64, BASE + 7 * PAGE - 8]  # VRAM and system
    values = st.one_of(st.sampled_from(_SPECIAL32 if size == 4 else _SPECIAL64), st.integers(0, (1 << 8 * size) - 1))
    addrs = np.array(data.draw(st.lists(st.sampled_from(slots), min_size=n, max_size=n)), dtype=np.uint64)
    src = np.array(data.draw(st.lists(values, min_size=n, max_size=n)), dtype=f"<u{size}")
    cmp = np.array(data.draw(st.lists(values, min_size=n, max_size=n)), dtype=f"<u{size}")
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    init = data.draw(st.lists(values, min_size=len(slots), max_size=len(slots)))
    for va, v in zip(slots, init, strict=True):
        mmu.write(VMID, va, v.to_bytes(size, "little"))
    mem = dict(zip(slots, init, strict=True))
    expect_old = []
    for lane in range(n):
        if not mask[lane]:
            expect_old.append(0)
            continue
        va = int(addrs[lane])
        expect_old.append(mem[va])
        mem[va] = _ref_op(op, mem[va], int(src[lane]), int(cmp[lane]), size)
    old = mmu.atomic(VMID, op, addrs, src, cmp, size=size, mask=mask)
    assert old.tolist() == expect_old
    assert {va: int.from_bytes(mmu.read(VMID, va, size), "little") for va in slots} == mem


def test_atomic_counter_many_lanes_and_return_old_flag():
    phys, pt, mmu, model, _ = scattered_range()
    mmu.write(VMID, BASE, bytes(4))
    addrs = np.full(10_000, BASE, dtype=np.uint64)
    old = mmu.atomic(VMID, "add", addrs, np.ones(10_000, np.uint32))
    assert old.tolist() == list(range(10_000))
    assert mmu.atomic(VMID, "inc", addrs, np.full(10_000, 99, np.uint32), return_old=False) is None
    # the first inc wraps 10000 to 0 (old >= src), the other 9999 count modulo 100
    assert mmu.gather(VMID, addrs[:1], 4).tolist() == [9_999 % 100]


def test_fminmax_nan_and_signed_zero():
    u = np.uint32
    f = lambda x: np.array([x], np.float32).view(u)  # noqa: E731
    old = np.concatenate([f(np.nan), f(1.0), f(-0.0), f(0.0), np.array([0x7F800001], u)])
    src = np.concatenate([f(2.0), f(np.nan), f(0.0), f(-0.0), f(3.0)])
    assert atom.apply("fmin", old, src).view(np.float32)[:4].tolist()[:2] == [2.0, 1.0]
    mn, mx = atom.apply("fmin", old, src), atom.apply("fmax", old, src)
    assert mn[2] == 0x80000000 and mn[3] == 0x80000000 and mx[2] == 0 and mx[3] == 0
    assert mn[4] == 0x7FC00001 and mx[4] == 0x7FC00001  # signaling NaN comes back quieted
    inf, ninf = f(np.inf), f(-np.inf)
    assert atom.apply("fadd", inf, ninf).tolist() == [0x7FC00000]  # positive default NaN on every host


# ---- faults -------------------------------------------------------------------------------------------------------
def test_faults_report_address_access_vmid_and_change_nothing():
    phys, pt, mmu, model, _ = scattered_range()
    pt.map(BASE + NPAGES * PAGE, PAGE, 0x300_0000, writeable=False, fragments=False)
    ro = BASE + NPAGES * PAGE
    before = dump(mmu).copy()
    lanes = np.array([BASE, BASE + 8, ro + 4, BASE + 16 + NPAGES * PAGE * 4], dtype=np.uint64)
    with pytest.raises(HardwareFault) as e:
        mmu.scatter(VMID, lanes, np.arange(4, dtype=np.uint32), 4)
    assert (e.value.kind, e.value.address, e.value.access, e.value.vmid) == ("page_fault", ro + 4, "write", VMID)
    assert "grants R" in e.value.message
    with pytest.raises(HardwareFault) as e:
        mmu.gather(VMID, lanes[[0, 3]], 4)
    assert (e.value.address, e.value.access) == (int(lanes[3]), "read")
    with pytest.raises(HardwareFault) as e:
        mmu.atomic(VMID, "add", lanes, np.ones(4, np.uint32))
    assert (e.value.address, e.value.access) == (ro + 4, "atomic")
    with pytest.raises(HardwareFault) as e:
        mmu.read(VMID, BASE, 64, access="execute")
    assert e.value.access == "execute"
    with pytest.raises(HardwareFault) as e:  # a page-crossing lane whose second page is read-only
        mmu.scatter(VMID, np.array([BASE, ro - 2], np.uint64), np.zeros(2, np.uint32), 4)
    assert e.value.address == ro
    with pytest.raises(HardwareFault, match="PTE not valid") as e:  # ... or unmapped
        mmu.gather(VMID, np.array([ro + PAGE - 2], np.uint64), 4)
    assert e.value.address == ro + PAGE
    with pytest.raises(HardwareFault):
        mmu.write(VMID, ro - 4, b"12345678")  # spans a writable and a read-only page
    with pytest.raises(HardwareFault) as e:
        mmu.atomic(VMID, "add", np.array([BASE + 2], np.uint64), np.ones(1, np.uint32))
    assert e.value.kind == "memory_violation"
    assert mmu.gather(VMID, lanes, 4, mask=np.array([1, 1, 1, 0], bool))[3] == 0  # masked lanes never fault
    np.testing.assert_array_equal(dump(mmu), before)
    assert mmu.read(VMID, ro, 4) == bytes(4)


def test_pte_pointing_outside_vram_faults():
    phys, pt, mmu = make(vram=64 << 20)
    pt.map(BASE, PAGE, 128 << 20, fragments=False)
    with pytest.raises(HardwareFault, match="unbacked VRAM"):
        mmu.gather(VMID, np.array([BASE], np.uint64), 4)


# ---- determinism ----------------------------------------------------------------------------------------------------
def _workload(seed: int) -> str:
    phys, pt, mmu, model, _ = scattered_range(seed)
    rng = np.random.default_rng(seed)
    h = hashlib.sha256()
    for _ in range(20):
        addrs = (BASE + rng.integers(0, NPAGES * PAGE - 16, 64)).astype(np.uint64)
        mmu.scatter(VMID, addrs, rng.integers(0, 2**32, 64, dtype=np.uint32), 4)
        words = (BASE + 8 * rng.integers(0, 8, 64)).astype(np.uint64)
        h.update(mmu.atomic(VMID, "fadd", words, rng.random(64).astype(np.float32), size=4).tobytes())
        h.update(mmu.gather(VMID, addrs, 16).tobytes())
    h.update(dump(mmu).tobytes())
    return h.hexdigest()


def test_determinism_same_inputs_same_bytes():
    assert _workload(7) == _workload(7)
