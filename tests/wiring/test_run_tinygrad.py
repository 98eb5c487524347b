"""tinygrad from PyPI, unmodified, drives the simulated GPUs through `simgpu run` with its AMD device: its KFD
interface (ioctls with its own structs, sysfs and IP discovery, MAP_FIXED mmaps through ctypes' libc that bypass
the interposer, plain stores to rings and doorbells) and its LLVM compiler on Debian's libLLVM 19 (DEV=AMD:LLVM,
LLVM_PATH). One run of tests/wiring/tinygrad_checks.py answers every test here.

tinygrad comes with the test extra (`pip install -e '.[test]'`, which `make setup` / `make test` run); without it,
or without libLLVM 19 or a C compiler, these tests are skipped with the reason."""

import ast
import pickle
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from tests.simgpu.profile import test_sqtt_gfx9
from tests.support.clients import json_checks, simgpu_run, tinygrad_cachedb, tinygrad_client


def _env() -> dict:
    """What tinygrad needs to run here, or skip saying what is missing."""
    _, lib = tinygrad_client()
    return {"DEV": "AMD:LLVM", "LLVM_PATH": str(lib), "CACHEDB": tinygrad_cachedb(), "PYTHONUNBUFFERED": "1"}


@cache
def _run(arch: str) -> dict:
    env = _env()
    r = simgpu_run([sys.executable, str(Path(__file__).with_name("tinygrad_checks.py"))], "--devices", "2",
                   "--arch", arch, env=env)
    return json_checks(r, "fault")


# Every check runs on the default gfx1100, on gfx1201 (RDNA4: tinygrad picks gfx12's registers, renderer target
# and code by the topology's gfx_target_version and the IP discovery versions; its kernels run as gfx12 code) and on
# gfx942 (CDNA3, MI300X: num_xcc 8 makes tinygrad dispatch over an AQL queue, with gfx9's PM4 forms in vendor-specific
# indirect buffers and SDMA 4.4's packets; its wave64 kernels run on the interpreter).
@pytest.fixture(scope="module", params=["gfx1100", "gfx1201", "gfx942"])
def checks(request):
    return {"arch": request.param} | _run(request.param)


def test_tinygrad_opens_the_kfd_device_with_its_llvm_compiler(checks):
    d = checks["device"]
    assert (d["name"], d["arch"], d["iface"], d["renderer"]) == ("AMD", checks["arch"], "KFDIface", "AMDLLVMRenderer")


def test_add(checks):
    assert checks["add"]["value"] == [2, 3, 4]


def test_matmul_64x64_matches_numpy(checks):
    assert checks["matmul"]["max_error"] < 1e-4


def test_reductions_match_numpy(checks):
    r = checks["reductions"]
    assert np.isclose(r["sum"], r["ref_sum"], rtol=1e-5) and r["max"] == r["ref_max"]
    assert np.allclose(r["rows"], r["ref_rows"], atol=1e-5) and np.allclose(r["mean"], r["ref_mean"], atol=1e-5)


def test_rand_is_uniform_and_repeatable(checks):
    r = checks["rand"]
    assert 0 <= r["min"] and r["max"] < 1 and abs(r["mean"] - 0.5) < 0.02 and r["repeatable"]


def test_tinyjit_replays_as_a_graph_without_stalling(checks):
    j = checks["jit"]
    # v = i everywhere: w = 2i + 1; sum over 16 rows, plus the sum over 16 rows of each row's max
    assert j["results"] == [[float(32 * (2 * i + 1))] * 8 for i in range(6)]
    assert j["captured"] and "HCQGraph" in j["graphs"]  # the replays ran as an HCQ graph
    # The graph's kick-off waits on a signal the CPU sets after submitting: without the server watching memory,
    # each replay used to wait out tinygrad's 200 ms spin before it slept in WAIT_EVENTS: every replay took 0.2 s or
    # more. The median, not the slowest, so that one replay slowed by a busy machine is not taken for the stall.
    replays = sorted(j["seconds"][2:])
    assert replays[len(replays) // 2] < 0.2, j["seconds"]


def test_two_gpus_with_a_copy_between_them(checks):
    t = checks["two_gpus"]
    assert t["device"] == "AMD:1" and t["value"] == [3.0 * i for i in range(64)]


def test_copies_both_ways_between_the_gpus_match_numpy(checks):
    c = checks["copies_both_ways"]
    assert c["devices"] == ["AMD:1", "AMD"] and c["to_1"] and c["to_0"]  # tinygrad names AMD:0 "AMD"
    assert np.isclose(c["sum_1"], c["ref_sum_1"], rtol=1e-4, atol=1e-2)  # the copy is usable where it landed


def test_out_of_bounds_access_is_reported_by_tinygrad_as_a_gpu_fault(checks):
    f = checks["fault"]
    assert f["error"] is not None and f["error"].startswith("MMU fault: ")
    assert int(f["error"].split()[2], 16) == (f["base"] + (1 << 40)) & ~0xFFF  # the page of the bad store
    assert "NotPresent=1" in f["error"]


def test_tinygrad_drives_a_gfx942_over_its_pm4_queue_too(tmp_path):
    """AMD_AQL=0: tinygrad programs gfx942's COMPUTE_* registers itself (gc_9_4_3's offsets: COMPUTE_PGM_RSRC3 at
    0x2E2D), one COMPUTE_DISPATCH_SCRATCH_BASE per XCC under PRED_EXEC, gfx9's ACQUIRE_MEM and RELEASE_MEM in the
    ring, and a JIT graph as a PM4 indirect buffer."""
    script = tmp_path / "pm4.py"
    script.write_text("""
import numpy as np
from tinygrad import Tensor, TinyJit
a = np.arange(256, dtype=np.float32).reshape(16, 16) / 64
print(float(np.abs((Tensor(a) @ Tensor(a)).numpy() - a @ a).max()) < 1e-4)
step = TinyJit(lambda v: (v * 2 + 1).contiguous().sum(axis=0).contiguous())
print([step(Tensor(np.full((16, 8), i, np.float32)).realize()).numpy().tolist()[0] for i in range(4)])
import os; os._exit(0)
""")
    r = simgpu_run([sys.executable, str(script)], "--arch", "gfx942", "--profile",
                   env=_env() | {"AMD_AQL": "0"})
    assert r.returncode == 0 and r.stdout.split("\n")[:2] == ["True", "[16.0, 48.0, 80.0, 112.0]"], r.stderr[-2000:]
    table = r.stdout[r.stdout.index("simgpu run --profile:"):]
    assert " pm4-q0" in table and " aql-q" not in table, table


def test_tinygrad_on_a_mixed_machine_computes_and_copies_between_architectures(tmp_path):
    """`--arch gfx1100,gfx942`: two KFD nodes of different families (PCIe peers, no hive): tinygrad compiles for each
    GPU's own target and copies both ways through the peer's BAR (p2p_links), checked by numpy."""
    script = tmp_path / "mixed.py"
    script.write_text("""
import numpy as np
from tinygrad import Device, Tensor
x = np.random.default_rng(3).standard_normal(1 << 16, dtype=np.float32)
b = (Tensor(x, device="AMD:0").realize().to("AMD:1") * 2).realize()
c = (b.to("AMD:0") + 1).realize()
print(Device["AMD:0"].arch, Device["AMD:1"].arch, np.array_equal(b.numpy(), x * 2),
      np.array_equal(c.numpy(), x * 2 + 1))
import os; os._exit(0)
""")
    r = simgpu_run([sys.executable, str(script)], "--devices", "2", "--arch", "gfx1100,gfx942", env=_env())
    assert r.returncode == 0 and r.stdout.split() == ["gfx1100", "gfx942", "True", "True"], r.stderr[-2000:]


def test_a_recorded_tinygrad_run_replays_without_divergence(tmp_path):
    from traces.replay import replay
    trace = tmp_path / "tinygrad.trace"
    script = "from tinygrad import Tensor\nprint((Tensor([1, 2, 3]) + 1).tolist())"
    r = simgpu_run([sys.executable, "-c", script], "--record", str(trace), env=_env())
    assert r.returncode == 0 and r.stdout.strip() == "[2, 3, 4]", r.stderr
    divergence, n = replay(trace)
    assert divergence is None and n > 50, divergence


def test_sanitize_prints_memchecks_finding_for_a_program_that_cannot_take_warnings(tmp_path):
    script = tmp_path / "oob.py"
    script.write_text(f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n" + """
from tinygrad import Device, Tensor
from tinygrad.device import TinyELF
from tinygrad.helpers import DEV
from tinygrad_checks import OOB_IR
dev = Device["AMD"]
buf = Tensor.zeros(4).contiguous().realize().uop.buffer._buf
prg = dev.runtime(TinyELF(dev.compiler.compile(OOB_IR), "oob", DEV.target("AMD"), ()))
try:
    prg(buf, global_size=(1, 1, 1), local_size=(1, 1, 1), wait=True)
except RuntimeError as e:
    print("fault:", e)
import os; os._exit(0)
""")
    r = simgpu_run([sys.executable, str(script)], "--sanitize", "memcheck", env=_env())
    assert r.returncode == 0 and "fault:" in r.stdout, r.stderr[-2000:]
    assert "simgpu sanitizer: memcheck error: out-of-bounds write" in r.stderr  # printed by the server
    # named by its symbol, from the code object in tinygrad's memory (GPU memory holds no ELF header of it)
    assert "\n  at kernel oob, workgroup (0, 0, 0)" in r.stderr, r.stderr[-2000:]


def test_run_stats_and_profile_name_tinygrads_kernel_by_its_symbol(tmp_path):
    """`simgpu run --stats --profile`: the counters of the client's GPU and a row per kernel, named as tinygrad's
    compiler named it (tinygrad copies only the PROGBITS sections of its relocatable object to the GPU)."""
    code = "from tinygrad import Tensor; print(Tensor([1, 2, 3]).add(1).tolist()); import os; os._exit(0)"
    r = simgpu_run([sys.executable, "-c", code], "--stats", "--profile", env=_env())
    assert r.returncode == 0 and r.stdout.startswith("[2, 3, 4]"), r.stderr[-2000:]
    stats = next(line for line in r.stdout.splitlines() if line.startswith("gpu0 (gpu_id "))
    assert " 1 dispatches, " in stats and "3.0 active lanes per VALU instruction" in stats, r.stdout
    table = r.stdout[r.stdout.index("simgpu run --profile:"):].splitlines()
    assert len(table) == 4 and table[3].split()[:2] == ["E_3", "pm4-q0"], r.stdout


def test_initcheck_counts_the_buffers_tinygrad_writes_from_the_cpu_as_written(tmp_path):
    """tinygrad maps its kernel-argument buffers through ctypes' libc (the server never sees those mmaps) and
    writes them with plain stores: initcheck must not report the kernels' scalar loads of their arguments
    (issue 26 item 10: 9 warnings, one per kernarg load)."""
    script = tmp_path / "args.py"
    script.write_text("""
import numpy as np
from tinygrad import Tensor
a = Tensor(np.arange(64, dtype=np.float32))
print((a * 2 + 1).sum().numpy(), (a.reshape(8, 8) @ a.reshape(8, 8)).numpy()[0, 0])
import os; os._exit(0)
""")
    r = simgpu_run([sys.executable, str(script)], "--sanitize", "initcheck", env=_env())
    assert r.returncode == 0 and r.stdout.split() == ["4096.0", "1120.0"], r.stderr[-2000:]
    assert "initcheck" not in r.stderr, r.stderr[-2000:]


def test_tinygrads_thread_trace_of_a_gfx942_decodes_to_its_kernels_instructions(tmp_path):
    """PROFILE=1 SQTT=1 on gfx942: tinygrad programs gfx9's SQ_THREAD_TRACE_* per SE of each XCC (under PRED_EXEC:
    XCC 0's run), reads each SE's WPTR and hands its own decoder the blob; SE 0's wave on CU 0 / SIMD 0 has a
    WAVE_START, an INST token per instruction it issued and a WAVE_END, and the tokens walk its kernel's code from the
    entry to s_endpgm (tests/simgpu/profile/test_sqtt_gfx9.py's `recover`, the code decoded by tinygrad for gfx942)."""
    script = tmp_path / "sqtt.py"
    script.write_text(f"""
import pickle
import numpy as np
from tinygrad import Tensor
from tinygrad.device import Compiled
print((Tensor(np.arange(256, dtype=np.float32)) * 2 + 1).numpy()[:3].tolist())
ev = Compiled.profile_events
prg = {{e.tag: e for e in ev if type(e).__name__ == "ProfileProgramEvent"}}
out = [(e.se, e.blob, prg[e.kern].lib, prg[e.kern].name) for e in ev if type(e).__name__ == "ProfileSQTTEvent"]
pickle.dump(out, open({str(tmp_path / "sqtt.pkl")!r}, "wb"))
import os; os._exit(0)
""")
    r = simgpu_run([sys.executable, str(script)], "--arch", "gfx942",
                   env=_env() | {"PROFILE": "1", "SQTT": "1", "SQTT_BUFFER_SIZE": "1"})
    assert r.returncode == 0 and r.stdout.split("\n")[0] == "[1.0, 3.0, 5.0]", r.stderr[-2000:]
    events = pickle.loads((tmp_path / "sqtt.pkl").read_bytes())
    assert sorted({se for se, *_ in events}) == list(range(32))  # 8 XCCs x 4 SEs
    blob, lib, name = next((b, lib, n) for se, b, lib, n in events if se == 0)
    tg, amd_decode = test_sqtt_gfx9.tinygrad_sqtt()
    packets = list(tg.decode(blob))
    kinds = {type(p).__name__ for p in packets}
    assert {"CDNA_WAVESTART", "CDNA_INST", "CDNA_WAVEEND", "CDNA_REG"} <= kinds, kinds
    entry = next(iter(amd_decode(lib, "gfx942")))
    pcs = test_sqtt_gfx9.recover(tg, amd_decode, blob, lib, entry)
    code = amd_decode(lib, "gfx942")
    assert len(pcs) > 5 and code[pcs[-1]].op_name == "S_ENDPGM", name
    assert sum(isinstance(p, tg.CDNA_INST) and (p.simd, p.wave) == (0, 0) for p in packets) <= len(pcs)


def test_tinygrads_gfx9_counters_on_a_gfx942_count_its_kernel(tmp_path):
    """PROFILE=1 PMC=1 on gfx942: tinygrad's gfx9 set-up (SQ_PERFCOUNTER_CTRL's VMID_MASK, consecutive SQ selects with
    SIMD/SQC masks, 64-bit LO/HI reads per SE of each XCC behind PRED_EXEC) reads back counts of its elementwise
    kernel: every wave on XCC 0's SEs, one global load and one store per wave, GRBM cycles."""
    script = tmp_path / "pmc.py"
    script.write_text("""
import struct
import numpy as np
from tinygrad import Tensor
from tinygrad.device import Compiled
print((Tensor(np.arange(4096, dtype=np.float32)) * 2 + 1).numpy()[:3].tolist())
e = [e for e in Compiled.profile_events if type(e).__name__ == "ProfilePMCEvent"][-1]
print({s.name: list(struct.unpack_from(f"<{s.size // 8}Q", e.blob, s.off)) for s in e.sched})
import os; os._exit(0)
""")
    counters = "SQ_WAVES,SQ_INSTS_VALU,SQ_INSTS_FLAT,SQ_BUSY_CYCLES,GRBM_GUI_ACTIVE"
    r = simgpu_run([sys.executable, str(script)], "--arch", "gfx942",
                   env=_env() | {"PROFILE": "1", "PMC": "1", "PMC_COUNTERS": counters})
    assert r.returncode == 0 and r.stdout.split("\n")[0] == "[1.0, 3.0, 5.0]", r.stderr[-2000:]
    got = ast.literal_eval(r.stdout.split("\n")[1])
    assert len(got["SQ_WAVES"]) == 32 and not any(got["SQ_WAVES"][4:])  # 8 XCCs x 4 SEs; XCC 0's hold them all
    waves = sum(got["SQ_WAVES"])
    assert waves > 0 and sum(got["SQ_INSTS_FLAT"]) == 2 * waves and sum(got["SQ_INSTS_VALU"]) > 0
    assert sum(got["SQ_BUSY_CYCLES"]) > sum(got["SQ_INSTS_VALU"]) and got["GRBM_GUI_ACTIVE"][0] > 0
