"""Devices the compiler runs programs on. `device="AMD"` (or "AMD:1") is a runtime.Device: the simulated
gfx1100 under MOCKGPU=1, a real GPU otherwise. `device="CPU"` is a runtime.cpu.CPUDevice: x86-64 kernels from
the x86 backend, run under unicorn in a sandbox. A device kind registers a class with `register_kind`; each
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
from simgpu.isa.codeobject import CodeObjectError

DEFAULT = "AMD"
POOL_BYTES = 256 << 20  # freed GPU memory an AMD device keeps for reuse
_KINDS: dict[str, type[Device]] = {}
_OPEN: dict[str, Device] = {}
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

    def __init__(self, device: Device, nbytes: int, handle: Any):
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


class Device:
    """What the compiler needs of a device: memory, copies, loading and launching programs."""

    kind = "?"

    def __init__(self, name: str):
        self.name = name

    @property
    def backend(self) -> backends.Backend:
        """The backend compiling for this device now (compiler.backend.for_device)."""
        return backends.for_device(self.kind)

    def alloc(self, nbytes: int) -> DeviceBuffer:
        """Memory of at least nbytes."""
        raise NotImplementedError

    def free(self, buf: DeviceBuffer) -> None:
        """Release memory."""
        raise NotImplementedError

    def copyin(self, buf: DeviceBuffer, data: np.ndarray) -> None:
        """Host array -> buffer."""
        raise NotImplementedError

    def copyout(self, buf: DeviceBuffer, out: np.ndarray) -> np.ndarray:
        """Buffer -> host array."""
        raise NotImplementedError

    def transfer(self, dst: DeviceBuffer, src: DeviceBuffer, nbytes: int) -> None:
        """Copy between buffers (src may be on another device of this kind)."""
        raise NotImplementedError

    def launch(self, program, buffers: list[DeviceBuffer]):
        """Run a compiled program over buffers (output first); returns a handle with .wait() -> seconds."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait for everything launched."""

    def load(self, program) -> bool:
        """Whether the device loads `program`'s binary (once per program key): False when its loader refuses it
        as no program of this device (compiler.realize then compiles the kernel afresh)."""
        raise NotImplementedError

    def graph(self, launches: list[tuple[Any, list[DeviceBuffer]]]) -> Graph:
        """The launches (program, buffers), recorded as one graph of the runtime to run again (compiler.jit)."""
        raise NotImplementedError


class Graph:
    """Launches of one device recorded once (a runtime graph): `run(swap)` runs them all again with each recorded
    DeviceBuffer b replaced by swap[b] (those absent keep the buffer they last had)."""

    def __init__(self, device: Device, rt_graph, recorded: list[DeviceBuffer]):
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


class AMDDevice(Device):
    """A runtime.Device (module docstring)."""

    kind = "AMD"

    def __init__(self, name: str, rt=None):
        super().__init__(name)
        import runtime
        self.rt = rt if rt is not None else runtime.Device(name)  # rt: a runtime.Device opened by the caller
        self._modules: dict[str, Any] = {}
        self._pool: dict[int, list] = {}  # freed runtime buffers by byte size, reused by alloc()
        self._pooled = 0

    def alloc(self, nbytes: int) -> DeviceBuffer:
        release_unreferenced()
        size = max(nbytes, 4)
        pooled = self._pool.get(size)
        if pooled:
            self._pooled -= size
            return DeviceBuffer(self, nbytes, pooled.pop())
        try:
            return DeviceBuffer(self, nbytes, self.rt.alloc(size))
        except MemoryError:
            if not self._pooled:
                raise
            self.drain()  # the pool's memory goes back to the device first
            return DeviceBuffer(self, nbytes, self.rt.alloc(size))

    def drain(self) -> None:
        """Give every pooled buffer back to the device."""
        for bufs in self._pool.values():
            while bufs:
                bufs.pop().release()
        self._pooled = 0

    def free(self, buf: DeviceBuffer) -> None:
        if not self.rt.usable or self.rt.closed:
            return  # a closed or lost runtime.Device has released its buffers already
        size = buf.handle.nbytes
        if self.rt.sanitizers or size > POOL_BYTES // 4:  # a sanitizer must see the memory freed and fresh
            buf.handle.release()
            return
        # Kept for the next allocation of this size: a training step frees and allocates the same sizes every
        # step, and a free waits for the GPU to go idle and unmaps (each allocation changes the page tables).
        self._pool.setdefault(size, []).append(buf.handle)
        self._pooled += size
        while self._pooled > POOL_BYTES:
            largest = max((k for k, v in self._pool.items() if v))
            self._pool[largest].pop(0).release()
            self._pooled -= largest

    def copyin(self, buf: DeviceBuffer, data: np.ndarray) -> None:
        if data.nbytes:
            buf.handle.copyin(np.ascontiguousarray(data))

    def copyout(self, buf: DeviceBuffer, out: np.ndarray) -> np.ndarray:
        if out.nbytes:
            buf.handle.copyout(out.reshape(-1).view(np.uint8))
        return out

    def transfer(self, dst: DeviceBuffer, src: DeviceBuffer, nbytes: int) -> None:
        if nbytes:
            src.handle.copy_to(dst.handle, nbytes)

    def kernel(self, program):
        """The runtime kernel of a program (each binary loaded once)."""
        if program.key not in self._modules:
            self._modules[program.key] = self.rt.load(program.binary)[program.name]
        return self._modules[program.key]

    def load(self, program) -> bool:
        try:
            self.kernel(program)
        except (CodeObjectError, KeyError):  # not a code object for this GPU, or without the kernel
            return False
        return True

    def launch(self, program, buffers: list[DeviceBuffer]):
        release_unreferenced()
        g = program.geometry
        launch = self.kernel(program)(*[b.handle for b in buffers], grid=g.grid, block=g.block, wait=False)
        if debug() >= 1:
            t = launch.wait()
            threads = tuple(a * b for a, b in zip(g.grid, g.block, strict=True))
            print(f"{self.name} launch {program.name:<28} global={threads} local={g.block} {t * 1e6:10.2f} us"
                  f"{_resources(self.kernel(program), g.block)}", file=sys.stderr)
        return launch

    def synchronize(self) -> None:
        release_unreferenced()
        self.rt.synchronize()

    def graph(self, launches: list[tuple[Any, list[DeviceBuffer]]]) -> Graph:
        dispatches = [Dispatch(self.kernel(p), tuple(b.handle for b in bufs), p.geometry.grid, p.geometry.block)
                      for p, bufs in launches]
        return Graph(self, KernelGraph(self.rt, dispatches), [b for _, bufs in launches for b in bufs])


def _resources(kernel, block: tuple[int, int, int]) -> str:
    """'  N VGPRs, L bytes LDS, occupancy W waves/SIMD' of a loaded gfx11 kernel (either backend's), from its
    descriptor and metadata."""
    from compiler.backend.gfx11.emit import occupancy
    kd = kernel.descriptor
    vgprs = kernel.metadata.get(".vgpr_count", kd.vgpr_count)
    lds = kd.group_segment_fixed_size
    waves = -(-block[0] * block[1] * block[2] // kd.wavefront_size)
    return f"  {vgprs:3d} VGPRs, {lds:5d} bytes LDS, occupancy {occupancy(vgprs, lds, waves):2d} waves/SIMD"


class _Finished:
    """A launch that already ran (the CPU device runs synchronously): wait() gives its seconds."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def wait(self) -> float:
        return self.seconds


class CPUDevice(Device):
    """The CPU device: x86-64 kernels (compiler.backend.x86) run under unicorn by runtime.cpu.CPUDevice."""

    kind = "CPU"

    def __init__(self, name: str, rt=None):
        super().__init__(name)
        from runtime.cpu import CPUDevice as Sandbox
        self.rt = rt if rt is not None else Sandbox(name)
        self._programs: dict[str, Any] = {}

    def alloc(self, nbytes: int) -> DeviceBuffer:
        release_unreferenced()
        return DeviceBuffer(self, nbytes, self.rt.alloc(nbytes))

    def free(self, buf: DeviceBuffer) -> None:
        buf.handle.free()

    def copyin(self, buf: DeviceBuffer, data: np.ndarray) -> None:
        if data.nbytes:
            buf.handle.copyin(data)

    def copyout(self, buf: DeviceBuffer, out: np.ndarray) -> np.ndarray:
        return buf.handle.copyout(out) if out.nbytes else out

    def transfer(self, dst: DeviceBuffer, src: DeviceBuffer, nbytes: int) -> None:
        if nbytes:
            src.handle.copy_to(dst.handle, nbytes)

    def _loaded(self, program):
        """The sandbox's program of a compiled one (each binary loaded once)."""
        if program.key not in self._programs:
            self._programs[program.key] = self.rt.load(program.binary)
        return self._programs[program.key]

    def load(self, program) -> bool:
        try:
            loaded = self._loaded(program)
        except ValueError:  # runtime.cpu.ImageError (not imported up front: runtime.cpu loads unicorn)
            return False
        if loaded.image.name != program.name:  # another kernel's
            del self._programs[program.key]
            return False
        return True

    def launch(self, program, buffers: list[DeviceBuffer]):
        release_unreferenced()
        stats = self.rt.launch(self._loaded(program), [b.handle for b in buffers])
        if debug() >= 1:
            g = program.geometry
            threads = tuple(a * b for a, b in zip(g.grid, g.block, strict=True))
            print(f"{self.name} launch {program.name:<28} global={threads} local={g.block} "
                  f"{stats.seconds * 1e6:10.2f} us (unicorn, {stats.charged} loop instructions)", file=sys.stderr)
        return _Finished(stats.seconds)

    def graph(self, launches: list[tuple[Any, list[DeviceBuffer]]]) -> Graph:
        from runtime.cpu import CPUGraph  # (not imported up front: runtime.cpu loads unicorn)
        rt = CPUGraph(self.rt, [(self._loaded(p), [b.handle for b in bufs]) for p, bufs in launches])
        return Graph(self, rt, [b for _, bufs in launches for b in bufs])


def register_kind(kind: str, cls: type[Device]) -> None:
    """Make `Tensor(..., device="KIND[:n]")` open devices of class cls."""
    _KINDS[kind.upper()] = cls


register_kind("AMD", AMDDevice)
register_kind("CPU", CPUDevice)


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


def get(name: str) -> Device:
    """The open device called name (opened on first use)."""
    name = canonical(name)
    if name not in _OPEN:
        _OPEN[name] = _KINDS[name.partition(":")[0]](name)
    return _OPEN[name]


def attach(name: str, device: Device) -> None:
    """Use an already-open device under name (tests give the compiler a runtime.Device of their own)."""
    _OPEN[canonical(name)] = device
