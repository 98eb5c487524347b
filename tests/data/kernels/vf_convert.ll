target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.fptosi.sat.i32.f32(float)
declare i32 @llvm.fptoui.sat.i32.f32(float)
declare float @llvm.floor.f32(float)
declare float @llvm.ceil.f32(float)
declare float @llvm.trunc.f32(float)
declare float @llvm.rint.f32(float)

; conversions and rounding: fptosi/fptoui (saturating intrinsics), sitofp/uitofp, f64 round trip, floor/ceil/trunc/rint
; out[i * 10 + j] holds result j of element i (a, b, c are the element's inputs).
define amdgpu_kernel void @vf_convert(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %pc, ptr addrspace(1) %out) {
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
  %o = mul i32 %i, 10
  %r0 = call i32 @llvm.fptosi.sat.i32.f32(float %a)
  %r1 = call i32 @llvm.fptoui.sat.i32.f32(float %b)
  %ia = bitcast float %c to i32
  %sf = sitofp i32 %ia to float
  %r2 = bitcast float %sf to i32
  %uf = uitofp i32 %ia to float
  %r3 = bitcast float %uf to i32
  %d = fpext float %a to double
  %dd = fmul double %d, 3.0
  %di = fptosi double %dd to i32
  %r4 = add i32 %di, 0
  %fl = call float @llvm.floor.f32(float %a)
  %r5 = bitcast float %fl to i32
  %ce = call float @llvm.ceil.f32(float %b)
  %r6 = bitcast float %ce to i32
  %tr = call float @llvm.trunc.f32(float %a)
  %r7 = bitcast float %tr to i32
  %ri = call float @llvm.rint.f32(float %b)
  %r8 = bitcast float %ri to i32
  %i64 = sitofp i32 %ia to double
  %h = fptrunc double %i64 to float
  %r9 = bitcast float %h to i32
  %o0 = add i32 %o, 0
  %p0 = getelementptr i32, ptr addrspace(1) %out, i32 %o0
  store i32 %r0, ptr addrspace(1) %p0
  %o1 = add i32 %o, 1
  %p1 = getelementptr i32, ptr addrspace(1) %out, i32 %o1
  store i32 %r1, ptr addrspace(1) %p1
  %o2 = add i32 %o, 2
  %p2 = getelementptr i32, ptr addrspace(1) %out, i32 %o2
  store i32 %r2, ptr addrspace(1) %p2
  %o3 = add i32 %o, 3
  %p3 = getelementptr i32, ptr addrspace(1) %out, i32 %o3
  store i32 %r3, ptr addrspace(1) %p3
  %o4 = add i32 %o, 4
  %p4 = getelementptr i32, ptr addrspace(1) %out, i32 %o4
  store i32 %r4, ptr addrspace(1) %p4
  %o5 = add i32 %o, 5
  %p5 = getelementptr i32, ptr addrspace(1) %out, i32 %o5
  store i32 %r5, ptr addrspace(1) %p5
  %o6 = add i32 %o, 6
  %p6 = getelementptr i32, ptr addrspace(1) %out, i32 %o6
  store i32 %r6, ptr addrspace(1) %p6
  %o7 = add i32 %o, 7
  %p7 = getelementptr i32, ptr addrspace(1) %out, i32 %o7
  store i32 %r7, ptr addrspace(1) %p7
  %o8 = add i32 %o, 8
  %p8 = getelementptr i32, ptr addrspace(1) %out, i32 %o8
  store i32 %r8, ptr addrspace(1) %p8
  %o9 = add i32 %o, 9
  %p9 = getelementptr i32, ptr addrspace(1) %out, i32 %o9
  store i32 %r9, ptr addrspace(1) %p9
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
