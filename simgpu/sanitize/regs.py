"""The registers a decoded instruction reads and writes, from its operands as LLVM prints them and its
codec table entry (which operands are destinations). What the hazard checker needs, nothing more."""

from __future__ import annotations

import re
from dataclasses import dataclass

VCC, M0, EXEC = 106, 125, 126
_REG = re.compile(r"(?<![\w.])(?:([vs])(?:(\d+)|\[(\d+):(\d+)\])(?:\.[lh])?|(vcc|exec)(_lo|_hi)?|m0)(?!\w)")
TRANS = frozenset(f"v_{op}_{t}" for op in ("exp", "log", "rcp", "rsq", "sqrt", "sin", "cos") for t in ("f32", "f16")) \
    | {"v_rcp_iflag_f32", "v_rcp_f64", "v_rsq_f64", "v_sqrt_f64"}
# VALU instructions that read an SGPR (pair) as a lane mask: VCC in their e32 forms, src2 in VOP3
MASK_READERS = ("v_cndmask_b32", "v_cndmask_b16", "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32")


def parse(text: str, wave64: bool) -> tuple[set[int], set[int]]:
    """(VGPRs, SGPR operand codes) named in one operand's text."""
    v, s = set(), set()
    for m in _REG.finditer(text):
        kind, one, lo, hi, special, half = m.groups()
        if kind:
            regs = {int(one)} if one is not None else set(range(int(lo), int(hi) + 1))
            (v if kind == "v" else s).update(regs)
        elif special:
            base = VCC if special == "vcc" else EXEC
            if half == "_hi":
                s.add(base + 1)
            elif half == "_lo" or not wave64:
                s.add(base)
            else:
                s.update((base, base + 1))
        else:
            s.add(M0)
    return v, s


@dataclass
class Regs:
    """Registers one instruction uses (VGPR numbers; SGPRs as operand codes, VCC 106, M0 125, EXEC 126)."""

    vdef: set[int]
    vuse: set[int]
    sdef: set[int]
    suse: set[int]
    literal: bool  # a 32-bit literal operand


def regs_of(inst, wave64: bool) -> Regs:
    """The registers `inst` reads and writes (destinations first, as LLVM prints them)."""
    texts = list(inst.operands)
    ndef = _definitions(inst, texts)
    out = Regs(set(), set(), set(), set(), inst.literal is not None)
    for i, text in enumerate(texts):
        v, s = parse(text, wave64)
        (out.vdef if i < ndef else out.vuse).update(v)
        (out.sdef if i < ndef else out.suse).update(s)
    name = inst.mnemonic
    if name.startswith("v_cmpx_") or "saveexec" in name or "wrexec" in name:
        out.sdef.update((EXEC, EXEC + 1) if wave64 else (EXEC,))
    if name.startswith(("v_div_fmas",)) or (name.startswith(MASK_READERS) and name.endswith("_e32")):
        out.suse.update((VCC, VCC + 1) if wave64 else (VCC,))
    return out


def _definitions(inst, texts: list[str]) -> int:
    """How many leading operands are destinations."""
    entry = inst.info.get("entry")
    if inst.encoding == "VOPD":
        return 0  # handled by vopd_parts
    if entry is not None:  # VALU: destinations are vdst/sdst and the implicit operands before the sources
        n = 0
        for op in entry.get("ops", []):
            if not (op[0].startswith(("vdst", "sdst")) or op[1] == "imp"):
                break
            n += 1
        return n
    ops = inst.info.get("ops")
    if ops and isinstance(ops[0], list) and ops[0][0] == "sdst":  # SALU
        return 1
    t = inst.info.get("t")  # FLAT/MUBUF/DS tables list vdst first for loads
    mn = inst.mnemonic
    if t is not None or mn.startswith(("ds_", "buffer_", "tbuffer_", "image_", "global_", "flat_", "scratch_")):
        loads = ("load" in mn or "_rtn" in mn or "atomic" in mn and inst.fields.get("glc")) and "store" not in mn
        return 1 if loads else 0
    if mn.startswith(("s_load", "s_buffer_load", "s_getreg", "s_getpc", "s_memtime", "s_memrealtime",
                      "s_sendmsg_rtn")):
        return 1
    return 0


def vopd_parts(inst, wave64: bool) -> Regs:
    """A VOPD's two halves as one set of registers (vdstx, vdsty written; the sources read)."""
    out = Regs(set(), set(), set(), set(), inst.literal is not None)
    texts = list(inst.operands)
    nx = len(inst.info["x"]["ops"])
    for part, names in ((texts[:nx], inst.info["x"]["ops"]), (texts[nx:], inst.info["y"]["ops"])):
        for text, op in zip(part, names, strict=False):
            v, s = parse(text, wave64)
            if op[0].startswith("vdst"):
                out.vdef |= v
            else:
                out.vuse |= v
                out.suse |= s
    if any(m.startswith("v_dual_cndmask") for m in (inst.info["x"]["m"], inst.info["y"]["m"])):
        out.suse.update((VCC, VCC + 1) if wave64 else (VCC,))
    return out
