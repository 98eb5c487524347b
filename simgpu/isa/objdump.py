"""`simgpu disasm FILE`: the kernels of a code object, each with a descriptor summary and its
disassembly, laid out like `llvm-objdump -d --mcpu=<its processor>`: every symbol of the code section from its
address to the next symbol (so the s_code_end / s_nop padding after a kernel's s_endpgm is listed), text
padded to column 60, `// ADDRESS: WORDS`, and `<symbol+0xOFF>` after the words of a branch. The code is
decoded for the object's processor when the codec knows it (arch.ARCHES: gfx1100, gfx1201), else as gfx1100."""

from __future__ import annotations

import bisect
import sys
from typing import TextIO

from .arch import ARCHES, DEFAULT
from .codec import decode
from .codeobject import CodeObject, CodeObjectError, Kernel, read_code_object
from .errors import DecodeError

# SOPP branches: the target is the next instruction plus simm16 dwords (RDNA3 ISA, "Program Flow Control").
_BRANCHES = ("s_branch", "s_cbranch_")


def descriptor_summary(k: Kernel) -> list[str]:
    """A few lines describing a kernel's descriptor: registers, segments, enabled inputs."""
    d = k.descriptor
    return [
        f"; kernel {k.name}: entry {k.entry_address:#x}, descriptor {k.descriptor_address:#x}",
        f";   wave{32 if d.enable_wavefront_size32 else 64}, vgprs {d.vgpr_count}, "
        f"user sgprs {d.user_sgpr_count}, kernarg {d.kernarg_size} B, "
        f"lds {d.group_segment_fixed_size} B, scratch {d.private_segment_fixed_size} B/item",
        f";   rsrc1 {d.compute_pgm_rsrc1:#010x} rsrc2 {d.compute_pgm_rsrc2:#010x} "
        f"rsrc3 {d.compute_pgm_rsrc3:#010x} properties {d.kernel_code_properties:#06x}",
    ]


class _Labels:
    """Names for code addresses: the nearest symbol at or before an address, as `<name+0xOFF>`."""

    def __init__(self, symbols: list[tuple[int, str]]):
        self.addrs = [a for a, _ in symbols]
        self.names = [n for _, n in symbols]

    def __call__(self, addr: int) -> str | None:
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return None
        off = addr - self.addrs[i]
        return f"<{self.names[i]}{f'+{off:#x}' if off else ''}>"


def code_symbols(co: CodeObject) -> list[tuple[int, str]]:
    """(address, name) of every function symbol and kernel entry in the code section, by address."""
    end = co.text_address + len(co.text)
    found = {k.entry_address: k.name for k in co.kernels.values()}
    for s in co.symbols.values():
        if s.type == "FUNC" and co.text_address <= s.value < end:
            found.setdefault(s.value, s.name)
    return sorted(found.items())


def branch_target(inst, addr: int) -> int | None:
    """The address a SOPP branch at `addr` jumps to, or None for other instructions."""
    if not inst.mnemonic.startswith(_BRANCHES):
        return None
    simm16 = inst.fields["simm16"]
    return addr + 4 + 4 * (simm16 - 0x10000 if simm16 & 0x8000 else simm16)


def disassemble(code: bytes, address: int, labels=None, arch: str = DEFAULT) -> list[str]:
    """objdump-style lines for `code` (machine code of `arch`) loaded at `address`: text padded to column 60,
    address and dwords."""
    out, pos = [], 0
    while pos < len(code):
        addr = address + pos
        target = None
        try:
            inst = decode(code, pos, true16=None, arch=arch)  # also True16-only encodings (code from LLVM 20+)
            text, size = inst.text(), inst.size
            target = branch_target(inst, addr)
        except DecodeError:
            size = min(4, len(code) - pos)
            text = f".long 0x{int.from_bytes(code[pos:pos + size], 'little'):08x}  ; undecodable"
        words = " ".join(f"{int.from_bytes(code[i:i + 4], 'little'):08X}" for i in range(pos, pos + size, 4))
        label = labels(target) if labels is not None and target is not None else None
        out.append(f"\t{text:<59}// {addr:012X}: {words}" + (f" {label}" if label else ""))
        pos += size
    return out


def disassemble_text(co: CodeObject) -> list[str]:
    """The code section as llvm-objdump -d lists it: each symbol from its address to the next one."""
    symbols = code_symbols(co)
    labels, by_entry = _Labels(symbols), {k.entry_address: k for k in co.kernels.values()}
    end = co.text_address + len(co.text)
    arch = co.processor if co.processor in ARCHES else DEFAULT
    out = ["Disassembly of section .text:"]
    for i, (addr, name) in enumerate(symbols):
        stop = symbols[i + 1][0] if i + 1 < len(symbols) else end
        out.append("")
        if addr in by_entry:
            out += descriptor_summary(by_entry[addr])
        out.append(f"{addr:016x} <{name}>:")
        lo = addr - co.text_address
        out += disassemble(co.text[lo:lo + stop - addr], addr, labels, arch)
    return out


def disasm_main(path: str, out: TextIO | None = None) -> int:
    """Print every kernel of the code object at `path`; exit status 1 on an unreadable file."""
    out = out or sys.stdout
    try:
        with open(path, "rb") as f:
            co = read_code_object(f.read())
    except (OSError, CodeObjectError) as e:
        print(f"simgpu disasm: {path}: {e}", file=sys.stderr)
        return 1
    print(f"\n{path}:\tfile format elf64-amdgpu ({co.target})\n", file=out)
    for line in disassemble_text(co):
        print(line, file=out)
    return 0
