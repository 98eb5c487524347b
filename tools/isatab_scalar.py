"""Generate simgpu/isa/data/scalar.json (or, with --arch, another architecture's delta of it): the
SOP1/SOP2/SOPC/SOPK/SOPP/SMEM tables, from llvm-mc.

For every opcode, probe encodings with distinctive register numbers (sdst=s10, ssrc0=s20, ssrc1=s40)
and immediates are disassembled; the text tells the mnemonic, which fields are printed in which order,
their widths (s[20:21] = 2 dwords), the inline-constant width of each source, and how the 16-bit
immediate prints (decimal, hex, both, or a named form such as hwreg/sendmsg/waitcnt). Name tables for
hwreg, sendmsg and the delay/depctr fields are probed the same way. gfx12's SMEM adds the operand order of
s_prefetch_* ("pf"), the cache-policy spellings (names["cpol"], an entry's "th") and "smem_off" (the offset is
printed even when zero).

    python -m tools.isatab_scalar [--arch gfx1201]
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from simgpu.isa import simm16
from simgpu.isa.codec import split_operands
from simgpu.isa.operands import parse_register
from tools import isatab, oracle

PROBE = {"sdst": 10, "ssrc0": 20, "ssrc1": 40}
LIT = 0x11223344


def _word(enc: str, vals: dict[str, int], literal: int | None = None) -> bytes:
    e = isatab.layouts()[enc]
    data = e.pack(vals).to_bytes(e.size, "little")
    return data + (literal.to_bytes(4, "little") if literal is not None else b"")


def _probe_sets(enc: str, op: int) -> list[tuple[str, dict[str, int], int | None]]:
    """(label, fields, literal) probes for one opcode, the first valid one defines the operands."""
    fields = set(isatab.layouts()[enc].field_names)
    base = {k: v for k, v in PROBE.items() if k in fields} | {"op": op}
    probes = []
    # Unused fields must be zero for llvm-mc to re-encode the same bytes, so try subsets of the fields.
    subsets = [("sdst", "ssrc0", "ssrc1"), ("sdst", "ssrc0"), ("ssrc0", "ssrc1"), ("sdst",), ("ssrc0",), ()]
    for keep in subsets:
        v = {k: (val if k in keep or k == "op" else 0) for k, val in base.items()}
        for imm in ((0x1234, 0) if "simm16" in fields else (None,)):
            if imm is not None:
                v = v | {"simm16": imm}
            probes.append(("+".join(keep), v, None))
            probes.append(("+".join(keep) + "+lit", v, LIT))
    return probes


def _classify_token(tok: str, vals: dict[str, int]) -> tuple[str, int] | None:
    """(field, width) of a register token that shows a probed field value."""
    reg = parse_register(tok)
    if reg is None or reg[0] != "s":
        return None
    for name in ("sdst", "ssrc0", "ssrc1"):
        if name in vals and vals[name] == reg[1] and vals[name] != 0:
            return name, reg[2]
    return None


# Immediates printed as named fields: which printer applies is told by the probes' text, keyed by name.
_SPECIAL_IMM = {"s_waitcnt": "waitcnt", "s_waitcnt_depctr": "depctr", "s_wait_alu": "depctr",
                "s_delay_alu": "delay_alu",
                "s_sendmsg": "sendmsg", "s_sendmsghalt": "sendmsg", "s_setreg_b32": "hwreg",
                "s_setreg_imm32_b32": "hwreg", "s_getreg_b32": "hwreg", "s_version": "version",
                "s_set_gpr_idx_mode": "gpr_idx"}


def _imm_kind(op_texts: dict[int, str | None], mnemonic: str) -> str:
    """How the immediate prints: from texts of the same opcode with different simm16 values."""
    def tail(imm: int) -> str | None:
        t = op_texts.get(imm)
        if t is None:
            return None
        toks = split_operands(t[len(mnemonic):])
        return toks[-1] if toks else ""
    t5, t1234, t0 = tail(5), tail(0x1234), tail(0)
    if t1234 is None:
        return "none"
    if "hwreg(" in (t1234 or ""):
        return "hwreg"
    if t1234 == "0x1234":
        if t5 == "5":
            return "imm_auto"  # decimal up to 64, hex above (LLVM's u16 printing)
        return "hex"
    if t1234 == "4660":
        return "dec" if t0 != "" else "dec_opt"
    return "special"


def sweep_encoding(enc: str) -> dict[str, dict]:
    """Table entries of every opcode of a SOP encoding that llvm-mc decodes."""
    e = isatab.layouts()[enc]
    nops = 1 << e.field("op").width
    probes, owners = [], []
    for op in range(nops):
        for label, vals, lit in _probe_sets(enc, op):
            probes.append(_word(enc, vals, lit))
            owners.append((op, label, vals, lit))
    texts = oracle.disassemble(probes)
    first: dict[int, tuple] = {}
    for (op, label, vals, lit), t in zip(owners, texts, strict=True):
        if isatab.identify(e.pack(vals)) != enc:
            continue  # e.g. SOP2 opcodes 0x60+ are the SOPK encoding
        if t is not None and op not in first:
            first[op] = (label, vals, lit, t)
    table = {}
    imm_probe = []
    for op, (_label, vals, lit, text) in sorted(first.items()):
        mnemonic = text.split()[0]
        ops = []
        toks = split_operands(text[len(mnemonic):])
        if mnemonic in ("s_delay_alu", "s_waitcnt", "s_waitcnt_depctr", "s_wait_alu"):
            toks = toks[:1]  # one immediate printed as several named fields
        for tok in toks:
            got = _classify_token(tok, vals)
            if got:
                ops.append([got[0], got[1]])
            elif tok.startswith("sendmsg(") and "ssrc0" in vals:
                ops.append(["ssrc0_msg", 1])
            elif tok == f"0x{vals.get('ssrc1', -1):x}":  # gfx9's s_set_gpr_idx_on: the mode, gpr_idx(...)
                ops.append(["ssrc1_gpr_idx", 0])
            elif "simm16" in vals and not any(o[0] == "simm16" for o in ops):
                ops.append(["simm16", 0])
            elif lit is not None:
                ops.append(["literal", 0])
            else:
                raise SystemExit(f"{enc} op {op}: cannot place operand {tok!r} of {text!r}")
        table[str(op)] = {"name": mnemonic, "ops": ops, "literal": lit is not None}
        if "simm16" in vals:
            for imm in (0, 5, 0x1234):
                imm_probe.append((op, imm, _word(enc, vals | {"simm16": imm}, lit)))
    if imm_probe:
        itexts = oracle.disassemble([w for _, _, w in imm_probe])
        per_op: dict[int, dict[int, str | None]] = {}
        for (op, imm, _), t in zip(imm_probe, itexts, strict=True):
            per_op.setdefault(op, {})[imm] = t
        for op, d in per_op.items():
            entry = table[str(op)]
            entry["imm"] = _SPECIAL_IMM.get(entry["name"]) or _imm_kind(d, entry["name"])
    return table


def _src_widths(enc: str, table: dict[str, dict]) -> None:
    """Record which sources print 248 as the 64-bit 1/(2*pi)."""
    probes, owners = [], []
    for op, entry in table.items():
        for slot in entry["ops"]:
            if slot[0].startswith("ssrc"):
                # a field the instruction does not print stays 0: llvm-mc re-encodes without it, and the probe
                # would count as not decoded (gfx9's s_rfe_restore_b64 and s_cbranch_g_fork have no sdst)
                printed = {s[0] for s in entry["ops"]}
                vals = {k: PROBE[k] if k in printed else 0 for k in PROBE
                        if k in isatab.layouts()[enc].field_names} | {"op": int(op)}
                vals[slot[0]] = 248
                if "simm16" in isatab.layouts()[enc].field_names:
                    vals["simm16"] = 0x1234
                probes.append(_word(enc, vals, LIT if entry["literal"] else None))
                owners.append((op, slot))
    for (_, slot), t in zip(owners, oracle.disassemble(probes), strict=True):
        slot.append(64 if t and "0.15915494309189532" in t else 32)


def learn_literals(enc: str, table: dict[str, dict], interned: list[dict]) -> None:
    """Per operand that can hold a 32-bit literal (a source with code 255, s_setreg_imm32_b32's value):
    the literal values llvm prints as a constant, entry["litv"][operand] = index into `interned` of a
    {hex value: text} table (other values print as 0x<hex>)."""
    from tools import isatab_valu
    values = sorted(set(isatab_valu.VALUE_PROBES + isatab_valu.HIGH_PROBES + isatab_valu.LITERALS))
    probes, owners = [], []
    for op, entry in table.items():
        base = {k: PROBE[k] for k in PROBE if k in isatab.layouts()[enc].field_names} | {"op": int(op)}
        if "simm16" in isatab.layouts()[enc].field_names:
            base["simm16"] = 0x1234
        for pos, slot in enumerate(entry["ops"]):
            if slot[0] not in ("ssrc0", "ssrc1", "literal"):
                continue
            vals = base | ({slot[0]: 255} if slot[0] != "literal" else {})
            for v in values:
                probes.append(_word(enc, vals, v))
                owners.append((op, slot[0], pos, v))
    shown: dict[tuple[str, str], dict[str, str]] = {}
    # isatab_valu.mc keeps a probe whose literal llvm re-encodes as an inline constant (shorter).
    for (op, name, pos, v), t in zip(owners, isatab_valu.mc(probes), strict=True):
        consts = shown.setdefault((op, name), {})
        toks = split_operands(t[len(table[op]["name"]):]) if t is not None else []
        if pos < len(toks) and toks[pos] != f"0x{v:x}":
            consts[f"{v:x}"] = toks[pos]
    index = {json.dumps(d, sort_keys=True): i for i, d in enumerate(interned)}
    for (op, name), consts in shown.items():
        key = json.dumps(consts, sort_keys=True)
        if key not in index:
            index[key] = len(interned)
            interned.append(consts)
        table[op].setdefault("litv", {})[name] = index[key]


def sweep_smem() -> dict[str, dict]:
    """SMEM opcodes: mnemonic and the widths of sdata and sbase (or sdata as an immediate); gfx12's s_prefetch_*
    print sbase (if any), offset, soffset and then sdata ("pf")."""
    e = isatab.layouts()["SMEM"]
    probes, owners = [], []
    gfx9 = "imm" in e.field_names  # a byte offset, no soffset; s_dcache_discard has sbase but no sdata
    shapes = [(32, 8), (12, 8), (0, 8), (32, 0), (0, 0)] if gfx9 else [(32, 8), (12, 8), (0, 0)]
    for op in range(1 << e.field("op").width):
        for sdata, sbase in shapes:
            vals = {"op": op, "sdata": sdata, "sbase": sbase, "soffset": 124 if sdata else 0,
                    "offset": 0x40 if sbase else 0}
            if gfx9:
                vals |= {"imm": int(bool(sbase)), "soffset": 0}
            probes.append(e.pack(vals).to_bytes(8, "little"))
            owners.append((op, sdata))
    table = {}
    for (op, sdata), t in zip(owners, oracle.disassemble(probes), strict=True):
        if t is None or str(op) in table:
            continue
        mnemonic = t.split()[0]
        toks = split_operands(t[len(mnemonic):])
        entry = {"name": mnemonic, "sdata": 0, "sbase": 0}
        sdata_at = None
        for i, tok in enumerate(toks):
            reg = parse_register(tok)
            if reg and reg[0] == "s" and reg[1] == sdata:
                entry["sdata"], sdata_at = reg[2], i
            elif reg and reg[0] == "s" and reg[1] == 16:
                entry["sbase"] = reg[2]
            elif tok == str(sdata) or tok == hex(sdata):
                entry["sdata"], sdata_at = -1, i  # printed as an immediate (s_atc_probe, s_prefetch_*)
        entry["has_addr"] = bool(toks)
        if sdata_at is not None and sdata_at > 0:
            entry["pf"] = 1
        table[str(op)] = entry
    return table


def learn_smem_cpol(table: dict[str, dict], names: dict) -> None:
    """gfx12: per SMEM opcode with th/scope fields, the printed th of every (th, scope), interned in
    names["cpol"]; and whether the offset prints when zero (table["smem_off"])."""
    e = isatab.layouts()["SMEM"]
    if "th" not in e.field_names:
        return
    th_n, scope_n = 1 << e.field("th").width, 1 << e.field("scope").width
    ops = [op for op, entry in table.items() if entry["has_addr"] and not entry.get("pf")]
    base = {"sdata": 12, "sbase": 8, "soffset": 124}
    words = [e.pack(base | {"op": int(op), "th": th, "scope": sc}).to_bytes(8, "little")
             for op in ops for th in range(th_n) for sc in range(scope_n)]
    texts = iter(oracle.disassemble(words))
    cp = names.setdefault("cpol", {"th": [], "scope": [""] * scope_n})
    for op in ops:
        row = []
        for _th in range(th_n):
            for sc in range(scope_n):
                toks = (next(texts) or "").split()
                row.append(next((t[3:] for t in toks if t.startswith("th:")), ""))
                scope = next((t[6:] for t in toks if t.startswith("scope:")), None)
                if scope:
                    cp["scope"][sc] = scope
        if row not in cp["th"]:
            cp["th"].append(row)
        table[op]["th"] = cp["th"].index(row)
    zero = oracle.disassemble([e.pack(base | {"op": int(ops[0])}).to_bytes(8, "little")])
    if zero[0] and zero[0].endswith("0x0"):
        table["smem_off"] = True


def _sopp(op: int, imm: int) -> bytes:
    return _word("SOPP", {"op": op, "simm16": imm})


def name_tables(sopp: dict[str, dict]) -> dict:
    """hwreg and sendmsg names, and the delay_alu / depctr field names, probed from llvm-mc."""
    by_name = {e["name"]: int(op) for op, e in sopp.items()}
    getreg = _sopk_op("s_getreg_b32")
    hw = {}
    probes = [_word("SOPK", {"op": getreg, "sdst": 10, "simm16": i | (31 << 11)}) for i in range(64)]
    for i, t in enumerate(oracle.disassemble(probes)):
        m = re.search(r"hwreg\((HW_REG_[A-Z_0-9]+)\)", t or "")
        if m:
            hw[str(i)] = m.group(1)
    msg = {}
    # gfx9 packs message (3:0), operation (6:4) and stream (9:8): every value that prints sendmsg(...) is named
    gfx9 = "s_version" not in _SOPK_NAMES
    texts = oracle.disassemble([_sopp(by_name["s_sendmsg"], i) for i in range(1024 if gfx9 else 256)])
    for i, t in enumerate(texts):
        m = re.search(r"sendmsg\((.*)\)" if gfx9 else r"sendmsg\(([A-Z_0-9]+)\)", t or "")
        if m:
            msg[str(i)] = m.group(1)
    out = {"hwreg": hw, "sendmsg": msg}
    if gfx9:  # the names are every value of the probed range that prints sendmsg(...): any other prints as a number
        out["sendmsg_complete"] = True
    waitcnt = learn_waitcnt(by_name["s_waitcnt"])
    if waitcnt is not None:
        out["waitcnt"] = waitcnt
    if "s_version" not in _SOPK_NAMES:  # gfx9
        return out
    version, flags = {}, {}
    sver = _sopk_op("s_version")
    texts = oracle.disassemble([_word("SOPK", {"op": sver, "simm16": i}) for i in range(256)])
    for i, t in enumerate(texts):
        if t and t.split()[1].startswith("UC_"):
            version[str(i)] = t.split()[1]
    for bit in (0x2000, 0x4000, 0x8000):
        t = oracle.disassemble([_word("SOPK", {"op": sver, "simm16": bit})])[0]
        flags[str(bit)] = t.split("|")[-1]
    return out | {"version": version, "version_flags": flags}


def learn_waitcnt(op: int) -> list | None:
    """s_waitcnt's field layout, bit by bit: [[name, [bit, ...]], ...] (the i-th bit worth 2**i), or None when it is
    gfx11's (simm16.WAITCNT). Each probe sets one bit; the field printed with a new value owns it."""
    texts = oracle.disassemble([_sopp(op, 0)] + [_sopp(op, 1 << b) for b in range(16)])
    base = dict(re.findall(r"(\w+)\((\d+)\)", texts[0] or ""))
    fields: dict[str, dict[int, int]] = {}
    for b, t in enumerate(texts[1:]):
        for name, val in re.findall(r"(\w+)\((\d+)\)", t or ""):
            if val != base.get(name):
                fields.setdefault(name, {})[int(val)] = b
    layout = [[name, [fields[name][1 << i] for i in range(len(fields[name]))]] for name in base if name in fields]
    gfx11 = [[n, list(range(lo, lo + w))] for n, lo, w in simm16.WAITCNT]
    return None if sorted(layout) == sorted(gfx11) else layout


_SOPK_NAMES: dict[str, int] = {}


def _sopk_op(name: str) -> int:
    return _SOPK_NAMES[name]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    isatab.arch_argument(ap)
    args = ap.parse_args()
    with isatab.target(args.arch):
        generate()


def generate() -> None:
    tables: dict = {"literals": [] if isatab.base_of() is None else isatab.base_table("scalar")["literals"]}
    for enc in ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP"):
        tables[enc] = sweep_encoding(enc)
        _src_widths(enc, tables[enc])
        learn_literals(enc, tables[enc], tables["literals"])
        print(f"{enc}: {len(tables[enc])} opcodes", file=sys.stderr)
    _SOPK_NAMES.update({e["name"]: int(op) for op, e in tables["SOPK"].items()})
    tables["SMEM"] = sweep_smem()
    print(f"SMEM: {len(tables['SMEM'])} opcodes", file=sys.stderr)
    tables["names"] = name_tables(tables["SOPP"])
    learn_smem_cpol(tables["SMEM"], tables["names"])
    if tables["SMEM"].pop("smem_off", False):
        tables["smem_off"] = True
    isatab.write_table("scalar", tables, indent=0)


if __name__ == "__main__":
    main()
