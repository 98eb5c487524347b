"""One definition, two tiers: a definition in the expression form (sem.expr) is what both the interpreter and the
JIT run. A test-only override of V_ADD_NC_U32's definition (vector.valu.override) changes the result of a kernel
in the interpreter and in the JIT alike (the JIT compiling the loop natively, checked by its counters); the
oracle is numpy's arithmetic on the lane ids, not our code. Then the generated kernels of a few definitions
against numpy and the ISA's own formulas."""

from __future__ import annotations

import numpy as np

from simgpu.shader.jit import jit_tier
from simgpu.shader.sem.expr import Definition, cast, select
from simgpu.shader.sem.numpy_gen import numpy_kernel
from simgpu.shader.vector.valu import override
from simgpu.testbed import Testbed

N = 40  # loop trips: v1 += lane id each trip
LOOP = f"""
    s_load_b64 s[4:5], s[0:1], 0x0
    v_mov_b32 v1, 0
    s_mov_b32 s6, {N}
loop:
    v_add_nc_u32 v1, v1, v0
    s_add_u32 s6, s6, -1
    s_cmp_lg_u32 s6, 0
    s_cbranch_scc1 loop
    v_lshlrev_b32 v2, 2, v0
    s_waitcnt lgkmcnt(0)
    global_store_b32 v2, v1, s[4:5]
    s_endpgm
"""


def _run(jit: bool) -> tuple[np.ndarray, int]:
    """The 32 words the loop stores, and the instructions the JIT ran natively (0 in the interpreter)."""
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("eager") if jit else None
    k = tb.load_asm(LOOP, args=1, vgprs=8)
    out = tb.alloc(4 * 32)
    tb.launch(k, [out], (1,), (32,))
    native = tb.engine.jit.stats.native_instructions if jit else 0
    if jit:
        assert not tb.engine.jit.stats.failures, tb.engine.jit.stats.failures
    return tb.download(out, np.uint32, 32), native


def test_an_override_of_v_add_nc_u32_changes_both_tiers():
    lanes = np.arange(32, dtype=np.uint64)
    added = (lanes * N).astype(np.uint32)
    xored = np.zeros(32, np.uint32)  # v1 ^= lane, an even number of times
    for want, definition in ((added, None), (xored, lambda a, b, clamp: a ^ b), (added, None)):
        if definition is None:
            results = [_run(False), _run(True)]
        else:
            with override("v_add_nc_u32", definition):
                results = [_run(False), _run(True)]
        (interp, _), (jit, native) = results
        assert native > N, "the JIT ran the loop natively"
        assert np.array_equal(interp, want)
        assert np.array_equal(jit, want)


class _Ctx:
    def __init__(self, clamp: bool = False, carry: bool = True, lanes: int = 32):
        self.clamp, self.carry, self.lanes = clamp, carry, lanes


def test_generated_kernels_follow_the_definitions():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 32, (3, 32), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, (3, 32), dtype=np.uint64).astype(np.uint32)
    a[0, :4] = [0, 0xFFFFFFFF, 0x80000000, 7]
    # a saturating add: the clamped body and the wrapping one, picked by the instruction's clamp bit
    sat = numpy_kernel(Definition(("u32", "u32"), lambda x, y, clamp: (
        cast(select(cast(x, "u64") + cast(y, "u64") > 0xFFFFFFFF, 0xFFFFFFFF, cast(x, "u64") + cast(y, "u64")),
             "u32") if clamp else x + y), clamp=True))
    exact = a.astype(np.uint64) + b.astype(np.uint64)
    assert np.array_equal(sat(_Ctx(clamp=True), a, b), np.minimum(exact, 0xFFFFFFFF).astype(np.uint32))
    assert np.array_equal(sat(_Ctx(), a, b), (exact & 0xFFFFFFFF).astype(np.uint32))
    # a carry-out that goes to null is not computed
    carry = numpy_kernel(Definition(("u32", "u32"), lambda x, y: (x + y, x + y < x)))
    d, c = carry(_Ctx(), a, b)
    assert np.array_equal(c, exact > 0xFFFFFFFF) and carry(_Ctx(carry=False), a, b)[1] is None
    # signed types: >> is arithmetic, < compares signed, casts sign-extend
    sra = numpy_kernel(Definition(("i32",), lambda x: cast(x >> 4, "i64") * 2))
    assert np.array_equal(sra(_Ctx(), a.view(np.int32)), (a.view(np.int32).astype(np.int64) >> 4) * 2)
