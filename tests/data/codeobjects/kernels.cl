__kernel void saxpy(__global float *y, __global const float *x, float a, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  if (i < n) y[i] = a * x[i] + y[i];
}

__constant int table[4] = {1, 2, 3, 4};
__constant int other[4] = {5, 6, 7, 8};
__constant int *__constant ptrs[2] = {table, other};

__kernel void lookup(__global int *out, __local int *scratch) {
  int i = __builtin_amdgcn_workitem_id_x();
  scratch[i] = table[i & 3];
  __builtin_amdgcn_s_barrier();
  out[__builtin_amdgcn_workgroup_id_x() * 64 + i] = scratch[(i + 1) & 63];
}

__kernel void pick(__global int *out, int which) {
  int i = __builtin_amdgcn_workitem_id_x();
  out[i] = ptrs[which & 1][i & 3];
}
