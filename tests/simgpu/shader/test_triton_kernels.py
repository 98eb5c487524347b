"""Real Triton kernels, compiled for gfx1100 without a GPU, run on the simulator and checked against numpy.

Optional: the module skips unless Triton is installed. The kernels live in tools/triton_kernels.py, which the
committed corpus (tests/runtime/test_triton_corpus.py, run without Triton) is compiled from too.

    pip install -e .[test,triton]
    pytest tests/simgpu/shader/test_triton_kernels.py

How the kernels are built (tested with Triton 3.9.0):

- `triton.compile(ASTSource(...), target=GPUTarget("hip", "gfx1100", 32))` compiles ahead of time. Naming the
  target explicitly is the whole workaround: Triton then never asks the active driver for the current device, so
  neither torch nor a HIP runtime is needed. No Triton internals are patched.
- The code object (`compiled.asm["hsaco"]`) is wave32 (gfx1100); a program of `num_warps` warps is one workgroup
  of `num_warps * warp_size` work-items.
- The kernel arguments are the signature's non-constexpr parameters, in order, followed by two pointers Triton
  appends (global scratch and profile scratch, see HIPLauncher in triton/backends/amd/driver.py). They are only
  used when `metadata.global_scratch_size` / `profile_scratch_size` are non-zero; `launch` allocates them then.
- Triton's shared memory is dynamic LDS: the descriptor's group segment size is 0 and the launcher passes
  `metadata.shared` bytes per workgroup (`Testbed.launch(..., shared=)`); without it LDS reads return 0.
- Triton caches compiled kernels in ~/.triton/cache (TRITON_CACHE_DIR), so reruns do not recompile.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

from simgpu.testbed import Testbed

# exc_type=ImportError: also skip (not error) on a broken install, e.g. a missing libtriton.so; pytest >= 9 would
# otherwise only skip ModuleNotFoundError.
triton = pytest.importorskip("triton", reason="optional: pip install -e .[triton]", exc_type=ImportError)

import triton.language as tl  # noqa: E402  (after the skip: only importable with triton)
from triton.backends.compiler import GPUTarget  # noqa: E402

from tools.triton_corpus import int_ops_ref, philox_ref, round_to_e5m2  # noqa: E402
from tools.triton_kernels import (  # noqa: E402
    add_kernel,
    argmax_sort_kernel,
    atomic_sum_kernel,
    contended_atomics_kernel,
    cumsum_kernel,
    dot_tile_kernel,
    f16_product_kernel,
    flash_attention_kernel,
    fp8_roundtrip_kernel,
    histogram_kernel,
    int64_kernel,
    int_ops_kernel,
    layernorm_kernel,
    math_kernel,
    matmul_kernel,
    randint_kernel,
    softmax_kernel,
)

# Silences Triton 3.9's UserWarning about the default changing; fusion (FMA contraction) stays on, its 3.9 default.
# Read at compile time, so setting it after the import is enough.
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

TARGET = GPUTarget("hip", "gfx1100", 32)


# ================================================================================================== harness


@functools.cache
def _compile(fn, signature: tuple, constexprs: tuple, num_warps: int):
    """Compile once per process (Triton's disk cache makes later processes cheap too)."""
    sig = dict(signature)
    sig.update({name: "constexpr" for name, _ in constexprs})
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=dict(constexprs))
    return triton.compile(src, target=TARGET, options={"num_warps": num_warps})


def compile_kernel(fn, signature: dict, constexprs: dict | None = None, num_warps: int = 4):
    """`signature` maps each runtime parameter to a Triton type ("*fp32", "i32", ...), in parameter order."""
    return _compile(fn, tuple(signature.items()), tuple((constexprs or {}).items()), num_warps)


@pytest.fixture
def tb() -> Testbed:
    return Testbed(vram_size=1 << 30)


def launch(tb: Testbed, compiled, args: list, grid: tuple[int, ...]) -> None:
    """Run a compiled Triton kernel as Triton's HIP launcher would: one workgroup per program."""
    meta = compiled.metadata
    kernel = tb.load(compiled.asm["hsaco"])[meta.name]
    # Triton's warp is the hardware wave: the block size below relies on the code object agreeing.
    assert kernel.kernel.descriptor.wavefront_size == meta.warp_size == 32
    programs = int(np.prod(grid))
    scratch = [_scratch(tb, meta.global_scratch_size, programs), _scratch(tb, meta.profile_scratch_size, programs)]
    # Only pass as many trailing scratch pointers as this Triton version declares.
    extra = len(kernel.args) - len(args) - _hidden_count(kernel.args)
    # Triton's LDS is dynamic: the descriptor declares none, the launcher passes metadata.shared bytes.
    tb.launch(kernel, list(args) + scratch[:extra], grid=grid, block=(meta.num_warps * meta.warp_size,),
              shared=meta.shared)


def _scratch(tb: Testbed, per_program: int, programs: int) -> int:
    return tb.alloc(per_program * programs) if per_program else 0


def _hidden_count(args_meta: list[dict]) -> int:
    return sum(a[".value_kind"].startswith("hidden_") for a in args_meta)


def isa(compiled) -> str:
    return compiled.asm["amdgcn"]


# ================================================================================================== tests


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 4096 + 17])
def test_vector_add(tb, n):
    c = compile_kernel(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                       {"BLOCK": 256})
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = tb.alloc(4 * n)
    launch(tb, c, [tb.upload(x), tb.upload(y), out, n], grid=(triton.cdiv(n, 256),))
    np.testing.assert_array_equal(tb.download(out, np.float32, n), x + y)


@pytest.mark.parametrize("rows,cols", [(1, 1), (4, 100), (7, 128), (3, 781)])
def test_softmax(tb, rows, cols):
    block = triton.next_power_of_2(cols)
    c = compile_kernel(softmax_kernel, {"out_ptr": "*fp32", "in_ptr": "*fp32", "row_stride": "i32", "n_cols": "i32"},
                       {"BLOCK": block})
    x = np.random.default_rng(cols).standard_normal((rows, cols), np.float32) * 4
    out = tb.alloc(x.nbytes)
    launch(tb, c, [out, tb.upload(x), cols, cols], grid=(rows,))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(tb.download(out, np.float32, x.size).reshape(x.shape), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("m,n,k,tile,warps", [(64, 64, 64, 32, 4), (32, 48, 40, 32, 4), (70, 33, 96, 32, 4),
                                               (130, 70, 200, 64, 8)])
def test_matmul_f16(tb, m, n, k, tile, warps):
    c = compile_kernel(matmul_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32",
                                       "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"},
                       {"BM": tile, "BN": tile, "BK": 32}, num_warps=warps)
    assert "v_wmma_f32_16x16x16_f16" in isa(c)  # tl.dot on gfx1100 lowers to WMMA
    assert c.metadata.shared > 0  # operands staged through LDS (num_stages=2 software pipelining)
    rng = np.random.default_rng(m * n * k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    out = tb.alloc(4 * m * n)
    grid = (triton.cdiv(m, tile), triton.cdiv(n, tile))
    launch(tb, c, [tb.upload(a), tb.upload(b), out, m, n, k, k, n, n], grid=grid)
    # Products of f16 are exact in f32; only the f32 summation order differs from numpy's.
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(tb.download(out, np.float32, m * n).reshape(m, n), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [5, 1024, 3000])
@pytest.mark.parametrize("dtype", ["fp32", "i32"])
def test_atomic_sum(tb, n, dtype):
    c = compile_kernel(atomic_sum_kernel, {"x_ptr": f"*{dtype}", "out_ptr": f"*{dtype}", "n": "i32"}, {"BLOCK": 512})
    np_dtype = np.float32 if dtype == "fp32" else np.int32
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32) if dtype == "fp32" else rng.integers(-1000, 1000, n, np.int32)
    out = tb.upload(np.zeros(1, np_dtype))
    launch(tb, c, [tb.upload(x), out, n], grid=(triton.cdiv(n, 512),))
    got = tb.download(out, np_dtype, 1)[0]
    if dtype == "i32":
        assert got == x.sum()
    else:
        assert got == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5, abs=1e-4)


@pytest.mark.parametrize("n", [3, 128, 777])
def test_int_ops_where(tb, n):
    c = compile_kernel(int_ops_kernel, {"x_ptr": "*i32", "y_ptr": "*i32", "out_ptr": "*i32", "n": "i32"},
                       {"BLOCK": 256})
    rng = np.random.default_rng(n)
    x = rng.integers(-(1 << 20), 1 << 20, n, np.int32)
    y = rng.integers(-50, 50, n, np.int32)
    out = tb.alloc(4 * n)
    launch(tb, c, [tb.upload(x), tb.upload(y), out, n], grid=(triton.cdiv(n, 256),))
    np.testing.assert_array_equal(tb.download(out, np.int32, n), int_ops_ref(x, y))


@pytest.mark.parametrize("n", [1, 100, 256, 1000])
def test_cumsum(tb, n):
    c = compile_kernel(cumsum_kernel, {"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32"}, {"BLOCK": 256})
    x = np.random.default_rng(n).integers(-100, 100, n, np.int32)
    out = tb.alloc(4 * n)
    launch(tb, c, [tb.upload(x), out, n], grid=(triton.cdiv(n, 256),))
    # Each 256-element block is scanned independently.
    ref = np.concatenate([np.cumsum(x[i:i + 256]) for i in range(0, n, 256)]).astype(np.int32)
    np.testing.assert_array_equal(tb.download(out, np.int32, n), ref)


@pytest.mark.parametrize("ins,out,wmma", [("fp16", "fp16", "v_wmma_f32_16x16x16_f16"),
                                          ("bf16", "fp32", "v_wmma_f32_16x16x16_bf16"),
                                          ("i8", "i32", "v_wmma_i32_16x16x16_iu8")])
def test_dot_dtypes(tb, ins, out, wmma):
    m = n = k = 32
    out_tl = {"fp16": tl.float16, "fp32": tl.float32, "i32": tl.int32}[out]
    c = compile_kernel(dot_tile_kernel, {"a_ptr": f"*{ins}", "b_ptr": f"*{ins}", "c_ptr": f"*{out}"},
                       {"M": m, "N": n, "K": k, "OUT": out_tl})
    assert wmma in isa(c)
    rng = np.random.default_rng(7)
    a, a_bits = _dot_input(rng, ins, (m, k))
    b, b_bits = _dot_input(rng, ins, (k, n))
    res = tb.alloc(4 * m * n)
    launch(tb, c, [tb.upload(a_bits), tb.upload(b_bits), res], grid=(1,))
    if ins == "i8":
        np.testing.assert_array_equal(tb.download(res, np.int32, m * n).reshape(m, n), a @ b)
        return
    got = tb.download(res, np.float16 if out == "fp16" else np.float32, m * n).reshape(m, n).astype(np.float32)
    # An f16 result is rounded once more (to ~1e-3 relative) than the f32 reference.
    tol = 2e-2 if out == "fp16" else 1e-4
    np.testing.assert_allclose(got, a @ b, rtol=tol, atol=tol)


def _dot_input(rng, dtype: str, shape) -> tuple[np.ndarray, np.ndarray]:
    """(exact values as f32/i32 for the reference, the bits to upload)."""
    if dtype == "i8":
        v = rng.integers(-128, 128, shape, np.int8)
        return v.astype(np.int32), v
    if dtype == "fp16":
        v = rng.standard_normal(shape).astype(np.float16)
        return v.astype(np.float32), v
    # bf16: numpy has none; truncate f32 to its top 16 bits, which is exactly a bf16 value.
    hi = (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return (hi.astype(np.uint32) << 16).view(np.float32), hi


def test_math_f16_to_bf16(tb):
    n = 1000
    c = compile_kernel(math_kernel, {"x_ptr": "*fp16", "out_ptr": "*bf16", "n": "i32"}, {"BLOCK": 256})
    x = (np.random.default_rng(1).standard_normal(n) * 3).astype(np.float16)
    out = tb.alloc(2 * n)
    launch(tb, c, [tb.upload(x), out, n], grid=(triton.cdiv(n, 256),))
    got = (tb.download(out, np.uint16, n).astype(np.uint32) << 16).view(np.float32)
    xf = x.astype(np.float64)
    ref = np.sqrt(np.abs(xf)) + np.sin(xf) * np.cos(xf) + np.log(np.abs(xf) + 1) + np.exp2(xf) / (xf * xf + 1)
    np.testing.assert_allclose(got, ref, rtol=1e-2, atol=1e-2)  # bf16 output: 8 significant bits


def test_philox_randint(tb):
    n = 300
    c = compile_kernel(randint_kernel, {"out_ptr": "*i32", "seed": "i32", "n": "i32"}, {"BLOCK": 128})
    out = tb.alloc(4 * n)
    launch(tb, c, [out, 42, n], grid=(triton.cdiv(n, 128),))
    np.testing.assert_array_equal(tb.download(out, np.int32, n), philox_ref(42, np.arange(n)))


def test_int64_f64(tb):
    n = 200
    c = compile_kernel(int64_kernel, {"x_ptr": "*i64", "out_ptr": "*i64", "f_ptr": "*fp64", "n": "i32"}, {"BLOCK": 128})
    x = np.random.default_rng(5).integers(-(2**62), 2**62, n, np.int64)
    out, f = tb.alloc(8 * n), tb.alloc(8 * n)
    launch(tb, c, [tb.upload(x), out, f, n], grid=(triton.cdiv(n, 128),))
    q = x >> 7
    with np.errstate(over="ignore"):  # the multiply wraps, as in the kernel
        ref = x * np.int64(-7046029254386353131) + np.sign(q) * (np.abs(q) // 3)  # // truncates toward zero
    np.testing.assert_array_equal(tb.download(out, np.int64, n), ref)
    np.testing.assert_array_equal(tb.download(f, np.float64, n), x.astype(np.float64) * 1.5 / 7.0)


def test_argmax_sort(tb):
    rows, block = 5, 256
    c = compile_kernel(argmax_sort_kernel, {"x_ptr": "*i32", "idx_ptr": "*i32", "sorted_ptr": "*i32"},
                       {"BLOCK": block})
    # Distinct values, so argmax has one answer.
    x = np.random.default_rng(2).permutation(rows * block).astype(np.int32).reshape(rows, block) - 600
    idx, srt = tb.alloc(4 * rows), tb.alloc(x.nbytes)
    launch(tb, c, [tb.upload(x), idx, srt], grid=(rows,))
    np.testing.assert_array_equal(tb.download(idx, np.int32, rows), x.argmax(axis=1))
    np.testing.assert_array_equal(tb.download(srt, np.int32, x.size).reshape(x.shape), np.sort(x, axis=1))


@pytest.mark.parametrize("dtype", ["fp32", "i32"])
def test_contended_atomics(tb, dtype):
    n = 1001
    np_dtype = np.float32 if dtype == "fp32" else np.int32
    c = compile_kernel(contended_atomics_kernel, {"x_ptr": f"*{dtype}", "max_ptr": f"*{dtype}", "count_ptr": "*i32",
                                                  "n": "i32"}, {"BLOCK": 256})
    x = (np.random.default_rng(4).standard_normal(n) * 100).astype(np_dtype)
    maxes, counts = tb.upload(np.full(4, -(10**9), np_dtype)), tb.alloc(32)
    launch(tb, c, [tb.upload(x), maxes, counts, n], grid=(triton.cdiv(n, 256),))
    np.testing.assert_array_equal(tb.download(maxes, np_dtype, 4), [x[i::4].max() for i in range(4)])
    np.testing.assert_array_equal(tb.download(counts, np.int32, 8), [len(x[i::8]) for i in range(8)])


def test_histogram(tb):
    c = compile_kernel(histogram_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"}, {"BLOCK": 512, "BINS": 16})
    x = np.random.default_rng(3).integers(0, 16, 512, np.int32)
    out = tb.alloc(4 * 16)
    launch(tb, c, [tb.upload(x), out], grid=(1,))
    np.testing.assert_array_equal(tb.download(out, np.int32, 16), np.bincount(x, minlength=16))


def test_layernorm(tb):
    rows, cols = 3, 1000
    c = compile_kernel(layernorm_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "eps": "fp32"},
                       {"BLOCK": 1024}, num_warps=8)
    x = np.random.default_rng(2).standard_normal((rows, cols)).astype(np.float32)
    out = tb.alloc(x.nbytes)
    launch(tb, c, [tb.upload(x), out, cols, 1e-5], grid=(rows,))
    ref = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(tb.download(out, np.float32, x.size).reshape(x.shape), ref, rtol=1e-5, atol=1e-5)


def test_fp8e5_roundtrip(tb):
    c = compile_kernel(fp8_roundtrip_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 256})
    x = np.random.default_rng(3).standard_normal(256).astype(np.float32) * 100
    # Exact ties (to even: 0.25, 0.375), just above a tie (0.3125), a subnormal, and values past the largest finite
    # e5m2 (57344), which Triton saturates to it rather than producing inf.
    x[:7] = [0.28125, 0.34375, -0.28128743, 3e-5, 57344.0, 6e4, -1e6]
    out = tb.alloc(x.nbytes)
    launch(tb, c, [tb.upload(x), out], grid=(1,))
    np.testing.assert_array_equal(tb.download(out, np.float32, x.size), round_to_e5m2(x))


# -------------------------------------------------------------------------------------------------- True16 (issue 21)


def test_flash_attention(tb):
    seq, d = 100, 64
    c = compile_kernel(flash_attention_kernel, {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16",
                                                "seq": "i32", "scale": "fp32"}, {"D": d, "BM": 64, "BN": 64})
    assert "v_mov_b16_e64" in isa(c)  # the True16-only VOP3 encoding that used to stop the engine
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal((seq, d)).astype(np.float16) for _ in range(3))
    out = tb.alloc(2 * seq * d)
    scale = 1 / np.sqrt(d)
    launch(tb, c, [tb.upload(q), tb.upload(k), tb.upload(v), out, seq, scale], grid=(triton.cdiv(seq, 64),))
    s = (q.astype(np.float32) @ k.astype(np.float32).T) * np.float32(scale)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    ref = (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float32)
    # P is rounded to f16 before the second product and O to f16 at the end.
    np.testing.assert_allclose(tb.download(out, np.float16, seq * d).reshape(seq, d).astype(np.float32), ref,
                               rtol=2e-2, atol=2e-3)


def test_matmul_f16_out_8_warps(tb):
    m, n, k = 130, 140, 96
    c = compile_kernel(matmul_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                                       "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"},
                       {"BM": 128, "BN": 128, "BK": 32}, num_warps=8)
    assert "v_mov_b16_e64" in isa(c)
    rng = np.random.default_rng(12)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    out = tb.alloc(2 * m * n)
    launch(tb, c, [tb.upload(a), tb.upload(b), out, m, n, k, k, n, n], grid=(triton.cdiv(m, 128), triton.cdiv(n, 128)))
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    got = tb.download(out, np.float16, m * n).reshape(m, n)
    # f32 sums in another order, then one f16 rounding: at most one f16 ulp apart.
    np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_f16_conversion_of_f32_products(tb):
    n = 4096
    c = compile_kernel(f16_product_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp32", "out_ptr": "*fp16", "n": "i32"},
                       {"BLOCK": 256})
    assert "v_fma_mixlo_f16" in isa(c)
    rng = np.random.default_rng(13)
    a = rng.standard_normal(n).astype(np.float16)
    # Half the lanes aim at a tie: b = h / a for h halfway between two f16 values, so that the f32 product
    # is often exactly that tie while the exact product is not (double and single rounding then differ).
    h = rng.standard_normal(n).astype(np.float16)
    mid = (h.astype(np.float64) + np.spacing(h).astype(np.float64) / 2) / a.astype(np.float64)
    b = np.where(np.arange(n) % 2 == 0, mid, rng.standard_normal(n)).astype(np.float32)
    out = tb.alloc(2 * n)
    launch(tb, c, [tb.upload(a), tb.upload(b), out, n], grid=(triton.cdiv(n, 256),))
    got = tb.download(out, np.float16, n)
    ref = (a.astype(np.float32) * b).astype(np.float16)  # numpy: an f32 multiply, then a conversion to f16
    np.testing.assert_array_equal(got.view(np.uint16), ref.view(np.uint16))
    once = (a.astype(np.float64) * b.astype(np.float64)).astype(np.float16)
    assert (once != ref).sum() > 10  # the inputs do reach the cases where the second rounding matters
