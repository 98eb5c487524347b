"""The AMDHSA kernel descriptor (code object v3 and later): the 64 bytes in .rodata, named `<kernel>.kd`,
that tell the command processor how to launch a kernel (register counts, enabled SGPR/VGPR inputs,
float modes, where the code starts).

Layout and bit fields follow LLVM's AMDGPUUsage ("Kernel Descriptor", COMPUTE_PGM_RSRC1/2/3 for GFX10-GFX11).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from simgpu.hw.bits import Field, Record

KD_SIZE = 64
# Every wave on gfx10+ has 106 addressable SGPRs (s0-s105); GRANULATED_WAVEFRONT_SGPR_COUNT is reserved there.
GFX10_PLUS_SGPRS = 106
# The VGPR *encoding* granule of gfx10-gfx11 (the hardware may allocate in coarser blocks, e.g. 24 on gfx1100
# wave32, but the descriptor field counts blocks of this size).
VGPR_GRANULE_WAVE32 = 8
VGPR_GRANULE_WAVE64 = 4
LDS_GRANULE = 512  # bytes per unit of COMPUTE_PGM_RSRC2.LDS_SIZE (granulated_lds_size) on gfx11: 128 dwords


class KernelDescriptorError(ValueError):
    """A kernel descriptor that cannot be decoded (wrong size)."""


class _Bits:
    """A bit field of one integer field of the descriptor, read and written as an attribute. On the class,
    `KernelDescriptor.<name>` reads and writes the field in a bare register value (`.get`, `.put`): the rsrc
    words are what the CP loads into COMPUTE_PGM_RSRC1/2/3."""

    def __init__(self, word: str, lo: int, width: int = 1, doc: str = ""):
        self.word, self.field, self.__doc__ = word, Field(lo, width), doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        owner._BITFIELDS = {**getattr(owner, "_BITFIELDS", {}), name: self}

    def __get__(self, obj: object, owner: type | None = None):
        if obj is None:
            return self
        return self.field.get(getattr(obj, self.word))

    def __set__(self, obj: object, value: int) -> None:
        value = int(value)
        if not 0 <= value <= self.field.mask:
            raise ValueError(f"{self.name} must be in 0..{self.field.mask}, got {value}")
        setattr(obj, self.word, self.field.put(getattr(obj, self.word), value))

    def get(self, word: int) -> int:
        """The field in a bare value of its word (e.g. a COMPUTE_PGM_RSRC2 register value)."""
        return self.field.get(word)

    def put(self, word: int, value: int) -> int:
        """A bare value of its word with the field replaced by `value`."""
        return self.field.put(word, value)


@dataclass
class KernelDescriptor(Record):
    """The 64-byte kernel descriptor, field by field; bit fields of the rsrc words are attributes."""

    LAYOUT = (("group_segment_fixed_size", "I"), ("private_segment_fixed_size", "I"), ("kernarg_size", "I"),
              ("reserved0", "4s"), ("kernel_code_entry_byte_offset", "q"), ("reserved1", "20s"),
              ("compute_pgm_rsrc3", "I"), ("compute_pgm_rsrc1", "I"), ("compute_pgm_rsrc2", "I"),
              ("kernel_code_properties", "H"), ("kernarg_preload", "H"), ("reserved2", "4s"))
    group_segment_fixed_size: int = 0
    private_segment_fixed_size: int = 0
    kernarg_size: int = 0
    kernel_code_entry_byte_offset: int = 0
    compute_pgm_rsrc3: int = 0
    compute_pgm_rsrc1: int = 0
    compute_pgm_rsrc2: int = 0
    kernel_code_properties: int = 0
    kernarg_preload: int = 0
    # Reserved bytes are kept so that from_bytes/to_bytes round-trip any descriptor exactly.
    reserved0: bytes = bytes(4)
    reserved1: bytes = bytes(20)
    reserved2: bytes = bytes(4)

    # COMPUTE_PGM_RSRC1 (GFX10-GFX11)
    granulated_workitem_vgpr_count = _Bits("compute_pgm_rsrc1", 0, 6, "VGPR blocks - 1")
    # Reserved on gfx10+ per AMDGPUUsage, yet clang-19 fills it for gfx11 (and llvm-objdump 19 then refuses to
    # print the descriptor); the hardware ignores it.
    granulated_wavefront_sgpr_count = _Bits("compute_pgm_rsrc1", 6, 4, "SGPR blocks - 1 (ignored on gfx10+)")
    priority = _Bits("compute_pgm_rsrc1", 10, 2)
    float_round_mode_32 = _Bits("compute_pgm_rsrc1", 12, 2)
    float_round_mode_16_64 = _Bits("compute_pgm_rsrc1", 14, 2)
    float_denorm_mode_32 = _Bits("compute_pgm_rsrc1", 16, 2)
    float_denorm_mode_16_64 = _Bits("compute_pgm_rsrc1", 18, 2)
    priv = _Bits("compute_pgm_rsrc1", 20, 1)
    enable_dx10_clamp = _Bits("compute_pgm_rsrc1", 21, 1, "DX10_CLAMP on gfx6-gfx11")
    debug_mode = _Bits("compute_pgm_rsrc1", 22, 1)
    enable_ieee_mode = _Bits("compute_pgm_rsrc1", 23, 1, "IEEE_MODE on gfx6-gfx11")
    bulky = _Bits("compute_pgm_rsrc1", 24, 1)
    cdbg_user = _Bits("compute_pgm_rsrc1", 25, 1)
    fp16_ovfl = _Bits("compute_pgm_rsrc1", 26, 1)
    workgroup_processor_mode = _Bits("compute_pgm_rsrc1", 29, 1)
    mem_ordered = _Bits("compute_pgm_rsrc1", 30, 1)
    fwd_progress = _Bits("compute_pgm_rsrc1", 31, 1)

    # COMPUTE_PGM_RSRC2 (GFX10-GFX11)
    enable_private_segment = _Bits("compute_pgm_rsrc2", 0, 1, "SCRATCH_EN")
    user_sgpr_count = _Bits("compute_pgm_rsrc2", 1, 5)
    enable_trap_handler = _Bits("compute_pgm_rsrc2", 6, 1)
    enable_sgpr_workgroup_id_x = _Bits("compute_pgm_rsrc2", 7, 1)
    enable_sgpr_workgroup_id_y = _Bits("compute_pgm_rsrc2", 8, 1)
    enable_sgpr_workgroup_id_z = _Bits("compute_pgm_rsrc2", 9, 1)
    enable_sgpr_workgroup_info = _Bits("compute_pgm_rsrc2", 10, 1)
    enable_vgpr_workitem_id = _Bits("compute_pgm_rsrc2", 11, 2, "0: X, 1: X and Y, 2: X, Y and Z")
    enable_exception_address_watch = _Bits("compute_pgm_rsrc2", 13, 1)
    enable_exception_memory = _Bits("compute_pgm_rsrc2", 14, 1)
    granulated_lds_size = _Bits("compute_pgm_rsrc2", 15, 9, "LDS_SIZE: LDS_GRANULE units; 0 in a descriptor, the CP "
                                "programs what the launch needs")
    enable_exception_ieee_754_fp_invalid_operation = _Bits("compute_pgm_rsrc2", 24, 1)
    enable_exception_fp_denormal_source = _Bits("compute_pgm_rsrc2", 25, 1)
    enable_exception_ieee_754_fp_division_by_zero = _Bits("compute_pgm_rsrc2", 26, 1)
    enable_exception_ieee_754_fp_overflow = _Bits("compute_pgm_rsrc2", 27, 1)
    enable_exception_ieee_754_fp_underflow = _Bits("compute_pgm_rsrc2", 28, 1)
    enable_exception_ieee_754_fp_inexact = _Bits("compute_pgm_rsrc2", 29, 1)
    enable_exception_int_divide_by_zero = _Bits("compute_pgm_rsrc2", 30, 1)

    # COMPUTE_PGM_RSRC3 (GFX11)
    shared_vgpr_count = _Bits("compute_pgm_rsrc3", 0, 4)
    inst_pref_size = _Bits("compute_pgm_rsrc3", 4, 6)
    trap_on_start = _Bits("compute_pgm_rsrc3", 10, 1)
    trap_on_end = _Bits("compute_pgm_rsrc3", 11, 1)
    image_op = _Bits("compute_pgm_rsrc3", 31, 1)

    # kernel_code_properties
    enable_sgpr_private_segment_buffer = _Bits("kernel_code_properties", 0, 1, "4 user SGPRs")
    enable_sgpr_dispatch_ptr = _Bits("kernel_code_properties", 1, 1, "2 user SGPRs")
    enable_sgpr_queue_ptr = _Bits("kernel_code_properties", 2, 1, "2 user SGPRs")
    enable_sgpr_kernarg_segment_ptr = _Bits("kernel_code_properties", 3, 1, "2 user SGPRs")
    enable_sgpr_dispatch_id = _Bits("kernel_code_properties", 4, 1, "2 user SGPRs")
    enable_sgpr_flat_scratch_init = _Bits("kernel_code_properties", 5, 1, "2 user SGPRs")
    enable_sgpr_private_segment_size = _Bits("kernel_code_properties", 6, 1, "1 user SGPR")
    enable_wavefront_size32 = _Bits("kernel_code_properties", 10, 1)
    uses_dynamic_stack = _Bits("kernel_code_properties", 11, 1)

    # kernarg_preload (gfx90a/gfx940 feature; zero on gfx11)
    kernarg_preload_spec_length = _Bits("kernarg_preload", 0, 7)
    kernarg_preload_spec_offset = _Bits("kernarg_preload", 7, 9)

    @classmethod
    def from_bytes(cls, data: bytes) -> KernelDescriptor:
        """Decode a 64-byte descriptor."""
        if len(data) != KD_SIZE:
            raise KernelDescriptorError(f"a kernel descriptor is {KD_SIZE} bytes, got {len(data)}")
        return cls.unpack(data)

    def to_bytes(self) -> bytes:
        """Encode as the 64 bytes the hardware reads."""
        return self.pack()

    @property
    def wavefront_size(self) -> int:
        """32 or 64, from ENABLE_WAVEFRONT_SIZE32."""
        return 32 if self.enable_wavefront_size32 else 64

    @property
    def vgpr_count(self) -> int:
        """VGPRs per work-item the descriptor reserves: (blocks) x 8 for wave32, x 4 for wave64 (gfx10-gfx11)."""
        granule = VGPR_GRANULE_WAVE32 if self.enable_wavefront_size32 else VGPR_GRANULE_WAVE64
        return (self.granulated_workitem_vgpr_count + 1) * granule

    @property
    def sgpr_count(self) -> int:
        """SGPRs each wave has: always 106 on gfx10+, where the descriptor does not size the SGPR file."""
        return GFX10_PLUS_SGPRS

    @property
    def enabled_user_sgprs(self) -> int:
        """User SGPRs implied by the enable_sgpr_* properties (may be below user_sgpr_count)."""
        sizes = {"enable_sgpr_private_segment_buffer": 4, "enable_sgpr_dispatch_ptr": 2, "enable_sgpr_queue_ptr": 2,
                 "enable_sgpr_kernarg_segment_ptr": 2, "enable_sgpr_dispatch_id": 2,
                 "enable_sgpr_flat_scratch_init": 2, "enable_sgpr_private_segment_size": 1}
        return sum(n for name, n in sizes.items() if getattr(self, name))

    def fields(self) -> dict[str, int]:
        """Every named bit field and its value (for printing and comparing)."""
        return {name: getattr(self, name) for name in self._BITFIELDS}

    def copy(self, **changes) -> KernelDescriptor:
        """A copy with some dataclass fields or bit fields changed."""
        own = {k: v for k, v in changes.items() if k in _FIELD_NAMES}
        new = dataclasses.replace(self, **own)
        for name, value in changes.items():
            if name not in _FIELD_NAMES:
                if name not in self._BITFIELDS:
                    raise AttributeError(f"KernelDescriptor has no field {name!r}")
                setattr(new, name, value)
        return new


assert KernelDescriptor.SIZE == KD_SIZE
_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(KernelDescriptor))


def lds_size(rsrc2: int) -> int:
    """LDS bytes per workgroup that a COMPUTE_PGM_RSRC2 value allocates (its LDS_SIZE field)."""
    return KernelDescriptor.granulated_lds_size.get(rsrc2) * LDS_GRANULE


def with_lds_size(rsrc2: int, nbytes: int) -> int:
    """A COMPUTE_PGM_RSRC2 value whose LDS_SIZE covers `nbytes` of LDS per workgroup (what the CP programs)."""
    return KernelDescriptor.granulated_lds_size.put(rsrc2, -(-nbytes // LDS_GRANULE))

# User SGPR inputs make_descriptor accepts, in the order they fill s0... gfx11 has architected flat scratch, so
# LLVM refuses the private segment buffer and flat scratch init inputs there; so do we.
_USER_SGPR_FLAGS = ("dispatch_ptr", "queue_ptr", "kernarg_segment_ptr", "dispatch_id", "private_segment_size")


def make_descriptor(vgprs: int, *, kernarg_size: int = 0, group_segment_size: int = 0,
                    private_segment_size: int = 0, user_sgprs: tuple[str, ...] = ("kernarg_segment_ptr",),
                    workgroup_ids: str = "x", workitem_id_dims: int = 1, wave32: bool = True,
                    sgprs: int | None = None) -> KernelDescriptor:
    """A gfx11 descriptor with the defaults LLVM's assembler gives an `.amdhsa_kernel` block.

    `vgprs` is the next free VGPR (`.amdhsa_next_free_vgpr`); `user_sgprs` names the enabled user SGPR inputs
    (e.g. "dispatch_ptr", "kernarg_segment_ptr"), which come first in s0.., in the ABI's order; `workgroup_ids`
    says which workgroup ids follow them ("xyz"); `sgprs`, if given, is only checked against the 106 of gfx11.
    """
    if not 0 <= vgprs <= 256:
        raise ValueError(f"vgprs must be in 0..256, got {vgprs}")
    if sgprs is not None and not 0 <= sgprs <= GFX10_PLUS_SGPRS:
        raise ValueError(f"sgprs must be in 0..{GFX10_PLUS_SGPRS} on gfx11, got {sgprs}")
    unknown = set(user_sgprs) - set(_USER_SGPR_FLAGS)
    if unknown:
        raise ValueError(f"unknown user SGPR inputs {sorted(unknown)}; known: {_USER_SGPR_FLAGS}")
    if set(workgroup_ids) - set("xyz") or not 1 <= workitem_id_dims <= 3:
        raise ValueError("workgroup_ids is a subset of 'xyz' and workitem_id_dims is 1..3")
    kd = KernelDescriptor(group_segment_fixed_size=group_segment_size, private_segment_fixed_size=private_segment_size,
                          kernarg_size=kernarg_size)
    granule = VGPR_GRANULE_WAVE32 if wave32 else VGPR_GRANULE_WAVE64
    kd.granulated_workitem_vgpr_count = max(0, math.ceil(vgprs / granule) - 1)
    # LLVM's defaults for gfx11: f16/f64 denormals kept, DX10 clamp and IEEE mode on, WGP mode, ordered memory.
    kd.float_denorm_mode_16_64 = 3
    kd.enable_dx10_clamp = 1
    kd.enable_ieee_mode = 1
    kd.workgroup_processor_mode = 1
    kd.mem_ordered = 1
    kd.enable_private_segment = int(private_segment_size > 0)
    for axis in workgroup_ids:
        setattr(kd, f"enable_sgpr_workgroup_id_{axis}", 1)
    kd.enable_vgpr_workitem_id = workitem_id_dims - 1
    for flag in user_sgprs:
        setattr(kd, f"enable_sgpr_{flag}", 1)
    kd.user_sgpr_count = kd.enabled_user_sgprs
    kd.enable_wavefront_size32 = int(wave32)
    return kd
