"""Typed buffer accesses: buffer_load/store_format_* (format from the V#) and tbuffer_load/store_format_*
(format from the instruction), including the d16 forms, with the gfx11 unified buffer formats.

Implemented formats (LLVM's BUF_FMT_* numbering for gfx11): every 8-, 16- and 32-bit per-component
format with 1, 2, 3 (32-bit only) or 4 components and number format UNORM, SNORM, USCALED, SSCALED,
UINT, SINT, FLOAT (16/32-bit). The packed formats (10_11_11, 11_11_10, 10_10_10_2, 2_10_10_10) and
BUF_FMT_INVALID raise an illegal_instruction fault naming the format.

Loads: UNORM x / (2^n - 1), SNORM max(x / (2^(n-1) - 1), -1), SCALED the integer as float, UINT/SINT
zero/sign extended, FLOAT16 widened. Components the format lacks read 0 (x, y, z) and 1 / 1.0 (w).
The V#'s dst_sel (0: 0, 1: one, 4-7: x-w) then selects each returned component. d16 loads return
16-bit results (f16 for float-like formats, low 16 bits of the integer otherwise), two per VGPR.
Stores: UNORM/SNORM clamp and round to nearest even (NaN -> 0), SCALED round to nearest even with
saturation, UINT/SINT keep the low n bits, FLOAT16 rounds to nearest even. Range checks cover the
whole element (format accesses are all or nothing).
"""

from __future__ import annotations

import re

import numpy as np

from .operand import write_vgpr
from .sem_mubuf import Access, access, load_checked, rsrc, write_tfe
from .sem_vmem import global_write
from .semantics import register

U32 = np.uint32
_KINDS6 = ("unorm", "snorm", "uscaled", "sscaled", "uint", "sint")
_KINDS7 = _KINDS6 + ("float",)
_KINDS3 = ("uint", "sint", "float")


def _build_formats() -> dict[int, tuple[int, int, str]]:
    """gfx11 BUF_FMT id -> (bits per component, components, number format)."""
    table: dict[int, tuple[int, int, str]] = {}
    for first, bits, comps, kinds in ((1, 8, 1, _KINDS6), (7, 16, 1, _KINDS7), (14, 8, 2, _KINDS6),
                                      (20, 32, 1, _KINDS3), (23, 16, 2, _KINDS7), (42, 8, 4, _KINDS6),
                                      (48, 32, 2, _KINDS3), (51, 16, 4, _KINDS7), (58, 32, 3, _KINDS3),
                                      (61, 32, 4, _KINDS3)):
        for i, k in enumerate(kinds):
            table[first + i] = (bits, comps, k)
    return table


FORMATS = _build_formats()
_INT_KINDS = ("uint", "sint")


def _format(ex, w, inst) -> tuple[int, int, str]:
    if inst.mnemonic.startswith("tbuffer_"):
        fmt = inst.fields["format"]
    else:
        fmts = np.unique(rsrc(ex, w, inst.fields["srsrc"]).fmt)
        if len(fmts) != 1:
            raise ex.fault(w, int(ex.st.pc[w[0]]), inst, "illegal_instruction", "waves disagree on the V# format")
        fmt = int(fmts[0])
    if fmt not in FORMATS:
        raise ex.fault(w, int(ex.st.pc[w[0]]), inst, "illegal_instruction", f"unsupported buffer format {fmt}")
    return FORMATS[fmt]


def decode_component(bits: np.ndarray, n: int, kind: str) -> np.ndarray:
    """Raw n-bit components (uint64) to 32-bit register bits (float32 bits or integer)."""
    sext = np.where(bits >> np.uint64(n - 1) & np.uint64(1), bits.astype(np.int64) - (1 << n), bits.astype(np.int64))
    match kind:
        case "unorm":
            return (bits.astype(np.float64) / ((1 << n) - 1)).astype(np.float32).view(U32)
        case "snorm":
            return np.maximum(sext / ((1 << (n - 1)) - 1), -1.0).astype(np.float32).view(U32)
        case "uscaled":
            return bits.astype(np.float32).view(U32)
        case "sscaled":
            return sext.astype(np.float32).view(U32)
        case "uint":
            return bits.astype(U32)
        case "sint":
            return sext.astype(np.int32).view(U32)
    if n == 16:
        return bits.astype(np.uint16).view(np.float16).astype(np.float32).view(U32)
    return bits.astype(U32)


def encode_component(val: np.ndarray, n: int, kind: str) -> np.ndarray:
    """32-bit register bits (float32 or integer) to raw n-bit components (uint64)."""
    m = (1 << n) - 1
    f = val.astype(U32).view(np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        match kind:
            case "unorm":
                return np.rint(np.nan_to_num(np.clip(f, 0, 1)) * m).astype(np.uint64)
            case "snorm":
                q = np.rint(np.nan_to_num(np.clip(f, -1, 1)) * ((1 << (n - 1)) - 1)).astype(np.int64)
                return q.astype(np.uint64) & np.uint64(m)
            case "uscaled":
                return np.rint(np.nan_to_num(np.clip(f, 0, m))).astype(np.uint64)
            case "sscaled":
                lim = 1 << (n - 1)
                q = np.rint(np.nan_to_num(np.clip(f, -lim, lim - 1))).astype(np.int64)
                return q.astype(np.uint64) & np.uint64(m)
            case "uint" | "sint":
                return val.astype(np.uint64) & np.uint64(m)
    if n == 16:
        return val.astype(U32).view(np.float32).astype(np.float16).view(np.uint16).astype(np.uint64)
    return val.astype(np.uint64) & np.uint64(m)


def _components(raw: np.ndarray, bits: int, comps: int) -> list[np.ndarray]:
    """Split [n, lanes, bytes] element bytes into `comps` uint64 components of `bits` each."""
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32}[bits]
    v = np.ascontiguousarray(raw).view(dt)
    return [v[..., i].astype(np.uint64) for i in range(comps)]


def _one(kind: str, d16: bool) -> int:
    """The value of a constant-1 component."""
    if kind in _INT_KINDS:
        return 1
    return 0x3C00 if d16 else 0x3F800000


def _to_d16(x: np.ndarray, kind: str) -> np.ndarray:
    """A 32-bit loaded value as the 16-bit d16 result."""
    if kind in _INT_KINDS:
        return x & U32(0xFFFF)
    return x.view(np.float32).astype(np.float16).view(np.uint16).astype(U32)


def _sel(vals: list[np.ndarray], sel: np.ndarray, one: int) -> list[np.ndarray]:
    """Apply per-wave dst_sel codes ([n, 4]) to the four components."""
    out = []
    for c in range(4):
        s = sel[:, c][:, None]
        r = np.zeros_like(vals[0])
        r = np.where(s == 1, U32(one), r)
        for k in range(4):
            r = np.where(s == 4 + k, vals[k], r)
        out.append(r)
    return out


_NAME = re.compile(r"^t?buffer_(load|store)_(d16_)?(hi_)?format_(x|xy|xyz|xyzw)$")


def _load_format(ex, w, inst):
    _, d16, hi, chans = _NAME.match(inst.mnemonic).groups()
    bits, comps, kind = _format(ex, w, inst)
    mask = ex.st.exec_lanes(w)
    acc: Access = access(ex, w, inst)
    raw = load_checked(ex, acc, bits // 8 * comps, mask, per_dword=False)
    vals = [decode_component(c, bits, kind) for c in _components(raw, bits, comps)]
    zero = np.zeros(mask.shape, U32)
    while len(vals) < 4:
        vals.append(np.full(mask.shape, _one(kind, False), U32) if len(vals) == 3 else zero)
    vals = _sel(vals, rsrc(ex, w, inst.fields["srsrc"]).dst_sel, _one(kind, False))[: len(chans)]
    if d16:
        vals = [_to_d16(v, kind) for v in vals]
        if hi:
            cur = ex.st.vgpr[w, inst.fields["vdata"], :]
            vals = [(cur & U32(0xFFFF)) | (vals[0] << U32(16))]
        else:
            vals = [vals[i] | (vals[i + 1] << U32(16)) if i + 1 < len(vals) else vals[i]
                    for i in range(0, len(vals), 2)]
    for i, v in enumerate(vals):
        write_vgpr(ex, w, inst.fields["vdata"] + i, v, mask)
    write_tfe(ex, w, inst, len(vals), mask)


def _store_format(ex, w, inst):
    _, d16, hi, chans = _NAME.match(inst.mnemonic).groups()
    bits, comps, kind = _format(ex, w, inst)
    st = ex.st
    mask = st.exec_lanes(w)
    v0 = inst.fields["vdata"]
    if d16:
        halves = [(st.vgpr[w, v0 + i // 2, :] >> U32(16 * (i % 2))) & U32(0xFFFF) for i in range(len(chans))]
        if hi:
            halves = [st.vgpr[w, v0, :] >> U32(16)]
        # widen d16 data to the 32-bit register form the encoder takes
        vals = [h if kind in _INT_KINDS else h.astype(np.uint16).view(np.float16).astype(np.float32).view(U32)
                for h in halves]
    else:
        vals = [st.vgpr[w, v0 + i, :] for i in range(len(chans))]
    vals = vals[:comps]  # only the components the instruction supplies are written
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32}[bits]
    packed = np.stack([encode_component(v, bits, kind).astype(dt) for v in vals], axis=-1)
    acc = access(ex, w, inst)
    live = mask & acc.in_range(0, bits // 8 * comps)
    global_write(ex, acc.addr, np.ascontiguousarray(packed).view(np.uint8), live)


for _p in ("buffer", "tbuffer"):
    for _c in ("x", "xy", "xyz", "xyzw"):
        register(f"{_p}_load_format_{_c}", _load_format)
        register(f"{_p}_load_d16_format_{_c}", _load_format)
        register(f"{_p}_store_format_{_c}", _store_format)
        register(f"{_p}_store_d16_format_{_c}", _store_format)
register("buffer_load_d16_hi_format_x", _load_format)
register("buffer_store_d16_hi_format_x", _store_format)
