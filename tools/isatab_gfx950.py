"""gfx950's (CDNA4) codec tables: the opcodes it adds to gfx942, written as gfx942's entries of the same operand shape
and checked against LLVM 22's assembler.

    PYTHONPATH=$PWD python -m tools.isatab_gfx950

LLVM 19's llvm-mc, which the other generators probe, does not know gfx950, and the LLVMs that do (llvmlite's LLVM
22, Triton 3.9's) come without a disassembler. So the opcodes are not found by disassembling every opcode value:
each new instruction is named here with a line of it and the gfx942 instruction whose entry has its shape
(TEMPLATES). The tool assembles the line with LLVM 22 (tools/llvm22.py), reads the encoding and opcode from the bytes,
copies the template's entry under the new mnemonic with the line's register widths, and keeps of the template's
modifier bits only those LLVM encodes as the codec does (each bit is set, printed by the codec and assembled by LLVM).
A line whose bytes the codec then does not decode to the same line, or assemble from it, stops the tool.
Written: simgpu/isa/data/gfx950/{valu,memory}.json, as deltas of gfx942's tables.

Which instructions gfx950 adds (over gfx942) was found by asking LLVM's assembler for each mnemonic its
matcher knows: those it accepts for gfx950 but refuses for gfx942 (`python -m tools.isatab_gfx950 --new`).
The f8f6f4 MFMAs (v_mfma_f32_16x16x128_f8f6f4 / 32x32x64) are entries whose "fmt" names the modifier setting each
source's width (valu_fmt.FORMAT_REGS); their "scaled" names the scaled MFMA the codec decodes when v_mfma_ld_scale_b32
(its entry's "pair") comes right before one (FORM_LINES are checked like TEMPLATES' lines). The 49
v_cvt_scalef32_* conversions take the entry of a gfx942 VOP3 op with as many sources and op_sel (v_fma_f16: three,
v_cvt_pk_fp8_f32: two, v_cvt_sr_fp8_f32: two with a four-entry op_sel, as LLVM prints the fp4 packs' destination
byte); the modifier bits LLVM does not encode alike (clamp, omod, some op_sel and neg/abs bits) are dropped as for
every line.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys

from simgpu.isa import assemble, decode
from simgpu.isa.arch import get_arch
from tools import isatab
from tools.llvm22 import assembler

ARCH = "gfx950"
# line of a new instruction (LLVM syntax, as LLVM 22 prints it) -> the gfx942 mnemonic whose entry has its shape
TEMPLATES = {
    # VOP1 (and their VOP3 forms)
    "v_prng_b32_e32 v1, v2": "v_not_b32_e32",
    "v_prng_b32_e64 v1, v2": "v_not_b32_e64",
    "v_cvt_f32_bf16_e32 v1, v2": "v_cvt_f32_f16_e32",
    "v_cvt_f32_bf16_e64 v1, v2": "v_cvt_f32_f16_e64",
    "v_permlane16_swap_b32_e32 v1, v2": "v_not_b32_e32",
    "v_permlane16_swap_b32_e64 v1, v2": "v_not_b32_e64",
    "v_permlane32_swap_b32_e32 v1, v2": "v_not_b32_e32",
    "v_permlane32_swap_b32_e64 v1, v2": "v_not_b32_e64",
    # VOP2
    "v_dot2c_f32_bf16_e32 v1, v2, v3": "v_dot2c_f32_f16_e32",
    "v_dot2c_f32_bf16_e64 v1, v2, v3": "v_dot2c_f32_f16_e64",
    # VOP3
    "v_cvt_pk_bf16_f32 v1, v2, v3": "v_cvt_pkrtz_f16_f32",
    "v_cvt_pk_f16_f32 v1, v2, v3": "v_cvt_pkrtz_f16_f32",
    "v_cvt_sr_bf16_f32 v1, v2, v3": "v_cvt_pk_fp8_f32",  # (op_sel[3]: the result's half)
    "v_cvt_sr_f16_f32 v1, v2, v3": "v_cvt_pk_fp8_f32",
    "v_minimum3_f32 v1, v2, v3, v4": "v_max3_f32",
    "v_maximum3_f32 v1, v2, v3, v4": "v_max3_f32",
    "v_ashr_pk_i8_i32 v1, v2, v3, v4": "v_bfi_b32",
    "v_ashr_pk_u8_i32 v1, v2, v3, v4": "v_bfi_b32",
    "v_bitop3_b32 v1, v2, v3, v4 bitop3:0x12": "v_bfi_b32",
    "v_bitop3_b16 v1, v2, v3, v4 bitop3:0x12": "v_bfi_b32",
    # VOP3P
    "v_dot2_f32_bf16 v1, v2, v3, v4": "v_dot2_f32_f16",
    "v_pk_minimum3_f16 v1, v2, v3, v4": "v_pk_fma_f16",
    "v_pk_maximum3_f16 v1, v2, v3, v4": "v_pk_fma_f16",
    "v_mfma_f32_16x16x32_f16 v[0:3], v[4:7], v[8:11], v[0:3]": "v_mfma_f32_16x16x16_f16",
    "v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]": "v_mfma_f32_16x16x16_bf16",
    "v_mfma_f32_32x32x16_f16 v[0:15], v[16:19], v[20:23], v[0:15]": "v_mfma_f32_32x32x8_f16",
    "v_mfma_f32_32x32x16_bf16 v[0:15], v[16:19], v[20:23], v[0:15]": "v_mfma_f32_32x32x8_bf16",
    "v_mfma_i32_16x16x64_i8 v[0:3], v[4:7], v[8:11], v[0:3]": "v_mfma_i32_16x16x32_i8",
    "v_mfma_i32_32x32x32_i8 v[0:15], v[16:19], v[20:23], v[0:15]": "v_mfma_i32_32x32x16_i8",
    "v_smfmac_f32_16x16x64_f16 v[0:3], v[4:7], v[8:15], v16": "v_smfmac_f32_16x16x32_f16",
    "v_smfmac_f32_16x16x64_bf16 v[0:3], v[4:7], v[8:15], v16": "v_smfmac_f32_16x16x32_bf16",
    "v_smfmac_f32_32x32x32_f16 v[0:15], v[16:19], v[20:27], v28": "v_smfmac_f32_32x32x16_f16",
    "v_smfmac_f32_32x32x32_bf16 v[0:15], v[16:19], v[20:27], v28": "v_smfmac_f32_32x32x16_bf16",
    "v_smfmac_i32_16x16x128_i8 v[0:3], v[4:7], v[8:15], v16": "v_smfmac_i32_16x16x64_i8",
    "v_smfmac_i32_32x32x64_i8 v[0:15], v[16:19], v[20:27], v28": "v_smfmac_i32_32x32x32_i8",
    **{f"v_smfmac_f32_16x16x128_{a}_{b} v[0:3], v[4:7], v[8:15], v16": f"v_smfmac_f32_16x16x64_{a}_{b}"
       for a in ("bf8", "fp8") for b in ("bf8", "fp8")},
    **{f"v_smfmac_f32_32x32x64_{a}_{b} v[0:15], v[16:19], v[20:27], v28": f"v_smfmac_f32_32x32x32_{a}_{b}"
       for a in ("bf8", "fp8") for b in ("bf8", "fp8")},
    # gfx950's f8f6f4 MFMAs: A's and B's register widths follow cbsz / blgp (FORMATS); v_mfma_ld_scale_b32, which LLVM
    # puts before one of them to make a scaled MFMA (SCALED)
    "v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3]": "v_mfma_f32_16x16x32_fp8_fp8",
    "v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15]": "v_mfma_f32_32x32x16_fp8_fp8",
    "v_mfma_ld_scale_b32 v1, v2": "v_pk_add_u16",
    **{line: "v_fma_f16" for line in (  # the scaled conversions with three sources (op_sel up to [.,.,.,.])
        "v_cvt_scalef32_pk_fp8_f32 v1, v2, v3, v4", "v_cvt_scalef32_pk_bf8_f32 v1, v2, v3, v4",
        "v_cvt_scalef32_sr_fp8_f32 v1, v2, v3, v4", "v_cvt_scalef32_sr_bf8_f32 v1, v2, v3, v4",
        "v_cvt_scalef32_pk_fp4_f32 v1, v2, v3, v4", "v_cvt_scalef32_sr_pk_fp4_f32 v1, v[2:3], v3, v4",
        "v_cvt_scalef32_sr_fp8_f16 v1, v2, v3, v4", "v_cvt_scalef32_sr_bf8_f16 v1, v2, v3, v4",
        "v_cvt_scalef32_sr_fp8_bf16 v1, v2, v3, v4", "v_cvt_scalef32_sr_bf8_bf16 v1, v2, v3, v4",
        "v_cvt_scalef32_sr_pk_fp4_f16 v1, v2, v3, v4", "v_cvt_scalef32_sr_pk_fp4_bf16 v1, v2, v3, v4",
        "v_cvt_scalef32_2xpk16_fp6_f32 v[0:5], v[6:21], v[22:37], v38",
        "v_cvt_scalef32_2xpk16_bf6_f32 v[0:5], v[6:21], v[22:37], v38",
        "v_cvt_scalef32_sr_pk32_fp6_f32 v[0:5], v[6:37], v38, v39",
        "v_cvt_scalef32_sr_pk32_bf6_f32 v[0:5], v[6:37], v38, v39",
        *(f"v_cvt_scalef32_sr_pk32_{k}_{t} v[0:5], v[6:21], v22, v23" for k in ("fp6", "bf6") for t in ("f16", "bf16")),
    )},
    **{line: "v_cvt_pk_fp8_f32" for line in (  # and with two (op_sel up to [.,.,.])
        *(f"v_cvt_scalef32_pk_f32_{k} v[2:3], v2, v3" for k in ("fp8", "bf8", "fp4")),
        *(f"v_cvt_scalef32_{a}_{b} v1, v2, v3" for a, b in (
            ("f32", "fp8"), ("f32", "bf8"), ("f16", "fp8"), ("f16", "bf8"),
            ("pk_fp8", "f16"), ("pk_bf8", "f16"), ("pk_fp8", "bf16"), ("pk_bf8", "bf16"), ("pk_f16", "fp8"),
            ("pk_f16", "bf8"), ("pk_bf16", "fp8"), ("pk_bf16", "bf8"), ("pk_f16", "fp4"), ("pk_bf16", "fp4"))),
        "v_cvt_scalef32_pk32_f32_fp6 v[0:31], v[32:37], v38", "v_cvt_scalef32_pk32_f32_bf6 v[0:31], v[32:37], v38",
        *(f"v_cvt_scalef32_pk32_{k}_{t} v[0:5], v[6:21], v22" for k in ("fp6", "bf6") for t in ("f16", "bf16")),
        *(f"v_cvt_scalef32_pk32_{t}_{k} v[0:15], v[16:21], v22" for k in ("fp6", "bf6") for t in ("f16", "bf16")),
    )},
    # two sources, the destination byte in op_sel[3:2] (LLVM prints op_sel:[.,.,.,.])
    "v_cvt_scalef32_pk_fp4_f16 v1, v2, v3": "v_cvt_sr_fp8_f32",
    "v_cvt_scalef32_pk_fp4_bf16 v1, v2, v3": "v_cvt_sr_fp8_f32",
    # DS, FLAT, MUBUF
    "ds_read_b64_tr_b4 v[0:1], v2": "ds_read_b64",
    "ds_read_b64_tr_b8 v[0:1], v2": "ds_read_b64",
    "ds_read_b64_tr_b16 v[0:1], v2": "ds_read_b64",
    "ds_read_b96_tr_b6 v[0:2], v3": "ds_read_b96",
    "global_load_lds_dwordx3 v[2:3], off": "global_load_lds_dword",
    "global_load_lds_dwordx4 v[2:3], off": "global_load_lds_dword",
    "buffer_atomic_pk_add_bf16 v1, off, s[0:3], 0": "buffer_atomic_pk_add_f16",
}
# the f8f6f4 MFMAs: the modifier whose value (a format code) sets each source's width, and the mnemonic of the scaled
# form (v_mfma_ld_scale_b32's word, then the MFMA's: one instruction as LLVM 22 prints and assembles it)
FORMATS = {"src0": "cbsz", "src1": "blgp"}
SCALED = {"v_mfma_f32_16x16x128_f8f6f4": "v_mfma_scale_f32_16x16x128_f8f6f4",
          "v_mfma_f32_32x32x64_f8f6f4": "v_mfma_scale_f32_32x32x64_f8f6f4"}
# lines of the f8f6f4 forms (each format pair's widths, the scaled MFMA), checked as TEMPLATES' lines are
FORM_LINES = (
    "v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:9], v[12:15], v[0:3] cbsz:2 blgp:4",
    "v_mfma_f32_32x32x64_f8f6f4 a[0:15], v[16:19], v[24:29], 0 cbsz:4 blgp:3",
    "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21 op_sel_hi:[0,0,0]",
    "v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:7], v[12:17], a[0:3], v1, v2 op_sel:[1,0,0] op_sel_hi:[0,1,0] "
    "cbsz:4 blgp:2",
    "v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], 1.0, v40, v41 op_sel:[1,1,0] op_sel_hi:[1,1,0]",
)
# valued modifiers the codec prints from bits of other fields: bitop3's eight bits (LLVM 22's encoding of
# v_bitop3_*: bits 0-2 in VOP3's neg field, 3-5 in abs, 6-7 in omod)
BITOP3 = {"neg:1": 1, "neg:2": 2, "neg:4": 4, "abs:1": 8, "abs:2": 16, "abs:4": 32, "omod:1": 64, "omod:2": 128}
# gfx950 adds the LDS forms of buffer_load_dwordx3 / x4 (the lds bit, no vdata), as buffer_load_dword has them
LDS_LOADS = ("buffer_load_dwordx3", "buffer_load_dwordx4")


def _find(table: dict, mnemonic: str) -> tuple[str, str, dict]:
    """(encoding, key, entry) of a gfx942 mnemonic in a table's ops."""
    for enc, ops in table["ops"].items():
        for key, e in ops.items():
            if e.get("m") == mnemonic:
                return enc, key, e
    raise KeyError(mnemonic)


def _widths(line: str) -> list[int]:
    """Register widths of a line's operands, in order (1 for a non-register operand)."""
    args = line.split(None, 1)[1] if " " in line else ""
    out = []
    for tok in (t.strip() for t in args.split(",")):
        tok = tok.split()[0] if tok else tok
        m = re.match(r"[vsa]\[(\d+):(\d+)\]", tok)
        out.append(int(m.group(2)) - int(m.group(1)) + 1 if m else 1)
    return out


def _key(data: bytes) -> tuple[str, str]:
    """(encoding, table key) of an instruction's bytes in gfx9's layouts."""
    arch = get_arch("gfx942")
    word = int.from_bytes(data[:8].ljust(8, b"\0"), "little")
    enc = arch.identify(word & 0xFFFFFFFF)
    f = arch.encodings[enc].unpack(word if arch.encodings[enc].size == 8 else word & 0xFFFFFFFF)
    if enc == "FLAT":
        return enc, f"{f['seg']}.{f['op']}"
    return ("VOP3" if enc == "VOP3SD" else enc), str(f["op"])


def _valu_entry(template: dict, mnemonic: str, line: str) -> dict:
    e = copy.deepcopy(template)
    e["m"] = mnemonic
    base = mnemonic.removesuffix("_e32").removesuffix("_e64")
    for form in ("dpp16", "sdwa"):
        if form in e:
            e[form] = f"{base}_{form.removesuffix('16')}"
    printed = [op for op in e["ops"] if op[1] != "imp"][1 if mnemonic == "v_mfma_ld_scale_b32" else 0:]
    widths = _widths(line)
    for op, w in zip(printed, widths, strict=False):
        if op[2] != w:
            op[2] = w
            e.get("bad", {}).pop(op[0], None)  # the template's register-class note is for its width
    if "bad" in e and not e["bad"]:
        del e["bad"]
    if mnemonic.startswith("v_permlane"):  # a VGPR source, no DPP or SDWA form (LLVM 22 refuses the others)
        e["ops"][1] = ["src0", "vsrc", 1]
        for form in ("dpp16", "sdwa", "sdwamods", "sdwasel", "dppmods"):
            e.pop(form, None)
    if mnemonic.startswith("v_cvt_scalef32"):  # a source of several dwords is a VGPR run (LLVM 22 refuses others)
        for op in e["ops"]:
            if op[0].startswith("src") and op[2] > 1:
                op[1:] = ["vsrc", op[2]]
    if mnemonic.startswith("v_bitop3"):
        e["mods"] = {k: ["val", "bitop3", v] for k, v in BITOP3.items()}
    if mnemonic in SCALED:  # no abid (LLVM refuses it): its bit 0 marks the MFMA word of a scaled MFMA
        e["fmt"], e["scaled"] = dict(FORMATS), SCALED[mnemonic]
        e["mods"] = {k: v for k, v in e["mods"].items() if not k.startswith("abid:")}
    if mnemonic == "v_mfma_ld_scale_b32":  # no destination; it may begin a scaled MFMA (the codec's "pair")
        e["ops"], e["pair"] = e["ops"][1:], 1
    return e


def _memory_entry(template: dict, mnemonic: str, line: str) -> dict:
    e = copy.deepcopy(template)
    e["m"] = mnemonic
    return e


def _lds_forms(mem: dict) -> None:
    """buffer_load_dwordx3/x4 gain buffer_load_dword's LDS forms (the forms whose key sets the lds bit)."""
    _, _, word = _find(mem, "buffer_load_dword")
    for name in LDS_LOADS:
        _, _, e = _find(mem, name)
        for form, operands in word["t"].items():
            if form.endswith("1"):
                e["t"][form] = list(operands)
                e["ok"][form] = list(word["ok"][form])
        if "lds" not in e["mods"]:
            e["mods"].append("lds")


def build(asm) -> tuple[dict, dict]:
    """gfx950's valu and memory tables (whole), from gfx942's."""
    valu, mem = copy.deepcopy(get_arch("gfx942").table("valu")), copy.deepcopy(get_arch("gfx942").table("memory"))
    for line, tmpl in TEMPLATES.items():
        data = asm.encode(line)
        if data is None:
            raise SystemExit(f"LLVM 22 rejects {line!r}: {asm.error(line)}")
        enc, key = _key(data)
        mnemonic = line.split()[0]
        if enc in valu["ops"]:
            _, _, t = _find(valu, tmpl)
            valu["ops"][enc][key] = _valu_entry(t, mnemonic, line)
        else:
            _, _, t = _find(mem, tmpl)
            mem["ops"][enc][key] = _memory_entry(t, mnemonic, line)
    _lds_forms(mem)
    return valu, mem


def check(asm) -> None:
    """Each line decodes from LLVM's bytes to itself and assembles to them (SystemExit naming the first that does
    not)."""
    for line in (*TEMPLATES, *FORM_LINES):
        data = asm.encode(line)
        text, again = decode(data, arch=ARCH).text(), assemble(line, arch=ARCH)
        if text != line or again != data:
            raise SystemExit(f"{line!r}: LLVM {data.hex()}, the codec prints {text!r} and assembles {again.hex()}")


def foreign_mods(asm) -> dict[str, list[str]]:
    """Per new VALU line, the modifier keys of its entry whose bit LLVM does not encode as the codec prints it: the
    codec sets the bit in LLVM's bytes, prints them, and LLVM assembles the print to other bytes or rejects it."""
    out: dict[str, list[str]] = {}
    layouts = get_arch(ARCH).encodings
    for line in TEMPLATES:
        data = asm.encode(line)
        inst = decode(data, arch=ARCH)
        entry = inst.info.get("entry", {})
        if inst.encoding not in ("VOP1", "VOP2", "VOP3", "VOP3P") or len(data) != 8:
            continue
        layout = layouts["VOP3PMAI" if entry.get("enc") else inst.encoding]
        for key in entry.get("mods", {}):
            field, _, bit = key.partition(":")
            if field not in layout.field_names:
                continue
            probe = (int.from_bytes(data, "little") | int(bit) << layout.field(field).lo).to_bytes(8, "little")
            try:
                text = decode(probe, arch=ARCH).text()
            except ValueError:
                text = None
            if text is None or asm.encode(text) != probe:
                out.setdefault(line, []).append(key)
    return out


def new_mnemonics(asm) -> list[str]:
    """The mnemonics LLVM's assembler accepts for gfx950 but refuses for gfx942, from a list of candidate names on
    stdin (one a line: e.g. the strings of the library's matcher table)."""
    gfx942 = assembler("gfx942")
    out = []
    for name in sys.stdin.read().split():
        if "not supported on this GPU" in (err := asm.error(name)) or "invalid instruction" in err:
            continue
        if "not supported on this GPU" in gfx942.error(name):
            out.append(name)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", action="store_true", help="print the names of stdin gfx950 has and gfx942 has not")
    args = ap.parse_args()
    asm = assembler(ARCH)
    if args.new:
        print("\n".join(new_mnemonics(asm)))
        return
    valu, mem = build(asm)
    write(valu, mem)
    dropped = foreign_mods(asm)
    for line, keys in dropped.items():
        enc, key = _key(asm.encode(line))
        entry = valu["ops"][enc][key]
        for k in keys:
            entry["mods"].pop(k)
        if not entry["mods"]:
            del entry["mods"]
    write(valu, mem)
    check(asm)
    print(json.dumps({"revision": asm.revision, "lines": len(TEMPLATES), "modifier bits dropped": dropped}))


def write(valu: dict, mem: dict) -> None:
    with isatab.target(ARCH):
        isatab.write_table("valu", valu)
        isatab.write_table("memory", mem)
    for name, module in list(sys.modules.items()):  # the codec's cached tables: read the ones just written
        if name.startswith("simgpu.isa"):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


if __name__ == "__main__":
    main()
