"""Write the LLVM IR kernels of gfx950's (CDNA4) sparse and f8f6f4 matrix instructions, which the tests compile with
llvmlite (LLVM 22) at test time, as they do tests/data/kernels/cdna4_mfma.ll:

    PYTHONPATH=$PWD python -m tools.gen_cdna4_kernels

- tests/data/kernels/cdna4_smfmac.ll: one kernel per gfx950 SMFMAC (tests/simgpu/shader/test_smfmac.py);
- tests/data/kernels/cdna4_f8f6f4.ll: the f8f6f4 MFMAs over every element format, unscaled and scaled
  (tests/simgpu/shader/test_f8f6f4.py), through llvm.amdgcn.mfma.scale.*.f8f6f4 (LLVM emits the unscaled
  instruction for scale operands 0 with op_sel 0);
- tests/data/kernels/cdna4_lds.ll: the loads into LDS (llvm.amdgcn.global.load.lds and
  llvm.amdgcn.raw/struct.ptr.buffer.load.lds of 1, 2, 4, 12 and 16 bytes) and the transposing LDS reads
  (llvm.amdgcn.ds.read.tr4/tr8/tr16.b64, tr6.b96) (tests/simgpu/shader/test_cdna4_lds.py).
Each matrix kernel is one wave64: lane l loads its registers of each operand from the operand's buffer at l times
their size and stores D's registers to the last buffer. The tests check the files are what this writes.
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


LDS_WORDS = 320  # dwords of the LDS array the DMA kernels fill, load into and copy out (5 a lane)
LDS_BASE = 16  # bytes: the DMA kernels' LDS pointer (M0) is this far into the array
SKIP = 7, 3  # lanes l with l % 7 == 3 do not run the DMA (EXEC off)
DMA = [  # (kernel, intrinsic: global.load.lds / raw / struct .ptr.buffer.load.lds, bytes, immediate offset)
    ("global_1", "global", 1, 4), ("global_2", "global", 2, 0), ("global_4", "global", 4, 8),
    ("global_12", "global", 12, 0), ("global_16", "global", 16, 16),
    ("raw_1", "raw", 1, 8), ("raw_2", "raw", 2, 0), ("raw_4", "raw", 4, 4), ("raw_12", "raw", 12, 16),
    ("raw_16", "raw", 16, 0), ("struct_4", "struct", 4, 0), ("struct_16", "struct", 16, 0)]
TRANSPOSE = [("tr4.b64", 2), ("tr8.b64", 2), ("tr16.b64", 2), ("tr6.b96", 3)]  # (intrinsic, dwords a lane)
_RSRC_FLAGS = 0x20000  # V# word 3: gfx9's DATA_FORMAT 32, the rest 0 (no ADD_TID, no swizzle)


def _dma_call(form: str, size: int, offset: int) -> list[str]:
    """The DMA of `size` bytes a lane from %in at lane l * size (struct: index l, stride = size) to %ldsp."""
    if form == "global":
        return ["  %g = getelementptr i8, ptr addrspace(1) %in, i32 %off",
                f"  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) %ldsp, i32 {size}, "
                f"i32 {offset}, i32 0)"]
    rsrc = (f"  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, "
            f"i16 {size if form == 'struct' else 0}, i64 65536, i32 {_RSRC_FLAGS})")
    if form == "raw":
        return [rsrc, f"  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) "
                      f"%ldsp, i32 {size}, i32 %off, i32 0, i32 {offset}, i32 0)"]
    return [rsrc, f"  call void @llvm.amdgcn.struct.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) "
                  f"%ldsp, i32 {size}, i32 %l, i32 0, i32 0, i32 0, i32 0)"]


def _dma_kernel(name: str, form: str, size: int, offset: int) -> list[str]:
    """Fill the LDS array with %fill, run the DMA in the lanes not skipped, copy the array to %out (5 dwords a lane,
    dword j * 64 + l by lane l)."""
    copy = []
    for j in range(LDS_WORDS // 64):
        copy += [f"  %i{j} = add i32 %l, {64 * j}", f"  %f{j} = getelementptr i32, ptr addrspace(1) %fill, i32 %i{j}",
                 f"  %v{j} = load i32, ptr addrspace(1) %f{j}",
                 f"  %a{j} = getelementptr i32, ptr addrspace(3) @lds, i32 %i{j}",
                 f"  store i32 %v{j}, ptr addrspace(3) %a{j}"]
    out = []
    for j in range(LDS_WORDS // 64):
        out += [f"  %r{j} = load i32, ptr addrspace(3) %a{j}",
                f"  %o{j} = getelementptr i32, ptr addrspace(1) %out, i32 %i{j}",
                f"  store i32 %r{j}, ptr addrspace(1) %o{j}"]
    return [f"define amdgpu_kernel void @cdna4_lds_{name}(ptr addrspace(1) %in, ptr addrspace(1) %fill, "
            "ptr addrspace(1) %out) #0 {",
            "  %l = call i32 @llvm.amdgcn.workitem.id.x()", *copy,
            "  fence syncscope(\"workgroup\") release", "  call void @llvm.amdgcn.s.barrier()",
            "  fence syncscope(\"workgroup\") acquire",
            f"  %ldsp = getelementptr i8, ptr addrspace(3) @lds, i32 {LDS_BASE}",
            f"  %off = mul i32 %l, {size}", f"  %lm = urem i32 %l, {SKIP[0]}", f"  %run = icmp ne i32 %lm, {SKIP[1]}",
            "  br i1 %run, label %dma, label %done", "dma:", *_dma_call(form, size, offset), "  br label %done",
            "done:", "  call void @llvm.amdgcn.s.waitcnt(i32 0)",
            "  fence syncscope(\"workgroup\") release", "  call void @llvm.amdgcn.s.barrier()",
            "  fence syncscope(\"workgroup\") acquire", *out, "  ret void", "}", ""]


def _transpose_kernel(intr: str, dwords: int) -> list[str]:
    """Lane l writes its `dwords` dwords of %in to LDS at l * 4 * dwords, then reads the transposing form at the
    byte address %addr[l] and stores its result to %out at l * 4 * dwords."""
    ty = f"<{dwords} x i32>"
    rty, suffix = ("<4 x i16>", "v4i16") if intr == "tr16.b64" else (ty, f"v{dwords}i32")  # tr16 returns 16-bit values
    name = "cdna4_lds_" + intr.replace(".", "_")
    return [f"define amdgpu_kernel void @{name}(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) "
            "#0 {",
            "  %l = call i32 @llvm.amdgcn.workitem.id.x()",
            f"  %gi = getelementptr {ty}, ptr addrspace(1) %in, i32 %l",
            f"  %v = load {ty}, ptr addrspace(1) %gi, align 4",
            f"  %li = getelementptr {ty}, ptr addrspace(3) @lds, i32 %l",
            f"  store {ty} %v, ptr addrspace(3) %li, align 4",
            "  fence syncscope(\"workgroup\") release", "  call void @llvm.amdgcn.s.barrier()",
            "  fence syncscope(\"workgroup\") acquire",
            "  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %l", "  %b = load i32, ptr addrspace(1) %ga",
            "  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %b",
            f"  %t0 = call {rty} @llvm.amdgcn.ds.read.{intr}.{suffix}(ptr addrspace(3) %p)",
            f"  %t = bitcast {rty} %t0 to {ty}",
            f"  %go = getelementptr {ty}, ptr addrspace(1) %out, i32 %l",
            f"  store {ty} %t, ptr addrspace(1) %go, align 4",
            "  ret void", "}", ""]


def lds() -> str:
    decls = ["declare void @llvm.amdgcn.s.barrier()", "declare void @llvm.amdgcn.s.waitcnt(i32)",
             "declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)",
             "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)",
             "declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, "
             "i32, i32)",
             "declare void @llvm.amdgcn.struct.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, "
             "i32, i32, i32)"]
    decls += [f"declare <{d} x i32> @llvm.amdgcn.ds.read.{i}.v{d}i32(ptr addrspace(3))" for i, d in TRANSPOSE
              if i != "tr16.b64"] + ["declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))"]
    body = [f"@lds = internal addrspace(3) global [{LDS_WORDS} x i32] poison, align 16", ""]
    for name, form, size, offset in DMA:
        body += _dma_kernel(name, form, size, offset)
    for intr, dwords in TRANSPOSE:
        body += _transpose_kernel(intr, dwords)
    head = ["; gfx9's loads into LDS and gfx950's transposing LDS reads (tests/simgpu/shader/test_cdna4_lds.py;",
            "; written by tools/gen_cdna4_kernels.py). cdna4_lds_<form>_<bytes>: one wave64 fills the LDS array",
            "; from fill, loads <bytes> a lane from in (lane l at l * bytes, or index l) into LDS at",
            f"; @lds + {LDS_BASE} (M0) with the form's immediate offset, lanes l % {SKIP[0]} == {SKIP[1]} skipped, and",
            "; copies the array to out.",
            "; cdna4_lds_<tr>: lane l writes its dwords of in to LDS at l times their size, reads the transposing",
            "; form at the byte address addr[l] and stores the result to out.", ""]
    return "\n".join(head + HEAD + decls + [""] + body + TAIL)


FILES = {"cdna4_smfmac.ll": smfmac, "cdna4_f8f6f4.ll": f8f6f4, "cdna4_lds.ll": lds}


def main() -> None:
    for name, make in FILES.items():
        (KERNELS / name).write_text(make())
        print(f"wrote {KERNELS / name}")


if __name__ == "__main__":
    main()
