#!/usr/bin/env python3
"""Compile the OpenCL C test corpus (tests/data/opencl/corpus.cl) into the code object the tests load.

Run from the repository root:  .venv/bin/python -m tools.gen_opencl_corpus
Needs Debian's clang-19 and lld-19 (/usr/lib/llvm-19/bin). Builtins only (-nogpulib: no device
libraries), -O2, then `ld.lld -shared` as a runtime would load it. The output is committed, so the
tests need no compiler; tests/simgpu/shader/test_corpus_opencl.py checks it is what this script builds when clang-19
is present.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

LLVM = Path("/usr/lib/llvm-19/bin")
DIR = Path(__file__).resolve().parent.parent / "tests" / "data" / "opencl"
CLANG_FLAGS = ["-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-nogpulib", "-O2", "-c"]


def build(source: Path = DIR / "corpus.cl") -> bytes:
    """The linked code object (ET_DYN) of `source`."""
    with tempfile.TemporaryDirectory() as tmp:
        obj, so = Path(tmp) / "corpus.o", Path(tmp) / "corpus.so"
        subprocess.run([LLVM / "clang", *CLANG_FLAGS, source, "-o", obj], check=True)
        subprocess.run([LLVM / "ld.lld", "-shared", obj, "-o", so], check=True)
        return so.read_bytes()


def main() -> int:
    if not (LLVM / "clang").exists():
        print("needs clang-19 and lld-19 (apt-get install -y clang-19 lld-19)", file=sys.stderr)
        return 1
    (DIR / "corpus.so").write_bytes(build())
    print(f"wrote {DIR / 'corpus.so'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
