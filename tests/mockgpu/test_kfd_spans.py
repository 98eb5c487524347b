"""The mock driver's overlap check at ALLOC_MEMORY_OF_GPU (mockgpu.kfd_memory._Spans, sorted VA ranges per node)
answers as a scan of every buffer would: random allocations and frees on two nodes, each request checked against
the plain definition (same node, the ranges intersect) before it is applied."""

import numpy as np

from mockgpu.kfd_memory import _Spans

PAGE = 4096


def _scan(live: dict, node: int, va: int, size: int) -> bool:
    return any(n == node and v < va + size and va < v + s for (n, v), s in live.items())


def test_overlap_matches_a_scan_of_every_range():
    rng = np.random.default_rng(29)
    spans, live = _Spans(), {}
    refused = 0
    for _ in range(3000):
        node = int(rng.integers(2))
        if live and rng.random() < 0.3:
            n, va = list(live)[int(rng.integers(len(live)))]
            spans.remove(n, va)
            del live[(n, va)]
            continue
        va, size = int(rng.integers(0, 512)) * PAGE, int(rng.integers(1, 9)) * PAGE
        expected = _scan(live, node, va, size)
        assert spans.overlaps(node, va, size) == expected, (node, va, size)
        if expected:
            refused += 1
        else:
            spans.add(node, va, size)
            live[(node, va)] = size
    assert refused > 100 and len(live) > 50  # both answers were exercised, over many ranges


def test_adjacent_ranges_do_not_overlap():
    spans = _Spans()
    spans.add(0, 4 * PAGE, 2 * PAGE)
    assert not spans.overlaps(0, 2 * PAGE, 2 * PAGE) and not spans.overlaps(0, 6 * PAGE, PAGE)
    assert spans.overlaps(0, 5 * PAGE, 4 * PAGE) and spans.overlaps(0, 3 * PAGE, 2 * PAGE)
    assert not spans.overlaps(1, 4 * PAGE, PAGE)  # another node's page tables
