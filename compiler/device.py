"""Devices the compiler runs programs on. `device="AMD"` (or "AMD:1") is a runtime.Device: the simulated
gfx1100 under MOCKGPU=1, a real GPU otherwise. `device="CPU"` is a runtime.cpu.CPUDevice: x86-64 kernels from
the x86 backend, run under unicorn in a sandbox. The compiler sees either as a DeviceAdapter (buffers, copies, the
load cache, launches and their debug lines, graphs: one code for every kind), composed with its kind's runtime
side (AMDRuntime, CPURuntime: the few calls that differ), which a kind registers with `register_kind`; each
kind has the backends that compile for it (compiler.backend). The compiler reaches hardware only here, and
only through runtime's public API.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from compiler import backend as backends
from compiler.helpers import debug
from runtime.graph import Dispatch, KernelGraph
from runtime.limits import occupancy
from simgpu.isa.codeobject import CodeObjectError

DEFAULT = "AMD"
POOL_BYTES = 256 << 20  # freed GPU memory an AMD device keeps for reuse
_KINDS: dict[str, type] = {}  # kind -> its runtime side (AMDRuntime, CPURuntime)
_OPEN: dict[str, DeviceAdapter] = {}
_UNREFERENCED: list[DeviceBuffer] = []  # buffers whose tensors are gone, freed at the next safe point


def release_later(buf: DeviceBuffer) -> None:
    """Free a buffer whose tensor was garbage collected, at the next device operation rather than now: the
    collector may run inside any allocation, in the middle of a queue submission, where freeing (which waits
    for the queues) must not happen."""
    _UNREFERENCED.append(buf)


def release_unreferenced() -> None:
    """Free the buffers release_later collected (called before each device operation)."""
    while _UNREFERENCED:
        _UNREFERENCED.pop().release()


class DeviceBuffer:
    """Device memory behind a realized tensor."""

    def __init__(self, device: DeviceAdapter, nbytes: int, handle: Any):
        self.device, self.nbytes, self.handle = device, nbytes, handle
        self.released = False

    def copyin(self, data: np.ndarray) -> None:
        """Host bytes into the buffer."""
        self.device.copyin(self, data)

    def copyout(self, out: np.ndarray) -> np.ndarray:
        """The buffer's bytes into out (contiguous)."""
        return self.device.copyout(self, out)

    def release(self) -> None:
        """Free the memory (once)."""
        if not self.released:
            self.released = True
            self.device.free(self)


class DeviceAdapter:
    """What the compiler needs of a device: memory, copies, loading and launching programs, graphs. One class for
    every kind: what differs between kinds (the runtime's calls) is `runtime`, the kind's AMDRuntime or CPURuntime
    over the runtime device `rt` (opened here unless the caller gives one)."""

    def __init__(self, name: str, rt=None):
        self.name, self.kind = name, name.partition(":")[0].upper()
        kind = _KINDS[self.kind]
        self.rt = rt if rt is not None else kind.open(name)
        self.runtime = kind(self.rt)
        self._kernels: dict[str, Any] = {}  # program key -> what the runtime loaded

    @property
    def backend(self) -> backends.Backend:
        """The backend compiling for this device (its architecture: runtime side's `target`) now
        (compiler.backend.for_device)."""
        return backends.for_device(self.kind, self.runtime.target)

    def alloc(self, nbytes: int) -> DeviceBuffer:
        """Memory of at least nbytes."""
        release_unreferenced()
        return DeviceBuffer(self, nbytes, self.runtime.alloc(nbytes))

    def free(self, buf: DeviceBuffer) -> None:
        """Release memory."""
        self.runtime.free(buf.handle)

    def copyin(self, buf: DeviceBuffer, data: np.ndarray) -> None:
        """Host array -> buffer."""
        if data.nbytes:
            buf.handle.copyin(np.ascontiguousarray(data))

    def copyout(self, buf: DeviceBuffer, out: np.ndarray) -> np.ndarray:
        """Buffer -> host array (contiguous)."""
        if out.nbytes:
            buf.handle.copyout(out.reshape(-1).view(np.uint8))
        return out

    def transfer(self, dst: DeviceBuffer, src: DeviceBuffer, nbytes: int) -> None:
        """Copy between buffers: by the runtime's own copy when src is on a device of this kind, else through host
        memory (a CPU tensor moved to the GPU or back: the runtimes' buffers know nothing of each other)."""
        if not nbytes:
            return
        if src.device.kind == self.kind:
            src.handle.copy_to(dst.handle, nbytes)
        else:
            self.copyin(dst, src.copyout(np.empty(nbytes, np.uint8)))

    def kernel(self, program):
        """The runtime's kernel of a program (each binary loaded once)."""
        if program.key not in self._kernels:
            self._kernels[program.key] = self.runtime.load(program.binary, program.name)
        return self._kernels[program.key]

    def load(self, program) -> bool:
        """Whether the device loads `program`'s binary (once per program key): False when its loader refuses it
        as no program of this device (compiler.realize then compiles the kernel afresh)."""
        try:
            self.kernel(program)
        except self.runtime.REFUSED:
            return False
        return True

    def launch(self, program, buffers: list[DeviceBuffer]):
        """Run a compiled program over buffers (output first); returns a handle with .wait() -> seconds."""
        release_unreferenced()
        g = program.geometry
        kernel = self.kernel(program)
        launch = self.runtime.launch(kernel, [b.handle for b in buffers], g.grid, g.block)
        if debug() >= 1:
            t = launch.wait()
            threads = tuple(a * b for a, b in zip(g.grid, g.block, strict=True))
            print(f"{self.name} launch {program.name:<28} global={threads} local={g.block} {t * 1e6:10.2f} us"
                  f"{self.runtime.describe(kernel, launch, g.block)}", file=sys.stderr)
        return launch

    def synchronize(self) -> None:
        """Wait for everything launched."""
        release_unreferenced()
        self.runtime.synchronize()

    def graph(self, launches: list[tuple[Any, list[DeviceBuffer]]]) -> Graph:
        """The launches (program, buffers), recorded as one graph of the runtime to run again (compiler.jit)."""
        rt = self.runtime.graph([(self.kernel(p), tuple(b.handle for b in bufs), p.geometry) for p, bufs in launches])
        return Graph(self, rt, [b for _, bufs in launches for b in bufs])


class Graph:
    """Launches of one device recorded once (a runtime graph): `run(swap)` runs them all again with each recorded
    DeviceBuffer b replaced by swap[b] (those absent keep the buffer they last had)."""

    def __init__(self, device: DeviceAdapter, rt_graph, recorded: list[DeviceBuffer]):
        self.device, self.rt = device, rt_graph
        self._slot = {b: rt_graph.slot(b.handle) for b in recorded}

    def run(self, swap: dict[DeviceBuffer, DeviceBuffer]) -> None:
        """Submit every launch (not waiting for them: a copy-out or synchronize() does)."""
        release_unreferenced()
        self.rt.run({self._slot[old]: new.handle for old, new in swap.items() if old in self._slot})

    def release(self) -> None:
        """Free what the runtime graph holds (its kernarg and command buffers)."""
        rt = self.device.rt
        if getattr(rt, "usable", True) and not getattr(rt, "closed", False):  # a closed device freed them already
            self.rt.free()

    def __len__(self) -> int:
        return len(self.rt)


class AMDRuntime:
    """The AMD kind over a runtime.Device: its buffers pooled by size, kernels of loaded code objects."""

    REFUSED = (CodeObjectError, KeyError)  # not a code object for this GPU, or without the kernel

    @staticmethod
    def open(name: str):
        """The runtime.Device called name."""
        import runtime  # (start-up: the compiler imports no runtime until a device opens)
        return runtime.Device(name)

    def __init__(self, rt):
        self.rt = rt
        self.target = rt.arch  # the GPU's architecture: what its backend compiles for ("gfx1100", "gfx1201")
        self._pool: dict[int, list] = {}  # freed runtime buffers by byte size, reused by alloc()
        self._pooled = 0

    def alloc(self, nbytes: int):
        """A runtime buffer: a pooled one of this size, else a new one (the pool drained first when memory is out)."""
        size = max(nbytes, 4)
        pooled = self._pool.get(size)
        if pooled:
            self._pooled -= size
            return pooled.pop()
        try:
            return self.rt.alloc(size)
        except MemoryError:
            if not self._pooled:
                raise
            self.drain()  # the pool's memory goes back to the device first
            return self.rt.alloc(size)

    def drain(self) -> None:
        """Give every pooled buffer back to the device."""
        for bufs in self._pool.values():
            while bufs:
                bufs.pop().release()
        self._pooled = 0

    def free(self, handle) -> None:
        """Pool the buffer for the next allocation of its size (or free it)."""
        if not self.rt.usable or self.rt.closed:
            return  # a closed or lost runtime.Device has released its buffers already
        size = handle.nbytes
        if self.rt.sanitizers or size > POOL_BYTES // 4:  # a sanitizer must see the memory freed and fresh
            handle.release()
            return
        # Kept for the next allocation of this size: a training step frees and allocates the same sizes every
        # step, and a free waits for the GPU to go idle and unmaps (each allocation changes the page tables).
        self._pool.setdefault(size, []).append(handle)
        self._pooled += size
        while self._pooled > POOL_BYTES:
            largest = max((k for k, v in self._pool.items() if v))
            self._pool[largest].pop(0).release()
            self._pooled -= largest

    def load(self, binary: bytes, name: str):
        """The kernel `name` of a code object, loaded."""
        return self.rt.load(binary)[name]

    def launch(self, kernel, handles: list, grid, block):
        """A runtime.Launch, not waited for."""
        return kernel(*handles, grid=grid, block=block, wait=False)

    def describe(self, kernel, launch, block: tuple[int, int, int]) -> str:
        """The debug line's tail: VGPRs, LDS and occupancy."""
        return _resources(kernel, block)

    def synchronize(self) -> None:
        """runtime.Device.synchronize."""
        self.rt.synchronize()

    def graph(self, launches: list):
        """A runtime.graph.KernelGraph of (kernel, buffers, geometry) launches."""
        return KernelGraph(self.rt, [Dispatch(k, bufs, g.grid, g.block) for k, bufs, g in launches])


def _resources(kernel, block: tuple[int, int, int]) -> str:
    """'  N VGPRs, L bytes LDS, occupancy W waves/SIMD' of a loaded gfx11 kernel (either backend's), from its
    descriptor and metadata."""
    kd = kernel.descriptor
    vgprs = kernel.metadata.get(".vgpr_count", kd.vgpr_count)
    lds = kd.group_segment_fixed_size
    waves = -(-block[0] * block[1] * block[2] // kd.wavefront_size)
    return f"  {vgprs:3d} VGPRs, {lds:5d} bytes LDS, occupancy {occupancy(vgprs, lds, waves):2d} waves/SIMD"


class _Finished:
    """A launch that already ran (the CPU device runs synchronously): wait() gives its seconds."""

    def __init__(self, stats):
        self.stats = stats

    def wait(self) -> float:
        return self.stats.seconds


class CPURuntime:
    """The CPU kind over a runtime.cpu.CPUDevice: x86-64 kernels (compiler.backend.x86) run under unicorn."""

    REFUSED = (ValueError, KeyError)  # runtime.cpu.ImageError is a ValueError; KeyError: another kernel's program

    @staticmethod
    def open(name: str):
        """The runtime.cpu.CPUDevice called name."""
        from runtime.cpu import CPUDevice  # (not imported up front: runtime.cpu loads unicorn)
        return CPUDevice(name)

    target = None  # (one kind of CPU: its backend's own target)

    def __init__(self, rt):
        self.rt = rt

    def alloc(self, nbytes: int):
        """A sandbox buffer (runtime.cpu pools freed memory itself)."""
        return self.rt.alloc(nbytes)

    def free(self, handle) -> None:
        """Give it back to the sandbox."""
        handle.free()

    def load(self, binary: bytes, name: str):
        """The program of a CPU code object (KeyError when it holds another kernel)."""
        program = self.rt.load(binary)
        if program.image.name != name:
            raise KeyError(f"no kernel {name!r}; the code object holds {program.image.name!r}")
        return program

    def launch(self, program, handles: list, grid, block) -> _Finished:
        """Run it now (the kernel walks its grid itself)."""
        return _Finished(self.rt.launch(program, handles))

    def describe(self, program, launch: _Finished, block) -> str:
        """The debug line's tail: the loop instructions charged."""
        return f" (unicorn, {launch.stats.charged} loop instructions)"

    def synchronize(self) -> None:
        """Nothing: every launch ran to its end."""

    def graph(self, launches: list):
        """A runtime.cpu.CPUGraph of (program, buffers, geometry) launches."""
        from runtime.cpu import CPUGraph  # (not imported up front: runtime.cpu loads unicorn)
        return CPUGraph(self.rt, [(p, list(bufs)) for p, bufs, _ in launches])


def register_kind(kind: str, cls: type) -> None:
    """Make `Tensor(..., device="KIND[:n]")` open DeviceAdapters whose runtime side is cls (AMDRuntime's methods)."""
    _KINDS[kind.upper()] = cls


register_kind("AMD", AMDRuntime)
register_kind("CPU", CPURuntime)


def canonical(name: str | None) -> str:
    """'amd' -> 'AMD:0'; ValueError for an unknown kind or a bad index."""
    name = DEFAULT if name is None else str(name)
    kind, _, idx = name.partition(":")
    kind = kind.upper()
    if kind not in _KINDS:
        raise ValueError(f"unknown device {name!r} (kinds: {', '.join(sorted(_KINDS))})")
    if idx and not idx.isdigit():
        raise ValueError(f"bad device index in {name!r}")
    return f"{kind}:{int(idx or 0)}"


def get(name: str) -> DeviceAdapter:
    """The open device called name (opened on first use)."""
    name = canonical(name)
    if name not in _OPEN:
        _OPEN[name] = DeviceAdapter(name)
    return _OPEN[name]


def attach(name: str, device: DeviceAdapter) -> None:
    """Use an already-open device under name (tests give the compiler a runtime.Device of their own)."""
    _OPEN[canonical(name)] = device
