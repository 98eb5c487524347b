"""The kernel cache trusts nothing it did not write (issue 27): an entry copied over another key's, one signed with
another secret, one whose binary its device would not load, a directory or entry file that is world-writable or
another user's, and damaged entries of every kind are compiled afresh -- results stay right, nothing raises."""

from __future__ import annotations

import os
from pathlib import Path

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Tensor, cache, kernel
from compiler import backend as backends
from compiler import device as devices
from simgpu import diskcache
from tests import DATA
from tests.support.cache_entries import damaged

FUZZ = settings(max_examples=int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "6")), deadline=None)
A = np.arange(1, 13, dtype=np.float32)
B = A[::-1] * 4


def as_a_new_process() -> None:
    """Forget every compiled program this process holds (memory cache, programs by AST, binaries the devices
    loaded by cache key), so the next kernel comes from the disk cache or a compile."""
    cache.clear_memory()
    kernel._by_ast.clear()
    for dev in devices._OPEN.values():
        dev._kernels.clear()


def run(op: str) -> np.ndarray:
    """a*b or a+b on the default device, checked against numpy."""
    a, b = Tensor(A), Tensor(B)
    got = (a * b if op == "mul" else a + b).numpy()
    assert np.array_equal(got, A * B if op == "mul" else A + B), f"{op}: {got}"
    return got


def entries(root) -> set:
    """The entry files of the backend compiling for the default device (not those of a differential partner)."""
    name = backends.for_device(devices.DEFAULT).name
    return set((root / "kernels").glob(f"{name}-*/*.msgpack"))


@pytest.fixture
def kernel_cache(tmp_path, monkeypatch):
    """A kernel cache and a secret of the test's own; the cache's root."""
    monkeypatch.setenv("SIMGPU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SIMGPU_CACHE", "1")
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "config" / "cache-key"))
    diskcache.forget_secret()
    as_a_new_process()
    yield tmp_path / "cache"
    diskcache.forget_secret()
    as_a_new_process()


def _mul_entry(root):
    """Compile a*b into an empty cache: its entry's file."""
    run("mul")
    [entry] = entries(root)
    return entry


def test_an_entry_copied_over_another_is_compiled_afresh(kernel_cache, backend):
    mul = _mul_entry(kernel_cache)
    run("add")
    [add] = entries(kernel_cache) - {mul}
    mul.write_bytes(add.read_bytes())  # a+b's entry where a*b's belongs
    as_a_new_process()
    before = kernel.stats.compiled
    run("mul")
    assert kernel.stats.compiled == before + 1
    assert msgpack.unpackb(mul.read_bytes())["key"] == mul.stem  # the compile put the right entry back
    as_a_new_process()
    hits = kernel.stats.cache_hits
    run("mul")
    assert kernel.stats.cache_hits == hits + 1 and kernel.stats.compiled == before + 1


@pytest.mark.parametrize("binary", [b"not a code object", b"\x7fELF" + bytes(60),
                                    DATA / "codeobjects" / "llvmlite_vadd.so"])
def test_a_signed_entry_whose_binary_is_not_a_program_is_compiled_afresh(kernel_cache, backend, binary):
    """An entry with a good tag (written by this user) whose binary its device refuses -- no code object, or one
    without the kernel (a GPU code object of another kernel; on the CPU device, no CPU code object) -- is compiled
    afresh rather than raising, and its entry replaced."""
    mul = _mul_entry(kernel_cache)
    name = msgpack.unpackb(mul.read_bytes())["name"]
    binary = binary.read_bytes() if isinstance(binary, Path) else binary
    cache.put(mul.parent.name, mul.stem, {"binary": binary, "name": name, "proof_s": None})
    as_a_new_process()
    before = kernel.stats.compiled
    run("mul")
    assert kernel.stats.compiled == before + 1
    assert msgpack.unpackb(mul.read_bytes())["binary"] != binary


def test_an_entry_signed_with_another_secret_is_compiled_afresh(kernel_cache, backend, tmp_path, monkeypatch):
    mul = _mul_entry(kernel_cache)
    run("add")
    [add] = entries(kernel_cache) - {mul}
    fields = msgpack.unpackb(add.read_bytes())
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "attacker" / "cache-key"))
    diskcache.forget_secret()
    planted = diskcache.pack(mul.stem, {k: fields[k] for k in ("binary", "name", "proof_s")})
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "config" / "cache-key"))
    diskcache.forget_secret()
    mul.write_bytes(planted)
    as_a_new_process()
    before = kernel.stats.compiled
    run("mul")
    assert kernel.stats.compiled == before + 1


def _give_away(path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    os.chown(path, 65534, 65534)


@pytest.mark.parametrize("what, how", [("root", "world-writable"), ("root", "another user's"),
                                       ("kernels", "world-writable"), ("entry", "world-writable"),
                                       ("entry", "another user's")])
def test_a_refused_directory_or_entry_warns_once_and_compiles_afresh(kernel_cache, capfd, what, how):
    mul = _mul_entry(kernel_cache)
    target = {"root": kernel_cache, "kernels": kernel_cache / "kernels", "entry": mul}[what]
    if how == "world-writable":
        os.chmod(target, 0o666 if what == "entry" else 0o777)
    else:
        _give_away(target)
    capfd.readouterr()
    for _ in range(2):
        as_a_new_process()
        before = kernel.stats.compiled
        run("mul")
        assert kernel.stats.compiled == before + 1
        if what == "entry":  # (the compile wrote its own entry over the refused one)
            os.chmod(mul, 0o666) if how == "world-writable" else _give_away(mul)
    lines = [line for line in capfd.readouterr().err.splitlines() if "refused" in line]
    assert len(lines) == 1 and str(target) in lines[0], lines


@FUZZ
@given(st_data=st.data())
def test_a_damaged_entry_never_raises_nor_gives_a_wrong_result(tmp_path_factory, st_data):
    """Random bytes, truncations, bit flips, bytes appended, other keys' entries (a+b's, and a+b's signed under
    a*b's key with another secret) in a*b's place."""
    root = tmp_path_factory.mktemp("kernel-fuzz")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SIMGPU_CACHE_DIR", str(root / "cache"))
        mp.setenv("SIMGPU_CACHE", "1")
        mp.setenv("SIMGPU_CACHE_KEY", str(root / "config" / "cache-key"))
        diskcache.forget_secret()
        as_a_new_process()
        mul = _mul_entry(root / "cache")
        good = mul.read_bytes()
        run("add")
        [add] = entries(root / "cache") - {mul}
        what, data = st_data.draw(damaged(good, [add.read_bytes()]))
        mul.write_bytes(data)
        as_a_new_process()
        before = kernel.stats.compiled
        run("mul")
        assert kernel.stats.compiled == before + (data != good), what
        diskcache.forget_secret()
        as_a_new_process()
