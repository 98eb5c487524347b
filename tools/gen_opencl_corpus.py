#!/usr/bin/env python3
"""Compile the OpenCL C test corpus (tests/data/opencl/corpus.cl) into the code objects the tests load.

Run from the repository root:  .venv/bin/python -m tools.gen_opencl_corpus [--arch gfx1100|gfx1201|gfx942|all]
Needs Debian's clang-19 and lld-19 (/usr/lib/llvm-19/bin). Builtins only (-nogpulib: no device
libraries), -O2, then `ld.lld -shared` as a runtime would load it. One code object per architecture:
corpus.so (gfx1100) and corpus_<arch>.so for the others (gfx1201, gfx942); gfx942 also gets mfma_gfx942.so from
mfma.cl (MFMA builtins, tests/simgpu/shader/test_mfma_gfx942.py) and smfmac_gfx942.so from smfmac.cl (SMFMAC
builtins, tests/simgpu/shader/test_smfmac.py), gfx1100 fdiv_gfx1100.so from fdiv.cl (division
as clang expands it, tests/simgpu/shader/test_jit_div.py) and ldexp_gfx1100.so from ldexp.cl (test_jit_ldexp.py),
gfx1201 wmma_gfx1201.so and wmma_w64_gfx1201.so from wmma.cl (WMMA and SWMMAC builtins, wave32 and wave64,
tests/simgpu/shader/test_wmma_gfx12.py), load_tr_gfx1201.so / load_tr_w64_gfx1201.so from load_tr.cl (transposing
loads, test_load_tr_gfx12.py) and buffer_gfx1201.so from buffer.ll (LLVM IR: the s_buffer_load and buffer-format
intrinsics OpenCL has no builtin for, test_buffer_gfx12.py);
gfx942 and gfx1201 fp8_<arch>.so from fp8.cl (the fp8/bf8 conversion builtins, tests/simgpu/shader/test_cvt8.py).
The outputs are committed, so the tests need no compiler; tests/simgpu/shader/test_corpus_opencl.py and
test_corpus_opencl_gfx1201.py check they are what this script builds when clang-19 is present.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

LLVM = Path("/usr/lib/llvm-19/bin")
DIR = Path(__file__).resolve().parent.parent / "tests" / "data" / "opencl"
ARCHES = ("gfx1100", "gfx1201", "gfx942")
# sources built for one architecture only: DIR / f"{name}.cl" -> f"{name}_{arch}.so"
EXTRA = {"gfx942": ("mfma", "smfmac", "fp8"), "gfx1100": ("fdiv", "ldexp"),
         "gfx1201": ("wmma", "wmma_w64", "load_tr", "load_tr_w64", "buffer", "fp8")}
# a build of another build's source: name -> the source's stem
SOURCE = {"wmma_w64": "wmma", "load_tr_w64": "load_tr"}
# flags of one source: fdiv.cl's f32 quotient correctly rounded (OpenCL's default allows 2.5 ULP, and clang then
# emits v_rcp_f32 alone rather than the v_div_scale / v_div_fmas / v_div_fixup expansion)
SOURCE_FLAGS = {"fdiv": ("-cl-fp32-correctly-rounded-divide-sqrt",), "wmma_w64": ("-mwavefrontsize64",),
                "load_tr_w64": ("-mwavefrontsize64",)}


def clang_flags(arch: str = "gfx1100") -> list[str]:
    return ["-x", "cl", "-target", "amdgcn-amd-amdhsa", f"-mcpu={arch}", "-nogpulib", "-O2", "-c"]


CLANG_FLAGS = clang_flags()


def output(arch: str = "gfx1100", name: str = "corpus") -> Path:
    """Where the code object of source `name` for `arch` is committed."""
    return DIR / ("corpus.so" if (arch, name) == ("gfx1100", "corpus") else f"{name}_{arch}.so")


def source(name: str) -> Path:
    """The source build `name` compiles: OpenCL C (.cl), or LLVM IR (.ll) where there is no .cl."""
    cl = DIR / f"{SOURCE.get(name, name)}.cl"
    return cl if cl.exists() else cl.with_suffix(".ll")


def build(source: Path = DIR / "corpus.cl", arch: str = "gfx1100", name: str | None = None) -> bytes:
    """The linked code object (ET_DYN) of `source` for `arch`, with build `name`'s flags (default: the source's)."""
    with tempfile.TemporaryDirectory() as tmp:
        obj, so = Path(tmp) / "corpus.o", Path(tmp) / "corpus.so"
        flags = (*clang_flags(arch), *SOURCE_FLAGS.get(name or source.stem, ()))
        if source.suffix == ".ll":  # LLVM IR: its own triple is overridden by clang's -target
            flags = ("-x", "ir", "-Wno-override-module", *flags[2:])
        subprocess.run([LLVM / "clang", *flags, source, "-o", obj], check=True)
        subprocess.run([LLVM / "ld.lld", "-shared", obj, "-o", so], check=True)
        return so.read_bytes()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", choices=(*ARCHES, "all"), default="all")
    args = ap.parse_args(argv)
    if not (LLVM / "clang").exists():
        print("needs clang-19 and lld-19 (apt-get install -y clang-19 lld-19)", file=sys.stderr)
        return 1
    for arch in ARCHES if args.arch == "all" else (args.arch,):
        for name in ("corpus", *EXTRA.get(arch, ())):
            output(arch, name).write_bytes(build(source(name), arch=arch, name=name))
            print(f"wrote {output(arch, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
