"""From a scheduled kernel AST to a program: the kernel pipeline (PASSES: lower, rewrite with the simplifier and
the backend's rules, linearize), then refuse index arithmetic that may wrap, prove (SIMGPU_CHECK_OOB=1) and compile
with the backend, with the kernel cache in front of the expensive steps."""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import simgpu.settings as settings
from compiler import cache
from compiler.backend import Backend
from compiler.helpers import check_oob, debug
from compiler.ir.linearize import LinearKernel, linearize
from compiler.ir.lower import Geometry, lower
from compiler.ir.ops import Ops, UOp
from compiler.ir.printer import format_kernel
from compiler.ir.proof import check_ranges, prove
from compiler.ir.rewrite import rewrite
from compiler.ir.symbolic import SYMBOLIC


@dataclass(frozen=True)
class Program:
    """A compiled kernel: its binary for the backend's device, name, launch geometry and buffer count."""

    name: str
    binary: bytes
    geometry: Geometry
    nparams: int
    backend: str
    key: str


@dataclass
class Stats:
    """What this process compiled: counts, and seconds per step (proofs per kernel)."""

    compiled: int = 0
    cache_hits: int = 0
    lowering_s: float = 0.0
    backend_s: float = 0.0
    proof_s: list[float] = field(default_factory=list)


stats = Stats()
_by_ast: dict[tuple, Program] = {}
# Linearized kernels (by their text's SHA-256) this process proved in bounds, with the proof's seconds: the same text
# is the same uops, so the same proof. Backends whose rules leave a kernel alike (the native and LLVM backends, on
# most kernels) share it.
_proven: dict[bytes, float] = {}


@dataclass(frozen=True)
class Lowered:
    """A kernel between lowering and linearizing: its graph, launch geometry and parameter types."""

    sink: UOp
    geometry: Geometry
    params: list


def lower_pass(ast: UOp, backend: Backend) -> Lowered:
    """Views to index arithmetic, reductions to loops, the launch geometry (compiler.ir.lower)."""
    params = [u.dtype for u in sorted((u for u in ast.toposort() if u.op is Ops.PARAM), key=lambda u: u.arg)]
    return Lowered(*lower(ast, backend.features), params)


def rewrite_pass(k: Lowered, backend: Backend) -> Lowered:
    """The simplifier and the backend's rules (Backend.rules), until no rule applies (compiler.ir.rewrite)."""
    return replace(k, sink=rewrite(k.sink, SYMBOLIC + backend.rules))


def linearize_pass(k: Lowered, backend: Backend) -> LinearKernel:
    """One order of the nodes, loops closed, for the backends (compiler.ir.linearize)."""
    return linearize(k.sink, k.geometry, k.params)


# The kernel pipeline, in order: each pass takes what the one before made, and the backend. Its result's text is the
# kernel cache's key; the rest is the backend's, behind the cache (compile: the machine-code backends unroll small
# loops first, compiler.ir.unroll, then select, allocate and encode; docs/compiler.md "The pipeline").
PASSES: tuple[Callable[[Any, Backend], Any], ...] = (lower_pass, rewrite_pass, linearize_pass)


def linear_kernel(ast: UOp, backend: Backend) -> LinearKernel:
    """The AST through PASSES."""
    k: Any = ast
    for run in PASSES:
        k = run(k, backend)
    return k


def compile_ast(ast: UOp, backend: Backend, cached: bool = True) -> Program:
    """The program for a kernel AST (cached by AST in memory, by linearized IR in the kernel cache; `cached=False`
    compiles whatever the caches hold, and replaces it)."""
    proved = check_oob()
    memo = (ast, backend.fingerprint(), proved)
    if cached and memo in _by_ast and cache.enabled():
        stats.cache_hits += 1
        return _by_ast[memo]
    t0 = time.perf_counter()
    k, text = _linear(ast, backend) if cached and cache.enabled() else _linearized(ast, backend)
    stats.lowering_s += time.perf_counter() - t0
    fp = backend.fingerprint()
    key = cache.key(fp, text, proved)
    entry = cache.get(fp, key) if cached else None
    if debug() >= 2:
        print(text, file=sys.stderr)
    if debug() >= 3:
        print(backend.assembly(k), file=sys.stderr)
    if entry is None:
        proof_s = None
        if proved:
            proof_s = _prove(k, text)
        t1 = time.perf_counter()
        binary = backend.compile(k)
        stats.backend_s += time.perf_counter() - t1
        stats.compiled += 1
        entry = {"binary": binary, "name": k.name, "proof_s": proof_s}
        cache.put(fp, key, entry)
    else:
        stats.cache_hits += 1
    prog = Program(k.name, entry["binary"], k.geometry, len(k.params), backend.name, key)
    if cache.enabled():
        _by_ast[memo] = prog
    return prog


def _linearized(ast: UOp, backend: Backend) -> tuple[LinearKernel, str]:
    """The kernel through PASSES, its index arithmetic checked (check_ranges), and its text."""
    k = linear_kernel(ast, backend)
    check_ranges(k)
    return k, format_kernel(k)


def _linear(ast: UOp, backend: Backend) -> tuple[LinearKernel, str]:
    """_linearized, remembered for the last LINEAR_MEMO kernels by what PASSES read of the backend (its features and
    rules): the native and LLVM backends lower a gfx1100 kernel alike, and the one compiles the kernels the other
    just did (the ops suite runs each case with both, adjacent)."""
    key = (ast, backend.features, backend.rules, PASSES)
    hit = _linear_memo.get(key)
    if hit is None:
        hit = _linear_memo[key] = _linearized(ast, backend)
        while len(_linear_memo) > LINEAR_MEMO:
            del _linear_memo[next(iter(_linear_memo))]
    return hit


LINEAR_MEMO = 256
_linear_memo: dict[tuple, tuple[LinearKernel, str]] = {}


def _prove(k: LinearKernel, text: str) -> float:
    """The seconds k's proof took (CompileError if it fails), proven once per process per kernel text (each time
    with SIMGPU_CACHE=0)."""
    digest = hashlib.sha256(text.encode()).digest()
    if digest not in _proven or not cache.enabled():
        seconds = _proven[digest] = prove(k).seconds
        stats.proof_s.append(seconds)
        _log_proof(k.name, seconds)
    return _proven[digest]


def _log_proof(name: str, seconds: float) -> None:
    """SIMGPU_PROOF_LOG=path: append 'kernel seconds' per proof (the report of the ops suite's proofs)."""
    path = settings.get("SIMGPU_PROOF_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{name} {seconds:.6f}\n")
