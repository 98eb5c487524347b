"""Both tiers of the shader engine on the same work, compared bit for bit: the interpreter (the
reference) and the JIT tier compiling every kernel at its first dispatch (SIMGPU_JIT=eager).

`pair()` gives two testbeds, identical but for the tier; `assert_same(a, b)` checks that they ended
with the same memory (every page the bump allocator handed out), registers of every batch at exit
(SGPRs, VGPRs, SCC, PC, status, hardware registers, LDS, scratch), counters and clock, and that the
JIT tier compiled without a translator failure. The "jit-lean" tier is the JIT tier as users run it,
keeping no registers at exit: its fused batches start every wave from one workgroup's template and
store no registers back (jit/fused.py); it is compared on everything but those registers."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from simgpu.fault import HardwareFault
from simgpu.shader.jit import jit_tier
from simgpu.testbed import Testbed

TIERS = ("interpreter", "jit", "jit-lean")

# SIMGPU_JIT_OPT ("level,codegen") of the random-instruction tests (fuzz_codegen: test_jit_ops' random instructions
# and LDS loads, test_jit_fuzz, test_jit_unmasked's random blocks) and of test_triton_corpus's CDNA cases in both
# tiers. Each of their examples compiles a module of its own and runs it once (a CDNA case: twice, jit-lean and jit,
# one object), so LLVM's code generation at its default level 2 was most of their time (test_jit_ops: 0.38 CPU-s a
# module, 0.14 at level 0; the CDNA sample's largest modules: 1.53 -> 0.53 CPU-s of code generation). The IR passes
# stay the default ones (-1), so LLVM optimises the same IR users' kernels get, where a translation relying on
# undefined behaviour would show; only instruction selection, scheduling and register allocation are quicker ones,
# which do not change what the code computes. The float definitions' and the 16-bit forms' kernels (test_sem_define,
# test_jit_16bit) compile at the default levels under the default MODE and at FUZZ_CODEGEN under the others
# (mode_codegen): each MODE's kernel is the same instructions with other MODE bits, compiled once and run once, and
# code generation was most of those files' time. test_jit_remote's comparison of the worker's translation with an
# eager one compiles each kernel three times at FUZZ_CODEGEN: it compares IR (the same IR, the same object at any
# level). Every other JIT test (the corpora, among them gfx942's OpenCL one and
# test_cdna4_corpus, which keep CDNA code at the default levels, the integer definitions, fused batches, loops, the
# tier's own) compiles at the default levels, and both JIT caches key objects by level (jit.compile.code_setting):
# fuzz objects are never served to a default-level run.
FUZZ_CODEGEN = "-1,0"


@contextlib.contextmanager
def fuzz_codegen():
    """The block's JIT compiles at FUZZ_CODEGEN."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SIMGPU_JIT_OPT", FUZZ_CODEGEN)
        yield


def mode_codegen(mode: dict):
    """The block's JIT compiles at the default levels for the default MODE (no MODE field given), at FUZZ_CODEGEN
    for any other (the comment above FUZZ_CODEGEN)."""
    return fuzz_codegen() if mode else contextlib.nullcontext()


def on_tier(engine, tier: str):
    """Make a ShaderEngine run `tier`, keeping each batch's final registers (but "jit-lean"); the engine."""
    engine.jit = jit_tier("eager") if tier.startswith("jit") else None
    engine.exit_states = None if tier == "jit-lean" else []
    return engine


def testbed(tier: str, vram_size: int = 1 << 28, watchdog: int = 50_000_000, arch: str = "gfx1100") -> Testbed:
    """A Testbed of `arch` whose engine runs `tier` (on_tier)."""
    tb = Testbed(vram_size=vram_size, watchdog=watchdog, arch=arch)
    on_tier(tb.engine, tier)
    tb.interrupts = []  # every interrupt the waves raised (s_sendmsg), in issue order
    tb.engine.interrupt_hooks.append(tb.interrupts.append)
    return tb


def run_elementwise(tier: str, code: bytes, name: str, *inputs: np.ndarray) -> tuple[Testbed, np.ndarray]:
    """Kernel `name` of the code object `code` on a fresh testbed of `tier`, one lane per element in workgroups of 64:
    its arguments a result buffer shaped and typed as inputs[0], then the inputs. (The testbed, the result.)"""
    tb = testbed(tier)
    kernel = tb.load(code)[name]
    out = tb.upload(np.zeros_like(inputs[0]))
    n = len(inputs[0])
    tb.launch(kernel, [out, *(tb.upload(x) for x in inputs)], (n // 64,), (64,))
    return tb, tb.download(out, inputs[0].dtype, n)


def pair(vram_size: int = 1 << 28, watchdog: int = 50_000_000, arch: str = "gfx1100") -> tuple[Testbed, Testbed]:
    return testbed("interpreter", vram_size, watchdog, arch), testbed("jit", vram_size, watchdog, arch)


def launch(tb: Testbed, *args, **kw):
    """tb.launch, with a GPU fault as the result: (kind, message, pc, wave, address, registers) or None."""
    try:
        tb.launch(*args, **kw)
    except HardwareFault as f:
        regs = {k: np.asarray(v).tobytes() for k, v in (f.registers or {}).items()}
        return (f.kind, str(f), f.pc, f.wave, getattr(f, "address", None), regs)
    return None


def state_bytes(tb) -> list[bytes]:
    """The registers of every batch at exit of the engine of `tb` (a Testbed or a simgpu.GPU)."""
    out = []
    for st, scratch in tb.engine.exit_states:
        for a in (st.sgpr, st.vgpr, st.scc, st.pc, st.status, st.hwreg, st.lds):
            out.append(a.tobytes())
        out.append(b"" if scratch is None else scratch.tobytes())
    return out


def assert_same(a: Testbed, b: Testbed) -> None:
    """Interpreter testbed `a` and JIT testbed `b` ended in the same state."""
    assert a._next_pa == b._next_pa
    ma, mb = a.phys.vram[:a._next_pa], b.phys.vram[:b._next_pa]
    _same_bytes(ma, mb, "memory")
    _same_engines(a, b)
    assert a.interrupts == b.interrupts


def driver_buffers(mock) -> dict[tuple[str, int, int], np.ndarray]:
    """A copy of every buffer a MockOS's driver has handed out now (VRAM and system memory), by (kind, GPU VA,
    size): what a run on it may have written (reading all of a GPU's VRAM would commit every page of it)."""
    out = {}
    for al in mock.process.allocs.values():
        if al.kind == "vram":
            out[al.kind, al.va, al.size] = mock.gpus[al.node].phys.vram[al.pa:al.pa + al.size].copy()
        elif al.buf is not None:
            out[al.kind, al.va, al.size] = np.array(al.buf, copy=True)
    return out


def assert_same_gpu(a, b, buffers_a: dict, buffers_b: dict) -> None:
    """Two simgpu.GPUs (a: the interpreter's, b: the JIT tier's) ended in the same state: the driver's buffers
    (`driver_buffers`, taken before the runtime freed them), the registers of every batch at exit, counters and
    clock."""
    assert list(buffers_a) == list(buffers_b)
    for key, x in buffers_a.items():
        _same_bytes(x, buffers_b[key], f"{key[0]} buffer at {key[1]:#x}")
    _same_engines(a, b)


def _same_bytes(a: np.ndarray, b: np.ndarray, what: str) -> None:
    if not np.array_equal(a, b):
        diff = np.flatnonzero(a != b)
        raise AssertionError(f"{what} differs at {len(diff)} bytes, first at {int(diff[0]):#x}")


def _same_engines(a, b) -> None:
    """The engines of `a` and `b` (Testbeds or GPUs): registers at exit (unless b keeps none), counters, clock."""
    if b.engine.jit is not None:
        assert not b.engine.jit.stats.failures, b.engine.jit.stats.failures
    if b.engine.exit_states is not None:
        sa, sb = state_bytes(a), state_bytes(b)
        assert len(sa) == len(sb), "different numbers of batches"
        names = ("sgpr", "vgpr", "scc", "pc", "status", "hwreg", "lds", "scratch")
        for i, (x, y) in enumerate(zip(sa, sb, strict=True)):
            assert x == y, f"batch {i // 8}: {names[i % 8]} differs"
    assert a.engine.counters.snapshot() == b.engine.counters.snapshot()
    assert a.engine.clock.cycles == b.engine.clock.cycles
