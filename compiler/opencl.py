"""OpenCL C to gfx1100 code objects with Debian's clang-19 and ld.lld-19, without the ROCm device libraries.

`-nogpulib` leaves the work-item functions (get_global_id and friends) undefined: compile_opencl() puts
compiler/include on the include path, where simgpu_opencl.h defines them with AMDGPU builtins, so a kernel
starts with `#include "simgpu_opencl.h"`. The object is linked as a runtime would load it (ET_DYN).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

INCLUDE = Path(__file__).resolve().parent / "include"
FLAGS = ["-x", "cl", "-target", "amdgcn-amd-amdhsa", "-nogpulib", "-cl-std=CL2.0"]


class OpenCLError(Exception):
    """clang-19 or ld.lld-19 is missing, or rejected the source (the message carries their diagnostics)."""


def tool(name: str) -> str:
    """Path of an LLVM 19 tool (clang-19, ld.lld-19), or OpenCLError naming the Debian package."""
    for candidate in (f"{name}-19", f"/usr/lib/llvm-19/bin/{name}"):
        path = shutil.which(candidate)
        if path:
            return path
    package = "lld-19" if name == "ld.lld" else "clang-19"
    raise OpenCLError(f"{name}-19 not found: install Debian's {package} (apt-get install -y {package})")


def compile_opencl(source: str, mcpu: str = "gfx1100", opt: str = "-O2", defines: dict | None = None) -> bytes:
    """The linked code object (ET_DYN) of OpenCL C `source` for `mcpu`."""
    clang, lld = tool("clang"), tool("ld.lld")
    macros = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    with tempfile.TemporaryDirectory() as tmp:
        src, obj, so = Path(tmp) / "kernel.cl", Path(tmp) / "kernel.o", Path(tmp) / "kernel.so"
        src.write_text(source)
        for cmd in ([clang, *FLAGS, f"-mcpu={mcpu}", opt, f"-I{INCLUDE}", *macros, "-c", str(src), "-o", str(obj)],
                    [lld, "-shared", str(obj), "-o", str(so)]):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode:
                raise OpenCLError(f"{Path(cmd[0]).name} failed:\n{done.stderr.strip()}")
        return so.read_bytes()
