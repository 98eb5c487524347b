// The hand-written reference of bench/bench_compiler.py: one work-item per output element, a loop over k,
// no LDS. Builtins only (no device libraries): clang-19 -x cl -target amdgcn-amd-amdhsa -mcpu=gfx1100
// -nogpulib -O2.
#define LID_X __builtin_amdgcn_workitem_id_x()
#define LID_Y __builtin_amdgcn_workitem_id_y()
#define GID_X (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + LID_X)
#define GID_Y (__builtin_amdgcn_workgroup_id_y() * __builtin_amdgcn_workgroup_size_y() + LID_Y)

__kernel void matmul_naive(__global float *c, __global const float *a, __global const float *b, int n) {
  int col = GID_X, row = GID_Y;
  float acc = 0.0f;
  for (int k = 0; k < n; k++)
    acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
