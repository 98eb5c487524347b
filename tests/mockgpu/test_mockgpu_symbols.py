"""mockgpu.symbols.ProcessCodeObjects: kernels whose loader put no ELF header into GPU memory (tinygrad's) are named
from the code objects in the client's own memory; whatever else lies there is skipped, never raised."""

import io
import os

from elftools.elf.elffile import ELFFile

from compiler.llvm import compile_ir
from mockgpu.symbols import ProcessCodeObjects
from tests import DATA


class CodeAt:
    """An MMU that holds `code` at `va` (zeros elsewhere)."""

    def __init__(self, va: int, code: bytes):
        self.va, self.code = va, code

    def read(self, vmid: int, va: int, n: int) -> bytes:
        off = va - self.va
        return (self.code[off:off + n] if off >= 0 else b"").ljust(n, b"\0")


def _relocatable() -> bytes:
    return compile_ir((DATA / "codeobjects" / "vadd.ll").read_text())


def _text(obj: bytes) -> bytes:
    return ELFFile(io.BytesIO(obj)).get_section_by_name(".text").data()


def test_a_kernel_is_named_from_the_relocatable_object_in_the_process():
    obj = bytearray(_relocatable())  # alive in this process's heap while the lookup reads it
    mmu = CodeAt(0x7000_0000_0000, _text(bytes(obj)))
    assert ProcessCodeObjects(os.getpid()).kernel_symbol(mmu, 0, 0x7000_0000_0000) == "vadd"
    del obj


def test_code_no_object_holds_and_a_damaged_object_are_no_name():
    obj = bytearray(_relocatable())
    damaged = bytearray(obj[:64]) + bytes(len(obj) - 64)  # the header, the sections zeroed
    objects = ProcessCodeObjects(os.getpid())
    assert objects.kernel_symbol(CodeAt(0x1000, b"\x01\x02\x03\x04" * 16), 0, 0x1000) is None
    del obj, damaged


def test_a_process_that_is_gone_names_nothing():
    assert ProcessCodeObjects(2**22 + 12345).kernel_symbol(CodeAt(0, b"\0" * 64), 0, 0) is None
