"""The JIT's disk cache trusts nothing it did not write (issue 27): a planted object file is never loaded or run, a
refused directory or file (world-writable, another user's) costs a compile and one warning, and a damaged entry of
any kind is compiled over -- results stay right."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu import diskcache
from simgpu.shader.jit import build, jit_tier
from simgpu.testbed import Testbed
from tests.simgpu.shader.test_jit_tier import _drain_background_compiles, _run, _want
from tests.support.cache_entries import damaged

ROOT = Path(__file__).resolve().parents[3]
FUZZ = settings(max_examples=int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "8")), deadline=None)
LAUNCH = """
import numpy as np
from simgpu.shader.jit import jit_tier
from simgpu.testbed import Testbed
from tests.simgpu.shader.test_jit_tier import _run, _want
tb = Testbed(vram_size=1 << 26)
tb.engine.jit = jit_tier("eager")
ok = np.array_equal(_run(tb), _want(50))
print(ok, tb.engine.jit.stats.compiles, tb.engine.jit.stats.disk_hits)
"""


def planted_object(canary: Path) -> bytes:
    """A host object file whose `round` and `fused` write `canary` and end the process: what an attacker would put
    in the cache."""
    import llvmlite.binding as llvm  # (llvmlite: only for the tests that build objects)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    cmd = f"echo planted > {canary}".encode() + b"\0"
    body = "".join(f"""
define i64 @{name}(ptr %ctx) {{
  call i32 @system(ptr @cmd)
  call void @_exit(i32 7)
  ret i64 0
}}""" for name in ("round", "fused"))
    text = "".join("\\" + format(b, "02x") for b in cmd)
    ir = (f'@cmd = private constant [{len(cmd)} x i8] c"{text}"\n'
          f"declare i32 @system(ptr)\ndeclare void @_exit(i32)\n{body}\n")
    tm = llvm.Target.from_default_triple().create_target_machine(reloc="pic", codemodel="jitdefault")
    return tm.emit_object(llvm.parse_assembly(ir))


def launch(env: dict) -> tuple[bool, int, int]:
    """(result right, compiles, disk hits) of the kernel in a fresh process."""
    r = subprocess.run([sys.executable, "-c", LAUNCH], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    ok, compiles, hits = r.stdout.split()
    return ok == "True", int(compiles), int(hits)


def test_a_planted_object_is_never_run(tmp_path, monkeypatch):
    """An object file put in place of a cached one -- raw, as a well-formed entry signed with another secret, or
    with a good entry's tag -- would write a canary: it is compiled over instead, and the next process hits."""
    cache, canary = tmp_path / "jit", tmp_path / "canary"
    env = dict(os.environ, SIMGPU_JIT_CACHE=str(cache), SIMGPU_CACHE_KEY=str(tmp_path / "config" / "cache-key"),
               PYTHONPATH=str(ROOT))
    assert launch(env) == (True, 1, 0)
    [entry] = list(cache.glob("*.msgpack"))
    good = entry.read_bytes()
    obj = planted_object(canary)
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "attacker" / "cache-key"))
    diskcache.forget_secret()
    signed_by_another = diskcache.pack(entry.stem, {"object": obj})
    diskcache.forget_secret()
    for planted in (obj, signed_by_another, signed_by_another[:-32] + good[-32:]):
        entry.write_bytes(planted)
        assert launch(env) == (True, 1, 0)
        assert not canary.exists()
    assert launch(env) == (True, 1, 1)  # a disk hit (counted as a compile too): the planted entries were replaced


def _fresh_run(tb: Testbed | None = None, n: int = 50) -> Testbed:
    """Run the kernel as a new process would: nothing in the memory cache."""
    build._COMPILED.clear()
    tb = tb or Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("eager")
    assert np.array_equal(_run(tb, n), _want(n))
    return tb


@contextlib.contextmanager
def _own_cache(root: Path):
    """A JIT cache and a secret of the block's own under `root`, with a good entry in it; the cache's path."""
    _drain_background_compiles()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SIMGPU_JIT_CACHE", str(root / "jit"))
        mp.setenv("SIMGPU_CACHE_KEY", str(root / "config" / "cache-key"))
        diskcache.forget_secret()
        _fresh_run()
        try:
            yield root / "jit"
        finally:
            diskcache.forget_secret()


@pytest.fixture
def jit_cache(tmp_path):
    with _own_cache(tmp_path) as cache:
        yield cache


def _give_away(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    os.chown(path, 65534, 65534)


@pytest.mark.parametrize("what, how", [("directory", "world-writable"), ("directory", "another user's"),
                                       ("entry", "world-writable"), ("entry", "another user's")])
def test_a_refused_cache_directory_or_entry_warns_once_and_compiles_afresh(jit_cache, capfd, what, how):
    [entry] = list(jit_cache.glob("*.msgpack"))
    target = jit_cache if what == "directory" else entry
    if how == "world-writable":
        os.chmod(target, 0o777 if what == "directory" else 0o666)
    else:
        _give_away(target)
    capfd.readouterr()
    for _ in range(2):
        stats = _fresh_run().engine.jit.stats
        assert stats.compiles == 1 and stats.disk_hits == 0
        if what == "entry":
            os.chmod(entry, 0o666) if how == "world-writable" else _give_away(entry)  # (the compile rewrote it)
    lines = [line for line in capfd.readouterr().err.splitlines() if "refused" in line]
    assert len(lines) == 1 and str(target) in lines[0], lines


@functools.cache
def _fuzz_case(cache: Path):
    """(a*50's good entry, the strategy of its damaged forms: a*51's entry among them) in `cache`: made once."""
    [entry] = list(cache.glob("*.msgpack"))
    _fresh_run(n=51)
    [other] = [p for p in cache.glob("*.msgpack") if p != entry]
    return entry, entry.read_bytes(), damaged(entry.read_bytes(), [other.read_bytes()])


@FUZZ
@given(st_data=st.data())
def test_a_damaged_entry_is_compiled_over_and_results_stay_right(tmp_path_factory, st_data):
    """Random bytes, truncations, bit flips, bytes appended, another kernel's entry in its place: never an exception,
    never another kernel's code (that one loops 51 times), a disk hit only for the entry as written."""
    with _own_cache(tmp_path_factory.getbasetemp() / "jit-fuzz") as cache:
        entry, good, strategy = _fuzz_case(cache)
        what, data = st_data.draw(strategy)
        entry.write_bytes(data)
        stats = _fresh_run().engine.jit.stats
        assert (stats.compiles, stats.disk_hits) == (1, 1 if data == good else 0), what
        assert entry.read_bytes() == good  # the compile wrote the same entry again


def test_code_of_another_optimisation_level_is_never_served_for_the_default(jit_cache, monkeypatch):
    """SIMGPU_JIT_OPT is part of both caches' keys: a lower level (as the instruction fuzz tests use) compiles and
    stores its own entry, and the default level then still finds its own, from disk and from memory."""
    default = _fresh_run().engine.jit.stats
    assert (default.compiles, default.disk_hits) == (1, 1)
    monkeypatch.setenv("SIMGPU_JIT_OPT", "-1,0")
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("eager")  # (the memory cache keeps the default level's object: not served here)
    assert np.array_equal(_run(tb), _want(50))
    assert (tb.engine.jit.stats.compiles, tb.engine.jit.stats.disk_hits) == (1, 0)
    assert len(list(jit_cache.glob("*.msgpack"))) == 2
    monkeypatch.delenv("SIMGPU_JIT_OPT")
    again = _fresh_run().engine.jit.stats
    assert (again.compiles, again.disk_hits) == (1, 1)
