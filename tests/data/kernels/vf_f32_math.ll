target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare float @llvm.sqrt.f32(float)
declare float @llvm.fma.f32(float, float, float)

; f32: IEEE fdiv (div_scale/rcp/fma/div_fmas/div_fixup), sqrt, fma, fmul+fsub, fadd
; out[i * 5 + j] holds result j of element i (a, b, c are the element's inputs).
define amdgpu_kernel void @vf_f32_math(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pc, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %ga = getelementptr float, ptr addrspace(1) %pa, i32 %i
  %gb = getelementptr float, ptr addrspace(1) %pb, i32 %i
  %gc = getelementptr float, ptr addrspace(1) %pc, i32 %i
  %a = load float, ptr addrspace(1) %ga
  %b = load float, ptr addrspace(1) %gb
  %c = load float, ptr addrspace(1) %gc
  %o = mul i32 %i, 5
  %r0 = fdiv float %a, %b
  %r1 = call float @llvm.sqrt.f32(float %a)
  %r2 = call float @llvm.fma.f32(float %a, float %b, float %c)
  %m = fmul float %a, %b
  %r3 = fsub float %m, %c
  %r4 = fadd float %a, %c
  %o0 = add i32 %o, 0
  %p0 = getelementptr float, ptr addrspace(1) %out, i32 %o0
  store float %r0, ptr addrspace(1) %p0
  %o1 = add i32 %o, 1
  %p1 = getelementptr float, ptr addrspace(1) %out, i32 %o1
  store float %r1, ptr addrspace(1) %p1
  %o2 = add i32 %o, 2
  %p2 = getelementptr float, ptr addrspace(1) %out, i32 %o2
  store float %r2, ptr addrspace(1) %p2
  %o3 = add i32 %o, 3
  %p3 = getelementptr float, ptr addrspace(1) %out, i32 %o3
  store float %r3, ptr addrspace(1) %p3
  %o4 = add i32 %o, 4
  %p4 = getelementptr float, ptr addrspace(1) %out, i32 %o4
  store float %r4, ptr addrspace(1) %p4
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
