"""The shader engine runs real kernels: LLVM-compiled (llvmlite) and hand-assembled ones."""


import numpy as np
import pytest

from compiler.llvm import compile_ir
from compiler.samples import VADD
from simgpu.fault import HardwareFault
from simgpu.testbed import Testbed


@pytest.fixture
def tb():
    return Testbed(vram_size=1 << 30)


def test_llvm_vadd_matches_numpy(tb):
    k = tb.load(VADD.code_object())["vadd"]
    n = 4096
    rng = np.random.default_rng(0)
    a, b = rng.random(n, np.float32), rng.random(n, np.float32)
    va, vb, vc = tb.upload(a), tb.upload(b), tb.alloc(4 * n)
    tb.launch(k, [va, vb, vc], (n // 256,), (256,))
    assert np.array_equal(tb.download(vc, np.float32, n), a + b)
    c = tb.engine.counters
    assert c.dispatches == 1 and c.wave_instructions > 0 and c.lane_ops >= n


def test_asm_kernel_scalar_and_vector(tb):
    k = tb.load_asm("""
        s_load_b64 s[4:5], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        v_lshlrev_b32 v1, 2, v0
        v_mul_u32_u24 v2, v0, v0
        global_store_b32 v1, v2, s[4:5]
        s_endpgm
    """, args=1)
    out = tb.alloc(4 * 64)
    tb.launch(k, [out], (1,), (64,))
    assert np.array_equal(tb.download(out, np.uint32, 64), np.arange(64, dtype=np.uint32) ** 2)


def test_deterministic_bytes_and_counters():
    results = []
    for _ in range(2):
        tb = Testbed(vram_size=1 << 30)
        k = tb.load(VADD.code_object())["vadd"]
        a = np.arange(1024, dtype=np.float32)
        va, vb, vc = tb.upload(a), tb.upload(a), tb.alloc(4096)
        tb.launch(k, [va, vb, vc], (4,), (256,))
        results.append((tb.read(vc, 4096), tb.engine.counters.snapshot(), tb.engine.clock.cycles))
    assert results[0] == results[1]


def test_page_fault_is_reported_and_engine_stays_usable(tb):
    k = tb.load_asm("""
        s_load_b64 s[4:5], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        global_load_b32 v1, v0, s[4:5]
        s_endpgm
    """, args=1)
    with pytest.raises(HardwareFault) as e:
        tb.launch(k, [0xDEAD0000], (1,), (32,))
    f = e.value
    assert f.kind == "page_fault" and f.access == "read" and f.address == 0xDEAD0000
    assert f.pc is not None and "global_load_b32" in f.instruction and "sgpr" in f.registers
    good = tb.alloc(4096)
    tb.launch(k, [good], (1,), (32,))


def test_trap_and_watchdog(tb):
    with pytest.raises(HardwareFault) as e:
        tb.launch(tb.load_asm("s_trap 2\ns_endpgm", args=0), [], (1,), (32,))
    assert e.value.kind == "trap" and "s_trap" in e.value.instruction
    tb.engine.watchdog = 10_000
    with pytest.raises(HardwareFault) as e:
        tb.launch(tb.load_asm("loop:\ns_branch loop", args=0), [], (1,), (32,))
    assert e.value.kind == "watchdog"


def test_illegal_instruction(tb):
    for text in ("s_nop 0\ns_code_end", "v_nop\nv_pipeflush\nv_illegal\ns_endpgm"):
        k = tb.load_asm(text, args=0)
        with pytest.raises(HardwareFault) as e:
            tb.launch(k, [], (1,), (32,))
        assert e.value.kind == "illegal_instruction"
    assert e.value.instruction == "v_illegal" and e.value.pc == k.code_address + 8


def test_valu_nops_change_nothing(tb):
    k = tb.load_asm("""
        s_load_b64 s[4:5], s[0:1], 0x0
        v_mov_b32 v1, 7
        v_nop
        v_pipeflush
        s_waitcnt lgkmcnt(0)
        global_store_b32 v0, v1, s[4:5]
        s_endpgm""", args=1, vgprs=4)
    out = tb.alloc(4)
    tb.launch(k, [out], (1,), (1,))
    assert int(tb.download(out, np.uint32, 1)[0]) == 7


def test_realtime_comes_from_the_virtual_clock():
    def run():
        tb = Testbed(vram_size=1 << 28)
        k = tb.load_asm("""
            s_load_b64 s[4:5], s[0:1], 0x0
            s_sendmsg_rtn_b64 s[6:7], sendmsg(MSG_RTN_GET_REALTIME)
            s_nop 0
            s_sendmsg_rtn_b64 s[8:9], sendmsg(MSG_RTN_GET_REALTIME)
            s_waitcnt lgkmcnt(0)
            v_mov_b32 v1, s6
            v_mov_b32 v2, s8
            v_mov_b32 v3, 0
            global_store_b32 v3, v1, s[4:5]
            global_store_b32 v3, v2, s[4:5] offset:4
            s_endpgm
        """, args=1)
        out = tb.alloc(8)
        tb.engine.clock.advance(2500 * 1000)  # 1 ms of core cycles = 100,000 timestamp ticks
        tb.launch(k, [out], (1,), (32,))
        return tb.download(out, np.uint32, 2)
    a, b = run(), run()
    assert np.array_equal(a, b) and a[0] >= 100_000 and a[1] >= a[0]


WAVE64_DIVERGENT = """
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) %in) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 6
  %i = add i32 %base, %tid
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %i
  %n = load i32, ptr addrspace(1) %p
  %odd = and i32 %tid, 1
  %c = icmp ne i32 %odd, 0
  br i1 %c, label %loop, label %even
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi i32 [ 1, %entry ], [ %acc1, %loop ]
  %acc1 = mul i32 %acc, 3
  %k1 = add i32 %k, 1
  %done = icmp uge i32 %k1, %n
  br i1 %done, label %exit, label %loop
even:
  %e = add i32 %n, 100
  br label %exit
exit:
  %r = phi i32 [ %acc1, %loop ], [ %e, %even ]
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %r, ptr addrspace(1) %q
  ret void
}
attributes #0 = { "target-features"="+wavefrontsize64" }
"""


@pytest.mark.parametrize("groups", [1, 6])
def test_wave64_divergent_loops_one_wave_and_many(tb, groups):
    """Odd lanes loop a per-lane number of times (EXEC narrows each iteration: 64-bit saveexec, VCC and
    execz branches), even lanes take the other branch; one wave runs the scalar unit on Python ints,
    several on arrays, and both must match numpy."""
    k = tb.load(compile_ir(WAVE64_DIVERGENT))["k"]
    n = np.random.default_rng(3).integers(1, 12, 64 * groups).astype(np.uint32)
    vin, vout = tb.upload(n), tb.alloc(4 * 64 * groups)
    tb.launch(k, [vout, vin], (groups,), (64,))
    tid = np.arange(64 * groups) % 64
    want = np.where(tid & 1, (3 ** n.astype(np.int64)) & 0xFFFFFFFF, n + 100).astype(np.uint32)
    assert np.array_equal(tb.download(vout, np.uint32, 64 * groups), want)


def test_s_load_of_one_address_for_all_waves_and_its_fault(tb):
    """Every wave loading the same kernel-argument dwords reads them once (scalar.sopp._broadcast_dwords);
    an unmapped address still faults with that address."""
    k = tb.load_asm("""
        s_load_b128 s[4:7], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        s_load_b64 s[8:9], s[4:5], 0x10
        s_waitcnt lgkmcnt(0)
        v_mov_b32 v1, s8
        v_mov_b32 v2, s9
        v_lshlrev_b32 v3, 3, v0
        global_store_b64 v3, v[1:2], s[6:7]
        s_endpgm""", args=2, vgprs=8)
    table = tb.upload(np.arange(16, dtype=np.uint32) * 3)
    out = tb.alloc(8 * 256)
    tb.launch(k, [table, out], (4,), (64,))
    assert np.array_equal(tb.download(out, np.uint32, 128).reshape(64, 2), np.tile([12, 15], (64, 1)))
    with pytest.raises(HardwareFault) as e:
        tb.launch(k, [0x1234_0000, out], (4,), (64,))
    assert e.value.kind == "page_fault" and e.value.address == 0x1234_0010 and "s_load_b64" in e.value.instruction
