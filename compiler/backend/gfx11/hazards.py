"""Hardware hazards of gfx11 that matter for correctness, fixed on allocated code as LLVM's GCNHazardRecognizer
does for gfx1100 (its FeatureISAVersion11 hazards; gfx10+ has no data-dependency wait states otherwise):

- VALUTransUseHazard: a VALU that reads a VGPR written by a transcendental (v_exp, v_log, v_rcp, v_rsq,
  v_sqrt, v_sin, v_cos, v_rcp_iflag) with at most 5 VALU and 1 transcendental instruction between them gets
  `s_waitcnt_depctr 0xfff` (va_vdst = 0) first. A VMEM, LDS or export instruction, or such a wait, in
  between ends the hazard. Predecessors are followed through labels (loop back edges included).
- WMMA: a WMMA whose A or B operand overlaps the previous VALU's result when that VALU is a WMMA (its D) gets a
  v_nop between them.

Not applicable here and left out: VALUPartialForwardingHazard and VALUMaskWriteHazard (wave64 only in LLVM),
VcmpxPermlaneHazard (no v_permlane), LDS-direct hazards (no lds_direct), the gfx10 VMEM/SMEM/LDS-branch hazards.
"""

from __future__ import annotations

from compiler.backend.mir import MInst, Sub

TRANS = {"v_exp_f32", "v_log_f32", "v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32", "v_sin_f32",
         "v_cos_f32", "v_rcp_f64", "v_rsq_f64", "v_sqrt_f64", "v_exp_f16", "v_log_f16", "v_rcp_f16", "v_rsq_f16",
         "v_sqrt_f16", "v_sin_f16", "v_cos_f16"}
DEPCTR_VA_VDST0 = "0xfff"


def _base(op: str) -> str:
    for suffix in ("_e64", "_e32"):
        if op.endswith(suffix):
            return op[:-len(suffix)]
    return op


def is_valu(m: MInst) -> bool:
    return m.op.startswith("v_")


def is_trans(m: MInst) -> bool:
    return _base(m.op) in TRANS


def _vgprs(ops) -> set[int]:
    out = set()
    for o in ops:
        if isinstance(o, Sub) and o.rc == "v":
            b = o.reg.phys + o.off
            out.update(range(b, b + o.n))
    return out


def _expires(m: MInst) -> bool:
    return bool({"vmem", "lds"} & m.flags) or (m.op == "s_waitcnt_depctr" and m.mods == DEPCTR_VA_VDST0)


def _predecessors(code: list[MInst]) -> dict[str, list[int]]:
    """For each label, the indices (in `code`) of the branches that jump to it."""
    preds: dict[str, list[int]] = {}
    for i, m in enumerate(code):
        if m.target is not None and not m.is_label():
            preds.setdefault(m.target, []).append(i)
    return preds


def _trans_hazard(out: list[MInst], code: list[MInst], srcs: set[int], preds: dict[str, list[int]]) -> bool:
    """Whether a transcendental within the window before the next instruction writes one of srcs (module
    docstring). `out` is the code emitted so far (with the waits already inserted); a label's predecessors are
    followed in the original `code` (conservatively: without the waits inserted there)."""
    stack = [(out, len(out) - 1, 0, 0)]
    seen = set()
    while stack:
        seq, j, valus, trans = stack.pop()
        while j >= 0:
            if valus > 5 or trans > 1:
                break
            m = seq[j]
            if _expires(m):
                break
            if is_trans(m) and _vgprs(m.ops[:m.ndef]) & srcs:
                return True
            if m.is_label():
                for p in preds.get(m.target, []):
                    if (p, valus, trans) not in seen:
                        seen.add((p, valus, trans))
                        stack.append((code, p - 1, valus, trans))
            if is_valu(m):
                valus += 1
            if is_trans(m):
                trans += 1
            j -= 1
    return False


def fix_hazards(code: list[MInst]) -> list[MInst]:
    """Code with the waits and nops above inserted."""
    preds = _predecessors(code)
    out: list[MInst] = []
    for m in code:
        if is_valu(m):
            srcs = _vgprs(m.ops if m.rmw else m.ops[m.ndef:])
            if srcs and _trans_hazard(out, code, srcs, preds):
                out.append(MInst("s_waitcnt_depctr", mods=DEPCTR_VA_VDST0, flags=frozenset({"wait"})))
            if "wmma" in m.flags:
                prev = next((x for x in reversed(out) if is_valu(x)), None)
                if prev is not None and "wmma" in prev.flags and _vgprs(prev.ops[:1]) & _vgprs(m.ops[1:3]):
                    out.append(MInst("v_nop"))
        out.append(m)
    return out
