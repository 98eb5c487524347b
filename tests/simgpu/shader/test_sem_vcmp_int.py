"""VOPC integer compares (v_cmp_*/v_cmpx_* on i16/u16/i32/u32/i64/u64) against reference models written
from the RDNA3 ISA pseudo-code: the lane mask goes to VCC or an SGPR (v_cmp) or to EXEC (v_cmpx)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.testbed import Testbed
from tests.support.vint_harness import M32, SETTINGS, Runner, check, sx


@pytest.fixture(scope="module")
def runner():
    return Runner(Testbed(vram_size=1 << 28))


def conv(t):
    bits = int(t[1:])
    return (lambda x: sx(x, bits)) if t[0] == "i" else (lambda x: x & ((1 << bits) - 1))


CONDS = {"f": lambda a, b: False, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b,
         "gt": lambda a, b: a > b, "ne": lambda a, b: a != b, "ge": lambda a, b: a >= b, "t": lambda a, b: True}


def cmp_cases():
    cases = []
    for t in ("i16", "u16", "i32", "u32", "i64", "u64"):
        for cond, f in CONDS.items():
            if t.endswith("16") and cond in ("f", "t"):
                continue  # not in gfx11
            wide = t.endswith("64")
            ops = "v[10:11], v[12:13]" if wide else "v10, v12"
            cases.append((f"v_cmp_{cond}_{t}_e32 vcc_lo, {ops}", t, f, False))
            if t == "i32" or cond in ("lt", "ge"):
                cases.append((f"v_cmp_{cond}_{t}_e64 vcc_lo, {ops}", t, f, False))
            cases.append((f"v_cmpx_{cond}_{t}_e32 {ops}\nv_mov_b32 v20, 1", t, f, True))
    return cases


CMP = cmp_cases()


@pytest.mark.parametrize("inst,t,f,cmpx", CMP, ids=[x[0].split("\n")[0] for x in CMP])
@settings(SETTINGS, max_examples=1)
@given(data=st.data())
def test_compare(runner, inst, t, f, cmpx, data):
    g = conv(t)
    bits = int(t[1:])

    def ref(a, b, c, d, cin, lane):
        r = f(g(a), g(b))
        if cmpx:  # the mask goes to EXEC: only passing lanes run the v_mov; VCC is untouched
            return ((1 if r else d & M32),), cin
        return ((d & M32),), r
    check(runner, data, inst, ref, bits=(bits, bits, 32), carry=True, n=256)


def test_cmp_e64_sgpr_and_true16(runner):
    """A VOP3 compare into an SGPR, and an e32 16-bit compare reading a high half (v138 = v10.h)."""
    n = 256
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    b[::3] = a[::3]
    out, vcc = runner.run("v_cmp_ne_u32_e64 s40, v10, v12\ns_mov_b32 vcc_lo, s40", a, b)
    assert list(vcc) == [int(x) != int(y) for x, y in zip(a, b, strict=True)]
    out, vcc = runner.run("v_cmp_gt_i16_e32 vcc_lo, v138, v12", a, b)
    assert list(vcc) == [sx(int(x) >> 16, 16) > sx(int(y), 16) for x, y in zip(a, b, strict=True)]
