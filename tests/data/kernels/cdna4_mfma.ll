target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half>, <8 x half>, <4 x float>, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat>, <8 x bfloat>, <16 x float>, i32, i32, i32)
declare <4 x i32> @llvm.amdgcn.mfma.i32.16x16x64.i8(<4 x i32>, <4 x i32>, <4 x i32>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8(i64, i64, <4 x float>, i32, i32, i32)
declare <16 x i32> @llvm.amdgcn.mfma.i32.32x32x32.i8(<4 x i32>, <4 x i32>, <16 x i32>, i32, i32, i32)

; gfx950's (CDNA4) new dense MFMAs, one wave64 each: lane l loads its A and B registers (16 bytes) from
; a + 16*l and b + 16*l, C is 0, and stores its D registers to out + (D bytes)*l (test_cdna4_corpus.py places
; the matrices by the CDNA4 ISA's layout rule and checks D = A x B).
define amdgpu_kernel void @cdna4_mfma_f32_16x16x32_f16(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <8 x half>, ptr addrspace(1) %pa, i32 %l
  %gb = getelementptr <8 x half>, ptr addrspace(1) %pb, i32 %l
  %a = load <8 x half>, ptr addrspace(1) %ga
  %b = load <8 x half>, ptr addrspace(1) %gb
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half> %a, <8 x half> %b, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_mfma_f32_32x32x16_bf16(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <8 x bfloat>, ptr addrspace(1) %pa, i32 %l
  %gb = getelementptr <8 x bfloat>, ptr addrspace(1) %pb, i32 %l
  %a = load <8 x bfloat>, ptr addrspace(1) %ga
  %b = load <8 x bfloat>, ptr addrspace(1) %gb
  %d = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %a, <8 x bfloat> %b, <16 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_mfma_i32_16x16x64_i8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %gb = getelementptr <4 x i32>, ptr addrspace(1) %pb, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %b = load <4 x i32>, ptr addrspace(1) %gb
  %d = call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x64.i8(<4 x i32> %a, <4 x i32> %b, <4 x i32> zeroinitializer, i32 0, i32 0, i32 0)
  %go = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %l
  store <4 x i32> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_mfma_i32_32x32x32_i8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %gb = getelementptr <4 x i32>, ptr addrspace(1) %pb, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %b = load <4 x i32>, ptr addrspace(1) %gb
  %d = call <16 x i32> @llvm.amdgcn.mfma.i32.32x32x32.i8(<4 x i32> %a, <4 x i32> %b, <16 x i32> zeroinitializer, i32 0, i32 0, i32 0)
  %go = getelementptr <16 x i32>, ptr addrspace(1) %out, i32 %l
  store <16 x i32> %d, ptr addrspace(1) %go
  ret void
}

; gfx942's fp8 MFMA opcode, which reads the OCP E4M3 format on gfx950 (8 bytes a lane)
define amdgpu_kernel void @cdna4_mfma_f32_16x16x32_fp8_fp8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr i64, ptr addrspace(1) %pa, i32 %l
  %gb = getelementptr i64, ptr addrspace(1) %pb, i32 %l
  %a = load i64, ptr addrspace(1) %ga
  %b = load i64, ptr addrspace(1) %gb
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8(i64 %a, i64 %b, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }
