"""Loading an x86-64 relocatable object that LLVM made for a kernel, without LLVM: the launching process runs native
code the JIT's worker compiled without importing llvmlite.

Why a loader of our own: llvmlite's import (it loads LLVM's shared library, tens of MB of relocations) and LLVM's
start cost the launching thread 22-42 ms of CPU in a process's first take-up of a background compile (docs/shader.md,
"The first launch"), on top of MCJIT's 2-3.5 ms per object; the compile beside a launch then did not pay within it.
The objects are small and regular: LLVM's large code model, position independent (compile._new_target_machine:
reloc "pic", code model "jitdefault"), so code reaches its constants through the GOT's address and 64-bit offsets,
and nothing outside the object. Over the corpora's 118 objects (host and AVX2) the relocations are of three kinds:
R_X86_64_GOTPC64 (the GOT's address, PC-relative), R_X86_64_GOTOFF64 (a symbol's offset from the GOT) and
R_X86_64_PC64 (jump tables and .eh_frame); no object has an undefined symbol but _GLOBAL_OFFSET_TABLE_ and none uses
a GOT entry, so the GOT is only a base address (the image's start). R_X86_64_64 is loaded too (absolute).

The ELF structures are read with struct rather than pyelftools (which simgpu.isa.codeobject uses for code objects):
its import alone is ~40 ms (what this module exists to save, in a process that may not load a code object, e.g. a
`simgpu run` server), and a loader needs a few fixed-layout headers, not its general reader.

The bytes come from another process (or the disk cache), so they are read as hostile input: the header, every
section, symbol and relocation is checked against the file's and the sections' bounds, only the kinds above are
applied, a symbol must be defined in a loaded section (or be the GOT), the entry symbols global functions inside
executable code; anything else is a BadObject (a CompileFailed: the kernel stays in the interpreter). The code's
instructions themselves are the worker's (the disk cache's entries are HMAC-checked; docs/driver.md).

The image is mapped read-write, filled and relocated, then made read-execute (code) and read-only (constants):
never writable and executable at once. .eh_frame is not loaded: no exception unwinds through this code (it calls
back into Python through ctypes, which catches everything), and MCJIT's registration of it is what a debugger or
a C++ unwinder would read.
"""

from __future__ import annotations

import ctypes
import mmap
import platform
import struct
import sys

from simgpu.shader.jit.worker import CompileFailed

PAGE = mmap.PAGESIZE
MAX_IMAGE = 64 << 20  # a kernel's code and constants are tens of kB: beyond this it is not one of ours
MAX_ALIGN = 4096

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
ET_REL, EM_X86_64 = 1, 62
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 1, 2, 3, 4, 8, 9
SHT_X86_64_UNWIND = 0x70000001  # .eh_frame
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
# what a loaded section may say of itself besides those: mergeable constants and strings, x86-64's large data
SHF_KNOWN = SHF_WRITE | SHF_ALLOC | SHF_EXECINSTR | 0x10 | 0x20 | 0x10000000
SHN_UNDEF, SHN_LORESERVE = 0, 0xFF00
STT_FUNC, STB_GLOBAL = 2, 1
R_X86_64_64, R_X86_64_PC64, R_X86_64_GOTOFF64, R_X86_64_GOTPC64 = 1, 24, 25, 29
KINDS = (R_X86_64_64, R_X86_64_PC64, R_X86_64_GOTOFF64, R_X86_64_GOTPC64)  # each 8 bytes wide
GOT = b"_GLOBAL_OFFSET_TABLE_"
MASK64 = (1 << 64) - 1
PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4

_MPROTECT: list = []  # libc's mprotect, looked up at the first load (elfload.supported hosts only)


def supported() -> bool:
    """Whether this loader runs here: Linux on x86-64 (elsewhere the tier loads with MCJIT: compile.McjitImage)."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


class BadObject(CompileFailed):
    """An object file the loader refuses (malformed, or something LLVM does not emit for the JIT's modules)."""


class Image:
    """A loaded object: its mapping (unmapped when the image is collected: keep it referenced while its code may
    run) and the addresses of its global functions."""

    def __init__(self, mapping: mmap.mmap, base: int, functions: dict[str, int]):
        self.mapping, self.base, self.functions = mapping, base, functions

    def address(self, name: str) -> int:
        """The address of global function `name` (BadObject if the object defines none of that name)."""
        try:
            return self.functions[name]
        except KeyError:
            raise BadObject(f"object file without the function {name!r}") from None


def load(obj: bytes, entries: tuple[str, ...] = ("round",)) -> Image:
    """Map `obj` (an x86-64 ELF relocatable object), apply its relocations and return the Image; each name in
    `entries` must be a global function of it. BadObject for anything the module docstring does not allow."""
    if not isinstance(obj, bytes | bytearray):
        raise BadObject("object file is not bytes")
    sections = _sections(obj)
    loaded = [i for i, s in enumerate(sections) if _loaded(s)]
    placed, size = _layout(sections, loaded)
    syms, strtab = _symbols(obj, sections)
    mapping = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=PROT_READ | PROT_WRITE)
    view = (ctypes.c_char * size).from_buffer(mapping)
    base = ctypes.addressof(view)
    del view  # (an exported buffer would keep the mapping from being closed)
    for i in loaded:
        s = sections[i]
        if s[1] != SHT_NOBITS:
            mapping[placed[i]:placed[i] + s[5]] = obj[s[4]:s[4] + s[5]]
    for s in sections:
        if s[1] == SHT_REL:
            raise BadObject("REL relocations (x86-64 uses RELA)")
        if s[1] == SHT_RELA and s[7] in placed:
            _relocate(obj, s, sections, syms, strtab, placed, base, mapping)
    functions = _functions(obj, syms, strtab, sections, placed, base)
    for name in entries:
        if name not in functions:
            raise BadObject(f"object file without the function {name!r}")
    _protect(sections, loaded, placed, base, size)
    return Image(mapping, base, functions)


def _sections(obj) -> list[tuple]:
    """The section headers, checked: an x86-64 relocatable ELF64, little-endian, every section's bytes in the file."""
    if len(obj) < _EHDR.size:
        raise BadObject("object file shorter than an ELF header")
    ident, etype, machine, version, _entry, _phoff, shoff, _flags, ehsize, _phes, _phn, shentsize, shnum, shstrndx \
        = _EHDR.unpack_from(obj)
    if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1 or ident[6] != 1 or version != 1:
        raise BadObject("not a little-endian ELF64 object")
    if etype != ET_REL or machine != EM_X86_64:
        raise BadObject(f"not an x86-64 relocatable object (type {etype}, machine {machine})")
    if ehsize != _EHDR.size or shentsize != _SHDR.size or not 0 < shnum < 1024 or shstrndx >= shnum \
            or shoff + shnum * _SHDR.size > len(obj):
        raise BadObject("ELF section header table out of the file")
    sections = [_SHDR.unpack_from(obj, shoff + i * _SHDR.size) for i in range(shnum)]
    for s in sections:
        _name, stype, _flags, _addr, offset, size, _link, _info, align, _entsize = s
        if stype != SHT_NOBITS and offset + size > len(obj):
            raise BadObject("section bytes out of the file")
        if size > MAX_IMAGE or align > MAX_ALIGN or align & (align - 1):
            raise BadObject("section size or alignment out of range")
    return sections


def _loaded(s: tuple) -> bool:
    """Whether a section is part of the image: allocated, not .eh_frame (module docstring)."""
    stype, flags = s[1], s[2]
    if not flags & SHF_ALLOC or stype == SHT_X86_64_UNWIND:
        return False
    if stype not in (SHT_PROGBITS, SHT_NOBITS) or flags & ~SHF_KNOWN:
        raise BadObject(f"allocated section of type {stype:#x}, flags {flags:#x}")
    return True


def _group(s: tuple) -> int:
    """The protection group of a loaded section: 0 code (read-execute), 1 constants (read), 2 data (read-write)."""
    return 0 if s[2] & SHF_EXECINSTR else 2 if s[2] & SHF_WRITE else 1


def _layout(sections, loaded) -> tuple[dict[int, int], int]:
    """({section: its offset in the image}, the image's size): code, constants and data each from a page of their
    own, every section at its alignment."""
    placed, at = {}, 0
    for g in (0, 1, 2):
        at = -(-at // PAGE) * PAGE
        for i in loaded:
            s = sections[i]
            if _group(s) == g:
                align = max(s[8], 1)
                at = -(-at // align) * align
                placed[i] = at
                at += s[5]
    size = max(-(-at // PAGE) * PAGE, PAGE)
    if size > MAX_IMAGE:
        raise BadObject("object file's image too large")
    return placed, size


def _symbols(obj, sections) -> tuple[list[tuple], tuple]:
    """(the symbol table, its string table section): exactly one SYMTAB, its strings in a STRTAB."""
    tables = [s for s in sections if s[1] == SHT_SYMTAB]
    if len(tables) != 1:
        raise BadObject("object file without exactly one symbol table")
    st = tables[0]
    if st[9] != _SYM.size or st[5] % _SYM.size or st[6] >= len(sections) or sections[st[6]][1] != SHT_STRTAB:
        raise BadObject("malformed symbol table")
    return [_SYM.unpack_from(obj, st[4] + k) for k in range(0, st[5], _SYM.size)], sections[st[6]]


def _name(obj, strtab, at: int) -> bytes:
    """A symbol's name from its string table (BadObject if it runs out of the table)."""
    lo, hi = strtab[4], strtab[4] + strtab[5]
    end = obj.find(b"\0", lo + at, hi)
    if at >= strtab[5] or end < 0:
        raise BadObject("symbol name out of its string table")
    return bytes(obj[lo + at:end])


def _symbol_address(k: int, syms, strtab, obj, sections, placed, base) -> int | None:
    """The address of symbol `k` in the image, None for the GOT (_GLOBAL_OFFSET_TABLE_)."""
    if k >= len(syms):
        raise BadObject("relocation against a symbol out of the table")
    name, _info, _other, shndx, value, _size = syms[k]
    if shndx == SHN_UNDEF:
        if _name(obj, strtab, name) == GOT:
            return None
        raise BadObject(f"undefined symbol {_name(obj, strtab, name)!r}")
    if shndx >= SHN_LORESERVE or shndx not in placed or value > sections[shndx][5]:
        raise BadObject("relocation against a symbol outside the loaded sections")
    return base + placed[shndx] + value


def _relocate(obj, rela, sections, syms, strtab, placed, base, mapping) -> None:
    """Apply one RELA section to its (loaded) target section."""
    if rela[9] != _RELA.size or rela[5] % _RELA.size or rela[6] >= len(sections) \
            or sections[rela[6]][1] != SHT_SYMTAB:
        raise BadObject("malformed relocation section")
    target = rela[7]
    tsize, at = sections[target][5], placed[target]
    got = base
    for offset, info, addend in _RELA.iter_unpack(obj[rela[4]:rela[4] + rela[5]]):
        kind, k = info & 0xFFFFFFFF, info >> 32
        if kind not in KINDS:
            raise BadObject(f"relocation kind {kind} (the JIT's objects use GOTPC64, GOTOFF64, PC64 and 64)")
        if offset + 8 > tsize:
            raise BadObject("relocation outside its section")
        s = _symbol_address(k, syms, strtab, obj, sections, placed, base)
        p = base + at + offset
        if kind == R_X86_64_GOTPC64:
            if s is not None:
                raise BadObject("GOTPC64 relocation against a symbol other than the GOT")
            value = got + addend - p
        elif s is None:
            raise BadObject("relocation against the GOT other than GOTPC64")
        elif kind == R_X86_64_GOTOFF64:
            value = s + addend - got
        elif kind == R_X86_64_PC64:
            value = s + addend - p
        else:  # R_X86_64_64
            value = s + addend
        struct.pack_into("<Q", mapping, at + offset, value & MASK64)


def _functions(obj, syms, strtab, sections, placed, base) -> dict[str, int]:
    """{name: address} of the global functions defined in loaded code sections."""
    out = {}
    for name, info, _other, shndx, value, size in syms:
        if info >> 4 != STB_GLOBAL or info & 0xF != STT_FUNC or shndx not in placed:
            continue
        s = sections[shndx]
        if not s[2] & SHF_EXECINSTR or value + size > s[5]:
            raise BadObject("function outside its code section")
        out[_name(obj, strtab, name).decode("latin-1")] = base + placed[shndx] + value
    return out


def _protect(sections, loaded, placed, base, size) -> None:
    """Code pages read-execute, constants read-only, data read-write (the layout gives each group its own pages)."""
    spans = {}
    for i in loaded:
        g = _group(sections[i])
        lo, hi = placed[i], placed[i] + sections[i][5]
        a, b = spans.get(g, (lo, hi))
        spans[g] = (min(a, lo), max(b, hi))
    prot = {0: PROT_READ | PROT_EXEC, 1: PROT_READ, 2: PROT_READ | PROT_WRITE}
    if not _MPROTECT:
        fn = ctypes.CDLL(None, use_errno=True).mprotect
        fn.argtypes, fn.restype = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int), ctypes.c_int
        _MPROTECT.append(fn)
    mprotect = _MPROTECT[0]
    for g, (lo, hi) in spans.items():
        lo, hi = lo // PAGE * PAGE, -(-hi // PAGE) * PAGE
        if hi > lo and mprotect(base + lo, hi - lo, prot[g]) != 0:
            raise BadObject(f"mprotect refused the image: errno {ctypes.get_errno()}")
