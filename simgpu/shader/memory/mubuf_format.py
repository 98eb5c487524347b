"""Typed buffer accesses: buffer_load/store_format_* (format from the V#) and tbuffer_load/store_format_*
(format from the instruction), including the d16 forms, with the gfx11 unified buffer formats.

gfx12 (RDNA4) runs these too, in its VBUFFER encoding (the V# named by rsrc, mubuf.rsrc_of): its format ids are
gfx11's (llvm-mc -mcpu=gfx1201 encodes format:[BUF_FMT_32_FLOAT] as 22, [BUF_FMT_8_8_8_8_UNORM] as 42, ..., as
gfx1100 does, in the instruction's 7-bit FORMAT field [61:55]), and its V# keeps FORMAT at word 3 [17:12] and
DST_SEL at [11:0] (SQ_BUF_RSRC_WORD3_GFX12 beside _GFX11 in the ROCm HSA headers; gfx12 adds compression bits at
[27:24], not modelled: the simulator does not compress).

Implemented formats (LLVM's BUF_FMT_* numbering for gfx11): every 8-, 16- and 32-bit per-component
format with 1, 2, 3 (32-bit only) or 4 components and number format UNORM, SNORM, USCALED, SSCALED,
UINT, SINT, FLOAT (16/32-bit), and the packed 32-bit formats 10_11_11_FLOAT (30), 11_11_10_FLOAT (31),
10_10_10_2_{UNORM,SNORM,UINT,SINT} (32-35; gfx11 has no SCALED ones) and 2_10_10_10_{UNORM,SNORM,
USCALED,SSCALED,UINT,SINT} (36-41). BUF_FMT_INVALID and unknown ids raise an illegal_instruction fault.

Packed layouts: the name lists the field widths from the most significant bit down, and the components
x, y, z, w are taken from the least significant bit up. So 10_11_11: x bits 0-10, y 11-21, z 22-31;
11_11_10: x 0-9, y 10-20, z 21-31; 2_10_10_10: x 0-9, y 10-19, z 20-29, w 30-31; 10_10_10_2: x 0-1,
y 2-11, z 12-21, w 22-31. Evidence: Mesa maps PIPE_FORMAT_R11G11B10_FLOAT (R in bits 0-10, like Vulkan's
B10G11R11_UFLOAT_PACK32) to 10_11_11 and R10G10B10A2 (R in bits 0-9) to 2_10_10_10 (radeonsi/radv
*_translate_buffer_dataformat, gfx10_format_table.py), and gfx10_format_table.py reverses the hardware
name's widths to get "little-endian order" when matching, which puts 10_10_10_2's 2-bit field in x.
The small floats are in small_float.py.

Loads: UNORM x / (2^n - 1), SNORM max(x / (2^(n-1) - 1), -1), SCALED the integer as float, UINT/SINT
zero/sign extended, FLOAT16 and the 10/11-bit floats widened exactly. Components the format lacks read 0
(x, y, z) and 1 / 1.0 (w). The V#'s dst_sel (0: 0, 1: one, 4-7: x-w) then selects each returned
component. d16 loads return 16-bit results (f16 for float-like formats, low 16 bits of the integer
otherwise), two per VGPR.
Stores: UNORM/SNORM clamp and round to nearest even (NaN -> 0), SCALED round to nearest even with
saturation, UINT/SINT keep the low n bits, FLOAT16 and the 10/11-bit floats round to nearest even.
Range checks cover the whole element (format accesses are all or nothing). A store supplying fewer
components than the format has writes only theirs; for a packed format, where components share bytes,
the missing ones are written as 0 (the whole dword is written).
"""

from __future__ import annotations

import re

import numpy as np

from simgpu.shader.memory.mubuf import Access, access, load_checked, rsrc, rsrc_of, write_tfe
from simgpu.shader.memory.vmem import global_write
from simgpu.shader.operand import write_vgpr
from simgpu.shader.semantics import register
from simgpu.shader.vector import small_float

U32 = np.uint32
_KINDS6 = ("unorm", "snorm", "uscaled", "sscaled", "uint", "sint")
_KINDS7 = _KINDS6 + ("float",)
_KINDS3 = ("uint", "sint", "float")


def _build_formats() -> dict[int, tuple[tuple[int, ...], str]]:
    """gfx11 BUF_FMT id -> (component widths in bits, x first; number format)."""
    table: dict[int, tuple[tuple[int, ...], str]] = {}
    for first, bits, comps, kinds in ((1, 8, 1, _KINDS6), (7, 16, 1, _KINDS7), (14, 8, 2, _KINDS6),
                                      (20, 32, 1, _KINDS3), (23, 16, 2, _KINDS7), (42, 8, 4, _KINDS6),
                                      (48, 32, 2, _KINDS3), (51, 16, 4, _KINDS7), (58, 32, 3, _KINDS3),
                                      (61, 32, 4, _KINDS3)):
        for i, k in enumerate(kinds):
            table[first + i] = ((bits,) * comps, k)
    # packed formats (ids read from llvm-mc's encoding of format:[BUF_FMT_...]); widths x first, see above
    table[30] = ((11, 11, 10), "float")
    table[31] = ((10, 11, 11), "float")
    for i, k in enumerate(("unorm", "snorm", "uint", "sint")):
        table[32 + i] = ((2, 10, 10, 10), k)
    for i, k in enumerate(_KINDS6):
        table[36 + i] = ((10, 10, 10, 2), k)
    return table


FORMATS = _build_formats()
_INT_KINDS = ("uint", "sint")


def _format(ex, w, inst) -> tuple[tuple[int, ...], str]:
    if inst.mnemonic.startswith("tbuffer_"):
        fmt = inst.fields["format"]
    else:
        fmts = np.unique(rsrc(ex, w, rsrc_of(inst)).fmt)
        if len(fmts) != 1:
            raise ex.illegal_inst(w, inst, "waves disagree on the V# format")
        fmt = int(fmts[0])
    if fmt not in FORMATS:
        raise ex.illegal_inst(w, inst, f"unsupported buffer format {fmt}")
    return FORMATS[fmt]


def _packed(widths: tuple[int, ...]) -> bool:
    """Components that are not whole, equal-sized bytes share one dword."""
    return len(set(widths)) > 1 or widths[0] % 8 != 0


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
    if n in (10, 11):
        return small_float.decode(bits, n - 5)
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
    if n in (10, 11):
        return small_float.encode(val, n - 5)
    return val.astype(np.uint64) & np.uint64(m)


def _components(raw: np.ndarray, widths: tuple[int, ...]) -> list[np.ndarray]:
    """Split [n, lanes, bytes] element bytes into uint64 components of the given widths."""
    if _packed(widths):
        word = np.ascontiguousarray(raw).view(np.uint32)[..., 0].astype(np.uint64)
        offs = np.cumsum((0,) + widths)
        return [word >> np.uint64(o) & np.uint64((1 << n) - 1) for o, n in zip(offs, widths, strict=False)]
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32}[widths[0]]
    v = np.ascontiguousarray(raw).view(dt)
    return [v[..., i].astype(np.uint64) for i in range(len(widths))]


def _element(comps: list[np.ndarray], widths: tuple[int, ...]) -> np.ndarray:
    """Join raw uint64 components (the first len(comps) of the format) into [n, lanes, bytes] element bytes."""
    if _packed(widths):
        offs = np.cumsum((0,) + widths)
        word = np.zeros(comps[0].shape, np.uint64)
        for c, o in zip(comps, offs, strict=False):
            word |= c << np.uint64(o)
        return word.astype(np.uint32)[..., None].view(np.uint8)
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32}[widths[0]]
    return np.ascontiguousarray(np.stack([c.astype(dt) for c in comps], axis=-1)).view(np.uint8)


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
    widths, kind = _format(ex, w, inst)
    mask = ex.st.exec_lanes(w)
    acc: Access = access(ex, w, inst)
    raw = load_checked(ex, acc, sum(widths) // 8, mask, per_dword=False)
    vals = [decode_component(c, n, kind) for c, n in zip(_components(raw, widths), widths, strict=True)]
    zero = np.zeros(mask.shape, U32)
    while len(vals) < 4:
        vals.append(np.full(mask.shape, _one(kind, False), U32) if len(vals) == 3 else zero)
    vals = _sel(vals, rsrc(ex, w, rsrc_of(inst)).dst_sel, _one(kind, False))[: len(chans)]
    if d16:
        vals = [_to_d16(v, kind) for v in vals]
        if hi:
            cur = ex.st.vgpr[inst.fields["vdata"], w, :]
            vals = [(cur & U32(0xFFFF)) | (vals[0] << U32(16))]
        else:  # two channels per VGPR; after an odd last channel the high half is preserved (the reference)
            vals = [vals[i] | (vals[i + 1] << U32(16)) if i + 1 < len(vals) else
                    (ex.st.vgpr[inst.fields["vdata"] + i // 2, w, :] & U32(0xFFFF0000)) | vals[i]
                    for i in range(0, len(vals), 2)]
    for i, v in enumerate(vals):
        write_vgpr(ex, w, inst.fields["vdata"] + i, v, mask)
    write_tfe(ex, w, inst, len(vals), mask)


def _store_format(ex, w, inst):
    _, d16, hi, chans = _NAME.match(inst.mnemonic).groups()
    widths, kind = _format(ex, w, inst)
    st = ex.st
    mask = st.exec_lanes(w)
    v0 = inst.fields["vdata"]
    if d16:
        halves = [(st.vgpr[v0 + i // 2, w, :] >> U32(16 * (i % 2))) & U32(0xFFFF) for i in range(len(chans))]
        if hi:
            halves = [st.vgpr[v0, w, :] >> U32(16)]
        # widen d16 data to the 32-bit register form the encoder takes
        vals = [h if kind in _INT_KINDS else h.astype(np.uint16).view(np.float16).astype(np.float32).view(U32)
                for h in halves]
    else:
        vals = [st.vgpr[v0 + i, w, :] for i in range(len(chans))]
    raw = [encode_component(v, n, kind) for v, n in zip(vals, widths, strict=False)]
    if _packed(widths):  # components share the dword: the ones not supplied are written as 0
        raw += [np.zeros_like(raw[0])] * (len(widths) - len(raw))
    # otherwise only the components the instruction supplies are written
    acc = access(ex, w, inst)
    live = mask & acc.in_range(0, sum(widths) // 8)
    global_write(ex, acc.addr, _element(raw, widths), live)


for _p in ("buffer", "tbuffer"):
    for _c in ("x", "xy", "xyz", "xyzw"):
        register(f"{_p}_load_format_{_c}", _load_format)
        register(f"{_p}_load_d16_format_{_c}", _load_format)
        register(f"{_p}_store_format_{_c}", _store_format)
        register(f"{_p}_store_d16_format_{_c}", _store_format)
register("buffer_load_d16_hi_format_x", _load_format)
register("buffer_store_d16_hi_format_x", _store_format)
