"""simgpu.isa: the gfx11 (RDNA3) instruction codec (decode, encode, disassemble, assemble), driven by
tables generated from LLVM, and AMDGPU code objects (read and write).

May import: simgpu.hw (the bit-field machinery and the COMPUTE_PGM_RSRC* register layouts the kernel
descriptor holds), nothing else outside simgpu.isa (numpy, msgpack, pyelftools are fine).
"""

from typing import TYPE_CHECKING

from .errors import AsmError, DecodeError

if TYPE_CHECKING:
    from .codec import assemble, decode, decode_all, disassemble, fetch_size
    from .inst import Inst

__all__ = ["AsmError", "DecodeError", "Inst", "assemble", "decode", "decode_all", "disassemble", "fetch_size"]
_CODEC = ("assemble", "decode", "decode_all", "disassemble", "fetch_size")


def __getattr__(name: str):
    # Lazy: the codec (its family modules and their tables) loads when first used, so `import runtime`, which
    # reads code objects at start-up and decodes only to export a profile, does not pay for it.
    if name in _CODEC or name == "Inst":
        from . import codec
        value = getattr(codec, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'simgpu.isa' has no attribute {name!r}")
