"""The CPU device: x86-64 kernels (compiler.backend.x86) run under unicorn in a sandbox (runtime.cpu.abi).

One unicorn instance per device. A launch maps the kernel's code (read/execute), its buffers (read/write, host
memory mapped in place, no copies), LDS and fiber stacks when it has them, runs from the entry to the return
address, and unmaps everything again, so a kernel sees only its own memory. The kernel walks its index grid
itself (the driver loop is part of its code). Anything the sandbox refuses stops it with a CPUFault
(runtime.cpu.fault) and the device stays usable: the next launch starts from a clean register state.

Determinism: no threads, no clocks, the same registers and memory at every entry, MXCSR fixed; unicorn's
TCG computes SSE arithmetic in software (softfloat), so results are the same on every host.
"""

from __future__ import annotations

import hashlib
import mmap
import os
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
    UC_PROT_READ,
    UC_PROT_WRITE,
    Uc,
    UcError,
)
from unicorn import x86_const as ux

from runtime.cpu import abi
from runtime.cpu.fault import Access, CPUFault, disassemble_at, format_registers, read_registers
from runtime.cpu.image import Image, ImageError, read_image

_ACCESS = {UC_MEM_READ_UNMAPPED: "read", UC_MEM_READ_PROT: "read", UC_MEM_WRITE_UNMAPPED: "write",
           UC_MEM_WRITE_PROT: "write", UC_MEM_FETCH_UNMAPPED: "fetch", UC_MEM_FETCH_PROT: "fetch"}
_KIND = {UC_ERR_READ_UNMAPPED: "page_fault", UC_ERR_WRITE_UNMAPPED: "page_fault", UC_ERR_READ_PROT: "page_fault",
         UC_ERR_WRITE_PROT: "page_fault", UC_ERR_FETCH_UNMAPPED: "no_execute", UC_ERR_FETCH_PROT: "no_execute",
         UC_ERR_INSN_INVALID: "illegal_instruction", UC_ERR_EXCEPTION: "exception"}
_RW = UC_PROT_READ | UC_PROT_WRITE


class CPUBuffer:
    """Host memory of a buffer, laid out for the sandbox: whole pages with the bytes at the end (abi)."""

    def __init__(self, device: CPUDevice, nbytes: int):
        self.device, self.nbytes = device, nbytes
        self.mapped_size = abi.pages(nbytes)
        self._mm = mmap.mmap(-1, self.mapped_size)
        self._pages = np.frombuffer(self._mm, np.uint8)
        self.offset = self.mapped_size - nbytes  # where the bytes start in the pages
        self.data = self._pages[self.offset:]
        self.host = self._pages.ctypes.data
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
        """Give the memory back (the mapping goes when the last view of it does)."""
        self.freed = True
        self.data = self._pages = np.empty(0, np.uint8)


@dataclass
class Program:
    """A loaded kernel: its image and the address its code runs at."""

    image: Image
    address: int

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
        self.watchdog_s = float(os.environ.get("SIMGPU_CPU_WATCHDOG", 0)) if watchdog_s is None else watchdog_s
        self.uc = uc = Uc(UC_ARCH_X86, UC_MODE_64)
        uc.mem_map(abi.KERNARG, abi.KERNARG_SIZE, _RW)
        uc.mem_map(abi.STACK_TOP - abi.STACK_SIZE, abi.STACK_SIZE, _RW)
        uc.reg_write(ux.UC_X86_REG_MXCSR, abi.MXCSR)
        uc.reg_write(ux.UC_X86_REG_RSP, abi.STACK_TOP - 8)
        self._clean = uc.context_save()
        self._access: Access | None = None
        uc.hook_add(UC_HOOK_MEM_INVALID, self._on_invalid)
        self._programs: dict[bytes, Program] = {}
        self.launches = 0

    def _on_invalid(self, uc, access, address, size, value, user_data) -> bool:
        self._access = Access(_ACCESS.get(access, "access"), address, size)
        return False  # stop: unicorn raises the matching UcError

    # ---- memory and programs -------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> CPUBuffer:
        """A buffer of nbytes (zeroed)."""
        return CPUBuffer(self, nbytes)

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
        mapped: list[tuple[int, int]] = []
        try:
            where = self._map(program, buffers, mapped)
            args = bytearray(8 * len(buffers))
            for i, addr in enumerate(where):
                args[8 * i:8 * i + 8] = addr.to_bytes(8, "little")
            uc.mem_write(abi.KERNARG, bytes(args))
            uc.mem_write(abi.FUEL, budget.to_bytes(8, "little"))
            uc.mem_write(abi.STACK_TOP - 8, abi.EXIT.to_bytes(8, "little"))
            self._access = None
            self.launches += 1
            t0 = time.perf_counter()
            try:
                uc.emu_start(program.address + meta["entry"], abi.EXIT, timeout=int(self.watchdog_s * 1e6))
            except UcError as e:
                raise self._fault(program, buffers, where, e.errno, budget) from None
            seconds = time.perf_counter() - t0
            if uc.reg_read(ux.UC_X86_REG_RIP) != abi.EXIT:
                raise self._fault(program, buffers, where, None, budget)
            left = int.from_bytes(uc.mem_read(abi.FUEL, 8), "little")
            return LaunchStats(budget - left, seconds)
        finally:
            for addr, size in mapped:
                uc.mem_unmap(addr, size)

    def _map(self, program: Program, buffers: list[CPUBuffer], mapped: list) -> list[int]:
        """Map code, buffers, LDS and fiber stacks for one launch; the address of each buffer argument."""
        uc, meta = self.uc, program.image.meta
        code = program.image.code
        uc.mem_map(program.address, abi.pages(len(code)), UC_PROT_READ | UC_PROT_EXEC)
        mapped.append((program.address, abi.pages(len(code))))
        uc.mem_write(program.address, code)
        where: list[int] = []
        seen: dict[int, int] = {}
        for i, buf in enumerate(buffers):
            if buf.freed:
                raise ValueError(f"{program.name}: buffer argument {i} was freed")
            if id(buf) not in seen:
                base = abi.buffer_slot(i)
                uc.mem_map_ptr(base, buf.mapped_size, _RW, buf.host)
                mapped.append((base, buf.mapped_size))
                seen[id(buf)] = base + buf.offset
            where.append(seen[id(buf)])
        for base, size in ((abi.LDS_BASE, meta["lds"]), (abi.FIBER_BASE, meta["fibers"])):
            if size:
                uc.mem_map(base, abi.pages(size), _RW)  # fresh pages: zeroed
                mapped.append((base, abi.pages(size)))
        return where

    # ---- faults ------------------------------------------------------------------------------------------------
    def _fault(self, program: Program, buffers: list[CPUBuffer], where: list[int], errno: int | None,
               budget: int) -> CPUFault:
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
            near = self._near(acc.address, buffers, where, program)
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

    @staticmethod
    def _near(address: int, buffers: list[CPUBuffer], where: list[int], program: Program) -> str:
        """Which memory a bad address is near: a buffer's slot, the stack's guard, LDS, fiber stacks, code."""
        for i, (buf, start) in enumerate(zip(buffers, where, strict=True)):
            slot = abi.buffer_slot(i)
            if slot <= address < slot + abi.BUFFER_SLOT:
                end = start + buf.nbytes
                span = f"data{i} ({buf.nbytes} bytes at {start:#x})"
                if address >= end:
                    return f"{address - end} bytes past the end of {span}"
                if address < start:
                    return f"{start - address} bytes before {span}"
                return f"inside {span}"
        stack = abi.STACK_TOP - abi.STACK_SIZE
        regions = ((stack - 0x10000, stack, "the stack's guard (a stack overflow)"),
                   (abi.LDS_BASE, abi.FIBER_BASE, "LDS"), (abi.FIBER_BASE, stack - 0x10000, "the fiber stacks"),
                   (abi.KERNARG, abi.KERNARG + abi.KERNARG_SIZE, "the kernarg page"),
                   (program.address, program.address + abi.CODE_STRIDE, "the kernel's code"))
        for lo, hi, name in regions:
            if lo <= address < hi:
                return name
        return "no memory of this kernel"


def _traps(meta: dict) -> dict[int, int]:
    return {int(k): int(v) for k, v in meta["traps"].items()}
