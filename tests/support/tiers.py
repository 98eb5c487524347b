"""Both tiers of the shader engine on the same work, compared bit for bit: the interpreter (the
reference) and the JIT tier compiling every kernel at its first dispatch (SIMGPU_JIT=eager).

`pair()` gives two testbeds, identical but for the tier; `assert_same(a, b)` checks that they ended
with the same memory (every page the bump allocator handed out), registers of every batch at exit
(SGPRs, VGPRs, SCC, PC, status, hardware registers, LDS, scratch), counters and clock, and that the
JIT tier compiled without a translator failure. The "jit-lean" tier is the JIT tier as users run it,
keeping no registers at exit: its fused batches start every wave from one workgroup's template and
store no registers back (jit/fused.py); it is compared on everything but those registers."""

from __future__ import annotations

import numpy as np

from simgpu.fault import HardwareFault
from simgpu.shader.jit import jit_tier
from simgpu.testbed import Testbed

TIERS = ("interpreter", "jit", "jit-lean")


def testbed(tier: str, vram_size: int = 1 << 28, watchdog: int = 50_000_000) -> Testbed:
    """A Testbed whose engine runs `tier` and keeps each batch's final registers (but "jit-lean")."""
    tb = Testbed(vram_size=vram_size, watchdog=watchdog)
    tb.engine.jit = jit_tier("eager") if tier.startswith("jit") else None
    tb.engine.exit_states = None if tier == "jit-lean" else []
    tb.interrupts = []  # every interrupt the waves raised (s_sendmsg), in issue order
    tb.engine.interrupt_hooks.append(tb.interrupts.append)
    return tb


def pair(vram_size: int = 1 << 28, watchdog: int = 50_000_000) -> tuple[Testbed, Testbed]:
    return testbed("interpreter", vram_size, watchdog), testbed("jit", vram_size, watchdog)


def launch(tb: Testbed, *args, **kw):
    """tb.launch, with a GPU fault as the result: (kind, message, pc, wave, address, registers) or None."""
    try:
        tb.launch(*args, **kw)
    except HardwareFault as f:
        regs = {k: np.asarray(v).tobytes() for k, v in (f.registers or {}).items()}
        return (f.kind, str(f), f.pc, f.wave, getattr(f, "address", None), regs)
    return None


def state_bytes(tb: Testbed) -> list[bytes]:
    out = []
    for st, scratch in tb.engine.exit_states:
        for a in (st.sgpr, st.vgpr, st.scc, st.pc, st.status, st.hwreg, st.lds):
            out.append(a.tobytes())
        out.append(b"" if scratch is None else scratch.tobytes())
    return out


def assert_same(a: Testbed, b: Testbed) -> None:
    """Interpreter testbed `a` and JIT testbed `b` ended in the same state."""
    if b.engine.jit is not None:
        assert not b.engine.jit.stats.failures, b.engine.jit.stats.failures
    assert a._next_pa == b._next_pa
    ma, mb = a.phys.vram[:a._next_pa], b.phys.vram[:b._next_pa]
    if not np.array_equal(ma, mb):
        diff = np.flatnonzero(ma != mb)
        raise AssertionError(f"memory differs at {len(diff)} bytes, first PA {int(diff[0]):#x}")
    if b.engine.exit_states is not None:
        sa, sb = state_bytes(a), state_bytes(b)
        assert len(sa) == len(sb), "different numbers of batches"
        names = ("sgpr", "vgpr", "scc", "pc", "status", "hwreg", "lds", "scratch")
        for i, (x, y) in enumerate(zip(sa, sb, strict=True)):
            assert x == y, f"batch {i // 8}: {names[i % 8]} differs"
    assert a.engine.counters.snapshot() == b.engine.counters.snapshot()
    assert a.engine.clock.cycles == b.engine.clock.cycles
    assert a.interrupts == b.interrupts
