"""The DMA engines' bandwidth model on the virtual clock (issue 26, item 5): a copy of known size between
memories on known links takes bytes / bandwidth + latency of virtual time, with the figures of
docs/device.md ("Cost model"): VRAM 960 GB/s (a local copy moves every byte twice), PCIe 4.0 x16 31.5 GB/s
to the host and to a peer, XGMI 64 GB/s (MI300X: 16 lanes at 32 GT/s). Measured as tinygrad measures it: SDMA
TIMESTAMPs around the copy."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu import clock
from simgpu.clock import Link
from simgpu.gpu import GPU
from simgpu.hw import sdma
from tests.support.gpu_harness import VM, Ring

MIB = 1 << 20
SYS_PA = 1 << 40  # where the test registers its system-memory buffers
GBPS = {Link.VRAM: 960e9, Link.PCIE: 31.5e9, Link.PEER_PCIE: 31.5e9, Link.PEER_XGMI: 64e9}
LATENCY_S = {Link.VRAM: 500e-9, Link.PCIE: 1e-6, Link.PEER_PCIE: 1.5e-6, Link.PEER_XGMI: 1e-6}


class Memories:
    """One GPU's VM with buffers in its VRAM and in system memory behind each kind of link."""

    def __init__(self):
        self.vm = VM(GPU(vram_size=256 << 20))
        self.next_sys = SYS_PA

    def buffer(self, link: Link, nbytes: int) -> int:
        if link is Link.VRAM:
            return self.vm.alloc(nbytes)
        self.vm.gpu.phys.add_system(self.next_sys, np.zeros(nbytes, np.uint8), link=link)
        va = self.vm.next_va
        self.vm.next_va += nbytes + 4096
        self.vm.tables.map(va, nbytes, self.next_sys, system=True)
        self.vm.gpu.mmu.invalidate(self.vm.vmid)
        self.next_sys += nbytes + 4096
        return va


def timed(m: Memories, *packets) -> float:
    """Seconds of virtual time between two SDMA TIMESTAMPs around `packets`."""
    ts = m.vm.alloc(16)
    Ring(m.vm, "sdma").submit(sdma.timestamp(ts), *packets, sdma.timestamp(ts + 8))
    start, end = m.vm.u32(ts, 4)[0::2]
    return (end - start) / (clock.TIMESTAMP_MHZ * 1e6)


def modelled(nbytes: int, dst: Link, src: Link | None) -> float:
    ends = [dst] if src is None else [dst, src]
    moved = {link: nbytes * (ends.count(link) if link is Link.VRAM else 1) for link in ends}
    return max(moved[link] / GBPS[link] for link in ends) + max(LATENCY_S[link] for link in ends) \
        + clock.SDMA_PACKET_CYCLES / (clock.CORE_CLOCK_MHZ * 1e6)  # the copy packet's own cost


ONE_TICK = 1 / (clock.TIMESTAMP_MHZ * 1e6)  # timestamps are 10 ns ticks


@pytest.mark.parametrize("dst,src", [(Link.VRAM, Link.VRAM), (Link.VRAM, Link.PCIE), (Link.PCIE, Link.VRAM),
                                     (Link.VRAM, Link.PEER_PCIE), (Link.PEER_PCIE, Link.VRAM),
                                     (Link.VRAM, Link.PEER_XGMI), (Link.PEER_XGMI, Link.PCIE)])
def test_copy_takes_the_modelled_time(dst, src):
    m, n = Memories(), 4 * MIB
    s, d = m.buffer(src, n), m.buffer(dst, n)
    m.vm.write(s, np.arange(n, dtype=np.uint8).tobytes())
    t = timed(m, sdma.copy_linear(d, s, n))
    assert m.vm.read(d, n) == np.arange(n, dtype=np.uint8).tobytes()
    assert t == pytest.approx(modelled(n, dst, src), abs=2 * ONE_TICK)


def test_fill_and_write_take_the_destination_link():
    m, n = Memories(), MIB
    host = m.buffer(Link.PCIE, n)
    assert timed(m, sdma.const_fill(host, 0x01020304, n)) == pytest.approx(modelled(n, Link.PCIE, None),
                                                                           abs=2 * ONE_TICK)
    vram = m.buffer(Link.VRAM, 64)
    assert timed(m, sdma.write_untiled(vram, *range(16))) == pytest.approx(modelled(64, Link.VRAM, None),
                                                                           abs=2 * ONE_TICK)


def test_cross_device_bandwidth_stays_under_pcie():
    """tinygrad's test_hcq bound: a 200 MB copy to a peer over PCIe is timed below 100 GB/s (it was 160), and
    a copy inside VRAM below 1000 GB/s; the figures come from the model, so this is exact, not a timing test."""
    n = 200_000_000
    peer = 1e-9 * n / (clock.transfer_cycles(n, Link.VRAM, Link.PEER_PCIE) / (clock.CORE_CLOCK_MHZ * 1e6))
    local = 1e-9 * n / (clock.transfer_cycles(n, Link.VRAM, Link.VRAM) / (clock.CORE_CLOCK_MHZ * 1e6))
    assert 2 <= peer <= 100 and 10 <= local <= 1000
    assert peer == pytest.approx(31.5, rel=0.01) and local == pytest.approx(480, rel=0.01)
