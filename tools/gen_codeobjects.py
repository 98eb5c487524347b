#!/usr/bin/env python3
"""Generate the golden AMDGPU code objects of tests/data/codeobjects/ and the facts LLVM reports about them.

Run from the repository root:  .venv/bin/python -m tools.gen_codeobjects
Needs llvmlite and Debian's llvm-19, lld-19 and clang-19 (/usr/lib/llvm-19/bin).

Writes:
  llvmlite_vadd.o / .so     LLVM IR compiled by llvmlite (code object v5), then `ld.lld -shared`
  llvmlite_vadd_v6.o        the same IR as code object v6 (ABI version 4)
  opencl_kernels.o / .so    OpenCL C compiled by clang-19 (REL32_LO/HI and ABS64 relocations), then `ld.lld -shared`
  asm_kernels.o / .so       .amdhsa_kernel blocks assembled by llvm-mc (descriptor defaults), then `ld.lld -shared`
  opencl_kernels_stripped.so  `llvm-strip --strip-all` of opencl_kernels.so (only .dynsym is left)
  *.ll, *.cl, *.s           the sources
  facts.json                what llvm-readobj and llvm-objdump say about each file (the tests' oracle)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from compiler.samples import VADD

LLVM = Path("/usr/lib/llvm-19/bin")
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "codeobjects"

# VADD (compiler.samples) as a module of its own: target triple, and the code object version filled in per build.
VADD_IR = (f'target triple = "amdgcn-amd-amdhsa"\n\n{VADD.ir}\n!llvm.module.flags = !{{!0}}\n'
           '!0 = !{i32 1, !"amdhsa_code_object_version", i32 VERSION}\n')

OPENCL = """\
__kernel void saxpy(__global float *y, __global const float *x, float a, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  if (i < n) y[i] = a * x[i] + y[i];
}

__constant int table[4] = {1, 2, 3, 4};
__constant int other[4] = {5, 6, 7, 8};
__constant int *__constant ptrs[2] = {table, other};

__kernel void lookup(__global int *out, __local int *scratch) {
  int i = __builtin_amdgcn_workitem_id_x();
  scratch[i] = table[i & 3];
  __builtin_amdgcn_s_barrier();
  out[__builtin_amdgcn_workgroup_id_x() * 64 + i] = scratch[(i + 1) & 63];
}

__kernel void pick(__global int *out, int which) {
  int i = __builtin_amdgcn_workitem_id_x();
  out[i] = ptrs[which & 1][i & 3];
}
"""

# Kernels assembled by llvm-mc: (name, make_descriptor keyword arguments, .amdhsa_ directives saying the same).
# The tests build make_descriptor(**kwargs) and compare it with the descriptor LLVM's assembler made.
ASM_KERNELS = [
    ("copy", {"vgprs": 2, "kernarg_size": 16},
     [".amdhsa_next_free_vgpr 2", ".amdhsa_next_free_sgpr 4", ".amdhsa_user_sgpr_kernarg_segment_ptr 1",
      ".amdhsa_kernarg_size 16"]),
    ("wide", {"vgprs": 37, "kernarg_size": 64, "group_segment_size": 4096,
              "user_sgprs": ["dispatch_ptr", "queue_ptr", "kernarg_segment_ptr"], "workgroup_ids": "xyz",
              "workitem_id_dims": 3},
     [".amdhsa_next_free_vgpr 37", ".amdhsa_next_free_sgpr 20", ".amdhsa_user_sgpr_dispatch_ptr 1",
      ".amdhsa_user_sgpr_queue_ptr 1", ".amdhsa_user_sgpr_kernarg_segment_ptr 1", ".amdhsa_kernarg_size 64",
      ".amdhsa_group_segment_fixed_size 4096", ".amdhsa_system_sgpr_workgroup_id_y 1",
      ".amdhsa_system_sgpr_workgroup_id_z 1", ".amdhsa_system_vgpr_workitem_id 2"]),
    ("wave64", {"vgprs": 9, "private_segment_size": 256, "user_sgprs": ["dispatch_id", "private_segment_size"],
                "workgroup_ids": "", "wave32": False},
     [".amdhsa_next_free_vgpr 9", ".amdhsa_next_free_sgpr 4", ".amdhsa_wavefront_size32 0",
      ".amdhsa_user_sgpr_dispatch_id 1", ".amdhsa_user_sgpr_private_segment_size 1",
      ".amdhsa_private_segment_fixed_size 256", ".amdhsa_enable_private_segment 1",
      ".amdhsa_system_sgpr_workgroup_id_x 0"]),
]

# A kernel body (copy one dword per lane) used by `copy`; the tests reassemble it with llvm-mc as well.
COPY_BODY = """\
  s_load_b128 s[0:3], s[0:1], 0x0
  v_lshlrev_b32 v0, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_b32 v1, v0, s[2:3]
  s_waitcnt vmcnt(0)
  global_store_b32 v0, v1, s[0:1]
  s_endpgm
"""


def run(*args: str | Path) -> str:
    """Run an LLVM tool and return its stdout; fail loudly on errors or warnings."""
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0 or "warning" in p.stderr:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{p.stderr}")
    return p.stdout


def asm_source() -> str:
    """The llvm-mc source of ASM_KERNELS."""
    lines = ['.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"']
    for name, _, directives in ASM_KERNELS:
        body = COPY_BODY if name == "copy" else "  s_endpgm\n"
        lines += [".text", f".globl {name}", ".p2align 8", f".type {name},@function", f"{name}:", body.rstrip(),
                  f".L{name}_end:", f".size {name}, .L{name}_end-{name}", ".rodata", ".p2align 6",
                  f".amdhsa_kernel {name}", *(f"  {d}" for d in directives), ".end_amdhsa_kernel"]
    return "\n".join(lines) + "\n"


def compile_llvmlite(version: int) -> bytes:
    """Compile VADD_IR for gfx1100 as code object `version` (500 or 600) with llvmlite."""
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    module = llvm.parse_assembly(VADD_IR.replace("VERSION", str(version)))
    module.verify()
    target = llvm.Target.from_triple("amdgcn-amd-amdhsa")
    machine = target.create_target_machine(cpu="gfx1100", opt=2, reloc="pic")
    return machine.emit_object(module)


def build() -> list[str]:
    """Write every binary and source; return the binaries' file names."""
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "vadd.ll").write_text(VADD_IR.replace("VERSION", "500"))
    (OUT / "llvmlite_vadd.o").write_bytes(compile_llvmlite(500))
    (OUT / "llvmlite_vadd_v6.o").write_bytes(compile_llvmlite(600))
    (OUT / "kernels.cl").write_text(OPENCL)
    run(LLVM / "clang", "-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-nogpulib", "-O2", "-c",
        OUT / "kernels.cl", "-o", OUT / "opencl_kernels.o")
    (OUT / "kernels.s").write_text(asm_source())
    run(LLVM / "llvm-mc", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-filetype=obj", OUT / "kernels.s",
        "-o", OUT / "asm_kernels.o")
    for stem in ("llvmlite_vadd", "opencl_kernels", "asm_kernels"):
        run(LLVM / "ld.lld", "-shared", OUT / f"{stem}.o", "-o", OUT / f"{stem}.so")
    run(LLVM / "llvm-strip", "--strip-all", OUT / "opencl_kernels.so", "-o", OUT / "opencl_kernels_stripped.so")
    return ["llvmlite_vadd.o", "llvmlite_vadd.so", "llvmlite_vadd_v6.o", "opencl_kernels.o", "opencl_kernels.so",
            "asm_kernels.o", "asm_kernels.so"]


def hexdump(path: Path, section: str) -> tuple[int, bytes]:
    """A section's address and bytes, from `llvm-objdump -s -j`."""
    start, blob = None, bytearray()
    for line in run(LLVM / "llvm-objdump", "-s", "-j", section, path).splitlines():
        m = re.match(r"^ ([0-9a-f]+) ((?:[0-9a-f]{2,8} ?){1,4})", line)
        if m:
            start = int(m[1], 16) if start is None else start
            blob += bytes.fromhex(m[2].replace(" ", ""))
    return start or 0, bytes(blob)


def amdhsa_directives(path: Path, kd_symbol: str) -> dict[str, int | str]:
    """The descriptor as llvm-objdump prints it: `.amdhsa_*` directives and `; NAME value` rsrc3 comments, or
    {"error": why} when llvm-objdump refuses to decode it."""
    out = run(LLVM / "llvm-objdump", "-D", "--mcpu=gfx1100", f"--disassemble-symbols={kd_symbol}", path)
    if m := re.search(r"^; error decoding [^:]+: (.*)$", out, re.M):
        return {"error": m[1]}
    fields: dict[str, int | str] = {}
    for line in out.splitlines():
        m = re.match(r"^\t(\.amdhsa_\w+|; [A-Z_0-9]+) (-?\d+)$", line)
        if m:
            fields[m[1].removeprefix("; ")] = int(m[2])
    return fields


def metadata_from_yaml(text: str) -> dict:
    """The parts of llvm-readobj's YAML rendering of the metadata note that the tests check."""
    meta: dict = {"kernels": [], "amdhsa.version": []}
    top = kernel = arg = None
    for line in text.splitlines():
        if m := re.match(r"^(amdhsa\.\w+):\s*(\S*)", line):
            top, kernel = m[1], None
            if m[2]:
                meta[top] = m[2]
            continue
        if top == "amdhsa.version" and (m := re.match(r"^  - (\d+)$", line)):
            meta[top].append(int(m[1]))
            continue
        if top != "amdhsa.kernels":
            continue
        if line.startswith("  - "):
            kernel = {"args": []}
            meta["kernels"].append(kernel)
            line = "    " + line[4:]
        if kernel is None:
            continue
        if re.match(r"^      - (\.\w+):", line):
            arg = {}
            kernel["args"].append(arg)
        if m := re.match(r"^(?:      - |        )(\.\w+):\s*(.*)$", line):
            arg[m[1]] = scalar(m[2])
        elif m := re.match(r"^    (\.\w+):\s*(.*)$", line):
            kernel[m[1]] = scalar(m[2])
    return meta


def scalar(text: str) -> object:
    """A YAML scalar as LLVM prints it."""
    text = text.strip().strip("'")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return {"true": True, "false": False}.get(text, text)


def facts(name: str) -> dict:
    """What llvm-readobj / llvm-objdump report about one file."""
    path = OUT / name
    doc = json.loads(run(LLVM / "llvm-readobj", "--elf-output-style=JSON", "--file-header", "--sections",
                         "--symbols", "--relocations", "--notes", path))[0]
    header = doc["ElfHeader"]
    sections = [s["Section"] for s in doc["Sections"]]
    secinfo = [{"index": s["Index"], "name": s["Name"]["Name"], "type": s["Type"]["Name"], "flags": s["Flags"]["Value"],
                "address": s["Address"], "offset": s["Offset"], "size": s["Size"]} for s in sections]
    symbols = [{"name": s["Symbol"]["Name"]["Name"], "value": s["Symbol"]["Value"], "size": s["Symbol"]["Size"],
                "type": s["Symbol"]["Type"]["Name"], "binding": s["Symbol"]["Binding"]["Name"],
                "section": s["Symbol"]["Section"]["Name"]} for s in doc.get("Symbols", [])]
    relocations = [{"section": secinfo[r["SectionIndex"]]["name"], "offset": e["Relocation"]["Offset"],
                    "type": e["Relocation"]["Type"]["Name"], "type_value": e["Relocation"]["Type"]["Value"],
                    "symbol": e["Relocation"]["Symbol"]["Name"], "addend": e["Relocation"]["Addend"]}
                   for r in doc.get("Relocations", []) for e in r["Relocs"]]
    notes = [n for ns in doc.get("NoteSections", []) for n in ns["NoteSection"]["Notes"]]
    yaml = next((n["AMDGPU Metadata"] for n in notes if "AMDGPU Metadata" in n), "")
    text_addr, text = hexdump(path, ".text")
    rodata_addr, rodata = hexdump(path, ".rodata")
    by_name = {s["name"]: s for s in symbols}
    kernels = {}
    for s in symbols:
        if s["name"].endswith(".kd") and s["type"] == "Object":
            fn = by_name[s["name"][:-3]]
            kernels[s["name"][:-3]] = {
                "descriptor_symbol": s["name"], "descriptor_address": s["value"], "entry_symbol_address": fn["value"],
                "descriptor_hex": rodata[s["value"] - rodata_addr:s["value"] - rodata_addr + 64].hex(),
                "code_hex": text[fn["value"] - text_addr:fn["value"] - text_addr + fn["size"]].hex(),
                "amdhsa": amdhsa_directives(path, s["name"])}
    return {"elf_type": header["Type"], "abi_version": header["Ident"]["ABIVersion"],
            "os_abi": header["Ident"]["OS/ABI"]["Value"], "e_flags": header["Flags"]["Value"],
            "sections": secinfo, "symbols": symbols, "relocations": relocations,
            "metadata": metadata_from_yaml(yaml), "text_address": text_addr, "text_hex": text.hex(),
            "kernels": kernels}


def main() -> None:
    """Build everything and write facts.json."""
    names = build()
    version = run(LLVM / "llvm-objdump", "--version").splitlines()[1].strip()
    doc = {"generator": "tools/gen_codeobjects.py", "llvm_tools": version,
           "stripped": {"opencl_kernels_stripped.so": "opencl_kernels.so"},
           "asm_kernels": {name: kwargs for name, kwargs, _ in ASM_KERNELS}, "copy_body": COPY_BODY,
           "files": {name: facts(name) for name in names}}
    (OUT / "facts.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(names) + len(doc['stripped'])} code objects and facts.json to {OUT}")


if __name__ == "__main__":
    main()
