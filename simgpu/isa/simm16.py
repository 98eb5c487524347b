"""The 16-bit scalar immediates that LLVM prints as named fields: s_waitcnt, s_waitcnt_depctr,
s_delay_alu, hwreg(...) and sendmsg(...), and plain immediates (decimal, hex, or either).

Field positions are gfx11's (RDNA3 ISA reference); the register and message names come from the
tables probed from llvm-mc (data/scalar.json, key "names").
"""

from __future__ import annotations

import re

from .operands import parse_int

# s_waitcnt on gfx11: (name, lo, width), printed in this order.
WAITCNT = (("vmcnt", 10, 6), ("expcnt", 0, 3), ("lgkmcnt", 4, 6))
# s_waitcnt_depctr on gfx11: (name, lo, width); a field at its all-ones default is not printed.
DEPCTR = (("depctr_hold_cnt", 7, 1), ("depctr_sa_sdst", 0, 1), ("depctr_va_vdst", 12, 4),
          ("depctr_va_sdst", 9, 3), ("depctr_va_ssrc", 8, 1), ("depctr_va_vcc", 1, 1), ("depctr_vm_vsrc", 2, 3))
DELAY_INSTID = ("NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1", "TRANS32_DEP_2",
                "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2", "SALU_CYCLE_3")
DELAY_SKIP = ("SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4")
DELAY = (("instid0", 0, 4, DELAY_INSTID), ("instskip", 4, 3, DELAY_SKIP), ("instid1", 7, 4, DELAY_INSTID))


def _get(v: int, lo: int, width: int) -> int:
    return (v >> lo) & ((1 << width) - 1)


def _fields_mask(fields) -> int:
    m = 0
    for f in fields:
        m |= ((1 << f[2]) - 1) << f[1]
    return m


def waitcnt_bits(layout: list | None) -> tuple:
    """s_waitcnt's fields as (name, lo, width) rows: gfx11's, or a table's "waitcnt" layout [[name, [bit, ...]], ...]
    whose i-th bit is worth 2**i (gfx9's vmcnt is bits 3:0 and 15:14)."""
    return WAITCNT if layout is None else tuple((n, bits, len(bits)) for n, bits in layout)


def _gather(v: int, lo, width: int) -> int:
    return _get(v, lo, width) if isinstance(lo, int) else sum(((v >> b) & 1) << i for i, b in enumerate(lo))


def _scatter(x: int, lo, width: int) -> tuple[int, int]:
    """(bits of x placed at the field, the field's mask)."""
    if isinstance(lo, int):
        return x << lo, ((1 << width) - 1) << lo
    return sum(((x >> i) & 1) << b for i, b in enumerate(lo)), sum(1 << b for b in lo)


def format_waitcnt(v: int, layout: list | None = None) -> str:
    parts = [(n, _gather(v, lo, w), (1 << w) - 1) for n, lo, w in waitcnt_bits(layout)]
    shown = [f"{n}({x})" for n, x, full in parts if x != full]
    return " ".join(shown or [f"{n}({x})" for n, x, _ in parts])


def format_depctr(v: int) -> str:
    if v & ~_fields_mask(DEPCTR) & 0xFFFF:
        return f"0x{v:x}"
    parts = [(n, _get(v, lo, w), (1 << w) - 1) for n, lo, w in DEPCTR]
    shown = [f"{n}({x})" for n, x, full in parts if x != full]
    return " ".join(shown or [f"{n}({x})" for n, x, _ in parts])


def format_delay_alu(v: int) -> str:
    parts = []
    for name, lo, w, names in DELAY:
        x = _get(v, lo, w)
        if x:
            parts.append(f"{name}({names[x] if x < len(names) else '/* invalid ' + name[:7] + ' value */'})")
    return " | ".join(parts) if parts else "0"


def format_hwreg(v: int, names: dict[str, str]) -> str:
    rid, off, size = v & 0x3F, (v >> 6) & 0x1F, ((v >> 11) & 0x1F) + 1
    name = names.get(str(rid), str(rid))
    if off == 0 and size == 32:
        return f"hwreg({name})"
    return f"hwreg({name}, {off}, {size})"


def format_sendmsg(v: int, names: dict[str, str], complete: bool = False) -> str:
    """`complete`: `names` holds every value of the probed range that prints sendmsg(...), with the whole text
    (gfx9: sendmsg(MSG_GS, GS_OP_CUT, 1)), and any other value in it prints as a number. Without it (gfx11, gfx12)
    a value without a name up to 0xFF prints sendmsg(v, 0, 0). (gfx9 values above 1023 are not probed: llvm prints
    some of them symbolically, which this does not.)"""
    if str(v) in names:
        return f"sendmsg({names[str(v)]})"
    if v > 0xFF or complete:
        return str(v)
    return f"sendmsg({v}, 0, 0)"


def format_version(v: int, names: dict[str, str], flags: dict[str, str]) -> str:
    """s_version: a named microcode version in the low byte, OR-ed with named flag bits (LLVM nests them)."""
    flag_mask = sum(int(b) for b in flags)
    if v & 0xFFFF & ~flag_mask & ~0xFF:
        return f"0x{v:x}"
    code = v & 0xFF
    text = names.get(str(code), str(code))
    if not v & flag_mask:
        return text
    for bit in sorted(flags, key=int):
        if v & int(bit):
            text = (f"({text})" if "|" in text else text) + "|" + flags[bit]
    return text


def parse_version(tok: str, names: dict[str, str], flags: dict[str, str], ctx) -> int:
    inv = {n: int(k) for k, n in names.items()} | {n: int(k) for k, n in flags.items()}
    v = 0
    for part in re.split(r"[()|\s]+", tok):
        if part:
            v |= inv[part] if part in inv else _int(part, ctx)
    return v


GPR_IDX = ("SRC0", "SRC1", "SRC2", "DST")  # gfx9's VGPR-indexing mode bits


def format_gpr_idx(v: int) -> str:
    """gfx9's s_set_gpr_idx_on/_mode operand: the mode bits named, gpr_idx(SRC0,DST); hex past 4 bits."""
    if v > 15:
        return f"0x{v:x}"
    return "gpr_idx(" + ",".join(n for i, n in enumerate(GPR_IDX) if v >> i & 1) + ")"


def parse_gpr_idx(tok: str, ctx) -> int:
    if not (tok.startswith("gpr_idx(") and tok.endswith(")")):
        return _int(tok, ctx)
    names = [n.strip() for n in tok[8:-1].split(",") if n.strip()]
    if any(n not in GPR_IDX for n in names):
        raise ctx.error("expected SRC0, SRC1, SRC2 or DST", tok)
    return sum(1 << GPR_IDX.index(n) for n in names)


def imm_auto(v: int) -> str:
    """LLVM's spelling of an unsigned immediate: decimal up to 64 (the inline-constant range), else hex."""
    return str(v) if v <= 64 else f"0x{v:x}"


def format_imm(kind: str, v: int, names: dict) -> str:
    """Text of a 16-bit immediate of the given print kind (see tools/isatab_scalar.py)."""
    if kind == "waitcnt":
        return format_waitcnt(v, names.get("waitcnt"))
    if kind == "depctr":
        return format_depctr(v)
    if kind == "delay_alu":
        return format_delay_alu(v)
    if kind == "hwreg":
        return format_hwreg(v, names["hwreg"])
    if kind == "sendmsg":
        return format_sendmsg(v, names["sendmsg"], "sendmsg_complete" in names)
    if kind == "version":
        return format_version(v, names["version"], names["version_flags"])
    if kind == "gpr_idx":
        return format_gpr_idx(v)
    if kind in ("dec", "dec_opt"):
        return str(v)
    if kind == "hex":
        return f"0x{v:x}"
    if kind == "imm_auto":
        return imm_auto(v)
    return str(v)


# ---------------------------------------------------------------------------------------------- parse

_CALL = re.compile(r"^(\w+)\((.*)\)$")


def _int(tok: str, ctx) -> int:
    return parse_int(tok, ctx.line, ctx.column)


def _named_fields(text: str, table, ctx, repeat_ok: bool = False) -> tuple[int, set[str]]:
    """(value, names given) of `name(value) name(value) ...` (separated by spaces, `&`, `|` or commas)
    over the fields of `table`; a repeated name is an error unless `repeat_ok` (then the last one counts,
    as llvm-mc does for s_waitcnt)."""
    v, given = 0, set()
    for tok in re.split(r"[\s&|,]+", text.strip()):
        if not tok:
            continue
        m = _CALL.match(tok)
        if not m:
            raise ctx.error("expected name(value)", tok)
        entry = next((e for e in table if e[0] == m.group(1)), None)
        if entry is None:
            raise ctx.error("unknown field", tok)
        name, lo, width = entry[:3]
        if name in given and not repeat_ok:
            raise ctx.error(f"{name} given twice", tok)
        names = entry[3] if len(entry) > 3 else None
        x = names.index(m.group(2)) if names and m.group(2) in names else _int(m.group(2), ctx)
        if not 0 <= x < 1 << width:
            raise ctx.error(f"{name} takes 0..{(1 << width) - 1}", tok)
        put, mask = _scatter(x, lo, width)
        v = (v & ~mask) | put
        given.add(name)
    return v, given


def _with_defaults(text: str, table, ctx, repeat_ok: bool = False) -> int:
    """Named fields, every field not named at its all-ones default (nothing to wait for)."""
    v, given = _named_fields(text, table, ctx, repeat_ok)
    for name, lo, w in table:
        if name not in given:
            v |= _scatter((1 << w) - 1, lo, w)[0]
    return v


def parse_waitcnt(text: str, ctx, layout: list | None = None) -> int:
    """s_waitcnt's immediate: vmcnt(n) expcnt(n) lgkmcnt(n), or an integer."""
    return _with_defaults(text, waitcnt_bits(layout), ctx, repeat_ok=True) if "(" in text else _int(text, ctx)


def parse_depctr(text: str, ctx) -> int:
    """s_waitcnt_depctr's immediate: depctr_*(n) fields, or an integer."""
    return _with_defaults(text, DEPCTR, ctx) if text.startswith("depctr") else _int(text, ctx)


def _call_args(tok: str, name: str, count: tuple[int, ...], ctx) -> list[str] | None:
    """The arguments of `name(a, b, ...)` (how many: one of `count`), or None when tok is not that call."""
    m = _CALL.match(tok)
    if not m or m.group(1) != name:
        return None
    args = [a.strip() for a in m.group(2).split(",")]
    if len(args) not in count:
        raise ctx.error(f"{name}(...) takes {' or '.join(map(str, count))} arguments", tok)
    return args


def _ranged(v: int, lo: int, hi: int, what: str, tok: str, ctx) -> int:
    if not lo <= v <= hi:
        raise ctx.error(f"{what} must be in {lo}..{hi}", tok)
    return v


def parse_hwreg(tok: str, names: dict[str, str], ctx) -> int:
    """hwreg(register[, bit offset, bit count]) -- register by name or number -- or an integer."""
    args = _call_args(tok, "hwreg", (1, 3), ctx)
    if args is None:
        return _int(tok, ctx)
    inv = {v: int(k) for k, v in names.items()}
    rid = _ranged(inv[args[0]] if args[0] in inv else _int(args[0], ctx), 0, 63, "a hardware register", tok, ctx)
    off, size = (_int(args[1], ctx), _int(args[2], ctx)) if len(args) == 3 else (0, 32)
    return rid | (_ranged(off, 0, 31, "a bit offset", tok, ctx) << 6) | \
        ((_ranged(size, 1, 32, "a bit count", tok, ctx) - 1) << 11)


def parse_sendmsg(tok: str, names: dict[str, str], ctx) -> int:
    """sendmsg(message[, operation[, stream]]) -- a named message takes no operation -- or an integer."""
    inv: dict[str, int] = {}
    for k, v in names.items():  # a text several values print as (gfx9's unused bit 7) assembles to the smallest
        inv[v] = min(inv.get(v, 1 << 16), int(k))  # (the table's keys are strings: "134" sorts before "6")
    if tok.startswith("sendmsg(") and tok.endswith(")") and tok[8:-1] in inv:
        return inv[tok[8:-1]]
    args = _call_args(tok, "sendmsg", (1, 2, 3), ctx)
    if args is None:
        return _int(tok, ctx)
    if args[0] in inv:
        if len(args) > 1:
            raise ctx.error(f"{args[0]} takes no operation or stream", tok)
        return inv[args[0]]
    msg, op, stream = (_int(a, ctx) for a in args + ["0"] * (3 - len(args)))
    return _ranged(msg, 0, 255, "a message id", tok, ctx) | (_ranged(op, 0, 7, "an operation", tok, ctx) << 4) | \
        (_ranged(stream, 0, 3, "a stream", tok, ctx) << 8)


def parse_imm(kind: str, tok: str, names: dict, ctx) -> int:
    """Value of a 16-bit immediate written in the given print kind (labels for branches)."""
    if kind == "waitcnt":
        return parse_waitcnt(tok, ctx, names.get("waitcnt"))
    if kind == "depctr":
        return parse_depctr(tok, ctx)
    if kind == "delay_alu":
        return _named_fields(tok, DELAY, ctx)[0] if "(" in tok else _int(tok, ctx)
    if kind == "hwreg":
        return parse_hwreg(tok, names["hwreg"], ctx)
    if kind == "sendmsg":
        return parse_sendmsg(tok, names["sendmsg"], ctx)
    if kind == "version":
        return parse_version(tok, names["version"], names["version_flags"], ctx)
    if kind == "gpr_idx":
        return parse_gpr_idx(tok, ctx)
    if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", tok):
        return _int(tok, ctx) & 0xFFFF
    target = ctx.label(tok)
    if target is None:
        raise ctx.error("undefined label", tok)
    return ((target - (ctx.pc + 4)) >> 2) & 0xFFFF
