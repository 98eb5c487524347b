"""simgpu.isa: the gfx11 (RDNA3) instruction codec (decode, encode, disassemble, assemble), driven by
tables generated from LLVM, and AMDGPU code objects (read and write).

May import: simgpu.hw.bits (the bit-field machinery), nothing else outside simgpu.isa (numpy, msgpack,
pyelftools are fine).
"""

from .codec import assemble, decode, decode_all, disassemble, fetch_size
from .errors import AsmError, DecodeError
from .inst import Inst

__all__ = ["AsmError", "DecodeError", "Inst", "assemble", "decode", "decode_all", "disassemble", "fetch_size"]
