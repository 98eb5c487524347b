// Test kernels in OpenCL C for tests/test_corpus_opencl.py, compiled by clang-19 for gfx1100, gfx1201 and gfx942 with
// builtins only (no device libraries): `python tools/gen_opencl_corpus.py` regenerates corpus.so.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define LID_X __builtin_amdgcn_workitem_id_x()
#define LID_Y __builtin_amdgcn_workitem_id_y()
#define GRP_X __builtin_amdgcn_workgroup_id_x()
#define GRP_Y __builtin_amdgcn_workgroup_id_y()
// The workgroup size comes from the hidden kernel arguments (code object v5 implicit args).
#define GID_X (GRP_X * __builtin_amdgcn_workgroup_size_x() + LID_X)

static void barrier_local(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__kernel void saxpy(__global float *y, __global const float *x, float a, int n) {
  int i = GID_X;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Tree reduction of 256 ints per workgroup in LDS.
__kernel void group_sum(__global int *out, __global const int *in) {
  __local int tmp[256];
  int l = LID_X;
  tmp[l] = in[GID_X];
  barrier_local();
  for (int s = 128; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier_local();
  }
  if (l == 0) out[GRP_X] = tmp[0];
}

// 16-bin histogram with global atomics.
__kernel void histogram(__global int *bins, __global const uint *in, int n) {
  int i = GID_X;
  if (i < n) __atomic_fetch_add(&bins[in[i] & 15], 1, __ATOMIC_RELAXED);
}

// 16x16 tile transpose through LDS on a 2-D launch; width and height are multiples of 16.
__kernel void transpose(__global float *out, __global const float *in, int width, int height) {
  __local float tile[16][17];
  int x = GRP_X * 16 + LID_X, y = GRP_Y * 16 + LID_Y;
  tile[LID_Y][LID_X] = in[y * width + x];
  barrier_local();
  int tx = GRP_Y * 16 + LID_X, ty = GRP_X * 16 + LID_Y;
  out[ty * height + tx] = tile[LID_X][LID_Y];
}

// Integer division and remainder, 32- and 64-bit, signed and unsigned (expanded by the compiler).
__kernel void divmod(__global int *q32, __global int *r32, __global uint *uq32, __global long *q64,
                     __global ulong *ur64, __global const int *a, __global const int *b,
                     __global const long *a64, __global const long *b64) {
  int i = GID_X;
  q32[i] = a[i] / b[i];
  r32[i] = a[i] % b[i];
  uq32[i] = (uint)a[i] / (uint)b[i];
  q64[i] = a64[i] / b64[i];
  ur64[i] = (ulong)a64[i] % (ulong)b64[i];
}

// Correctly rounded float operations: fma, fabs, floor, ceil, rint, trunc, fmin, fmax, copysign.
__kernel void float_ops(__global float *out, __global const float *x, __global const float *y,
                        __global const float *z) {
  int i = GID_X;
  float a = x[i], b = y[i], c = z[i];
  __global float *o = out + 9 * i;
  o[0] = __builtin_fmaf(a, b, c);
  o[1] = __builtin_fabsf(a);
  o[2] = __builtin_floorf(a);
  o[3] = __builtin_ceilf(a);
  o[4] = __builtin_rintf(a);
  o[5] = __builtin_truncf(a);
  o[6] = __builtin_fminf(a, b);
  o[7] = __builtin_fmaxf(a, b);
  o[8] = __builtin_copysignf(a, b);
}

__kernel void sqrt_f32(__global float *out, __global const float *x) {
  int i = GID_X;
  out[i] = __builtin_sqrtf(x[i]);
}

__kernel void double_ops(__global double *out, __global const double *x, __global const double *y,
                         __global const double *z) {
  int i = GID_X;
  out[3 * i] = __builtin_fma(x[i], y[i], z[i]);
  out[3 * i + 1] = x[i] * y[i] + z[i];
  out[3 * i + 2] = x[i] / y[i];
}

__kernel void half_ops(__global half *out, __global const half *x, __global const half *y) {
  int i = GID_X;
  out[2 * i] = x[i] * y[i];
  out[2 * i + 1] = (half)((float)x[i] + (float)y[i]);
}

// 64-bit integer arithmetic and bit counts.
__kernel void long_ops(__global ulong *out, __global const ulong *x, __global const ulong *y) {
  int i = GID_X;
  ulong a = x[i], b = y[i];
  __global ulong *o = out + 6 * i;
  o[0] = a * b;
  o[1] = (a << (b & 63)) ^ (a >> ((b >> 8) & 63));
  o[2] = (ulong)((long)a >> (b & 63));
  o[3] = __builtin_popcountl(a);
  o[4] = a ? __builtin_clzl(a) : 64;
  o[5] = a ? __builtin_ctzl(a) : 64;
}

// Wave-level builtins: readfirstlane, ballot, ds_bpermute (lane i reads lane W - 1 - i of its wave of W lanes). A
// wave64 target (gfx942) stores the 32 bits of the ballot that hold the lane's own bit.
__kernel void wave_ops(__global uint *out, __global const uint *in) {
  int i = GID_X;
  uint v = in[i];
  out[3 * i] = __builtin_amdgcn_readfirstlane(v);
#if __AMDGCN_WAVEFRONT_SIZE == 64
  out[3 * i + 1] = (uint)(__builtin_amdgcn_ballot_w64((v & 1) != 0) >> (LID_X & 32));
  out[3 * i + 2] = __builtin_amdgcn_ds_bpermute((63 - (LID_X & 63)) * 4, v);
#else
  out[3 * i + 1] = __builtin_amdgcn_ballot_w32((v & 1) != 0);
  out[3 * i + 2] = __builtin_amdgcn_ds_bpermute((31 - (LID_X & 31)) * 4, v);
#endif
}

// A data-dependent loop: Collatz steps to reach 1 (divergent trip counts within a wave).
__kernel void collatz(__global int *steps, __global const uint *start) {
  int i = GID_X;
  uint v = start[i];
  int k = 0;
  while (v != 1 && k < 1000) {
    v = (v & 1) ? 3 * v + 1 : v >> 1;
    k++;
  }
  steps[i] = k;
}

// A dynamically indexed private array (scratch memory).
__kernel void private_array(__global int *out, __global const int *in) {
  int i = GID_X;
  int tmp[32];
  for (int k = 0; k < 32; k++) tmp[k] = in[i] * k;
  int acc = 0;
  for (int k = 0; k < 32; k++) acc += tmp[(k * 7 + in[i]) & 31] ^ k;
  out[i] = acc;
}

// Naive square matmul on a 2-D launch: one output per work-item, an n-step loop of fma (clang contracts
// acc + a * b). The benchmark's kernel (bench/bench_jit.py) at n = 256.
__kernel void matmul(__global float *c, __global const float *a, __global const float *b, int n) {
  int col = GID_X;
  int row = GRP_Y * __builtin_amdgcn_workgroup_size_y() + LID_Y;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
