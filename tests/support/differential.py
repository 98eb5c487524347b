"""Differential testing of the GPU backends: every kernel a test launches is also run by the other backend on the
same input bytes, and the outputs must agree (integers and bools bit for bit, floats within the ops suite's
per-dtype tolerance, NaN where NaN).

`watch(backend)` wraps the compiler's compile and launch steps for the duration of one test: each launch records
its outputs under (kernel AST, input bytes, backend). When the other backend already recorded that launch (the
same case ran with it earlier in this process: the `backend` fixture runs the reference backend first), the two
are compared; otherwise the kernel is compiled for the other backend (through the kernel cache, which the other
parametrization of the case then reuses) and run on copies of the output buffers. Records older than the
previous test are dropped. When the next test is the same case with the other backend (`defer`: the `backend`
fixture knows the next test), the other backend's run waits for it: that test's own launches are the other
backend's run of the same kernels on the same inputs, compared as they happen; a launch it did not repeat is run
by the other backend at its end, on the inputs' recorded bytes (the case's kernels then run once per backend,
not the other backend's twice). SIMGPU_DIFFERENTIAL=0 turns it off; `paused()` lets a test repeat, unchecked,
launches it has already checked (a determinism rerun it asserts bit-identical). A launch the block cannot check
(its program was not compiled through the compiler inside the block) fails the test, so "every case on both
backends" holds by construction, not by hope.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass

import numpy as np

from tests.support.ops import TOL

_records: dict[tuple, dict[str, list[bytes]]] = {}
_generation: dict[tuple, int] = {}
stats = {"compared": 0, "tests": 0}
_test = [0]
_paused = [0]


@dataclass
class _Deferred:
    """A launch whose run by the other backend waits for the next test (the same case with that backend)."""

    dev: object
    ast: object
    key: tuple
    name: str
    backend: str
    other: str
    ins: list[bytes]
    before: list[bytes]


_deferred: list[_Deferred] = []  # launches of the previous test, for this one to repeat


def enabled() -> bool:
    """Whether differential checks run (SIMGPU_DIFFERENTIAL, default on)."""
    return os.environ.get("SIMGPU_DIFFERENTIAL", "1") != "0"


def _out_dtypes(ast) -> list:
    from compiler.ir.ops import Ops
    params = {s.src[0].arg: s.src[0].dtype.base for s in ast.src if s.op is Ops.STORE}
    return [params[i] for i in sorted(params)]


def _compare(name: str, dtypes_: list, a: list[bytes], b: list[bytes], pair: tuple[str, str]) -> None:
    for i, (dt, x, y) in enumerate(zip(dtypes_, a, b, strict=True)):
        if dt.is_float:
            xs, ys = (np.frombuffer(v, dt.storage) for v in (x, y))
            if dt.name == "bfloat16":
                xs, ys = ((v.astype(np.uint32) << 16).view(np.float32) for v in (xs, ys))
            rtol, atol = TOL[dt.name]
            np.testing.assert_allclose(xs.astype(np.float64), ys.astype(np.float64), rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=f"kernel {name}, output {i}: {pair[0]} vs {pair[1]}")
        else:
            assert x == y, f"kernel {name}, output {i} ({dt.name}): {pair[0]} and {pair[1]} differ"
    stats["compared"] += 1


@contextlib.contextmanager
def watch(backend: str, other: str | None, defer: bool = False):
    """Check every launch of the block against `other` (module docstring); other None: record only. defer: the
    next test is this case with `other` (module docstring)."""
    if not enabled():
        yield
        return
    from compiler import backend as backends
    from compiler import device, realize
    _test[0] += 1
    for k in [k for k, g in _generation.items() if g < _test[0] - 1]:
        _records.pop(k, None)
        _generation.pop(k, None)
    stats["tests"] += 1
    asts: dict[str, object] = {}
    unchecked: list[str] = []
    carried, mine = _deferred[:], []  # the previous test's deferred launches; this one's
    _deferred.clear()
    real_compile, real_launch = realize.compile_ast, device.DeviceAdapter.launch

    def compile_ast(ast, be, cached=True):
        prog = real_compile(ast, be, cached)
        asts[prog.key] = ast
        return prog

    def launch(dev, program, buffers):
        if _paused[0] or dev.kind != "AMD":  # (the GPU's launches: the CPU device's are compared elsewhere)
            return real_launch(dev, program, buffers)
        ast = asts.get(program.key)
        if ast is None:
            unchecked.append(program.name)
            return real_launch(dev, program, buffers)
        outs = _out_dtypes(ast)
        n = len(outs)
        inputs = [b.copyout(np.empty(b.nbytes, np.uint8)).tobytes() for b in buffers[n:]]
        ins = tuple(hashlib.sha256(x).hexdigest() for x in inputs)
        before = [b.copyout(np.empty(b.nbytes, np.uint8)).tobytes() for b in buffers[:n]]
        handle = real_launch(dev, program, buffers)
        handle.wait()
        key = (ast, ins)
        rec = _records.setdefault(key, {})
        _generation[key] = _test[0]
        rec[backend] = [b.copyout(np.empty(b.nbytes, np.uint8)).tobytes() for b in buffers[:n]]
        if other is not None:
            if other in rec:
                _compare(program.name, outs, rec[other], rec[backend], (other, backend))
            elif defer:
                mine.append(_Deferred(dev, ast, key, program.name, backend, other, inputs, before))
            else:
                rec[other] = _run_other(dev, ast, backends.get(other), buffers, n, before, real_compile,
                                        real_launch)
                _compare(program.name, outs, rec[other], rec[backend], (other, backend))
        return handle

    realize.compile_ast, device.DeviceAdapter.launch = compile_ast, launch
    try:
        yield
    finally:
        realize.compile_ast, device.DeviceAdapter.launch = real_compile, real_launch
        _deferred.extend(mine)
        _resolve(carried)  # (also when the block raised: the previous test's launches are checked in any case)
    if other is not None and unchecked:
        raise AssertionError(f"launches not checked against {other}: {unchecked}")


@contextlib.contextmanager
def paused():
    """Launch without checking inside the block: for a test's exact repeat of launches already checked (a
    determinism rerun whose outputs the test asserts bit-identical to the checked run's)."""
    _paused[0] += 1
    try:
        yield
    finally:
        _paused[0] -= 1


def flush() -> None:
    """Check the launches still deferred (their next test did not run: the end of a run)."""
    pending = _deferred[:]
    _deferred.clear()
    _resolve(pending)


def _resolve(pending: list[_Deferred]) -> None:
    """Compare deferred launches with the other backend's run: the next test's launch of the same kernel on the
    same inputs, or, where it made none, a run of the other backend's kernel on the recorded bytes."""
    if not pending:
        return
    from compiler import backend as backends
    from compiler import realize
    for d in pending:
        rec = _records.setdefault(d.key, {})
        if d.other not in rec:  # (a launch of it by the next test was compared as it happened)
            rec[d.other] = _run_on_bytes(d.dev, d.ast, backends.get(d.other), d.ins, d.before, realize.compile_ast)
            _compare(d.name, _out_dtypes(d.ast), rec[d.other], rec[d.backend], (d.other, d.backend))


def _run_on_bytes(dev, ast, be, ins: list[bytes], before: list[bytes], compile_ast) -> list[bytes]:
    """Outputs of the kernel compiled by backend `be`, run on fresh buffers holding `before` and `ins`."""
    prog = compile_ast(ast, be)
    temps = [dev.alloc(len(data)) for data in (*before, *ins)]
    try:
        for t, data in zip(temps, (*before, *ins), strict=True):
            t.copyin(np.frombuffer(data, np.uint8))
        dev.launch(prog, temps).wait()
        return [t.copyout(np.empty(t.nbytes, np.uint8)).tobytes() for t in temps[:len(before)]]
    finally:
        for t in temps:
            t.release()


def _run_other(dev, ast, be, buffers, n: int, before: list[bytes], real_compile, real_launch) -> list[bytes]:
    """Outputs of the kernel compiled by backend `be`, run on fresh output buffers holding `before`."""
    prog = real_compile(ast, be)
    temps = [dev.alloc(b.nbytes) for b in buffers[:n]]
    try:
        for t, data in zip(temps, before, strict=True):
            t.copyin(np.frombuffer(data, np.uint8))
        real_launch(dev, prog, [*temps, *buffers[n:]]).wait()
        return [t.copyout(np.empty(t.nbytes, np.uint8)).tobytes() for t in temps]
    finally:
        for t in temps:
            t.release()
