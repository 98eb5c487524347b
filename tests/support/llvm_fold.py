"""LLVM as a semantics oracle: constant folding of IR operations and llvm.amdgcn.* intrinsics.

`fold(case, rows)` writes one function that applies the case's IR to every row of constant operands,
stores each result to a global with a volatile store, runs LLVM's O1 pipeline for gfx1100 through
llvmlite (InstCombine folds the plain operations and, through the AMDGPU target's hooks, intrinsics
such as llvm.amdgcn.fmed3, .ubfe, .perm, .cubeid, .fract, .class) and reads the stored constants back.
A result LLVM does not fold (or folds to poison: out-of-range shifts, conversions) is None.

LLVM is the oracle here, not simgpu: llvmlite's LLVM (22) evaluates with its own APFloat/APInt code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

# IR type -> (integer type of its bits, bit width)
BITS = {"half": ("i16", 16), "bfloat": ("i16", 16), "float": ("i32", 32), "double": ("i64", 64),
        "i1": ("i32", 32), "i8": ("i8", 8), "i16": ("i16", 16), "i32": ("i32", 32), "i64": ("i64", 64),
        "<2 x half>": ("i32", 32), "<2 x i16>": ("i32", 32)}
_LOCAL = re.compile(r"%([A-Za-z_][\w.]*)")
_STORE = re.compile(r"^\s*store volatile (i\d+) ([^,]+), ptr @g")


@dataclass
class Case:
    """One instruction checked against LLVM: `ir` computes %r (type `rtype`) from %x0, %x1, %x2 (types
    `types`); `inst` is the instruction text run on the engine (operands in v[10:11], v[12:13],
    v[14:15], result in v20/v[20:21], or VCC); `decls` declares the intrinsics `ir` calls."""

    inst: str
    types: tuple[str, ...]
    ir: str
    rtype: str
    decls: tuple[str, ...] = ()
    gen: tuple[str, ...] = ()  # input generators per operand (default: by type); see inputs.py
    mode: int | None = None  # MODE for the run (None: the harness's IEEE, nearest-even, denormals kept)
    nan_bits: bool = True  # compare NaN results bit for bit (else only that both are NaN)
    zero_sign: bool = True  # compare the sign of zero results
    # rows where the instruction's documented semantics and LLVM's operation part (the reason in `note`)
    skip: Callable[[tuple[int, ...]], bool] | None = None
    min_folded: int = 64  # LLVM must fold at least this many rows (exp2 folds only exact results)
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def mnemonic(self) -> str:
        return self.inst.split()[0]


def _lane_ir(case: Case, row: tuple[int, ...], i: int) -> list[str]:
    lines = []
    for k, (t, v) in enumerate(zip(case.types, row, strict=True)):
        it, bits = BITS[t]
        v &= (1 << bits) - 1
        if v >> (bits - 1):
            v -= 1 << bits  # IR integer literals are signed
        if it == t:
            lines.append(f"  %x{k}_{i} = add {t} {v}, 0")
        else:
            lines.append(f"  %x{k}_{i} = bitcast {it} {v} to {t}")
    for line in case.ir.strip().splitlines():
        lines.append("  " + _LOCAL.sub(lambda m: f"%{m.group(1)}_{i}", line.strip()))
    it, _ = BITS[case.rtype]
    if case.rtype == "i1":
        lines.append(f"  %out.{i} = zext i1 %r_{i} to i32")
    elif it == case.rtype:
        lines.append(f"  %out.{i} = add {it} %r_{i}, 0")
    else:
        lines.append(f"  %out.{i} = bitcast {case.rtype} %r_{i} to {it}")
    lines.append(f"  store volatile {it} %out.{i}, ptr @g")
    return lines


def module_text(case: Case, rows: list[tuple[int, ...]]) -> str:
    body = [line for i, row in enumerate(rows) for line in _lane_ir(case, row, i)]
    decls = "\n".join(case.decls)
    return (f'target triple = "amdgcn-amd-amdhsa"\n{decls}\n@g = global [2 x i64] zeroinitializer\n'
            "define void @f() {\n" + "\n".join(body) + "\n  ret void\n}\n")


@cache
def _pass_builder():
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple("amdgcn-amd-amdhsa").create_target_machine(cpu="gfx1100", opt=1)
    return tm


def fold(case: Case, rows: list[tuple[int, ...]]) -> list[int | None]:
    """LLVM's folded result bits for each row (None where it does not fold to a constant)."""
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(module_text(case, rows))
    mod.verify()
    tm = _pass_builder()
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=1))
    pb.getModulePassManager().run(mod, pb)
    out: list[int | None] = []
    for line in str(mod).splitlines():
        m = _STORE.match(line)
        if not m:
            continue
        bits = int(m.group(1)[1:])
        try:
            out.append(int(m.group(2)) & ((1 << bits) - 1))
        except ValueError:  # a %value (not folded), poison or undef
            out.append(None)
    assert len(out) == len(rows), (case.inst, len(out), len(rows))
    return out
