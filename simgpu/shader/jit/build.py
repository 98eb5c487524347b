"""Compiling a kernel: the walk of its reachable code on the launching thread (`source`), translation to IR, LLVM's
code generation and loading, and the process's memory cache of the results. An eager compile runs all of it here
(`build`, background=False); a background compile translates and runs LLVM in the JIT's worker process (jit.remote,
which loads the result with `loaded`), or, while a VALU definition is overridden, translates here on the JIT's
thread (`submit`) and runs only LLVM there. A CompiledRegion is a region's native code and what the tier needs to
account for it.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from simgpu.shader.jit import compile as jc
from simgpu.shader.jit import costs as hc
from simgpu.shader.jit import elfload, worker
from simgpu.shader.jit import lower as lo
from simgpu.shader.jit import region as rg
from simgpu.shader.semantics import base_name
from simgpu.shader.setup import initial_mode
from simgpu.shader.tier_exec import TierExec
from simgpu.shader.vector.valu import SPECS

MAX_COMPILED = 512  # regions kept in the process's memory cache (the disk cache keeps the rest)
# Kernels with more reachable instructions stay in the interpreter. LLVM's time grows faster than the code: a
# Triton corpus kernel of thousands of instructions (tests/data/triton: spills, attention) held LLVM for minutes, and
# llvmlite's one lock held every other LLVM call of the process with it. The corpora's clang and LLVM
# kernels stay far under it (a few hundred); Triton's big matmuls and attention go over.
MAX_REGION_INSNS = 2000
SHORT_TAIL = 6  # a kernel's last few instructions run in the interpreter (see JitRun.step)
ROUND_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
FUSED_TYPE = ROUND_TYPE
_POOL: ThreadPoolExecutor | None = None  # background compiles: waiting for the worker (jit.remote), or translating
_DROPS = 0  # drop_queued_compiles so far: a background compile started before one ends as CompileDropped
_COMPILED: dict[str, CompiledRegion] = {}  # by cache key: shared by every engine of the process
TRANSLATE = "simgpu.shader.jit.translate"


def _pool(name: str) -> ThreadPoolExecutor:
    """A one-thread pool whose queued compiles are dropped when the process exits: Python joins pool threads
    before atexit, and a queue of background compiles on a busy machine held a finished process for minutes,
    for code nobody would run (only the compile under way still finishes)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
    # threading's exit hooks run before the join, the latest first: this one before concurrent.futures' own
    threading._register_atexit(lambda: pool.shutdown(wait=False, cancel_futures=True))
    return pool


def drop_queued_compiles() -> None:
    """Cancel the background compiles that have not started, and end the one under way in LLVM (jit.worker; a
    translation under way finishes): a program that moves on to other work, like a test suite's next test, stops
    paying, in CPU and in the GIL translation holds, for code compiled for launches that may never come. A
    kernel whose compile was dropped is compiled again once it is hot again."""
    global _POOL, _DROPS
    _DROPS += 1
    pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
    worker.stop()  # the compile under way in LLVM too (its kernel gets CompileDropped: compiled again when hot)


def submit(work, *args) -> Future:
    """Run `work(*args)` on the JIT's background thread (a compile: jit.remote.background)."""
    global _POOL
    if _POOL is None:
        _POOL = _pool("simgpu-jit")
    return _POOL.submit(work, *args)


def drops() -> int:
    """drop_queued_compiles so far (a compile that started before one ends as CompileDropped)."""
    return _DROPS


@dataclass
class CompiledRegion:
    """A region's native code and what the tier needs to account for it."""

    round: object  # ctypes function ROUND_TYPE
    image: object  # the elfload.Image holding the code (mapped as long as this region lives)
    arch: str  # the architecture whose machine code it is (simgpu.isa.arch)
    lanes: int
    mode: int
    nvgpr: int
    blocks: list  # region.Block
    by_start: dict
    block_len: np.ndarray  # instructions counted per execution of each block
    hist: list[Counter]
    insns: dict  # offset -> region.Insn
    tails: dict  # offset of a native instruction -> mnemonics from it to the end of its block
    writes: list  # per block: (VGPRs, SGPR slots) native code may write from it on, or None (translate)
    span: tuple[int, int]  # code offsets [lo, hi) the region was read from
    code: bytes  # the bytes of that span when compiled
    compile_seconds: float = 0.0
    start_seconds: float = 0.0  # of compile_seconds: llvmlite's import and LLVM's start (a process's first)
    from_disk: bool = False
    nhints: int = 0  # window-hint slots of the memory instructions (lower_mem.find_window)
    short_tails: frozenset = frozenset()  # blocks of at most SHORT_TAIL instructions ending in s_endpgm
    fused: object = None  # ctypes function FUSED_TYPE when the region is fusable (translate.fusable), else None
    nsites: int = 0  # memory sites of the order check (Lowering.site)
    stores: int = 0  # store blocks (a fused batch's undo log holds at most stores x lanes entries per wave)
    entry_sets: int = 0  # distinct VGPR sets @wave moves per entry block (lower._entry_classes), 0: all at once
    lds_stores: frozenset = frozenset()  # blocks of LDS stores native in a barrier-to-barrier interval (barrier.py)
    barriers: dict = field(default_factory=dict)  # the region's workgroup barriers (region.workgroup_barriers)

    def count(self, per_opcode: Counter, per_block: np.ndarray) -> int:
        """Add the mnemonics of blocks run `per_block` times each to `per_opcode`; the wave-instructions they count."""
        for b in np.flatnonzero(per_block).tolist():
            times = int(per_block[b])
            for m, k in self.hist[b].items():
                per_opcode[m] += k * times
        return int(per_block @ self.block_len)


@dataclass
class _Job:
    key: str
    ir: str
    meta: dict


def _callback_safe(inst) -> bool:
    """Whether the interpreter may run this instruction for one wave inside a round: its result must not
    depend on how waves are grouped. Float ops with two or more float operands are not (numpy's NaN
    choice), unless fpexact fixes their NaNs; those run as sync instructions, for the same group."""
    m = inst.mnemonic
    if not m.startswith("v_"):
        return True  # scalar ops and memory reads (region.is_sync keeps the rest out)
    if inst.encoding in ("VOPD", "VOP3P", "WMMA") or m.startswith(("v_pk_", "v_dot", "v_wmma")):
        return False
    spec = SPECS.get(base_name(m))
    if spec is None:
        return True
    kinds = ("f16", "f32", "f64")
    floats = sum(t in kinds for t in spec.srcs) + (1 if spec.acc and spec.dst in kinds else 0)
    return floats < 2


@dataclass
class Source:
    """What translating a kernel reads from the dispatch, taken on the launching thread: its reachable
    instructions (region.reachable) and the bytes of their span."""

    base: int
    arch: str
    lanes: int
    mode: int
    nvgpr: int
    found: dict
    span: tuple[int, int]
    code: bytes
    seconds: float = 0.0  # CPU time of the walk (counted with the translation)


def source(ex: TierExec) -> Source:
    """The walk of the dispatch's reachable code (through the interpreter's decode cache) and its bytes."""
    d = ex.d
    with jc.Timer() as t:
        found = rg.reachable(d.code_address, ex.decoded)
        # (the span of the instructions found: a branch to an unreadable address is a missing instruction there,
        # whose block parks the wave for the interpreter to fault, and has no bytes)
        present = [(o, i.size) for o, i in found.items() if i is not None] or [(0, 0)]
        span = (min(o for o, _ in present), max(o + n for o, n in present))
        code = ex.mem.read(d.vmid, d.code_address + span[0], span[1] - span[0], access="execute") \
            if span[1] > span[0] else b""
    return Source(d.code_address, d.arch, d.wave_size, initial_mode(d), max(d.vgpr_count, 1), found, span, code,
                  t.seconds)


def _translate_module():
    """simgpu.shader.jit.translate, imported by a process's first compile: it loads the lowering of every instruction
    (lower_valu, lower_salu, lower_gfx9, ...), a third of a `simgpu run` server's imports, which a process whose
    kernels never get hot does not need."""
    from simgpu.shader.jit import translate
    return translate


def translators_loaded() -> bool:
    """Whether this process has registered the translators (translate.load_translators ran); False until a first
    compile has imported translate."""
    tr = sys.modules.get(TRANSLATE)
    # (the module is in sys.modules from the start of its import: while the JIT's thread imports it, the launching
    # thread may find it partly initialised, without its functions yet -- then it is not loaded)
    return tr is not None and getattr(tr, "_loaded", False)


def build(source: Source, stats, background: bool = True):
    """Translate and compile (any thread: it reads only `source`): a CompiledRegion, or None when there is
    nothing to compile (or too much: MAX_REGION_INSNS). `background` (a compile for later launches, on the JIT
    thread): LLVM's part in the JIT's worker process (jit.worker); otherwise (an eager compile the launch waits
    for) on this thread, so that it never queues behind the background compiles of other kernels."""
    if len(source.found) > MAX_REGION_INSNS:
        return None
    drops = _DROPS
    with jc.Timer() as t0:  # a process's first compile: the translators' imports and the sources' hash
        first = not (translators_loaded() and jc.ready())  # (llvmlite's import and LLVM's start: in _finish)
        tr = _translate_module()
        tr.load_translators()
        tr.translator_key()
    with jc.Timer() as t:
        job = _translate(source)
    if not isinstance(job, _Job):
        return job
    stats.translate_seconds.append(source.seconds + t.seconds + t0.seconds)
    if background and drops != _DROPS:  # dropped while it translated: no LLVM (nor disk cache write) for it
        raise worker.CompileDropped("dropped during translation")
    cr = _finish(job, stats, background=background, drops=drops)
    # (the walk is left out: through a warm decode cache it takes microseconds; an eager compile's walk decodes)
    hc.record(len(source.found), t.seconds, None if cr.from_disk else cr.compile_seconds - cr.start_seconds,
              t0.seconds + cr.start_seconds if first else None)
    return cr


def _translate(src: Source):
    """Classify and translate the region: a _Job for LLVM, a CompiledRegion from the memory cache, or None
    when there is nothing to compile."""
    lanes, mode, nvgpr = src.lanes, src.mode, src.nvgpr
    tr = _translate_module()
    lw = lo.Lowering(lanes, mode, nvgpr, src.arch)
    region = rg.classified(src.base, src.found, tr.classifier(lw, nvgpr, _callback_safe))
    if not any(_worth_running(b) for b in region.blocks):
        return None
    span, code = src.span, src.code
    # (the architecture: the same bytes mean other instructions, or the same ones another thing, on another)
    key = jc.key_of("simgpu-jit", tr.translator_key(), src.arch, lanes, mode, nvgpr, region.code_signature(),
                    jc.code_setting())  # (+ host: on disk)
    meta = dict(arch=src.arch, lanes=lanes, mode=mode, nvgpr=nvgpr, region=region, span=span, code=code)
    hit = _COMPILED.get(key)
    if hit is not None:
        return CompiledRegion(**{**hit.__dict__, "span": span, "code": code})
    ir, fuse = tr.build_module(lw, region)
    meta["nhints"] = len(lw.hints)
    meta["fusable"], meta["nsites"], meta["entry_sets"] = fuse, len(lw.sites), lw.entry_sets
    meta["stores"] = [b.index for b in region.blocks if fuse and b.kind == rg.SYNC and b.insns[0].fragment is not None]
    meta["lds_stores"] = frozenset(b.index for b in region.blocks if tr.lds_store(b))
    meta["barriers"] = rg.workgroup_barriers(region)
    meta["writes"] = [None if x is None else (np.array(sorted(x[0]), np.intp), np.array(sorted(x[1]), np.intp))
                      for x in tr.reachable_writes(region)]
    for insn in region.insns.values():  # the IR text is in the module now
        insn.fragment = None
    return _Job(key, ir, meta)


def _worth_running(blk: rg.Block) -> bool:
    """A block native code would run (the interpreter runs short tails: see JitRun.step)."""
    return blk.kind == rg.NATIVE and not _short_tail(blk)


def _short_tail(blk: rg.Block) -> bool:
    return len(blk.insns) <= SHORT_TAIL and blk.insns[-1].inst is not None and blk.insns[-1].inst.mnemonic in rg.ENDS


def _tails(blocks) -> dict:
    """For each native instruction that may stop a wave before it: the mnemonics from it to its block's end
    (counted with the block, not executed)."""
    out = {}
    for blk in blocks:
        if blk.kind != rg.NATIVE:
            continue
        for i, insn in enumerate(blk.insns):
            if insn.exits:
                out[insn.off] = [x.inst.mnemonic for x in blk.insns[i:]]
    return out


def _object_code_in_worker(job: _Job, drops: int) -> tuple[bytes, bool, float]:
    """(object file, from the disk cache, the worker process's CPU seconds for it): LLVM in jit.worker's
    process, which drop_queued_compiles may end (CompileDropped); `drops`: _DROPS when the compile started."""
    seconds = []

    def make(ir: str) -> bytes:
        obj, s = worker.compile_object(ir)
        if drops != _DROPS:  # dropped while LLVM ran: no disk cache write (a test's cache directory may be the next
            raise worker.CompileDropped("dropped during code generation")  # test's by now)
        seconds.append(s)
        return obj
    obj, from_disk = jc.object_code(job.ir, make)
    return obj, from_disk, sum(seconds)


def _finish(job: _Job, stats, background: bool = False, drops: int = 0) -> CompiledRegion:
    """LLVM's part (parsing, optimisation, code generation or the disk cache) and loading; `background`:
    code generation in the JIT's worker process, whose CPU time is counted apart (this thread waits for it
    without holding the GIL); `drops`: _DROPS when the compile started (a background compile dropped since
    writes nothing to the disk cache)."""
    with jc.Timer() as t:
        with jc.Timer() as start:
            jc.prepare()  # llvmlite imported (Python: it holds the GIL) here, for the disk cache's key and LLVM
        if background:
            obj, from_disk, llvm_seconds = _object_code_in_worker(job, drops)  # (another process's CPU)
        else:
            obj, from_disk = jc.object_code(job.ir)
            llvm_seconds = 0.0  # (this thread's: in t.seconds)
        with jc.Timer() as load:
            cr = loaded(job.key, job.meta, obj, stats, from_disk)
    cr.compile_seconds, cr.start_seconds = t.seconds + llvm_seconds, start.seconds
    # (what loading costs the launching thread when a background compile is taken up: jit.remote.take_up)
    hc.record_take(len(job.meta["region"].insns), load.seconds)
    stats.compile_seconds.append(cr.compile_seconds)
    return cr



def loaded(key: str, m: dict, obj: bytes, stats, from_disk: bool) -> CompiledRegion:
    """The CompiledRegion of object file `obj` for the translation `m` (a _Job's meta), loaded (elfload: no LLVM in
    this process needed) and kept in the memory cache under `key` (its compile_seconds: the caller's). BadObject (a
    CompileFailed) for an object the loader refuses."""
    entries = ("round", "fused") if m["fusable"] else ("round",)
    image = elfload.load(obj, entries) if elfload.supported() else jc.McjitImage(obj, entries)
    fused = FUSED_TYPE(image.address("fused")) if m["fusable"] else None
    region = m["region"]
    blocks = region.blocks
    counted = {b.index for b in blocks if b.kind in (rg.NATIVE, rg.CALLBACK)} | set(m["stores"]) | m["lds_stores"]
    cr = CompiledRegion(
        round=ROUND_TYPE(image.address("round")), image=image, arch=m["arch"], lanes=m["lanes"], mode=m["mode"],
        nvgpr=m["nvgpr"],
        blocks=blocks, by_start=region.by_start,
        block_len=np.array([len(b.insns) if b.index in counted else 0 for b in blocks], np.int64),
        hist=[b.histogram() if b.index in counted else Counter() for b in blocks],
        insns=region.insns, tails=_tails(blocks), writes=m["writes"], span=m["span"], code=m["code"],
        nhints=m["nhints"], fused=fused, nsites=m["nsites"], stores=len(m["stores"]), entry_sets=m["entry_sets"],
        lds_stores=m["lds_stores"], barriers=m["barriers"], from_disk=from_disk)
    cr.short_tails = frozenset(b.index for b in blocks if b.kind == rg.NATIVE and _short_tail(b))
    if len(_COMPILED) >= MAX_COMPILED:  # the oldest goes (images still used by a dispatch stay mapped)
        del _COMPILED[next(iter(_COMPILED))]
    _COMPILED[key] = cr
    stats.compiles += 1
    stats.disk_hits += from_disk
    return cr
