// ldexp as a program writes it, for tests/simgpu/shader/test_jit_ldexp.py: clang-19 lowers __builtin_ldexpf /
// __builtin_ldexpf16 to v_ldexp_f32 / v_ldexp_f16 (llvm.ldexp). Builtins only: `python -m tools.gen_opencl_corpus
// --arch gfx1100` regenerates ldexp_gfx1100.so.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define GID_X (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

__kernel void ldexp32(__global float *r, __global const float *x, __global const int *n) {
  int i = GID_X;
  r[i] = __builtin_ldexpf(x[i], n[i]);
}

__kernel void ldexp16(__global half *r, __global const half *x, __global const int *n) {
  int i = GID_X;
  r[i] = __builtin_ldexpf16(x[i], n[i]);
}
