"""Kernel names for fault reports when the runtime did not name them: the code object in GPU memory.

Our runtime tells the driver where each kernel lives (its `code_object` note); a client we did not write (tinygrad
under `simgpu run`) loads its ELF image into a buffer object of its own and dispatches straight into it. Like a
debugger that finds the loaded code object around a PC, the driver then reads the image at the start of the buffer
object holding the kernel's code. A loader copies only the PT_LOAD segments (no section headers), so the symbols
come from the dynamic segment: the file is rebuilt from the loaded segments and pyelftools reads DT_SYMTAB.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable

from elftools.elf.elffile import ELFFile

from mockgpu.memory import Allocation

MAX_IMAGE = 64 << 20  # bytes of a buffer object read as a code object (larger ones are not looked into)
_E_SHOFF, _E_SHNUM, _E_SHSTRNDX = 0x28, 0x3C, 0x3E  # Elf64_Ehdr fields cleared in the rebuilt file


def kernel_symbol(mmu, allocations: Callable[[], Iterable[Allocation]], vmid: int, code_address: int) -> str | None:
    """The STT_FUNC symbol at `code_address` of the code object loaded at the start of its buffer object (None:
    no such buffer object, no ELF there, or no symbol at that offset). Any error reading it is the caller's."""
    al = next((a for a in allocations() if a.va <= code_address < a.va + a.size), None)
    if al is None or mmu.read(vmid, al.va, 4) != b"\x7fELF":
        return None
    image = mmu.read(vmid, al.va, min(al.size, MAX_IMAGE))
    offset = code_address - al.va
    for sym in _dynamic_symbols(_file_of(image)):
        if sym["st_info"]["type"] == "STT_FUNC" and sym["st_value"] == offset and sym.name:
            return sym.name
    return None


def _file_of(image: bytes) -> bytes:
    """The ELF file as far as its loaded image holds it: each PT_LOAD segment back at its file offset."""
    loaded = ELFFile(io.BytesIO(image))
    segments = [s for s in loaded.iter_segments() if s["p_type"] == "PT_LOAD"]
    size = max((s["p_offset"] + s["p_filesz"] for s in segments), default=0)
    out = bytearray(min(size, MAX_IMAGE))
    for s in segments:
        data = image[s["p_vaddr"]:s["p_vaddr"] + s["p_filesz"]]
        out[s["p_offset"]:s["p_offset"] + len(data)] = data
    out[_E_SHOFF:_E_SHOFF + 8] = bytes(8)  # the section headers were not loaded
    out[_E_SHNUM:_E_SHSTRNDX + 2] = bytes(4)
    return bytes(out)


def _dynamic_symbols(data: bytes):
    elf = ELFFile(io.BytesIO(data))
    for seg in elf.iter_segments():
        if seg["p_type"] == "PT_DYNAMIC":
            yield from seg.iter_symbols()
