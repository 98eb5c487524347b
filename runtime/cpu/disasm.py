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
            f"{m.get('lanes', 1)} work-item{'s' if m.get('lanes', 1) > 1 else ''} per pass, "
            f"{len(image.code)} bytes of x86-64")


def disasm_main(path: str, out) -> int | None:
    """`simgpu disasm` of a CPU kernel: an x86-64 code object, or a kernel cache entry (msgpack) holding one (a
    cached GPU kernel is listed with simgpu.isa.objdump). None when the file is neither (the caller tries the
    GPU disassembler); 1 with a message on stderr when it cannot be read."""
    import sys

    import msgpack

    from runtime.cpu.image import ImageError, read_image
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"simgpu disasm: {path}: {e}", file=sys.stderr)
        return 1
    if not data.startswith(b"\x7fELF"):
        try:
            entry = msgpack.unpackb(data, raw=False)
        except (ValueError, msgpack.exceptions.ExtraData):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("binary"), bytes):
            return None
        data = entry["binary"]
        if not _is_x86(data):
            from simgpu.isa.objdump import CodeObjectError, disassemble_text, read_code_object
            return _listed(path, data, out, read_code_object, CodeObjectError, disassemble_text,
                           lambda co: f"elf64-amdgpu ({co.target}, from the kernel cache)")
    elif not _is_x86(data):
        return None
    return _listed(path, data, out, read_image, ImageError, lambda image: [header(image), *listing(image)],
                   lambda image: "elf64-x86-64 (simgpu CPU kernel)")


def _is_x86(data: bytes) -> bool:
    return len(data) > 20 and data[:4] == b"\x7fELF" and int.from_bytes(data[18:20], "little") == 62


def _listed(path: str, data: bytes, out, read, error: type[Exception], lines, file_format) -> int:
    """Print the listing of the kernel in `data` as llvm-objdump lays one out: `read` it (an `error` is printed
    on stderr: 1), the file-format line (`file_format` of what was read), then its `lines`: 0."""
    import sys

    try:
        obj = read(data)
    except error as e:
        print(f"simgpu disasm: {path}: {e}", file=sys.stderr)
        return 1
    print(f"\n{path}:\tfile format {file_format(obj)}\n", file=out)
    for line in lines(obj):
        print(line, file=out)
    return 0
