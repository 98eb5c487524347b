"""The CPU device's code object: an ELF64 x86-64 relocatable object (ET_REL, EM_X86_64) with the kernel's code in
.text, its labels as symbols (the kernel's entry global, the rest local), and the launch metadata as a msgpack
note (owner "SIMGPU", type NT_SIMGPU_CPU) in .note.simgpu. Nothing needs relocating: the code is
position-independent except for the fixed addresses of runtime.cpu.abi.

Being a plain ELF object, `llvm-objdump -d` and `readelf` read it too. pyelftools parses it here and everything
it returns is checked, so a damaged file raises ImageError naming what is wrong.

Metadata keys: name, entry (offset), params (buffer arguments), lds (bytes), fibers (bytes of the fiber
region: scheduler table and one stack per work-item; 0 without barriers), workitems (per workgroup), grid
and block (launch geometry, HIP convention), frame (bytes of the stack frame), traps ({ud2 offset: offset
of the loop branch it guards}); optional: lanes (work-items of local x one pass of the code runs, 4 when the
backend vectorized it; 1 when absent).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from io import BytesIO

import msgpack
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

EM_X86_64 = 62
NT_SIMGPU_CPU = 1
NOTE_OWNER = b"SIMGPU"
_REQUIRED = {"name": str, "entry": int, "params": int, "lds": int, "fibers": int, "workitems": int,
             "grid": list, "block": list, "frame": int, "traps": dict}


class ImageError(ValueError):
    """A CPU code object that cannot be loaded, and why."""


@dataclass
class Image:
    """A loaded CPU code object: code, metadata (module docstring) and symbols (offset, name) by offset."""

    code: bytes
    meta: dict
    symbols: list[tuple[int, str]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.meta["name"]

    def symbol_at(self, offset: int) -> str:
        """`name+0xOFF` of the nearest symbol at or before a code offset."""
        best = None
        for off, name in self.symbols:
            if off <= offset and (best is None or off >= best[0]):
                best = (off, name)
        if best is None:
            return hex(offset)
        return best[1] + (f"+{offset - best[0]:#x}" if offset != best[0] else "")


# ---- writing ---------------------------------------------------------------------------------------------------
def _note(desc: bytes) -> bytes:
    name = NOTE_OWNER + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)  # noqa: E731
    return struct.pack("<III", len(name), len(desc), NT_SIMGPU_CPU) + pad(name) + pad(desc)


class _Strings:
    def __init__(self) -> None:
        self.data = bytearray(b"\0")
        self.at: dict[str, int] = {}

    def add(self, s: str) -> int:
        if s not in self.at:
            self.at[s] = len(self.data)
            self.data += s.encode() + b"\0"
        return self.at[s]


def write_image(code: bytes, meta: dict, symbols: list[tuple[int, str]]) -> bytes:
    """The ELF object of a kernel: code, metadata (module docstring), local symbols besides the entry."""
    for k, t in _REQUIRED.items():
        if not isinstance(meta.get(k), t):
            raise ImageError(f"metadata {k!r} missing or not {t.__name__}")
    strtab, shstr = _Strings(), _Strings()
    syms = [struct.pack("<IBBHQQ", 0, 0, 0, 0, 0, 0)]
    text_ndx = 1
    for off, name in sorted(symbols):
        if name != meta["name"]:
            syms.append(struct.pack("<IBBHQQ", strtab.add(name), (0 << 4) | 0, 0, text_ndx, off, 0))  # LOCAL NOTYPE
    first_global = len(syms)
    syms.append(struct.pack("<IBBHQQ", strtab.add(meta["name"]), (1 << 4) | 2, 0, text_ndx, meta["entry"],
                            len(code) - meta["entry"]))  # GLOBAL FUNC
    note = _note(msgpack.packb(meta, use_bin_type=True))
    sections = [  # name, type, flags, data, link, info, align, entsize
        (".text", 1, 0x6, code, 0, 0, 16, 0),
        (".note.simgpu", 7, 0, note, 0, 0, 4, 0),
        (".symtab", 2, 0, b"".join(syms), 4, first_global, 8, 24),
        (".strtab", 3, 0, bytes(strtab.data), 0, 0, 1, 0),
        (".shstrtab", 3, 0, b"", 0, 0, 1, 0),
    ]
    for s in sections:
        shstr.add(s[0])
    sections[-1] = (*sections[-1][:3], bytes(shstr.data), *sections[-1][4:])
    body = bytearray(b"\0" * 64)
    offsets = []
    for s in sections:
        body += b"\0" * (-len(body) % s[6])
        offsets.append(len(body))
        body += s[3]
    body += b"\0" * (-len(body) % 8)
    shoff = len(body)
    body += b"\0" * 64  # the null section header
    for s, off in zip(sections, offsets, strict=True):
        name, typ, flags, data, link, info, align, entsize = s
        body += struct.pack("<IIQQQQIIQQ", shstr.add(name), typ, flags, 0, off, len(data), link, info, align, entsize)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    body[:64] = ident + struct.pack("<HHIQQQIHHHHHH", 1, EM_X86_64, 1, 0, 0, shoff, 0, 64, 0, 0, 64,
                                    len(sections) + 1, len(sections))
    return bytes(body)


# ---- reading ---------------------------------------------------------------------------------------------------
def read_image(data: bytes) -> Image:
    """The code, metadata and symbols of a CPU code object (ImageError for anything else)."""
    if not isinstance(data, (bytes, bytearray)) or data[:4] != b"\x7fELF":
        raise ImageError("not an ELF file")
    try:
        elf = ELFFile(BytesIO(bytes(data)))
        if elf.elfclass != 64 or elf["e_machine"] != "EM_X86_64":
            raise ImageError(f"not an x86-64 ELF64 object (machine {elf['e_machine']}, class {elf.elfclass})")
        text = elf.get_section_by_name(".text")
        note = elf.get_section_by_name(".note.simgpu")
        if text is None or note is None:
            raise ImageError("no .text or .note.simgpu section: not a simgpu CPU kernel")
        code = text.data()
        meta = _metadata(note.data())
        symbols = []
        symtab = elf.get_section_by_name(".symtab")
        for s in (symtab.iter_symbols() if symtab is not None else ()):
            if s.name and s["st_shndx"] == 1:
                symbols.append((int(s["st_value"]), s.name))
    except (ELFError, struct.error, ValueError, KeyError, IndexError, TypeError) as e:
        if isinstance(e, ImageError):
            raise
        raise ImageError(f"malformed ELF: {e}") from None
    if not 0 <= meta["entry"] < len(code):
        raise ImageError(f"entry {meta['entry']:#x} outside .text ({len(code)} bytes)")
    return Image(code, meta, sorted(symbols))


def _metadata(note: bytes) -> dict:
    if len(note) < 12:
        raise ImageError("truncated note")
    namesz, descsz, typ = struct.unpack_from("<III", note)
    name_end = 12 + namesz
    desc_at = 12 + namesz + (-namesz % 4)
    if typ != NT_SIMGPU_CPU or note[12:name_end].rstrip(b"\0") != NOTE_OWNER or desc_at + descsz > len(note):
        raise ImageError("the .note.simgpu note is not a SIMGPU CPU kernel note")
    try:
        meta = msgpack.unpackb(note[desc_at:desc_at + descsz], raw=False, strict_map_key=False)
    except (ValueError, msgpack.exceptions.ExtraData) as e:
        raise ImageError(f"bad metadata: {e}") from None
    if not isinstance(meta, dict):
        raise ImageError("metadata is not a map")
    for k, t in _REQUIRED.items():
        if not isinstance(meta.get(k), t):
            raise ImageError(f"metadata {k!r} missing or not {t.__name__}")
    return meta
