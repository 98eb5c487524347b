"""The CPU device: x86-64 kernels (compiler.backend.x86) run under unicorn in a sandbox (runtime.cpu.abi).

One unicorn instance per device. Buffers are host memory mapped into the sandbox in place (no copies) with no
access; a launch opens its argument buffers (read/write), LDS and fiber stacks when it has them, closes whatever
an earlier launch left open that it does not take, and runs from the entry to the return address, so a kernel
reaches only its own memory. What a launch opened stays open until a launch that does not take it (no kernel runs
in between): a loop of launches over the same buffers changes no protection, and every mem_protect costs unicorn
time in proportion to the regions mapped. Code is mapped read/execute-only at its first launch and stays
(runtime.cpu.abi says why), many programs' code in one mapping. The kernel walks its index grid itself (the
driver loop is part of its code). Anything the sandbox refuses stops it with a CPUFault (runtime.cpu.fault) and
the device stays usable: the next launch starts from a clean register state.

Determinism: no threads, no clocks, the same registers and memory at every entry, MXCSR fixed; unicorn's
TCG computes SSE arithmetic in software (softfloat), so results are the same on every host.
"""

from __future__ import annotations

import hashlib
import mmap
import time
from dataclasses import dataclass

import numpy as np
from unicorn import (
    UC_ARCH_X86,
    UC_ERR_EXCEPTION,
    UC_ERR_FETCH_PROT,
    UC_ERR_FETCH_UNMAPPED,
    UC_ERR_INSN_INVALID,
    UC_ERR_READ_PROT,
    UC_ERR_READ_UNMAPPED,
    UC_ERR_WRITE_PROT,
    UC_ERR_WRITE_UNMAPPED,
    UC_HOOK_MEM_INVALID,
    UC_MEM_FETCH_PROT,
    UC_MEM_FETCH_UNMAPPED,
    UC_MEM_READ_PROT,
    UC_MEM_READ_UNMAPPED,
    UC_MEM_WRITE_PROT,
    UC_MEM_WRITE_UNMAPPED,
    UC_MODE_64,
    UC_PROT_EXEC,
    UC_PROT_NONE,
    UC_PROT_READ,
    UC_PROT_WRITE,
    Uc,
    UcError,
)
from unicorn import x86_const as ux

from runtime.cpu import abi
from runtime.cpu.fault import Access, CPUFault, disassemble_at, format_registers, read_registers
from runtime.cpu.image import Image, ImageError, read_image
from simgpu import settings

_ACCESS = {UC_MEM_READ_UNMAPPED: "read", UC_MEM_READ_PROT: "read", UC_MEM_WRITE_UNMAPPED: "write",
           UC_MEM_WRITE_PROT: "write", UC_MEM_FETCH_UNMAPPED: "fetch", UC_MEM_FETCH_PROT: "fetch"}
_KIND = {UC_ERR_READ_UNMAPPED: "page_fault", UC_ERR_WRITE_UNMAPPED: "page_fault", UC_ERR_READ_PROT: "page_fault",
         UC_ERR_WRITE_PROT: "page_fault", UC_ERR_FETCH_UNMAPPED: "no_execute", UC_ERR_FETCH_PROT: "no_execute",
         UC_ERR_INSN_INVALID: "illegal_instruction", UC_ERR_EXCEPTION: "exception"}
_RW = UC_PROT_READ | UC_PROT_WRITE
FREE_POOL_BYTES = 256 << 20  # freed buffer memory kept mapped for reuse


class CPUBuffer:
    """A buffer's memory: host pages mapped into the sandbox for the buffer's life, the bytes at their end (abi)."""

    def __init__(self, device: CPUDevice, nbytes: int, mapping: _Mapping):
        self.device, self.nbytes, self._mapping = device, nbytes, mapping
        self.offset = mapping.size - nbytes  # where the bytes start in the pages
        self.address = mapping.address + self.offset  # in the sandbox
        self.data = mapping.pages[self.offset:]
        self.freed = False

    def copyin(self, data: np.ndarray) -> None:
        """Host bytes into the buffer (at most its size)."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        self.data[:raw.size] = raw

    def copyout(self, out: np.ndarray) -> np.ndarray:
        """The buffer's bytes into out (contiguous)."""
        flat = out.reshape(-1).view(np.uint8)
        flat[:] = self.data[:flat.size]
        return out

    def copy_to(self, dst: CPUBuffer, nbytes: int) -> None:
        """nbytes of this buffer into dst."""
        dst.data[:nbytes] = self.data[:nbytes]

    def free(self) -> None:
        """Give the memory back to the device (once)."""
        if not self.freed:
            self.freed = True
            self.data = np.empty(0, np.uint8)
            self.device._release(self._mapping)


@dataclass
class _Mapping:
    """Host pages mapped at a sandbox address (no access until a launch opens them)."""

    address: int
    size: int
    pages: np.ndarray
    mm: mmap.mmap


@dataclass
class Program:
    """A loaded kernel: its image and the address its code runs at."""

    image: Image
    address: int
    mapped: bool = False

    @property
    def name(self) -> str:
        return self.image.name


@dataclass
class LaunchStats:
    """What a launch cost: loop instructions charged to the budget, and wall seconds in unicorn."""

    charged: int
    seconds: float


class CPUDevice:
    """A CPU device (module docstring). budget: instructions a launch may spend in loops (abi.DEFAULT_BUDGET);
    watchdog_s: a wall-clock limit per launch as a backstop for code the backend did not instrument (0: none;
    SIMGPU_CPU_WATCHDOG in seconds)."""

    def __init__(self, name: str = "CPU:0", budget: int | None = None, watchdog_s: float | None = None):
        self.name = name
        self.budget = budget if budget is not None else abi.DEFAULT_BUDGET
        self.watchdog_s = settings.get("SIMGPU_CPU_WATCHDOG") if watchdog_s is None else watchdog_s
        self.uc = uc = Uc(UC_ARCH_X86, UC_MODE_64)
        uc.mem_map(abi.KERNARG, abi.KERNARG_SIZE, _RW)
        uc.mem_map(abi.STACK_TOP - abi.STACK_SIZE, abi.STACK_SIZE, _RW)
        uc.reg_write(ux.UC_X86_REG_MXCSR, abi.MXCSR)
        uc.reg_write(ux.UC_X86_REG_RSP, abi.STACK_TOP - 8)
        self._clean = uc.context_save()
        self._access: Access | None = None
        uc.hook_add(UC_HOOK_MEM_INVALID, self._on_invalid)
        uc.mem_map(abi.LDS_BASE, abi.LDS_SIZE, UC_PROT_NONE)
        uc.mem_map(abi.FIBER_BASE, abi.FIBER_SIZE, UC_PROT_NONE)
        self._opened: set[tuple[int, int]] = set()  # buffer mappings (address, size) open (read/write) now
        self._extent = {abi.LDS_BASE: 0, abi.FIBER_BASE: 0}  # bytes open now at the start of LDS, fiber stacks
        self._programs: dict[bytes, Program] = {}
        self._code_chunks: set[int] = set()  # addresses of the code mappings (abi.CODE_CHUNK bytes each)
        self._heap = abi.HEAP_BASE
        self._free: dict[int, list[_Mapping]] = {}  # freed mappings by size, for reuse
        self._free_bytes = 0
        self.launches = 0

    def _on_invalid(self, uc, access, address, size, value, user_data) -> bool:
        self._access = Access(_ACCESS.get(access, "access"), address, size)
        return False  # stop: unicorn raises the matching UcError

    # ---- memory and programs -------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> CPUBuffer:
        """A buffer of nbytes (zeroed). Freed mappings of the same size are reused: unmapping would make unicorn
        drop every translated block."""
        size = abi.pages(nbytes)
        pool = self._free.get(size)
        if pool:
            m = pool.pop()
            self._free_bytes -= size
            m.pages[:] = 0
        else:
            if self._heap + size > abi.HEAP_END:
                raise MemoryError(f"{self.name}: the sandbox's heap is exhausted")
            mm = mmap.mmap(-1, size)
            pages = np.frombuffer(mm, np.uint8)
            m = _Mapping(self._heap, size, pages, mm)
            self.uc.mem_map_ptr(m.address, size, UC_PROT_NONE, pages.ctypes.data)
            self._heap += size + abi.BUFFER_GUARD
        return CPUBuffer(self, nbytes, m)

    def _release(self, m: _Mapping) -> None:
        self._free.setdefault(m.size, []).append(m)
        self._free_bytes += m.size
        while self._free_bytes > FREE_POOL_BYTES:  # really unmap the largest freed mappings
            size = max(k for k, v in self._free.items() if v)
            old = self._free[size].pop()
            self.uc.mem_unmap(old.address, old.size)
            self._opened.discard((old.address, old.size))
            self._free_bytes -= size

    def load(self, binary: bytes) -> Program:
        """The program of a CPU code object (each distinct binary loaded once, at its own address)."""
        key = hashlib.sha256(binary).digest()
        prog = self._programs.get(key)
        if prog is None:
            image = read_image(binary)
            if len(image.code) > abi.CODE_STRIDE:
                raise ImageError(f"{image.name}: {len(image.code)} bytes of code (at most {abi.CODE_STRIDE})")
            if image.meta["params"] > abi.MAX_PARAMS:
                raise ImageError(f"{image.name}: {image.meta['params']} buffer arguments (at most {abi.MAX_PARAMS})")
            prog = Program(image, abi.CODE_BASE + len(self._programs) * abi.CODE_STRIDE)
            self._programs[key] = prog
        return prog

    # ---- launching ---------------------------------------------------------------------------------------------
    def launch(self, program: Program, buffers: list[CPUBuffer], budget: int | None = None) -> LaunchStats:
        """Run a program over its buffer arguments (module docstring); CPUFault when the sandbox stops it."""
        meta = program.image.meta
        if len(buffers) != meta["params"]:
            raise ValueError(f"{program.name} takes {meta['params']} buffers, got {len(buffers)}")
        uc = self.uc
        uc.context_restore(self._clean)
        budget = self.budget if budget is None else budget
        self._open(program, buffers)
        args = b"".join(b.address.to_bytes(8, "little") for b in buffers)
        uc.mem_write(abi.KERNARG, args)
        uc.mem_write(abi.FUEL, budget.to_bytes(8, "little"))
        uc.mem_write(abi.STACK_TOP - 8, abi.EXIT.to_bytes(8, "little"))
        self._access = None
        self.launches += 1
        t0 = time.perf_counter()
        try:
            uc.emu_start(program.address + meta["entry"], abi.EXIT, timeout=int(self.watchdog_s * 1e6))
        except UcError as e:
            raise self._fault(program, buffers, e.errno, budget) from None
        seconds = time.perf_counter() - t0
        if uc.reg_read(ux.UC_X86_REG_RIP) != abi.EXIT:
            raise self._fault(program, buffers, None, budget)
        left = int.from_bytes(uc.mem_read(abi.FUEL, 8), "little")
        return LaunchStats(budget - left, seconds)

    def _open(self, program: Program, buffers: list[CPUBuffer]) -> None:
        """Map the code (once); open the argument buffers, LDS and fiber stacks for one launch and close what is
        open but not the launch's (module docstring)."""
        uc, meta = self.uc, program.image.meta
        if not program.mapped:
            chunk = program.address - (program.address - abi.CODE_BASE) % abi.CODE_CHUNK
            if chunk not in self._code_chunks:
                uc.mem_map(chunk, abi.CODE_CHUNK, UC_PROT_READ | UC_PROT_EXEC)
                self._code_chunks.add(chunk)
            uc.mem_write(program.address, program.image.code)
            program.mapped = True
        extents = {}
        for base, size, limit in ((abi.LDS_BASE, meta["lds"], abi.LDS_SIZE),
                                  (abi.FIBER_BASE, meta["fibers"], abi.FIBER_SIZE)):
            if size > limit:
                raise ImageError(f"{program.name}: {size} bytes needed at {base:#x}, at most {limit}")
            extents[base] = abi.pages(size) if size else 0
        wanted = set()
        for i, buf in enumerate(buffers):
            if buf.freed:
                raise ValueError(f"{program.name}: buffer argument {i} was freed")
            wanted.add((buf._mapping.address, buf._mapping.size))
        for region in self._opened - wanted:
            uc.mem_protect(*region, UC_PROT_NONE)
            self._opened.discard(region)
        for region in wanted - self._opened:
            uc.mem_protect(*region, _RW)
            self._opened.add(region)
        for base, size in extents.items():
            self._set_extent(base, size)
        if extents[abi.LDS_BASE]:
            uc.mem_write(abi.LDS_BASE, bytes(extents[abi.LDS_BASE]))

    def _set_extent(self, base: int, size: int) -> None:
        """Open the first `size` bytes at base (LDS or the fiber stacks) and close the rest, changing only the pages
        whose protection differs from the last launch's."""
        now = self._extent[base]
        if size > now:
            self.uc.mem_protect(base + now, size - now, _RW)
        elif size < now:
            self.uc.mem_protect(base + size, now - size, UC_PROT_NONE)
        self._extent[base] = size

    # ---- faults ------------------------------------------------------------------------------------------------
    def _fault(self, program: Program, buffers: list[CPUBuffer], errno: int | None, budget: int) -> CPUFault:
        uc, meta = self.uc, program.image.meta
        regs = read_registers(uc)
        pc = regs["rip"]
        text = disassemble_at(uc, pc)
        loc = self._location(program, pc)
        acc = self._access
        if errno is None:
            kind, address = "watchdog", pc
            what = f"still running after the {self.watchdog_s:g} s watchdog"
        elif errno == UC_ERR_INSN_INVALID and pc - program.address in _traps(meta):
            branch = program.address + _traps(meta)[pc - program.address]
            kind, address = "budget", branch
            what = (f"instruction budget of {budget} exhausted in the loop ending at {branch:#x} "
                    f"{self._location(program, branch)}: {disassemble_at(uc, branch)}")
        elif acc is not None and errno in _KIND and _KIND[errno] in ("page_fault", "no_execute"):
            kind, address = _KIND[errno], acc.address
            prot = "protected" if errno in (UC_ERR_READ_PROT, UC_ERR_WRITE_PROT, UC_ERR_FETCH_PROT) else "unmapped"
            what = f"{acc.kind} of {prot} memory at {acc.address:#x} ({acc.size} bytes)"
            near = self._near(acc.address, buffers, program)
            if near:
                what += f": {near}"
        else:
            kind, address = _KIND.get(errno, "exception"), pc
            what = {UC_ERR_INSN_INVALID: "invalid instruction",
                    UC_ERR_EXCEPTION: "CPU exception (a divide error, a trap or an interrupt instruction)"}.get(
                        errno, f"unicorn error {errno}")
        lines = [f"{self.name}: kernel {program.name} stopped: {what}",
                 f"  at {pc:#x} {loc}: {text}", *format_registers(regs)]
        return CPUFault("\n".join(lines), kind, address, pc, text, regs)

    @staticmethod
    def _location(program: Program, pc: int) -> str:
        off = pc - program.address
        if 0 <= off < len(program.image.code):
            return f"<{program.image.symbol_at(off)}>"
        return "(outside the kernel's code)"

    def _near(self, address: int, buffers: list[CPUBuffer], program: Program) -> str:
        """Which memory a bad address is near: an argument buffer (or its guard), another buffer of the device,
        the stack's guard, LDS, the fiber stacks, the kernarg page, code."""
        for i, buf in enumerate(buffers):
            m = buf._mapping
            if m.address <= address < m.address + m.size + abi.BUFFER_GUARD:
                end = buf.address + buf.nbytes
                span = f"data{i} ({buf.nbytes} bytes at {buf.address:#x})"
                if address >= end:
                    return f"{address - end} bytes past the end of {span}"
                if address < buf.address:
                    return f"{buf.address - address} bytes before {span}"
                return f"inside {span}"
        if abi.HEAP_BASE <= address < self._heap:
            return "a buffer of this device that is not an argument of this kernel (or its guard)"
        stack = abi.STACK_TOP - abi.STACK_SIZE
        regions = ((stack - 0x10000, stack, "the stack's guard (a stack overflow)"),
                   (abi.LDS_BASE, abi.LDS_BASE + abi.LDS_SIZE, "LDS"),
                   (abi.FIBER_BASE, abi.FIBER_BASE + abi.FIBER_SIZE, "the fiber stacks"),
                   (abi.KERNARG, abi.KERNARG + abi.KERNARG_SIZE, "the kernarg page"),
                   (program.address, program.address + abi.CODE_STRIDE, "the kernel's code"),
                   (abi.CODE_BASE, abi.HEAP_END + (1 << 46), "another kernel's code"))
        for lo, hi, name in regions:
            if lo <= address < hi:
                return name
        return "no memory of this kernel"


def _traps(meta: dict) -> dict[int, int]:
    return {int(k): int(v) for k, v in meta["traps"].items()}


class CPUGraph:
    """runtime.graph.KernelGraph's interface on the CPU device: launches recorded once as (program, buffers) and
    run in order with slot buffers replaced per run (each still a sandboxed launch: unicorn runs one at a time)."""

    def __init__(self, device: CPUDevice, launches: list[tuple[Program, list[CPUBuffer]]]):
        if not launches:
            raise ValueError("a kernel graph needs at least one launch")
        self.device, self.launches = device, [(p, list(bufs)) for p, bufs in launches]
        self.slots: list[CPUBuffer] = []
        self._slot_of: dict[int, int] = {}
        self._uses: list[list[tuple[int, int]]] = []  # per slot: (launch, argument) holding it
        for li, (p, bufs) in enumerate(self.launches):
            if len(bufs) != p.image.meta["params"]:
                raise ValueError(f"{p.name} takes {p.image.meta['params']} buffers, got {len(bufs)}")
            for ai, b in enumerate(bufs):
                if id(b) not in self._slot_of:
                    self._slot_of[id(b)] = len(self.slots)
                    self.slots.append(b)
                    self._uses.append([])
                self._uses[self._slot_of[id(b)]].append((li, ai))

    def slot(self, buf: CPUBuffer) -> int:
        """The slot of a buffer the graph was recorded with (KeyError for another)."""
        return self._slot_of[id(buf)]

    def run(self, buffers: dict[int, CPUBuffer] | None = None, wait: bool = False) -> float:
        """Run every launch in order with slot i's buffer replaced by buffers[i]; the summed seconds in unicorn."""
        for i, buf in (buffers or {}).items():
            for li, ai in self._uses[i]:
                self.launches[li][1][ai] = buf
        return sum(self.device.launch(p, bufs).seconds for p, bufs in self.launches)

    def free(self) -> None:
        """Nothing to release: the launches hold no memory of their own."""

    def __len__(self) -> int:
        return len(self.launches)
