"""The oracles for gfx950 (CDNA4), which LLVM 19's llvm-mc does not know: two builds of a newer LLVM.

- llvmlite's LLVM 22 (in the project venv) compiles LLVM IR for gfx950. Its printer writes the canonical text of
  every instruction it emits (`compile_asm`), and `emit_object` the bytes of the same compile (`compile_ir`): the
  text of a compile, instruction by instruction, paired with its .text bytes is a golden pair as llvm-mc's
  -show-encoding would give it. llvmlite has no AMDGPU assembler or disassembler.
- Triton's code generator library (libtriton_amd_codegen.so, Triton 3.9's own LLVM) exports an assembler,
  `triton_amdgpu_assemble`, called here through ctypes: text -> the bytes LLVM encodes it to (the library is
  found through SIMGPU_LLVM22_CODEGEN or a Triton installation: the venv tools/gen_triton_corpus.py names). Its
  diagnostics go to the process's stderr, so each call reads them from a redirected fd 2.

Neither disassembles: a golden text is what LLVM printed (a compile) or what a tool wrote and LLVM assembled
(`kind` "asm" in the golden file; its spelling is checked as far as LLVM's assembler checks spellings).
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import struct
import sys
import tempfile
from functools import cache

from compiler.llvm import compile_asm, compile_ir

TRIPLE = "amdgcn-amd-amdhsa"
_CANDIDATES = ("/tmp/trivenv/lib/python3*/site-packages/triton/backends/amd/lib/libtriton_amd_codegen.so",)


def codegen_library() -> str | None:
    """Path of Triton's AMD code generator library, or None."""
    path = os.environ.get("SIMGPU_LLVM22_CODEGEN")
    if path:
        return path if os.path.exists(path) else None
    for pattern in _CANDIDATES:
        found = sorted(glob.glob(pattern))
        if found:
            return found[-1]
    return None


class Assembler:
    """LLVM's assembler for one processor (Triton's build), one call per source text."""

    def __init__(self, mcpu: str = "gfx950", path: str | None = None):
        path = path or codegen_library()
        if path is None:
            raise FileNotFoundError("Triton's libtriton_amd_codegen.so not found (SIMGPU_LLVM22_CODEGEN)")
        self.mcpu = mcpu
        self.lib = ctypes.CDLL(path)
        f = self.lib.triton_amdgpu_assemble
        f.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                      ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p)]
        f.restype = ctypes.c_int
        self.lib.triton_amdgpu_free.argtypes = [ctypes.c_void_p]
        self.lib.triton_amdgpu_revision.restype = ctypes.c_char_p
        self.revision = self.lib.triton_amdgpu_revision().decode()
        self._diag = tempfile.TemporaryFile()
        self._child: tuple[int, int, int] | None = None  # (pid, its request pipe, its answer pipe)

    def object(self, source: str) -> tuple[bytes | None, str]:
        """(the ELF object LLVM assembles `source` to, or None; its diagnostics). The assembler runs in a forked child:
        LLVM 22 aborts on some inputs (an inline constant as the 64-bit source of v_cvt_scalef32_sr_pk_fp4_f32
        fails an assertion), and a crash must count as a rejection, not end the caller (as tools/oracle.py treats
        llvm-mc's crashes). The child serves one source after another until it crashes (then the next call forks a
        new one): a fork per line cost a large test process ~50 ms of page-table copying."""
        if self._child is None:
            self._child = self._fork()
        pid, to_child, from_child = self._child
        data = source.encode()
        try:
            os.write(to_child, struct.pack("<I", len(data)) + data)
            head = _read_exact(from_child, 12)
        except BrokenPipeError:
            head = b""
        if len(head) < 12:  # the child died on this source
            self._close_child()
            return None, "LLVM crashed"
        failed, n, size = struct.unpack("<iII", head)
        diag = _read_exact(from_child, n).decode(errors="replace")
        obj = _read_exact(from_child, size)
        return (None if failed else obj), diag

    def _fork(self) -> tuple[int, int, int]:
        """A child that assembles each length-prefixed source it reads and answers (failed, len(diag), len(obj)),
        diag, obj."""
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: serve until the parent closes its end, then leave without cleanup
            try:
                os.close(down_w)
                os.close(up_r)
                while len(head := _read_exact(down_r, 4)) == 4:
                    source = _read_exact(down_r, struct.unpack("<I", head)[0]).decode()
                    data, diag = self._object(source)
                    d = diag.encode()
                    os.write(up_w, struct.pack("<iII", 0 if data is not None else 1, len(d), len(data or b""))
                             + d + (data or b""))
            finally:
                os._exit(0)
        os.close(down_r)
        os.close(up_w)
        return pid, down_w, up_r

    def _close_child(self) -> None:
        pid, to_child, from_child = self._child
        self._child = None
        os.close(to_child)
        os.close(from_child)
        os.waitpid(pid, 0)

    def _object(self, source: str) -> tuple[bytes | None, str]:
        text = f'.amdgcn_target "{TRIPLE}--{self.mcpu}"\n.text\n{source}\n'.encode()
        obj, size, err = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
        sys.stderr.flush()
        saved = os.dup(2)
        self._diag.seek(0)
        self._diag.truncate()
        os.dup2(self._diag.fileno(), 2)
        try:
            status = self.lib.triton_amdgpu_assemble(text, len(text), TRIPLE.encode(), self.mcpu.encode(), b"",
                                                     ctypes.byref(obj), ctypes.byref(size), ctypes.byref(err))
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        self._diag.seek(0)
        diag = self._diag.read().decode(errors="replace")
        if err.value:
            diag += ctypes.string_at(err.value).decode(errors="replace")
            self.lib.triton_amdgpu_free(err.value)
        if status:
            return None, diag
        data = ctypes.string_at(obj.value, size.value)
        self.lib.triton_amdgpu_free(obj.value)
        return data, diag

    def encode(self, line: str) -> bytes | None:
        """The bytes of one instruction (None when LLVM rejects it)."""
        obj, _ = self.object(line)
        return None if obj is None else text_section(obj)

    def error(self, line: str) -> str:
        """LLVM's first error for a line ("" when it assembles)."""
        obj, diag = self.object(line)
        m = re.search(r"error: (.*)", diag)
        return "" if obj is not None else (m.group(1) if m else diag.strip() or "rejected")


def _read_exact(fd: int, n: int) -> bytes:
    """n bytes from a pipe, or fewer when its writer is gone."""
    chunks, got = [], 0
    while got < n and (chunk := os.read(fd, min(n - got, 1 << 20))):
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def text_section(elf: bytes) -> bytes:
    """The .text section of an ELF64 relocatable object."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    for name, _type, _flags, _addr, offset, size in heads:
        if elf[names + name: elf.index(b"\0", names + name)] == b".text":
            return elf[offset: offset + size]
    raise ValueError("no .text section")


@cache
def assembler(mcpu: str = "gfx950") -> Assembler:
    return Assembler(mcpu)


_SKIP = (".", ";", "-")  # directives, comments, the metadata's YAML
S_NOP_0 = bytes.fromhex("000080bf")  # what LLVM aligns the next function's entry with


def instruction_lines(asm_text: str) -> list[str]:
    """The instructions of an LLVM assembly listing, in order (labels, directives, comments and metadata dropped)."""
    out = []
    in_metadata = False
    for raw in asm_text.splitlines():
        line = raw.split(";")[0].strip()
        if raw.startswith(".amdgpu_metadata") or raw.startswith("\t.amdgpu_metadata"):
            in_metadata = True
        if in_metadata:
            in_metadata = ".end_amdgpu_metadata" not in raw
            continue
        if not line or line.startswith(_SKIP) or line.endswith(":") or ":" in line.split()[0]:
            continue
        out.append(re.sub(r"\s+", " ", line))
    return out


def compiled_pairs(ir: str, mcpu: str = "gfx950") -> list[tuple[bytes, str]]:
    """(bytes, text) of every instruction llvmlite's LLVM 22 emits for `ir`: the text as its printer writes it, the
    bytes as its object holds them, split by the byte length Triton's assembler gives each line. ValueError when the
    two LLVMs disagree (the lines' bytes are not the object's .text)."""
    lines = instruction_lines(compile_asm(ir, mcpu=mcpu))
    text = text_section(compile_ir(ir, mcpu=mcpu))
    asm = assembler(mcpu)
    pairs, at = [], 0
    for line in lines:
        data = asm.encode(line)
        label = re.search(r"\s(\.L\w+)$", line)
        if data is None and label:  # a branch: its 16-bit offset as the object holds it, printed as llvm-mc does
            size = len(asm.encode(line.replace(label.group(1), "0")) or b"")
            offset = int.from_bytes(text[at: at + 2], "little", signed=True)
            line = line.replace(label.group(1), str(offset))
            data = asm.encode(line) if size else None
        if data is None:
            raise ValueError(f"Triton's LLVM rejects llvmlite's {line!r}: {asm.error(line)}")
        while text[at: at + len(data)] != data and text[at: at + 4] == S_NOP_0:  # padding between functions
            at += 4
        if text[at: at + len(data)] != data:
            raise ValueError(f"{line!r}: assembles to {data.hex()}, the object has {text[at: at + len(data)].hex()}")
        pairs.append((data, line))
        at += len(data)
    return pairs
