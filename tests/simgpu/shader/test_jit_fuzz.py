"""Differential fuzz of the two tiers: random instruction streams (tests/simgpu/shader/test_shader_fuzz.py's
generators: any encoding with random operands, and "primed" streams whose registers point at mapped
memory, LDS and scratch) run in the interpreter and with the JIT tier compiling them at once, as gfx1100 and as
gfx1201 code (the random streams as gfx942 code too, wave64); both must end the same way (the same fault, or none)
with the same memory, registers at exit, counters and clock. The JIT compiles them with LLVM's quickest code
generation (tests/support/tiers.fuzz_codegen: the same IR passes as users' kernels).
More examples: SIMGPU_FUZZ_EXAMPLES=2000 pytest tests/simgpu/shader/test_jit_fuzz.py
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.simgpu.shader.test_shader_fuzz import primed_kernel, random_kernel
from tests.support import tiers

EXAMPLES = int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "120"))
ARCHS = ("gfx1100", "gfx1201")


def _both(make, launch_args, arch: str):
    """Build the same kernel and inputs on an interpreter and a JIT testbed of `arch` (same rng draws) and run
    them."""
    results = []
    pair = tiers.pair(arch=arch)
    with tiers.fuzz_codegen():  # (one module an example, run once: quicker code generation, the same IR passes)
        for tb in pair:
            tb.engine.watchdog = 20_000
            k, args = make(tb)
            results.append(tiers.launch(tb, k, args, *launch_args))
    assert results[0] == results[1], f"interpreter: {results[0]}\njit: {results[1]}"
    tiers.assert_same(*pair)


@pytest.mark.parametrize("arch", (*ARCHS, "gfx942"))
@settings(max_examples=EXAMPLES // 2, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**63 - 1), wave32=st.booleans(), groups=st.integers(1, 2), items=st.integers(1, 64),
       vgprs=st.sampled_from([256, 256, 64]))
def test_random_streams_agree(arch, seed, wave32, groups, items, vgprs):
    wave32 = wave32 and arch != "gfx942"  # (wave64 only)

    def make(tb):
        return random_kernel(tb, np.random.default_rng(seed), wave32, vgprs), []
    _both(make, ((groups,), (items,)), arch)


@pytest.mark.parametrize("arch", ARCHS)
@settings(max_examples=max(EXAMPLES // 10, 6), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**63 - 1))
def test_primed_streams_agree(arch, seed):
    def make(tb):
        rng = np.random.default_rng(seed)
        k = primed_kernel(tb, rng)
        return k, [tb.upload(rng.integers(0, 256, 1 << 16, dtype=np.uint8))]
    _both(make, ((2,), (64,)), arch)
