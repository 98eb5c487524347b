; gfx950's (CDNA4) f8f6f4 MFMAs, unscaled and scaled (tests/simgpu/shader/test_f8f6f4.py; written by
; tools/gen_cdna4_kernels.py): lane l loads its A and B registers (the format's 8, 6 or 4 dwords each),
; its A and B scale VGPRs and C, and stores D to out. The name gives the shape, A's and B's format
; codes (cbsz, blgp) and, if scaled, the byte selects.

target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32(<4 x i32>, <4 x i32>, <16 x float>, i32, i32, i32, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v6i32.v4i32(<6 x i32>, <4 x i32>, <16 x float>, i32, i32, i32, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <16 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v8i32(<4 x i32>, <8 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v4i32(<6 x i32>, <4 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v6i32(<6 x i32>, <6 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v6i32(<8 x i32>, <6 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)

define amdgpu_kernel void @cdna4_f8f6f4_16x16x128_0_0(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 8
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <8 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 8
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <8 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 0, i32 0, i32 0, i32 0, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_f8f6f4_16x16x128_1_2(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 8
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <8 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 6
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <6 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v6i32(<8 x i32> %a, <6 x i32> %b, <4 x float> %c, i32 1, i32 2, i32 0, i32 0, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_f8f6f4_16x16x128_3_4(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 6
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <6 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 4
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <4 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v4i32(<6 x i32> %a, <4 x i32> %b, <4 x float> %c, i32 3, i32 4, i32 0, i32 0, i32 0, i32 0)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_f8f6f4_16x16x128_4_0_scaled_0_0(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 4
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <4 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 8
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <8 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v8i32(<4 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 4, i32 0, i32 0, i32 %sa, i32 0, i32 %sb)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_f8f6f4_16x16x128_2_3_scaled_3_1(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 6
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <6 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 6
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <6 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v6i32(<6 x i32> %a, <6 x i32> %b, <4 x float> %c, i32 2, i32 3, i32 3, i32 %sa, i32 1, i32 %sb)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_f8f6f4_16x16x128_0_1_scaled_2_2(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 8
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <8 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 8
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <8 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <4 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <4 x float>, ptr addrspace(1) %gc
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 0, i32 1, i32 2, i32 %sa, i32 2, i32 %sb)
  %go = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_f8f6f4_32x32x64_4_4(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 4
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <4 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 4
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <4 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32(<4 x i32> %a, <4 x i32> %b, <16 x float> %c, i32 4, i32 4, i32 0, i32 0, i32 0, i32 0)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_f8f6f4_32x32x64_0_1_scaled_1_3(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 8
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <8 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 8
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <8 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32> %a, <8 x i32> %b, <16 x float> %c, i32 0, i32 1, i32 1, i32 %sa, i32 3, i32 %sb)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

define amdgpu_kernel void @cdna4_f8f6f4_32x32x64_2_4_scaled_0_2(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %psa, ptr addrspace(1) %psb, ptr addrspace(1) %pc, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = mul i32 %l, 6
  %ga = getelementptr i32, ptr addrspace(1) %pa, i32 %ia
  %a = load <6 x i32>, ptr addrspace(1) %ga, align 4
  %ib = mul i32 %l, 4
  %gb = getelementptr i32, ptr addrspace(1) %pb, i32 %ib
  %b = load <4 x i32>, ptr addrspace(1) %gb, align 4
  %gsa = getelementptr i32, ptr addrspace(1) %psa, i32 %l
  %sa = load i32, ptr addrspace(1) %gsa
  %gsb = getelementptr i32, ptr addrspace(1) %psb, i32 %l
  %sb = load i32, ptr addrspace(1) %gsb
  %gc = getelementptr <16 x float>, ptr addrspace(1) %pc, i32 %l
  %c = load <16 x float>, ptr addrspace(1) %gc
  %d = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v6i32.v4i32(<6 x i32> %a, <4 x i32> %b, <16 x float> %c, i32 2, i32 4, i32 0, i32 %sa, i32 2, i32 %sb)
  %go = getelementptr <16 x float>, ptr addrspace(1) %out, i32 %l
  store <16 x float> %d, ptr addrspace(1) %go
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }
