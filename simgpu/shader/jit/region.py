"""The code a JIT region covers: every instruction reachable from its entry, split into basic blocks.

Discovery follows control flow from the entry through the engine's decode cache (`fetch(pc)` returns
the decoded instruction or None when it does not decode, is not implemented or cannot be read: the
interpreter reports why when a wave gets there). Each instruction is classified once:

- native: the translator emits it (classified by trying: `lower` returns its IR or None);
- control: branches, s_endpgm, s_setpc/s_swappc/s_call (native, and they end a block);
- sync: its effect is visible to other waves or to the engine (stores, atomics, LDS writes, barriers,
  clock reads, interrupts, s_sleep, cache invalidation, traps): a wave stops *before* it and the
  scheduler runs it for every wave standing there, in the interpreter's order (see rounds.py);
- callback: anything else the translator does not cover; the wave's registers go back to the register
  file and the interpreter runs that one instruction for that wave, then native code continues;
- missing: no instruction there (a park like sync: the interpreter raises the fault).

Blocks start at the entry, at branch targets, after control instructions and around every sync,
callback and missing instruction (those are one-instruction pseudo-blocks the native code exits at).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

NATIVE, CONTROL, SYNC, CALLBACK, MISSING = "native", "control", "sync", "callback", "missing"
MAX_INSTRUCTIONS = 4096  # a region never grows past this many instructions (compile time stays bounded)

# Control flow the translator handles itself: (mnemonic, successors) rules in `successors`.
BRANCHES = {"s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
            "s_cbranch_execz", "s_cbranch_execnz", "s_cbranch_cdbgsys", "s_cbranch_cdbguser",
            "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user"}
ENDS = {"s_endpgm", "s_endpgm_saved"}
DYNAMIC = {"s_setpc_b64", "s_swappc_b64", "s_rfe_b64", "s_call_b64"}
CONTROLS = BRANCHES | ENDS | DYNAMIC

_SYNC_NAMES = {"s_barrier", "s_sleep", "s_icache_inv", "s_trap", "s_code_end", "s_sendmsghalt",
               "s_sendmsg_rtn_b32", "s_sendmsg_rtn_b64", "s_memtime", "s_memrealtime", "s_round_mode",
               "s_denorm_mode", "s_setreg_b32", "s_setreg_imm32_b32",
               # gfx12's split barrier (a signal counted per workgroup, then the wait) and named barriers
               "s_barrier_signal", "s_barrier_signal_isfirst", "s_barrier_wait", "s_barrier_init",
               "s_barrier_join", "s_barrier_leave", "s_get_barrier_state"}
_LOCAL_DS = ("ds_load", "ds_read", "ds_swizzle", "ds_permute", "ds_bpermute", "ds_nop")
# cache maintenance: no-ops in the simulator, which has no caches (gfx11's gl0/gl1 invalidates, gfx12's
# global_inv / global_wb / global_wbinv)
_CACHE_OPS = ("_inv", "_wb", "_wbinv")
HW_SHADER_CYCLES = 29  # the clock's hwreg: gfx11's SHADER_CYCLES, gfx12's SHADER_CYCLES_LO
HW_SHADER_CYCLES_HI = 30  # gfx12's (unused on gfx11)
MSG_INTERRUPT = 1


def is_sync(inst) -> bool:
    """Whether an instruction's effect reaches beyond its own wave's registers (memory other waves may
    read, LDS, the clock, the engine): then waves must meet the interpreter's order there. MODE writes
    are here too: compiled code is specialised on MODE, so a wave that changes it goes back to the
    interpreter."""
    m = inst.mnemonic
    if m in _SYNC_NAMES:
        return True
    if m == "s_sendmsg":
        return inst.fields.get("simm16", 0) & 0xFF == MSG_INTERRUPT
    if m == "s_getreg_b32":
        return inst.fields.get("simm16", 0) & 0x3F in (HW_SHADER_CYCLES, HW_SHADER_CYCLES_HI)
    if m.startswith("ds_"):
        return not m.startswith(_LOCAL_DS)
    if m.startswith(("global_", "flat_", "scratch_", "buffer_", "image_")):
        if "_load_lds" in m or inst.fields.get("lds"):  # gfx9's loads into LDS (global_load_lds_dword, MUBUF's lds
            return True  # bit: memory.gfx950, memory.gfx9) write the workgroup's LDS, which other waves read
        return not ("_load" in m or m.endswith(_CACHE_OPS) or m == "image_get_resinfo")
    if m.startswith(("s_", "v_")):
        return False
    return True  # an unfamiliar family: assume it is shared


@dataclass
class Insn:
    """One instruction of the region: its decode, class and (native) IR fragment."""

    off: int  # byte offset from the region base
    inst: object
    kind: str
    fragment: object = None  # the translator's lowering of a native instruction
    exits: bool = False  # a native instruction that may stop the wave before it (a memory read that faults)

    @property
    def size(self) -> int:
        return self.inst.size if self.inst is not None else 4


@dataclass
class Block:
    """A basic block: native instructions ending in a fall-through or a control instruction, or one
    sync/callback/missing pseudo-instruction."""

    index: int
    start: int
    insns: list[Insn]
    kind: str  # NATIVE (a run of native/control instructions), SYNC, CALLBACK or MISSING

    @property
    def last(self) -> int:
        """Offset of the block's last instruction (a wave stops before the block if it reaches the bound)."""
        return self.insns[-1].off

    @property
    def end(self) -> int:
        return self.insns[-1].off + self.insns[-1].size

    def histogram(self) -> Counter:
        return Counter(i.inst.mnemonic for i in self.insns if i.inst is not None)


@dataclass
class Region:
    """The instructions reachable from an entry and their blocks."""

    base: int  # PC of offset 0 (the entry)
    insns: dict[int, Insn]
    blocks: list[Block] = field(default_factory=list)
    by_start: dict[int, Block] = field(default_factory=dict)

    def code_signature(self) -> bytes:
        """Every instruction's offset and bytes: what the compiled code is a function of."""
        out = bytearray()
        for off in sorted(self.insns):
            i = self.insns[off]
            data = i.inst.encode() if i.inst is not None else b"?"
            out += off.to_bytes(4, "little", signed=True) + len(data).to_bytes(1, "little") + data
        return bytes(out)


_ALL_WAVES = 193  # the inline constant -1: gfx12's s_barrier_signal of the workgroup barrier
_WAIT_ALL = 0xFFFF  # s_barrier_wait -1


def workgroup_barriers(region: Region) -> dict[int, tuple[int, ...]]:
    """The region's workgroup barriers: the offset a wave parks at before one, and the offsets of its instructions
    (gfx11's s_barrier; gfx12's s_barrier_signal -1 directly followed by s_barrier_wait -1, the wave waiting at the
    second). Intervals (barrier.py) end there and run them as the interpreter does."""
    out = {}
    for off, insn in region.insns.items():
        inst = insn.inst
        if inst is None:
            continue
        if inst.mnemonic == "s_barrier":
            out[off] = (off,)
        elif inst.mnemonic == "s_barrier_signal" and inst.fields.get("ssrc0") == _ALL_WAVES:
            nxt = region.insns.get(off + inst.size)
            if nxt is not None and nxt.inst is not None and nxt.inst.mnemonic == "s_barrier_wait" \
                    and nxt.inst.fields.get("simm16") == _WAIT_ALL:
                out[off] = (off, off + inst.size)
    return out


def simm16(inst) -> int:
    v = inst.fields["simm16"]
    return v - 0x10000 if v & 0x8000 else v


def successors(insn: Insn) -> list[int]:
    """Offsets control may reach after `insn` within the region (dynamic targets are not listed)."""
    inst, off = insn.inst, insn.off
    if insn.kind == MISSING:
        return []
    m = inst.mnemonic
    nxt = off + inst.size
    if m == "s_branch":
        return [nxt + 4 * simm16(inst)]
    if m in BRANCHES:
        return [nxt, nxt + 4 * simm16(inst)]
    if m in ENDS or m in DYNAMIC or m in ("s_sendmsghalt", "s_trap", "s_code_end"):
        return [nxt + 4 * simm16(inst)] if m == "s_call_b64" else []
    return [nxt]


def reachable(base: int, fetch, max_instructions: int = MAX_INSTRUCTIONS) -> dict[int, object]:
    """Every offset control may reach from `base` and its decoded instruction (None where `fetch(pc)` gives
    none), in the order discovery visits them. Cheap: no classification (the JIT tier walks this on the
    launching thread and leaves translation to its background thread)."""
    found: dict[int, object] = {}
    work = [0]
    while work and len(found) < max_instructions:
        off = work.pop()
        while off not in found and len(found) < max_instructions:
            inst = found[off] = fetch(base + off)
            if inst is None:
                break
            succ = successors(Insn(off, inst, NATIVE))
            if not succ:
                break
            work.extend(succ[1:])
            if succ[0] != off + inst.size:  # an unconditional jump: continue at its target
                work.append(succ[0])
                break
            off = succ[0]
    return found


def discover(base: int, fetch, classify, max_instructions: int = MAX_INSTRUCTIONS) -> Region:
    """The region reachable from `base`: `fetch(pc)` gives a decoded instruction or None, `classify(inst,
    off)` its kind, IR fragment and whether the fragment may exit mid-block (kind, fragment, exits)."""
    return classified(base, reachable(base, fetch, max_instructions), classify)


def classified(base: int, found: dict[int, object], classify) -> Region:
    """The region of the instructions `reachable` found, each classified (in discovery order), split into blocks."""
    insns: dict[int, Insn] = {}
    for off, inst in found.items():
        insns[off] = Insn(off, None, MISSING) if inst is None else Insn(off, inst, *classify(inst, off))
    region = Region(base, insns)
    _split(region)
    return region


def _split(region: Region) -> None:
    insns = region.insns
    leaders = {0}
    for off, i in insns.items():
        if i.kind in (SYNC, CALLBACK, MISSING):
            leaders.add(off)
            leaders.add(off + i.size)
        elif i.kind == CONTROL:
            leaders.add(off + i.size)
            leaders.update(successors(i))

    for off in sorted(o for o in leaders if o in insns):
        first = insns[off]
        if first.kind in (SYNC, CALLBACK, MISSING):
            body = [first]
            kind = first.kind
        else:
            body, cur = [], off
            while cur in insns:
                i = insns[cur]
                if i.kind in (SYNC, CALLBACK, MISSING) or (body and cur in leaders):
                    break
                body.append(i)
                if i.kind == CONTROL:
                    break
                cur += i.size
            kind = NATIVE
        block = Block(len(region.blocks), off, body, kind)
        region.blocks.append(block)
        region.by_start[off] = block
