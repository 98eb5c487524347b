"""From allocated machine code to a code object: assembly text, machine code through simgpu.isa's assembler, the
kernel descriptor and code object v5 metadata from the allocation, occupancy.

Each instruction's text is assembled once per process (instructions repeat across kernels: the same registers,
the same waits) by simgpu.isa.assemble, which reproduces llvm-mc byte for byte; branches are encoded with their
word offsets once the sizes of everything before them are known.

Occupancy on gfx1100 (wave32): 1536 VGPRs per SIMD allocated in blocks of 24 (FeatureGFX11FullVGPRs), at most
16 waves per SIMD; LDS: 128 KiB per WGP (4 SIMDs) in WGP mode, shared by the workgroups resident on it.
SGPRs do not limit occupancy on gfx10+ (every wave has 106).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.mir import MInst
from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor

VGPRS_PER_SIMD = 1536
VGPR_GRANULE = 24
MAX_WAVES_PER_SIMD = 16
LDS_PER_WGP = 128 * 1024
SIMDS_PER_WGP = 4

_encoded: dict[str, bytes] = {}


def inst_text(m: MInst) -> str:
    """One instruction as the assembler reads it (branch targets by label)."""
    if m.is_label():
        return f"{m.target}:"
    parts = [m.op]
    if m.ops:
        parts.append(", ".join(opnd.text(o) for o in m.ops))
    elif m.target is not None:
        parts.append(m.target)
    if m.mods:
        parts.append(m.mods)
    return " ".join(parts)


def _encode(text: str) -> bytes:
    b = _encoded.get(text)
    if b is None:
        b = _encoded[text] = assemble(text)
    return b


def encode(code: list[MInst]) -> bytes:
    """Machine code for allocated instructions (labels resolved here)."""
    pieces: list[bytes | MInst] = []
    labels: dict[str, int] = {}
    pc = 0
    for m in code:
        if m.is_label():
            labels[m.target] = pc
            continue
        if m.op.startswith("pseudo."):
            continue
        if m.target is not None:
            pieces.append(m)
            pc += 4
            continue
        b = _encode(inst_text(m))
        pieces.append(b)
        pc += len(b)
    out = bytearray()
    for p in pieces:
        if isinstance(p, MInst):
            delta = (labels[p.target] - (len(out) + 4)) // 4
            out += _encode(f"{p.op} {delta & 0xFFFF}")
        else:
            out += p
    return bytes(out)


def assembly(code: list[MInst]) -> str:
    """Readable assembly: one instruction per line, labels flush left."""
    lines = []
    for m in code:
        if m.op.startswith("pseudo."):
            continue
        t = inst_text(m)
        lines.append(t if m.is_label() else "  " + t + (f"  ; {m.comment}" if m.comment else ""))
    return "\n".join(lines)


@dataclass
class Resources:
    """What a kernel needs of the hardware."""

    vgprs: int
    sgprs: int
    scratch_bytes: int  # per work-item
    lds_bytes: int
    vgpr_spills: int
    sgpr_spills: int
    waves_per_group: int

    @property
    def occupancy(self) -> int:
        """Waves per SIMD the kernel can keep resident (module docstring)."""
        return occupancy(self.vgprs, self.lds_bytes, self.waves_per_group)


def occupancy(vgprs: int, lds_bytes: int, waves_per_group: int) -> int:
    """Waves per SIMD a gfx1100 kernel with these resources can keep resident (module docstring)."""
    blocks = -(-max(vgprs, 1) // VGPR_GRANULE) * VGPR_GRANULE
    waves = min(MAX_WAVES_PER_SIMD, VGPRS_PER_SIMD // blocks)
    if lds_bytes:
        groups = LDS_PER_WGP // lds_bytes
        waves = min(waves, max(1, groups * waves_per_group // SIMDS_PER_WGP))
    return waves


def code_object(name: str, code: bytes, res: Resources, nparams: int, group_ids: str, workitem_dims: int,
                block: tuple[int, int, int]) -> bytes:
    """An ET_DYN code object (v5) with one kernel: descriptor and metadata from the resources."""
    kd = make_descriptor(max(res.vgprs, 1), kernarg_size=8 * nparams, group_segment_size=res.lds_bytes,
                         private_segment_size=res.scratch_bytes, workgroup_ids=group_ids,
                         workitem_id_dims=workitem_dims)
    kd.float_denorm_mode_32 = 3  # f32 denormals kept, as LLVM's default for gfx11 (the f32 div/sqrt rely on it)
    args = [{".address_space": "global", ".name": f"data{i}", ".offset": 8 * i, ".size": 8,
             ".value_kind": "global_buffer"} for i in range(nparams)]
    meta = {".args": args, ".sgpr_count": res.sgprs, ".vgpr_count": res.vgprs,
            ".sgpr_spill_count": res.sgpr_spills, ".vgpr_spill_count": res.vgpr_spills,
            ".max_flat_workgroup_size": max(1, block[0] * block[1] * block[2])}
    return write_code_object([(name, code, kd, meta)])
