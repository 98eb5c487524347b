// y = a * x + y, one element per work-item. Compiled by examples/opencl_saxpy.py with clang-19.
#include "simgpu_opencl.h"

__kernel void saxpy(__global float *y, __global const float *x, float a, uint n) {
  size_t i = get_global_id(0);
  if (i < n)
    y[i] = a * x[i] + y[i];
}

// Each workgroup sums its 256 inputs in LDS; out[group] = the sum.
__kernel void group_sum(__global float *out, __global const float *in) {
  __local float tmp[256];
  size_t l = get_local_id(0);
  tmp[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s)
      tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0)
    out[get_group_id(0)] = tmp[0];
}
