"""Every program in examples/ runs as the user guide (docs/guide.md) says, on the simulated GPU."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BIN = Path(sys.executable).parent  # the venv whose `simgpu` command the examples call


def _run(*cmd: str, cwd: Path = EXAMPLES) -> str:
    env = dict(os.environ, MOCKGPU="1", PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("SIMGPU_TRACE", None)
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_opencl_saxpy():
    if not (shutil.which("clang-19") and shutil.which("ld.lld-19")):
        pytest.skip("needs clang-19 and ld.lld-19 (Debian clang-19, lld-19)")
    out = _run(sys.executable, "opencl_saxpy.py")
    assert "kernels ['saxpy', 'group_sum']" in out and "result matches numpy" in out and "256 workgroup sums" in out


def test_llvm_ir_kernel():
    assert "square of 1024 ints" in _run(sys.executable, "llvm_ir_kernel.py")


def test_gpu_fault_example():
    out = _run(sys.executable, "gpu_fault.py")
    assert "GPUFault kind=page_fault address=0x4 device_usable=True" in out
    assert "[global_store_b32 v0, v1, s[0:1] offset:4]" in out and "after the fault: the next launch ran" in out


def test_pytest_example():
    out = _run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--mockgpu", "test_my_kernel.py")
    assert "2 passed, 1 skipped" in out


def test_trace_workflow(tmp_path):
    out = _run("sh", "trace_workflow.sh", str(tmp_path))
    assert "kernel=square" in out and "no divergence" in out and "identical record for record" in out
    assert (tmp_path / "a.json").stat().st_size > 0


def test_stats_of_an_example():
    out = _run(str(BIN / "simgpu"), "stats", "--top", "3", "--", sys.executable, "llvm_ir_kernel.py")
    assert "gpu0 (gpu_id" in out and "1 dispatches, 576 wave-instructions (288 VALU)" in out
    assert "(10 more opcodes)" in out


def test_train_mlp():
    """The compiler's frontend as docs/compiler.md's user section shows it: nn, Adam, TinyJit, safetensors."""
    out = _run(sys.executable, "train_mlp.py")
    assert ": fell" in out and "reloaded model gives the same logits" in out
