// SMFMAC (sparse A) kernels for gfx942 (tests/simgpu/shader/test_smfmac.py), compiled by clang-19 with builtins
// only: `python -m tools.gen_opencl_corpus --arch gfx942` regenerates smfmac_gfx942.so. One wave of 64 work-items:
// work-item l passes lane l's registers: a[l] (A's compressed values), b[l] (B), k[l] (the index VGPR), c[l] (the
// accumulator, which the SMFMAC reads and writes in place) and receives D in d[l]. The kernel's name ends in the
// CBSZ and ABID it passes (the index set it selects).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v16f __attribute__((ext_vector_type(16)));
typedef int v2i __attribute__((ext_vector_type(2)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v16i __attribute__((ext_vector_type(16)));
typedef half v4h __attribute__((ext_vector_type(4)));
typedef half v8h __attribute__((ext_vector_type(8)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef short v8s __attribute__((ext_vector_type(8)));

#define LANE __builtin_amdgcn_workitem_id_x()
#define SMFMAC(NAME, BUILTIN, TA, TB, TC, CBSZ, ABID)                                                           \
  __kernel void NAME##_##CBSZ##_##ABID(__global TC *d, __global const TA *a, __global const TB *b,              \
                                       __global const int *k, __global const TC *c) {                         \
    int l = LANE;                                                                                             \
    d[l] = BUILTIN(a[l], b[l], c[l], k[l], CBSZ, ABID);                                                       \
  }

SMFMAC(f32_16x16x32_f16, __builtin_amdgcn_smfmac_f32_16x16x32_f16, v4h, v8h, v4f, 0, 0)
SMFMAC(f32_16x16x32_f16, __builtin_amdgcn_smfmac_f32_16x16x32_f16, v4h, v8h, v4f, 0, 3)
SMFMAC(f32_16x16x32_f16, __builtin_amdgcn_smfmac_f32_16x16x32_f16, v4h, v8h, v4f, 1, 2)
SMFMAC(f32_32x32x16_f16, __builtin_amdgcn_smfmac_f32_32x32x16_f16, v4h, v8h, v16f, 0, 1)
SMFMAC(f32_16x16x32_bf16, __builtin_amdgcn_smfmac_f32_16x16x32_bf16, v4s, v8s, v4f, 0, 2)
SMFMAC(f32_32x32x16_bf16, __builtin_amdgcn_smfmac_f32_32x32x16_bf16, v4s, v8s, v16f, 0, 0)
SMFMAC(i32_16x16x64_i8, __builtin_amdgcn_smfmac_i32_16x16x64_i8, v2i, v4i, v4i, 0, 1)
SMFMAC(i32_32x32x32_i8, __builtin_amdgcn_smfmac_i32_32x32x32_i8, v2i, v4i, v16i, 0, 0)
SMFMAC(f32_16x16x64_fp8_fp8, __builtin_amdgcn_smfmac_f32_16x16x64_fp8_fp8, v2i, v4i, v4f, 0, 1)
SMFMAC(f32_16x16x64_fp8_bf8, __builtin_amdgcn_smfmac_f32_16x16x64_fp8_bf8, v2i, v4i, v4f, 0, 0)
SMFMAC(f32_16x16x64_bf8_fp8, __builtin_amdgcn_smfmac_f32_16x16x64_bf8_fp8, v2i, v4i, v4f, 1, 1)
SMFMAC(f32_16x16x64_bf8_bf8, __builtin_amdgcn_smfmac_f32_16x16x64_bf8_bf8, v2i, v4i, v4f, 0, 1)
SMFMAC(f32_32x32x32_fp8_fp8, __builtin_amdgcn_smfmac_f32_32x32x32_fp8_fp8, v2i, v4i, v16f, 0, 0)
SMFMAC(f32_32x32x32_fp8_bf8, __builtin_amdgcn_smfmac_f32_32x32x32_fp8_bf8, v2i, v4i, v16f, 0, 1)
SMFMAC(f32_32x32x32_bf8_fp8, __builtin_amdgcn_smfmac_f32_32x32x32_bf8_fp8, v2i, v4i, v16f, 0, 0)
SMFMAC(f32_32x32x32_bf8_bf8, __builtin_amdgcn_smfmac_f32_32x32x32_bf8_bf8, v2i, v4i, v16f, 0, 1)
