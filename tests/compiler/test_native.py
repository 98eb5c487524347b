"""The native gfx1100 backend beyond the ops suite: register pressure that spills (VGPRs to scratch, SGPRs to VGPR
lanes), division by magic numbers against Python, hazard and wait placement, determinism, the code object as
LLVM's tools read it, every emitted instruction form against llvm-mc-19, and a cold start that never imports
llvmlite."""

import hashlib
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler import Tensor, device
from compiler.backend import get, regalloc, using
from compiler.backend.gfx11.divide import magic_signed, magic_unsigned
from compiler.backend.gfx11.target import compile_kernel
from compiler.backend.mir import MInst, RegFactory
from compiler.dtypes import PtrDType, dtypes
from compiler.ir.linearize import LinearKernel
from compiler.ir.lower import Geometry
from compiler.ir.ops import Ops, UOp
from compiler.kernel import Program, linear_kernel
from compiler.schedule import schedule
from simgpu.isa import assemble, decode_all

ROOT = pathlib.Path(__file__).resolve().parents[2]
LLVM_BIN = pathlib.Path("/usr/lib/llvm-19/bin")
F32 = dtypes.float32
I32 = dtypes.int32


def _c(v, dt=I32) -> UOp:
    return UOp.const(dt, v)


def _run(k: LinearKernel, inputs: list[np.ndarray], out: np.ndarray) -> np.ndarray:
    """Compile k natively, run it on the simulated device with buffer 0 = out, and return buffer 0."""
    dev = device.get("AMD")
    binary = get("native").compile(k)
    prog = Program(k.name, binary, k.geometry, len(k.params), "native", hashlib.sha256(binary).hexdigest())
    bufs = [dev.alloc(a.nbytes) for a in (out, *inputs)]
    for b, a in zip(bufs, (out, *inputs), strict=True):
        b.copyin(a)
    dev.launch(prog, bufs).wait()
    got = bufs[0].copyout(np.empty_like(out))
    for b in bufs:
        b.release()
    return got


def pressure_kernel(n: int = 320, lanes: int = 32) -> LinearKernel:
    """n per-lane values and n uniform values all live at once: out[l] = sum_i x[l*n + i] * w[i]."""
    out = UOp(Ops.PARAM, PtrDType(F32, size=lanes), (), 0)
    xs = UOp(Ops.PARAM, PtrDType(F32, size=lanes * n), (), 1)
    ws = UOp(Ops.PARAM, PtrDType(F32, size=n), (), 2)
    lid = UOp(Ops.SPECIAL, I32, (), ("local", 0, lanes))
    row = lid * _c(n)
    vec = [UOp(Ops.LOAD, F32, (xs, row + _c(i))) for i in range(n)]
    uni = [UOp(Ops.LOAD, F32, (ws, _c(i))) for i in range(n)]
    acc = vec[0] * uni[0]
    combine = [acc]
    for i in range(1, n):
        prod = vec[i] * uni[i]
        acc = acc + prod
        combine += [prod, acc]
    store = UOp(Ops.STORE, I32, (out, lid, acc))
    consts = [_c(n), *(_c(i) for i in range(n) if i != n)]
    adds = [row + _c(i) for i in range(n)]
    uops = [out, xs, ws, lid, *consts, row, *adds, *vec, *uni, *combine, store]
    uops.append(UOp(Ops.SINK, I32, (store,), "pressure"))
    return LinearKernel("pressure", uops, [out.dtype, xs.dtype, ws.dtype], Geometry("pressure", (1, 1, 1),
                                                                                     (lanes, 1, 1)))


def test_register_pressure_spills_and_computes():
    n, lanes = 320, 32
    k = pressure_kernel(n, lanes)
    res = compile_kernel(k).resources
    assert res.vgpr_spills > 0 and res.scratch_bytes > 0, res  # VGPRs spilled to scratch
    assert res.sgpr_spills > 0, res  # SGPRs spilled to VGPR lanes
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, lanes * n).astype(np.float32)
    w = rng.uniform(-1, 1, n).astype(np.float32)
    got = _run(k, [x, w], np.zeros(lanes, np.float32))
    ref = np.zeros(lanes, np.float32)
    for i in range(n):  # float32, in the kernel's order
        ref = ref + x.reshape(lanes, n)[:, i] * w[i] if i else x.reshape(lanes, n)[:, 0] * w[0]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


@given(st.integers(2, (1 << 31) - 1), st.integers(0, (1 << 32) - 1))
def test_magic_unsigned_divides_every_dividend_in_range(d, x):
    m = magic_unsigned(d, (1 << 32) - 1)
    if m is None:  # the 33-bit form: checked through the kernels of the ops suite
        return
    mul, s = m
    assert (x * mul) >> (32 + s) == x // d


@given(st.integers(2, (1 << 31) - 1), st.integers(-(1 << 31), (1 << 31) - 1))
def test_magic_signed_divides_every_int32(d, x):
    m, s = magic_signed(d)
    signed_m = m - (1 << 32) if m >= 1 << 31 else m
    q = (x * signed_m) >> 32  # mulhi_i32
    if m >= 1 << 31:
        q += x
    q >>= s
    q += 1 if x < 0 else 0
    assert q == int(x / d) if abs(x) < 1 << 52 else True


def _trans_kernel() -> LinearKernel:
    out = UOp(Ops.PARAM, PtrDType(F32, size=32), (), 0)
    xs = UOp(Ops.PARAM, PtrDType(F32, size=32), (), 1)
    lid = UOp(Ops.SPECIAL, I32, (), ("local", 0, 32))
    x = UOp(Ops.LOAD, F32, (xs, lid))
    y = UOp(Ops.SQRT, F32, (x,))
    store = UOp(Ops.STORE, I32, (out, lid, y))
    uops = [out, xs, lid, x, y, store, UOp(Ops.SINK, I32, (store,), "sq")]
    return LinearKernel("sq", uops, [out.dtype, xs.dtype], Geometry("sq", (1, 1, 1), (32, 1, 1)))


def test_transcendental_results_wait_before_use_and_loads_before_use():
    asm = compile_kernel(_trans_kernel()).assembly.splitlines()
    trans = next(i for i, line in enumerate(asm) if "v_sqrt_f32" in line)
    reg = re.search(r"v_sqrt_f32 (v\d+)", asm[trans]).group(1)
    use = next(i for i in range(trans + 1, len(asm)) if re.search(rf"\b{reg}\b", asm[i].split(" ", 3)[-1]))
    assert any("s_waitcnt_depctr 0xfff" in line for line in asm[trans:use])
    load = next(i for i, line in enumerate(asm) if "global_load" in line)
    assert any("s_waitcnt vmcnt(0)" in line for line in asm[load:trans])


def test_sqrt_is_correctly_rounded():
    x = np.concatenate([np.float32([0.0, -0.0, np.inf, 1e-40, 2.0, 3.0, 1e38]),
                        np.random.default_rng(0).uniform(0, 100, 25).astype(np.float32)])
    got = _run(_trans_kernel(), [x], np.zeros(32, np.float32))
    assert np.array_equal(got.view(np.uint32), np.sqrt(x).view(np.uint32))


@pytest.mark.parametrize("n, lanes", [(64, 32), (4096, 64)])
def test_barrier_only_for_workgroups_of_several_waves(n, lanes):
    # a group reduction's LDS tree: one wave32 needs no s_barrier (its LDS operations run in order), two do
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    t = Tensor(x).sum()
    (item,) = [i for i in schedule([t.lazydata.base]) if i.kind == "kernel"]
    k = linear_kernel(item.ast, get("native"))
    assert k.geometry.block == (lanes, 1, 1) and any(u.op is Ops.BARRIER for u in k.uops)
    assert ("s_barrier" in compile_kernel(k).assembly) == (lanes > 32)
    np.testing.assert_allclose(t.numpy(), x.astype(np.float64).sum(), rtol=1e-5)


def test_compiling_twice_gives_the_same_bytes():
    k = pressure_kernel(40)
    assert compile_kernel(k).binary == compile_kernel(k).binary


@pytest.mark.skipif(not (LLVM_BIN / "llvm-mc").exists(), reason="needs Debian's llvm-19")
def test_code_object_reads_back_with_llvm_tools(tmp_path):
    from simgpu.isa import disassemble
    from simgpu.isa.codeobject import read_code_object
    co = compile_kernel(pressure_kernel(320)).binary
    path = tmp_path / "k.co"
    path.write_bytes(co)
    notes = subprocess.run([LLVM_BIN / "llvm-readelf", "--notes", path], capture_output=True, text=True, check=True)
    assert "amdhsa.kernels" in notes.stdout and ".vgpr_spill_count" in notes.stdout
    dis = subprocess.run([LLVM_BIN / "llvm-objdump", "-d", "--mcpu=gfx1100", path], capture_output=True, text=True,
                         check=True)
    theirs = [line.split("//")[0].strip() for line in dis.stdout.splitlines() if line.startswith("\t")]
    theirs = [t for t in theirs if t and t != "s_code_end"]
    code = read_code_object(co).kernel("pressure").code
    ours = [" ".join(t.split()) for t in disassemble(code)]
    assert [" ".join(t.split()) for t in theirs] == ours
    assert any(t.startswith("scratch_store") for t in ours) and any(t.startswith("v_writelane") for t in ours)


def _forms(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines()
            if line.startswith("  ") and not line.strip().startswith((";", "s_cbranch"))}


@pytest.mark.skipif(not (LLVM_BIN / "llvm-mc").exists(), reason="needs Debian's llvm-19")
def test_emitted_instructions_match_llvm_mc():
    """Every instruction text the backend emits for a spread of kernels assembles to llvm-mc-19's bytes."""
    from tests.compiler.native_corpus import corpus_kernels
    lines = set()
    for k in corpus_kernels():
        lines |= _forms(compile_kernel(k).assembly)
    lines = sorted(lines)
    mc = subprocess.run([LLVM_BIN / "llvm-mc", "-arch=amdgcn", "-mcpu=gfx1100", "-show-encoding"],
                        input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    encs = re.findall(r"encoding: \[([^\]]*)\]", mc.stdout)
    assert len(encs) == len(lines), mc.stderr[:2000]
    for line, enc in zip(lines, encs, strict=True):
        want = bytes(int(b, 16) for b in enc.split(","))
        assert assemble(line) == want, line
        assert decode_all(want)


def test_cold_start_does_not_import_llvmlite(tmp_path):
    code = ("import sys; from compiler import Tensor; print((Tensor([1,2,3])+1).numpy().tolist()); "
            "print('llvmlite' in sys.modules)")
    env = dict(os.environ, MOCKGPU="1", SIMGPU_BACKEND="native", SIMGPU_CACHE_DIR=str(tmp_path))
    env.pop("SIMGPU_CHECK_OOB", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["[2, 3, 4]", "False"]


def test_without_llvmlite_the_native_backend_is_the_default(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(  # a finder that hides llvmlite, as if it were not installed
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'llvmlite' or name.startswith('llvmlite.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n")
    code = "from compiler import backend; print(backend.available('AMD'), backend.for_device('AMD').name)"
    env = dict(os.environ, PYTHONPATH=str(tmp_path), MOCKGPU="1")
    env.pop("SIMGPU_BACKEND", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['native'] native"



def _binary_kernel(op: Ops, dt, n: int, const=None) -> LinearKernel:
    """out[i] = a[i] op b[i] (or op const) over n elements."""
    out = UOp(Ops.PARAM, PtrDType(dt, size=n), (), 0)
    pa = UOp(Ops.PARAM, PtrDType(dt, size=n), (), 1)
    pb = UOp(Ops.PARAM, PtrDType(dt, size=n), (), 2)
    lid = UOp(Ops.SPECIAL, I32, (), ("local", 0, n))
    a = UOp(Ops.LOAD, dt, (pa, lid))
    b = UOp.const(dt, const) if const is not None else UOp(Ops.LOAD, dt, (pb, lid))
    v = UOp(op, dt, (a, b))
    st = UOp(Ops.STORE, I32, (out, lid, v))
    uops = [out, pa, pb, lid, a, *([b] if const is None else [b]), v, st, UOp(Ops.SINK, I32, (st,), "div")]
    return LinearKernel("div", uops, [out.dtype, pa.dtype, pb.dtype], Geometry("div", (1, 1, 1), (n, 1, 1)))


def _values(dt, rng, n):
    info = np.iinfo(dt.np)
    bits = rng.integers(0, dt.bits + 1, n)
    mags = [int.from_bytes(rng.bytes(8), "little") >> (64 - int(k)) if k else 0 for k in bits]
    vals = [m if dt.kind == "u" or rng.random() < 0.5 else -m for m in mags]
    vals[:6] = [0, 1, -1 if dt.kind == "i" else 2, info.max, info.min, info.max // 3]
    return np.array([max(info.min, min(info.max, v)) for v in vals], dt.np)


@pytest.mark.parametrize("dt", [dtypes.int64, dtypes.uint64, dtypes.int32, dtypes.uint32, dtypes.int8, dtypes.uint16])
@pytest.mark.parametrize("op", [Ops.IDIV, Ops.MOD])
def test_integer_division_by_variables_and_constants(op, dt):
    from compiler.ir.fold import exec_alu
    rng = np.random.default_rng(dt.bits)
    n = 64
    a, b = _values(dt, rng, n), _values(dt, rng, n)
    got = _run(_binary_kernel(op, dt, n), [a, b], np.zeros(n, dt.np))
    want = [exec_alu(op, dt, [int(x), int(y)]) for x, y in zip(a, b, strict=True)]
    assert got.tolist() == want
    for d in (3, 7, 10, 16, -5, 1000003) if dt.bits >= 32 else (3, 7, 16):
        if dt.kind == "u" and d < 0:
            continue
        got = _run(_binary_kernel(op, dt, n, d), [a, b], np.zeros(n, dt.np))
        assert got.tolist() == [exec_alu(op, dt, [int(x), d]) for x in a], d


# ---- regressions found by the x86 backend's differential tests (wt-x86 NATIVE_BUGS) -------------------------------
def _bf16_nearest_even(x: float) -> float:
    """x rounded once to bfloat16 (8 significant bits, nearest even; subnormals below 2^-126, overflow to inf)."""
    import math
    if not math.isfinite(x) or x == 0:
        return x
    m, e = math.frexp(x)
    e = max(e, -125)  # bfloat16's smallest normal is 2^-126 = 0.5 * 2^-125
    r = math.ldexp(round(math.ldexp(x, 8 - e)), e - 8)  # round(): ties to even, exact on these magnitudes
    return math.copysign(r if abs(r) < 2.0 ** 128 else math.inf, x)


def test_float64_to_float16_and_bfloat16_round_once():
    """float64 -> float16/bfloat16 rounds the float64 once (not through a nearest float32): midpoints, sticky bits
    below float32's precision, overflow, underflow, NaN. Was: a call to a missing GfxSelector.emit_mode_round."""
    from compiler import Tensor
    from compiler import backend as backends
    m = np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -11 - 2.0 ** -40,
                  65519.99, 65520.0, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -25 + 2.0 ** -60, 1e300, -1e-300, 1e-310,
                  1 + 2.0 ** -8, 1 + 2.0 ** -8 + 2.0 ** -40, 1 + 3 * 2.0 ** -8, -(1 + 2.0 ** -8 - 2.0 ** -50),
                  3.4028235e38, 3.3961e38, 2.0 ** -133 * 3, np.nan, -np.inf, 0.0, -0.0], np.float64)
    with backends.using("native"):
        f16 = Tensor(m).cast(dtypes.float16).numpy()
        bf16 = Tensor(m).cast(dtypes.bfloat16).numpy()
    with np.errstate(over="ignore"):
        want16 = m.astype(np.float16)
    assert np.array_equal(f16.view(np.uint16), want16.view(np.uint16))
    want_bf = np.array([_bf16_nearest_even(float(v)) for v in m], np.float32)
    assert np.array_equal(bf16, want_bf, equal_nan=True) and np.array_equal(np.signbit(bf16), np.signbit(want_bf))


def test_bfloat16_group_reduction_stores_lds_halves():
    """A bfloat16 group reduction stores partial sums to LDS with ds_store_b16_d16_hi (gfx11 has no
    ds_store_d16_hi_b16, which the backend emitted before) and gives LLVM's bits."""
    import compiler.kernel as kernel
    from compiler import Tensor
    from compiler import backend as backends
    x = np.random.default_rng(5).uniform(-8, 8, (4, 64)).astype(np.float32)
    seen = []
    real = kernel.linear_kernel

    def record(ast, be):
        k = real(ast, be)
        seen.append(k)
        return k
    kernel.linear_kernel = record
    try:
        with backends.using("native"):
            t = Tensor(x, dtype=dtypes.bfloat16)
            got = [t.sum(1).numpy(), t.max(1).numpy(), (t * t).sum().numpy()]
    finally:
        kernel.linear_kernel = real
    groups = [k for k in seen if k.name.startswith("G")]
    assert groups and any("ds_store_b16_d16_hi" in compile_kernel(k).assembly for k in groups)  # the max
    xb = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1) >> 16 << 16).view(np.float32)
    np.testing.assert_allclose(got[0], xb.sum(1), rtol=2e-2, atol=2e-2)
    assert np.array_equal(got[1], xb.max(1))
    np.testing.assert_allclose(got[2], (xb * xb).sum(), rtol=2e-2)
    if "llvm" in backends.available("AMD"):
        with backends.using("llvm"):
            t = Tensor(x, dtype=dtypes.bfloat16)
            want = [t.sum(1).numpy(), t.max(1).numpy(), (t * t).sum().numpy()]
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(g, w)


# the ULP bounds docs/compiler.md states for the native backend (tools/ulp_report.py prints the measured table)
ULP_BOUNDS = {"exp2": (1, 1), "log2": (1, 2), "log": (2, 3), "sin": (6, 2), "sqrt": (0.5, 0.5), "rsqrt": (2, 2),
              "reciprocal": (0.5, 0.5)}  # (float32, float64); float16 and bfloat16: 0.51 (one rounding of float32)


def test_transcendentals_within_documented_ulp():
    from tools.ulp_report import measure
    got = measure("native", n=512, functions=set(ULP_BOUNDS))
    for (fn, dt), err in got.items():
        f32, f64 = ULP_BOUNDS[fn]
        bound = {"float32": f32, "float64": f64}.get(dt, 0.51)
        assert err <= bound * (1 + 1e-6), (fn, dt, err, bound)


def test_combined_loads_issue_before_their_first_use():
    """Loads of consecutive elements combine into one wide load, issued where the first of them (in kernel order)
    was: x[2i+1] * 3 + x[2i] reads element 2i+1 first (the wide load used to issue at 2i, after that read)."""
    from compiler import Tensor
    from compiler import backend as backends
    x = (np.arange(256, dtype=np.float32) ** 2).astype(np.float32)
    with backends.using("native"):
        t = Tensor(x).reshape(64, 4)
        pair = (t[:, 1] * 3 + t[:, 0]).numpy()
        four = (t[:, 3] * 2 + t[:, 1] * 5 - t[:, 0] + t[:, 2] * 7).numpy()
    v = x.reshape(64, 4)
    np.testing.assert_array_equal(pair, v[:, 1] * 3 + v[:, 0])
    np.testing.assert_allclose(four, v[:, 3] * 2 + v[:, 1] * 5 - v[:, 0] + v[:, 2] * 7, rtol=1e-6)


def test_uniform_loads_of_consecutive_elements_share_one_s_load():
    """(x * w).sum(1) with w uniform: the unrolled loop reads w[0..7] with one s_load_b256, and computes."""
    from compiler import Tensor
    from compiler import backend as backends
    from compiler.kernel import linear_kernel
    from compiler.schedule import schedule
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((24, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    with backends.using("native"):
        t = (Tensor(x) * Tensor(w)).sum(1)
        item = next(i for i in schedule([t.lazydata.base]) if i.kind == "kernel")
        asm = compile_kernel(linear_kernel(item.ast, get("native"))).assembly
        got = t.numpy()
    assert "s_load_b256" in asm and "s_load_b32 " not in asm
    ref = np.zeros(24, np.float32)
    for i in range(8):  # float32, in the kernel's order
        ref = ref + x[:, i] * w[i]
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_small_accumulation_loops_unroll_fully_and_big_ones_by_a_factor():
    """compiler.ir.unroll: an 8-trip serial sum becomes straight-line code; the 64-trip loop of a group
    reduction becomes a shorter loop over copies of its body (within the 256-uop budget); both still sum."""
    from compiler import Tensor
    from compiler import backend as backends
    from compiler.ir.unroll import BUDGET, unroll
    from compiler.kernel import linear_kernel
    from compiler.schedule import schedule
    rng = np.random.default_rng(4)
    for shape, full in (((64, 8), True), ((2, 4096), False)):
        x = rng.integers(-100, 100, shape).astype(np.int32)
        with backends.using("native"):
            t = Tensor(x).sum(1)
            item = next(i for i in schedule([t.lazydata.base]) if i.kind == "kernel")
            k = linear_kernel(item.ast, get("native"))
            got = t.numpy()
        before = [int(u.src[0].arg) for u in k.uops if u.op is Ops.RANGE]
        after = unroll(k)
        ranges = [int(u.src[0].arg) for u in after.uops if u.op is Ops.RANGE]
        assert len(before) == 1
        if full:
            assert ranges == []
        else:
            assert len(ranges) == 1 and ranges[0] < before[0] and before[0] % ranges[0] == 0
            assert len(after.uops) <= len(k.uops) + BUDGET
        np.testing.assert_array_equal(got, x.sum(1))


def test_a_whole_kernel_register_never_takes_a_fixed_registers_place():
    """A register live through the whole kernel (SGPR spill lanes) starts before the entry defines the work-item
    id in v0: it must get another register, not v0 (it did, and the spills overwrote the ids)."""
    regs = RegFactory()
    wid = regs.new("v", 1, fixed=0, name="workitem")
    lanes = regs.new("v", 1, name="sgpr_spill")
    lanes.whole = True
    t = regs.new("v", 1)
    code = [MInst("pseudo.entry", [wid.all], 1), MInst("v_mov_b32", [t.all, wid.all], 1),
            MInst("v_writelane_b32", [lanes.all, t.all], 1, rmw=True)]
    rf = regalloc.RegFile("v", 4, lambda n: 1, lambda p, s: [], lambda p, s: [])
    regalloc.allocate(code, [rf], regs)
    assert wid.phys == 0 and lanes.phys not in (None, 0), (wid.phys, lanes.phys)


def test_sgpr_spills_at_the_entry_keep_the_work_item_ids():
    """19 buffers read in a loop: their addresses spill to VGPR lanes right after the kernel arguments load
    (a lazy chain of optimizer updates fused into one reduction made this kernel; it faulted)."""
    dev = device.get("AMD")
    rng = np.random.default_rng(9)
    xs = [rng.standard_normal(8).astype(np.float32) for _ in range(17)]
    m = rng.standard_normal((32, 8)).astype(np.float32)
    with using("native"):
        acc = Tensor(xs[0], device=dev.name).realize()
        for x in xs[1:]:
            acc = acc - 0.01 * Tensor(x, device=dev.name).realize()
        got = (Tensor(m, device=dev.name) @ acc.reshape(8, 1)).numpy()
    ref = m.astype(np.float64) @ (xs[0] - 0.01 * np.sum(xs[1:], axis=0, dtype=np.float64)).reshape(8, 1)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
