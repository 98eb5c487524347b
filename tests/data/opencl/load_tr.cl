// Transposing loads for gfx1201 (tests/simgpu/shader/test_load_tr_gfx12.py), compiled by clang-19 with builtins only:
// `python -m tools.gen_opencl_corpus --arch gfx1201` builds load_tr_gfx1201.so (wave32) and, with -mwavefrontsize64,
// load_tr_w64_gfx1201.so (whose loads the engine refuses). Work-item l loads at src + offset[l] (in elements of the
// row type: 8 bytes for tr_b64, 16 for tr_b128) and stores what it receives at d[l].
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef int v2i __attribute__((ext_vector_type(2)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef short v8s __attribute__((ext_vector_type(8)));
typedef half v8h __attribute__((ext_vector_type(8)));

#define LANE __builtin_amdgcn_workitem_id_x()

#if __AMDGCN_WAVEFRONT_SIZE == 64
__kernel void tr_b64(__global int *d, __global int *src, __global const int *offset) {
  int l = LANE;
  d[l] = __builtin_amdgcn_global_load_tr_b64_i32(src + offset[l]);
}
__kernel void tr_b128_i16(__global v4s *d, __global v4s *src, __global const int *offset) {
  int l = LANE;
  d[l] = __builtin_amdgcn_global_load_tr_b128_v4i16(src + offset[l]);
}
#else
__kernel void tr_b64(__global v2i *d, __global v2i *src, __global const int *offset) {
  int l = LANE;
  d[l] = __builtin_amdgcn_global_load_tr_b64_v2i32(src + offset[l]);
}
__kernel void tr_b128_i16(__global v8s *d, __global v8s *src, __global const int *offset) {
  int l = LANE;
  d[l] = __builtin_amdgcn_global_load_tr_b128_v8i16(src + offset[l]);
}
__kernel void tr_b128_f16(__global v8h *d, __global v8h *src, __global const int *offset) {
  int l = LANE;
  d[l] = __builtin_amdgcn_global_load_tr_b128_v8f16(src + offset[l]);
}
// The use the transpose is for: the WMMA B operand (RDNA4 layout) of a row-major 16x16 f16 B, straight from memory.
// Lane l of group g (l = 8g + j) addresses row k of B at columns 8 * (g % 2) .. + 7 of half ((g / 2) ... ): see the
// test for the addresses; the result feeds v_wmma_f32_16x16x16_f16 with A from a.
typedef float v8f __attribute__((ext_vector_type(8)));
__kernel void wmma_b_from_tr(__global v8f *d, __global const v8h *a, __global v8h *b, __global const int *offset) {
  int l = LANE;
  v8h lo = __builtin_amdgcn_global_load_tr_b128_v8f16(b + offset[l]);
  v8f c = {0, 0, 0, 0, 0, 0, 0, 0};
  d[l] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[l], lo, c);
}
#endif
