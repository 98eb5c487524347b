"""Background compiles translate in the JIT's worker process (simgpu/shader/jit/remote.py): what the worker sends back
is what an eager compile makes in-process (the same object bytes, classes, blocks and figures), kernels compiled
that way end exactly as in the interpreter, and a malformed or hostile reply is a clear CompileFailed: the kernel
runs in the interpreter, correct."""

from __future__ import annotations

import copy
from concurrent.futures import Future

import numpy as np
import pytest

from simgpu.shader.jit import build, jit_tier, policy, remote, worker
from simgpu.shader.jit import compile as jc
from simgpu.shader.jit.worker import CompileFailed
from simgpu.testbed import Testbed
from tests import DATA
from tests.support import tiers

RNG = np.random.default_rng(3)
F = RNG.random(1024).astype(np.float32)
U = np.arange(1, 1025, dtype=np.uint32)
# OpenCL corpus kernels (tests/data/opencl/corpus.cl) of every kind of block: fused stores, LDS stores between
# barriers, atomics, loops, callbacks, scratch
KERNELS = {
    "saxpy": ([F.copy(), F, 1, 1024], (4,), (256,)),
    "group_sum": ([np.zeros(4, np.int32), U.view(np.int32)], (4,), (256,)),
    "histogram": ([np.zeros(16, np.int32), U, 1024], (4,), (256,)),
    "float_ops": ([np.zeros(9 * 256, np.float32), F[:256], F[256:512], F[512:768]], (1,), (256,)),
    "collatz": ([np.zeros(256, np.int32), U[:256]], (2,), (128,)),
    "matmul": ([np.zeros(1024, np.float32), F, F, 32], (2, 4), (16, 8)),
    "wave_ops": ([np.zeros(3 * 256, np.uint32), U[:256]], (1,), (256,)),
    "private_array": ([np.zeros(256, np.int32), U[:256].view(np.int32)], (2,), (128,)),
}
LOOP = """
    s_load_b64 s[2:3], s[0:1], 0x0
    v_mov_b32 v1, 0
    s_mov_b32 s4, 200
loop:
    v_add_nc_u32 v1, v1, v0
    s_add_u32 s4, s4, -1
    s_cmp_lg_u32 s4, 0
    s_cbranch_scc1 loop
    v_lshlrev_b32 v2, 2, v0
    s_waitcnt lgkmcnt(0)
    global_store_b32 v2, v1, s[2:3]
    s_endpgm
"""


CORPORA = {"gfx1100": "corpus.so", "gfx1201": "corpus_gfx1201.so", "gfx942": "corpus_gfx942.so"}


def _launch(tb: Testbed, name: str) -> None:
    args, grid, block = KERNELS[name]
    vas = [tb.upload(a) if isinstance(a, np.ndarray) else a for a in args]
    if getattr(tb, "_corpus", None) is None:  # (loaded once: each load puts the code elsewhere, a new kernel)
        tb._corpus = tb.load((DATA / "opencl" / CORPORA[tb.arch]).read_bytes())
    tb.launch(tb._corpus[name], vas, grid, block)


def _source_and_eager(name: str, monkeypatch, arch: str = "gfx1100") -> tuple[build.Source, build.CompiledRegion]:
    """The Source an eager compile of kernel `name` read, and the CompiledRegion it made (in this process)."""
    got = []
    real = build.build

    def spy(source, stats, background=True):
        cr = real(source, stats, background=background)
        got.append((source, cr))
        return cr
    monkeypatch.setattr(build, "build", spy)
    tb = Testbed(vram_size=1 << 28, arch=arch)
    tb.engine.jit = jit_tier("eager")
    _launch(tb, name)
    monkeypatch.setattr(build, "build", real)
    assert len(got) == 1 and got[0][1] is not None
    return got[0]


@pytest.mark.parametrize("arch, name", [("gfx1100", n) for n in sorted(KERNELS)]
                         + [("gfx1201", "matmul"), ("gfx1201", "group_sum"), ("gfx942", "matmul"),
                            ("gfx942", "histogram")])
def test_the_worker_translates_as_an_eager_compile_does(arch, name, monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    # what is compared is the translation (the same IR gives the same object at any level; requests carry the
    # level to the worker): LLVM's code generation at tiers.FUZZ_CODEGEN, the three compiles here were most of its time
    monkeypatch.setenv("SIMGPU_JIT_OPT", tiers.FUZZ_CODEGEN)
    source, eager = _source_and_eager(name, monkeypatch, arch)
    built = remote.compile_in_worker(source, build.drops())
    job = build._translate(source)  # in this process (the memory cache cleared: a translation, not a hit)
    if isinstance(job, build.CompiledRegion):
        build._COMPILED.clear()
        job = build._translate(source)
    assert built.key == job.key and built.obj == jc.emit(job.ir) and not built.from_disk
    region = job.meta["region"]
    assert built.classes == [[o, i.kind, i.exits] for o, i in region.insns.items() if i.inst is not None]
    assert built.blocks == [[b.start, b.kind, len(b.insns)] for b in region.blocks]
    build._COMPILED.clear()
    cr = remote.take_up(built, jit_tier("hot").stats)
    for field in ("block_len", "hist", "tails", "nhints", "nsites", "stores", "entry_sets", "lds_stores",
                  "barriers", "short_tails", "span", "code", "arch", "lanes", "mode", "nvgpr"):
        a, b = getattr(cr, field), getattr(eager, field)
        assert (np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b), field
    assert (cr.fused is None) == (eager.fused is None)
    assert [[b.start, b.kind, [i.off for i in b.insns]] for b in cr.blocks] == \
        [[b.start, b.kind, [i.off for i in b.insns]] for b in eager.blocks]
    for a, b in zip(cr.writes, eager.writes, strict=True):
        assert (a is None and b is None) or (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]))


@pytest.mark.parametrize("name", ["saxpy", "group_sum", "matmul", "collatz"])
def test_kernels_compiled_in_the_worker_end_as_in_the_interpreter(name, monkeypatch, tmp_path):
    """The default tier, each kernel compiled after its second launch (in the worker) and run compiled at its
    third: memory, registers, counters and clock as the interpreter's."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_HOT", "0")
    monkeypatch.setenv("SIMGPU_JIT_BACKGROUND", "after")
    build._COMPILED.clear()
    reference = tiers.testbed("interpreter", vram_size=1 << 28)
    tb = tiers.testbed("interpreter", vram_size=1 << 28)
    tb.engine.jit = jit_tier("hot")
    for launch in range(3):
        _launch(reference, name)
        _launch(tb, name)
        for state in tb.engine.jit.kernels.values():
            if state.future is not None:
                state.future.result(timeout=300)
                assert isinstance(state.future.result(), remote.Built), launch
    stats = tb.engine.jit.stats
    assert stats.compiles == 1 and stats.native_instructions > 0 and not stats.failures
    tiers.assert_same(reference, tb)


def _reply_for(name: str, monkeypatch) -> tuple[build.Source, dict]:
    source, _ = _source_and_eager(name, monkeypatch)
    return source, worker.translate(remote.request(source))


def _spoiled(reply: dict, how: str) -> dict:
    r = copy.deepcopy(reply)
    m = r["meta"]
    if how == "no object":
        del r["object"]
    elif how == "object not bytes":
        r["object"] = "text"
    elif how == "a class missing":
        m["classes"].pop()
    elif how == "an unknown class":
        m["classes"][0][1] = "teleport"
    elif how == "a class at another offset":
        m["classes"][0][0] += 4
    elif how == "a VGPR past the file":
        m["writes"] = [[[10 ** 6], []] for _ in m["writes"]]
    elif how == "an SGPR slot past the file":
        m["writes"] = [[[], [-1]] for _ in m["writes"]]
    elif how == "a store block past the blocks":
        m["stores"] = [len(m["blocks"])]
    elif how == "a huge count":
        m["nsites"] = 1 << 40
    elif how == "seconds not a map":
        r["seconds"] = [1.0]
    elif how == "blocks not a list":
        m["blocks"] = {"0": 1}
    elif how == "an offset that is not an integer":
        m["classes"][0][0] = float(m["classes"][0][0])
    elif how == "a negative start":
        r["seconds"]["start"] = -1.0
    return r


SPOILS = ["no object", "object not bytes", "a class missing", "an unknown class", "a class at another offset",
          "a VGPR past the file", "an SGPR slot past the file", "a store block past the blocks", "a huge count",
          "seconds not a map", "blocks not a list", "an offset that is not an integer", "a negative start"]


def test_a_malformed_reply_is_refused_field_by_field(monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    source, reply = _reply_for("matmul", monkeypatch)
    assert isinstance(remote.built_from(reply, source), remote.Built)
    for how in SPOILS:
        with pytest.raises(CompileFailed):
            remote.built_from(_spoiled(reply, how), source)
    # blocks of the right shape that the classes do not make: refused when the region is rebuilt
    other = copy.deepcopy(reply)
    other["meta"]["blocks"][0][2] += 1
    with pytest.raises(CompileFailed, match="blocks"):
        remote.region_of(remote.built_from(other, source))


def _loop_on(tier: str):
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier(tier) if tier != "off" else None
    k = tb.load_asm(LOOP, args=1, vgprs=8)
    return tb, k, tb.alloc(4 * 64)


def _synchronous(monkeypatch) -> None:
    """Background compiles run at once, inside the launch that starts them (their reply is there at the launch's
    next step: what a fast worker gives)."""
    def submit(work, *args):
        f = Future()
        try:
            f.set_result(work(*args))
        except Exception as e:  # noqa: BLE001 - as the pool would keep it
            f.set_exception(e)
        return f
    monkeypatch.setattr(build, "submit", submit)


@pytest.mark.parametrize("how", ["a class at another offset", "a VGPR past the file", "blocks reshuffled",
                                 "not msgpack"])
def test_a_hostile_reply_leaves_the_kernel_to_the_interpreter(how, monkeypatch):
    """A reply that is not what the worker sends fails the kernel's compile (kept in Stats.failures, as a
    translator bug is): the kernel runs on in the interpreter and ends as it would there."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    monkeypatch.setenv("SIMGPU_JIT_HOT", "0")
    monkeypatch.setenv("SIMGPU_JIT_BACKGROUND", "now")
    build._COMPILED.clear()
    _synchronous(monkeypatch)
    real = worker.translate

    def hostile(message, cancelled=None):
        if how == "not msgpack":  # what worker._read says of bytes on the pipe that are not a msgpack map
            raise CompileFailed("JIT worker message is not a map")
        reply = real(message, cancelled)
        if how == "blocks reshuffled":
            reply["meta"]["blocks"] = reply["meta"]["blocks"][::-1]
            return reply
        return _spoiled(reply, how)
    monkeypatch.setattr(worker, "translate", hostile)
    state, stats = loop_ends_as_in_the_interpreter()
    assert state.compiled is None and "CompileFailed" in state.failed
    assert stats.native_instructions == 0


def loop_ends_as_in_the_interpreter():
    """LOOP launched three times in the interpreter alone and on the default tier: the same memory and counters
    after each run; (the tier's kernel state, its Stats)."""
    ref, rk, rout = _loop_on("off")
    tb, k, out = _loop_on("hot")
    for _ in range(3):
        ref.launch(rk, [rout], (2,), (32,))
        tb.launch(k, [out], (2,), (32,))
    assert tb.read(out, 4 * 64) == ref.read(rout, 4 * 64)
    assert tb.engine.counters.snapshot() == ref.engine.counters.snapshot()
    (state,) = tb.engine.jit.kernels.values()
    return state, tb.engine.jit.stats


@pytest.mark.parametrize("pays", [False, True])
def test_code_ready_mid_launch_is_loaded_only_if_that_pays_else_by_the_next_dispatch(pays, monkeypatch, tmp_path):
    """Code ready in the middle of a launch is loaded then only if that pays within it (policy._take_now);
    otherwise the launch goes on in the interpreter and the kernel's next dispatch loads the code at its start."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_HOT", "0")
    monkeypatch.setenv("SIMGPU_JIT_BACKGROUND", "now")
    build._COMPILED.clear()
    _synchronous(monkeypatch)
    asked = []
    monkeypatch.setattr(policy.CompilePolicy, "_take_now", lambda self, now: asked.append(now) or pays)
    ref, rk, rout = _loop_on("off")
    tb, k, out = _loop_on("hot")
    ref.launch(rk, [rout], (2,), (32,))
    tb.launch(k, [out], (2,), (32,))
    (state,) = tb.engine.jit.kernels.values()
    assert len(asked) == 1  # (asked once in the dispatch)
    assert (state.compiled is not None) is pays and (state.built is None) is pays
    assert (tb.engine.jit.stats.native_instructions > 0) is pays
    ref.launch(rk, [rout], (2,), (32,))
    tb.launch(k, [out], (2,), (32,))  # loaded at its start, whatever _take_now says
    assert len(asked) == 1 and state.compiled is not None and state.built is None
    assert tb.engine.jit.stats.native_instructions > 0
    assert tb.read(out, 4 * 64) == ref.read(rout, 4 * 64)
    assert tb.engine.counters.snapshot() == ref.engine.counters.snapshot()


def test_with_a_definition_overridden_the_translation_stays_in_this_process(monkeypatch):
    """valu.override changes a definition in this process only: the worker would translate the old one, so a
    background compile then translates here (build.build) and only LLVM runs in the worker."""
    monkeypatch.setattr(remote, "definitions_tag", lambda: "overridden")
    monkeypatch.setattr(worker, "translate", lambda message, cancelled=None: pytest.fail("translated in the worker"))
    seen = []
    real = build.build
    monkeypatch.setattr(build, "build", lambda source, stats, background=True: (
        seen.append(background), real(source, stats, background=background))[1])
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    build._COMPILED.clear()
    tb, k, out = _loop_on("hot")
    cr = remote.background(build.Source(k.code_address, tb.arch, 32, 0, 8, {}, (0, 0), b""), tb.engine.jit.stats,
                           build.drops())
    assert cr is None and seen == [True]
