"""simgpu.isa: the gfx11 (RDNA3) instruction codec (decode, encode, disassemble, assemble), driven by
tables generated from LLVM, and AMDGPU code objects (read and write).

May import: simgpu.hw (the bit-field machinery and the COMPUTE_PGM_RSRC* register layouts the kernel
descriptor holds), nothing else outside simgpu.isa (numpy, msgpack, pyelftools are fine).
"""

from .codec import assemble, decode, decode_all, disassemble, fetch_size
from .errors import AsmError, DecodeError
from .inst import Inst

__all__ = ["AsmError", "DecodeError", "Inst", "assemble", "decode", "decode_all", "disassemble", "fetch_size"]
