"""Triton kernels (written for gfx1100, compiled for every target of tools/gen_triton_corpus.py), shared by the optional
live test (tests/simgpu/shader/test_triton_kernels.py) and the generator of the committed corpus. Importing this module
needs Triton."""

from __future__ import annotations

import triton
import triton.language as tl
from triton.language.extra import libdevice

# ------------------------------------------------------------------------------------ kernels of the live test


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * row_stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B for row-major f16 A (MxK), B (KxN); f32 accumulate, output in C's type (an f16 C passes its
    results through v_mov_b16_e64). 2-D grid of BMxBN tiles."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def atomic_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Each program reduces its block in registers/LDS, then one atomic add per program into out[0]."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@triton.jit
def int_ops_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Integer ALU plus tl.where: signed div/rem, shifts, xor, min; division guarded where y == 0."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    safe = tl.where(y == 0, 1, y)
    q = tl.where(y == 0, -1, x // safe)
    r = tl.where(y == 0, 0, x % safe)
    mixed = ((x << 3) ^ (y >> 2)) + tl.minimum(x, y) * q + r
    tl.store(out_ptr + offs, mixed, mask=mask)


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Inclusive prefix sum within each program's block (a scan across lanes and warps)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=0), mask=mask)


@triton.jit
def dot_tile_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, OUT: tl.constexpr):
    """One unmasked MxK @ KxN tile (constexpr shape: vectorized loads, no masks); OUT is the accumulator type."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=OUT))


@triton.jit
def math_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """f16 in, bf16 out; transcendental (ocml/native), sqrt, abs and an IEEE f32 division in between."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.sqrt(tl.abs(x)) + tl.sin(x) * tl.cos(x) + tl.log(tl.abs(x) + 1) + tl.exp2(x) / (x * x + 1)
    tl.store(out_ptr + offs, y.to(tl.bfloat16), mask=mask)


@triton.jit
def randint_kernel(out_ptr, seed, n, BLOCK: tl.constexpr):
    """Philox: 32-bit umulhi, wrapping multiplies and xors."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.randint(seed, offs), mask=offs < n)


@triton.jit
def int64_kernel(x_ptr, out_ptr, f_ptr, n, BLOCK: tl.constexpr):
    """64-bit integer multiply/shift/division and f64 arithmetic (both expanded into 32-bit ops or DPFP)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * -7046029254386353131 + (x >> 7) // 3, mask=mask)
    tl.store(f_ptr + offs, x.to(tl.float64) * 1.5 / 7.0, mask=mask)


@triton.jit
def argmax_sort_kernel(x_ptr, idx_ptr, sorted_ptr, BLOCK: tl.constexpr):
    """Per row: tl.argmax (value+index reduction) and tl.sort (bitonic network across lanes and warps)."""
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    tl.store(idx_ptr + row, tl.argmax(x, axis=0))
    tl.store(sorted_ptr + row * BLOCK + tl.arange(0, BLOCK), tl.sort(x))


@triton.jit
def contended_atomics_kernel(x_ptr, max_ptr, count_ptr, n, BLOCK: tl.constexpr):
    """Many lanes hit the same address: atomic max into 4 slots, atomic add of 1 into 8 counters."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_max(max_ptr + offs % 4, tl.load(x_ptr + offs, mask=mask), mask=mask)
    tl.atomic_add(count_ptr + offs % 8, 1, mask=mask)


@triton.jit
def histogram_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, BINS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BINS), tl.histogram(x, BINS))


@triton.jit
def layernorm_kernel(x_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    """Two reductions per row (mean, variance) and rsqrt; an f32 scalar argument."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    d = tl.where(mask, x - tl.sum(x, axis=0) / n_cols, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    tl.store(out_ptr + row * n_cols + cols, d * tl.rsqrt(var + eps), mask=mask)


@triton.jit
def fp8_roundtrip_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """f32 -> fp8e5 (no hardware fp8 on gfx1100: a bit-twiddling software conversion) -> f32."""
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.float8e5).to(tl.float32))


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, D: tl.constexpr, BM: tl.constexpr,
                           BN: tl.constexpr):
    """softmax(Q K^T * scale) V for f16 Q, K, V (seq x D), online softmax in f32 over BN-key blocks, f16 out.
    Compiled for gfx1100, LLVM 20+ keeps f16 halves in v128-v255 and moves them with v_mov_b16_e64 (a
    True16-only encoding), and spills to scratch."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :], mask=rm[:, None] < seq, other=0.0)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, seq, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[None, :] * D + rd[:, None], mask=rn[None, :] < seq, other=0.0)
        s = tl.where(rn[None, :] < seq, tl.dot(q, k) * scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :], mask=rn[:, None] < seq, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(tl.float16), mask=rm[:, None] < seq)


@triton.jit
def f16_product_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """(f32(a) * b).to(f16) with f16 a and f32 b: LLVM selects v_fma_mixlo_f16, whose f32 rounding then f16
    rounding must match the IR's fmul + fptrunc."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (a * b).to(tl.float16), mask=mask)



# ------------------------------------------------------------------------------------ more kernels of the corpus


@triton.jit
def mul_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """tl.fma: one rounding (v_fma_f32 / v_fma_f16)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x, y, z = tl.load(x_ptr + offs, mask=mask), tl.load(y_ptr + offs, mask=mask), tl.load(z_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.fma(x, y, z), mask=mask)


@triton.jit
def saxpy_kernel(y_ptr, x_ptr, a, n, BLOCK: tl.constexpr):
    """y = a * x + y in place, with an f32 scalar argument."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def masked_fill_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Masked load with a fill value; the store covers the whole padded block, so the tail shows the fill."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=-7.0) * 2.0)


@triton.jit
def cast_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A conversion to the output pointer's element type (fptrunc, fptosi, sitofp, fpext, bf16 rounding)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def math_f32_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """tl.where over exp / log / sqrt / sin in f32."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.where(x > 0, tl.log(x + 1.0), tl.exp(x)) + tl.sqrt(tl.abs(x)) * tl.sin(x)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def row_reduce_kernel(x_ptr, sum_ptr, max_ptr, argmax_ptr, n_cols, BLOCK: tl.constexpr):
    """Per row: sum, max and argmax of a masked row (odd width)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    tl.store(max_ptr + row, tl.max(x, axis=0))
    tl.store(argmax_ptr + row, tl.argmax(x, axis=0))
    tl.store(sum_ptr + row, tl.sum(tl.where(mask, x, 0.0), axis=0))


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """A 2-D tile reduced along axis 0 (across warps, through LDS)."""
    r, c = tl.arange(0, ROWS), tl.arange(0, COLS)
    x = tl.load(x_ptr + r[:, None] * COLS + c[None, :])
    tl.store(out_ptr + c, tl.sum(x, axis=0))


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rms = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(out_ptr + row * n_cols + cols, x * rms * w, mask=mask)


@triton.jit
def layernorm_affine_kernel(x_ptr, w_ptr, b_ptr, out_ptr, mean_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    """LayerNorm forward with weight and bias, f16 in and out, statistics in f32 (as Triton's tutorial keeps them)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, (d * rstd * w + b).to(tl.float16), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _affine_combine(a1, b1, a2, b2):
    """Composition of x -> a*x + b maps: the linear recurrence h = a*h + b as a scan."""
    return a1 * a2, b1 * a2 + b2


@triton.jit
def scan_max_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """tl.associative_scan with a user combine function (running maximum) over each row."""
    row = tl.program_id(0)
    offs = row * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.associative_scan(tl.load(x_ptr + offs), 0, _max_combine))


@triton.jit
def linear_recurrence_kernel(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    """A two-operand associative scan: h[t] = a[t] * h[t-1] + b[t], h[-1] = 0."""
    offs = tl.arange(0, BLOCK)
    _, h = tl.associative_scan((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), 0, _affine_combine)
    tl.store(out_ptr + offs, h)


@triton.jit
def cumsum_2d_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr, AXIS: tl.constexpr):
    r, c = tl.arange(0, ROWS), tl.arange(0, COLS)
    offs = r[:, None] * COLS + c[None, :]
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=AXIS))


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """out (N x M) = x (M x N) transposed, tile by tile with tl.trans (a layout change through LDS), masked edges."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[:, None] * M + rm[None, :], tl.trans(x), mask=tl.trans(mask))


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[i] = x[idx[i]]: data-dependent addresses."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + idx, mask=mask), mask=mask)


@triton.jit
def scatter_add_kernel(idx_ptr, val_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[idx[i]] += val[i] with atomic adds (integer values: the result does not depend on the order)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(out_ptr + tl.load(idx_ptr + offs, mask=mask), tl.load(val_ptr + offs, mask=mask), mask=mask)


@triton.jit
def atomic_cas_kernel(slot_ptr, expect_ptr, old_ptr, n, BLOCK: tl.constexpr):
    """Each lane compare-and-swaps its own slot: new value i + 1000 where slot == expect; the old value comes back."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    old = tl.atomic_cas(slot_ptr + offs, tl.load(expect_ptr + offs, mask=mask, other=0), offs + 1000)
    tl.store(old_ptr + offs, old, mask=mask)


@triton.jit
def atomic_minmax_xchg_kernel(x_ptr, min_ptr, max_ptr, xchg_ptr, n, BLOCK: tl.constexpr):
    """Per-program atomic min and max of a block into one slot per program-modulo-3, and an exchange."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_min(min_ptr + pid % 3, tl.min(x, axis=0))
    tl.atomic_max(max_ptr + pid % 3, tl.max(x, axis=0))
    tl.atomic_xchg(xchg_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def spill_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """A whole 32x256 f32 tile per warp (256 values per lane) stays live across a row reduction: with the
    temporaries, more than the 256 VGPRs a wave has, so LLVM spills to scratch (private segment)."""
    r, c = tl.arange(0, ROWS), tl.arange(0, COLS)
    offs = r[:, None] * COLS + c[None, :]
    x = tl.load(x_ptr + offs)
    y = tl.exp(x * 0.5)
    s = tl.sum(y, axis=1)
    tl.store(out_ptr + offs, y / s[:, None] + x)


@triton.jit
def fp8_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """An fp8 (e5m2 or e4m3 by pointer type) MxK @ KxN tile, f32 accumulate."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=tl.float32))


@triton.jit
def matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                            BK: tl.constexpr):
    """relu(A @ B + bias) with a K loop (f16 in, f32 out): a fused epilogue after the dots."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.maximum(acc, 0.0), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def libdevice_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """ocml through libdevice: tanh, erf, pow (long polynomial and range-reduction sequences)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    out = libdevice.tanh(x) + libdevice.erf(y) + libdevice.pow(tl.abs(x) + 0.5, y)
    tl.store(out_ptr + offs, out, mask=mask)


@triton.jit
def interleave_flip_kernel(a_ptr, b_ptr, out_ptr, flip_ptr, BLOCK: tl.constexpr):
    """tl.interleave (join + reshape) and tl.flip: register shuffles across lanes."""
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + tl.arange(0, 2 * BLOCK), tl.interleave(a, b))
    tl.store(flip_ptr + offs, tl.flip(a, 0))


@triton.jit
def unsigned_ops_kernel(x_ptr, y_ptr, hi_ptr, q_ptr, BLOCK: tl.constexpr):
    """Unsigned 32-bit: tl.umulhi, division and remainder by a constant (magic-number multiply) and by a variable."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(hi_ptr + offs, tl.umulhi(x, y))
    tl.store(q_ptr + offs, x // 7 + x % 1000 + x // (y | 1))


@triton.jit
def atomic_add_i64_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """64-bit atomic adds into 4 slots."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(out_ptr + offs % 4, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def sort_descending_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = row * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.sort(tl.load(x_ptr + offs), descending=True))


@triton.jit
def matmul_bf16_pipelined_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                                 BK: tl.constexpr, STAGES: tl.constexpr):
    """bf16 A @ B with a K loop software-pipelined over STAGES LDS buffers (tl.range num_stages)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=STAGES):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def ieee_div_sqrt_kernel(x_ptr, y_ptr, div_ptr, sqrt_ptr, n, BLOCK: tl.constexpr):
    """Correctly rounded division and square root (tl.div_rn, tl.sqrt_rn): the v_div_scale / v_div_fmas /
    v_div_fixup and sqrt refinement sequences must give numpy's (IEEE) bits."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(div_ptr + offs, tl.div_rn(x, y), mask=mask)
    tl.store(sqrt_ptr + offs, tl.sqrt_rn(tl.abs(x)), mask=mask)


@triton.jit
def nan_minmax_kernel(x_ptr, y_ptr, max_ptr, maxnan_ptr, clamp_ptr, BLOCK: tl.constexpr):
    """NaN handling: tl.maximum (maxnum: a NaN operand gives the other), propagate_nan=ALL, and tl.clamp."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(max_ptr + offs, tl.maximum(x, y))
    tl.store(maxnan_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(clamp_ptr + offs, tl.clamp(y, -0.5, 0.5))


@triton.jit
def small_int_kernel(a_ptr, b_ptr, out16_ptr, out8_ptr, BLOCK: tl.constexpr):
    """16- and 8-bit integer arithmetic, wrapping: i16 multiply-add and arithmetic shift, u8 add and xor."""
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out16_ptr + offs, a * b + (a >> 3))
    ua = a.to(tl.uint8)
    ub = b.to(tl.uint8)
    tl.store(out8_ptr + offs, (ua + ub) ^ (ub >> 1))


@triton.jit
def _xor_combine(a, b):
    return a ^ b


@triton.jit
def reduce_custom_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """tl.reduce with a user combine function (xor) along each row."""
    r, c = tl.arange(0, ROWS), tl.arange(0, COLS)
    x = tl.load(x_ptr + r[:, None] * COLS + c[None, :])
    tl.store(out_ptr + r, tl.reduce(x, 1, _xor_combine))


@triton.jit
def register_gather_kernel(x_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    """tl.gather: a permutation of a tensor held in registers (not a memory gather)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(x, idx, 0))


@triton.jit
def f64_div_sqrt_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """f64 division and square root (v_div_scale_f64 ... and v_rsq_f64 refinement)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, x / y + tl.sqrt(tl.abs(x)), mask=mask)


@triton.jit
def dot_scaled_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                      AF: tl.constexpr, BF: tl.constexpr):
    """One MxK @ KxN microscaled tile (tl.dot_scaled): A and B as uint8 codes of formats AF and BF (e2m1 two per byte
    along K, the even k in the low nibble), their E8M0 scales one per 32 k: as [M, K/32], bs [N, K/32]."""
    KA: tl.constexpr = K // 2 if AF == "e2m1" else K
    KB: tl.constexpr = K // 2 if BF == "e2m1" else K
    rm, rn, ka, kb, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, KA), tl.arange(0, KB), tl.arange(0, K // 32)
    a = tl.load(a_ptr + rm[:, None] * KA + ka[None, :])
    b = tl.load(b_ptr + kb[:, None] * N + rn[None, :])
    sa = tl.load(as_ptr + rm[:, None] * (K // 32) + ks[None, :])
    sb = tl.load(bs_ptr + rn[:, None] * (K // 32) + ks[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot_scaled(a, sa, AF, b, sb, BF))


@triton.jit
def dot_scaled_mn_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """One MxK @ KxN e2m1 microscaled tile whose operands are packed along M and N, not K (lhs_k_pack=False,
    rhs_k_pack=False: gfx950 loads them with ds_read_b64_tr_b4): a [M/2, K] and b [K, N/2] uint8, two codes per byte
    (the even m / n in the low nibble), their E8M0 scales one per 32 k: as [M, K/32], bs [N, K/32]."""
    rm2, rn2, rk, ks = tl.arange(0, M // 2), tl.arange(0, N // 2), tl.arange(0, K), tl.arange(0, K // 32)
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    a = tl.load(a_ptr + rm2[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * (N // 2) + rn2[None, :])
    sa = tl.load(as_ptr + rm[:, None] * (K // 32) + ks[None, :])
    sb = tl.load(bs_ptr + rn[:, None] * (K // 32) + ks[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :],
             tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1", lhs_k_pack=False, rhs_k_pack=False))
