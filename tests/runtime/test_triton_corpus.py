"""The committed Triton corpus (Triton 3.9.0 code objects: tests/data/triton/ for gfx1100, tests/data/triton/<arch>/
for gfx1201, gfx942 and gfx950, the same kernels and inputs compiled for each target) run through the runtime on
MOCKGPU of that architecture, over PM4 and over AQL, each checked against numpy's reference. Needs no Triton.

Regenerate (where Triton is installed, in a venv of its own):

    PYTHONPATH=$PWD /tmp/trivenv/bin/python -m tools.gen_triton_corpus [--arch gfx1100|gfx1201|gfx942|gfx950]

tools/triton_corpus.py describes a spec; the inputs are made from their recipes here and checked against the
digests the generator recorded.
"""

from __future__ import annotations

import os
from functools import cache

import numpy as np
import pytest

import runtime
from mockgpu import MockOS
from simgpu.isa.codeobject import read_code_object
from simgpu.isa.objdump import disassemble_text
from tests.support import tiers
from tools.triton_corpus import data_dir, decode, digest, load_specs, make_input, storage_dtype

ARCHES = ("gfx1100", "gfx1201", "gfx942", "gfx950")
SPECS_OF = {arch: {s["name"]: s for s in load_specs(arch)} for arch in ARCHES}
SPECS = SPECS_OF["gfx1100"]
# Cases an architecture cannot pass yet, with why (strict: the day one passes, its entry must go).
KNOWN_FAILURES: dict[tuple[str, str], str] = {}
# Triton's f32 dot on gfx942 defaults to tf32, which it lowers to v_mfma_f32_*_xf32: the matrix core multiplies the
# inputs truncated to xf32 (10 mantissa bits; simgpu.shader.matrix.gfx9), so these cases are checked against numpy's
# product of the inputs truncated so (`_xf32_reference`), not the IEEE-f32 reference the other targets share.
XF32_DOTS = {("gfx942", "matmul_f32_32_t16_w1"), ("gfx942", "matmul_f32_40x36x50_t32_w4")}


def _cases() -> list:
    """(arch, case) of every committed code object, the known failures marked xfail(strict)."""
    out = []
    for arch in ARCHES:
        for name in sorted(SPECS_OF[arch]):
            why = KNOWN_FAILURES.get((arch, name))
            marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
            out.append(pytest.param(arch, name, marks=marks, id=f"{arch}-{name}"))
    return out


SCALARS = {"int32": np.int32, "int64": np.int64, "float32": np.float32}


@cache
def _device(queue: str, arch: str = "gfx1100") -> runtime.Device:
    """One device per queue kind and architecture for the whole session (opening one costs more than most cases)."""
    return runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 30, arch=arch), arch=arch)


@cache
def _code_object(name: str, arch: str = "gfx1100") -> bytes:
    return (data_dir(arch) / SPECS_OF[arch][name]["hsaco"]).read_bytes()


def run(dev: runtime.Device, spec: dict, arch: str = "gfx1100", before_free=None) -> dict[str, np.ndarray]:
    """Launch a case as Triton's HIP launcher would (one workgroup per program, metadata.shared bytes of dynamic
    LDS, the trailing scratch pointers when the kernel wants scratch) and read its outputs back (`before_free()`
    called before its buffers are freed)."""
    kernel = dev.load(_code_object(spec["name"], arch))[spec["kernel"]]
    values, buffers = [], {}
    for arg in spec["args"]:
        if "scalar" in arg:
            values.append(SCALARS[arg["dtype"]](arg["scalar"]))
        elif "scratch" in arg:
            values.append(dev.alloc(arg["scratch"]) if arg["scratch"] else None)
        else:
            data = make_input(arg)
            assert digest(data) == arg["sha256"], f"{arg['name']}: numpy's generator no longer gives the inputs " \
                "the reference was computed from; regenerate the corpus"
            buffers[arg["name"]] = (dev.alloc(max(data.nbytes, 4)).copyin(data), data)
            values.append(buffers[arg["name"]][0])
    kernel(*values, grid=tuple(spec["grid"]), block=tuple(spec["block"]), shared=spec["shared"])
    got = {name: buf.copyout(np.empty_like(data)) for name, (buf, data) in buffers.items() if name in spec["outputs"]}
    if before_free is not None:
        before_free()
    for v in values:
        if isinstance(v, runtime.Buffer):
            v.free()
    return got


def check(spec: dict, got: dict[str, np.ndarray]) -> None:
    for name, how in spec["outputs"].items():
        want = spec["reference"][name]
        value = decode(got[name], how["view"]) if how["view"] else got[name]
        if how["rtol"] or how["atol"]:
            np.testing.assert_allclose(value, want, rtol=how["rtol"], atol=how["atol"], err_msg=name)
        else:
            np.testing.assert_array_equal(value, want, err_msg=name)


@pytest.mark.parametrize("arch", ARCHES)
def test_corpus_is_big_enough_and_whole(arch):
    specs = SPECS_OF[arch]
    assert len(specs) >= 40
    for name, spec in specs.items():
        assert (data_dir(arch) / spec["hsaco"]).is_file(), name
        assert set(spec["reference"]) == set(spec["outputs"]), name
        for arg in spec["args"]:
            if "buffer" in arg and arg["name"] in spec["outputs"]:
                assert spec["reference"][arg["name"]].shape == tuple(arg["shape"]), (name, arg["name"])
                if not spec["outputs"][arg["name"]]["view"]:
                    assert spec["reference"][arg["name"]].dtype == storage_dtype(arg["dtype"]), (name, arg["name"])


# cases built for some architectures only (tools/gen_triton_corpus.py's `archs`): the wave64 targets' spill case and
# gfx950's microscaled dots (tl.dot_scaled, which gfx950's scaled MFMAs run)
ARCH_ONLY = {"spill_64x256_wave64", "dot_scaled_e4m3_e2m1", "dot_scaled_e2m1_e5m2", "dot_scaled_e5m2_e4m3",
             "dot_scaled_e2m1_mn_32", "dot_scaled_e2m1_mn_16"}


def test_every_architecture_has_the_same_cases_inputs_and_references():
    """The corpus of each architecture is the same kernels on the same inputs against the same numpy references (the
    cases built for some architectures only aside)."""
    for arch in ARCHES[1:]:
        common = set(SPECS) & set(SPECS_OF[arch])
        assert set(SPECS) - common == set() and set(SPECS_OF[arch]) - common <= ARCH_ONLY, arch
        for name in common:
            a, b = SPECS[name], SPECS_OF[arch][name]
            assert [x.get("sha256") for x in a["args"]] == [x.get("sha256") for x in b["args"]], (arch, name)
            assert a["outputs"] == b["outputs"], (arch, name)
            for out, want in a["reference"].items():
                np.testing.assert_array_equal(b["reference"][out], want, err_msg=f"{arch} {name} {out}")


@pytest.mark.parametrize("arch", ARCHES)
def test_code_objects_are_the_architectures(arch):
    """Every code object of an architecture's corpus is that processor's code, built for its wave size."""
    for name, spec in SPECS_OF[arch].items():
        co = read_code_object(_code_object(name, arch))
        assert co.processor == arch, name
        assert spec["block"][0] == spec["num_warps"] * co.kernels[spec["kernel"]].descriptor.wavefront_size, name


def _xf32_reference(spec: dict) -> dict:
    """`spec` with its matmul reference recomputed from the inputs truncated to xf32 (the 13 low mantissa bits of each
    f32 cleared), multiplied and summed in f64, rounded once to f32."""
    inputs = {arg["name"]: make_input(arg) for arg in spec["args"] if "buffer" in arg}
    a, b = (np.where(np.isnan(x), x, (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)).astype(np.float64)
            for x in (inputs["a_ptr"], inputs["b_ptr"]))
    return spec | {"reference": spec["reference"] | {"c_ptr": (a @ b).astype(np.float32)}}


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize(("arch", "name"), _cases())
def test_triton_kernel(arch, name, queue):
    spec = SPECS_OF[arch][name]
    if (arch, name) in XF32_DOTS:
        spec = _xf32_reference(spec)
    check(spec, run(_device(queue, arch), spec, arch))


def _on_tier(arch: str, spec: dict, tier: str):
    """A case on a fresh simulated GPU of `arch` whose engine runs `tier` (tests/support/tiers.py), over AQL: its
    outputs, the GPU and the driver's buffers after the launch."""
    mock = MockOS(devices=1, vram_size=1 << 30, arch=arch)
    gpu = tiers.on_tier(mock.gpus[0].engine, tier) and mock.gpus[0]
    kept = {}
    with runtime.Device("AMD:0", queue="aql", os=mock, arch=arch) as dev:
        got = run(dev, spec, arch, before_free=lambda: kept.update(tiers.driver_buffers(mock)))
    return got, gpu, kept


# Every gfx942 and gfx950 case in both tiers costs about 270 CPU-s with a cold JIT cache (CI's) beside the matmuls, and
# Triton's matmuls take one to three minutes each at load 8 on 2 CPUs, nearly all of it LLVM's code generation of the
# MFMA loop at the eager compile (docs/shader.md, "The JIT on gfx942"). The suite runs a fixed sample, every
# CDNA_SAMPLE-th case of each architecture's sorted names but the matmuls (27 cases, about 50 CPU-s cold);
# SIMGPU_TRITON_BOTH_TIERS=all runs every case (all 163 passed when the JIT tier learned gfx9).
CDNA_SAMPLE = 6
ALL_CASES = os.environ.get("SIMGPU_TRITON_BOTH_TIERS") == "all"
_CDNA_CASES = [pytest.param(arch, name, id=f"{arch}-{name}") for arch in ("gfx942", "gfx950")
               for i, name in enumerate(sorted(SPECS_OF[arch]))
               if ALL_CASES or (i % CDNA_SAMPLE == 0 and not name.startswith("matmul"))]


@pytest.mark.parametrize(("arch", "name"), _CDNA_CASES)
def test_cdna_kernel_in_both_tiers(arch, name):
    """gfx942's and gfx950's code objects in the interpreter and in the JIT tier (compiling at the first dispatch,
    keeping registers, and as users run it): the GPUs end with the same memory, registers, counters and clock, and
    the outputs match numpy's."""
    spec = SPECS_OF[arch][name]
    if (arch, name) in XF32_DOTS:
        spec = _xf32_reference(spec)
    got, reference, buffers = _on_tier(arch, spec, "interpreter")
    check(spec, got)
    with tiers.fuzz_codegen():  # (each kernel compiled once and run twice: tiers.FUZZ_CODEGEN says why)
        for tier in ("jit-lean", "jit"):
            _, gpu, jit_buffers = _on_tier(arch, spec, tier)
            tiers.assert_same_gpu(reference, gpu, buffers, jit_buffers)


def test_xf32_reference_is_for_exactly_the_xf32_dots():
    """The cases checked against the xf32 reference are exactly the code objects that run xf32 MFMAs (gfx942's: the
    other targets have no xf32 instruction)."""
    runs_xf32 = {(arch, name) for arch in ("gfx942",) for name in SPECS_OF[arch]
                 if any("_xf32 " in line for line in disassemble_text(read_code_object(_code_object(name, arch))))}
    assert runs_xf32 == XF32_DOTS


@pytest.mark.parametrize("arch", ARCHES)
def test_spilling_kernels_have_scratch(arch):
    """What the spill cases are for: the descriptor asks for a private segment and the metadata counts spills (each
    architecture has one: gfx942's needs twice the rows)."""
    spilled = [s for s in SPECS_OF[arch].values() if s["metadata"]["spills"]]
    assert spilled
    for spec in spilled:
        kernel = _device("pm4", arch).load(_code_object(spec["name"], arch))[spec["kernel"]]
        assert kernel.descriptor.private_segment_fixed_size == spec["metadata"]["private_segment_fixed_size"] > 0
        assert kernel.metadata[".private_segment_fixed_size"] > 0
        assert kernel.metadata[".vgpr_spill_count"] == spec["metadata"]["vgpr_spill_count"] > 0


def test_triton_target_id_loads():
    """Triton 3.9 writes amdhsa.target as amdgpu11.00-amd-amdhsa-unknown-gfx1100 (an environment, no "--"): the
    runtime used to refuse every Triton code object for it."""
    co = _code_object("vadd_f32")
    assert b"amdgpu11.00-amd-amdhsa-unknown-gfx1100" in co
    module = _device("aql").load(co)
    assert module.kernels == ["add_kernel"]
    assert module.metadata["amdhsa.target"] == "amdgpu11.00-amd-amdhsa-unknown-gfx1100"


@pytest.mark.parametrize("name", ["matmul_f32_32_t16_w1", "matmul_f32_40x36x50_t32_w4"])
def test_lds_dma_under_the_sanitizers(name):
    """Triton's gfx950 f32 matmuls stage their operands in LDS with global_load_lds_dword: under every sanitizer they
    match numpy and draw no finding (initcheck sees the DMA's LDS writes: sanitize.footprint)."""
    mock = MockOS(devices=1, vram_size=1 << 30, arch="gfx950", sanitize="all")
    with runtime.Device("AMD:0", queue="pm4", os=mock, arch="gfx950") as dev:
        spec = SPECS_OF["gfx950"][name]
        assert "global_load_lds_dword" in "\n".join(disassemble_text(read_code_object(_code_object(name, "gfx950"))))
        check(spec, run(dev, spec, "gfx950"))
    assert not list(mock.gpus[0].engine.sanitizer.findings)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_atomic_cas_stays_in_its_buffer_under_memcheck(arch):
    """tl.atomic_cas takes no mask: every lane of the grid swaps its slot, so the case's buffers are whole blocks.
    With 300 slots (not 384) lanes 300-383 swapped past the buffer, and memcheck said so; now it finds nothing."""
    mock = MockOS(devices=1, vram_size=1 << 30, arch=arch, sanitize="memcheck")
    with runtime.Device("AMD:0", queue="pm4", os=mock, arch=arch) as dev:
        spec = SPECS_OF[arch]["atomic_cas_i32"]
        check(spec, run(dev, spec, arch))
    assert not list(mock.gpus[0].engine.sanitizer.findings)
