target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare float @llvm.exp2.f32(float)
declare float @llvm.log2.f32(float)
declare float @llvm.sin.f32(float)
declare float @llvm.cos.f32(float)
declare float @llvm.exp.f32(float)
declare float @llvm.log.f32(float)

; f32 transcendentals: exp2, log2, sin, cos, exp, log (with LLVM's denormal scaling around v_exp/v_log)
; out[i * 6 + j] holds result j of element i (a, b, c are the element's inputs).
define amdgpu_kernel void @vf_trans(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pc, ptr addrspace(1) %out) {
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
  %o = mul i32 %i, 6
  %r0 = call float @llvm.exp2.f32(float %a)
  %r1 = call float @llvm.log2.f32(float %b)
  %r2 = call float @llvm.sin.f32(float %c)
  %r3 = call float @llvm.cos.f32(float %c)
  %r4 = call float @llvm.exp.f32(float %a)
  %r5 = call float @llvm.log.f32(float %b)
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
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
