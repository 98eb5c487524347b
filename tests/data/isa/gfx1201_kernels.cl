// OpenCL C for gfx1201 (no device library: builtins only). Compiled to gfx1201_kernels.o by
// clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx1201 -nogpulib -O2 -c gfx1201_kernels.cl -o gfx1201_kernels.o
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define GID (__builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x())
typedef half half8 __attribute__((ext_vector_type(8)));
typedef float float8 __attribute__((ext_vector_type(8)));
__kernel void saxpy(__global float *y, __global const float *x, float a, int n) {
  int i = GID;
  if (i < n) y[i] = a * x[i] + y[i];
}
__kernel void reduce(__global const float *x, __global int *out, int n) {
  __local float tmp[64];
  int l = __builtin_amdgcn_workitem_id_x(), g = GID;
  tmp[l] = g < n ? x[g] : 0.0f;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  for (int s = 32; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  if (l == 0) __atomic_fetch_add(out, (int)tmp[0], __ATOMIC_RELAXED);
}
__kernel void mixed(__global double *d, __global half *h, __global long *q, int n) {
  int i = GID;
  d[i] = d[i] * 3.0 + __builtin_sqrt(d[i]) / (double)n;
  h[i] = h[i] * (half)2.0 + (half)n;
  q[i] = q[i] / (long)(n + 3) + (q[i] >> 3);
}
__kernel void mma(__global const half8 *a, __global const half8 *b, __global float8 *c) {
  int i = __builtin_amdgcn_workitem_id_x();
  c[i] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[i], b[i], c[i]);
}
