target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.bf8(i32, float, i1)
declare <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp4(i32, float, i32)
declare <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp8(i32, float, i1)
declare <2 x bfloat> @llvm.amdgcn.cvt.sr.bf16.f32(<2 x bfloat>, float, i32, i1)
declare <2 x float> @llvm.amdgcn.cvt.pk.f32.bf8(i32, i1)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.bf8(i32, float, i1)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32, float, i32)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32, float, i1)
declare <2 x half> @llvm.amdgcn.cvt.scalef32.f16.bf8(<2 x half>, i32, float, i32, i1)
declare <2 x half> @llvm.amdgcn.cvt.scalef32.f16.fp8(<2 x half>, i32, float, i32, i1)
declare <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.bf8(i32, float, i1)
declare <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp4(i32, float, i32)
declare <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp8(i32, float, i1)
declare <2 x half> @llvm.amdgcn.cvt.sr.f16.f32(<2 x half>, float, i32, i1)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.bf16(<2 x i16>, <2 x bfloat>, float, i1)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f16(<2 x i16>, <2 x half>, float, i1)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f32(<2 x i16>, float, float, float, i1)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.bf16(<2 x i16>, <2 x bfloat>, float, i1)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f16(<2 x i16>, <2 x half>, float, i1)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16>, float, float, float, i1)
declare <32 x bfloat> @llvm.amdgcn.cvt.scalef32.pk32.bf16.bf6(<6 x i32>, float)
declare <32 x bfloat> @llvm.amdgcn.cvt.scalef32.pk32.bf16.fp6(<6 x i32>, float)
declare <32 x float> @llvm.amdgcn.cvt.scalef32.pk32.f32.bf6(<6 x i32>, float)
declare <32 x float> @llvm.amdgcn.cvt.scalef32.pk32.f32.fp6(<6 x i32>, float)
declare <32 x half> @llvm.amdgcn.cvt.scalef32.pk32.f16.bf6(<6 x i32>, float)
declare <32 x half> @llvm.amdgcn.cvt.scalef32.pk32.f16.fp6(<6 x i32>, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.2xpk16.bf6.f32(<16 x float>, <16 x float>, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.2xpk16.fp6.f32(<16 x float>, <16 x float>, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.pk32.bf6.bf16(<32 x bfloat>, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.pk32.bf6.f16(<32 x half>, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.pk32.fp6.bf16(<32 x bfloat>, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.pk32.fp6.f16(<32 x half>, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.bf6.bf16(<32 x bfloat>, i32, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.bf6.f16(<32 x half>, i32, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.bf6.f32(<32 x float>, i32, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.fp6.bf16(<32 x bfloat>, i32, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.fp6.f16(<32 x half>, i32, float)
declare <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.fp6.f32(<32 x float>, i32, float)
declare float @llvm.amdgcn.cvt.scalef32.f32.bf8(i32, float, i32)
declare float @llvm.amdgcn.cvt.scalef32.f32.fp8(i32, float, i32)
declare i16 @llvm.amdgcn.ashr.pk.i8.i32(i32, i32, i32)
declare i16 @llvm.amdgcn.ashr.pk.u8.i32(i32, i32, i32)
declare i32 @llvm.amdgcn.cvt.pk.fp8.f32(float, float, i32, i1)
declare i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.bf16(i32, <2 x bfloat>, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f16(i32, <2 x half>, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f32(i32, float, float, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.bf16(i32, bfloat, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f16(i32, half, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f32(i32, float, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.bf16(i32, bfloat, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f16(i32, half, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f32(i32, float, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.pk.fp4.bf16(i32, <2 x bfloat>, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.pk.fp4.f16(i32, <2 x half>, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.pk.fp4.f32(i32, <2 x float>, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.sr.bf8.f32(float, i32, i32, i32)

; gfx950's scaled conversions (v_cvt_scalef32_*) as LLVM 22 emits them for the llvm.amdgcn.cvt.scalef32.* intrinsics
; (tests/simgpu/shader/test_cvt8.py has the references). Element i reads in[48 i + j]: w0 a (f32), w1 b (f32), w2 a
; random dword, w3 an old destination, w4 the scale (f32), w5 fp8/fp4 codes, w12-w16 16-bit pairs; and writes
; out[24 i + j]:
;  0 pk_fp8_f32(a, b) into w3's low word, then pk_bf8_f32(a, b) into its high word
;  1 sr_fp8_f32(a) into w3's byte 1, then sr_bf8_f32(b) into its byte 3
;  2 f32_fp8(byte 2 of w5)    3, 4 pk_f32_bf8(high word of w5)
;  5 pk_fp4_f32(a, b) into w3's byte 1    6, 7 pk_f32_fp4(byte 1 of w5)    8 sr_pk_fp4_f32(a, b) into w3's byte 2
;  9 pk_fp8_f16(w12) into w3's low word   10 pk_bf8_bf16(w13) into w3's high word   11 sr_fp8_f16(w14.lo) into byte 2
;  12 pk_f16_fp8(high word of w5)   13 pk_bf16_bf8(low word of w5)   14 f16_fp8(byte 3 of w5) into w3's high half
;  15 pk_fp4_f16(w15) into w3's byte 3   16 pk_f16_fp4(byte 2 of w5)   17 pk_bf16_fp4(byte 0 of w5)
;  18 sr_pk_fp4_bf16(w16) into w3's byte 0
define amdgpu_kernel void @cdna4_cvt(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %io = mul i32 %i, 48
  %oo = mul i32 %i, 24
  %inb = getelementptr i32, ptr addrspace(1) %in, i32 %io
  %outb = getelementptr i32, ptr addrspace(1) %out, i32 %oo
  %t1 = getelementptr i32, ptr addrspace(1) %inb, i32 0
  %t2 = load i32, ptr addrspace(1) %t1
  %t3 = bitcast i32 %t2 to float
  %t4 = getelementptr i32, ptr addrspace(1) %inb, i32 1
  %t5 = load i32, ptr addrspace(1) %t4
  %t6 = bitcast i32 %t5 to float
  %t7 = getelementptr i32, ptr addrspace(1) %inb, i32 2
  %t8 = load i32, ptr addrspace(1) %t7
  %t9 = getelementptr i32, ptr addrspace(1) %inb, i32 3
  %t10 = load i32, ptr addrspace(1) %t9
  %t11 = getelementptr i32, ptr addrspace(1) %inb, i32 4
  %t12 = load i32, ptr addrspace(1) %t11
  %t13 = bitcast i32 %t12 to float
  %t14 = getelementptr i32, ptr addrspace(1) %inb, i32 5
  %t15 = load i32, ptr addrspace(1) %t14
  %t16 = bitcast i32 %t10 to <2 x i16>
  %t17 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16> %t16, float %t3, float %t6, float %t13, i1 false)
  %t18 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f32(<2 x i16> %t17, float %t3, float %t6, float %t13, i1 true)
  %t19 = bitcast <2 x i16> %t18 to i32
  %t20 = getelementptr i32, ptr addrspace(1) %outb, i32 0
  store i32 %t19, ptr addrspace(1) %t20
  %t21 = call i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f32(i32 %t10, float %t3, i32 %t8, float %t13, i32 1)
  %t22 = call i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f32(i32 %t21, float %t6, i32 %t8, float %t13, i32 3)
  %t23 = getelementptr i32, ptr addrspace(1) %outb, i32 1
  store i32 %t22, ptr addrspace(1) %t23
  %t24 = call float @llvm.amdgcn.cvt.scalef32.f32.fp8(i32 %t15, float %t13, i32 2)
  %t25 = bitcast float %t24 to i32
  %t26 = getelementptr i32, ptr addrspace(1) %outb, i32 2
  store i32 %t25, ptr addrspace(1) %t26
  %t27 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.bf8(i32 %t15, float %t13, i1 true)
  %t28 = bitcast <2 x float> %t27 to <2 x i32>
  %t29 = getelementptr i32, ptr addrspace(1) %outb, i32 3
  store <2 x i32> %t28, ptr addrspace(1) %t29, align 4
  %t30 = call i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f32(i32 %t10, float %t3, float %t6, float %t13, i32 1)
  %t31 = getelementptr i32, ptr addrspace(1) %outb, i32 5
  store i32 %t30, ptr addrspace(1) %t31
  %t32 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp4(i32 %t15, float %t13, i32 1)
  %t33 = bitcast <2 x float> %t32 to <2 x i32>
  %t34 = getelementptr i32, ptr addrspace(1) %outb, i32 6
  store <2 x i32> %t33, ptr addrspace(1) %t34, align 4
  %t35 = insertelement <2 x float> poison, float %t3, i32 0
  %t36 = insertelement <2 x float> %t35, float %t6, i32 1
  %t37 = call i32 @llvm.amdgcn.cvt.scalef32.sr.pk.fp4.f32(i32 %t10, <2 x float> %t36, i32 %t8, float %t13, i32 2)
  %t38 = getelementptr i32, ptr addrspace(1) %outb, i32 8
  store i32 %t37, ptr addrspace(1) %t38
  %t39 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t40 = load i32, ptr addrspace(1) %t39
  %t41 = bitcast i32 %t40 to <2 x half>
  %t42 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f16(<2 x i16> %t16, <2 x half> %t41, float %t13, i1 false)
  %t43 = bitcast <2 x i16> %t42 to i32
  %t44 = getelementptr i32, ptr addrspace(1) %outb, i32 9
  store i32 %t43, ptr addrspace(1) %t44
  %t45 = getelementptr i32, ptr addrspace(1) %inb, i32 13
  %t46 = load i32, ptr addrspace(1) %t45
  %t47 = bitcast i32 %t46 to <2 x bfloat>
  %t48 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.bf16(<2 x i16> %t16, <2 x bfloat> %t47, float %t13, i1 true)
  %t49 = bitcast <2 x i16> %t48 to i32
  %t50 = getelementptr i32, ptr addrspace(1) %outb, i32 10
  store i32 %t49, ptr addrspace(1) %t50
  %t51 = getelementptr i32, ptr addrspace(1) %inb, i32 14
  %t52 = load i32, ptr addrspace(1) %t51
  %t53 = bitcast i32 %t52 to <2 x half>
  %t54 = extractelement <2 x half> %t53, i32 0
  %t55 = call i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f16(i32 %t10, half %t54, i32 %t8, float %t13, i32 2)
  %t56 = getelementptr i32, ptr addrspace(1) %outb, i32 11
  store i32 %t55, ptr addrspace(1) %t56
  %t57 = call <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp8(i32 %t15, float %t13, i1 true)
  %t58 = bitcast <2 x half> %t57 to i32
  %t59 = getelementptr i32, ptr addrspace(1) %outb, i32 12
  store i32 %t58, ptr addrspace(1) %t59
  %t60 = call <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.bf8(i32 %t15, float %t13, i1 false)
  %t61 = bitcast <2 x bfloat> %t60 to i32
  %t62 = getelementptr i32, ptr addrspace(1) %outb, i32 13
  store i32 %t61, ptr addrspace(1) %t62
  %t63 = bitcast i32 %t10 to <2 x half>
  %t64 = call <2 x half> @llvm.amdgcn.cvt.scalef32.f16.fp8(<2 x half> %t63, i32 %t15, float %t13, i32 3, i1 true)
  %t65 = bitcast <2 x half> %t64 to i32
  %t66 = getelementptr i32, ptr addrspace(1) %outb, i32 14
  store i32 %t65, ptr addrspace(1) %t66
  %t67 = getelementptr i32, ptr addrspace(1) %inb, i32 15
  %t68 = load i32, ptr addrspace(1) %t67
  %t69 = bitcast i32 %t68 to <2 x half>
  %t70 = call i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.f16(i32 %t10, <2 x half> %t69, float %t13, i32 3)
  %t71 = getelementptr i32, ptr addrspace(1) %outb, i32 15
  store i32 %t70, ptr addrspace(1) %t71
  %t72 = call <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.fp4(i32 %t15, float %t13, i32 2)
  %t73 = bitcast <2 x half> %t72 to i32
  %t74 = getelementptr i32, ptr addrspace(1) %outb, i32 16
  store i32 %t73, ptr addrspace(1) %t74
  %t75 = call <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp4(i32 %t15, float %t13, i32 0)
  %t76 = bitcast <2 x bfloat> %t75 to i32
  %t77 = getelementptr i32, ptr addrspace(1) %outb, i32 17
  store i32 %t76, ptr addrspace(1) %t77
  %t78 = getelementptr i32, ptr addrspace(1) %inb, i32 16
  %t79 = load i32, ptr addrspace(1) %t78
  %t80 = bitcast i32 %t79 to <2 x bfloat>
  %t81 = call i32 @llvm.amdgcn.cvt.scalef32.sr.pk.fp4.bf16(i32 %t10, <2 x bfloat> %t80, i32 %t8, float %t13, i32 0)
  %t82 = getelementptr i32, ptr addrspace(1) %outb, i32 18
  store i32 %t81, ptr addrspace(1) %t82
  ret void
}

; The packed fp6 / bf6 forms: element i reads in[48 i + j] (w2 random, w4 scale, w6-w11 32 six-bit codes, w12-w43 32
; f32 values, w12-w27 also 32 f16 values, w28-w43 32 f16 values) and writes out[72 i + j]:
;  0-5 2xpk16_fp6_f32(w12-w27, w28-w43)   6-11 sr_pk32_bf6_f32(w12-w43)   12-43 pk32_f32_fp6(w6-w11)
;  44-49 pk32_fp6_f16(w12-w27)   50-65 pk32_bf16_bf6(w6-w11)   66-71 sr_pk32_fp6_f16(w28-w43)
define amdgpu_kernel void @cdna4_cvt6(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %io = mul i32 %i, 48
  %oo = mul i32 %i, 72
  %inb = getelementptr i32, ptr addrspace(1) %in, i32 %io
  %outb = getelementptr i32, ptr addrspace(1) %out, i32 %oo
  %t1 = getelementptr i32, ptr addrspace(1) %inb, i32 2
  %t2 = load i32, ptr addrspace(1) %t1
  %t3 = getelementptr i32, ptr addrspace(1) %inb, i32 4
  %t4 = load i32, ptr addrspace(1) %t3
  %t5 = bitcast i32 %t4 to float
  %t6 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t7 = load <16 x i32>, ptr addrspace(1) %t6, align 4
  %t8 = bitcast <16 x i32> %t7 to <16 x float>
  %t9 = getelementptr i32, ptr addrspace(1) %inb, i32 28
  %t10 = load <16 x i32>, ptr addrspace(1) %t9, align 4
  %t11 = bitcast <16 x i32> %t10 to <16 x float>
  %t12 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.2xpk16.fp6.f32(<16 x float> %t8, <16 x float> %t11, float %t5)
  %t13 = getelementptr i32, ptr addrspace(1) %outb, i32 0
  store <6 x i32> %t12, ptr addrspace(1) %t13, align 4
  %t14 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t15 = load <32 x i32>, ptr addrspace(1) %t14, align 4
  %t16 = bitcast <32 x i32> %t15 to <32 x float>
  %t17 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.bf6.f32(<32 x float> %t16, i32 %t2, float %t5)
  %t18 = getelementptr i32, ptr addrspace(1) %outb, i32 6
  store <6 x i32> %t17, ptr addrspace(1) %t18, align 4
  %t19 = getelementptr i32, ptr addrspace(1) %inb, i32 6
  %t20 = load <6 x i32>, ptr addrspace(1) %t19, align 4
  %t21 = call <32 x float> @llvm.amdgcn.cvt.scalef32.pk32.f32.fp6(<6 x i32> %t20, float %t5)
  %t22 = bitcast <32 x float> %t21 to <32 x i32>
  %t23 = getelementptr i32, ptr addrspace(1) %outb, i32 12
  store <32 x i32> %t22, ptr addrspace(1) %t23, align 4
  %t24 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t25 = load <16 x i32>, ptr addrspace(1) %t24, align 4
  %t26 = bitcast <16 x i32> %t25 to <32 x half>
  %t27 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.pk32.fp6.f16(<32 x half> %t26, float %t5)
  %t28 = getelementptr i32, ptr addrspace(1) %outb, i32 44
  store <6 x i32> %t27, ptr addrspace(1) %t28, align 4
  %t29 = call <32 x bfloat> @llvm.amdgcn.cvt.scalef32.pk32.bf16.bf6(<6 x i32> %t20, float %t5)
  %t30 = bitcast <32 x bfloat> %t29 to <16 x i32>
  %t31 = getelementptr i32, ptr addrspace(1) %outb, i32 50
  store <16 x i32> %t30, ptr addrspace(1) %t31, align 4
  %t32 = getelementptr i32, ptr addrspace(1) %inb, i32 28
  %t33 = load <16 x i32>, ptr addrspace(1) %t32, align 4
  %t34 = bitcast <16 x i32> %t33 to <32 x half>
  %t35 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.fp6.f16(<32 x half> %t34, i32 %t2, float %t5)
  %t36 = getelementptr i32, ptr addrspace(1) %outb, i32 66
  store <6 x i32> %t35, ptr addrspace(1) %t36, align 4
  ret void
}

; gfx950's other conversions: element i reads w0 a, w1 b, w2 random, w3 old, w5 codes and writes out[8 i + j]:
;  0 cvt_sr_bf16_f32(a) into w3's low half   1 cvt_sr_f16_f32(b) into w3's high half
;  2 ashr_pk_i8_i32(w0, w1, w2)   3 ashr_pk_u8_i32(w0, w1, w2)   (zero-extended)
;  4 cvt_pk_fp8_f32(a, b) into w3's high word   5 cvt_sr_bf8_f32(a) into w3's byte 2
;  6, 7 cvt_pk_f32_bf8(high word of w5)
define amdgpu_kernel void @cdna4_cvt_misc(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %io = mul i32 %i, 48
  %oo = mul i32 %i, 8
  %inb = getelementptr i32, ptr addrspace(1) %in, i32 %io
  %outb = getelementptr i32, ptr addrspace(1) %out, i32 %oo
  %t1 = getelementptr i32, ptr addrspace(1) %inb, i32 0
  %t2 = load i32, ptr addrspace(1) %t1
  %t3 = getelementptr i32, ptr addrspace(1) %inb, i32 1
  %t4 = load i32, ptr addrspace(1) %t3
  %t5 = bitcast i32 %t2 to float
  %t6 = bitcast i32 %t4 to float
  %t7 = getelementptr i32, ptr addrspace(1) %inb, i32 2
  %t8 = load i32, ptr addrspace(1) %t7
  %t9 = getelementptr i32, ptr addrspace(1) %inb, i32 3
  %t10 = load i32, ptr addrspace(1) %t9
  %t11 = getelementptr i32, ptr addrspace(1) %inb, i32 5
  %t12 = load i32, ptr addrspace(1) %t11
  %t13 = bitcast i32 %t10 to <2 x bfloat>
  %t14 = call <2 x bfloat> @llvm.amdgcn.cvt.sr.bf16.f32(<2 x bfloat> %t13, float %t5, i32 %t8, i1 false)
  %t15 = bitcast <2 x bfloat> %t14 to i32
  %t16 = getelementptr i32, ptr addrspace(1) %outb, i32 0
  store i32 %t15, ptr addrspace(1) %t16
  %t17 = bitcast i32 %t10 to <2 x half>
  %t18 = call <2 x half> @llvm.amdgcn.cvt.sr.f16.f32(<2 x half> %t17, float %t6, i32 %t8, i1 true)
  %t19 = bitcast <2 x half> %t18 to i32
  %t20 = getelementptr i32, ptr addrspace(1) %outb, i32 1
  store i32 %t19, ptr addrspace(1) %t20
  %t21 = call i16 @llvm.amdgcn.ashr.pk.i8.i32(i32 %t2, i32 %t4, i32 %t8)
  %t22 = zext i16 %t21 to i32
  %t23 = getelementptr i32, ptr addrspace(1) %outb, i32 2
  store i32 %t22, ptr addrspace(1) %t23
  %t24 = call i16 @llvm.amdgcn.ashr.pk.u8.i32(i32 %t2, i32 %t4, i32 %t8)
  %t25 = zext i16 %t24 to i32
  %t26 = getelementptr i32, ptr addrspace(1) %outb, i32 3
  store i32 %t25, ptr addrspace(1) %t26
  %t27 = call i32 @llvm.amdgcn.cvt.pk.fp8.f32(float %t5, float %t6, i32 %t10, i1 true)
  %t28 = getelementptr i32, ptr addrspace(1) %outb, i32 4
  store i32 %t27, ptr addrspace(1) %t28
  %t29 = call i32 @llvm.amdgcn.cvt.sr.bf8.f32(float %t5, i32 %t8, i32 %t10, i32 2)
  %t30 = getelementptr i32, ptr addrspace(1) %outb, i32 5
  store i32 %t29, ptr addrspace(1) %t30
  %t31 = call <2 x float> @llvm.amdgcn.cvt.pk.f32.bf8(i32 %t12, i1 true)
  %t32 = bitcast <2 x float> %t31 to <2 x i32>
  %t33 = getelementptr i32, ptr addrspace(1) %outb, i32 6
  store <2 x i32> %t32, ptr addrspace(1) %t33, align 4
  ret void
}

; The other f16 / bf16 / fp8 forms (inputs as cdna4_cvt's); out[16 i + j]:
;  0 pk_fp8_bf16(w16) into w3's low word   1 pk_bf8_f16(w12) into its high word   2 sr_bf8_f16(w14.lo) into byte 1
;  3 sr_fp8_bf16(w16.lo) into byte 3   4 sr_bf8_bf16(w13.lo) into byte 0   5 f32_bf8(byte 1 of w5)
;  6, 7 pk_f32_fp8(low word of w5)   8 pk_f16_bf8(low word of w5)   9 pk_bf16_fp8(high word of w5)
;  10 f16_bf8(byte 0 of w5) into w3's low half   11 pk_fp4_bf16(w16) into w3's byte 2
;  12 sr_pk_fp4_f16(w15) into byte 1
define amdgpu_kernel void @cdna4_cvt_more(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %io = mul i32 %i, 48
  %oo = mul i32 %i, 16
  %inb = getelementptr i32, ptr addrspace(1) %in, i32 %io
  %outb = getelementptr i32, ptr addrspace(1) %out, i32 %oo
  %t1 = getelementptr i32, ptr addrspace(1) %inb, i32 2
  %t2 = load i32, ptr addrspace(1) %t1
  %t3 = getelementptr i32, ptr addrspace(1) %inb, i32 3
  %t4 = load i32, ptr addrspace(1) %t3
  %t5 = getelementptr i32, ptr addrspace(1) %inb, i32 4
  %t6 = load i32, ptr addrspace(1) %t5
  %t7 = bitcast i32 %t6 to float
  %t8 = getelementptr i32, ptr addrspace(1) %inb, i32 5
  %t9 = load i32, ptr addrspace(1) %t8
  %t10 = bitcast i32 %t4 to <2 x i16>
  %t11 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t12 = load i32, ptr addrspace(1) %t11
  %t13 = getelementptr i32, ptr addrspace(1) %inb, i32 13
  %t14 = load i32, ptr addrspace(1) %t13
  %t15 = getelementptr i32, ptr addrspace(1) %inb, i32 14
  %t16 = load i32, ptr addrspace(1) %t15
  %t17 = getelementptr i32, ptr addrspace(1) %inb, i32 15
  %t18 = load i32, ptr addrspace(1) %t17
  %t19 = getelementptr i32, ptr addrspace(1) %inb, i32 16
  %t20 = load i32, ptr addrspace(1) %t19
  %t21 = bitcast i32 %t20 to <2 x bfloat>
  %t22 = bitcast i32 %t12 to <2 x half>
  %t23 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.bf16(<2 x i16> %t10, <2 x bfloat> %t21, float %t7, i1 false)
  %t24 = bitcast <2 x i16> %t23 to i32
  %t25 = getelementptr i32, ptr addrspace(1) %outb, i32 0
  store i32 %t24, ptr addrspace(1) %t25
  %t26 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f16(<2 x i16> %t10, <2 x half> %t22, float %t7, i1 true)
  %t27 = bitcast <2 x i16> %t26 to i32
  %t28 = getelementptr i32, ptr addrspace(1) %outb, i32 1
  store i32 %t27, ptr addrspace(1) %t28
  %t29 = bitcast i32 %t16 to <2 x half>
  %t30 = extractelement <2 x half> %t29, i32 0
  %t31 = call i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f16(i32 %t4, half %t30, i32 %t2, float %t7, i32 1)
  %t32 = getelementptr i32, ptr addrspace(1) %outb, i32 2
  store i32 %t31, ptr addrspace(1) %t32
  %t33 = extractelement <2 x bfloat> %t21, i32 0
  %t34 = call i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.bf16(i32 %t4, bfloat %t33, i32 %t2, float %t7, i32 3)
  %t35 = getelementptr i32, ptr addrspace(1) %outb, i32 3
  store i32 %t34, ptr addrspace(1) %t35
  %t36 = bitcast i32 %t14 to <2 x bfloat>
  %t37 = extractelement <2 x bfloat> %t36, i32 0
  %t38 = call i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.bf16(i32 %t4, bfloat %t37, i32 %t2, float %t7, i32 0)
  %t39 = getelementptr i32, ptr addrspace(1) %outb, i32 4
  store i32 %t38, ptr addrspace(1) %t39
  %t40 = call float @llvm.amdgcn.cvt.scalef32.f32.bf8(i32 %t9, float %t7, i32 1)
  %t41 = bitcast float %t40 to i32
  %t42 = getelementptr i32, ptr addrspace(1) %outb, i32 5
  store i32 %t41, ptr addrspace(1) %t42
  %t43 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32 %t9, float %t7, i1 false)
  %t44 = bitcast <2 x float> %t43 to <2 x i32>
  %t45 = getelementptr i32, ptr addrspace(1) %outb, i32 6
  store <2 x i32> %t44, ptr addrspace(1) %t45, align 4
  %t46 = call <2 x half> @llvm.amdgcn.cvt.scalef32.pk.f16.bf8(i32 %t9, float %t7, i1 false)
  %t47 = bitcast <2 x half> %t46 to i32
  %t48 = getelementptr i32, ptr addrspace(1) %outb, i32 8
  store i32 %t47, ptr addrspace(1) %t48
  %t49 = call <2 x bfloat> @llvm.amdgcn.cvt.scalef32.pk.bf16.fp8(i32 %t9, float %t7, i1 true)
  %t50 = bitcast <2 x bfloat> %t49 to i32
  %t51 = getelementptr i32, ptr addrspace(1) %outb, i32 9
  store i32 %t50, ptr addrspace(1) %t51
  %t52 = bitcast i32 %t4 to <2 x half>
  %t53 = call <2 x half> @llvm.amdgcn.cvt.scalef32.f16.bf8(<2 x half> %t52, i32 %t9, float %t7, i32 0, i1 false)
  %t54 = bitcast <2 x half> %t53 to i32
  %t55 = getelementptr i32, ptr addrspace(1) %outb, i32 10
  store i32 %t54, ptr addrspace(1) %t55
  %t56 = call i32 @llvm.amdgcn.cvt.scalef32.pk.fp4.bf16(i32 %t4, <2 x bfloat> %t21, float %t7, i32 2)
  %t57 = getelementptr i32, ptr addrspace(1) %outb, i32 11
  store i32 %t56, ptr addrspace(1) %t57
  %t58 = bitcast i32 %t18 to <2 x half>
  %t59 = call i32 @llvm.amdgcn.cvt.scalef32.sr.pk.fp4.f16(i32 %t4, <2 x half> %t58, i32 %t2, float %t7, i32 1)
  %t60 = getelementptr i32, ptr addrspace(1) %outb, i32 12
  store i32 %t59, ptr addrspace(1) %t60
  ret void
}

; The other packed fp6 / bf6 forms (inputs as cdna4_cvt6's); out[128 i + j]:
;  0-5 2xpk16_bf6_f32(w12-w27, w28-w43)   6-11 sr_pk32_fp6_f32(w12-w43)   12-43 pk32_f32_bf6(w6-w11)
;  44-49 pk32_bf6_f16(w12-w27)   50-55 pk32_fp6_bf16(w12-w27)   56-61 pk32_bf6_bf16(w28-w43)
;  62-77 pk32_f16_fp6(w6-w11)   78-93 pk32_bf16_fp6(w6-w11)   94-109 pk32_f16_bf6(w6-w11)
;  110-115 sr_pk32_bf6_f16(w28-w43)   116-121 sr_pk32_fp6_bf16(w12-w27)   122-127 sr_pk32_bf6_bf16(w28-w43)
define amdgpu_kernel void @cdna4_cvt6_more(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %io = mul i32 %i, 48
  %oo = mul i32 %i, 128
  %inb = getelementptr i32, ptr addrspace(1) %in, i32 %io
  %outb = getelementptr i32, ptr addrspace(1) %out, i32 %oo
  %t1 = getelementptr i32, ptr addrspace(1) %inb, i32 2
  %t2 = load i32, ptr addrspace(1) %t1
  %t3 = getelementptr i32, ptr addrspace(1) %inb, i32 4
  %t4 = load i32, ptr addrspace(1) %t3
  %t5 = bitcast i32 %t4 to float
  %t6 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t7 = load <16 x i32>, ptr addrspace(1) %t6, align 4
  %t8 = bitcast <16 x i32> %t7 to <16 x float>
  %t9 = getelementptr i32, ptr addrspace(1) %inb, i32 28
  %t10 = load <16 x i32>, ptr addrspace(1) %t9, align 4
  %t11 = bitcast <16 x i32> %t10 to <16 x float>
  %t12 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.2xpk16.bf6.f32(<16 x float> %t8, <16 x float> %t11, float %t5)
  %t13 = getelementptr i32, ptr addrspace(1) %outb, i32 0
  store <6 x i32> %t12, ptr addrspace(1) %t13, align 4
  %t14 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t15 = load <32 x i32>, ptr addrspace(1) %t14, align 4
  %t16 = bitcast <32 x i32> %t15 to <32 x float>
  %t17 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.fp6.f32(<32 x float> %t16, i32 %t2, float %t5)
  %t18 = getelementptr i32, ptr addrspace(1) %outb, i32 6
  store <6 x i32> %t17, ptr addrspace(1) %t18, align 4
  %t19 = getelementptr i32, ptr addrspace(1) %inb, i32 6
  %t20 = load <6 x i32>, ptr addrspace(1) %t19, align 4
  %t21 = call <32 x float> @llvm.amdgcn.cvt.scalef32.pk32.f32.bf6(<6 x i32> %t20, float %t5)
  %t22 = bitcast <32 x float> %t21 to <32 x i32>
  %t23 = getelementptr i32, ptr addrspace(1) %outb, i32 12
  store <32 x i32> %t22, ptr addrspace(1) %t23, align 4
  %t24 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t25 = load <16 x i32>, ptr addrspace(1) %t24, align 4
  %t26 = bitcast <16 x i32> %t25 to <32 x half>
  %t27 = getelementptr i32, ptr addrspace(1) %inb, i32 12
  %t28 = load <16 x i32>, ptr addrspace(1) %t27, align 4
  %t29 = bitcast <16 x i32> %t28 to <32 x bfloat>
  %t30 = getelementptr i32, ptr addrspace(1) %inb, i32 28
  %t31 = load <16 x i32>, ptr addrspace(1) %t30, align 4
  %t32 = bitcast <16 x i32> %t31 to <32 x half>
  %t33 = getelementptr i32, ptr addrspace(1) %inb, i32 28
  %t34 = load <16 x i32>, ptr addrspace(1) %t33, align 4
  %t35 = bitcast <16 x i32> %t34 to <32 x bfloat>
  %t36 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.pk32.bf6.f16(<32 x half> %t26, float %t5)
  %t37 = getelementptr i32, ptr addrspace(1) %outb, i32 44
  store <6 x i32> %t36, ptr addrspace(1) %t37, align 4
  %t38 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.pk32.fp6.bf16(<32 x bfloat> %t29, float %t5)
  %t39 = getelementptr i32, ptr addrspace(1) %outb, i32 50
  store <6 x i32> %t38, ptr addrspace(1) %t39, align 4
  %t40 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.pk32.bf6.bf16(<32 x bfloat> %t35, float %t5)
  %t41 = getelementptr i32, ptr addrspace(1) %outb, i32 56
  store <6 x i32> %t40, ptr addrspace(1) %t41, align 4
  %t42 = call <32 x half> @llvm.amdgcn.cvt.scalef32.pk32.f16.fp6(<6 x i32> %t20, float %t5)
  %t43 = bitcast <32 x half> %t42 to <16 x i32>
  %t44 = getelementptr i32, ptr addrspace(1) %outb, i32 62
  store <16 x i32> %t43, ptr addrspace(1) %t44, align 4
  %t45 = call <32 x bfloat> @llvm.amdgcn.cvt.scalef32.pk32.bf16.fp6(<6 x i32> %t20, float %t5)
  %t46 = bitcast <32 x bfloat> %t45 to <16 x i32>
  %t47 = getelementptr i32, ptr addrspace(1) %outb, i32 78
  store <16 x i32> %t46, ptr addrspace(1) %t47, align 4
  %t48 = call <32 x half> @llvm.amdgcn.cvt.scalef32.pk32.f16.bf6(<6 x i32> %t20, float %t5)
  %t49 = bitcast <32 x half> %t48 to <16 x i32>
  %t50 = getelementptr i32, ptr addrspace(1) %outb, i32 94
  store <16 x i32> %t49, ptr addrspace(1) %t50, align 4
  %t51 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.bf6.f16(<32 x half> %t32, i32 %t2, float %t5)
  %t52 = getelementptr i32, ptr addrspace(1) %outb, i32 110
  store <6 x i32> %t51, ptr addrspace(1) %t52, align 4
  %t53 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.fp6.bf16(<32 x bfloat> %t29, i32 %t2, float %t5)
  %t54 = getelementptr i32, ptr addrspace(1) %outb, i32 116
  store <6 x i32> %t53, ptr addrspace(1) %t54, align 4
  %t55 = call <6 x i32> @llvm.amdgcn.cvt.scalef32.sr.pk32.bf6.bf16(<32 x bfloat> %t35, i32 %t2, float %t5)
  %t56 = getelementptr i32, ptr addrspace(1) %outb, i32 122
  store <6 x i32> %t55, ptr addrspace(1) %t56, align 4
  ret void
}
