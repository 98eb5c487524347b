"""runtime.Device(sanitize=...): fatal findings as SanitizerError, the others as SanitizerWarning and
Device.findings; a real GPU refuses; traces record the sanitizer calls and replay them."""

from __future__ import annotations

import io

import numpy as np
import pytest

import runtime
from compiler.llvm import compile_ir
from mockgpu import MockOS
from runtime.os import HostOS
from traces.record import RecordingOS
from traces.replay import replay

SHIFT = compile_ir("""target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @shift(ptr addrspace(1) %out, ptr addrspace(1) %in) {
  %i = call i32 @llvm.amdgcn.workitem.id.x()
  %j = add i32 %i, 1
  %p = getelementptr float, ptr addrspace(1) %in, i32 %j
  %x = load float, ptr addrspace(1) %p
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %x, ptr addrspace(1) %po
  ret void
}""")


def _workload(os_):
    with runtime.Device("AMD:0", os=os_, sanitize="memcheck,initcheck") as dev:
        assert dev.sanitizers == {"memcheck", "initcheck"}
        k = dev.load(SHIFT)["shift"]
        src = dev.alloc(256).copyin(np.arange(64, dtype=np.float32))  # 64 floats: exactly 256 bytes
        out = dev.alloc(256)
        with pytest.raises(runtime.SanitizerError) as e:
            k(out, src, grid=1, block=64)  # item 63 reads element 64: 0 bytes past the end, inside the page
        assert e.value.kind == "memcheck" and isinstance(e.value, runtime.GPUFault)
        first, second = e.value.report.splitlines()[:2]  # the finding first, then the reset it caused
        assert first.startswith(f"AMD:0 (gpu_id {dev.gpu_id}): GPU fault (memcheck): out-of-bounds read: 4-byte read")
        assert "GPU hang" not in first and second == "hardware exception: GPU hang, per-engine reset"
        assert "0 bytes past the end of the 256-byte buffer" in e.value.report and "kernel shift" in e.value.report
        assert "lane 31" in e.value.report
        with pytest.warns(runtime.SanitizerWarning, match="uninitialized global read"):
            k(out, dev.alloc(256), grid=1, block=32)  # usable after the fault; reads a buffer nobody wrote
        assert [f["what"] for f in dev.findings] == ["out-of-bounds read", "uninitialized global read"]
        assert dev.findings[1]["kernel"] == "shift" and dev.findings[1]["lane"] == 0
        k(out, src, grid=1, block=63)  # in bounds and written: nothing more
        assert len(dev.findings) == 2


def test_device_sanitize_reports_and_traces_replay_them(tmp_path):
    path = tmp_path / "s.trace"
    with open(path, "wb") as f:
        rec = RecordingOS(MockOS(devices=1, vram_size=1 << 30, sanitize=""), f)
        _workload(rec)
        rec.finish()
    divergence, n = replay(path, out=io.StringIO())
    assert divergence is None and n > 0


def test_real_gpu_refuses_sanitizers():
    with pytest.raises(OSError, match="simulated GPU"):
        HostOS().sanitize(1, "memcheck")
    assert HostOS().sanitize(1) == {"checks": [], "findings": []}


def test_mockos_rejects_unknown_checks():
    with pytest.raises(ValueError, match="unknown sanitizer check"):
        MockOS(devices=1, vram_size=1 << 30, sanitize="nonsense")
