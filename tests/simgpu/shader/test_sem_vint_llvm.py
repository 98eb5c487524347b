"""LLVM-compiled (llvmlite, gfx1100) integer kernels run on the engine against numpy: i8/i16/i32/i64
arithmetic, division by constants (mul-hi sequences), bit-manipulation intrinsics, compare+select and
saturating math, and a data-dependent loop with divergent branches."""

import numpy as np
import pytest

from compiler.llvm import compile_ir
from simgpu.testbed import Testbed

N = 1024
HEAD = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
"""
INDEX = """
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
"""


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


def run(tb, ir: str, name: str, inputs: list[np.ndarray], out_dtype, outs: int):
    """Launch `name` over N items with the input arrays and `outs` output arrays of out_dtype."""
    k = tb.load(compile_ir(HEAD + ir))[name]
    size = np.dtype(out_dtype).itemsize
    out_va = [tb.alloc(size * N) for _ in range(outs)]
    tb.launch(k, [*out_va, *[tb.upload(x) for x in inputs]], (N // 256,), (256,))
    return [tb.download(va, out_dtype, N) for va in out_va]


def operands(dtype, seed):
    """Random values of dtype with the type's special values at the front."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    special = np.array([0, 1, info.max, info.min, info.max - 1, info.min + 1, 2, 3], dtype=np.int64)
    x[: len(special)] = special.astype(dtype)
    x[8:16] = special[::-1].astype(dtype)
    return x


def test_i32_divrem_by_constants(tb):
    ir = """
define amdgpu_kernel void @k(ptr addrspace(1) %o0, ptr addrspace(1) %o1, ptr addrspace(1) %o2,
                             ptr addrspace(1) %o3, ptr addrspace(1) %a) {
""" + INDEX + """
  %pa = getelementptr i32, ptr addrspace(1) %a, i32 %i
  %x = load i32, ptr addrspace(1) %pa
  %q = udiv i32 %x, 7
  %r = urem i32 %x, 1000
  %s = sdiv i32 %x, -3
  %t = srem i32 %x, 10
  %p0 = getelementptr i32, ptr addrspace(1) %o0, i32 %i
  %p1 = getelementptr i32, ptr addrspace(1) %o1, i32 %i
  %p2 = getelementptr i32, ptr addrspace(1) %o2, i32 %i
  %p3 = getelementptr i32, ptr addrspace(1) %o3, i32 %i
  store i32 %q, ptr addrspace(1) %p0
  store i32 %r, ptr addrspace(1) %p1
  store i32 %s, ptr addrspace(1) %p2
  store i32 %t, ptr addrspace(1) %p3
  ret void
}"""
    a = operands(np.int32, 1)
    q, r, s, t = run(tb, ir, "k", [a], np.int32, 4)
    au = a.view(np.uint32)
    assert np.array_equal(q.view(np.uint32), au // 7)
    assert np.array_equal(r.view(np.uint32), au % 1000)
    a64 = a.astype(np.int64)
    assert np.array_equal(s, np.trunc(a64 / -3).astype(np.int64).astype(np.int32))  # C: truncating
    assert np.array_equal(t, (a64 - np.trunc(a64 / 10).astype(np.int64) * 10).astype(np.int32))


def test_i64_add_mul_shift(tb):
    ir = """
define amdgpu_kernel void @k(ptr addrspace(1) %o0, ptr addrspace(1) %o1, ptr addrspace(1) %o2,
                             ptr addrspace(1) %a, ptr addrspace(1) %b) {
""" + INDEX + """
  %pa = getelementptr i64, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr i64, ptr addrspace(1) %b, i32 %i
  %x = load i64, ptr addrspace(1) %pa
  %y = load i64, ptr addrspace(1) %pb
  %m = mul i64 %x, %y
  %s = add i64 %m, %x
  %sh = and i64 %y, 63
  %l = shl i64 %x, %sh
  %ar = ashr i64 %x, %sh
  %lr = lshr i64 %y, 17
  %x2 = xor i64 %ar, %lr
  %d = sub i64 %l, %x2
  %p0 = getelementptr i64, ptr addrspace(1) %o0, i32 %i
  %p1 = getelementptr i64, ptr addrspace(1) %o1, i32 %i
  %p2 = getelementptr i64, ptr addrspace(1) %o2, i32 %i
  store i64 %s, ptr addrspace(1) %p0
  store i64 %d, ptr addrspace(1) %p1
  %mh = zext i64 %x to i128
  %nh = zext i64 %y to i128
  %ph = mul i128 %mh, %nh
  %hi = lshr i128 %ph, 64
  %h = trunc i128 %hi to i64
  store i64 %h, ptr addrspace(1) %p2
  ret void
}"""
    x, y = operands(np.int64, 2), operands(np.int64, 3)
    s, d, h = run(tb, ir, "k", [x, y], np.uint64, 3)
    xu, yu = x.view(np.uint64), y.view(np.uint64)
    sh = yu & np.uint64(63)
    assert np.array_equal(s, xu * yu + xu)
    assert np.array_equal(d, (xu << sh) - ((x >> sh.astype(np.int64)).view(np.uint64) ^ (yu >> np.uint64(17))))
    want_h = [((int(p) * int(q)) >> 64) & (2**64 - 1) for p, q in zip(xu, yu, strict=True)]
    assert [int(v) for v in h] == want_h


def test_i8_i16_arithmetic(tb):
    ir = """
define amdgpu_kernel void @k(ptr addrspace(1) %o0, ptr addrspace(1) %o1, ptr addrspace(1) %a,
                             ptr addrspace(1) %b) {
""" + INDEX + """
  %pa = getelementptr i16, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr i16, ptr addrspace(1) %b, i32 %i
  %x = load i16, ptr addrspace(1) %pa
  %y = load i16, ptr addrspace(1) %pb
  %m = mul i16 %x, %y
  %s = add i16 %m, 12345
  %sh = and i16 %y, 15
  %l = ashr i16 %s, %sh
  %x8 = trunc i16 %x to i8
  %y8 = trunc i16 %y to i8
  %d8 = sub i8 %x8, %y8
  %q8 = sdiv i8 %d8, 5
  %e = sext i8 %q8 to i16
  %r = xor i16 %l, %e
  %p0 = getelementptr i16, ptr addrspace(1) %o0, i32 %i
  store i16 %r, ptr addrspace(1) %p0
  %mx = call i16 @llvm.umax.i16(i16 %x, i16 %y)
  %mn = call i16 @llvm.smin.i16(i16 %x, i16 %y)
  %u = lshr i16 %mx, 3
  %v = add i16 %u, %mn
  %p1 = getelementptr i16, ptr addrspace(1) %o1, i32 %i
  store i16 %v, ptr addrspace(1) %p1
  ret void
}
declare i16 @llvm.umax.i16(i16, i16)
declare i16 @llvm.smin.i16(i16, i16)
"""
    x, y = operands(np.int16, 4), operands(np.int16, 5)
    r, v = run(tb, ir, "k", [x, y], np.int16, 2)
    s = (x * y + np.int16(12345)).astype(np.int16)
    ll = s >> (y & 15)
    d8 = (x.astype(np.int8) - y.astype(np.int8)).astype(np.int8)
    q8 = np.trunc(d8.astype(np.int64) / 5).astype(np.int8)
    assert np.array_equal(r, ll ^ q8.astype(np.int16))
    mx = np.maximum(x.view(np.uint16), y.view(np.uint16))
    assert np.array_equal(v, ((mx >> 3).view(np.int16) + np.minimum(x, y)).astype(np.int16))


def test_bit_intrinsics(tb):
    ir = """
declare i32 @llvm.ctpop.i32(i32)
declare i32 @llvm.ctlz.i32(i32, i1)
declare i32 @llvm.cttz.i32(i32, i1)
declare i32 @llvm.bitreverse.i32(i32)
declare i32 @llvm.fshl.i32(i32, i32, i32)
declare i32 @llvm.bswap.i32(i32)
define amdgpu_kernel void @k(ptr addrspace(1) %o0, ptr addrspace(1) %o1, ptr addrspace(1) %o2,
                             ptr addrspace(1) %o3, ptr addrspace(1) %o4, ptr addrspace(1) %o5,
                             ptr addrspace(1) %a, ptr addrspace(1) %b) {
""" + INDEX + """
  %pa = getelementptr i32, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr i32, ptr addrspace(1) %b, i32 %i
  %x = load i32, ptr addrspace(1) %pa
  %y = load i32, ptr addrspace(1) %pb
  %c0 = call i32 @llvm.ctpop.i32(i32 %x)
  %c1 = call i32 @llvm.ctlz.i32(i32 %x, i1 false)
  %c2 = call i32 @llvm.cttz.i32(i32 %x, i1 false)
  %c3 = call i32 @llvm.bitreverse.i32(i32 %x)
  %c4 = call i32 @llvm.fshl.i32(i32 %x, i32 %y, i32 %y)
  %c5 = call i32 @llvm.bswap.i32(i32 %y)
  %p0 = getelementptr i32, ptr addrspace(1) %o0, i32 %i
  %p1 = getelementptr i32, ptr addrspace(1) %o1, i32 %i
  %p2 = getelementptr i32, ptr addrspace(1) %o2, i32 %i
  %p3 = getelementptr i32, ptr addrspace(1) %o3, i32 %i
  %p4 = getelementptr i32, ptr addrspace(1) %o4, i32 %i
  %p5 = getelementptr i32, ptr addrspace(1) %o5, i32 %i
  store i32 %c0, ptr addrspace(1) %p0
  store i32 %c1, ptr addrspace(1) %p1
  store i32 %c2, ptr addrspace(1) %p2
  store i32 %c3, ptr addrspace(1) %p3
  store i32 %c4, ptr addrspace(1) %p4
  store i32 %c5, ptr addrspace(1) %p5
  ret void
}"""
    x, y = operands(np.uint32, 6), operands(np.uint32, 7)
    c0, c1, c2, c3, c4, c5 = run(tb, ir, "k", [x, y], np.uint32, 6)
    xs = [int(v) for v in x]
    assert np.array_equal(c0, np.bitwise_count(x).astype(np.uint32))
    assert [int(v) for v in c1] == [32 - v.bit_length() for v in xs]
    assert [int(v) for v in c2] == [(v & -v).bit_length() - 1 if v else 32 for v in xs]
    assert [int(v) for v in c3] == [int(f"{v:032b}"[::-1], 2) for v in xs]
    sh = y & np.uint32(31)
    want4 = [((int(p) << int(s)) | (int(q) >> (32 - int(s)))) & 0xFFFFFFFF if s else int(p)
             for p, q, s in zip(x, y, sh, strict=True)]
    assert [int(v) for v in c4] == want4
    assert np.array_equal(c5, y.byteswap())


def test_icmp_select_and_saturation(tb):
    ir = """
declare i32 @llvm.sadd.sat.i32(i32, i32)
declare i32 @llvm.usub.sat.i32(i32, i32)
declare i32 @llvm.abs.i32(i32, i1)
declare i64 @llvm.umin.i64(i64, i64)
define amdgpu_kernel void @k(ptr addrspace(1) %o0, ptr addrspace(1) %o1, ptr addrspace(1) %o2,
                             ptr addrspace(1) %o3, ptr addrspace(1) %a, ptr addrspace(1) %b) {
""" + INDEX + """
  %pa = getelementptr i32, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr i32, ptr addrspace(1) %b, i32 %i
  %x = load i32, ptr addrspace(1) %pa
  %y = load i32, ptr addrspace(1) %pb
  %lt = icmp slt i32 %x, %y
  %ugt = icmp ugt i32 %x, 1000
  %sel = select i1 %lt, i32 %x, i32 %y
  %sel2 = select i1 %ugt, i32 %sel, i32 -7
  %s = call i32 @llvm.sadd.sat.i32(i32 %x, i32 %y)
  %u = call i32 @llvm.usub.sat.i32(i32 %x, i32 %y)
  %ab = call i32 @llvm.abs.i32(i32 %x, i1 false)
  %t = add i32 %u, %ab
  %x64 = sext i32 %x to i64
  %y64 = zext i32 %y to i64
  %m64 = call i64 @llvm.umin.i64(i64 %x64, i64 %y64)
  %eq = icmp eq i64 %m64, %y64
  %z = zext i1 %eq to i32
  %p0 = getelementptr i32, ptr addrspace(1) %o0, i32 %i
  %p1 = getelementptr i32, ptr addrspace(1) %o1, i32 %i
  %p2 = getelementptr i32, ptr addrspace(1) %o2, i32 %i
  %p3 = getelementptr i32, ptr addrspace(1) %o3, i32 %i
  store i32 %sel2, ptr addrspace(1) %p0
  store i32 %s, ptr addrspace(1) %p1
  store i32 %t, ptr addrspace(1) %p2
  store i32 %z, ptr addrspace(1) %p3
  ret void
}"""
    x, y = operands(np.int32, 8), operands(np.int32, 9)
    o0, o1, o2, o3 = run(tb, ir, "k", [x, y], np.int32, 4)
    xu, yu = x.view(np.uint32), y.view(np.uint32)
    assert np.array_equal(o0, np.where(xu > 1000, np.minimum(x, y), -7))
    assert np.array_equal(o1, np.clip(x.astype(np.int64) + y, -2**31, 2**31 - 1).astype(np.int32))
    usub = np.where(xu > yu, xu - yu, 0).astype(np.uint32)
    assert np.array_equal(o2.view(np.uint32), usub + np.abs(x).view(np.uint32))
    x64 = x.astype(np.int64).view(np.uint64)
    assert np.array_equal(o3, (np.minimum(x64, yu.astype(np.uint64)) == yu).astype(np.int32))


def test_divergent_loop_collatz(tb):
    ir = """
define amdgpu_kernel void @k(ptr addrspace(1) %o0, ptr addrspace(1) %o1, ptr addrspace(1) %a) {
entry:
""" + INDEX + """
  %pa = getelementptr i32, ptr addrspace(1) %a, i32 %i
  %x0 = load i32, ptr addrspace(1) %pa
  br label %loop
loop:
  %x = phi i32 [ %x0, %entry ], [ %xn, %next ]
  %n = phi i32 [ 0, %entry ], [ %n1, %next ]
  %mx = phi i32 [ 0, %entry ], [ %mx1, %next ]
  %done = icmp ule i32 %x, 1
  br i1 %done, label %exit, label %body
body:
  %odd = and i32 %x, 1
  %isodd = icmp ne i32 %odd, 0
  br i1 %isodd, label %oddb, label %evenb
oddb:
  %t = mul i32 %x, 3
  %t1 = add i32 %t, 1
  br label %next
evenb:
  %h = lshr i32 %x, 1
  br label %next
next:
  %xn = phi i32 [ %t1, %oddb ], [ %h, %evenb ]
  %n1 = add i32 %n, 1
  %c = icmp ugt i32 %xn, %mx
  %mx1 = select i1 %c, i32 %xn, i32 %mx
  br label %loop
exit:
  %p0 = getelementptr i32, ptr addrspace(1) %o0, i32 %i
  %p1 = getelementptr i32, ptr addrspace(1) %o1, i32 %i
  store i32 %n, ptr addrspace(1) %p0
  store i32 %mx, ptr addrspace(1) %p1
  ret void
}"""
    a = np.random.default_rng(10).integers(1, 3000, N, dtype=np.uint32)
    a[:4] = [1, 2, 27, 97]
    steps, peak = run(tb, ir, "k", [a], np.uint32, 2)
    want_n, want_m = [], []
    for v in (int(x) for x in a):
        n = m = 0
        while v > 1:
            v = (3 * v + 1) & 0xFFFFFFFF if v & 1 else v >> 1
            n, m = n + 1, max(m, v)
        want_n.append(n)
        want_m.append(m)
    assert [int(v) for v in steps] == want_n
    assert [int(v) for v in peak] == want_m
