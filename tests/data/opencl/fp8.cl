// fp8 / bf8 conversions as clang-19 emits them for __builtin_amdgcn_cvt_* (gfx942: FNUZ, gfx1201: OCP), for
// tests/simgpu/shader/test_cvt8.py. Builtins only: `python -m tools.gen_opencl_corpus --arch gfx942` (and gfx1201)
// regenerates fp8_gfx942.so / fp8_gfx1201.so.

#define GID_X (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

// r[4i..4i+3]: pk_fp8 (low word) then pk_bf8 (high word) over old[i]; sr_fp8 (byte 1) then sr_bf8 (byte 3) over
// old[i]; the same four into zero with the other halves and bytes
__kernel void to_fp8(__global int *r, __global const float *a, __global const float *b, __global const int *rnd,
                     __global const int *old) {
  int i = GID_X;
  float x = a[i], y = b[i];
  int o = old[i], s = rnd[i];
  int pk = __builtin_amdgcn_cvt_pk_bf8_f32(x, y, __builtin_amdgcn_cvt_pk_fp8_f32(x, y, o, false), true);
  int sr = __builtin_amdgcn_cvt_sr_bf8_f32(y, s, __builtin_amdgcn_cvt_sr_fp8_f32(x, s, o, 1), 3);
  r[4 * i] = pk;
  r[4 * i + 1] = sr;
  r[4 * i + 2] = __builtin_amdgcn_cvt_pk_fp8_f32(y, x, 0, true) | __builtin_amdgcn_cvt_pk_bf8_f32(y, x, 0, false);
  r[4 * i + 3] = __builtin_amdgcn_cvt_sr_fp8_f32(y, s, 0, 0) | __builtin_amdgcn_cvt_sr_bf8_f32(x, s, 0, 2);
}

// r[8i..8i+7]: the four bytes of c[i] as fp8, then bytes 1 and 2 as bf8, then the high word's two bytes as fp8 (pk)
__kernel void from_fp8(__global float *r, __global const int *c) {
  int i = GID_X;
  int v = c[i];
  r[8 * i] = __builtin_amdgcn_cvt_f32_fp8(v, 0);
  r[8 * i + 1] = __builtin_amdgcn_cvt_f32_fp8(v, 1);
  r[8 * i + 2] = __builtin_amdgcn_cvt_f32_fp8(v, 2);
  r[8 * i + 3] = __builtin_amdgcn_cvt_f32_fp8(v, 3);
  r[8 * i + 4] = __builtin_amdgcn_cvt_f32_bf8(v, 1);
  r[8 * i + 5] = __builtin_amdgcn_cvt_f32_bf8(v, 2);
  float2 p = __builtin_amdgcn_cvt_pk_f32_fp8(v, true);
  r[8 * i + 6] = p.x;
  r[8 * i + 7] = p.y;
}

// the same, bf8 for the pk form (low word)
__kernel void from_bf8_pk(__global float *r, __global const int *c) {
  int i = GID_X;
  float2 p = __builtin_amdgcn_cvt_pk_f32_bf8(c[i], false);
  r[2 * i] = p.x;
  r[2 * i + 1] = p.y;
}
