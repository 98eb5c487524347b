"""`simgpu disasm FILE`: the kernels of a code object, each with a descriptor summary and its
disassembly, laid out like `llvm-objdump -d --mcpu=gfx1100` (text, then `// ADDRESS: WORDS`)."""

from __future__ import annotations

import sys
from typing import TextIO

from .codec import decode
from .codeobject import CodeObjectError, Kernel, read_code_object
from .errors import DecodeError


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


def disassemble_kernel(k: Kernel) -> list[str]:
    """objdump-style lines for a kernel's code: text padded to column 60, address and dwords."""
    out = [f"{k.entry_address:016x} <{k.name}>:"]
    code, pos = k.code, 0
    while pos < len(code):
        addr = k.entry_address + pos
        try:
            inst = decode(code, pos)
            text, size = inst.text(), inst.size
        except DecodeError:
            size = min(4, len(code) - pos)
            text = f".long 0x{int.from_bytes(code[pos:pos + size], 'little'):08x}  ; undecodable"
        words = " ".join(f"{int.from_bytes(code[i:i + 4], 'little'):08X}" for i in range(pos, pos + size, 4))
        out.append(f"\t{text:<59}// {addr:012X}: {words}")
        pos += size
    return out


def disasm_main(path: str, out: TextIO = sys.stdout) -> int:
    """Print every kernel of the code object at `path`; exit status 1 on an unreadable file."""
    try:
        with open(path, "rb") as f:
            co = read_code_object(f.read())
    except (OSError, CodeObjectError) as e:
        print(f"simgpu disasm: {path}: {e}", file=sys.stderr)
        return 1
    print(f"{path}:\tfile format elf64-amdgpu ({co.target})", file=out)
    for k in co.kernels.values():
        print("", file=out)
        for line in descriptor_summary(k) + disassemble_kernel(k):
            print(line, file=out)
    return 0
