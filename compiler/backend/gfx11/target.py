"""gfx11 register files for the allocator, spill code, and the whole pipeline of one kernel: unroll small loops
(compiler.ir.unroll), select, drop dead code, coalesce copies, allocate (SGPRs first: their spills go to VGPR
lanes, v_writelane/v_readlane; then VGPRs: spills to scratch, the private segment the descriptor reserves per
work-item), place waits, fix hazards, encode.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.backend import coalesce, dce, regalloc
from compiler.backend.gfx11 import emit, matrix, memory
from compiler.backend.gfx11 import operands as opnd
from compiler.backend.gfx11.hazards import fix_hazards
from compiler.backend.gfx11.operands import OFF
from compiler.backend.gfx11.select import GfxSelector, workitem_dims
from compiler.backend.gfx11.waitcnt import insert_waits
from compiler.backend.mir import MInst, Sub, VReg
from compiler.ir.linearize import LinearKernel
from compiler.ir.unroll import unroll

SGPRS = 106
VGPRS = 256
LANES = 32
SCRATCH_OFFSET_MAX = 4095


def _sgpr_align(n: int) -> int:
    return 1 if n == 1 else 2 if n == 2 else 4


_KEEP_FLAGS = frozenset({"store", "exec", "barrier", "branch", "wait", "use_vcc"})


def keep(m: MInst) -> bool:
    """Instructions dead-code elimination must leave: side effects, named-register writes (VCC, EXEC)."""
    if m.is_label() or m.target is not None or m.op.startswith(("pseudo.", "s_endpgm", "s_barrier")):
        return True
    if m.flags & _KEEP_FLAGS:
        return True
    return any(isinstance(o, opnd.Phys) and o.name not in ("null", "off") for o in m.ops[:m.ndef])


def copy_of(m: MInst) -> tuple[Sub, Sub] | None:
    """(destination, source) when m is a plain register copy within one class."""
    if m.op in ("v_mov_b32", "s_mov_b32") and len(m.ops) == 2 and not m.mods:
        d, s = m.ops
        if isinstance(d, Sub) and isinstance(s, Sub) and d.rc == s.rc and d.n == 1 and s.n == 1:
            return d, s
    return None


class _Spills:
    """Spill code: SGPRs into lanes of VGPRs made on demand, VGPRs into scratch dwords."""

    def __init__(self, sel: GfxSelector):
        self.sel = sel
        self.lane_vgprs: list[VReg] = []

    def lanes(self, slot: int) -> tuple[VReg, int]:
        while slot // LANES >= len(self.lane_vgprs):
            r = self.sel.regs.new("v", 1, name="sgpr_spill")
            r.whole = True
            self.lane_vgprs.append(r)
        return self.lane_vgprs[slot // LANES], slot % LANES

    def sgpr_spill(self, part: Sub, slot: int) -> list[MInst]:
        out = []
        for i in range(part.n):
            v, lane = self.lanes(slot + i)
            out.append(MInst("v_writelane_b32", [v.all, Sub(part.reg, part.off + i, 1), opnd.imm(lane, "b32")], 1,
                             rmw=True, comment="sgpr spill"))
        return out

    def sgpr_reload(self, part: Sub, slot: int) -> list[MInst]:
        out = []
        for i in range(part.n):
            v, lane = self.lanes(slot + i)
            out.append(MInst("v_readlane_b32", [Sub(part.reg, part.off + i, 1), v.all, opnd.imm(lane, "b32")], 1,
                             comment="sgpr reload"))
        return out

    @staticmethod
    def _chunks(part: Sub, slot: int):
        i = 0
        while i < part.n:
            n = min(4, part.n - i)
            yield Sub(part.reg, part.off + i, n), 4 * (slot + i)
            i += n

    def vgpr_spill(self, part: Sub, slot: int) -> list[MInst]:
        out = []
        for p, off in self._chunks(part, slot):
            if off + 4 * p.n - 1 > SCRATCH_OFFSET_MAX:
                raise regalloc.AllocationError("VGPR spills beyond 4 KiB of scratch per work-item")
            out.append(MInst(f"scratch_store_b{32 * p.n}", [OFF, p, OFF], 0, f"offset:{off}" if off else "",
                             flags=frozenset({"vmem", "store", "spill"}), comment="vgpr spill"))
        return out

    def vgpr_reload(self, part: Sub, slot: int) -> list[MInst]:
        out = []
        for p, off in self._chunks(part, slot):
            out.append(MInst(f"scratch_load_b{32 * p.n}", [p, OFF, OFF], 1, f"offset:{off}" if off else "",
                             flags=frozenset({"vmem", "load", "spill"}), comment="vgpr reload"))
        return out


@dataclass
class Compiled:
    """One kernel compiled by the native backend: code object, assembly, resources, selection statistics."""

    binary: bytes
    assembly: str
    resources: emit.Resources
    rules: dict[str, int]


# decided before selection, in order: which loads combine into one, then which registers a WMMA's operands are
# loaded into and its accumulators kept in (reusing the combined loads' registers)
PLANS = (memory.plan, matrix.plan)


def compile_kernel(k: LinearKernel) -> Compiled:
    """The module docstring's pipeline for one linearized kernel."""
    k = unroll(k)
    sel = GfxSelector(k)
    code = sel.run(PLANS)
    code = dce.eliminate(code, keep)
    code = coalesce.coalesce(code, copy_of)
    spills = _Spills(sel)
    files = [regalloc.RegFile("s", SGPRS, _sgpr_align, spills.sgpr_spill, spills.sgpr_reload),
             regalloc.RegFile("v", VGPRS, lambda n: 1, spills.vgpr_spill, spills.vgpr_reload)]
    alloc = regalloc.allocate(code, files, sel.regs)
    code = insert_waits(alloc.code)
    code = fix_hazards(code)
    text = emit.assembly(code)
    binary = emit.encode(code)
    g = k.geometry
    threads = g.block[0] * g.block[1] * g.block[2]
    uses_vcc = any(o is opnd.VCC or getattr(o, "name", "") == "vcc_lo" for m in code for o in m.ops)
    res = emit.Resources(vgprs=max(alloc.used.get("v", 0), 1), sgprs=alloc.used.get("s", 0) + (2 if uses_vcc else 0),
                         scratch_bytes=4 * alloc.slots.get("v", 0), lds_bytes=sel.lds_bytes,
                         vgpr_spills=alloc.spilled.get("v", 0), sgpr_spills=alloc.spilled.get("s", 0),
                         waves_per_group=-(-threads // 32))
    group_ids = "".join("xyz"[a] for a in sorted(sel.group_ids))
    co = emit.code_object(k.name, binary, res, len(k.params), group_ids, workitem_dims(k), g.block)
    header = (f"; {k.name}: {res.vgprs} VGPRs, {res.sgprs} SGPRs, {res.scratch_bytes} bytes scratch, "
              f"{res.lds_bytes} bytes LDS, spills {res.vgpr_spills} VGPR / {res.sgpr_spills} SGPR, "
              f"occupancy {res.occupancy} waves/SIMD")
    return Compiled(co, header + "\n" + text, res, sel.used_rules)
