target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare double @llvm.sqrt.f64(double)
declare double @llvm.fma.f64(double, double, double)

; f64: IEEE fdiv (div_scale/rcp/fma/div_fmas/div_fixup), sqrt (rsq + refinement), fma, fadd, fmul
; out[i * 5 + j] holds result j of element i (a, b, c are the element's inputs).
define amdgpu_kernel void @vf_f64(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pc, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %ga = getelementptr double, ptr addrspace(1) %pa, i32 %i
  %gb = getelementptr double, ptr addrspace(1) %pb, i32 %i
  %gc = getelementptr double, ptr addrspace(1) %pc, i32 %i
  %a = load double, ptr addrspace(1) %ga
  %b = load double, ptr addrspace(1) %gb
  %c = load double, ptr addrspace(1) %gc
  %o = mul i32 %i, 5
  %r0 = fdiv double %a, %b
  %r1 = call double @llvm.sqrt.f64(double %a)
  %r2 = call double @llvm.fma.f64(double %a, double %b, double %c)
  %r3 = fadd double %a, %c
  %r4 = fmul double %a, %b
  %o0 = add i32 %o, 0
  %p0 = getelementptr double, ptr addrspace(1) %out, i32 %o0
  store double %r0, ptr addrspace(1) %p0
  %o1 = add i32 %o, 1
  %p1 = getelementptr double, ptr addrspace(1) %out, i32 %o1
  store double %r1, ptr addrspace(1) %p1
  %o2 = add i32 %o, 2
  %p2 = getelementptr double, ptr addrspace(1) %out, i32 %o2
  store double %r2, ptr addrspace(1) %p2
  %o3 = add i32 %o, 3
  %p3 = getelementptr double, ptr addrspace(1) %out, i32 %o3
  store double %r3, ptr addrspace(1) %p3
  %o4 = add i32 %o, 4
  %p4 = getelementptr double, ptr addrspace(1) %out, i32 %o4
  store double %r4, ptr addrspace(1) %p4
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
