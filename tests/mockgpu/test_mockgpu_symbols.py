"""mockgpu.symbols.ProcessCodeObjects: kernels whose loader put no ELF header into GPU memory (tinygrad's) are named
from the code objects in the client's own memory; whatever else lies there is skipped, never raised."""

import contextlib
import io
import subprocess
import sys

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


# A small process that keeps what it read from stdin in its heap until its stdin closes. The lookup scans every
# anonymous mapping of the process it is given: a test worker's own heap grows with every test it ran (a scan of
# one took 49 s late in a run), this one's is a bare interpreter's, and a child is what the server reads too.
_HOLDER = ("import sys; kept = [bytearray(sys.stdin.buffer.read(int(n))) for n in sys.argv[1:]]; "
           "print('ready', flush=True); sys.stdin.read()")


@contextlib.contextmanager
def held(*blobs: bytes):
    """The pid of a child process holding copies of `blobs` in its heap."""
    p = subprocess.Popen([sys.executable, "-S", "-c", _HOLDER, *(str(len(b)) for b in blobs)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        p.stdin.write(b"".join(blobs))
        p.stdin.flush()
        assert p.stdout.readline() == b"ready\n"
        yield p.pid
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def test_a_kernel_is_named_from_the_relocatable_object_in_the_process():
    obj = _relocatable()
    mmu = CodeAt(0x7000_0000_0000, _text(obj))
    with held(obj) as pid:  # alive in that process's heap while the lookup reads it
        assert ProcessCodeObjects(pid).kernel_symbol(mmu, 0, 0x7000_0000_0000) == "vadd"


def test_code_no_object_holds_and_a_damaged_object_are_no_name():
    obj = _relocatable()
    damaged = obj[:64] + bytes(len(obj) - 64)  # the header, the sections zeroed
    with held(obj, damaged) as pid:
        objects = ProcessCodeObjects(pid)
        assert objects.kernel_symbol(CodeAt(0x1000, b"\x01\x02\x03\x04" * 16), 0, 0x1000) is None


def test_a_process_that_is_gone_names_nothing():
    assert ProcessCodeObjects(2**22 + 12345).kernel_symbol(CodeAt(0, b"\0" * 64), 0, 0) is None
