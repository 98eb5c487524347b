"""CPUFault: how a CPU kernel that went wrong is reported. The device stops the kernel at the first bad thing
the sandbox sees (an access outside its mappings, an execute from a page that is not code, an instruction the
CPU refuses, the instruction budget running out) and reports, like the GPU's fault report: the kernel, what
happened and where (the faulting address; for a memory access, which buffer it was near), the instruction at
the stop as capstone disassembles it, and the registers.
"""

from __future__ import annotations

from dataclasses import dataclass

import capstone
from unicorn import x86_const as ux

from runtime.fault import DeviceFault

GPRS = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
_UC_GPR = {n: getattr(ux, f"UC_X86_REG_{n.upper()}") for n in GPRS}
_MD = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)


class CPUFault(DeviceFault):
    """A CPU kernel stopped by the sandbox: `report` (text), `kind` ("page_fault", "no_execute",
    "illegal_instruction", "budget", "exception", "watchdog"), the faulting `address`, `pc`, the instruction's
    text and the registers (name -> value; xmm registers as 128-bit ints). The device stays usable."""

    def __init__(self, report: str, kind: str, address: int | None, pc: int, instruction: str, registers: dict):
        super().__init__(report, kind, address, True)
        self.pc, self.instruction, self.registers = pc, instruction, registers


@dataclass
class Access:
    """An access the memory hook refused: 'read', 'write' or 'fetch', its address and size."""

    kind: str
    address: int
    size: int


def read_registers(uc) -> dict:
    """The general-purpose registers, rip, eflags and xmm0-15 of a stopped unicorn instance."""
    regs = {n: uc.reg_read(r) for n, r in _UC_GPR.items()}
    regs["rip"] = uc.reg_read(ux.UC_X86_REG_RIP)
    regs["eflags"] = uc.reg_read(ux.UC_X86_REG_EFLAGS)
    for i in range(16):
        regs[f"xmm{i}"] = uc.reg_read(getattr(ux, f"UC_X86_REG_XMM{i}"))
    return regs


def format_registers(regs: dict) -> list[str]:
    """Register lines of a fault report: four general-purpose registers a line, then xmm as 32-hex-digit values."""
    lines = []
    names = [*GPRS, "rip", "eflags"]
    for i in range(0, len(names), 4):
        lines.append("  " + "  ".join(f"{n:>6}={regs[n]:#018x}" for n in names[i:i + 4]))
    for i in range(0, 16, 2):
        lines.append("  " + "  ".join(f"{'xmm' + str(k):>6}={regs[f'xmm{k}']:#034x}" for k in (i, i + 1)))
    return lines


def disassemble_at(uc, pc: int) -> str:
    """capstone's text of the instruction at pc ('(unmapped)' or '(undecodable: bytes)' when there is none)."""
    try:
        code = bytes(uc.mem_read(pc, 16))
    except Exception:  # unicorn refuses a read of unmapped memory
        try:
            code = bytes(uc.mem_read(pc, 1))
        except Exception:
            return "(unmapped)"
    for insn in _MD.disasm(code, pc):
        return f"{insn.mnemonic} {insn.op_str}".strip()
    return f"(undecodable: {code[:8].hex()})"
