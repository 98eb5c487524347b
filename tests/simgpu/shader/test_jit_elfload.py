"""The JIT's own object loader (simgpu/shader/jit/elfload.py) against LLVM's MCJIT (llvmlite): the same objects, loaded
by each, run the corpus kernels to the same memory, registers, counters and clock as the interpreter, and their code
bytes are MCJIT's but at the relocation sites; hostile objects (truncated, relocations of other kinds or out of their
section, symbols missing or undefined, planted header and table bytes, random mutations) are a BadObject, never
another exception, and a kernel whose object is refused runs on in the interpreter, correct."""

from __future__ import annotations

import ctypes
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.shader.jit import build, elfload, jit_tier, worker
from simgpu.shader.jit import compile as jc
from simgpu.shader.jit.elfload import BadObject
from simgpu.shader.jit.worker import CompileFailed
from simgpu.testbed import Testbed
from tests.simgpu.shader.test_jit_remote import KERNELS, LOOP, _launch, _synchronous, loop_ends_as_in_the_interpreter
from tests.support import tiers

pytest.importorskip("llvmlite")
if not elfload.supported():
    pytest.skip("elfload runs on Linux x86-64 only (MCJIT loads elsewhere)", allow_module_level=True)

PROFILES = {"host": "", "avx2": "haswell"}
ROOT = Path(__file__).resolve().parents[3]


def _objects_of(name: str, monkeypatch, arch: str = "gfx1100") -> list[bytes]:
    """The object files an eager compile of corpus kernel `name` loads."""
    got = []
    real = elfload.load
    monkeypatch.setattr(elfload, "load", lambda obj, entries=("round",): (got.append(obj), real(obj, entries))[1])
    build._COMPILED.clear()
    tb = Testbed(vram_size=1 << 28, arch=arch)
    tb.engine.jit = jit_tier("eager")
    _launch(tb, name)
    monkeypatch.setattr(elfload, "load", real)
    assert got
    return got


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_corpus_kernels_run_alike_loaded_by_elfload_and_by_mcjit(name, profile, monkeypatch, tmp_path):
    """Each kernel compiled once (the disk cache serves the second compile the same object), run with the code
    loaded by elfload and by MCJIT: both end as the interpreter does."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_CPU", PROFILES[profile])
    reference = tiers.testbed("interpreter")
    _launch(reference, name)
    ours = tiers.testbed("jit")
    build._COMPILED.clear()
    _launch(ours, name)
    theirs = tiers.testbed("jit")
    build._COMPILED.clear()
    with monkeypatch.context() as m:
        m.setattr(elfload, "load", jc.McjitImage)
        _launch(theirs, name)
    build._COMPILED.clear()
    for tb in (ours, theirs):
        stats = tb.engine.jit.stats
        assert stats.compiles >= 1 and stats.native_instructions > 0 and not stats.failures
        tiers.assert_same(reference, tb)
    assert theirs.engine.jit.stats.disk_hits == theirs.engine.jit.stats.compiles  # (the same objects)


def _relocation_sites(obj: bytes) -> list[tuple[int, int]]:
    """(section index, offset) of every relocation of a loaded section."""
    sections = elfload._sections(obj)
    out = []
    for s in sections:
        if s[1] == elfload.SHT_RELA and elfload._loaded(sections[s[7]]):
            out += [(s[7], off) for off, _info, _add in struct.iter_unpack("<QQq", obj[s[4]:s[4] + s[5]])]
    return out


def _function(obj: bytes, name: str) -> tuple[int, int, int]:
    """(section index, offset, size) of global function `name`."""
    syms, strtab = elfload._symbols(obj, elfload._sections(obj))
    for nm, _info, _other, shndx, value, size in syms:
        if elfload._name(obj, strtab, nm) == name.encode():
            return shndx, value, size
    raise AssertionError(name)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_loaded_code_is_mcjits_but_at_the_relocation_sites(profile, monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    monkeypatch.setenv("SIMGPU_JIT_CPU", PROFILES[profile])
    for name in ("saxpy", "matmul", "histogram"):
        for obj in _objects_of(name, monkeypatch):
            ours, theirs = elfload.load(obj), jc.McjitImage(obj)
            shndx, value, size = _function(obj, "round")
            a = ctypes.string_at(ours.address("round"), size)
            b = ctypes.string_at(theirs.address("round"), size)
            sites = [off - value for sec, off in _relocation_sites(obj) if sec == shndx and value <= off < value + size]
            mask = np.ones(size, bool)
            for at in sites:
                mask[at:at + 8] = False
            assert np.array_equal(np.frombuffer(a, np.uint8)[mask], np.frombuffer(b, np.uint8)[mask])
            assert mask.sum() < size or not sites


def test_elfload_loads_without_llvmlite(tmp_path):
    """A fresh process takes up the worker's compile and runs it natively without importing llvmlite."""
    script = """
import os, sys
os.environ["SIMGPU_JIT_BACKGROUND"] = "now"
os.environ["SIMGPU_JIT_HOT"] = "0"
from simgpu.shader.jit import jit_tier
from simgpu.testbed import Testbed
tb = Testbed(vram_size=1 << 26)
tb.engine.jit = jit_tier("hot")
k = tb.load_asm('''LOOP''', args=1, vgprs=8)
out = tb.alloc(4 * 64)
tb.launch(k, [out], (2,), (32,))
(state,) = tb.engine.jit.kernels.values()
if state.future is not None:
    state.future.result(timeout=300)
tb.launch(k, [out], (2,), (32,))
print(tb.engine.jit.stats.native_instructions > 0, any(m.startswith("llvmlite") for m in sys.modules))
""".replace("LOOP", LOOP)
    env = {**os.environ, "SIMGPU_JIT_CACHE": str(tmp_path), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                         timeout=300).stdout.split()
    assert out == ["True", "False"]


# ---- hostile objects ----

@pytest.fixture(scope="module")
def saxpy_object() -> bytes:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SIMGPU_JIT_CACHE", "off")
        (obj,) = _objects_of("saxpy", mp)
    return obj


def _rela(obj: bytes) -> tuple[int, int]:
    """(file offset, entries) of the code's relocation section."""
    sections = elfload._sections(obj)
    (s,) = [s for s in sections if s[1] == elfload.SHT_RELA and sections[s[7]][2] & elfload.SHF_EXECINSTR]
    return s[4], s[5] // 24


def _shdr_at(obj: bytes, i: int) -> int:
    return struct.unpack_from("<Q", obj, 0x28)[0] + 64 * i


def _patched(obj: bytes, at: int, fmt: str, value) -> bytes:
    b = bytearray(obj)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)


def _spoiled(obj: bytes, how: str) -> bytes:
    rela, n = _rela(obj)
    sections = elfload._sections(obj)
    if how == "truncated in the header":
        return obj[:40]
    if how == "truncated in the sections":
        return obj[:len(obj) // 2]
    if how == "not ELF":
        return b"\x7fELG" + obj[4:]
    if how == "another machine":
        return _patched(obj, 18, "<H", 3)
    if how == "an executable, not a relocatable object":
        return _patched(obj, 16, "<H", 2)
    if how == "section table out of the file":
        return _patched(obj, 0x28, "<Q", len(obj))
    if how == "a relocation of a kind LLVM does not emit here":
        return _patched(obj, rela + 8, "<I", 2)  # R_X86_64_PC32
    if how == "a relocation past its section":
        return _patched(obj, rela, "<Q", 1 << 20)
    if how == "a relocation at the section's last bytes":
        text = [s for s in sections if s[2] & elfload.SHF_EXECINSTR and s[5]][0]
        return _patched(obj, rela, "<Q", text[5] - 4)
    if how == "a relocation against a symbol past the table":
        return _patched(obj, rela + 12, "<I", 1000)
    if how == "GOTPC64 against a section":
        for k in range(n):
            info = struct.unpack_from("<Q", obj, rela + 24 * k + 8)[0]
            if info & 0xFFFFFFFF == elfload.R_X86_64_GOTPC64:
                other = struct.unpack_from("<Q", obj, rela + 24 * (k + 1) + 8)[0]  # a GOTOFF64's section symbol
                return _patched(obj, rela + 24 * k + 8, "<Q", (other >> 32) << 32 | elfload.R_X86_64_GOTPC64)
    if how == "the entry missing":
        return obj.replace(b"round\0", b"rounx\0")
    if how == "an undefined symbol":
        return obj.replace(b"_GLOBAL_OFFSET_TABLE_\0", b"_GLOBAL_OFFSET_TABLF_\0")
    if how == "a section's bytes out of the file":
        text = [i for i, s in enumerate(sections) if s[2] & elfload.SHF_EXECINSTR and s[5]][0]
        return _patched(obj, _shdr_at(obj, text) + 0x18, "<Q", len(obj) - 16)
    if how == "an alignment not a power of two":
        text = [i for i, s in enumerate(sections) if s[2] & elfload.SHF_EXECINSTR and s[5]][0]
        return _patched(obj, _shdr_at(obj, text) + 0x30, "<Q", 48)
    if how == "a huge NOBITS section":
        text = [i for i, s in enumerate(sections) if s[2] & elfload.SHF_EXECINSTR and s[5]][0]
        b = _patched(obj, _shdr_at(obj, text) + 4, "<I", elfload.SHT_NOBITS)
        return _patched(b, _shdr_at(obj, text) + 0x20, "<Q", 1 << 40)
    if how == "a code section with unknown flags (TLS)":
        text = [i for i, s in enumerate(sections) if s[2] & elfload.SHF_EXECINSTR and s[5]][0]
        return _patched(obj, _shdr_at(obj, text) + 8, "<Q", 0x400 | elfload.SHF_ALLOC | elfload.SHF_EXECINSTR)
    if how == "a symbol name out of its table":
        syms = [s for s in sections if s[1] == elfload.SHT_SYMTAB][0]
        return _patched(obj, syms[4] + 24 * (syms[5] // 24 - 1), "<I", 1 << 30)
    if how == "REL, not RELA":
        return _patched(obj, _shdr_at(obj, [i for i, s in enumerate(sections) if s[4] == rela][0]) + 4, "<I",
                        elfload.SHT_REL)
    raise AssertionError(how)


SPOILS = ["truncated in the header", "truncated in the sections", "not ELF", "another machine",
          "an executable, not a relocatable object", "section table out of the file",
          "a relocation of a kind LLVM does not emit here", "a relocation past its section",
          "a relocation at the section's last bytes", "a relocation against a symbol past the table",
          "GOTPC64 against a section", "the entry missing", "an undefined symbol", "a section's bytes out of the file",
          "an alignment not a power of two", "a huge NOBITS section", "a code section with unknown flags (TLS)",
          "a symbol name out of its table", "REL, not RELA"]


@pytest.mark.parametrize("how", SPOILS)
def test_a_hostile_object_is_refused(how, saxpy_object):
    assert elfload.load(saxpy_object, ("round", "fused")).address("fused")
    with pytest.raises(BadObject):
        elfload.load(_spoiled(saxpy_object, how), ("round", "fused"))
    assert issubclass(BadObject, CompileFailed)


def test_bytes_planted_where_no_section_reads_change_nothing(saxpy_object):
    """Bytes past the last table (or between sections) are not read: the image is the same."""
    a, b = elfload.load(saxpy_object), elfload.load(saxpy_object + b"\xcc" * 4096)
    _shndx, _value, size = _function(saxpy_object, "round")
    assert ctypes.string_at(a.address("round"), size)[:16] == ctypes.string_at(b.address("round"), size)[:16]
    with pytest.raises(BadObject, match="without the function"):
        a.address("nothing")


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_objects_are_loaded_or_refused_never_crash(data, saxpy_object):
    """Random bytes of the object replaced (the header, the section table, the symbols and relocations more often
    than the code): the loader gives an image with its entry or a BadObject, nothing else (the code is not run)."""
    obj = bytearray(saxpy_object)
    shoff = struct.unpack_from("<Q", obj, 0x28)[0]
    rela, n = _rela(saxpy_object)
    regions = [(0, 64), (shoff, len(obj)), (rela, rela + 24 * n), (0, len(obj))]
    for _ in range(data.draw(st.integers(1, 8))):
        lo, hi = regions[data.draw(st.integers(0, len(regions) - 1))]
        at = data.draw(st.integers(lo, hi - 1))
        obj[at] = data.draw(st.integers(0, 255))
    try:
        image = elfload.load(bytes(obj))
    except BadObject:
        return
    assert image.address("round")


def test_a_kernel_whose_object_is_refused_runs_on_in_the_interpreter(monkeypatch):
    """The worker's reply carrying a spoiled object: the take-up fails the kernel's compile (kept in Stats.failures),
    and the kernel ends each launch as the interpreter alone would."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    monkeypatch.setenv("SIMGPU_JIT_HOT", "0")
    monkeypatch.setenv("SIMGPU_JIT_BACKGROUND", "now")
    build._COMPILED.clear()
    _synchronous(monkeypatch)
    real = worker.translate

    def hostile(message, cancelled=None):
        reply = real(message, cancelled)
        reply["object"] = _spoiled(reply["object"], "a relocation of a kind LLVM does not emit here")
        return reply
    monkeypatch.setattr(worker, "translate", hostile)
    state, stats = loop_ends_as_in_the_interpreter()
    assert state.compiled is None and "BadObject" in state.failed and "relocation kind" in state.failed
    assert stats.native_instructions == 0
