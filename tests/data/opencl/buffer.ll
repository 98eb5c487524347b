; Scalar sub-dword buffer loads and typed (format) buffer accesses for gfx1201 (tests/simgpu/shader/test_buffer_gfx12.py),
; LLVM IR compiled by clang-19: `python -m tools.gen_opencl_corpus --arch gfx1201` builds buffer_gfx1201.so. Each
; kernel builds its V# from a pointer (raw buffer: stride 0), NUM_RECORDS and word 3 (DST_SEL, FORMAT, OOB_SELECT)
; passed as arguments. The tbuffer kernels name their format by its id (llvm-objdump prints the names: 42
; BUF_FMT_8_8_8_8_UNORM, 43 _SNORM, 46 _UINT, 57 BUF_FMT_16_16_16_16_FLOAT, 63 BUF_FMT_32_32_32_32_FLOAT, 36
; BUF_FMT_2_10_10_10_UNORM, 30 BUF_FMT_10_11_11_FLOAT).

declare i32 @llvm.amdgcn.workitem.id.x()
declare i8 @llvm.amdgcn.s.buffer.load.i8(<4 x i32>, i32, i32)
declare i16 @llvm.amdgcn.s.buffer.load.i16(<4 x i32>, i32, i32)
declare <4 x float> @llvm.amdgcn.raw.buffer.load.format.v4f32(<4 x i32>, i32, i32, i32)
declare <4 x half> @llvm.amdgcn.raw.buffer.load.format.v4f16(<4 x i32>, i32, i32, i32)
declare <2 x float> @llvm.amdgcn.raw.buffer.load.format.v2f32(<4 x i32>, i32, i32, i32)
declare void @llvm.amdgcn.raw.buffer.store.format.v4f32(<4 x float>, <4 x i32>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.raw.tbuffer.load.v4f32(<4 x i32>, i32, i32, i32, i32)
declare <4 x i32> @llvm.amdgcn.raw.tbuffer.load.v4i32(<4 x i32>, i32, i32, i32, i32)
declare <4 x half> @llvm.amdgcn.raw.tbuffer.load.v4f16(<4 x i32>, i32, i32, i32, i32)
declare void @llvm.amdgcn.raw.tbuffer.store.v4f32(<4 x float>, <4 x i32>, i32, i32, i32, i32)

define internal <4 x i32> @rsrc(ptr addrspace(1) %p, i32 %nrec, i32 %w3) alwaysinline {
  %a = ptrtoint ptr addrspace(1) %p to i64
  %lo = trunc i64 %a to i32
  %hi64 = lshr i64 %a, 32
  %hi = trunc i64 %hi64 to i32
  %w1 = and i32 %hi, 65535
  %v0 = insertelement <4 x i32> poison, i32 %lo, i32 0
  %v1 = insertelement <4 x i32> %v0, i32 %w1, i32 1
  %v2 = insertelement <4 x i32> %v1, i32 %nrec, i32 2
  %v3 = insertelement <4 x i32> %v2, i32 %w3, i32 3
  ret <4 x i32> %v3
}

; s_buffer_load_u8 / i8 / u16 / i16 at four byte offsets (the SGPR soffset), into out[0..3]
define amdgpu_kernel void @s_buffer_sub_dword(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %o0, i32 %o1, i32 %o2,
                                              i32 %o3, ptr addrspace(1) %out) {
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %a = call i8 @llvm.amdgcn.s.buffer.load.i8(<4 x i32> %r, i32 %o0, i32 0)
  %b = call i8 @llvm.amdgcn.s.buffer.load.i8(<4 x i32> %r, i32 %o1, i32 0)
  %c = call i16 @llvm.amdgcn.s.buffer.load.i16(<4 x i32> %r, i32 %o2, i32 0)
  %d = call i16 @llvm.amdgcn.s.buffer.load.i16(<4 x i32> %r, i32 %o3, i32 0)
  %az = zext i8 %a to i32
  %bs = sext i8 %b to i32
  %cz = zext i16 %c to i32
  %ds = sext i16 %d to i32
  store i32 %az, ptr addrspace(1) %out
  %p1 = getelementptr i32, ptr addrspace(1) %out, i32 1
  store i32 %bs, ptr addrspace(1) %p1
  %p2 = getelementptr i32, ptr addrspace(1) %out, i32 2
  store i32 %cz, ptr addrspace(1) %p2
  %p3 = getelementptr i32, ptr addrspace(1) %out, i32 3
  store i32 %ds, ptr addrspace(1) %p3
  ret void
}

; buffer_load_format_xyzw (format and DST_SEL from the V#) at lane * step bytes, into out[lane]
define amdgpu_kernel void @load_format(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x float> @llvm.amdgcn.raw.buffer.load.format.v4f32(<4 x i32> %r, i32 %o, i32 0, i32 0)
  %p = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %v, ptr addrspace(1) %p
  ret void
}

; buffer_load_d16_format_xyzw: the four components as f16
define amdgpu_kernel void @load_format_d16(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step,
                                           ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x half> @llvm.amdgcn.raw.buffer.load.format.v4f16(<4 x i32> %r, i32 %o, i32 0, i32 0)
  %p = getelementptr <4 x half>, ptr addrspace(1) %out, i32 %l
  store <4 x half> %v, ptr addrspace(1) %p
  ret void
}

; buffer_load_format_xy: two components
define amdgpu_kernel void @load_format_xy(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step,
                                          ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <2 x float> @llvm.amdgcn.raw.buffer.load.format.v2f32(<4 x i32> %r, i32 %o, i32 0, i32 0)
  %p = getelementptr <2 x float>, ptr addrspace(1) %out, i32 %l
  store <2 x float> %v, ptr addrspace(1) %p
  ret void
}

; buffer_store_format_xyzw of in[lane] at lane * step bytes (format from the V#)
define amdgpu_kernel void @store_format(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %in) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %p = getelementptr <4 x float>, ptr addrspace(1) %in, i32 %l
  %v = load <4 x float>, ptr addrspace(1) %p
  call void @llvm.amdgcn.raw.buffer.store.format.v4f32(<4 x float> %v, <4 x i32> %r, i32 %o, i32 0, i32 0)
  ret void
}

define amdgpu_kernel void @tload_42(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x float> @llvm.amdgcn.raw.tbuffer.load.v4f32(<4 x i32> %r, i32 %o, i32 0, i32 42, i32 0)
  %p = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %v, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @tload_43(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x float> @llvm.amdgcn.raw.tbuffer.load.v4f32(<4 x i32> %r, i32 %o, i32 0, i32 43, i32 0)
  %p = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %v, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @tload_46(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x i32> @llvm.amdgcn.raw.tbuffer.load.v4i32(<4 x i32> %r, i32 %o, i32 0, i32 46, i32 0)
  %p = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %l
  store <4 x i32> %v, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @tload_57(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x float> @llvm.amdgcn.raw.tbuffer.load.v4f32(<4 x i32> %r, i32 %o, i32 0, i32 57, i32 0)
  %p = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %v, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @tload_63(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x float> @llvm.amdgcn.raw.tbuffer.load.v4f32(<4 x i32> %r, i32 %o, i32 0, i32 63, i32 0)
  %p = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %v, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @tload_36(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x float> @llvm.amdgcn.raw.tbuffer.load.v4f32(<4 x i32> %r, i32 %o, i32 0, i32 36, i32 0)
  %p = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %v, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @tload_30(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x float> @llvm.amdgcn.raw.tbuffer.load.v4f32(<4 x i32> %r, i32 %o, i32 0, i32 30, i32 0)
  %p = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %l
  store <4 x float> %v, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @tload_d16_42(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step,
                                        ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %v = call <4 x half> @llvm.amdgcn.raw.tbuffer.load.v4f16(<4 x i32> %r, i32 %o, i32 0, i32 42, i32 0)
  %p = getelementptr <4 x half>, ptr addrspace(1) %out, i32 %l
  store <4 x half> %v, ptr addrspace(1) %p
  ret void
}

define amdgpu_kernel void @tstore_42(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %in) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %p = getelementptr <4 x float>, ptr addrspace(1) %in, i32 %l
  %v = load <4 x float>, ptr addrspace(1) %p
  call void @llvm.amdgcn.raw.tbuffer.store.v4f32(<4 x float> %v, <4 x i32> %r, i32 %o, i32 0, i32 42, i32 0)
  ret void
}

define amdgpu_kernel void @tstore_43(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %in) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %p = getelementptr <4 x float>, ptr addrspace(1) %in, i32 %l
  %v = load <4 x float>, ptr addrspace(1) %p
  call void @llvm.amdgcn.raw.tbuffer.store.v4f32(<4 x float> %v, <4 x i32> %r, i32 %o, i32 0, i32 43, i32 0)
  ret void
}

define amdgpu_kernel void @tstore_57(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %in) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %p = getelementptr <4 x float>, ptr addrspace(1) %in, i32 %l
  %v = load <4 x float>, ptr addrspace(1) %p
  call void @llvm.amdgcn.raw.tbuffer.store.v4f32(<4 x float> %v, <4 x i32> %r, i32 %o, i32 0, i32 57, i32 0)
  ret void
}

define amdgpu_kernel void @tstore_36(ptr addrspace(1) %buf, i32 %nrec, i32 %w3, i32 %step, ptr addrspace(1) %in) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = mul i32 %l, %step
  %r = call <4 x i32> @rsrc(ptr addrspace(1) %buf, i32 %nrec, i32 %w3)
  %p = getelementptr <4 x float>, ptr addrspace(1) %in, i32 %l
  %v = load <4 x float>, ptr addrspace(1) %p
  call void @llvm.amdgcn.raw.tbuffer.store.v4f32(<4 x float> %v, <4 x i32> %r, i32 %o, i32 0, i32 36, i32 0)
  ret void
}
