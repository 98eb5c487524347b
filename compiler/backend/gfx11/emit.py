"""From allocated machine code to a code object: assembly text, machine code through simgpu.isa's assembler, the
kernel descriptor and code object v5 metadata from the allocation, occupancy (runtime.limits.occupancy: the
runtime's debug line reports the same figure for a loaded kernel).

Each instruction's text is assembled once per process (instructions repeat across kernels: the same registers,
the same waits) by simgpu.isa.assemble, which reproduces llvm-mc byte for byte; branches are encoded with their
word offsets once the sizes of everything before them are known.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.mir import MInst
from runtime.limits import occupancy
from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor

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
