"""The seam between the runtime and the kernel driver: one `OS` object (docs/design.md "The OS seam").

The runtime never calls os.open, fcntl.ioctl or mmap itself; it asks an `OS`. `HostOS` is the real
thing (/dev/kfd, the DRM render nodes, sysfs); `mockgpu.MockOS` emulates the driver over simulated GPUs.

`select_os()` gives the process's OS. The runtime does not know the simulator or the trace recorder: it
asks the selector installed under the `simgpu.os` entry point (the wiring layer's, which picks MockOS
under MOCKGPU=1 and wraps it for SIMGPU_TRACE). Without one installed it can only offer HostOS, and
MOCKGPU=1 is then an error, never a silent fallback.
"""

from __future__ import annotations

import ctypes
import errno
import importlib.metadata
import os
from dataclasses import dataclass, field

from simgpu import settings

PROT_NONE, PROT_READ, PROT_WRITE, PROT_EXEC = 0, 1, 2, 4
MAP_SHARED, MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS, MAP_NORESERVE = 0x01, 0x02, 0x10, 0x20, 0x4000
KFD_PATH = "/dev/kfd"
TOPOLOGY = "/sys/devices/virtual/kfd/kfd/topology"
_MMIO_FMT = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}


@dataclass
class Mapping:
    """A mapped range: its (CPU) virtual address and a writable memoryview of its bytes."""

    addr: int
    view: memoryview
    length: int
    fd: int = -1
    offset: int = 0
    handle: object = field(default=None, repr=False)  # what keeps the mapping alive (mmap object, buffer)


@dataclass
class DeviceReport:
    """The driver's own account of a device, for fault and timeout messages (OS.device_report). The
    kernel's exception events say what happened and where; a simulator can say much more."""

    text: str = ""  # human-readable: every queue's state; for a queue in error its packet or wave, PC,
    #                 instruction and registers. Empty when the driver has nothing to add (HostOS).
    fault: str = ""  # the kind of fault that stopped the first queue in error ("trap", "watchdog", ...), or ""
    summary: str = ""  # one line: why the first queue in error stopped (the limit, the finding, the packet), else
    #                    what the first blocked queue waits for (the packet, and the memory and value), or ""


class OS:
    """The driver interface the runtime uses; every method may raise OSError(errno)."""

    def open(self, path: str, flags: int = os.O_RDWR) -> int:
        """Open a device node; returns an fd."""
        raise NotImplementedError

    def close(self, fd: int) -> None:
        """Close an fd."""
        raise NotImplementedError

    def ioctl(self, fd: int, request: int, buf: bytearray) -> int:
        """Issue an ioctl; `buf` is read and updated in place; OSError(errno) on failure."""
        raise NotImplementedError

    def mmap(self, fd: int, length: int, prot: int, flags: int, offset: int = 0, addr: int | None = None) -> Mapping:
        """Map `length` bytes of fd at `offset` (fd -1 with MAP_ANONYMOUS: host memory)."""
        raise NotImplementedError

    def munmap(self, mapping: Mapping) -> None:
        """Unmap a mapping."""
        raise NotImplementedError

    def read_text(self, path: str) -> str:
        """The contents of a (sysfs) text file."""
        raise NotImplementedError

    def listdir(self, path: str) -> list[str]:
        """Entries of a (sysfs) directory."""
        raise NotImplementedError

    def exists(self, path: str) -> bool:
        """Whether a path exists."""
        raise NotImplementedError

    def pread(self, fd: int, length: int, offset: int) -> bytes:
        """Read up to `length` bytes of an opened file at `offset` (a PCI function's config space, a firmware file)."""
        raise NotImplementedError

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        """Write bytes to an opened file at `offset` (PCI config space, sysfs `enable`); how many were taken."""
        raise NotImplementedError

    def mmio_write(self, mapping: Mapping, offset: int, value: int, size: int = 4) -> None:
        """A store to MMIO (doorbells, registers): never a plain memoryview store, so a mock or a recorder sees it."""
        raise NotImplementedError

    def mmio_read(self, mapping: Mapping, offset: int, size: int = 4) -> int:
        """A load from MMIO (a register of a mapped PCI BAR): one access of `size` bytes, which a device may answer
        with a side effect, so never a plain memoryview read either."""
        raise NotImplementedError

    def device_report(self, gpu_id: int) -> DeviceReport:
        """What the driver can tell about GPU `gpu_id` beyond the exception events (the runtime asks after a
        fault or a timeout); not the kernel's interface. An empty report by default."""
        return DeviceReport()

    def annotate(self, note: dict) -> None:
        """A note from the runtime for tools that read a recording (what it loaded where, so that a trace can
        name kernels; what each buffer is and how many bytes of it were asked for; how long the caller will wait
        for the work of its next doorbell); not the kernel's interface: drivers ignore it (the simulator uses it:
        sanitizers, kernel names in fault reports, bounding work it runs at a doorbell), traces.RecordingOS
        records it."""

    def gpu_clocks(self) -> dict[int, int] | None:
        """Each GPU's timestamp counter (100 MHz ticks of the simulator's virtual clock) by gpu_id, for recordings to
        place events in GPU time; not the kernel's interface. None without a virtual clock (real GPUs)."""
        return None

    def doorbell_stores(self) -> list[list] | None:
        """The doorbells the driver acted on straight from a doorbell page since the previous ask (a client's plain
        store into a shared page, seen by a later call: `progress`, a WAIT_EVENTS), as [gpu_id, slot, value] in the
        order acted on; the first ask starts keeping them. For recordings (traces.record); not the kernel's
        interface. None: no such stores (a real GPU's doorbell store is the doorbell write itself)."""
        return None

    def observe_reads(self, callback) -> bool:
        """From now on (None: no longer) call callback(gpu_id, kind, va, data, host) at every read where a GPU observes
        what a producer published -- a wptr poll, an AQL packet, a barrier's signal, a WAIT_REG_MEM, POLL_REGMEM or
        atomic loop's memory, a doorbell scan (`kind`) -- with the bytes it read and the host memory behind them (a
        numpy view, None when none); the GPU goes on with the bytes the callback returns. For recordings and replays
        (traces.reads); not the kernel's interface. False: the driver has no such reads (a real GPU)."""
        return False

    def sanitize(self, gpu_id: int, checks: str | None = None) -> dict:
        """The simulator's sanitizers on GPU `gpu_id` (docs/shader.md "Sanitizers"); not the kernel's interface.
        `checks` ("memcheck,initcheck,racecheck,hazards" or "all") turns them on; returns {"checks": [names on],
        "findings": [the findings not taken before, as dicts]}. A real GPU has none: asking to turn them on is
        OSError(EOPNOTSUPP), asking what is on answers nothing."""
        if checks:
            raise OSError(errno.EOPNOTSUPP, "sanitizers need the simulated GPU (MOCKGPU=1)")
        return {"checks": [], "findings": []}


class HostOS(OS):
    """The real kernel: /dev/kfd, /dev/dri/renderD*, sysfs."""

    def open(self, path: str, flags: int = os.O_RDWR) -> int:
        return os.open(path, flags | os.O_CLOEXEC)

    def close(self, fd: int) -> None:
        os.close(fd)

    def ioctl(self, fd: int, request: int, buf: bytearray) -> int:
        import fcntl
        return fcntl.ioctl(fd, request, buf, True)

    def mmap(self, fd: int, length: int, prot: int, flags: int, offset: int = 0, addr: int | None = None) -> Mapping:
        # libc's mmap (Python's mmap module cannot place a mapping): the address hint and MAP_FIXED are honoured, so
        # the runtime can map a buffer at its GPU VA (CPU address = GPU address).
        base = libc_mmap(addr, length, prot, flags, fd, offset)
        if prot == PROT_NONE:  # a reservation: nothing to look at
            return Mapping(base, memoryview(b""), length, fd, offset, None)
        chars = (ctypes.c_char * length).from_address(base)
        return Mapping(base, memoryview(chars).cast("B"), length, fd, offset, chars)

    def munmap(self, mapping: Mapping) -> None:
        mapping.view.release()
        libc_munmap(mapping.addr, mapping.length)

    def read_text(self, path: str) -> str:
        with open(path) as f:
            return f.read()

    def listdir(self, path: str) -> list[str]:
        return os.listdir(path)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def pread(self, fd: int, length: int, offset: int) -> bytes:
        return os.pread(fd, length, offset)

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        return os.pwrite(fd, data, offset)

    def mmio_write(self, mapping: Mapping, offset: int, value: int, size: int = 4) -> None:
        # One aligned store of `size` bytes (struct.pack_into would store byte by byte, which a device sees as
        # four partial register writes).
        check_mmio(mapping, offset, size)
        mapping.view.cast(_MMIO_FMT[size][1])[offset // size] = value & ((1 << 8 * size) - 1)

    def mmio_read(self, mapping: Mapping, offset: int, size: int = 4) -> int:
        check_mmio(mapping, offset, size)
        return mapping.view.cast(_MMIO_FMT[size][1])[offset // size]

    def device_report(self, gpu_id: int) -> DeviceReport:
        return DeviceReport()  # amdgpu's own account (the kernel log) is not part of its interface


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)


def libc_mmap(addr: int | None, length: int, prot: int, flags: int, fd: int, offset: int) -> int:
    """mmap(2) through libc (ctypes): the mapping's address, or OSError with the kernel's errno."""
    got = _libc.mmap(addr or None, length, prot, flags, fd, offset)
    if got is None or got == ctypes.c_void_p(-1).value:
        err = ctypes.get_errno()
        raise OSError(err, f"mmap of {length:#x} bytes (fd {fd}, offset {offset:#x}): {os.strerror(err)}")
    return got


def libc_munmap(addr: int, length: int) -> None:
    """munmap(2) through libc."""
    if _libc.munmap(addr, length):
        err = ctypes.get_errno()
        raise OSError(err, f"munmap of {length:#x} bytes at {addr:#x}: {os.strerror(err)}")


def check_mmio(mapping: Mapping, offset: int, size: int) -> None:
    """Validate an MMIO access (size, alignment and bounds)."""
    if size not in _MMIO_FMT or offset < 0 or offset + size > mapping.length or offset % size:
        raise OSError(errno.EINVAL, f"bad MMIO access of {size} bytes at offset {offset:#x}")


OS_SELECTOR_GROUP = "simgpu.os"  # entry point group of the OS selector (pyproject.toml: wiring.os_select)
_default: OS | None = None


def select_os() -> OS:
    """The process's OS (chosen once): what the installed `simgpu.os` selector returns, else host_os()."""
    global _default
    if _default is None:
        _default = _selector()()
    return _default


def _selector():
    eps = sorted(importlib.metadata.entry_points(group=OS_SELECTOR_GROUP), key=lambda ep: ep.name)
    if eps:
        return eps[0].load()
    if mockgpu_requested():
        raise RuntimeError("MOCKGPU=1 asks for the simulated GPU, but no OS selector is installed (entry point "
                           f"group {OS_SELECTOR_GROUP!r}; install simgpu with `pip install -e .`)")
    return host_os


def mockgpu_requested() -> bool:
    """Whether MOCKGPU asks for the simulated GPU (set and not 0)."""
    return settings.get("MOCKGPU")


def host_os() -> HostOS:
    """HostOS when the amdkfd driver is there, else a RuntimeError that says to set MOCKGPU=1."""
    if not os.path.exists(KFD_PATH):
        raise RuntimeError(f"no AMD GPU driver: {KFD_PATH} does not exist. Set MOCKGPU=1 to run on the simulated "
                           "gfx1100 (simgpu) instead.")
    return HostOS()
