"""Kernel names for fault reports when the runtime did not name them: the code object in GPU memory.

Our runtime tells the driver where each kernel lives (its `code_object` note); a client we did not write (tinygrad
under `simgpu run`) loads its ELF image into a buffer object of its own and dispatches straight into it. Like a
debugger that finds the loaded code object around a PC, the driver then reads the image at the start of the buffer
object holding the kernel's code. A loader copies only the PT_LOAD segments (no section headers), so the symbols
come from the dynamic segment: the file is rebuilt from the loaded segments and pyelftools reads DT_SYMTAB.
"""

from __future__ import annotations

import io
import os
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


# ---- code objects in the client's own memory --------------------------------------------------------------------
_EHDR_AMDGPU = b"\x7fELF\x02\x01\x01"  # ELFCLASS64, little-endian, EV_CURRENT (e_machine checked after)
_EM_AMDGPU = 0xE0
_SCAN_CHUNK = 16 << 20  # bytes of the client's memory read at once while looking for code objects


class ProcessCodeObjects:
    """Kernel names from the AMDGPU code objects in a client process's own memory, for loaders that put no ELF
    header in GPU memory: tinygrad links nothing (its compiler's output is a relocatable object) and copies only
    its PROGBITS sections into the buffer it runs, so the symbols stay in the ELF file it keeps in its heap. Like a
    debugger, the server (the client's parent: ptrace access) reads /proc/PID/mem: the writable anonymous mappings
    are searched for AMDGPU ELF headers, and a kernel is the function symbol whose code equals the bytes at the
    dispatch's code address. Nothing read is trusted: a damaged or partial file is skipped."""

    def __init__(self, pid: int):
        self.pid = pid
        self.functions: dict[bytes, str] = {}  # a function's code bytes -> its symbol name
        self._seen: set[tuple[int, bytes]] = set()  # (address, header bytes) of the files already read
        self._missed: set[tuple[int, bytes]] = set()  # (code address, code) searched for in vain, since the last scan

    def kernel_symbol(self, mmu, vmid: int, code_address: int) -> str | None:
        """The symbol of the kernel whose code starts at `code_address` (None: no code object of the client has it)."""
        head = mmu.read(vmid, code_address, 64)
        name = self._match(mmu, vmid, code_address)
        if name is None and (code_address, head) not in self._missed:
            if self._scan():
                self._missed.clear()
                name = self._match(mmu, vmid, code_address)
            if name is None:
                self._missed.add((code_address, head))
        return name

    def _match(self, mmu, vmid: int, code_address: int) -> str | None:
        for code, name in self.functions.items():
            if mmu.read(vmid, code_address, len(code)) == code:
                return name
        return None

    def _scan(self) -> bool:
        """Read the code objects not read yet; whether any new function was found."""
        found = False
        try:
            mem = open(f"/proc/{self.pid}/mem", "rb", buffering=0)
        except OSError:
            return False
        with mem:
            for start, end in _anonymous_mappings(self.pid):
                for addr in _headers(mem, start, end):
                    found |= self._read_file(mem, addr)
        return found

    def _read_file(self, mem, addr: int) -> bool:
        header = _pread(mem, addr, 64)
        if len(header) < 64 or (addr, header) in self._seen:
            return False
        self._seen.add((addr, header))
        shoff, shentsize, shnum = (int.from_bytes(header[o:o + n], "little") for o, n in ((0x28, 8), (0x3A, 2),
                                                                                          (0x3C, 2)))
        size = shoff + shentsize * shnum
        if not 64 <= size <= MAX_IMAGE:
            return False
        try:
            functions = _functions(_pread(mem, addr, size))
        except Exception:  # noqa: BLE001 - whatever lies in the client's memory (a freed, half-overwritten file)
            return False
        new = {code: name for code, name in functions.items() if code not in self.functions}
        self.functions.update(new)
        return bool(new)


def _anonymous_mappings(pid: int) -> list[tuple[int, int]]:
    """The readable, writable mappings backed by no file (the heap, anonymous memory) of a process."""
    out = []
    try:
        with open(f"/proc/{pid}/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        fields = line.split(maxsplit=5)
        path = fields[5] if len(fields) > 5 else ""
        if fields[1].startswith("rw") and (path == "" or path == "[heap]"):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            out.append((start, end))
    return out


def _pread(mem, addr: int, n: int) -> bytes:
    try:
        return os.pread(mem.fileno(), n, addr)
    except OSError:
        return b""


def _headers(mem, start: int, end: int):
    """Addresses in [start, end) where an AMDGPU ELF header begins."""
    overlap = len(_EHDR_AMDGPU) + 12
    for pos in range(start, end, _SCAN_CHUNK):
        data = _pread(mem, pos, min(_SCAN_CHUNK + overlap, end - pos))
        i = data.find(_EHDR_AMDGPU)
        while i >= 0:
            if i < _SCAN_CHUNK and data[i + 18:i + 20] == _EM_AMDGPU.to_bytes(2, "little"):
                yield pos + i
            i = data.find(_EHDR_AMDGPU, i + 1)


def _functions(data: bytes) -> dict[bytes, str]:
    """Each function symbol's code bytes -> its name, from a complete ELF file (relocatable or linked)."""
    elf = ELFFile(io.BytesIO(data))
    symtab = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
    out = {}
    if symtab is None:
        return out
    for sym in symtab.iter_symbols():
        if sym["st_info"]["type"] != "STT_FUNC" or not sym["st_size"] or not sym.name or \
                not isinstance(sym["st_shndx"], int):
            continue
        sec = elf.get_section(sym["st_shndx"])
        offset = sym["st_value"] - (sec["sh_addr"] if elf["e_type"] != "ET_REL" else 0)
        code = sec.data()[offset:offset + sym["st_size"]]
        if len(code) == sym["st_size"]:
            out.setdefault(bytes(code), sym.name)
    return out
