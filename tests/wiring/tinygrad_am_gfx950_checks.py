"""Run by tests/wiring/test_run_tinygrad_am_gfx950.py under `simgpu run --am --arch gfx950` with DEV=PCI+AMD: tinygrad
from PyPI, unmodified, boots the emulated MI350X with its AM backend (PCIIface: AMDev's GC 9.5.0 bring-up) and runs
code objects it did not compile -- tinygrad cannot compile for gfx950 here (its AMD:LLVM renderer needs a libLLVM
that knows gfx950; Debian's is 19) -- through its own HCQ runtime: each is loaded with its program class
(`dev.runtime`, ops_amd.AMDProgram, from the ELF bytes) and dispatched on its AQL compute queue, its buffers
allocated and copied by its allocator. The kernels: the committed Triton gfx950 code objects (tests/data/triton/
gfx950: an add, a row reduction, a matmul, an MFMA dot, a kernel that spills to scratch) and LLVM IR compiled by
llvmlite (LLVM 22): a saxpy, a kernel with 152 KiB of LDS, and the store 1 TiB past its buffer that faults. Results
are checked against numpy by the test. Prints one JSON object per check (not a test module itself); the fault comes
last, since it leaves the device in tinygrad's error state."""

import json
import os
import struct
import sys
from pathlib import Path

import numpy as np
from tinygrad import Device
from tinygrad.device import TinyELF
from tinygrad.dtype import dtypes
from tinygrad.helpers import DEV
from tinygrad.runtime.support.elf import elf_loader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's compiler (llvmlite) and tools (the Triton corpus recipes)
from compiler.llvm import compile_ir  # noqa: E402
from tools import triton_corpus  # noqa: E402

TRITON = ROOT / "tests" / "data" / "triton" / "gfx950"
OOB_IR = """
define amdgpu_kernel void @oob(ptr addrspace(1) %p) {
  %q = getelementptr i8, ptr addrspace(1) %p, i64 1099511627776
  store i32 1, ptr addrspace(1) %q
  ret void
}
"""
# 152 KiB of static LDS, more than a gfx942 workgroup has: each lane writes its slot, then reads the mirror lane's.
# tinygrad admits it only because the discovery table's gc_info says 160 KiB (its lds_size_in_kb over AM).
BIG_LDS_IR = """
@tile = internal addrspace(3) global [38912 x float] poison
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
define amdgpu_kernel void @mirror(ptr addrspace(1) %y) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %far = mul i32 %t, 152
  %p = getelementptr float, ptr addrspace(3) @tile, i32 %far
  %v = uitofp i32 %t to float
  store float %v, ptr addrspace(3) %p
  call void @llvm.amdgcn.s.barrier()
  %o = sub i32 255, %t
  %faro = mul i32 %o, 152
  %q = getelementptr float, ptr addrspace(3) @tile, i32 %faro
  %w = load float, ptr addrspace(3) %q
  %py = getelementptr float, ptr addrspace(1) %y, i32 %t
  store float %w, ptr addrspace(1) %py
  ret void
}
"""
SCALARS = {"int32": dtypes.int32, "float32": dtypes.float32}


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def with_group_segment(lib: bytes, size: int) -> bytes:
    """The code object with its kernel descriptor's group_segment_fixed_size (its first u32) raised to `size`.
    Triton's kernels take their LDS at launch (the spec's `shared`, HIP's dynamic shared memory); tinygrad's
    program class takes LDS only from the descriptor, which it expects at the start of .rodata."""
    rodata = next(s for s in elf_loader(lib)[1] if s.name == ".rodata")
    out = bytearray(lib)
    at = rodata.header.sh_offset
    current = struct.unpack_from("<I", out, at)[0]
    struct.pack_into("<I", out, at, max(current, size))
    return bytes(out)


def buffer(dev, data: np.ndarray):
    """A GPU buffer of tinygrad's allocator (its HCQBuffer) holding `data`, copied in by that allocator."""
    b = dev.allocator.alloc(data.nbytes)
    dev.allocator._copyin(b, memoryview(bytearray(data.tobytes())))
    return b


def read(dev, b, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    dev.allocator._copyout(memoryview(out).cast("B"), b)
    return out


def run_triton(dev, case: str) -> dict:
    """Launch a Triton case with its spec's grid, block, inputs and scalars; its outputs decoded, and its inputs."""
    spec = json.loads((TRITON / f"{case}.json").read_text())
    lib = with_group_segment((TRITON / spec["hsaco"]).read_bytes(), spec["shared"])
    arrays, bufs, vals, sig = {}, [], [], []
    for arg in spec["args"]:
        if "buffer" in arg:
            arrays[arg["name"]] = triton_corpus.make_input(arg)
            bufs.append(buffer(dev, arrays[arg["name"]]))
        else:  # a scalar, or one of Triton's trailing scratch pointers (0 bytes: a null pointer)
            dt = SCALARS[arg["dtype"]] if "scalar" in arg else dtypes.uint64
            value = arg.get("scalar", 0)  # (tinygrad's value arguments are integers: a float goes as its bits)
            vals.append(struct.unpack("<I", struct.pack("<f", value))[0] if dt == dtypes.float32 else value)
            dt = dtypes.uint32 if dt == dtypes.float32 else dt
            sig.append((arg["name"], len(sig), dt, ()))
    prg = dev.runtime(TinyELF(lib, spec["kernel"], DEV.target("AMD"), tuple(sig)))
    prg(*bufs, global_size=tuple(spec["grid"]), local_size=tuple(spec["block"]), vals=tuple(vals),
        wait=True)
    names = [a["name"] for a in spec["args"] if "buffer" in a]
    outs = {n: read(dev, b, arrays[n]) for n, b in zip(names, bufs, strict=True)}
    return {"inputs": arrays, "outputs": outs, "spec": spec}


def main() -> None:
    dev = Device["AMD"]
    report("device", arch=dev.arch, iface=type(dev.iface).__name__, ip=str(dev.iface.dev_impl.ip_ver),
           pci_dev=type(dev.iface.pci_dev).__name__, xccs=dev.iface.dev_impl.gfx.xccs,
           lds_kb=dev.iface.props["lds_size_in_kb"])

    r = run_triton(dev, "vadd_f32")
    x, y = r["inputs"]["x_ptr"], r["inputs"]["y_ptr"]
    report("add", max_error=float(np.abs(r["outputs"]["out_ptr"] - (x + y)).max()), n=int(x.size))

    r = run_triton(dev, "row_sum_max_argmax")
    x = r["inputs"]["x_ptr"]
    o = r["outputs"]
    report("reduction", sum_error=float(np.abs(o["sum_ptr"] - x.sum(axis=1)).max() / np.abs(x).sum(axis=1).max()),
           max_equal=bool(np.array_equal(o["max_ptr"], x.max(axis=1))),
           argmax_equal=bool(np.array_equal(o["argmax_ptr"], x.argmax(axis=1).astype(np.int32))))

    r = run_triton(dev, "matmul_f32_32_t16_w1")
    a, b = r["inputs"]["a_ptr"].astype(np.float64), r["inputs"]["b_ptr"].astype(np.float64)
    ref = a @ b
    report("matmul", rel_error=float(np.abs(r["outputs"]["c_ptr"] - ref).max() / np.abs(ref).max()))

    r = run_triton(dev, "dot_bfloat16_float32")  # CDNA4's v_mfma_f32_32x32x16_bf16
    a = triton_corpus.decode(r["inputs"]["a_ptr"], "bfloat16").astype(np.float64)
    b = triton_corpus.decode(r["inputs"]["b_ptr"], "bfloat16").astype(np.float64)
    ref = a @ b
    report("mfma_dot", rel_error=float(np.abs(r["outputs"]["c_ptr"] - ref).max() / np.abs(ref).max()),
           isa=r["spec"]["metadata"]["isa"])

    r = run_triton(dev, "spill_64x256_wave64")  # 720 bytes of scratch a lane: tinygrad's private segment set-up
    with np.load(TRITON / "spill_64x256_wave64.npz") as ref:  # numpy's output, from the corpus generator
        expected = ref["out_ptr"]
    report("scratch", private_segment=r["spec"]["metadata"]["private_segment_fixed_size"],
           max_error=float(np.abs(r["outputs"]["out_ptr"] - expected).max()),
           bound=float(1e-6 + 1e-5 * np.abs(expected).max()))

    saxpy = compile_ir((ROOT / "tests" / "data" / "kernels" / "saxpy.ll").read_text(), mcpu="gfx950")
    n = 1000
    xs, ys = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    bx, by = buffer(dev, xs), buffer(dev, ys)
    # tinygrad's value arguments are integers: the float `a` goes as its bits
    sig = (("a", 0, dtypes.uint32, ()), ("n", 1, dtypes.int32, ()))
    prg = dev.runtime(TinyELF(saxpy, "saxpy", DEV.target("AMD"), sig))
    a_bits = struct.unpack("<I", struct.pack("<f", 2.5))[0]
    prg(by, bx, global_size=(-(-n // 256), 1, 1), local_size=(256, 1, 1), vals=(a_bits, n), wait=True)
    report("saxpy", max_error=float(np.abs(read(dev, by, ys) - (2.5 * xs + 1)).max()))

    out = buffer(dev, np.zeros(256, np.float32))
    prg = dev.runtime(TinyELF(compile_ir(BIG_LDS_IR, mcpu="gfx950"), "mirror", DEV.target("AMD"), ()))
    prg(out, global_size=(1, 1, 1), local_size=(256, 1, 1), wait=True)
    report("big_lds", group_segment=prg.group_segment_size,
           mirrored=bool(np.array_equal(read(dev, out, np.zeros(256, np.float32)),
                                        np.arange(255, -1, -1, dtype=np.float32))))

    base = buffer(dev, np.zeros(4, np.float32))
    prg = dev.runtime(TinyELF(compile_ir(OOB_IR, mcpu="gfx950"), "oob", DEV.target("AMD"), ()))
    try:
        prg(base, global_size=(1, 1, 1), local_size=(1, 1, 1), wait=True)
        report("fault", error=None, base=base.va_addr)
    except RuntimeError as e:
        report("fault", error=str(e), base=base.va_addr)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # tinygrad's exit finalizers would each wait out the faulted device
