// Division as a program writes it, for tests/simgpu/shader/test_jit_div.py: clang-19 expands a / b into v_div_scale,
// v_rcp, Newton-Raphson FMAs, v_div_fmas and v_div_fixup (f32 with -cl-fp32-correctly-rounded-divide-sqrt, which
// OpenCL needs for a correctly rounded quotient; f64 always). Builtins only: `python -m tools.gen_opencl_corpus
// --arch gfx1100` regenerates fdiv_gfx1100.so.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define GID_X (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

__kernel void fdiv(__global float *q, __global const float *a, __global const float *b) {
  int i = GID_X;
  q[i] = a[i] / b[i];
}

__kernel void ddiv(__global double *q, __global const double *a, __global const double *b) {
  int i = GID_X;
  q[i] = a[i] / b[i];
}
