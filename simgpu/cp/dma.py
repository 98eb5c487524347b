"""Data movement shared by the CP (DMA_DATA, ATOMIC_MEM) and the SDMA engines: copies, fills, atomics.

Transfers go through the MMU in chunks, translating page by page, so source and destination need not
be physically contiguous; a fault stops the transfer where it happened (earlier chunks stay written,
as on hardware). Every transfer is charged to the virtual clock by its size and the links its ends sit on
(simgpu.clock.transfer_cycles: this GPU's VRAM, host memory over PCIe, a peer's VRAM over PCIe or XGMI), each
end classified by the translation of its first byte.
"""

from __future__ import annotations

import numpy as np

from simgpu.clock import Link, transfer_cycles
from simgpu.cp.queue import PacketError, Queue
from simgpu.hw import pm4 as hw

CHUNK = 1 << 20  # bytes per MMU copy: a fault stops the transfer at the chunk it falls in
PAGE = 4096


class DMA:
    """Copy/fill/atomic engine over one device's MMU and clock."""

    def __init__(self, gpu):
        self.gpu = gpu
        self._cycles: dict[tuple, int] = {}  # (bytes, dst link, src link) -> core cycles of a small copy (_small)

    def copy(self, vmid: int, dst: int, src: int, nbytes: int, fixed_src: bool = False,
             fixed_dst: bool = False) -> None:
        """Copy nbytes from src to dst (forward, in chunks); fixed_src/dst: the address does not advance (dwords)."""
        if 0 < nbytes <= PAGE and not (fixed_src or fixed_dst) and self._small(vmid, dst, src, nbytes):
            return
        if nbytes > 0:
            self.gpu.clock.advance_transfer(nbytes, self.link(vmid, dst, "write"), self.link(vmid, src, "read"))
        mmu = self.gpu.mmu
        if fixed_src or fixed_dst:
            self._copy_fixed(vmid, dst, src, nbytes, fixed_src, fixed_dst)
            return
        for off in range(0, nbytes, CHUNK):
            mmu.copy(vmid, dst + off, src + off, min(CHUNK, nbytes - off))

    def _small(self, vmid: int, dst: int, src: int, nbytes: int) -> bool:
        """A copy within one page at each end whose translations are cached (MMU.page_ends): charged and done from
        the two pages' memory, as the general path would (its links, then read, then write); False to take that
        path (a page not cached yet, or one it must fault on)."""
        mmu = self.gpu.mmu
        ends = mmu.page_ends(vmid, dst, src, nbytes)
        if ends is None:
            return False
        td, ts, dview, sview = ends
        key = (nbytes, mmu.phys.link(td.pa, td.system), mmu.phys.link(ts.pa, ts.system))
        cycles = self._cycles.get(key)
        if cycles is None:  # (at most 4096 sizes by the links' pairs: a small copy's charge, worked out once)
            cycles = self._cycles[key] = transfer_cycles(*key)
        self.gpu.clock.advance(cycles)
        d, s = dst & (PAGE - 1), src & (PAGE - 1)
        dview[d:d + nbytes] = sview[s:s + nbytes].tobytes()  # (the source read whole first: ends may overlap)
        return True

    def link(self, vmid: int, va: int, access: str) -> Link:
        """The link that carries the transfer end at `va` (a fault if it is unmapped, as the access would)."""
        t = self.gpu.mmu.translate(vmid, va, access)
        return self.gpu.mmu.phys.link(t.pa, t.system)

    def _copy_fixed(self, vmid: int, dst: int, src: int, nbytes: int, fixed_src: bool, fixed_dst: bool) -> None:
        mmu = self.gpu.mmu
        if fixed_dst:  # every dword lands on the same address: only the last one remains
            last = (nbytes - 1) & ~3 if nbytes else 0
            word = mmu.read(vmid, src if fixed_src else src + last, 4)
            mmu.write(vmid, dst, word[:min(4, nbytes)])
            return
        self.fill(vmid, dst, mmu.read(vmid, src, 4), nbytes)

    def fill(self, vmid: int, dst: int, pattern: bytes, nbytes: int, fixed_dst: bool = False) -> None:
        """Fill nbytes at dst with a repeated pattern (a dword or a byte)."""
        if nbytes == 0:
            return
        self.gpu.clock.advance_transfer(nbytes, self.link(vmid, dst, "write"))
        if fixed_dst:
            self.gpu.mmu.write(vmid, dst, pattern[:min(len(pattern), nbytes)])
            return
        block = np.resize(np.frombuffer(pattern, np.uint8), min(CHUNK, nbytes + len(pattern))).tobytes()
        for off in range(0, nbytes, CHUNK):  # CHUNK is a multiple of the pattern length: the phase is kept
            n = min(CHUNK, nbytes - off)
            self.gpu.mmu.write(vmid, dst + off, block[:n])

    def atomic(self, q: Queue, op: int, addr: int, src: int, cmp: int, loop: bool, what: str) -> str | None:
        """A TC_OP atomic on memory; returns a wait description when a looping compare-swap has not succeeded."""
        info = hw.tc_op_info(op)
        if info is None:
            raise PacketError(f"{what} atomic op {op:#x} is not an integer TC_OP atomic")
        name, size = info
        if addr % size:
            raise PacketError(f"{what} address {addr:#x} is not {size}-byte aligned")
        mask = (1 << (8 * size)) - 1
        src, cmp = src & mask, cmp & mask
        if loop and name == "cmpswap":
            raw = self.gpu.mmu.read(q.vmid, addr, size)
            if self.gpu.observer is not None:  # the value a producer sets for the loop to succeed (traces.reads)
                raw = self.gpu.observer("atomic", q.vmid, addr, raw)
            current = int.from_bytes(raw, "little")
            if current != cmp:
                return f"{what} compare-swap loop: {size}-byte value at VA {addr:#x} is {current:#x}, " \
                       f"waiting for {cmp:#x}"
        dt = np.uint64 if size == 8 else np.uint32
        old = self.gpu.mmu.atomic(q.vmid, name, np.array([addr], np.uint64), np.array([src], dt),
                                  cmp=np.array([cmp], dt) if name == "cmpswap" else None, size=size)
        q.atomic_return = int(old[0])
        return None
