"""s_waitcnt placement on allocated code.

Memory instructions return their results asynchronously; a counter per kind counts the outstanding ones:
vmcnt the vector memory loads (global, scratch: they return in issue order), lgkmcnt the LDS operations (in
order) and scalar loads (s_load: out of order). Before an instruction reads or overwrites a register a pending
load will write, it waits until that load is done (a vector load overwriting, or merging a d16 half into, what an
earlier vector load writes needs no wait: they complete in order): vmcnt(n) with n the loads issued after it; lgkmcnt(n)
likewise when only LDS operations are pending, lgkmcnt(0) when a scalar load is (they may complete in any
order). A barrier waits for every LDS operation (lgkmcnt(0)), so stores before it are visible to the
workgroup after it. Stores are not waited for: the IR never reads a global buffer it writes, and a wave's
scratch (spill) accesses to one address stay in order.

Control flow is kept simple: nothing is pending across a label or a branch (a wait before each when needed),
so loop headers and the ends of skipped regions see an empty state from every predecessor.
"""

from __future__ import annotations

from compiler.backend.mir import MInst, Sub

VMCNT_MAX = 63
LGKMCNT_MAX = 63


def _units(ops) -> set[tuple[str, int]]:
    out = set()
    for o in ops:
        if isinstance(o, Sub):
            base = o.reg.phys + o.off
            out.update((o.rc, base + i) for i in range(o.n))
    return out


def _wait(vm: int | None, lgkm: int | None) -> MInst:
    parts = []
    if vm is not None:
        parts.append(f"vmcnt({min(vm, VMCNT_MAX)})")
    if lgkm is not None:
        parts.append(f"lgkmcnt({min(lgkm, LGKMCNT_MAX)})")
    return MInst("s_waitcnt", mods=" ".join(parts), flags=frozenset({"wait"}))


def insert_waits(code: list[MInst]) -> list[MInst]:
    """Code with s_waitcnt instructions where results are needed (module docstring)."""
    out: list[MInst] = []
    vm: list[set] = []  # pending vector loads: registers each writes, oldest first
    lgkm: list[tuple[str, set]] = []  # pending LDS ('lds') and scalar ('smem') operations
    for m in code:
        flush = m.is_label() or m.target is not None
        if flush or "barrier" in m.flags:
            want_vm = 0 if vm and flush else None
            want_lgkm = 0 if lgkm else None
            if want_vm is not None or want_lgkm is not None:
                out.append(_wait(want_vm, want_lgkm))
                if want_vm is not None:
                    vm = []
                if want_lgkm is not None:
                    lgkm = []
        else:
            touched = _units(m.ops)
            # a vector load may overwrite (or merge into, d16) what an earlier one writes: they complete in order
            vm_touched = _units(m.ops[m.ndef:]) if "vmem" in m.flags and "load" in m.flags else touched
            n_vm = n_lgkm = None
            for i in range(len(vm) - 1, -1, -1):
                if vm[i] & vm_touched:
                    n_vm = len(vm) - 1 - i
                    break
            for i in range(len(lgkm) - 1, -1, -1):
                if lgkm[i][1] & touched:
                    n_lgkm = 0 if any(k == "smem" for k, _ in lgkm) else len(lgkm) - 1 - i
                    break
            if n_vm is not None or n_lgkm is not None:
                out.append(_wait(n_vm, n_lgkm))
                if n_vm is not None:
                    vm = vm[len(vm) - n_vm:] if n_vm else []
                if n_lgkm is not None:
                    lgkm = lgkm[len(lgkm) - n_lgkm:] if n_lgkm else []
        out.append(m)
        if "load" in m.flags:
            regs = _units(m.ops[:m.ndef])
            if "vmem" in m.flags:
                vm.append(regs)
            else:
                lgkm.append(("smem" if "smem" in m.flags else "lds", regs))
        elif "lds" in m.flags:  # an LDS store: counted by lgkmcnt (a barrier waits for it)
            lgkm.append(("lds", set()))
    return out
