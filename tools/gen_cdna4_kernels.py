"""Write the LLVM IR kernels of gfx950's (CDNA4) sparse and f8f6f4 matrix instructions, which the tests compile with
llvmlite (LLVM 22) at test time, as they do tests/data/kernels/cdna4_mfma.ll:

    PYTHONPATH=$PWD python -m tools.gen_cdna4_kernels

- tests/data/kernels/cdna4_smfmac.ll: one kernel per gfx950 SMFMAC (tests/simgpu/shader/test_smfmac.py);
- tests/data/kernels/cdna4_f8f6f4.ll: the f8f6f4 MFMAs over every element format, unscaled and scaled
  (tests/simgpu/shader/test_f8f6f4.py), through llvm.amdgcn.mfma.scale.*.f8f6f4 (LLVM emits the unscaled
  instruction for scale operands 0 with op_sel 0).
Each kernel is one wave64: lane l loads its registers of each operand from the operand's buffer at l times their size
and stores D's registers to the last buffer. The tests check the files are what this writes.
"""

from __future__ import annotations

from pathlib import Path

KERNELS = Path(__file__).resolve().parent.parent / "tests" / "data" / "kernels"
HEAD = ['target triple = "amdgcn-amd-amdhsa"', "", "declare i32 @llvm.amdgcn.workitem.id.x()"]
TAIL = ['attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }', ""]


def _load(name: str, ty: str, words: int | None = None) -> list[str]:
    """Lane l's `ty` from buffer %p<name>: at l * sizeof(ty), or at l * `words` dwords (a <6 x i32> steps 32 bytes)."""
    if words is None:
        return [f"  %g{name} = getelementptr {ty}, ptr addrspace(1) %p{name}, i32 %l",
                f"  %{name} = load {ty}, ptr addrspace(1) %g{name}"]
    return [f"  %i{name} = mul i32 %l, {words}",
            f"  %g{name} = getelementptr i32, ptr addrspace(1) %p{name}, i32 %i{name}",
            f"  %{name} = load {ty}, ptr addrspace(1) %g{name}, align 4"]


def _kernel(name: str, params: list[str], loads: list[str], call: str, tc: str) -> list[str]:
    args = ", ".join(f"ptr addrspace(1) %p{p}" for p in params)
    return [f"define amdgpu_kernel void @{name}({args}, ptr addrspace(1) %out) #0 {{",
            "  %l = call i32 @llvm.amdgcn.workitem.id.x()", *loads, f"  %d = call {call}",
            f"  %go = getelementptr {tc}, ptr addrspace(1) %out, i32 %l", f"  store {tc} %d, ptr addrspace(1) %go",
            "  ret void", "}", ""]


def smfmac() -> str:
    """The 14 gfx950 SMFMACs; the 16x16 f16/bf16 ones select index set 1 (abid 1), the others set 0."""
    shapes = []
    for t in ("f16", "bf16"):
        shapes += [(f"f32.16x16x64.{t}", t, "<4 x float>", 1), (f"f32.32x32x32.{t}", t, "<16 x float>", 0)]
    shapes += [("i32.16x16x128.i8", "i8", "<4 x i32>", 0), ("i32.32x32x64.i8", "i8", "<16 x i32>", 0)]
    for a in ("fp8", "bf8"):
        for b in ("fp8", "bf8"):
            shapes += [(f"f32.16x16x128.{a}.{b}", a, "<4 x float>", 0), (f"f32.32x32x64.{a}.{b}", a, "<16 x float>", 0)]
    decls, body = set(), []
    for name, kind, tc, abid in shapes:
        ta, tb = ({"f16": "<8 x half>", "bf16": "<8 x bfloat>"}.get(kind, "<4 x i32>"),
                  {"f16": "<16 x half>", "bf16": "<16 x bfloat>"}.get(kind, "<8 x i32>"))
        intr = f"@llvm.amdgcn.smfmac.{name}"
        decls.add(f"declare {tc} {intr}({ta}, {tb}, {tc}, i32, i32, i32)")
        loads = _load("a", ta) + _load("b", tb) + _load("k", "i32") + _load("c", tc)
        call = f"{tc} {intr}({ta} %a, {tb} %b, {tc} %c, i32 %k, i32 0, i32 {abid})"
        body += _kernel("cdna4_smfmac_" + name.replace(".", "_"), ["a", "b", "k", "c"], loads, call, tc)
    head = ["; gfx950's (CDNA4) SMFMACs (tests/simgpu/shader/test_smfmac.py; written by tools/gen_cdna4_kernels.py):",
            "; lane l loads its A (compressed), B, index and C registers from a, b, k, c, stores D to out. The 16x16",
            "; f16/bf16 kernels select index set 1 (abid 1); the others set 0.", ""]
    return "\n".join(head + HEAD + sorted(decls) + [""] + body + TAIL)


REGS = {0: 8, 1: 8, 2: 6, 3: 6, 4: 4}  # VGPRs of a lane's 32 values per format code
F8F6F4 = [  # (shape, A format, B format, scaled, A byte select, B byte select)
    ("16x16x128", 0, 0, False, 0, 0), ("16x16x128", 1, 2, False, 0, 0), ("16x16x128", 3, 4, False, 0, 0),
    ("16x16x128", 4, 0, True, 0, 0), ("16x16x128", 2, 3, True, 3, 1), ("16x16x128", 0, 1, True, 2, 2),
    ("32x32x64", 4, 4, False, 0, 0), ("32x32x64", 0, 1, True, 1, 3), ("32x32x64", 2, 4, True, 0, 2)]


def f8f6f4() -> str:
    decls, body = set(), []
    for shape, fa, fb, scaled, oa, ob in F8F6F4:
        tc = "<4 x float>" if shape == "16x16x128" else "<16 x float>"
        ta, tb = f"<{REGS[fa]} x i32>", f"<{REGS[fb]} x i32>"
        intr = f"@llvm.amdgcn.mfma.scale.f32.{shape}.f8f6f4.v{REGS[fa]}i32.v{REGS[fb]}i32"
        decls.add(f"declare {tc} {intr}({ta}, {tb}, {tc}, i32, i32, i32, i32, i32, i32)")
        name = f"cdna4_f8f6f4_{shape}_{fa}_{fb}" + (f"_scaled_{oa}_{ob}" if scaled else "")
        sa, sb = ("%sa", "%sb") if scaled else ("0", "0")
        loads = (_load("a", ta, REGS[fa]) + _load("b", tb, REGS[fb]) + _load("sa", "i32") + _load("sb", "i32")
                 + _load("c", tc))
        call = f"{tc} {intr}({ta} %a, {tb} %b, {tc} %c, i32 {fa}, i32 {fb}, i32 {oa}, i32 {sa}, i32 {ob}, i32 {sb})"
        body += _kernel(name, ["a", "b", "sa", "sb", "c"], loads, call, tc)
    head = ["; gfx950's (CDNA4) f8f6f4 MFMAs, unscaled and scaled (tests/simgpu/shader/test_f8f6f4.py; written by",
            "; tools/gen_cdna4_kernels.py): lane l loads its A and B registers (the format's 8, 6 or 4 dwords each),",
            "; its A and B scale VGPRs and C, and stores D to out. The name gives the shape, A's and B's format",
            "; codes (cbsz, blgp) and, if scaled, the byte selects.", ""]
    return "\n".join(head + HEAD + sorted(decls) + [""] + body + TAIL)


FILES = {"cdna4_smfmac.ll": smfmac, "cdna4_f8f6f4.ll": f8f6f4}


def main() -> None:
    for name, make in FILES.items():
        (KERNELS / name).write_text(make())
        print(f"wrote {KERNELS / name}")


if __name__ == "__main__":
    main()
