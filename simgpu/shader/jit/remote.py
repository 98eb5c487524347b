"""A background compile in the JIT's worker process: translation to IR as well as LLVM, so that the launching process
runs no translation Python while its launch goes on.

A compile beside a launch used to translate on a thread of the launching process: the translators' imports, the
classification and the IR text are Python, and they held the GIL the interpreter's launch needed (50-70 ms of a
process's first compile, its launch 9-23% slower than the interpreter alone: docs/shader.md, "The first launch").
Here the launching process sends the walk of the kernel's code (build.Source: its reachable offsets, in discovery
order, and the bytes of their span, as plain data) and the worker decodes those bytes with the same decoder,
translates exactly as build._translate does in-process (an eager compile), runs LLVM (the disk cache too, in the
directory the request names) and answers with the object file and what the launching side needs to use it, as
plain data: each instruction's class, the blocks, the fused launch's and the rounds' figures. The launching
process rebuilds the region from its own decoded instructions and those classes (`region_of`) and loads the object
(build.take_up) when that pays.

A reply is checked as hostile input (`built_from`, `region_of`): any field of the wrong type or out of range, or
blocks other than the classes make, is a CompileFailed (the kernel runs in the interpreter), never an exception
in the launch.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from simgpu import diskcache
from simgpu.isa import decode, fetch_size
from simgpu.shader.jit import build as bd
from simgpu.shader.jit import compile as jc
from simgpu.shader.jit import costs as hc
from simgpu.shader.jit import region as rg
from simgpu.shader.jit import worker
from simgpu.shader.jit.build import CompiledRegion
from simgpu.shader.jit.worker import CompileFailed
from simgpu.shader.vector.valu import definitions_tag

KINDS = (rg.NATIVE, rg.CONTROL, rg.SYNC, rg.CALLBACK)  # what a present instruction may be classified as
SGPR_SLOTS = 128  # WaveState.sgpr's columns (state.py): a written slot is one of them
MAX_COUNT = 1 << 20  # hints, memory sites, VGPR sets: far beyond any region of MAX_REGION_INSNS instructions
_START: list[float] = []  # the worker's CPU seconds at its start (serve), until its first reply carries them


def request(source: bd.Source) -> dict:
    """The translation request for `source`: plain data only (the worker decodes the bytes itself)."""
    root = jc.cache_dir()
    d = None if root is None else diskcache.directory(root)  # (created here: the worker never makes a directory)
    return {"source": {"base": source.base, "arch": source.arch, "lanes": source.lanes, "mode": source.mode,
                       "nvgpr": source.nvgpr, "span": list(source.span), "code": source.code,
                       "found": [[off, inst is not None] for off, inst in source.found.items()]},
            "cache": "off" if d is None else str(d)}


@dataclass
class Built:
    """A background compile's result before loading: the object file and the translation's figures (checked
    types, not yet checked against the region: region_of)."""

    source: bd.Source
    key: str  # the memory cache's key (build._translate)
    obj: bytes
    from_disk: bool
    classes: list  # [offset, kind, exits] of each present instruction, in discovery order
    blocks: list  # [start, kind, instructions] of each block
    meta: dict  # nhints, nsites, entry_sets, fusable, stores, lds_stores, writes
    seconds: dict  # the worker's CPU seconds: start (its first translation only), translate, llvm


def submit(source: bd.Source, stats) -> Future:
    """Compile `source` on the JIT's background thread: a Future of a Built (take_up loads it), a CompiledRegion or
    None (`background`)."""
    return bd.submit(background, source, stats, bd.drops())


def background(source: bd.Source, stats, drops: int):
    """The background thread's part: the compile in the worker, this thread only waiting for its reply. While a
    VALU definition is overridden at run time (valu.override: tests) the worker would not know it: then the
    translation runs here (build.build) and only LLVM in the worker."""
    if definitions_tag():
        return bd.build(source, stats, background=True)
    built = compile_in_worker(source, drops)
    if built is not None:
        secs = built.seconds
        hc.record(len(source.found), secs["translate"], None if built.from_disk else secs["llvm"], None,
                  spawn=secs["start"])
    return built


def take_up(built: Built, stats) -> CompiledRegion:
    """Load a background compile's object in this process (on the launching thread, when that pays:
    policy.CompilePolicy): the region rebuilt from the worker's classes and the object loaded by jit.elfload, which
    needs no llvmlite (its import and LLVM's start were 22-42 ms of a process's first take-up). Its CPU seconds go
    to the host's costs (what a take-up takes from a launch)."""
    src, secs = built.source, built.seconds
    hit = bd._COMPILED.get(built.key)
    if hit is not None:  # (another engine of this process loaded the same region)
        return CompiledRegion(**{**hit.__dict__, "span": src.span, "code": src.code})
    with jc.Timer() as t:
        region = region_of(built)
        m = built.meta
        meta = dict(arch=src.arch, lanes=src.lanes, mode=src.mode, nvgpr=src.nvgpr, region=region, span=src.span,
                    code=src.code, nhints=m["nhints"], nsites=m["nsites"], entry_sets=m["entry_sets"],
                    fusable=m["fusable"], stores=m["stores"], lds_stores=frozenset(m["lds_stores"]),
                    barriers=rg.workgroup_barriers(region),
                    writes=[None if w is None else (np.array(w[0], np.intp), np.array(w[1], np.intp))
                            for w in m["writes"]])
        cr = bd.loaded(built.key, meta, built.obj, stats, built.from_disk)
    cr.compile_seconds = secs["translate"] + secs["llvm"] + t.seconds
    stats.compile_seconds.append(cr.compile_seconds)
    stats.translate_seconds.append(src.seconds + secs["translate"])
    hc.record_take(len(src.found), t.seconds)
    return cr


def compile_in_worker(source: bd.Source, drops: int) -> Built | None:
    """Translate and compile `source` in the worker (None: nothing the tier would run, or too much). Raises
    CompileFailed for a reply that is not what serve_translation sends, CompileDropped when the compile was
    dropped (`drops`: build._DROPS when it started)."""
    reply = worker.translate(request(source), cancelled=lambda: drops != bd._DROPS)
    if drops != bd._DROPS:
        raise worker.CompileDropped("dropped during the compile")
    if reply.get("none") is True:
        return None
    return built_from(reply, source)


def _is_int(x, lo: int = 0, hi: int = MAX_COUNT) -> bool:
    return type(x) is int and lo <= x < hi


def _int_list(x, hi: int) -> bool:
    return isinstance(x, list) and all(_is_int(v, 0, hi) for v in x)


def built_from(reply: dict, source: bd.Source) -> Built:
    """The reply's fields, their types and ranges checked (CompileFailed otherwise)."""
    obj, key, meta, secs = reply.get("object"), reply.get("key"), reply.get("meta"), reply.get("seconds")
    if not isinstance(obj, bytes) or not obj or not isinstance(key, str) or not isinstance(meta, dict) \
            or not isinstance(secs, dict) or not isinstance(reply.get("from_disk"), bool):
        raise CompileFailed("JIT worker reply without an object file and its region")
    present = [off for off, inst in source.found.items() if inst is not None]
    classes, blocks = meta.get("classes"), meta.get("blocks")
    if not isinstance(classes, list) or len(classes) != len(present) or not all(
            isinstance(c, list) and len(c) == 3 and type(c[0]) is int and c[0] == off and c[1] in KINDS
            and isinstance(c[2], bool)
            for c, off in zip(classes, present, strict=False)):
        raise CompileFailed("JIT worker reply: the instructions' classes do not match the code sent")
    nblocks = len(blocks) if isinstance(blocks, list) else -1
    if not 0 < nblocks <= len(source.found) or not all(
            isinstance(b, list) and len(b) == 3 and type(b[0]) is int and b[1] in (*KINDS, rg.MISSING)
            and _is_int(b[2], 1) for b in blocks):
        raise CompileFailed("JIT worker reply: malformed blocks")
    writes = meta.get("writes")
    if not (all(_is_int(meta.get(k)) for k in ("nhints", "nsites", "entry_sets"))
            and isinstance(meta.get("fusable"), bool)
            and _int_list(meta.get("stores"), nblocks) and _int_list(meta.get("lds_stores"), nblocks)
            and isinstance(writes, list) and len(writes) == nblocks
            and all(w is None or (isinstance(w, list) and len(w) == 2 and _int_list(w[0], source.nvgpr)
                                  and _int_list(w[1], SGPR_SLOTS)) for w in writes)):
        raise CompileFailed("JIT worker reply: malformed region figures")
    if not all(isinstance(secs.get(k), float) and secs[k] >= 0 for k in ("translate", "llvm")) \
            or not (secs.get("start") is None or (isinstance(secs["start"], float) and secs["start"] >= 0)):
        raise CompileFailed("JIT worker reply: malformed CPU seconds")
    return Built(source, key, obj, reply["from_disk"], classes, blocks, meta, secs)


def region_of(built: Built) -> rg.Region:
    """The region of the launching process's own decoded instructions, classified as the worker did; its blocks
    must be the ones the worker compiled (CompileFailed otherwise)."""
    src = built.source
    classes = {off: (kind, None, exits) for off, kind, exits in built.classes}
    region = rg.classified(src.base, src.found, lambda inst, off: classes[off])
    if [[b.start, b.kind, len(b.insns)] for b in region.blocks] != built.blocks:
        raise CompileFailed("JIT worker reply: its blocks are not the ones its classes make")
    return region


# ---- the worker's side ----

def _source_of(req: dict) -> bd.Source:
    """The Source a request describes, its instructions decoded from its bytes as the engine's fetch does."""
    lo, hi = req["span"]
    code, arch = req["code"], req["arch"]
    found = {}
    for off, present in req["found"]:
        if not present:
            found[off] = None
            continue
        at = off - lo
        head = code[at:at + 4]
        found[off] = decode(code[at:at + fetch_size(int.from_bytes(head, "little"), arch)], true16=None, arch=arch)
    return bd.Source(req["base"], arch, req["lanes"], req["mode"], req["nvgpr"], found, (lo, hi), code)


def serve_translation(req: dict) -> dict:
    """Translate (build._translate, as an eager compile does) and compile a request's code: the reply
    built_from reads, {"none": True} when there is nothing to compile."""
    cache = req.get("cache", "off")
    os.environ["SIMGPU_JIT_CACHE"] = cache if cache == "off" or os.path.isdir(cache) else "off"
    start = _START.pop() if _START else None
    source = _source_of(req["source"])
    if len(source.found) > bd.MAX_REGION_INSNS:
        return {"none": True}
    t0 = time.process_time()
    job = bd._translate(source)
    t1 = time.process_time()
    if not isinstance(job, bd._Job):  # (None; never a memory cache hit: this process keeps none)
        return {"none": True}
    obj, from_disk = jc.object_code(job.ir)
    region, m = job.meta["region"], job.meta
    meta = {"classes": [[off, i.kind, i.exits] for off, i in region.insns.items() if i.kind != rg.MISSING],
            "blocks": [[b.start, b.kind, len(b.insns)] for b in region.blocks],
            "nhints": m["nhints"], "nsites": m["nsites"], "entry_sets": m["entry_sets"], "fusable": m["fusable"],
            "stores": m["stores"], "lds_stores": sorted(m["lds_stores"]),
            "writes": [None if w is None else [w[0].tolist(), w[1].tolist()] for w in m["writes"]]}
    return {"object": obj, "from_disk": from_disk, "key": job.key, "meta": meta,
            "seconds": {"start": start, "translate": t1 - t0,
                        "llvm": time.process_time() - t1}}


def serve() -> None:
    """The worker process's loop (worker.COMMAND): translation requests and module texts, once the translators are
    loaded (its start, before it says it is ready: worker.stop spares a worker still starting)."""
    tr = bd._translate_module()
    tr.load_translators()
    tr.translator_key()
    _START.append(time.process_time())
    worker.serve(serve_translation)
