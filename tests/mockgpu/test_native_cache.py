"""The interposer's build directory trusts nothing it did not build (issue 27): a program or library planted where a
build is kept -- one `simgpu run` would LD_PRELOAD into clients -- is rebuilt over, never run, and a build
directory that is world-writable or another user's is replaced by a private one after one warning."""

from __future__ import annotations

import os
import subprocess

import pytest

from mockgpu import native
from simgpu import diskcache

PROGRAM = '#include <stdio.h>\nint main(void) { puts("built by us"); return 0; }\n'


@pytest.fixture
def build_cache(tmp_path, monkeypatch):
    """A build directory and a secret of the test's own; the directory."""
    if not os.environ.get("CC") and not any(map(native.shutil.which, ("cc", "gcc", "clang"))):
        pytest.skip("no C compiler")
    monkeypatch.setenv("SIMGPU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "config" / "cache-key"))
    diskcache.forget_secret()
    yield tmp_path / "cache"
    diskcache.forget_secret()


def plant(path, canary) -> None:
    """Put a program that writes `canary` where a build is kept (as its owner could: mode 0755)."""
    path.write_text(f"#!/bin/sh\necho planted > {canary}\n")
    os.chmod(path, 0o755)


def test_a_planted_program_is_rebuilt_not_run(build_cache, tmp_path):
    built = native.build(PROGRAM, "probe", [])
    assert subprocess.run([built], capture_output=True, text=True).stdout == "built by us\n"
    canary = tmp_path / "canary"
    plant(built, canary)
    again = native.build(PROGRAM, "probe", [])
    assert again == built
    assert subprocess.run([again], capture_output=True, text=True).stdout == "built by us\n"
    assert not canary.exists()


def test_a_planted_library_with_a_manifest_of_another_secret_is_rebuilt(build_cache, tmp_path, monkeypatch):
    lib = native.build("int probe(void) { return 42; }\n", "libprobe", [], shared=True)
    manifest = lib.with_name(lib.name + ".msgpack")
    ident = lib.name.removesuffix(".so")
    planted = b"\x7fELF planted library"
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "attacker" / "cache-key"))
    diskcache.forget_secret()
    forged = diskcache.pack(ident, {"sha256": native.hashlib.sha256(planted).digest()})
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "config" / "cache-key"))
    diskcache.forget_secret()
    lib.write_bytes(planted)
    manifest.write_bytes(forged)
    assert native.build("int probe(void) { return 42; }\n", "libprobe", [], shared=True) == lib
    assert lib.read_bytes() != planted and lib.read_bytes().startswith(b"\x7fELF")


@pytest.mark.parametrize("how", ["world-writable", "another user's"])
def test_a_refused_build_directory_is_replaced_by_a_private_one(build_cache, tmp_path, capfd, how):
    built = native.build(PROGRAM, "probe", [])
    canary = tmp_path / "canary"
    plant(built, canary)
    if how == "world-writable":
        os.chmod(build_cache, 0o777)
    elif os.geteuid() == 0:
        os.chown(build_cache, 65534, 65534)
    else:
        pytest.skip("giving a directory to another user needs root")
    capfd.readouterr()
    private = native.cache_dir()
    assert private != build_cache and os.stat(private).st_uid == os.geteuid()
    assert os.stat(private).st_mode & 0o777 == 0o700
    again = native.build(PROGRAM, "probe", [])
    assert again.parent == private
    assert subprocess.run([again], capture_output=True, text=True).stdout == "built by us\n"
    assert not canary.exists()
    lines = [line for line in capfd.readouterr().err.splitlines() if "refused" in line]
    assert len(lines) == 1 and str(build_cache) in lines[0], lines
