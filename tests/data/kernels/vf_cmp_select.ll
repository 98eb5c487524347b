target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare float @llvm.minnum.f32(float, float)
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.fabs.f32(float)
declare float @llvm.copysign.f32(float, float)

; fcmp (ordered and unordered predicates) + select, minnum/maxnum, fabs, copysign
; out[i * 7 + j] holds result j of element i (a, b, c are the element's inputs).
define amdgpu_kernel void @vf_cmp_select(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pc, ptr addrspace(1) %out) {
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
  %o = mul i32 %i, 7
  %k0 = fcmp olt float %a, %b
  %r0 = select i1 %k0, float %a, float %c
  %k1 = fcmp ueq float %a, %b
  %r1 = select i1 %k1, float 1.0, float 2.0
  %k2 = fcmp uno float %a, %c
  %r2 = select i1 %k2, float %b, float %c
  %k3 = fcmp oge float %b, %c
  %r3 = select i1 %k3, float %b, float -3.0
  %r4 = call float @llvm.minnum.f32(float %a, float %b)
  %r5 = call float @llvm.maxnum.f32(float %b, float %c)
  %fa = call float @llvm.fabs.f32(float %a)
  %r6 = call float @llvm.copysign.f32(float %fa, float %c)
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
  %o5 = add i32 %o, 5
  %p5 = getelementptr float, ptr addrspace(1) %out, i32 %o5
  store float %r5, ptr addrspace(1) %p5
  %o6 = add i32 %o, 6
  %p6 = getelementptr float, ptr addrspace(1) %out, i32 %o6
  store float %r6, ptr addrspace(1) %p6
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
