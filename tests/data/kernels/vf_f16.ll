target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare half @llvm.sqrt.f16(half)
declare half @llvm.fma.f16(half, half, half)

; f16: fadd, fmul, fdiv, fma, sqrt, and a float round trip (fpext, fmul in f32, fptrunc)
; out[i * 6 + j] holds result j of element i (a, b, c are the element's inputs).
define amdgpu_kernel void @vf_f16(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pc, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %ga = getelementptr half, ptr addrspace(1) %pa, i32 %i
  %gb = getelementptr half, ptr addrspace(1) %pb, i32 %i
  %gc = getelementptr half, ptr addrspace(1) %pc, i32 %i
  %a = load half, ptr addrspace(1) %ga
  %b = load half, ptr addrspace(1) %gb
  %c = load half, ptr addrspace(1) %gc
  %o = mul i32 %i, 6
  %r0 = fadd half %a, %b
  %r1 = fmul half %a, %b
  %r2 = fdiv half %a, %b
  %r3 = call half @llvm.fma.f16(half %a, half %b, half %c)
  %r4 = call half @llvm.sqrt.f16(half %a)
  %xa = fpext half %a to float
  %xb = fpext half %b to float
  %xm = fmul float %xa, %xb
  %r5 = fptrunc float %xm to half
  %o0 = add i32 %o, 0
  %p0 = getelementptr half, ptr addrspace(1) %out, i32 %o0
  store half %r0, ptr addrspace(1) %p0
  %o1 = add i32 %o, 1
  %p1 = getelementptr half, ptr addrspace(1) %out, i32 %o1
  store half %r1, ptr addrspace(1) %p1
  %o2 = add i32 %o, 2
  %p2 = getelementptr half, ptr addrspace(1) %out, i32 %o2
  store half %r2, ptr addrspace(1) %p2
  %o3 = add i32 %o, 3
  %p3 = getelementptr half, ptr addrspace(1) %out, i32 %o3
  store half %r3, ptr addrspace(1) %p3
  %o4 = add i32 %o, 4
  %p4 = getelementptr half, ptr addrspace(1) %out, i32 %o4
  store half %r4, ptr addrspace(1) %p4
  %o5 = add i32 %o, 5
  %p5 = getelementptr half, ptr addrspace(1) %out, i32 %o5
  store half %r5, ptr addrspace(1) %p5
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
