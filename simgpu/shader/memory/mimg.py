"""MIMG image instructions without a sampler on LINEAR images: image_load, image_store, their _mip forms
(mip level 0 only), image_get_resinfo and the 32-bit image atomics, through 256-bit image resource
descriptors (T#).

T# layout (gfx11, little-endian bit order), from ROCr src/image/resource_gfx11.h (SQ_IMG_RSRC_WORD*):
word0 BASE_ADDRESS = address[39:8]; word1 [7:0] BASE_ADDRESS_HI = address[47:40], [27:20] FORMAT,
[31:30] WIDTH[1:0]; word2 [11:0] WIDTH_HI (width-1 = WIDTH_HI << 2 | WIDTH_LO), [27:14] HEIGHT-1;
word3 [11:0] DST_SEL_X/Y/Z/W, [15:12] BASE_LEVEL, [19:16] LAST_LEVEL, [24:20] SW_MODE, [31:28] TYPE;
word4 [12:0] DEPTH (3D: depth-1; arrays: last slice of the view), [13:0] PITCH-1 (1D/2D: the same bits,
"for 1d, 2d and 2d-msaa in gfx1030 this is pitch-1"), [28:16] BASE_ARRAY.
TYPE (SQ_RSRC_IMG_*, LLVM/Mesa): 8 1D, 9 2D, 10 3D, 11 CUBE, 12 1D_ARRAY, 13 2D_ARRAY, 14/15 MSAA; the
instruction's DIM field is the same list minus 8 (llvm-mc prints dim:SQ_RSRC_IMG_* for it).
FORMAT uses the unified gfx10+ format numbering shared with buffers (Mesa gfx10_format_table), so the
table and conversions are memory.mubuf_format's (llvm-mc: format:[BUF_FMT_32_FLOAT] encodes 22).

Linear layout: texel (x, y, slice) is at base + ((slice * height + y) * pitch + x) * bytes_per_texel,
where slice is z for 3D and BASE_ARRAY + layer for arrays. ROCr's image_manager_gfx11.cpp programs
PITCH = addrlib pitch - 1 only for 1D/2D (non-array, non-3D) images and slice pitch = addrlib's
sliceSize; for arrays and 3D it leaves the pitch to the hardware, whose linear alignment rule is not in
the public documents we have. So 3D and array images are modelled only when a row is a whole number of
256-byte units: then every alignment up to 256 bytes gives pitch = width and slice = width * height
texels; other widths fault. BASE_ARRAY offsetting the layer is Mesa's view model (BASE_ARRAY = first
layer).

Coordinates are unsigned integers (a16: 16-bit, packed two per dword; NSA: one register per dword).
Out-of-range texels (x >= width, y >= height, z >= depth, layer beyond the last slice) read 0 and are
not written (robust-access behaviour, assumed). Loads return the dst_sel-swizzled components selected by
DMASK, packed into consecutive VGPRs (two 16-bit values per VGPR with d16); TFE/LWE append a 0 status
dword. Stores take the DMASK components from consecutive VGPRs (dst_sel does not apply, as for buffer
stores) and write only those; for packed formats the unsupplied components are written as 0.
image_get_resinfo (lod in the address) returns width, height, depth (3D) or slice count (arrays), and
the mip count LAST_LEVEL - BASE_LEVEL + 1, per DMASK; the sizes at a lod are max(1, size >> lod), and 0
past the last level (D3D's rule, assumed; the slice count is not scaled). Image atomics (32-bit, on
32_UINT/32_SINT images only) apply in lane order like the buffer atomics and return the old value with GLC.

Faults (illegal_instruction) instead of modelling: SW_MODE != 0 (tiled), BASE_LEVEL/LAST_LEVEL != 0 for
accesses (mip chains), a nonzero mip coordinate, CUBE and MSAA types/dims, DIM differing from TYPE, R128
(128-bit T#), unknown formats, waves disagreeing on the format; every image_sample*, image_gather4*,
image_get_lod, image_msaa_load, *_pck and BVH opcode is not registered, so the engine faults on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from simgpu.shader.memory.atomic_ops import TWO_DATA, global_atomic
from simgpu.shader.memory.mubuf_format import (
    _INT_KINDS,
    FORMATS,
    _components,
    _element,
    _one,
    _packed,
    _sel,
    _to_d16,
    decode_component,
    encode_component,
)
from simgpu.shader.memory.vmem import global_read, global_write
from simgpu.shader.operand import write_vgpr
from simgpu.shader.semantics import register

U32, U64 = np.uint32, np.uint64
_DIMS = ("1D", "2D", "3D", "CUBE", "1D_ARRAY", "2D_ARRAY", "2D_MSAA", "2D_MSAA_ARRAY")
_NCOORD = {"1D": 1, "2D": 2, "3D": 3, "1D_ARRAY": 2, "2D_ARRAY": 3}


@dataclass
class Tsharp:
    """An image resource descriptor's fields, one entry per wave (int64 arrays)."""

    base: np.ndarray
    fmt: np.ndarray
    width: np.ndarray
    height: np.ndarray
    dst_sel: np.ndarray  # [n, 4]
    base_level: np.ndarray
    last_level: np.ndarray
    sw_mode: np.ndarray
    type: np.ndarray
    depth: np.ndarray  # word4 [12:0]
    pitch: np.ndarray  # word4 [13:0] + 1
    base_array: np.ndarray


def tsharp(ex, w, srsrc: int) -> Tsharp:
    """Decode the T# held in SGPRs srsrc*4 .. srsrc*4+7 of each wave."""
    d = ex.st.sgpr[w, srsrc * 4: srsrc * 4 + 8].astype(np.int64)
    w1, w2, w3, w4 = d[:, 1], d[:, 2], d[:, 3], d[:, 4]
    sel = np.stack([(w3 >> s) & 7 for s in (0, 3, 6, 9)], axis=1)
    return Tsharp(d[:, 0] << 8 | (w1 & 0xFF) << 40, (w1 >> 20) & 0xFF, ((w2 & 0xFFF) << 2 | (w1 >> 30) & 3) + 1,
                  ((w2 >> 14) & 0x3FFF) + 1, sel, (w3 >> 12) & 0xF, (w3 >> 16) & 0xF, (w3 >> 20) & 0x1F,
                  (w3 >> 28) & 0xF, w4 & 0x1FFF, (w4 & 0x3FFF) + 1, (w4 >> 16) & 0x1FFF)


def _dim(ex, w, inst, t: Tsharp) -> str:
    """The instruction's dim, checked against the T# TYPE and the modelled set."""
    f = inst.fields
    if f["r128"]:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: R128 (128-bit image descriptors) is not modelled")
    dim = _DIMS[f["dim"]]
    if dim not in _NCOORD:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: dim {dim} is not modelled")
    if np.any(t.type != 8 + f["dim"]):
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: T# TYPE {sorted(set(t.type.tolist()))} does not match "
                                       f"dim {dim} (only matching types are modelled)")
    return dim


def _addresses(ex, w, inst, count: int) -> list[np.ndarray]:
    """`count` coordinates ([n, lanes] int64, unsigned) from the address VGPRs (a16 and NSA aware)."""
    f = inst.fields
    a16 = f["a16"]
    dwords = (count + 1) // 2 if a16 else count
    if f["nsa"]:
        regs = [f["vaddr"], *inst.extra[: min(dwords, 5) - 1]]
        regs += [regs[-1] + k for k in range(1, dwords - len(regs) + 1)]  # the last NSA register runs on
    else:
        regs = [f["vaddr"] + k for k in range(dwords)]
    vals = [ex.st.vgpr[r, w, :].astype(np.int64) for r in regs]
    if not a16:
        return vals
    return [vals[i // 2] >> (16 * (i % 2)) & 0xFFFF for i in range(count)]


def _check_linear(ex, w, inst, t: Tsharp) -> None:
    if np.any(t.sw_mode != 0):
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: SW_MODE {sorted(set(t.sw_mode.tolist()))}: "
                                       "only LINEAR (0) is modelled")
    if np.any(t.base_level != 0) or np.any(t.last_level != 0):
        raise ex.illegal_inst(w, inst,
                              f"{inst.mnemonic}: images with mip levels (BASE_LEVEL/LAST_LEVEL != 0) are not modelled")


def _format(ex, w, inst, t: Tsharp) -> tuple[tuple[int, ...], str]:
    fmts = np.unique(t.fmt)
    if len(fmts) != 1:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: waves disagree on the T# format")
    if int(fmts[0]) not in FORMATS:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: unsupported image format {int(fmts[0])}")
    return FORMATS[int(fmts[0])]


def _pitches(ex, w, inst, t: Tsharp, dim: str, bpe: int) -> tuple[np.ndarray, np.ndarray]:
    """(row pitch, slice pitch) in texels per wave; see the module docstring for where each comes from."""
    if dim in ("1D", "2D"):
        if np.any(t.pitch < t.width):
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: T# PITCH is smaller than the width")
        return t.pitch, t.pitch * t.height
    if np.any(t.width * bpe % 256):
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: linear 3D/array images whose rows are not a multiple of 256 "
                                       "bytes are not modelled (their row pitch is not in the T#)")
    return t.width, t.width * t.height


def _texel(ex, w, inst, t: Tsharp, dim: str, bpe: int, extra: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(address uint64, in range bool), [n, lanes] each, of the texel the coordinates select."""
    c = _addresses(ex, w, inst, _NCOORD[dim] + extra)
    if extra and np.any(ex.st.exec_lanes(w) & (c[-1] != 0)):
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: mip levels other than 0 are not modelled")
    x = c[0]
    y = c[1] if dim in ("2D", "3D", "2D_ARRAY") else np.zeros_like(x)
    ok = (x < t.width[:, None]) & (y < t.height[:, None])
    if dim == "3D":
        s = c[2]
        ok &= s < (t.depth + 1)[:, None]
    elif dim.endswith("ARRAY"):
        s = t.base_array[:, None] + c[-1 - extra]
        ok &= s <= t.depth[:, None]
    else:
        s = np.zeros_like(x)
    pitch, slice_pitch = _pitches(ex, w, inst, t, dim, bpe)
    idx = np.where(ok, s * slice_pitch[:, None] + y * pitch[:, None] + x, 0)
    return (t.base[:, None] + idx * bpe).astype(U64), ok


def _setup(ex, w, inst):
    """Descriptor, dim, format and texel addressing shared by loads, stores and atomics."""
    t = tsharp(ex, w, inst.fields["srsrc"])
    dim = _dim(ex, w, inst, t)
    _check_linear(ex, w, inst, t)
    widths, kind = _format(ex, w, inst, t)
    bpe = sum(widths) // 8
    addr, ok = _texel(ex, w, inst, t, dim, bpe, extra=int("_mip" in inst.mnemonic))
    return t, widths, kind, addr, ok


def _channels(dmask: int) -> list[int]:
    return [c for c in range(4) if dmask >> c & 1]


def _pack_d16(vals: list[np.ndarray]) -> list[np.ndarray]:
    return [vals[i] | (vals[i + 1] << U32(16)) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]


def _write_result(ex, w, inst, vals: list[np.ndarray], mask: np.ndarray) -> None:
    """Loaded dwords to VDATA, then the TFE/LWE status dword (0: the access never fails)."""
    f = inst.fields
    for i, v in enumerate(vals):
        write_vgpr(ex, w, f["vdata"] + i, v, mask)
    if f["tfe"] or f["lwe"]:
        write_vgpr(ex, w, f["vdata"] + len(vals), np.zeros(mask.shape, U32), mask)


def _load(ex, w, inst):
    f = inst.fields
    t, widths, kind, addr, ok = _setup(ex, w, inst)
    mask = ex.st.exec_lanes(w)
    raw = global_read(ex, addr, sum(widths) // 8, mask & ok)
    vals = [decode_component(c, n, kind) for c, n in zip(_components(raw, widths), widths, strict=True)]
    while len(vals) < 4:  # missing components: 0 for x, y, z and 1 for w
        vals.append(np.full(mask.shape, _one(kind, False) if len(vals) == 3 else 0, U32))
    vals = _sel(vals, t.dst_sel, _one(kind, False))
    # out-of-range texels return 0 in every component, whatever dst_sel says
    out = [np.where(ok, vals[c], U32(0)) for c in _channels(f["dmask"])]
    if f["d16"]:
        out = _pack_d16([_to_d16(v, kind) for v in out])
    _write_result(ex, w, inst, out, mask)


def _store_values(ex, w, inst, kind: str, count: int) -> list[np.ndarray]:
    """The `count` data components of a store as 32-bit register values (d16 halves widened)."""
    f = inst.fields
    v0 = f["vdata"]
    if not f["d16"]:
        return [ex.st.vgpr[v0 + i, w, :] for i in range(count)]
    halves = [(ex.st.vgpr[v0 + i // 2, w, :] >> U32(16 * (i % 2))) & U32(0xFFFF) for i in range(count)]
    if kind in _INT_KINDS:
        return halves
    return [h.astype(np.uint16).view(np.float16).astype(np.float32).view(U32) for h in halves]


def _store(ex, w, inst):
    _, widths, kind, addr, ok = _setup(ex, w, inst)
    live = ex.st.exec_lanes(w) & ok
    chans = _channels(inst.fields["dmask"])
    data = dict(zip(chans, _store_values(ex, w, inst, kind, len(chans)), strict=True))
    chans = [c for c in chans if c < len(widths)]  # components the format lacks are dropped
    if not chans:
        return
    if _packed(widths):  # components share a dword: the unsupplied ones are written as 0
        raw = [encode_component(data[c], n, kind) if c in data else np.zeros(live.shape, U64)
               for c, n in enumerate(widths)]
        global_write(ex, addr, _element(raw, widths), live)
        return
    size = widths[0] // 8
    for c in chans:  # byte-aligned components: write only the supplied ones
        raw = _element([encode_component(data[c], widths[c], kind)], widths[:1])
        global_write(ex, addr + U64(c * size), raw, live)


def _resinfo(ex, w, inst):
    f = inst.fields
    t = tsharp(ex, w, f["srsrc"])
    dim = _dim(ex, w, inst, t)
    if dim == "1D_ARRAY" or f["d16"]:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: resinfo of 1D arrays and d16 resinfo are not modelled")
    mask = ex.st.exec_lanes(w)
    lod = _addresses(ex, w, inst, 1)[0]
    levels = np.broadcast_to((t.last_level - t.base_level + 1)[:, None], lod.shape)
    live = lod < levels

    def size(s: np.ndarray) -> np.ndarray:
        """The extent at each lane's lod: halved per level, at least 1, 0 past the last level."""
        return np.where(live, np.maximum(1, s[:, None] >> np.minimum(lod, 31)), 0)

    one = np.ones_like(t.width)
    height = size(one if dim == "1D" else t.height)
    if dim == "2D_ARRAY":  # slices in the view; not scaled by the lod
        depth = np.broadcast_to((t.depth - t.base_array + 1)[:, None], lod.shape)
    else:
        depth = size(t.depth + 1 if dim == "3D" else one)
    vals = [size(t.width), height, depth, levels]
    _write_result(ex, w, inst, [vals[c].astype(U32) for c in _channels(f["dmask"])], mask)


_ATOMIC = re.compile(r"^image_atomic_(\w+)$")
_ATOMIC_OPS = {"swap": "swap", "cmpswap": "cmpswap", "add": "add", "sub": "sub", "smin": "smin", "umin": "umin",
               "smax": "smax", "umax": "umax", "and": "and", "or": "or", "xor": "xor", "inc": "inc", "dec": "dec"}


def _atomic(ex, w, inst):
    f = inst.fields
    op = _ATOMIC_OPS[_ATOMIC.match(inst.mnemonic).group(1)]
    _, widths, kind, addr, ok = _setup(ex, w, inst)
    if widths != (32,) or kind not in _INT_KINDS:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: atomics are modelled on 32_UINT/32_SINT images only")
    mask = ex.st.exec_lanes(w)
    src = ex.st.vgpr[f["vdata"], w, :].copy()
    cmp = ex.st.vgpr[f["vdata"] + 1, w, :].copy() if op in TWO_DATA else None
    old = global_atomic(ex, op, addr, src, cmp, 4, mask & ok)
    if f["glc"]:  # out-of-range lanes return 0
        write_vgpr(ex, w, f["vdata"], np.where(ok, old, U32(0)).astype(U32), mask)


for _m in ("image_load", "image_load_mip"):
    register(_m, _load)
for _m in ("image_store", "image_store_mip"):
    register(_m, _store)
register("image_get_resinfo", _resinfo)
for _o in _ATOMIC_OPS:
    register(f"image_atomic_{_o}", _atomic)
