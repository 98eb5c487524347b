"""Target IDs parsed by their grammar (AMDGPUUsage: <arch>-<vendor>-<os>-<environment>-<processor>[:features]) and
checked against the ELF header's e_flags, at read time and through the runtime's load."""

from __future__ import annotations

import os
import re
import struct
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime
from mockgpu import MockOS
from simgpu.isa.codeobject import CodeObjectError, read_code_object, write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from simgpu.isa.target_id import (
    TARGETS,
    TargetIDError,
    check_flags,
    e_flags_for,
    parse_processor,
    parse_target_id,
    processor_from_flags,
)
from tools.triton_corpus import DATA as TRITON_DATA

TRITON_TARGET = "amdgpu11.00-amd-amdhsa-unknown-gfx1100"  # what Triton 3.9 (its LLVM) writes for gfx1100
E_FLAGS_OFFSET = 0x30  # e_flags in an ELF64 header


@cache
def _device() -> runtime.Device:
    return runtime.Device("AMD:0", queue="pm4", os=MockOS(devices=1, vram_size=1 << 28))


def _code_object(target: str) -> bytes:
    """One trivial kernel (s_endpgm) in a code object whose amdhsa.target is `target`."""
    return write_code_object([("k", struct.pack("<I", 0xBFB00000), make_descriptor(1), None)], target=target)


def _with_target(text: str) -> bytes:
    """A gfx1100 code object whose amdhsa.target is replaced, byte for byte, by `text` (any string of 26+ characters:
    the carrier's environment is padded to the same length, so the msgpack note stays well-formed)."""
    carrier = f"amdgcn-amd-amdhsa-{'e' * (len(text) - 26)}-gfx1100"
    assert len(carrier) == len(text)
    co = _code_object(carrier)
    assert co.count(carrier.encode()) == 1
    return co.replace(carrier.encode(), text.encode())


def _with_e_flags(co: bytes, e_flags: int) -> bytes:
    return co[:E_FLAGS_OFFSET] + struct.pack("<I", e_flags) + co[E_FLAGS_OFFSET + 4:]


# ------------------------------------------------------------------------------------------------ the grammar


def test_triton_target_id_has_an_environment():
    tid = parse_target_id(TRITON_TARGET)
    assert (tid.arch, tid.vendor, tid.os, tid.environment, tid.processor, tid.features) == \
        ("amdgpu11.00", "amd", "amdhsa", "unknown", "gfx1100", {})
    assert str(tid) == TRITON_TARGET


def test_target_id_without_environment():
    tid = parse_target_id("amdgcn-amd-amdhsa--gfx1100")
    assert (tid.arch, tid.environment, tid.processor, tid.features) == ("amdgcn", "", "gfx1100", {})
    assert str(tid) == "amdgcn-amd-amdhsa--gfx1100"


def test_target_id_features():
    tid = parse_target_id("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-")
    assert tid.processor == "gfx90a" and tid.features == {"sramecc": True, "xnack": False}
    assert str(tid) == "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"
    assert parse_target_id("amdgcn-amd-amdhsa-unknown-gfx942:xnack+").features == {"xnack": True}
    assert parse_processor("gfx90a:sramecc+:xnack-") == tid


@pytest.mark.parametrize("text", [
    "amdgcn-amd-amdhsa-gfx1100",                # the environment field is missing, not empty
    "amdgcn-amd-amdhsa--gfx1100--",             # trailing junk
    "gfx1100",                                  # a processor is not a target ID
    "x86_64-amd-amdhsa--gfx1100",               # not an AMDGPU arch
    "amdgcn-amd-amdpal--gfx1100",               # not the HSA OS
    "amdgcn-amd-amdhsa-opencl-x-gfx1100",       # an environment has no hyphen
    "amdgcn-amd-amdhsa--sm_90",                 # not a gfx processor
    "amdgcn-amd-amdhsa--gfx1100:xnack",         # a feature needs + or -
    "amdgcn-amd-amdhsa--gfx1100:wavefrontsize64+",  # not a target-ID feature
    "amdgcn-amd-amdhsa--gfx90a:xnack+:xnack-",  # a feature twice
    "amdgcn-amd-amdhsa--gfx1100:xnack+",        # gfx1100 has no XNACK setting
    "",
])
def test_malformed_target_ids_are_refused(text):
    with pytest.raises(TargetIDError, match="target ID"):
        parse_target_id(text)


@pytest.mark.parametrize("text", [
    "amdgcn-amd-amdhsa-gfx1100-",
    "amdgcn-amd-amdhsa--gfx1100--",
    "amdgcn-amd-amdhsa-opencl-x-gfx1100",
    "amdgcn-amd-amdhsa--gfx1100:xnack",
    "amdgcn-amd-amdhsa--gfx1100:sramecc+",
    "amdgpu11.00-amd-amdhsa-unknown-gfx1100 ",
])
def test_code_object_with_malformed_target_id_is_a_code_object_error(text):
    co = _with_target(text)
    with pytest.raises(CodeObjectError, match=re.escape(f"amdhsa.target: target ID {text!r}")):
        read_code_object(co)
    with pytest.raises(CodeObjectError, match="target ID"):
        _device().load(co)


def test_non_string_target_is_a_code_object_error():
    """amdhsa.target was ignored unless it was a string; now whatever it is must parse."""
    co = _code_object("amdgcn-amd-amdhsa--gfx1100")
    # The msgpack fixstr (0xa0 | 26, then 26 bytes) becomes an array16 of 24 ones: the same 27 bytes.
    stored = b"\xba" + b"amdgcn-amd-amdhsa--gfx1100"
    assert co.count(stored) == 1
    with pytest.raises(CodeObjectError, match=r"amdhsa\.target is a list, not a string"):
        read_code_object(co.replace(stored, b"\xdc\x00\x18" + b"\x01" * 24))


# ------------------------------------------------------------------------------------------------ e_flags


def test_triton_code_object_loads_through_the_runtime():
    """Failed before: the runtime split the target on "--" and refused every Triton code object."""
    co = _code_object(TRITON_TARGET)
    assert read_code_object(co).target == TRITON_TARGET
    assert _device().load(co).kernels == ["k"]
    triton = (TRITON_DATA / "vadd_f32.hsaco").read_bytes()  # built by Triton 3.9.0 itself
    parsed = read_code_object(triton)
    assert (parsed.target, parsed.processor, parsed.e_flags) == (TRITON_TARGET, "gfx1100", 0x41)
    assert _device().load(triton).kernels == ["add_kernel"]


def test_processor_from_e_flags_agrees_with_the_note():
    for processor, (mach, _, _) in TARGETS.items():
        assert processor_from_flags(e_flags_for(processor)) == processor
        assert e_flags_for(processor) & 0xFF == mach
    co = read_code_object((TRITON_DATA / "vadd_f32.hsaco").read_bytes())
    assert processor_from_flags(co.e_flags) == parse_target_id(co.target).processor == co.processor


@pytest.mark.parametrize("e_flags,names", [(0x46, "gfx1101"), (0x36, "gfx1030"), (0x99, "a processor simgpu does not")])
def test_e_flags_naming_another_processor_than_the_note_is_refused(e_flags, names):
    triton = (TRITON_DATA / "vadd_f32.hsaco").read_bytes()
    bad = _with_e_flags(triton, e_flags)
    with pytest.raises(CodeObjectError, match=f"e_flags EF_AMDGPU_MACH {e_flags:#x} names {names}.*names gfx1100"):
        read_code_object(bad)
    with pytest.raises(CodeObjectError, match="e_flags disagree"):
        _device().load(bad)


def test_e_flags_features_must_agree_with_the_note():
    co = _code_object("gfx90a:sramecc+:xnack-")
    assert read_code_object(co).e_flags == 0xE3F
    with pytest.raises(CodeObjectError, match="xnack to on, the target ID .* to off"):
        read_code_object(_with_e_flags(co, 0xF3F))  # XNACK field on
    with pytest.raises(CodeObjectError, match="sramecc to any"):
        read_code_object(_with_e_flags(co, 0x73F))  # SRAMECC field any
    assert check_flags(parse_target_id("amdgcn-amd-amdhsa--gfx90a"), 0x53F) is None  # both "any"


def test_other_processor_is_still_refused_by_the_device():
    co = _code_object("amdgpu11.01-amd-amdhsa-unknown-gfx1101")
    assert read_code_object(co).processor == "gfx1101"
    with pytest.raises(CodeObjectError, match=r"built for gfx1101 \(amdgpu11.01-amd-amdhsa-unknown-gfx1101\)"):
        _device().load(co)


# ------------------------------------------------------------------------------------------------ fuzz

_EXAMPLES = int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "200"))
_ENV = st.text("abcdefghijklmnopqrstuvwxyz0123456789_", max_size=8)
_ARCH = st.sampled_from(["amdgcn", "amdgpu", "amdgpu11", "amdgpu11.00", "amdgpu9.0a"])


@st.composite
def _target_ids(draw) -> tuple[str, str, str, dict]:
    processor = draw(st.sampled_from(sorted(TARGETS)))
    _, xnack, sramecc = TARGETS[processor]
    features = {}
    for name, has in (("sramecc", sramecc), ("xnack", xnack)):
        if has and draw(st.booleans()):
            features[name] = draw(st.booleans())
    return draw(_ARCH), draw(_ENV), processor, features


@settings(max_examples=_EXAMPLES, deadline=None)
@given(_target_ids())
def test_fuzz_well_formed_target_ids_parse_to_their_parts(parts):
    arch, env, processor, features = parts
    text = f"{arch}-amd-amdhsa-{env}-{processor}" + "".join(f":{k}{'+' if v else '-'}" for k, v in features.items())
    tid = parse_target_id(text)
    assert (tid.arch, tid.environment, tid.processor, tid.features) == (arch, env, processor, features)
    assert str(tid) == text
    assert check_flags(tid, e_flags_for(text)) is None  # what e_flags_for writes, check_flags accepts


@settings(max_examples=_EXAMPLES, deadline=None)
@given(st.text(max_size=60) | st.builds(lambda a, b: a + b, st.sampled_from(["amdgcn-amd-amdhsa-", "amdgpu"]),
                                         st.text("-:+gfx0123456789abcdeunkow.", max_size=30)))
def test_fuzz_any_text_parses_or_is_a_target_id_error(text):
    try:
        tid = parse_target_id(text)
    except TargetIDError as e:
        assert repr(text) in str(e)
    else:
        assert parse_target_id(str(tid)) == tid
