"""The committed Triton corpus (tests/data/triton/, Triton 3.9.0 code objects for gfx1100) run through the runtime
on MOCKGPU, over PM4 and over AQL, each checked against numpy's reference. Needs no Triton.

Regenerate (where Triton is installed, in a venv of its own):

    PYTHONPATH=$PWD /tmp/trivenv/bin/python -m tools.gen_triton_corpus

tools/triton_corpus.py describes a spec; the inputs are made from their recipes here and checked against the
digests the generator recorded.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import runtime
from mockgpu import MockOS
from tools.triton_corpus import DATA, decode, digest, load_specs, make_input, storage_dtype

SPECS = {s["name"]: s for s in load_specs()}
SCALARS = {"int32": np.int32, "int64": np.int64, "float32": np.float32}


@cache
def _device(queue: str) -> runtime.Device:
    return runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 30))


@cache
def _code_object(name: str) -> bytes:
    return (DATA / SPECS[name]["hsaco"]).read_bytes()


def run(dev: runtime.Device, spec: dict) -> dict[str, np.ndarray]:
    """Launch a case as Triton's HIP launcher would (one workgroup per program, metadata.shared bytes of dynamic
    LDS, the trailing scratch pointers when the kernel wants scratch) and read its outputs back."""
    kernel = dev.load(_code_object(spec["name"]))[spec["kernel"]]
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


def test_corpus_is_big_enough_and_whole():
    assert len(SPECS) >= 40
    for name, spec in SPECS.items():
        assert (DATA / spec["hsaco"]).is_file(), name
        assert set(spec["reference"]) == set(spec["outputs"]), name
        for arg in spec["args"]:
            if "buffer" in arg and arg["name"] in spec["outputs"]:
                assert spec["reference"][arg["name"]].shape == tuple(arg["shape"]), (name, arg["name"])
                if not spec["outputs"][arg["name"]]["view"]:
                    assert spec["reference"][arg["name"]].dtype == storage_dtype(arg["dtype"]), (name, arg["name"])


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_triton_kernel(name, queue):
    spec = SPECS[name]
    check(spec, run(_device(queue), spec))


def test_spilling_kernels_have_scratch():
    """What the spill case is for: the descriptor asks for a private segment and the metadata counts spills."""
    spilled = [s for s in SPECS.values() if s["metadata"]["spills"]]
    assert spilled
    for spec in spilled:
        kernel = _device("pm4").load(_code_object(spec["name"]))[spec["kernel"]]
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
