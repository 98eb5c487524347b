// MFMA kernels for gfx942 (tests/simgpu/shader/test_mfma_gfx942.py), compiled by clang-19 with builtins only:
// `python -m tools.gen_opencl_corpus --arch gfx942` regenerates mfma_gfx942.so. One wave of 64 work-items; work-item
// l passes lane l's registers: a[l] and b[l] hold its A and B operand registers, c[l] its C registers, and d[l]
// receives its D registers (the builtin's vector types are the registers, element 0 lowest).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

typedef float v2f __attribute__((ext_vector_type(2)));
typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v16f __attribute__((ext_vector_type(16)));
typedef float v32f __attribute__((ext_vector_type(32)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v16i __attribute__((ext_vector_type(16)));
typedef int v32i __attribute__((ext_vector_type(32)));
typedef half v4h __attribute__((ext_vector_type(4)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef double v4d __attribute__((ext_vector_type(4)));

#define LANE __builtin_amdgcn_workitem_id_x()
#define MFMA(NAME, BUILTIN, TA, TC)                                                                              \
  __kernel void NAME(__global TC *d, __global const TA *a, __global const TA *b, __global const TC *c) {         \
    int l = LANE;                                                                                                \
    d[l] = BUILTIN(a[l], b[l], c[l], 0, 0, 0);                                                                   \
  }

MFMA(f32_32x32x1_2b_f32, __builtin_amdgcn_mfma_f32_32x32x1f32, float, v32f)
MFMA(f32_16x16x1_4b_f32, __builtin_amdgcn_mfma_f32_16x16x1f32, float, v16f)
MFMA(f32_4x4x1_16b_f32, __builtin_amdgcn_mfma_f32_4x4x1f32, float, v4f)
MFMA(f32_32x32x2_f32, __builtin_amdgcn_mfma_f32_32x32x2f32, float, v16f)
MFMA(f32_16x16x4_f32, __builtin_amdgcn_mfma_f32_16x16x4f32, float, v4f)
MFMA(f32_16x16x8_xf32, __builtin_amdgcn_mfma_f32_16x16x8_xf32, v2f, v4f)
MFMA(f32_32x32x4_xf32, __builtin_amdgcn_mfma_f32_32x32x4_xf32, v2f, v16f)
MFMA(f32_32x32x4_2b_f16, __builtin_amdgcn_mfma_f32_32x32x4f16, v4h, v32f)
MFMA(f32_16x16x4_4b_f16, __builtin_amdgcn_mfma_f32_16x16x4f16, v4h, v16f)
MFMA(f32_4x4x4_16b_f16, __builtin_amdgcn_mfma_f32_4x4x4f16, v4h, v4f)
MFMA(f32_32x32x8_f16, __builtin_amdgcn_mfma_f32_32x32x8f16, v4h, v16f)
MFMA(f32_16x16x16_f16, __builtin_amdgcn_mfma_f32_16x16x16f16, v4h, v4f)
MFMA(f32_32x32x4_2b_bf16, __builtin_amdgcn_mfma_f32_32x32x4bf16_1k, v4s, v32f)
MFMA(f32_16x16x4_4b_bf16, __builtin_amdgcn_mfma_f32_16x16x4bf16_1k, v4s, v16f)
MFMA(f32_4x4x4_16b_bf16, __builtin_amdgcn_mfma_f32_4x4x4bf16_1k, v4s, v4f)
MFMA(f32_32x32x8_bf16, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k, v4s, v16f)
MFMA(f32_16x16x16_bf16, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k, v4s, v4f)
MFMA(i32_32x32x4_2b_i8, __builtin_amdgcn_mfma_i32_32x32x4i8, int, v32i)
MFMA(i32_16x16x4_4b_i8, __builtin_amdgcn_mfma_i32_16x16x4i8, int, v16i)
MFMA(i32_4x4x4_16b_i8, __builtin_amdgcn_mfma_i32_4x4x4i8, int, v4i)
MFMA(i32_32x32x16_i8, __builtin_amdgcn_mfma_i32_32x32x16_i8, long, v16i)
MFMA(i32_16x16x32_i8, __builtin_amdgcn_mfma_i32_16x16x32_i8, long, v4i)
MFMA(f64_16x16x4_f64, __builtin_amdgcn_mfma_f64_16x16x4f64, double, v4d)
MFMA(f64_4x4x4_4b_f64, __builtin_amdgcn_mfma_f64_4x4x4f64, double, double)
MFMA(f32_16x16x32_fp8_fp8, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8, long, v4f)
MFMA(f32_16x16x32_fp8_bf8, __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8, long, v4f)
MFMA(f32_16x16x32_bf8_fp8, __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8, long, v4f)
MFMA(f32_16x16x32_bf8_bf8, __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8, long, v4f)
MFMA(f32_32x32x16_fp8_fp8, __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8, long, v16f)
MFMA(f32_32x32x16_fp8_bf8, __builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8, long, v16f)
MFMA(f32_32x32x16_bf8_fp8, __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8, long, v16f)
MFMA(f32_32x32x16_bf8_bf8, __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8, long, v16f)

// The broadcasts: CBSZ / ABID (A's blocks) and BLGP (B's lane groups), the kernel's name ending in the three values.
#define MFMA_MOD(NAME, BUILTIN, TA, TC, CBSZ, ABID, BLGP)                                                        \
  __kernel void NAME##_c##CBSZ##_a##ABID##_b##BLGP(__global TC *d, __global const TA *a, __global const TA *b,    \
                                                   __global const TC *c) {                                      \
    int l = LANE;                                                                                                \
    d[l] = BUILTIN(a[l], b[l], c[l], CBSZ, ABID, BLGP);                                                          \
  }

MFMA_MOD(f32_4x4x4_16b_f16, __builtin_amdgcn_mfma_f32_4x4x4f16, v4h, v4f, 2, 3, 7)
MFMA_MOD(f32_16x16x1_4b_f32, __builtin_amdgcn_mfma_f32_16x16x1f32, float, v16f, 1, 1, 3)
MFMA_MOD(f32_32x32x1_2b_f32, __builtin_amdgcn_mfma_f32_32x32x1f32, float, v32f, 1, 0, 1)
MFMA_MOD(i32_4x4x4_16b_i8, __builtin_amdgcn_mfma_i32_4x4x4i8, int, v4i, 4, 13, 5)
MFMA_MOD(f32_16x16x4_4b_bf16, __builtin_amdgcn_mfma_f32_16x16x4bf16_1k, v4s, v16f, 2, 2, 2)
MFMA_MOD(f32_16x16x4_f32, __builtin_amdgcn_mfma_f32_16x16x4f32, float, v4f, 0, 0, 6)
MFMA_MOD(f32_32x32x8_f16, __builtin_amdgcn_mfma_f32_32x32x8f16, v4h, v16f, 0, 0, 4)

// A 64 x 64 x 64 f16 matrix product from 32x32x8 MFMAs: each wave of a 2 x 2 grid of 64-item workgroups makes one
// 32 x 32 tile of D = A x B, A row-major M x K, B row-major K x N, accumulating over K in 8 steps of 8 in AccVGPRs.
__kernel void gemm_f16(__global float *d, __global const half *a, __global const half *b, int n) {
  int l = LANE, ti = __builtin_amdgcn_workgroup_id_y() * 32, tj = __builtin_amdgcn_workgroup_id_x() * 32;
  v16f acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += 8) {
    v4h av, bv;
    for (int e = 0; e < 4; e++) {
      int k = k0 + (l / 32) * 4 + e;
      av[e] = a[(ti + l % 32) * n + k];
      bv[e] = b[k * n + tj + l % 32];
    }
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; r++) {
    int i = (r / 4) * 8 + (l / 32) * 4 + r % 4;
    d[(ti + i) * n + tj + l % 32] = acc[r];
  }
}
