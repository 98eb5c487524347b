target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.prng.b32(i32)
declare {i32, i32} @llvm.amdgcn.permlane16.swap(i32, i32, i1, i1)
declare {i32, i32} @llvm.amdgcn.permlane32.swap(i32, i32, i1, i1)
declare float @llvm.amdgcn.fdot2.f32.bf16(<2 x bfloat>, <2 x bfloat>, float, i1)
declare float @llvm.minimum.f32(float, float)
declare float @llvm.maximum.f32(float, float)

; gfx950's (CDNA4) new VALU instructions as LLVM 22 emits them (test_cdna4_corpus.py has the numpy references).
; Inputs a, b, c: 32-bit words per element; out[i * 12 + j] holds result j of element i:
;  0 v_prng_b32(a)              1 v_cvt_pk_bf16_f32(a, b)     2 v_cvt_pk_f16_f32(a, b)
;  3 dot2 bf16: a.bf16x2 . b.bf16x2 + c (v_dot2c_f32_bf16)   4 minimum3(a, b, c)   5 maximum3(a, b, c)
;  6 (~a & b) ^ c               7 ((a | b) ^ c) & ~a (v_bitop3_b32)
;  8, 9 v_permlane16_swap_b32 of (a, b)   10, 11 v_permlane32_swap_b32 of (a, b)
define amdgpu_kernel void @cdna4_valu(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pc, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %i
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %i
  %gc = getelementptr i32, ptr addrspace(1) %pc, i32 %i
  %a = load i32, ptr addrspace(1) %ga
  %b = load i32, ptr addrspace(1) %gb
  %c = load i32, ptr addrspace(1) %gc
  %fa = bitcast i32 %a to float
  %fb = bitcast i32 %b to float
  %fc = bitcast i32 %c to float
  %r0 = call i32 @llvm.amdgcn.prng.b32(i32 %a)
  %v0 = insertelement <2 x float> poison, float %fa, i32 0
  %v1 = insertelement <2 x float> %v0, float %fb, i32 1
  %bf = fptrunc <2 x float> %v1 to <2 x bfloat>
  %r1 = bitcast <2 x bfloat> %bf to i32
  %hf = fptrunc <2 x float> %v1 to <2 x half>
  %r2 = bitcast <2 x half> %hf to i32
  %ab = bitcast i32 %a to <2 x bfloat>
  %bb = bitcast i32 %b to <2 x bfloat>
  %d = call float @llvm.amdgcn.fdot2.f32.bf16(<2 x bfloat> %ab, <2 x bfloat> %bb, float %fc, i1 false)
  %r3 = bitcast float %d to i32
  %mn1 = call float @llvm.minimum.f32(float %fa, float %fb)
  %mn2 = call float @llvm.minimum.f32(float %mn1, float %fc)
  %r4 = bitcast float %mn2 to i32
  %mx1 = call float @llvm.maximum.f32(float %fa, float %fb)
  %mx2 = call float @llvm.maximum.f32(float %mx1, float %fc)
  %r5 = bitcast float %mx2 to i32
  %na = xor i32 %a, -1
  %t6 = and i32 %na, %b
  %r6 = xor i32 %t6, %c
  %t7 = or i32 %a, %b
  %t7b = xor i32 %t7, %c
  %r7 = and i32 %t7b, %na
  %s16 = call {i32, i32} @llvm.amdgcn.permlane16.swap(i32 %a, i32 %b, i1 false, i1 false)
  %r8 = extractvalue {i32, i32} %s16, 0
  %r9 = extractvalue {i32, i32} %s16, 1
  %s32 = call {i32, i32} @llvm.amdgcn.permlane32.swap(i32 %a, i32 %b, i1 false, i1 false)
  %r10 = extractvalue {i32, i32} %s32, 0
  %r11 = extractvalue {i32, i32} %s32, 1
  %o = mul i32 %i, 12
  %p0 = getelementptr i32, ptr addrspace(1) %out, i32 %o
  store i32 %r0, ptr addrspace(1) %p0
  %p1 = getelementptr i32, ptr addrspace(1) %p0, i32 1
  store i32 %r1, ptr addrspace(1) %p1
  %p2 = getelementptr i32, ptr addrspace(1) %p0, i32 2
  store i32 %r2, ptr addrspace(1) %p2
  %p3 = getelementptr i32, ptr addrspace(1) %p0, i32 3
  store i32 %r3, ptr addrspace(1) %p3
  %p4 = getelementptr i32, ptr addrspace(1) %p0, i32 4
  store i32 %r4, ptr addrspace(1) %p4
  %p5 = getelementptr i32, ptr addrspace(1) %p0, i32 5
  store i32 %r5, ptr addrspace(1) %p5
  %p6 = getelementptr i32, ptr addrspace(1) %p0, i32 6
  store i32 %r6, ptr addrspace(1) %p6
  %p7 = getelementptr i32, ptr addrspace(1) %p0, i32 7
  store i32 %r7, ptr addrspace(1) %p7
  %p8 = getelementptr i32, ptr addrspace(1) %p0, i32 8
  store i32 %r8, ptr addrspace(1) %p8
  %p9 = getelementptr i32, ptr addrspace(1) %p0, i32 9
  store i32 %r9, ptr addrspace(1) %p9
  %p10 = getelementptr i32, ptr addrspace(1) %p0, i32 10
  store i32 %r10, ptr addrspace(1) %p10
  %p11 = getelementptr i32, ptr addrspace(1) %p0, i32 11
  store i32 %r11, ptr addrspace(1) %p11
  ret void
}
