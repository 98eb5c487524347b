"""USERPTR under `simgpu run`: the interposer moves the range's pages into shared memory with their contents, and
copies only the pages that can hold data (tests/wiring/userptr_client.py): in anonymous memory on a host without
swap, a page that is neither in the page tables nor in shmem's page cache was never written and stays a hole --
tinygrad shares 32 untouched 2 MiB staging buffers per GPU when it opens one. A file mapping is copied whole."""

import json
import sys
from pathlib import Path

from tests.support.clients import simgpu_run
from tests.wiring import userptr_client


def _swap() -> bool:
    return len(Path("/proc/swaps").read_text().strip().splitlines()) > 1


def test_userptr_pages_keep_their_contents_and_holes_stay_holes():
    r = simgpu_run([sys.executable, userptr_client.__file__])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    whole = userptr_client.PAGES
    assert out["shared"] == {"resident": whole if _swap() else 3, "kept": True}  # incl. the child's page
    assert out["private"] == {"resident": whole if _swap() else 1, "kept": True}
    assert out["file"] == {"resident": whole, "kept": True}
