"""capstone listings of CPU kernels: SIMGPU_DEBUG=3 prints one per compiled kernel, `simgpu disasm` one per code
object (or cached kernel), in llvm-objdump's layout: a `<symbol>:` line at every label, then
`address: bytes  mnemonic operands` per instruction, branch targets named `<symbol+0xOFF>`."""

from __future__ import annotations

import capstone

from runtime.cpu.image import Image

_MD = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
_MD.detail = True


def listing(image: Image, address: int = 0) -> list[str]:
    """The kernel's code as capstone disassembles it (module docstring), at `address`."""
    labels = {off: name for off, name in image.symbols}
    traps = {int(k): int(v) for k, v in image.meta.get("traps", {}).items()}
    out = []
    for insn in _MD.disasm(image.code, address):
        off = insn.address - address
        if off in labels:
            out.append(f"\n{insn.address:016x} <{labels[off]}>:")
        text = f"{insn.mnemonic} {insn.op_str}".strip()
        if insn.group(capstone.CS_GRP_JUMP) or insn.group(capstone.CS_GRP_CALL):
            op = insn.operands[0] if insn.operands else None
            if op is not None and op.type == capstone.x86.X86_OP_IMM:
                text += f" <{image.symbol_at(op.imm - address)}>"
        if off in traps:
            text += f"  ; budget trap of the loop ending at {traps[off] + address:#x}"
        out.append(f"{insn.address:8x}: {insn.bytes.hex(' '):<30} {text}")
    return out


def header(image: Image) -> str:
    """One comment line of a kernel's launch metadata."""
    m = image.meta
    return (f"; {m['name']}: grid {tuple(m['grid'])} block {tuple(m['block'])}, {m['params']} buffers, "
            f"frame {m['frame']} B, LDS {m['lds']} B, fibers {m['fibers']} B, "
            f"{len(image.code)} bytes of x86-64")
