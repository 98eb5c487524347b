; gfx9's loads into LDS and gfx950's transposing LDS reads (tests/simgpu/shader/test_cdna4_lds.py;
; written by tools/gen_cdna4_kernels.py). cdna4_lds_<form>_<bytes>: one wave64 fills the LDS array
; from fill, loads <bytes> a lane from in (lane l at l * bytes, or index l) into LDS at
; @lds + 16 (M0) with the form's immediate offset, lanes l % 7 == 3 skipped, and
; copies the array to out.
; cdna4_lds_<tr>: lane l writes its dwords of in to LDS at l times their size, reads the transposing
; form at the byte address addr[l] and stores the result to out.

target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare void @llvm.amdgcn.s.waitcnt(i32)
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, i32, i32)
declare void @llvm.amdgcn.struct.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, i32, i32, i32)
declare <2 x i32> @llvm.amdgcn.ds.read.tr4.b64.v2i32(ptr addrspace(3))
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))
declare <3 x i32> @llvm.amdgcn.ds.read.tr6.b96.v3i32(ptr addrspace(3))
declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))

@lds = internal addrspace(3) global [320 x i32] poison, align 16

define amdgpu_kernel void @cdna4_lds_global_1(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 1
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %g = getelementptr i8, ptr addrspace(1) %in, i32 %off
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) %ldsp, i32 1, i32 4, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_global_2(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 2
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %g = getelementptr i8, ptr addrspace(1) %in, i32 %off
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) %ldsp, i32 2, i32 0, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_global_4(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 4
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %g = getelementptr i8, ptr addrspace(1) %in, i32 %off
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) %ldsp, i32 4, i32 8, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_global_12(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 12
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %g = getelementptr i8, ptr addrspace(1) %in, i32 %off
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) %ldsp, i32 12, i32 0, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_global_16(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 16
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %g = getelementptr i8, ptr addrspace(1) %in, i32 %off
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) %ldsp, i32 16, i32 16, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_raw_1(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 1
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 65536, i32 131072)
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) %ldsp, i32 1, i32 %off, i32 0, i32 8, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_raw_2(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 2
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 65536, i32 131072)
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) %ldsp, i32 2, i32 %off, i32 0, i32 0, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_raw_4(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 4
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 65536, i32 131072)
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) %ldsp, i32 4, i32 %off, i32 0, i32 4, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_raw_12(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 12
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 65536, i32 131072)
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) %ldsp, i32 12, i32 %off, i32 0, i32 16, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_raw_16(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 16
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 65536, i32 131072)
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) %ldsp, i32 16, i32 %off, i32 0, i32 0, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_struct_4(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 4
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 4, i64 65536, i32 131072)
  call void @llvm.amdgcn.struct.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) %ldsp, i32 4, i32 %l, i32 0, i32 0, i32 0, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_struct_16(ptr addrspace(1) %in, ptr addrspace(1) %fill, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i0 = add i32 %l, 0
  %f0 = getelementptr i32, ptr addrspace(1) %fill, i32 %i0
  %v0 = load i32, ptr addrspace(1) %f0
  %a0 = getelementptr i32, ptr addrspace(3) @lds, i32 %i0
  store i32 %v0, ptr addrspace(3) %a0
  %i1 = add i32 %l, 64
  %f1 = getelementptr i32, ptr addrspace(1) %fill, i32 %i1
  %v1 = load i32, ptr addrspace(1) %f1
  %a1 = getelementptr i32, ptr addrspace(3) @lds, i32 %i1
  store i32 %v1, ptr addrspace(3) %a1
  %i2 = add i32 %l, 128
  %f2 = getelementptr i32, ptr addrspace(1) %fill, i32 %i2
  %v2 = load i32, ptr addrspace(1) %f2
  %a2 = getelementptr i32, ptr addrspace(3) @lds, i32 %i2
  store i32 %v2, ptr addrspace(3) %a2
  %i3 = add i32 %l, 192
  %f3 = getelementptr i32, ptr addrspace(1) %fill, i32 %i3
  %v3 = load i32, ptr addrspace(1) %f3
  %a3 = getelementptr i32, ptr addrspace(3) @lds, i32 %i3
  store i32 %v3, ptr addrspace(3) %a3
  %i4 = add i32 %l, 256
  %f4 = getelementptr i32, ptr addrspace(1) %fill, i32 %i4
  %v4 = load i32, ptr addrspace(1) %f4
  %a4 = getelementptr i32, ptr addrspace(3) @lds, i32 %i4
  store i32 %v4, ptr addrspace(3) %a4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 16
  %off = mul i32 %l, 16
  %lm = urem i32 %l, 7
  %run = icmp ne i32 %lm, 3
  br i1 %run, label %dma, label %done
dma:
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 16, i64 65536, i32 131072)
  call void @llvm.amdgcn.struct.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) %ldsp, i32 16, i32 %l, i32 0, i32 0, i32 0, i32 0)
  br label %done
done:
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r0 = load i32, ptr addrspace(3) %a0
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %i0
  store i32 %r0, ptr addrspace(1) %o0
  %r1 = load i32, ptr addrspace(3) %a1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %r1, ptr addrspace(1) %o1
  %r2 = load i32, ptr addrspace(3) %a2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %r2, ptr addrspace(1) %o2
  %r3 = load i32, ptr addrspace(3) %a3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %r3, ptr addrspace(1) %o3
  %r4 = load i32, ptr addrspace(3) %a4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i32 %i4
  store i32 %r4, ptr addrspace(1) %o4
  ret void
}

define amdgpu_kernel void @cdna4_lds_tr4_b64(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %gi = getelementptr <2 x i32>, ptr addrspace(1) %in, i32 %l
  %v = load <2 x i32>, ptr addrspace(1) %gi, align 4
  %li = getelementptr <2 x i32>, ptr addrspace(3) @lds, i32 %l
  store <2 x i32> %v, ptr addrspace(3) %li, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %l
  %b = load i32, ptr addrspace(1) %ga
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %b
  %t0 = call <2 x i32> @llvm.amdgcn.ds.read.tr4.b64.v2i32(ptr addrspace(3) %p)
  %t = bitcast <2 x i32> %t0 to <2 x i32>
  %go = getelementptr <2 x i32>, ptr addrspace(1) %out, i32 %l
  store <2 x i32> %t, ptr addrspace(1) %go, align 4
  ret void
}

define amdgpu_kernel void @cdna4_lds_tr8_b64(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %gi = getelementptr <2 x i32>, ptr addrspace(1) %in, i32 %l
  %v = load <2 x i32>, ptr addrspace(1) %gi, align 4
  %li = getelementptr <2 x i32>, ptr addrspace(3) @lds, i32 %l
  store <2 x i32> %v, ptr addrspace(3) %li, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %l
  %b = load i32, ptr addrspace(1) %ga
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %b
  %t0 = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %p)
  %t = bitcast <2 x i32> %t0 to <2 x i32>
  %go = getelementptr <2 x i32>, ptr addrspace(1) %out, i32 %l
  store <2 x i32> %t, ptr addrspace(1) %go, align 4
  ret void
}

define amdgpu_kernel void @cdna4_lds_tr16_b64(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %gi = getelementptr <2 x i32>, ptr addrspace(1) %in, i32 %l
  %v = load <2 x i32>, ptr addrspace(1) %gi, align 4
  %li = getelementptr <2 x i32>, ptr addrspace(3) @lds, i32 %l
  store <2 x i32> %v, ptr addrspace(3) %li, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %l
  %b = load i32, ptr addrspace(1) %ga
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %b
  %t0 = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)
  %t = bitcast <4 x i16> %t0 to <2 x i32>
  %go = getelementptr <2 x i32>, ptr addrspace(1) %out, i32 %l
  store <2 x i32> %t, ptr addrspace(1) %go, align 4
  ret void
}

define amdgpu_kernel void @cdna4_lds_tr6_b96(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %gi = getelementptr <3 x i32>, ptr addrspace(1) %in, i32 %l
  %v = load <3 x i32>, ptr addrspace(1) %gi, align 4
  %li = getelementptr <3 x i32>, ptr addrspace(3) @lds, i32 %l
  store <3 x i32> %v, ptr addrspace(3) %li, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %l
  %b = load i32, ptr addrspace(1) %ga
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %b
  %t0 = call <3 x i32> @llvm.amdgcn.ds.read.tr6.b96.v3i32(ptr addrspace(3) %p)
  %t = bitcast <3 x i32> %t0 to <3 x i32>
  %go = getelementptr <3 x i32>, ptr addrspace(1) %out, i32 %l
  store <3 x i32> %t, ptr addrspace(1) %go, align 4
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }
