"""Realizing lazy buffers: schedule what they need (compiler.schedule), then run the schedule: allocate each output,
copy host data in, compile (through the cache) and launch; each realized base then holds its device buffer."""

from __future__ import annotations

import contextlib
import sys
import weakref
from dataclasses import dataclass

import numpy as np

from compiler import device as devices
from compiler.dtypes import to_bf16_bits
from compiler.ir.ops import Ops
from compiler.kernel import Program, compile_ast
from compiler.lazy import LazyBuffer
from compiler.schedule import ScheduleItem, schedule


def realize(*bufs: LazyBuffer) -> None:
    """Run everything the given lazy buffers need, so their bases hold device buffers."""
    todo = [b.base for b in bufs if not b.realized and b.base.op is not Ops.CONST]
    if todo:
        run_schedule(schedule(todo))


def mark_realized(base: LazyBuffer, buffer: devices.DeviceBuffer) -> None:
    """Turn a base into a realized buffer: drop its sources so the graph behind it can be freed."""
    base.op, base.srcs, base.arg, base.buffer = Ops.BUFFER, (), None, buffer
    weakref.finalize(base, devices.release_later, buffer).atexit = False


def host_bytes(array: np.ndarray, dtype) -> np.ndarray:
    """A host array as the bytes a buffer of dtype holds (bfloat16 as rounded bit patterns, bool as bytes)."""
    if dtype.name == "bfloat16":
        return to_bf16_bits(np.asarray(array, np.float32))
    return np.ascontiguousarray(array, dtype.storage)


# kernel AST -> the backends found to support every dtype in it (ASTs are hash-consed: a training loop's kernels
# are the same objects step after step, and walking each one again cost a millisecond a step)
_SUPPORTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_dtypes(items: list[ScheduleItem]) -> None:
    """TypeError before anything runs when a kernel uses a dtype its device's backend does not compile."""
    for item in items:
        if item.kind != "kernel":
            continue
        be = devices.get(item.out.device).backend
        ok = _SUPPORTED.setdefault(item.ast, [])
        if any(b is be for b in ok):
            continue
        for u in item.ast.toposort():
            dt = getattr(u.dtype, "base", u.dtype)
            if not be.supports(dt):
                raise TypeError(f"the {be.name} backend ({be.target}) does not support {dt.name} "
                                f"(needed by a kernel writing {item.out.shape} {item.out.dtype.name})")
        ok.append(be)


@dataclass
class Step:
    """What run_schedule did for one item, for a recording (compiler.jit): the kind ('kernel', 'copy', 'copyin',
    'empty'), the device, the program of a kernel, its buffers (outputs, then inputs) and the item."""

    kind: str
    device: devices.DeviceAdapter
    program: Program | None
    buffers: list[devices.DeviceBuffer]
    item: ScheduleItem


_RECORDINGS: list[list[Step]] = []


@contextlib.contextmanager
def recording():
    """Collect the Step of every item realized inside the block (in order) into the list it yields."""
    steps: list[Step] = []
    _RECORDINGS.append(steps)
    try:
        yield steps
    finally:
        _RECORDINGS.remove(steps)


def run_schedule(items: list[ScheduleItem]) -> None:
    """Realize every item in order (sources come first in a schedule)."""
    check_dtypes(items)
    progress = _progress(len([i for i in items if i.kind == "kernel"]))
    for item in items:
        dev = devices.get(item.out.device)
        bufs = [dev.alloc(o.st.size() * o.dtype.itemsize) for o in item.outs]
        prog = None
        if item.kind == "copy":
            dev.transfer(bufs[0], item.inputs[0].buffer, bufs[0].nbytes)
        elif item.kind == "copyin":
            bufs[0].copyin(host_bytes(item.out.arg, item.out.dtype))
        elif item.kind == "kernel":
            prog = compile_ast(item.ast, dev.backend)
            if not dev.load(prog):  # a cached binary its device refuses (compiler.cache): compiled afresh
                prog = compile_ast(item.ast, dev.backend, cached=False)
            dev.launch(prog, [*bufs, *(i.buffer for i in item.inputs)])
            if progress:
                progress.update(1)
        for steps in _RECORDINGS:
            steps.append(Step(item.kind, dev, prog, [*bufs, *(i.buffer for i in item.inputs)], item))
        for out, buf in zip(item.outs, bufs, strict=True):
            mark_realized(out, buf)
    if progress:
        progress.close()


def _progress(n: int):
    """A progress bar on a TTY for long schedules (tqdm), else None."""
    if n < 32 or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=n, desc="realize", unit="kernel", leave=False)
