"""The test corpus: small kernels that each exercise one kind of code (float and integer arithmetic,
conversions, divergent control flow, LDS with barriers, atomics, scratch, hidden arguments, cross-lane
operations). Elementwise kernels come from one template; the others are written out.
"""

from __future__ import annotations

import numpy as np

from compiler.samples.sample import HEADER, Sample, elementwise, kernel


def _positive(rng, t, n):
    return (rng.random(n) * 100 + 0.01).astype(t)


def _small_int(rng, t, n):
    return rng.integers(-1000, 1000, n).astype(t)


def _nonzero_int(rng, t, n):
    x = rng.integers(-100000, 100000, n).astype(t)
    return np.where(x == 0, 7, x).astype(t)


def _float_kernels() -> list[Sample]:
    out = []
    for t, lt in ((np.float32, "float"), (np.float64, "double"), (np.float16, "half")):
        tn = np.dtype(t).name
        out.append(elementwise(f"fadd_{tn}", [t, t], t, f"  %r = fadd {lt} %x0, %x1", lambda a, b: a + b))
        out.append(elementwise(f"fmul_{tn}", [t, t], t, f"  %r = fmul {lt} %x0, %x1", lambda a, b: a * b))
        out.append(elementwise(f"fsub_{tn}", [t, t], t, f"  %r = fsub {lt} %x0, %x1", lambda a, b: a - b))
        out.append(elementwise(
            f"fma_{tn}", [t, t, t], t, f"  %r = call {lt} @llvm.fma.{_suffix(lt)}({lt} %x0, {lt} %x1, {lt} %x2)",
            lambda a, b, c: _exact_fma(a, b, c), decls=f"declare {lt} @llvm.fma.{_suffix(lt)}({lt}, {lt}, {lt})\n"))
        out.append(elementwise(
            f"fmin_select_{tn}", [t, t], t, f"  %c = fcmp olt {lt} %x0, %x1\n  %r = select i1 %c, {lt} %x0, {lt} %x1",
            lambda a, b: np.where(a < b, a, b)))
    out.append(elementwise("fdiv_f32", [np.float32, np.float32], np.float32, "  %r = fdiv float %x0, %x1",
                           lambda a, b: a / b, rtol=2e-7))
    out.append(elementwise("fdiv_f64", [np.float64, np.float64], np.float64, "  %r = fdiv double %x0, %x1",
                           lambda a, b: a / b, rtol=1e-15))
    for fn, ref, tol, gen in (("sqrt", np.sqrt, 2e-7, _positive), ("exp2", np.exp2, 3e-7, None),
                              ("log2", np.log2, 3e-7, _positive), ("sin", np.sin, 5e-6, None),
                              ("cos", np.cos, 5e-6, None), ("floor", np.floor, 0, None),
                              ("fabs", np.abs, 0, None)):
        decl = f"declare float @llvm.{fn}.f32(float)\n"
        out.append(elementwise(f"{fn}_f32", [np.float32], np.float32, f"  %r = call float @llvm.{fn}.f32(float %x0)",
                               lambda a, r=ref: r(a.astype(np.float64)), rtol=tol, atol=tol, gen=gen, decls=decl,
                               tags={"elementwise", "transcendental"}))
    out.append(elementwise("sqrt_f64", [np.float64], np.float64, "  %r = call double @llvm.sqrt.f64(double %x0)",
                           np.sqrt, rtol=1e-15, gen=_positive, decls="declare double @llvm.sqrt.f64(double)\n"))
    return out


def _suffix(lt: str) -> str:
    return {"float": "f32", "double": "f64", "half": "f16"}[lt]


def _exact_fma(a, b, c):
    """fma with one rounding: exact in a wider type for f16/f32, via Fraction for f64."""
    if a.dtype == np.float64:
        from fractions import Fraction
        out = []
        for x, y, z in zip(a.tolist(), b.tolist(), c.tolist(), strict=True):
            if not all(np.isfinite([x, y, z])):
                out.append(x * y + z)
            else:
                out.append(float(Fraction(x) * Fraction(y) + Fraction(z)))
        return np.array(out)
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(a.dtype)


def _conversion_kernels() -> list[Sample]:
    f32, f64, f16, i32, u32, i64 = np.float32, np.float64, np.float16, np.int32, np.uint32, np.int64
    return [
        elementwise("fptosi_f32_i32", [f32], i32, "  %r = fptosi float %x0 to i32", lambda a: a.astype(i32)),
        elementwise("sitofp_i32_f32", [i32], f32, "  %r = sitofp i32 %x0 to float", lambda a: a.astype(f32)),
        elementwise("uitofp_u32_f32", [u32], f32, "  %r = uitofp i32 %x0 to float", lambda a: a.astype(f32)),
        elementwise("fptrunc_f32_f16", [f32], f16, "  %r = fptrunc float %x0 to half", lambda a: a.astype(f16)),
        elementwise("fpext_f16_f32", [f16], f32, "  %r = fpext half %x0 to float", lambda a: a.astype(f32)),
        elementwise("fpext_f32_f64", [f32], f64, "  %r = fpext float %x0 to double", lambda a: a.astype(f64)),
        elementwise("fptrunc_f64_f32", [f64], f32, "  %r = fptrunc double %x0 to float", lambda a: a.astype(f32)),
        elementwise("sitofp_i64_f64", [i64], f64, "  %r = sitofp i64 %x0 to double", lambda a: a.astype(f64),
                    gen=_small_int),
        elementwise("fptosi_f64_i32", [f64], i32, "  %r = fptosi double %x0 to i32", lambda a: a.astype(i32)),
    ]


def _int_kernels() -> list[Sample]:
    i32, u32, i64, i16, u8 = np.int32, np.uint32, np.int64, np.int16, np.uint8
    return [
        elementwise("add_i32", [i32, i32], i32, "  %r = add i32 %x0, %x1", lambda a, b: a + b),
        elementwise("mul_i32", [i32, i32], i32, "  %r = mul i32 %x0, %x1", lambda a, b: a * b),
        elementwise("mul_i64", [i64, i64], i64, "  %r = mul i64 %x0, %x1", lambda a, b: a * b),
        elementwise("add_i64", [i64, i64], i64, "  %r = add i64 %x0, %x1", lambda a, b: a + b),
        elementwise("sdiv_i32", [i32, i32], i32, "  %r = sdiv i32 %x0, %x1",
                    lambda a, b: (np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64)) *
                                  np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64))).astype(i32),
                    gen=_nonzero_int),
        elementwise("urem_u32", [u32, u32], u32, "  %r = urem i32 %x0, %x1", lambda a, b: a % b,
                    gen=lambda rng, t, n: rng.integers(1, 1 << 32, n, dtype=np.uint64).astype(np.uint32)),
        elementwise("shifts_i32", [i32, u32], i32,
                    "  %s = and i32 %x1, 31\n  %a = shl i32 %x0, %s\n  %b = ashr i32 %x0, %s\n  %r = xor i32 %a, %b",
                    lambda a, b: (a << (b & 31)) ^ (a >> (b & 31))),
        elementwise("ctpop_ctlz_i32", [u32], u32,
                    "  %a = call i32 @llvm.ctpop.i32(i32 %x0)\n  %b = call i32 @llvm.ctlz.i32(i32 %x0, i1 false)\n"
                    "  %c = shl i32 %b, 8\n  %r = or i32 %a, %c",
                    lambda a: np.array([bin(int(x)).count("1") | ((32 - int(x).bit_length()) << 8) for x in a], u32),
                    decls="declare i32 @llvm.ctpop.i32(i32)\ndeclare i32 @llvm.ctlz.i32(i32, i1)\n"),
        elementwise("bitreverse_i32", [u32], u32, "  %r = call i32 @llvm.bitreverse.i32(i32 %x0)",
                    lambda a: np.array([int(f"{int(x):032b}"[::-1], 2) for x in a], u32),
                    decls="declare i32 @llvm.bitreverse.i32(i32)\n"),
        elementwise("add_i16_sext", [i16, i16], i32,
                    "  %s = add i16 %x0, %x1\n  %r = sext i16 %s to i32", lambda a, b: (a + b).astype(i32)),
        elementwise("zext_u8_mul", [u8, u8], u32,
                    "  %a = zext i8 %x0 to i32\n  %b = zext i8 %x1 to i32\n  %r = mul i32 %a, %b",
                    lambda a, b: a.astype(u32) * b.astype(u32)),
        elementwise("umax_smin_i32", [i32, i32], i32,
                    "  %a = call i32 @llvm.smin.i32(i32 %x0, i32 %x1)\n  %b = call i32 @llvm.umax.i32(i32 %x0, i32 %x1)"
                    "\n  %r = xor i32 %a, %b",
                    lambda a, b: np.minimum(a, b) ^ np.maximum(a.view(u32), b.view(u32)).view(i32),
                    decls="declare i32 @llvm.smin.i32(i32, i32)\ndeclare i32 @llvm.umax.i32(i32, i32)\n"),
    ]


def _loop_kernels() -> list[Sample]:
    # Divergent loop: each lane iterates x % 37 times (collatz-like steps), so waves diverge and reconverge.
    loop_ir = kernel("divergent_loop", """
  %n = urem i32 %x, 37
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %body ]
  %v = phi i32 [ %x, %entry ], [ %v2, %body ]
  %done = icmp uge i32 %k, %n
  br i1 %done, label %exit, label %body
body:
  %odd = and i32 %v, 1
  %isodd = icmp ne i32 %odd, 0
  %t3 = mul i32 %v, 3
  %t31 = add i32 %t3, 1
  %half = lshr i32 %v, 1
  %v2 = select i1 %isodd, i32 %t31, i32 %half
  %k1 = add i32 %k, 1
  br label %loop
exit:
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %v, ptr addrspace(1) %po
  ret void
""", load="i32")

    def loop_ref(args):
        x = args[1].astype(np.uint64)
        out = []
        for v in x.tolist():
            n = v % 37
            for _ in range(n):
                v = (v * 3 + 1) & 0xFFFFFFFF if v & 1 else v >> 1
            out.append(v)
        return {0: np.array(out, np.uint32)}

    branch_ir = kernel("divergent_branch", """
  %c = fcmp ogt float %x, 0.0
  br i1 %c, label %pos, label %neg
pos:
  %a = fmul float %x, 2.0
  br label %join
neg:
  %b = fsub float 0.0, %x
  %b2 = fadd float %b, 1.0
  br label %join
join:
  %r = phi float [ %a, %pos ], [ %b2, %neg ]
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %r, ptr addrspace(1) %po
  ret void
""", load="float")
    return [
        Sample("divergent_loop", loop_ir,
               lambda rng: [np.zeros(256, np.uint32), rng.integers(0, 1 << 20, 256).astype(np.uint32)],
                     loop_ref, grid=(4,), block=(64,), tags={"control"}),
        Sample("divergent_branch", branch_ir,
               lambda rng: [np.zeros(256, np.float32), rng.standard_normal(256).astype(np.float32)],
                     lambda a: {0: np.where(a[1] > 0, a[1] * np.float32(2), -a[1] + np.float32(1))},
                     grid=(4,), block=(64,), tags={"control"}),
    ]


def _memory_kernels() -> list[Sample]:
    lds_reduce = kernel("lds_reduce", """
  %l = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 %tid
  store float %x, ptr addrspace(3) %l
  br label %loop
loop:
  %s = phi i32 [ 128, %entry ], [ %s2, %cont ]
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %lt = icmp ult i32 %tid, %s
  br i1 %lt, label %add, label %cont
add:
  %j = add i32 %tid, %s
  %lj = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 %j
  %a = load float, ptr addrspace(3) %l
  %b = load float, ptr addrspace(3) %lj
  %c = fadd float %a, %b
  store float %c, ptr addrspace(3) %l
  br label %cont
cont:
  %s2 = lshr i32 %s, 1
  %more = icmp ne i32 %s2, 0
  br i1 %more, label %loop, label %exit
exit:
  %z = icmp eq i32 %tid, 0
  br i1 %z, label %st, label %ret
st:
  %r = load float, ptr addrspace(3) @lds
  %po = getelementptr float, ptr addrspace(1) %out, i32 %gid
  store float %r, ptr addrspace(1) %po
  br label %ret
ret:
  ret void
""", block=256, load="float", decls="""@lds = internal addrspace(3) global [256 x float] undef, align 4
declare void @llvm.amdgcn.s.barrier()
""")

    def lds_ref(args):
        x = args[1].reshape(4, 256)
        # the tree order of the kernel, in f32
        v = x.copy()
        s = 128
        while s:
            v[:, :s] = v[:, :s] + v[:, s:2 * s]
            s //= 2
        return {0: v[:, 0].copy()}

    atomics = kernel("global_atomics", """
  %slot = and i32 %x, 7
  %ps = getelementptr i32, ptr addrspace(1) %out, i32 %slot
  %old = atomicrmw add ptr addrspace(1) %ps, i32 1 monotonic
  %pm = getelementptr i32, ptr addrspace(1) %out, i32 8
  %o2 = atomicrmw umax ptr addrspace(1) %pm, i32 %x monotonic
  ret void
""", load="i32")

    def atomics_ref(args):
        x = args[1]
        out = np.zeros(16, np.uint32)
        out[:8] = np.bincount(x & 7, minlength=8)
        out[8] = x.max()
        return {0: out}

    scratch = kernel("private_array", """
  %arr = alloca [16 x i32], align 4, addrspace(5)
  br label %fill
fill:
  %k = phi i32 [ 0, %entry ], [ %k1, %fill ]
  %pk = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %k
  %v = mul i32 %k, %i
  store volatile i32 %v, ptr addrspace(5) %pk
  %k1 = add i32 %k, 1
  %d = icmp eq i32 %k1, 16
  br i1 %d, label %read, label %fill
read:
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %i
  %x = load i32, ptr addrspace(1) %p
  %idx = and i32 %x, 15
  %pi = getelementptr [16 x i32], ptr addrspace(5) %arr, i32 0, i32 %idx
  %r = load volatile i32, ptr addrspace(5) %pi
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %r, ptr addrspace(1) %po
  ret void
""")
    hidden = HEADER + """
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
define amdgpu_kernel void @hidden_args(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %imp = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %nb = load i32, ptr addrspace(4) %imp
  %pgs = getelementptr i8, ptr addrspace(4) %imp, i32 12
  %gs = load i16, ptr addrspace(4) %pgs
  %gs32 = zext i16 %gs to i32
  %base = mul i32 %gid, %gs32
  %i = add i32 %base, %tid
  %v = mul i32 %nb, 1000
  %v2 = add i32 %v, %gs32
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %v2, ptr addrspace(1) %po
  ret void
}
"""
    return [
        Sample("lds_reduce", lds_reduce,
               lambda rng: [np.zeros(4, np.float32), rng.standard_normal(1024).astype(np.float32)],
               lds_ref, grid=(4,), block=(256,), tags={"lds", "barrier"}),
        Sample("global_atomics", atomics,
               lambda rng: [np.zeros(16, np.uint32), rng.integers(0, 1 << 31, 256).astype(np.uint32)],
               atomics_ref, tags={"atomic"}),
        Sample("private_array", scratch,
               lambda rng: [np.zeros(256, np.uint32), rng.integers(0, 1 << 30, 256).astype(np.uint32)],
               lambda a: {0: ((a[1] & 15) * np.arange(256, dtype=np.uint32)).astype(np.uint32)},
               tags={"scratch"}),
        Sample("hidden_args", hidden, lambda rng: [np.zeros(256, np.uint32)],
               lambda a: {0: np.full(256, 4 * 1000 + 64, np.uint32)}, tags={"hidden"}),
    ]


def _cross_lane_kernels() -> list[Sample]:
    ballot = kernel("ballot_readfirstlane", """
  %odd = and i32 %x, 1
  %c = icmp ne i32 %odd, 0
  %b = call i32 @llvm.amdgcn.ballot.i32(i1 %c)
  %f = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %x)
  %r = xor i32 %b, %f
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %r, ptr addrspace(1) %po
  ret void
""", load="i32", decls="""declare i32 @llvm.amdgcn.ballot.i32(i1)
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
""")

    def ballot_ref(args):
        x = args[1].reshape(-1, 32)
        bits = ((x & 1).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
        return {0: np.repeat(bits ^ x[:, 0], 32).astype(np.uint32)}

    return [Sample("ballot_readfirstlane", ballot,
                   lambda rng: [np.zeros(256, np.uint32), rng.integers(0, 1 << 31, 256).astype(np.uint32)],
                   ballot_ref, tags={"cross_lane"})]


def corpus() -> list[Sample]:
    """Every corpus kernel."""
    return _float_kernels() + _conversion_kernels() + _int_kernels() + _loop_kernels() + _memory_kernels() + \
        _cross_lane_kernels()
