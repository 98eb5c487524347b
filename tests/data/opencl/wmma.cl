// WMMA and SWMMAC kernels for gfx1201 (tests/simgpu/shader/test_wmma_gfx12.py), compiled by clang-19 with builtins
// only: `python -m tools.gen_opencl_corpus --arch gfx1201` builds wmma_gfx1201.so (wave32) and, with
// -mwavefrontsize64, wmma_w64_gfx1201.so from this one source. One wave per launch: work-item l passes lane l's
// registers: a[l] and b[l] its A and B operand registers, c[l] its C registers (SWMMAC: d[l] holds C and receives D),
// idx[l] its compression index VGPR; d[l] receives its D registers (the builtins' vector types are the registers,
// element 0 lowest). A kernel name is the mnemonic without its v_ prefix, then (integer forms) the signedness of A
// and B (s/u) and _clamp, then (SWMMAC) _key<N>: the index VGPR is idx[l] >> (N * the bits one set of fields takes),
// which clang folds into the instruction's index_key (OPSEL).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef int v2i __attribute__((ext_vector_type(2)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v8i __attribute__((ext_vector_type(8)));
typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef half v4h __attribute__((ext_vector_type(4)));
typedef half v8h __attribute__((ext_vector_type(8)));
typedef half v16h __attribute__((ext_vector_type(16)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef short v8s __attribute__((ext_vector_type(8)));
typedef short v16s __attribute__((ext_vector_type(16)));

#if __AMDGCN_WAVEFRONT_SIZE == 64
#define W(NAME) NAME##_w64
#define WG(NAME) NAME##_w64_gfx12
#define D16 v4h
#define D16S v4s
#define C32F v4f
#define C32I v4i
#define DENSE8 int
#define DENSE4X32 int
#define SB16 v8h
#define SB16S v8s
#define SA8 int
#define SB8 v2i
#define SB4X32 int
#define SA4X64 int
#define SB4X64 v2i
#define SET16 8   /* bits of one set of index fields: 16-bit and 8-bit A */
#define SET4 16   /* 4-bit A */
#else
#define W(NAME) NAME##_w32
#define WG(NAME) NAME##_w32_gfx12
#define D16 v8h
#define D16S v8s
#define C32F v8f
#define C32I v8i
#define DENSE8 v2i
#define DENSE4X32 v2i
#define SB16 v16h
#define SB16S v16s
#define SA8 v2i
#define SB8 v4i
#define SB4X32 v2i
#define SA4X64 v2i
#define SB4X64 v4i
#define SET16 16
#define SET4 16
#endif

#define LANE __builtin_amdgcn_workitem_id_x()
#define WMMA(NAME, BUILTIN, TA, TC)                                                                              \
  __kernel void NAME(__global TC *d, __global const TA *a, __global const TA *b, __global const TC *c) {         \
    int l = LANE;                                                                                                \
    d[l] = BUILTIN(a[l], b[l], c[l]);                                                                            \
  }
#define WMMA_INT(NAME, BUILTIN, TA, SA, SB, CLAMP)                                                               \
  __kernel void NAME(__global C32I *d, __global const TA *a, __global const TA *b, __global const C32I *c) {     \
    int l = LANE;                                                                                                \
    d[l] = BUILTIN(SA, a[l], SB, b[l], c[l], CLAMP);                                                             \
  }
#define SWMMAC(NAME, BUILTIN, TA, TB, TC, SHIFT)                                                                 \
  __kernel void NAME(__global TC *d, __global const TA *a, __global const TB *b, __global const int *idx) {      \
    int l = LANE;                                                                                                \
    d[l] = BUILTIN(a[l], b[l], d[l], idx[l] >> (SHIFT));                                                         \
  }
#define SWMMAC_INT(NAME, BUILTIN, TA, TB, SA, SB, SHIFT, CLAMP)                                                  \
  __kernel void NAME(__global C32I *d, __global const TA *a, __global const TB *b, __global const int *idx) {    \
    int l = LANE;                                                                                                \
    d[l] = BUILTIN(SA, a[l], SB, b[l], d[l], idx[l] >> (SHIFT), CLAMP);                                          \
  }

WMMA(wmma_f32_16x16x16_f16, WG(__builtin_amdgcn_wmma_f32_16x16x16_f16), D16, C32F)
WMMA(wmma_f32_16x16x16_bf16, WG(__builtin_amdgcn_wmma_f32_16x16x16_bf16), D16S, C32F)
WMMA(wmma_f16_16x16x16_f16, WG(__builtin_amdgcn_wmma_f16_16x16x16_f16), D16, D16)
WMMA(wmma_bf16_16x16x16_bf16, WG(__builtin_amdgcn_wmma_bf16_16x16x16_bf16), D16S, D16S)
WMMA(wmma_f32_16x16x16_fp8_fp8, WG(__builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8), DENSE8, C32F)
WMMA(wmma_f32_16x16x16_fp8_bf8, WG(__builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8), DENSE8, C32F)
WMMA(wmma_f32_16x16x16_bf8_fp8, WG(__builtin_amdgcn_wmma_f32_16x16x16_bf8_fp8), DENSE8, C32F)
WMMA(wmma_f32_16x16x16_bf8_bf8, WG(__builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8), DENSE8, C32F)
WMMA_INT(wmma_i32_16x16x16_iu8_su, WG(__builtin_amdgcn_wmma_i32_16x16x16_iu8), DENSE8, 1, 0, 0)
WMMA_INT(wmma_i32_16x16x16_iu8_uu_clamp, WG(__builtin_amdgcn_wmma_i32_16x16x16_iu8), DENSE8, 0, 0, 1)
WMMA_INT(wmma_i32_16x16x16_iu4_ss, WG(__builtin_amdgcn_wmma_i32_16x16x16_iu4), int, 1, 1, 0)
WMMA_INT(wmma_i32_16x16x16_iu4_us_clamp, WG(__builtin_amdgcn_wmma_i32_16x16x16_iu4), int, 0, 1, 1)
WMMA_INT(wmma_i32_16x16x32_iu4_su, WG(__builtin_amdgcn_wmma_i32_16x16x32_iu4), DENSE4X32, 1, 0, 0)
WMMA_INT(wmma_i32_16x16x32_iu4_ss_clamp, WG(__builtin_amdgcn_wmma_i32_16x16x32_iu4), DENSE4X32, 1, 1, 1)

SWMMAC(swmmac_f32_16x16x32_f16_key0, W(__builtin_amdgcn_swmmac_f32_16x16x32_f16), D16, SB16, C32F, 0)
SWMMAC(swmmac_f32_16x16x32_f16_key1, W(__builtin_amdgcn_swmmac_f32_16x16x32_f16), D16, SB16, C32F, SET16)
SWMMAC(swmmac_f32_16x16x32_bf16_key0, W(__builtin_amdgcn_swmmac_f32_16x16x32_bf16), D16S, SB16S, C32F, 0)
SWMMAC(swmmac_f16_16x16x32_f16_key1, W(__builtin_amdgcn_swmmac_f16_16x16x32_f16), D16, SB16, D16, SET16)
SWMMAC(swmmac_bf16_16x16x32_bf16_key0, W(__builtin_amdgcn_swmmac_bf16_16x16x32_bf16), D16S, SB16S, D16S, 0)
SWMMAC(swmmac_f32_16x16x32_fp8_fp8_key0, W(__builtin_amdgcn_swmmac_f32_16x16x32_fp8_fp8), SA8, SB8, C32F, 0)
SWMMAC(swmmac_f32_16x16x32_fp8_bf8_key1, W(__builtin_amdgcn_swmmac_f32_16x16x32_fp8_bf8), SA8, SB8, C32F, SET16)
SWMMAC(swmmac_f32_16x16x32_bf8_fp8_key0, W(__builtin_amdgcn_swmmac_f32_16x16x32_bf8_fp8), SA8, SB8, C32F, 0)
SWMMAC(swmmac_f32_16x16x32_bf8_bf8_key1, W(__builtin_amdgcn_swmmac_f32_16x16x32_bf8_bf8), SA8, SB8, C32F, SET16)
SWMMAC_INT(swmmac_i32_16x16x32_iu8_su_key0, W(__builtin_amdgcn_swmmac_i32_16x16x32_iu8), SA8, SB8, 1, 0, 0, 0)
SWMMAC_INT(swmmac_i32_16x16x32_iu8_ss_clamp_key1, W(__builtin_amdgcn_swmmac_i32_16x16x32_iu8), SA8, SB8, 1, 1,
           SET16, 1)
SWMMAC_INT(swmmac_i32_16x16x32_iu4_us_key1, W(__builtin_amdgcn_swmmac_i32_16x16x32_iu4), int, SB4X32, 0, 1, SET4, 0)
SWMMAC_INT(swmmac_i32_16x16x64_iu4_ss_clamp_key0, W(__builtin_amdgcn_swmmac_i32_16x16x64_iu4), SA4X64, SB4X64, 1, 1,
           0, 1)
#if __AMDGCN_WAVEFRONT_SIZE == 64
// wave64: its 8-bit A has four sets of index fields (set 3, which clang reaches only by a byte load, is
// test_wmma_gfx12.py's assembled case), its 16x16x64 iu4 two
SWMMAC_INT(swmmac_i32_16x16x32_iu8_su_key2, W(__builtin_amdgcn_swmmac_i32_16x16x32_iu8), SA8, SB8, 1, 0, 2 * SET16,
           0)
SWMMAC_INT(swmmac_i32_16x16x64_iu4_su_key1, W(__builtin_amdgcn_swmmac_i32_16x16x64_iu4), SA4X64, SB4X64, 1, 0, SET4,
           0)
#endif
