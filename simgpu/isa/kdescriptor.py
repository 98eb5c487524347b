"""The AMDHSA kernel descriptor (code object v3 and later): the 64 bytes in .rodata, named `<kernel>.kd`,
that tell the command processor how to launch a kernel (register counts, enabled SGPR/VGPR inputs,
float modes, where the code starts).

Layout and bit fields follow LLVM's AMDGPUUsage ("Kernel Descriptor", COMPUTE_PGM_RSRC1/2/3 for GFX10-GFX11).
"""

from __future__ import annotations

import dataclasses
import math

from simgpu.hw import regs
from simgpu.hw.bits import Field, Layout, Record

KD_SIZE = 64
MAX_GROUP_SEGMENT = 64 << 10  # LDS bytes of one workgroup (gfx11)
# Processors whose workgroup addresses more LDS: gfx950 (CDNA4) has 160 KiB (LLVM's gfx950 feature
# AddressableLocalMemorySize163840; the MI350X's 160 KiB LDS per CU).
GROUP_SEGMENT_LIMITS = {"gfx950": 160 << 10}
MAX_WAVE_SCRATCH = ((1 << 15) - 1) * 256  # COMPUTE_TMPRING_SIZE.WAVESIZE: 15 bits of 256-byte units (gfx11)
# Every wave on gfx10+ has 106 addressable SGPRs (s0-s105); GRANULATED_WAVEFRONT_SGPR_COUNT is reserved there.
GFX10_PLUS_SGPRS = 106
# The VGPR *encoding* granule of gfx10-gfx11 (the hardware may allocate in coarser blocks, e.g. 24 on gfx1100
# wave32, but the descriptor field counts blocks of this size).
VGPR_GRANULE_WAVE32 = 8
VGPR_GRANULE_WAVE64 = 4


def group_segment_limit(processor: str) -> int:
    """LDS bytes one workgroup of a processor may allocate (64 KiB but where GROUP_SEGMENT_LIMITS says more)."""
    return GROUP_SEGMENT_LIMITS.get(processor, MAX_GROUP_SEGMENT)


class KernelDescriptorError(ValueError):
    """A kernel descriptor that cannot be decoded (wrong size)."""


# The descriptor's own words (the rsrc words are the COMPUTE_PGM_RSRC* registers, simgpu.hw.regs).
KERNEL_CODE_PROPERTIES = Layout(
    enable_sgpr_private_segment_buffer=Field(0),  # the user SGPRs each input takes: 4
    enable_sgpr_dispatch_ptr=Field(1), enable_sgpr_queue_ptr=Field(2), enable_sgpr_kernarg_segment_ptr=Field(3),
    enable_sgpr_dispatch_id=Field(4), enable_sgpr_flat_scratch_init=Field(5),  # 2 each
    enable_sgpr_private_segment_size=Field(6),  # 1
    enable_wavefront_size32=Field(10), uses_dynamic_stack=Field(11))
KERNARG_PRELOAD = Layout(kernarg_preload_spec_length=Field(0, 7), kernarg_preload_spec_offset=Field(7, 9))  # not gfx11
_WORDS = (("compute_pgm_rsrc1", regs.PGM_RSRC1), ("compute_pgm_rsrc2", regs.PGM_RSRC2),
          ("compute_pgm_rsrc3", regs.PGM_RSRC3), ("kernel_code_properties", KERNEL_CODE_PROPERTIES),
          ("kernarg_preload", KERNARG_PRELOAD))


class _Bits:
    """A bit field of one integer field of the descriptor, read and written as an attribute."""

    def __init__(self, name: str, word: str, field: Field):
        self.name, self.word, self.field = name, word, field

    def __get__(self, obj: object, owner: type | None = None):
        if obj is None:
            return self
        return self.field.get(getattr(obj, self.word))

    def __set__(self, obj: object, value: int) -> None:
        value = int(value)
        if not 0 <= value <= self.field.mask:
            raise ValueError(f"{self.name} must be in 0..{self.field.mask}, got {value}")
        setattr(obj, self.word, self.field.put(getattr(obj, self.word), value))


def _with_bit_fields(cls):
    """Give the descriptor an attribute per bit field of its words (kd.user_sgpr_count, ...)."""
    cls._BITFIELDS = {}
    for word, layout in _WORDS:
        for name, field in layout.fields.items():
            cls._BITFIELDS[name] = _Bits(name, word, field)
            setattr(cls, name, cls._BITFIELDS[name])
    return cls


@_with_bit_fields
class KernelDescriptor(Record):
    """The 64-byte kernel descriptor, field by field; each bit field of its words (_WORDS) is an attribute.
    Reserved bytes are fields too, so that from_bytes/to_bytes round-trip any descriptor exactly."""

    LAYOUT = (("group_segment_fixed_size", "I"), ("private_segment_fixed_size", "I"), ("kernarg_size", "I"),
              ("reserved0", "4s"), ("kernel_code_entry_byte_offset", "q"), ("reserved1", "20s"),
              ("compute_pgm_rsrc3", "I"), ("compute_pgm_rsrc1", "I"), ("compute_pgm_rsrc2", "I"),
              ("kernel_code_properties", "H"), ("kernarg_preload", "H"), ("reserved2", "4s"))

    @classmethod
    def from_bytes(cls, data: bytes) -> KernelDescriptor:
        """Decode a 64-byte descriptor."""
        if len(data) != KD_SIZE:
            raise KernelDescriptorError(f"a kernel descriptor is {KD_SIZE} bytes, got {len(data)}")
        return cls.unpack(data)

    def to_bytes(self) -> bytes:
        """Encode as the 64 bytes the hardware reads."""
        return self.pack()

    def check(self, max_group_segment: int = MAX_GROUP_SEGMENT) -> None:
        """KernelDescriptorError naming the first field a gfx11 CP could not launch with (AMDGPUUsage, "Kernel
        Descriptor"): reserved bytes not 0, more LDS than a workgroup has (`max_group_segment`: the processor's,
        group_segment_limit), more scratch than COMPUTE_TMPRING_SIZE can give a wave."""
        for name in ("reserved0", "reserved1", "reserved2"):
            if any(getattr(self, name)):
                raise KernelDescriptorError(f"{name.upper()} is {getattr(self, name).hex()}, must be 0")
        if self.group_segment_fixed_size > max_group_segment:
            raise KernelDescriptorError(f"GROUP_SEGMENT_FIXED_SIZE {self.group_segment_fixed_size} exceeds the "
                                        f"{max_group_segment} bytes of LDS a workgroup has")
        wave_bytes = self.private_segment_fixed_size * self.wavefront_size
        if wave_bytes > MAX_WAVE_SCRATCH:
            raise KernelDescriptorError(f"PRIVATE_SEGMENT_FIXED_SIZE {self.private_segment_fixed_size} gives a "
                                        f"wave{self.wavefront_size} {wave_bytes} bytes of scratch, more than the "
                                        f"{MAX_WAVE_SCRATCH} COMPUTE_TMPRING_SIZE.WAVESIZE can hold")

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
