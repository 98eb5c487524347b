"""From a scheduled kernel AST to a program: lower, rewrite (simplify, the backend's rules), linearize, refuse
index arithmetic that may wrap, prove (SIMGPU_CHECK_OOB=1), compile, with the kernel cache in front of the
expensive steps."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import simgpu.settings as settings
from compiler import cache
from compiler.backend import Backend
from compiler.helpers import check_oob, debug
from compiler.ir.linearize import LinearKernel, linearize
from compiler.ir.lower import Geometry, lower
from compiler.ir.ops import Ops, UOp
from compiler.ir.printer import format_kernel
from compiler.ir.proof import check_ranges
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


def linear_kernel(ast: UOp, backend: Backend) -> LinearKernel:
    """The AST lowered, rewritten with the simplifier and the backend's rules, and linearized."""
    params = [u.dtype for u in sorted((u for u in ast.toposort() if u.op is Ops.PARAM), key=lambda u: u.arg)]
    sink, geometry = lower(ast, backend.features)
    sink = rewrite(sink, SYMBOLIC + backend.rules())
    return linearize(sink, geometry, params)


def compile_ast(ast: UOp, backend: Backend, cached: bool = True) -> Program:
    """The program for a kernel AST (cached by AST in memory, by linearized IR in the kernel cache; `cached=False`
    compiles whatever the caches hold, and replaces it)."""
    proved = check_oob()
    memo = (ast, backend.fingerprint(), proved)
    if cached and memo in _by_ast and cache.enabled():
        stats.cache_hits += 1
        return _by_ast[memo]
    t0 = time.perf_counter()
    k = linear_kernel(ast, backend)
    check_ranges(k)
    text = format_kernel(k)
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
            from compiler.ir.proof import prove
            proof_s = prove(k).seconds
            stats.proof_s.append(proof_s)
            _log_proof(k.name, proof_s)
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


def _log_proof(name: str, seconds: float) -> None:
    """SIMGPU_PROOF_LOG=path: append 'kernel seconds' per proof (the report of the ops suite's proofs)."""
    path = settings.get("SIMGPU_PROOF_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{name} {seconds:.6f}\n")
