"""AMDGPU code objects (ELF64, EM_AMDGPU, HSA ABI, code object v3-v6): read them into kernels (descriptor, code,
metadata) and a loadable image, and write loadable ET_DYN objects from hand-made kernels without a linker.

Facts (e_flags, relocation types, the NT_AMDGPU_METADATA note) follow LLVM's AMDGPUUsage. pyelftools parses the
ELF, msgpack the metadata; everything they return is checked here so a malformed file raises CodeObjectError.
Reading needs section headers (as ROCm's loader does) and refuses GOT relocations, which only a linker resolves.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO

import msgpack
from elftools.elf.elffile import ELFFile

from simgpu.isa.errors import CodeObjectError
from simgpu.isa.kdescriptor import KD_SIZE, KernelDescriptor, KernelDescriptorError, group_segment_limit
from simgpu.isa.metadata import check_metadata

# The target-ID grammar and the e_flags facts live in target_id; TARGETS is re-exported for compiler.llvm.
from simgpu.isa.target_id import (
    TARGETS,  # noqa: F401
    TargetIDError,
    check_flags,
    e_flags_for,
    parse_processor,
    parse_target_id,
    processor_from_flags,
    target_from_flags,
)

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
NT_AMDGPU_METADATA = 32
# e_ident[EI_ABIVERSION] -> code object version (ELFABIVERSION_AMDGPU_HSA_V3..V6).
CODE_OBJECT_VERSIONS = {1: 3, 2: 4, 3: 5, 4: 6}
# Images past this are refused: a corrupt p_memsz or sh_size must not make us allocate gigabytes.
MAX_IMAGE_SIZE = 1 << 28

# R_AMDGPU_* relocation types (AMDGPUUsage, "Relocation Records").
R_AMDGPU_NONE, R_AMDGPU_ABS32_LO, R_AMDGPU_ABS32_HI, R_AMDGPU_ABS64 = 0, 1, 2, 3
R_AMDGPU_REL32, R_AMDGPU_REL64, R_AMDGPU_ABS32 = 4, 5, 6
R_AMDGPU_REL32_LO, R_AMDGPU_REL32_HI, R_AMDGPU_RELATIVE64, R_AMDGPU_REL16 = 10, 11, 13, 14
_RELOC_WIDTH = {R_AMDGPU_ABS32_LO: 4, R_AMDGPU_ABS32_HI: 4, R_AMDGPU_ABS64: 8, R_AMDGPU_REL32: 4, R_AMDGPU_REL64: 8,
                R_AMDGPU_ABS32: 4, R_AMDGPU_REL32_LO: 4, R_AMDGPU_REL32_HI: 4, R_AMDGPU_RELATIVE64: 8,
                R_AMDGPU_REL16: 2}
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4


@dataclass(frozen=True)
class Symbol:
    """A defined symbol; `value` is its address in the image (or its raw value for SHN_ABS symbols)."""

    name: str
    value: int
    size: int
    type: str  # "FUNC", "OBJECT", "NOTYPE", ... (STT_ without the prefix)
    binding: str  # "GLOBAL", "LOCAL", "WEAK"
    section: str | None  # None for SHN_ABS


@dataclass(frozen=True)
class Relocation:
    """A relocation in image coordinates: patch `offset` with `type`'s formula of S, A, P and the load base B."""

    offset: int
    type: int
    symbol: str
    symbol_value: int
    addend: int
    symbol_moves: bool  # S shifts with the load base (symbol defined in a section, not SHN_ABS/undefined)


@dataclass
class Kernel:
    """One kernel: its descriptor, where descriptor and code sit in the image, its code and its metadata."""

    name: str
    descriptor: KernelDescriptor
    descriptor_address: int
    entry_address: int
    code: bytes
    metadata: dict = field(default_factory=dict)


@dataclass
class CodeObject:
    """A code object read into kernels and a loadable image.

    Addresses are offsets in `image`, which is the code object as loaded at virtual address 0 (relocations applied
    for that base); `relocated_image(base)` gives it for any other load address.
    """

    kernels: dict[str, Kernel]
    metadata: dict
    target: str
    elf_type: str
    image: bytes
    text_address: int
    text: bytes
    code_object_version: int
    e_flags: int
    symbols: dict[str, Symbol]
    relocations: list[Relocation]
    section_addresses: dict[str, int]  # loaded sections' image addresses, by name (the first of a name)
    processor: str = ""  # "gfx1100": the target ID's processor, which e_flags agree with ("" when neither is known)

    def kernel(self, name: str) -> Kernel:
        """The kernel called `name`; KeyError lists the kernels there are."""
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"no kernel {name!r} in code object (kernels: {sorted(self.kernels)})") from None

    def relocated_image(self, base: int) -> bytes:
        """The image as it must be in memory when loaded at virtual address `base`."""
        image = bytearray(self.image)
        for rel in self.relocations:
            _apply_relocation(image, rel, base)
        return bytes(image)


# ----------------------------------------------------------------------------------------------- reading


@dataclass
class _Section:
    index: int
    name: str
    type: str | int
    flags: int
    addr: int
    size: int
    link: int
    info: int
    align: int
    data: bytes
    obj: object  # the pyelftools Section, for symbols, relocations and notes


@dataclass
class _RawSymbol:
    name: str
    value: int
    size: int
    type: str
    binding: str
    shndx: int | str


@dataclass
class _Elf:
    """What read_code_object works on once pyelftools' answers have been checked."""

    data: bytes
    elf: ELFFile
    elf_type: str
    sections: list[_Section]
    addr: dict[int, int] = field(default_factory=dict)  # section index -> image address (SHF_ALLOC only)
    image: bytearray = field(default_factory=bytearray)
    symtabs: dict[int, list[_RawSymbol]] = field(default_factory=dict)  # section index -> its symbols


@contextmanager
def _guard(where: str) -> Iterator[None]:
    """Turn whatever pyelftools raises on malformed input into CodeObjectError naming `where`."""
    try:
        yield
    except CodeObjectError:
        raise
    except Exception as e:  # pyelftools raises ELFError, ELFParseError, struct.error, IndexError, ... on bad input
        raise CodeObjectError(f"{where}: malformed ELF ({type(e).__name__}: {e})") from e


def read_code_object(data: bytes) -> CodeObject:
    """Read an AMDGPU code object (ET_DYN from a linker, or ET_REL from a compiler) into a CodeObject."""
    data = bytes(data)
    version = _check_ident(data)
    with _guard("ELF header"):
        elf = ELFFile(BytesIO(data))
        elf_type = elf["e_type"]
        e_flags = elf["e_flags"]
    if elf_type not in ("ET_DYN", "ET_REL"):
        raise CodeObjectError(f"ELF header: e_type {elf_type} is not ET_DYN or ET_REL")
    ctx = _Elf(data, elf, elf_type, _read_sections(elf, data))
    if elf_type == "ET_DYN":
        _layout_segments(ctx)
    else:
        _layout_sections(ctx)
    symtab = _symbol_table(ctx)
    relocations = _relocations(ctx)
    for rel in relocations:
        _apply_relocation(ctx.image, rel, 0)
    symbols = _named_symbols(ctx, symtab)
    metadata = _metadata(ctx)
    target, processor = _target(metadata, e_flags, version)
    text_address, text = _text(ctx)
    return CodeObject(kernels=_kernels(ctx, symbols, metadata, processor), metadata=metadata,
                      target=target, elf_type=elf_type, image=bytes(ctx.image),
                      text_address=text_address, text=text, code_object_version=version, e_flags=e_flags,
                      symbols=symbols, relocations=relocations, section_addresses=_section_addresses(ctx),
                      processor=processor)


def _target(metadata: dict, e_flags: int, version: int) -> tuple[str, str]:
    """(target ID, processor): the metadata's amdhsa.target parsed by its grammar and checked against e_flags, or,
    for objects without one (v3, or no note), what e_flags name."""
    if "amdhsa.target" not in metadata:
        return target_from_flags(e_flags), processor_from_flags(e_flags) or ""
    text = metadata["amdhsa.target"]
    try:
        tid = parse_target_id(text)
    except TargetIDError as e:
        raise CodeObjectError(f"metadata amdhsa.target: {e}") from None
    # Code object v3 lays its feature bits out differently (EF_AMDGPU_FEATURE_*_V3); compare only the processor.
    mismatch = check_flags(tid, e_flags, features=version >= 4)
    if mismatch is not None:
        raise CodeObjectError(f"ELF header e_flags disagree with metadata amdhsa.target {text!r}: {mismatch}")
    return text, tid.processor


def _section_addresses(ctx: _Elf) -> dict[str, int]:
    """Image address of each loaded section, by name."""
    out: dict[str, int] = {}
    for sec in ctx.sections:
        if sec.index in ctx.addr:
            out.setdefault(sec.name, ctx.addr[sec.index])
    return out


def _check_ident(data: bytes) -> int:
    """Check the bytes pyelftools would misread (class, byte order, OS ABI) and return the code object version."""
    if len(data) < 64:
        raise CodeObjectError(f"ELF header: file is {len(data)} bytes, an ELF64 header needs 64")
    if data[:4] != b"\x7fELF":
        raise CodeObjectError(f"ELF header at offset 0: bad magic {data[:4].hex()}, expected 7f454c46")
    if data[4] != 2 or data[5] != 1:
        raise CodeObjectError(f"ELF header at offset 4: class {data[4]} / data {data[5]}: not ELF64 little-endian")
    machine = int.from_bytes(data[18:20], "little")
    if machine != EM_AMDGPU:
        raise CodeObjectError(f"ELF header at offset 18: e_machine {machine} is not EM_AMDGPU ({EM_AMDGPU})")
    if data[7] != ELFOSABI_AMDGPU_HSA:
        raise CodeObjectError(f"ELF header at offset 7: OS ABI {data[7]} is not ELFOSABI_AMDGPU_HSA (64)")
    if data[8] not in CODE_OBJECT_VERSIONS:
        raise CodeObjectError(f"ELF header at offset 8: ABI version {data[8]} is not code object v3-v6 (1-4)")
    return CODE_OBJECT_VERSIONS[data[8]]


def _read_sections(elf: ELFFile, data: bytes) -> list[_Section]:
    """Every section header, with bounds checked against the file."""
    with _guard("section header table"):
        count, shoff, entsize = elf.num_sections(), elf["e_shoff"], elf["e_shentsize"]
    if count == 0:
        raise CodeObjectError("section header table: the file has no section headers")
    if entsize != 64 or shoff + count * 64 > len(data):
        raise CodeObjectError(f"section header table at offset {shoff:#x}: {count} entries of {entsize} bytes "
                              f"do not fit in the {len(data)}-byte file")
    sections = []
    for i in range(count):
        with _guard(f"section header {i}"):
            sec = elf.get_section(i)
            h = sec.header
            name, stype, offset, size = sec.name, h["sh_type"], h["sh_offset"], h["sh_size"]
            flags, addr, link, info, align = h["sh_flags"], h["sh_addr"], h["sh_link"], h["sh_info"], h["sh_addralign"]
        if stype == "SHT_NOBITS":
            blob = b""
        elif offset + size > len(data):
            raise CodeObjectError(f"section {i} ({name}): bytes {offset:#x}..{offset + size:#x} lie past the end "
                                  f"of the {len(data)}-byte file")
        else:
            blob = data[offset:offset + size]
        sections.append(_Section(i, name, stype, flags, addr, size, link, info, align, blob, sec))
    return sections


def _layout_segments(ctx: _Elf) -> None:
    """ET_DYN: the image is the file laid out by its PT_LOAD segments; sections keep their sh_addr."""
    with _guard("program header table"):
        count, phoff = ctx.elf.num_segments(), ctx.elf["e_phoff"]
        if phoff + count * 56 > len(ctx.data):
            raise CodeObjectError(f"program header table at offset {phoff:#x}: {count} entries do not fit")
        loads = [s.header for s in ctx.elf.iter_segments() if s["p_type"] == "PT_LOAD"]
    if not loads:
        raise CodeObjectError("program header table: no PT_LOAD segment")
    end = max(h["p_vaddr"] + h["p_memsz"] for h in loads)
    if end > MAX_IMAGE_SIZE:
        raise CodeObjectError(f"program header table: segments reach {end:#x}, past the {MAX_IMAGE_SIZE:#x} limit")
    ctx.image = bytearray(end)
    for i, h in enumerate(loads):
        off, vaddr, filesz = h["p_offset"], h["p_vaddr"], h["p_filesz"]
        if filesz > h["p_memsz"] or off + filesz > len(ctx.data):
            raise CodeObjectError(f"PT_LOAD segment {i}: file bytes {off:#x}+{filesz:#x} exceed the file "
                                  f"or the segment's memory size {h['p_memsz']:#x}")
        ctx.image[vaddr:vaddr + filesz] = ctx.data[off:off + filesz]
    for sec in ctx.sections:
        if sec.flags & SHF_ALLOC:
            if sec.addr + sec.size > end:
                raise CodeObjectError(f"section {sec.index} ({sec.name}) at {sec.addr:#x}+{sec.size:#x} "
                                      f"lies outside the loaded segments (end {end:#x})")
            ctx.addr[sec.index] = sec.addr


def _layout_sections(ctx: _Elf) -> None:
    """ET_REL: place the SHF_ALLOC sections one after another, in index order and aligned, from address 0."""
    cursor = 0
    for sec in ctx.sections:
        if not sec.flags & SHF_ALLOC:
            continue
        align = max(sec.align, 1)
        if align & (align - 1):
            raise CodeObjectError(f"section {sec.index} ({sec.name}): alignment {align} is not a power of two")
        cursor = -(-cursor // align) * align
        if cursor + sec.size > MAX_IMAGE_SIZE:
            raise CodeObjectError(f"section {sec.index} ({sec.name}): image would reach past {MAX_IMAGE_SIZE:#x}")
        ctx.addr[sec.index] = cursor
        cursor += sec.size
    ctx.image = bytearray(cursor)
    for sec in ctx.sections:
        if sec.index in ctx.addr and sec.data:
            ctx.image[ctx.addr[sec.index]:ctx.addr[sec.index] + sec.size] = sec.data


def _symbols_of(ctx: _Elf, index: int) -> list[_RawSymbol]:
    """The entries of the symbol table in section `index` (parsed once)."""
    if index in ctx.symtabs:
        return ctx.symtabs[index]
    if not 0 < index < len(ctx.sections) or ctx.sections[index].type not in ("SHT_SYMTAB", "SHT_DYNSYM"):
        raise CodeObjectError(f"section link {index} does not name a symbol table")
    sec = ctx.sections[index]
    with _guard(f"symbol table {sec.name} (section {index})"):
        if sec.obj.header["sh_entsize"] != 24:
            raise CodeObjectError(f"symbol table {sec.name}: entry size {sec.obj.header['sh_entsize']} is not 24")
        out = []
        for s in sec.obj.iter_symbols():
            e = s.entry
            out.append(_RawSymbol(s.name, e["st_value"], e["st_size"], str(e["st_info"]["type"]).removeprefix("STT_"),
                                  str(e["st_info"]["bind"]).removeprefix("STB_"), e["st_shndx"]))
    ctx.symtabs[index] = out
    return out


def _symbol_table(ctx: _Elf) -> int | None:
    """Index of .symtab, or of .dynsym when the file is stripped, or None."""
    for kind in ("SHT_SYMTAB", "SHT_DYNSYM"):
        for sec in ctx.sections:
            if sec.type == kind:
                return sec.index
    return None


def _resolve(ctx: _Elf, sym: _RawSymbol, where: str) -> tuple[int, bool]:
    """A symbol's value in the image and whether it moves with the load base."""
    if sym.shndx == "SHN_ABS":
        return sym.value, False
    if sym.shndx == "SHN_UNDEF":
        if sym.binding == "WEAK" or not sym.name:
            return 0, False
        raise CodeObjectError(f"{where}: undefined symbol {sym.name!r} (the object needs linking with its libraries)")
    if not isinstance(sym.shndx, int) or sym.shndx not in ctx.addr:
        raise CodeObjectError(f"{where}: symbol {sym.name!r} is in section {sym.shndx}, which is not loaded")
    base = ctx.addr[sym.shndx] if ctx.elf_type == "ET_REL" else 0
    return base + sym.value, True


def _relocations(ctx: _Elf) -> list[Relocation]:
    """Relocations to apply: all of an ET_REL's loaded sections, an ET_DYN's dynamic ones."""
    out = []
    for sec in ctx.sections:
        if sec.type not in ("SHT_RELA", "SHT_REL"):
            continue
        if ctx.elf_type == "ET_REL":
            if sec.info not in ctx.addr:
                continue  # relocations of a section that is not loaded (debug info, ...)
            base = ctx.addr[sec.info]
            limit = ctx.sections[sec.info].size
        elif sec.flags & SHF_ALLOC:
            base, limit = 0, len(ctx.image)
        else:
            continue  # --emit-relocs leftovers in a linked file, already applied
        out.extend(_relocations_of(ctx, sec, base, limit))
    return out


def _relocations_of(ctx: _Elf, sec: _Section, base: int, limit: int) -> Iterator[Relocation]:
    """The entries of one SHT_RELA/SHT_REL section, placed in the image."""
    if sec.size and not sec.data:
        raise CodeObjectError(f"relocation section {sec.name} has no bytes")
    symbols = _symbols_of(ctx, sec.link) if sec.link else []
    with _guard(f"relocation section {sec.name} (section {sec.index})"):
        entries = [r.entry for r in sec.obj.iter_relocations()]
    for i, e in enumerate(entries):
        where = f"relocation {i} of {sec.name} (offset {e['r_offset']:#x})"
        rtype, index = e["r_info_type"], e["r_info_sym"]
        if rtype == R_AMDGPU_NONE:
            continue
        if rtype not in _RELOC_WIDTH:
            raise CodeObjectError(f"{where}: relocation type {rtype} is not supported (GOT relocations need a linker)")
        if e["r_offset"] + _RELOC_WIDTH[rtype] > limit:
            raise CodeObjectError(f"{where}: place lies outside its section ({limit:#x} bytes)")
        if index >= max(len(symbols), 1):
            raise CodeObjectError(f"{where}: symbol index {index} is past the symbol table")
        sym = symbols[index] if index else _RawSymbol("", 0, 0, "NOTYPE", "LOCAL", "SHN_UNDEF")
        value, moves = _resolve(ctx, sym, where)
        place = base + e["r_offset"]
        addend = e["r_addend"] if sec.type == "SHT_RELA" else _read_signed(ctx.image, place, _RELOC_WIDTH[rtype])
        yield Relocation(place, rtype, sym.name, value, addend, moves)


def _read_signed(image: bytearray, offset: int, width: int) -> int:
    """The implicit addend of an SHT_REL entry."""
    return int.from_bytes(image[offset:offset + width], "little", signed=True)


def _apply_relocation(image: bytearray, rel: Relocation, base: int) -> None:
    """Patch one relocation for an image loaded at `base`, by AMDGPUUsage's formulas."""
    s = rel.symbol_value + (base if rel.symbol_moves else 0)
    a, p = rel.addend, base + rel.offset
    value = {R_AMDGPU_ABS32_LO: s + a, R_AMDGPU_ABS32_HI: (s + a) >> 32, R_AMDGPU_ABS64: s + a,
             R_AMDGPU_REL32: s + a - p, R_AMDGPU_REL64: s + a - p, R_AMDGPU_ABS32: s + a,
             R_AMDGPU_REL32_LO: s + a - p, R_AMDGPU_REL32_HI: (s + a - p) >> 32, R_AMDGPU_RELATIVE64: base + a,
             R_AMDGPU_REL16: (s + a - p - 4) >> 2}[rel.type]
    width = _RELOC_WIDTH[rel.type]
    image[rel.offset:rel.offset + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")


def _named_symbols(ctx: _Elf, symtab: int | None) -> dict[str, Symbol]:
    """Defined, named symbols by name (global ones win over local ones of the same name)."""
    if symtab is None:
        return {}
    out: dict[str, Symbol] = {}
    for sym in _symbols_of(ctx, symtab):
        if not sym.name or sym.shndx == "SHN_UNDEF" or sym.type in ("SECTION", "FILE"):
            continue
        if sym.shndx != "SHN_ABS" and (not isinstance(sym.shndx, int) or sym.shndx not in ctx.addr):
            continue  # not in the image (debug sections, COMMON)
        value, _ = _resolve(ctx, sym, f"symbol {sym.name!r}")
        section = None if sym.shndx == "SHN_ABS" else ctx.sections[sym.shndx].name
        replaces_local = sym.name in out and out[sym.name].binding == "LOCAL" and sym.binding != "LOCAL"
        if sym.name not in out or replaces_local:
            out[sym.name] = Symbol(sym.name, value, sym.size, sym.type, sym.binding, section)
    return out


def _metadata(ctx: _Elf) -> dict:
    """The NT_AMDGPU_METADATA msgpack map, or {} when the object has none."""
    for sec in ctx.sections:
        if sec.type != "SHT_NOTE":
            continue
        if sec.size and not sec.data:
            raise CodeObjectError(f"note section {sec.name} has no bytes")
        with _guard(f"note section {sec.name} (section {sec.index})"):
            notes = [(n["n_name"], n["n_type"], n["n_desc"], n["n_offset"]) for n in sec.obj.iter_notes()]
        for name, ntype, desc, offset in notes:
            if name == "AMDGPU" and ntype in (NT_AMDGPU_METADATA, "NT_AMDGPU_METADATA"):
                return _unpack_metadata(desc, f"note at offset {offset:#x} in {sec.name}")
    return {}


def _unpack_metadata(desc: object, where: str) -> dict:
    """Decode the msgpack metadata and check the parts read_code_object relies on."""
    if not isinstance(desc, bytes | bytearray):
        raise CodeObjectError(f"{where}: metadata descriptor is not raw bytes")
    try:
        meta = msgpack.unpackb(bytes(desc), raw=False)
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        raise CodeObjectError(f"{where}: bad msgpack metadata ({type(e).__name__}: {e})") from e
    return check_metadata(meta, where)  # the schema (simgpu.isa.metadata)


def _text(ctx: _Elf) -> tuple[int, bytes]:
    """Address and bytes of .text (or of the first executable section) as the file stores them, before
    relocation: what a disassembler lists (llvm-objdump -d)."""
    execs = [s for s in ctx.sections if s.index in ctx.addr and s.flags & SHF_EXECINSTR]
    if not execs:
        return 0, b""
    sec = next((s for s in execs if s.name == ".text"), execs[0])
    addr = ctx.addr[sec.index]
    return addr, bytes(sec.data[:sec.size])


def _kernels(ctx: _Elf, symbols: dict[str, Symbol], metadata: dict, processor: str = "") -> dict[str, Kernel]:
    """Kernels named by the metadata, then any other `<name>.kd` symbol."""
    wanted = [(k[".name"], k.get(".symbol", k[".name"] + ".kd"), k) for k in metadata.get("amdhsa.kernels", [])]
    described = {sym for _, sym, _ in wanted}
    wanted += [(s.name[:-3], s.name, {}) for s in symbols.values()
               if s.name.endswith(".kd") and s.type == "OBJECT" and s.name not in described]
    kernels: dict[str, Kernel] = {}
    for name, symbol, meta in wanted:
        if name in kernels:
            raise CodeObjectError(f"metadata: two kernels are named {name!r}")
        kernels[name] = _kernel(ctx, symbols, name, symbol, meta, processor)
    return kernels


def _kernel(ctx: _Elf, symbols: dict[str, Symbol], name: str, symbol: str, meta: dict, processor: str = "") -> Kernel:
    """One kernel from its descriptor symbol."""
    kd_sym = symbols.get(symbol)
    if kd_sym is None or kd_sym.section is None:
        raise CodeObjectError(f"kernel {name!r}: descriptor symbol {symbol!r} is not defined in a loaded section")
    kd_addr = kd_sym.value
    if kd_addr + KD_SIZE > len(ctx.image):
        raise CodeObjectError(f"kernel {name!r}: descriptor at {kd_addr:#x} lies past the image end")
    kd = KernelDescriptor.from_bytes(bytes(ctx.image[kd_addr:kd_addr + KD_SIZE]))
    try:
        kd.check(group_segment_limit(processor))
    except KernelDescriptorError as e:
        raise CodeObjectError(f"kernel {name!r}: descriptor {symbol!r} at {kd_addr:#x}: {e}") from None
    if meta and meta[".wavefront_size"] != kd.wavefront_size:
        raise CodeObjectError(f"kernel {name!r}: metadata .wavefront_size {meta['.wavefront_size']} disagrees with "
                              f"its descriptor (wave{kd.wavefront_size}: ENABLE_WAVEFRONT_SIZE32 "
                              f"{int(kd.enable_wavefront_size32)})")
    entry = kd_addr + kd.kernel_code_entry_byte_offset
    section = next((s for s in ctx.sections if s.index in ctx.addr and s.flags & SHF_EXECINSTR
                    and ctx.addr[s.index] <= entry < ctx.addr[s.index] + s.size), None)
    if section is None:
        raise CodeObjectError(f"kernel {name!r}: entry {entry:#x} (descriptor {kd_addr:#x} + "
                              f"{kd.kernel_code_entry_byte_offset:#x}) is not in an executable section")
    return Kernel(name, kd, kd_addr, entry, _code_at(ctx, symbols, entry, section), meta)


def _code_at(ctx: _Elf, symbols: dict[str, Symbol], entry: int, section: _Section) -> bytes:
    """A kernel's code: its function symbol's size, else up to the next function or the end of its section."""
    end = ctx.addr[section.index] + section.size
    funcs = [s for s in symbols.values() if s.type == "FUNC" and s.section == section.name]
    own = next((s for s in funcs if s.value == entry and s.size), None)
    if own is not None:
        end = min(end, entry + own.size)
    else:
        end = min([s.value for s in funcs if s.value > entry], default=end)
    return bytes(ctx.image[entry:end])


# ----------------------------------------------------------------------------------------------- writing

PAGE = 0x1000
S_CODE_END = 0xBF9F0000  # gfx11 s_code_end: padding after code, as LLVM emits it
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_PT_LOAD, _PT_DYNAMIC, _PT_NOTE = 1, 2, 4
_SHT = {"NULL": 0, "PROGBITS": 1, "SYMTAB": 2, "STRTAB": 3, "HASH": 5, "DYNAMIC": 6, "NOTE": 7, "DYNSYM": 11}
_DT_NULL, _DT_HASH, _DT_STRTAB, _DT_SYMTAB, _DT_STRSZ, _DT_SYMENT = 0, 4, 5, 6, 10, 11
_STB_GLOBAL, _STT_OBJECT, _STT_FUNC, _STV_PROTECTED = 1, 1, 2, 3


def kernel_metadata(name: str, kd: KernelDescriptor, meta: dict | None = None) -> dict:
    """A kernel's amdhsa.kernels entry: `meta` completed with the required keys, taken from the descriptor."""
    meta = dict(meta or {})
    for key, expected in ((".name", name), (".symbol", name + ".kd")):
        if meta.setdefault(key, expected) != expected:
            raise ValueError(f"kernel {name!r}: metadata {key} is {meta[key]!r}, expected {expected!r}")
    defaults = {".args": [], ".kernarg_segment_size": kd.kernarg_size, ".kernarg_segment_align": 8,
                ".group_segment_fixed_size": kd.group_segment_fixed_size,
                ".private_segment_fixed_size": kd.private_segment_fixed_size, ".wavefront_size": kd.wavefront_size,
                ".sgpr_count": kd.sgpr_count, ".vgpr_count": kd.vgpr_count, ".max_flat_workgroup_size": 1024,
                ".sgpr_spill_count": 0, ".vgpr_spill_count": 0, ".uses_dynamic_stack": bool(kd.uses_dynamic_stack)}
    return {k: meta.get(k, defaults.get(k)) for k in sorted({*meta, *defaults})}


def elf_hash(name: bytes) -> int:
    """The SysV ELF symbol hash (System V ABI, "Hash Table")."""
    h = 0
    for c in name:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        h = (h ^ (g >> 24)) & ~g & 0xFFFFFFFF
    return h


class _StrTab:
    """An ELF string table under construction."""

    def __init__(self) -> None:
        self.blob = bytearray(b"\0")
        self.index: dict[str, int] = {"": 0}

    def add(self, s: str) -> int:
        if s not in self.index:
            self.index[s] = len(self.blob)
            self.blob += s.encode() + b"\0"
        return self.index[s]


def _note(name: bytes, ntype: int, desc: bytes) -> bytes:
    """One ELF note: header, NUL-terminated name and descriptor, each padded to 4 bytes."""
    pad = lambda b: b + bytes(-len(b) % 4)  # noqa: E731
    return struct.pack("<III", len(name) + 1, len(desc), ntype) + pad(name + b"\0") + pad(desc)


def _hash_section(names: list[str]) -> bytes:
    """A SysV .hash table over the dynamic symbols (index 0 is the null symbol)."""
    nbucket = max(1, len(names) // 2 + 1)
    buckets, chains = [0] * nbucket, [0] * len(names)
    for i in range(1, len(names)):
        b = elf_hash(names[i].encode()) % nbucket
        chains[i], buckets[b] = buckets[b], i
    return struct.pack(f"<II{nbucket}I{len(names)}I", nbucket, len(names), *buckets, *chains)


def _kernel_code(kernels: list) -> tuple[bytes, list[int]]:
    """The .text bytes: each kernel at a 256-byte boundary, then s_code_end padding as LLVM writes it for gfx11."""
    text, offsets = bytearray(), []
    pad_word = S_CODE_END.to_bytes(4, "little")
    for _, code, _, _ in kernels:
        text += pad_word * (-len(text) % 256 // 4)
        offsets.append(len(text))
        text += code
    # Pad to the 128-byte cache line and add 3 more lines, so instruction prefetch never runs into other data.
    text += pad_word * (-len(text) % 128 // 4 + 3 * 128 // 4)
    return bytes(text), offsets


def _check_kernels(kernels: list) -> None:
    """Reject what would make an invalid code object, with ValueError."""
    names = [k[0] for k in kernels]
    if not kernels or len(set(names)) != len(names):
        raise ValueError(f"need at least one kernel and unique names, got {names}")
    for name, code, kd, _ in kernels:
        if not isinstance(name, str) or not name or "\0" in name:
            raise ValueError(f"bad kernel name {name!r}")
        if not isinstance(kd, KernelDescriptor) or len(code) % 4:
            raise ValueError(f"kernel {name!r}: need a KernelDescriptor and code of whole dwords")


def write_code_object(kernels: list[tuple[str, bytes, KernelDescriptor, dict | None]], target: str = "gfx1100",
                      code_object_version: int = 5) -> bytes:
    """A loadable ET_DYN code object holding `kernels` as (name, code, descriptor, metadata) tuples."""
    _check_kernels(kernels)
    abi = {v: k for k, v in CODE_OBJECT_VERSIONS.items()}.get(code_object_version)
    if abi is None:
        raise ValueError(f"code object version must be one of {sorted(CODE_OBJECT_VERSIONS.values())}")
    e_flags = e_flags_for(target)
    triple = str(parse_processor(target))
    text, code_offsets = _kernel_code(kernels)
    meta = {"amdhsa.kernels": [kernel_metadata(n, kd, m) for n, _, kd, m in kernels],
            "amdhsa.target": triple, "amdhsa.version": [1, 2]}
    w = _Writer(kernels, text, code_offsets)
    return w.build(_note(b"AMDGPU", NT_AMDGPU_METADATA, msgpack.packb(meta, use_bin_type=True)), e_flags, abi)


class _Writer:
    """Lays out and serialises the ET_DYN file: an R segment (note, dynsym, hash, dynstr, rodata), an RX segment
    (text), an RW segment (dynamic), then symtab, strtab, shstrtab and the section headers."""

    # Section indices, fixed by the order of the section headers written in build().
    NOTE, DYNSYM, HASH, DYNSTR, RODATA, TEXT, DYNAMIC, SYMTAB, STRTAB, SHSTRTAB = range(1, 11)
    NPHDR = 5

    def __init__(self, kernels: list, text: bytes, code_offsets: list[int]):
        self.kernels, self.text, self.code_offsets = kernels, text, code_offsets
        self.names = [""] + [sym for name, *_ in kernels for sym in (name, name + ".kd")]
        self.out = bytearray(_EHDR.size + self.NPHDR * _PHDR.size)
        self.text_addr = self.rodata_addr = 0

    def place(self, blob: bytes, align: int) -> int:
        """Append `blob` at the next `align`-aligned file offset and return that offset."""
        self.out += bytes(-len(self.out) % align)
        offset = len(self.out)
        self.out += blob
        return offset

    def symbol_table(self, strtab: _StrTab) -> bytes:
        """Symbol entries: null, then per kernel a FUNC at its code and an OBJECT at its descriptor."""
        entries = [bytes(_SYM.size)]
        for i, (name, code, _, _) in enumerate(self.kernels):
            entries.append(_SYM.pack(strtab.add(name), _STB_GLOBAL << 4 | _STT_FUNC, _STV_PROTECTED, self.TEXT,
                                     self.text_addr + self.code_offsets[i], len(code)))
            entries.append(_SYM.pack(strtab.add(name + ".kd"), _STB_GLOBAL << 4 | _STT_OBJECT, _STV_PROTECTED,
                                     self.RODATA, self.rodata_addr + KD_SIZE * i, KD_SIZE))
        return b"".join(entries)

    def descriptors(self) -> bytes:
        """The .rodata bytes: each kernel's descriptor, its entry offset pointing at its code."""
        out = b""
        for i, (_, _, kd, _) in enumerate(self.kernels):
            offset = self.text_addr + self.code_offsets[i] - (self.rodata_addr + KD_SIZE * i)
            out += kd.copy(kernel_code_entry_byte_offset=offset).to_bytes()
        return out

    def build(self, note: bytes, e_flags: int, abi: int) -> bytes:
        """The whole file."""
        dynstr = _StrTab()
        for name in self.names:
            dynstr.add(name)
        note_off = self.place(note, 4)
        dynsym_off = self.place(bytes(len(self.names) * _SYM.size), 8)  # filled in once addresses are known
        hash_blob = _hash_section(self.names)
        hash_off = self.place(hash_blob, 4)
        dynstr_off = self.place(bytes(dynstr.blob), 1)
        rodata_size = KD_SIZE * len(self.kernels)
        self.rodata_addr = rodata_off = self.place(bytes(rodata_size), 64)
        seg0_end = len(self.out)
        # Segment 0 has vaddr == file offset; later segments are shifted by whole pages, so no two segments share
        # a page and every vaddr stays congruent to its file offset modulo the page size.
        text_off = self.place(self.text, 256)
        self.text_addr = text_off + PAGE
        dynsym = self.symbol_table(dynstr)
        self.out[dynsym_off:dynsym_off + len(dynsym)] = dynsym
        self.out[rodata_off:rodata_off + rodata_size] = self.descriptors()
        dynamic = b"".join(struct.pack("<qQ", tag, val) for tag, val in (
            (_DT_HASH, hash_off), (_DT_SYMTAB, dynsym_off), (_DT_STRTAB, dynstr_off),
            (_DT_STRSZ, len(dynstr.blob)), (_DT_SYMENT, _SYM.size), (_DT_NULL, 0)))
        dyn_off = self.place(dynamic, 8)
        dyn_addr = dyn_off + 2 * PAGE
        strtab = _StrTab()
        symtab = self.symbol_table(strtab)
        symtab_off = self.place(symtab, 8)
        strtab_off = self.place(bytes(strtab.blob), 1)
        sections = [  # name, type, flags, addr, offset, size, link, info, align, entsize
            (".note", "NOTE", SHF_ALLOC, note_off, note_off, len(note), 0, 0, 4, 0),
            (".dynsym", "DYNSYM", SHF_ALLOC, dynsym_off, dynsym_off, len(dynsym), self.DYNSTR, 1, 8, _SYM.size),
            (".hash", "HASH", SHF_ALLOC, hash_off, hash_off, len(hash_blob), self.DYNSYM, 0, 4, 4),
            (".dynstr", "STRTAB", SHF_ALLOC, dynstr_off, dynstr_off, len(dynstr.blob), 0, 0, 1, 0),
            (".rodata", "PROGBITS", SHF_ALLOC, rodata_off, rodata_off, rodata_size, 0, 0, 64, 0),
            (".text", "PROGBITS", SHF_ALLOC | SHF_EXECINSTR, self.text_addr, text_off, len(self.text), 0, 0, 256, 0),
            (".dynamic", "DYNAMIC", SHF_ALLOC | SHF_WRITE, dyn_addr, dyn_off, len(dynamic), self.DYNSTR, 0, 8, 16),
            (".symtab", "SYMTAB", 0, 0, symtab_off, len(symtab), self.STRTAB, 1, 8, _SYM.size),
            (".strtab", "STRTAB", 0, 0, strtab_off, len(strtab.blob), 0, 0, 1, 0)]
        shstr = _StrTab()
        for name, *_ in sections + [(".shstrtab",)]:
            shstr.add(name)
        shstr_off = self.place(bytes(shstr.blob), 1)
        sections.append((".shstrtab", "STRTAB", 0, 0, shstr_off, len(shstr.blob), 0, 0, 1, 0))
        shoff = self.place(bytes(_SHDR.size) + b"".join(
            _SHDR.pack(shstr.index[name], _SHT[kind], *rest) for name, kind, *rest in sections), 8)
        phdrs = [(_PT_LOAD, 4, 0, 0, seg0_end, PAGE), (_PT_LOAD, 5, text_off, self.text_addr, len(self.text), PAGE),
                 (_PT_LOAD, 6, dyn_off, dyn_addr, len(dynamic), PAGE), (_PT_DYNAMIC, 6, dyn_off, dyn_addr,
                                                                        len(dynamic), 8),
                 (_PT_NOTE, 4, note_off, note_off, len(note), 4)]
        self.out[_EHDR.size:_EHDR.size + self.NPHDR * _PHDR.size] = b"".join(
            _PHDR.pack(t, f, off, va, va, size, size, al) for t, f, off, va, size, al in phdrs)
        ident = b"\x7fELF" + bytes([2, 1, 1, ELFOSABI_AMDGPU_HSA, abi]) + bytes(7)
        self.out[:_EHDR.size] = _EHDR.pack(ident, 3, EM_AMDGPU, 1, 0, _EHDR.size, shoff, e_flags, _EHDR.size,
                                           _PHDR.size, self.NPHDR, _SHDR.size, len(sections) + 1, self.SHSTRTAB)
        return bytes(self.out)
