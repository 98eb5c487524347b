"""Code-object metadata validated at load (issue 27, item 8): real code objects (tests/data/codeobjects) with their
NT_AMDGPU_METADATA note or their kernel descriptors mutated are loaded and every kernel launched. The only
outcomes: CodeObjectError at load (naming the kernel and key when the metadata is at fault), GPUFault at run, or
a kernel that ran; never another exception, never a host crash; the Device stays usable."""

from __future__ import annotations

import io
import os
from functools import cache

import msgpack
import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime
from mockgpu import MockOS
from simgpu.isa.codeobject import CodeObjectError, read_code_object
from simgpu.isa.kdescriptor import KD_SIZE
from tests import DATA
from tests.runtime.test_runtime_memory import STORE, _asm_kernel

FUZZ = settings(max_examples=int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "40")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
OBJECTS = ("opencl_kernels.so", "llvmlite_vadd.so", "opencl_kernels_stripped.so")
POINTER_KINDS = ("global_buffer", "dynamic_shared_pointer")
PAD_KEY = "~"  # an extra top-level key whose string keeps the re-encoded note at its original size


@cache
def _object(name: str) -> bytes:
    return (DATA / "codeobjects" / name).read_bytes()


@cache
def _device():
    """One Device for every example (a fault must leave it usable), its watchdog small: a mutated kernel may spin."""
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28, watchdog=200_000))
    return dev, dev.alloc(1 << 16)


def _note(blob: bytes) -> tuple[int, int, dict]:
    """(file offset, size, decoded map) of the NT_AMDGPU_METADATA descriptor."""
    elf = ELFFile(io.BytesIO(blob))
    for sec in elf.iter_sections():
        if sec["sh_type"] != "SHT_NOTE":
            continue
        for n in sec.iter_notes():
            if n["n_name"] == "AMDGPU":
                off = n["n_offset"] + 12 + (-(-n["n_namesz"] // 4) * 4)
                return off, n["n_descsz"], msgpack.unpackb(blob[off:off + n["n_descsz"]], raw=False)
    raise AssertionError("no metadata note")


def _with_note(blob: bytes, meta: dict) -> bytes | None:
    """The object with the note's map replaced, padded to the note's size (None if it does not fit). Room is made
    by dropping the optional .sgpr_spill_count of each kernel (nothing reads it)."""
    off, size, _ = _note(blob)
    for k in meta.get("amdhsa.kernels", []) if isinstance(meta.get("amdhsa.kernels"), list) else []:
        if isinstance(k, dict):
            k.pop(".sgpr_spill_count", None)
    short = size - len(msgpack.packb({**meta, PAD_KEY: ""}))
    for pad in range(max(short - 4, 0), short + 1):  # the string's header grows by up to 4 bytes with its length
        data = msgpack.packb({**meta, PAD_KEY: "x" * pad})
        if len(data) == size:
            return blob[:off] + data + blob[off + size:]
    return None


def _descriptor_offsets(blob: bytes) -> list[int]:
    elf = ELFFile(io.BytesIO(blob))
    out = []
    for name in (".symtab", ".dynsym"):
        table = elf.get_section_by_name(name)
        for sym in table.iter_symbols() if table is not None else ():
            if sym.name.endswith(".kd") and sym["st_shndx"] not in ("SHN_UNDEF", "SHN_ABS"):
                sec = elf.get_section(sym["st_shndx"])
                out.append(sec["sh_offset"] + sym["st_value"] - sec["sh_addr"])
    return sorted(set(out))


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 40), 1 << 40), st.sampled_from([0, 1, 3, 64, 1025]),
                   st.text(max_size=8), st.lists(st.integers(0, 4), max_size=3), st.just({}))


def _mutated_metadata(draw, blob: bytes) -> bytes | None:
    """`blob` with keys of its kernels' and arguments' metadata deleted or given other values."""
    meta = _note(blob)[2]
    kernels = meta["amdhsa.kernels"]
    for _ in range(draw(st.integers(1, 3))):
        k = kernels[draw(st.integers(0, len(kernels) - 1))]
        args = k.get(".args")
        target = k
        if isinstance(args, list) and args and draw(st.booleans()):
            target = args[draw(st.integers(0, len(args) - 1))]
        if not isinstance(target, dict) or not target:  # an earlier edit replaced it
            continue
        key = draw(st.sampled_from(sorted(target)))
        if draw(st.booleans()):
            del target[key]
        else:
            target[key] = draw(VALUES)
    return _with_note(blob, meta)


def _mutated_descriptor(blob: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    """`blob` with descriptor bytes overwritten: (which descriptor, byte in it, value)."""
    out = bytearray(blob)
    offsets = _descriptor_offsets(blob)
    for which, at, value in edits:
        out[offsets[which % len(offsets)] + at] = value
    return bytes(out)


def _load_and_launch(blob: bytes) -> None:
    dev, scratch = _device()
    try:
        module = dev.load(blob)
    except CodeObjectError as e:
        assert str(e)
        return
    for name in module.kernels:
        k = module[name]
        explicit = [a for a in k.args if not a[".value_kind"].startswith("hidden_")]
        args = [scratch if a[".value_kind"] in POINTER_KINDS else 0 for a in explicit]
        try:
            k(*args, grid=1, block=32, timeout_ms=60_000)
        except runtime.GPUFault as e:
            assert e.report and e.device_usable


def _ok() -> None:
    dev, _ = _device()
    out = dev.alloc(4).copyin(np.zeros(1, np.uint32))
    _asm_kernel(dev, STORE)(out, grid=1, block=32)
    assert out.copyout(np.empty(1, np.uint32))[0] == 42
    out.free()


@FUZZ
@given(st.data(), st.sampled_from(OBJECTS))
def test_mutated_metadata_is_a_code_object_error_at_load_or_runs(data, name):
    blob = _mutated_metadata(data.draw, _object(name))
    if blob is not None:
        _load_and_launch(blob)
    _ok()


@FUZZ
@given(st.sampled_from(OBJECTS), st.lists(st.tuples(st.integers(0, 7), st.integers(0, KD_SIZE - 1),
                                                    st.integers(0, 255)), min_size=1, max_size=6))
def test_mutated_descriptors_are_a_code_object_error_at_load_or_a_gpu_fault_at_run(name, edits):
    _load_and_launch(_mutated_descriptor(_object(name), edits))
    _ok()


@FUZZ
@given(st.sampled_from(OBJECTS), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1,
                                          max_size=6))
def test_mutated_note_bytes_are_a_code_object_error_at_load_or_run(name, edits):
    blob = bytearray(_object(name))
    off, size, _ = _note(bytes(blob))
    for at, value in edits:
        blob[off + at % size] = value
    _load_and_launch(bytes(blob))
    _ok()


def _kernel_entry(meta: dict, name: str) -> dict:
    return next(k for k in meta["amdhsa.kernels"] if k[".name"] == name)


@pytest.mark.parametrize("edit, message", [
    (lambda k: k[".args"][0].pop(".offset"), r"kernel 'vadd': \.args\[0\]( \(\w+\))?: required key \.offset is "
                                             r"missing"),
    (lambda k: k.pop(".kernarg_segment_size"), r"kernel 'vadd': required key \.kernarg_segment_size is missing"),
    (lambda k: k[".args"][1].update({".offset": 4096}), r"kernel 'vadd': \.args\[1\].*\.offset 4096 \+ \.size 8 "
                                                         r"lies past the \d+-byte kernarg segment"),
    (lambda k: k.update({".kernarg_segment_align": 12}), r"kernel 'vadd': \.kernarg_segment_align is 12, not a "
                                                          "power of two"),
    (lambda k: k.update({".wavefront_size": 16}), r"kernel 'vadd': \.wavefront_size is 16, not one of 32, 64"),
    (lambda k: k.update({".wavefront_size": 64}), r"kernel 'vadd': metadata \.wavefront_size 64 disagrees with its "
                                                   "descriptor"),
    (lambda k: k[".args"][0].update({".size": "8"}), r"kernel 'vadd': \.args\[0\].*\.size is a str, not an integer"),
    (lambda k: k[".args"][0].update({".value_kind": "global_bufer"}), r"\.value_kind is 'global_bufer', not a value "
                                                                       "kind"),
    (lambda k: k.update({".max_flat_workgroup_size": 0}), r"\.max_flat_workgroup_size is 0, outside 1\.\.1024"),
    (lambda k: k[".args"][0].update({".value_kind": "by_value", ".size": 0}),
     r"kernel 'vadd': \.args\[\d\].*\.size 0: a by-value argument holds at least one byte"),
])
def test_metadata_is_checked_against_the_schema_at_load(edit, message):
    blob = _object("llvmlite_vadd.so")
    meta = _note(blob)[2]
    edit(_kernel_entry(meta, "vadd"))
    with pytest.raises(CodeObjectError, match=message):
        read_code_object(_with_note(blob, meta))


def test_a_kernel_argument_without_an_offset_fails_at_load_not_at_launch():
    blob = _object("llvmlite_vadd.so")
    meta = _note(blob)[2]
    del _kernel_entry(meta, "vadd")[".args"][0][".offset"]
    dev, _ = _device()
    with pytest.raises(CodeObjectError, match=r"kernel 'vadd': \.args\[0\].*required key \.offset is missing"):
        dev.load(_with_note(blob, meta))  # used to load, then raise KeyError in simgpu/hw/kernargs.py at launch
    _ok()
