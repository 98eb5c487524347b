"""wiring/am_client.py, the firmware installer `simgpu run --am` runs inside the program, on its own: what it puts into
tinygrad's download cache, and that a program reading the cache while another installs into it (two runs at once
share it) only ever reads a whole file -- the CI failure of test_two_runs_at_once_both_open_their_devices_and_compute:
one run read a firmware file the other was rewriting in place, found a wrong hash and went to the network for it."""

import hashlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

from wiring import am_client


def test_install_puts_each_file_where_tinygrads_fetch_looks_and_tells_the_table_its_hash(tmp_path, monkeypatch):
    helpers = pytest.importorskip("tinygrad.helpers")
    monkeypatch.setattr(helpers, "_ensure_downloads_dir", lambda: tmp_path / "downloads")
    (tmp_path / "fw").mkdir()
    (tmp_path / "fw" / "gc_11_0_0_mec.bin").write_bytes(b"mec" * 100)
    table = types.SimpleNamespace(hashes={})
    am_client.install(table, str(tmp_path / "fw"))
    digest = hashlib.sha256(b"mec" * 100).hexdigest()
    assert table.hashes == {"gc_11_0_0_mec.bin": digest}
    got = helpers.fetch(f"https://gitlab.com/kernel-firmware/linux-firmware/-/raw/{am_client.LINUX_FIRMWARE}"
                        "/amdgpu/gc_11_0_0_mec.bin", subdir="fw", sha256=digest)  # tinygrad's own fetch: no network
    assert got.read_bytes() == b"mec" * 100


def test_a_reader_never_sees_a_file_half_stored(tmp_path):
    path = tmp_path / "fw.bin"
    versions = [bytes([i]) * (1 << 20) for i in (1, 2)]  # 1 MiB each: a write in place spans many reads' chances
    am_client.store(path, versions[0])
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sys; from pathlib import Path; from wiring.am_client import store\n"
        f"p = Path({str(path)!r})\n"
        "for i in range(300):\n"
        "    store(p, bytes([1 + i % 2]) * (1 << 20))\n")], cwd=Path(__file__).parents[2])
    reads = 0
    try:
        while writer.poll() is None or reads == 0:
            data = path.read_bytes()
            assert data in versions, f"read {len(data)} bytes: a file half stored"
            reads += 1
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0 and reads > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fw.bin"]  # no temporary file left behind


def test_storing_the_bytes_a_file_already_holds_leaves_it_alone(tmp_path):
    path = tmp_path / "fw.bin"
    am_client.store(path, b"abc")
    before = path.stat().st_ino
    am_client.store(path, b"abc")
    assert path.stat().st_ino == before and path.read_bytes() == b"abc"
