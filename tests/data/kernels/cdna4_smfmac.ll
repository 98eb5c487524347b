; gfx950's (CDNA4) SMFMACs (tests/simgpu/shader/test_smfmac.py; written by tools/gen_cdna4_kernels.py):
; lane l loads its A (compressed), B, index and C registers from a, b, k, c, stores D to out. The 16x16
; f16/bf16 kernels select index set 1 (abid 1); the others set 0.

target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare <16 x float> @llvm.amdgcn.smfmac.f32.32x32x32.bf16(<8 x bfloat>, <16 x bfloat>, <16 x float>, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.smfmac.f32.32x32x32.f16(<8 x half>, <16 x half>, <16 x float>, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.smfmac.f32.32x32x64.bf8.bf8(<4 x i32>, <8 x i32>, <16 x float>, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.smfmac.f32.32x32x64.bf8.fp8(<4 x i32>, <8 x i32>, <16 x float>, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.smfmac.f32.32x32x64.fp8.bf8(<4 x i32>, <8 x i32>, <16 x float>, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.smfmac.f32.32x32x64.fp8.fp8(<4 x i32>, <8 x i32>, <16 x float>, i32, i32, i32)
declare <16 x i32> @llvm.amdgcn.smfmac.i32.32x32x64.i8(<4 x i32>, <8 x i32>, <16 x i32>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.smfmac.f32.16x16x128.bf8.bf8(<4 x i32>, <8 x i32>, <4 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.smfmac.f32.16x16x128.bf8.fp8(<4 x i32>, <8 x i32>, <4 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.smfmac.f32.16x16x128.fp8.bf8(<4 x i32>, <8 x i32>, <4 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.smfmac.f32.16x16x128.fp8.fp8(<4 x i32>, <8 x i32>, <4 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.smfmac.f32.16x16x64.bf16(<8 x bfloat>, <16 x bfloat>, <4 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.smfmac.f32.16x16x64.f16(<8 x half>, <16 x half>, <4 x float>, i32, i32, i32)
declare <4 x i32> @llvm.amdgcn.smfmac.i32.16x16x128.i8(<4 x i32>, <8 x i32>, <4 x i32>, i32, i32, i32)

define amdgpu_kernel void @cdna4_smfmac_f32_16x16x64_f16(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <8 x half>, ptr addrspace(1) %pa, i32 %l
  %a = load <8 x half>, ptr addrspace(1) %ga
  %gb = getelementptr <16 x half>, ptr addrspace(1) %pb, i32 %l
  %b = load <16 x half>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.smfmac.f32.16x16x64.f16(<8 x half> %a, <16 x half> %b, <4 x float> %c, i32 %k, i32 0, i32 1)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_32x32x32_f16(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <8 x half>, ptr addrspace(1) %pa, i32 %l
  %a = load <8 x half>, ptr addrspace(1) %ga
  %gb = getelementptr <16 x half>, ptr addrspace(1) %pb, i32 %l
  %b = load <16 x half>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.smfmac.f32.32x32x32.f16(<8 x half> %a, <16 x half> %b, <16 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_16x16x64_bf16(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <8 x bfloat>, ptr addrspace(1) %pa, i32 %l
  %a = load <8 x bfloat>, ptr addrspace(1) %ga
  %gb = getelementptr <16 x bfloat>, ptr addrspace(1) %pb, i32 %l
  %b = load <16 x bfloat>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.smfmac.f32.16x16x64.bf16(<8 x bfloat> %a, <16 x bfloat> %b, <4 x float> %c, i32 %k, i32 0, i32 1)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_32x32x32_bf16(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <8 x bfloat>, ptr addrspace(1) %pa, i32 %l
  %a = load <8 x bfloat>, ptr addrspace(1) %ga
  %gb = getelementptr <16 x bfloat>, ptr addrspace(1) %pb, i32 %l
  %b = load <16 x bfloat>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.smfmac.f32.32x32x32.bf16(<8 x bfloat> %a, <16 x bfloat> %b, <16 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_i32_16x16x128_i8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <4 x i32>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x i32>, ptr addrspace(1) %gc
  %d = call <4 x i32> @llvm.amdgcn.smfmac.i32.16x16x128.i8(<4 x i32> %a, <8 x i32> %b, <4 x i32> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %l
  store <4 x i32> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_i32_32x32x64_i8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <16 x i32>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x i32>, ptr addrspace(1) %gc
  %d = call <16 x i32> @llvm.amdgcn.smfmac.i32.32x32x64.i8(<4 x i32> %a, <8 x i32> %b, <16 x i32> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <16 x i32>, ptr addrspace(1) %out, i32 %l
  store <16 x i32> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_16x16x128_fp8_fp8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.smfmac.f32.16x16x128.fp8.fp8(<4 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_32x32x64_fp8_fp8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.smfmac.f32.32x32x64.fp8.fp8(<4 x i32> %a, <8 x i32> %b, <16 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_16x16x128_fp8_bf8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.smfmac.f32.16x16x128.fp8.bf8(<4 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_32x32x64_fp8_bf8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.smfmac.f32.32x32x64.fp8.bf8(<4 x i32> %a, <8 x i32> %b, <16 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_16x16x128_bf8_fp8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.smfmac.f32.16x16x128.bf8.fp8(<4 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_32x32x64_bf8_fp8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.smfmac.f32.32x32x64.bf8.fp8(<4 x i32> %a, <8 x i32> %b, <16 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_16x16x128_bf8_bf8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.smfmac.f32.16x16x128.bf8.bf8(<4 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_smfmac_f32_32x32x64_bf8_bf8(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pk, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr <4 x i32>, ptr addrspace(1) %pa, i32 %l
  %a = load <4 x i32>, ptr addrspace(1) %ga
  %gb = getelementptr <8 x i32>, ptr addrspace(1) %pb, i32 %l
  %b = load <8 x i32>, ptr addrspace(1) %gb
  %gk = getelementptr i32, ptr addrspace(1) %pk, i32 %l
  %k = load i32, ptr addrspace(1) %gk
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.smfmac.f32.32x32x64.bf8.bf8(<4 x i32> %a, <8 x i32> %b, <16 x float> %c, i32 %k, i32 0, i32 0)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }
