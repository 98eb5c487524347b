"""Running a schedule: allocate each output, copy host data in, compile (through the cache) and launch."""

from __future__ import annotations

import sys

import numpy as np

from compiler import device as devices
from compiler.dtypes import to_bf16_bits
from compiler.kernel import compile_ast
from compiler.lazy import mark_realized
from compiler.schedule import ScheduleItem


def host_bytes(array: np.ndarray, dtype) -> np.ndarray:
    """A host array as the bytes a buffer of dtype holds (bfloat16 as rounded bit patterns, bool as bytes)."""
    if dtype.name == "bfloat16":
        return to_bf16_bits(np.asarray(array, np.float32))
    return np.ascontiguousarray(array, dtype.storage)


def run_schedule(items: list[ScheduleItem]) -> None:
    """Realize every item in order (sources come first in a schedule)."""
    progress = _progress(len([i for i in items if i.kind == "kernel"]))
    for item in items:
        out = item.out
        dev = devices.get(out.device)
        nbytes = out.st.size() * out.dtype.itemsize
        if item.kind == "copy":
            src = item.inputs[0]
            buf = dev.alloc(nbytes)
            dev.transfer(buf, src.buffer, nbytes)
        elif item.kind == "copyin":
            buf = dev.alloc(nbytes)
            buf.copyin(host_bytes(out.arg, out.dtype))
        elif item.kind == "empty":
            buf = dev.alloc(nbytes)
        else:
            prog = compile_ast(item.ast, dev.backend)
            buf = dev.alloc(nbytes)
            dev.launch(prog, [buf, *(i.buffer for i in item.inputs)])
            if progress:
                progress.update(1)
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
