"""MIMG image_load/image_store/image_get_resinfo/image_atomic_* on LINEAR images with real gfx11 image
resource descriptors (T#), against numpy indexing of the linear texel layout; unmodelled cases fault."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.llvm import compile_ir
from simgpu.fault import HardwareFault
from simgpu.testbed import Testbed

LANES = 64
F32, UNORM8888, UINT1616 = 22, 42, 27  # gfx11 BUF_FMT ids, checked with llvm-mc format:[BUF_FMT_...]
BPE = {F32: 4, UNORM8888: 4, UINT1616: 4}
TYPES = {"1d": 8, "2d": 9, "3d": 10, "1darray": 12, "2darray": 13}
NCOORD = {"1d": 1, "2d": 2, "3d": 3, "1darray": 2, "2darray": 3}
# 3D and array rows are 256 bytes (64 four-byte texels): the only linear layout the engine models there
SHAPES = {"1d": (7, 1, 1), "2d": (5, 3, 1), "3d": (64, 3, 2), "1darray": (64, 1, 3), "2darray": (64, 3, 3)}


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


def tsharp(base, fmt, width, height=1, typ=9, depth=0, pitch=None, sw_mode=0, dst_sel=(4, 5, 6, 7), base_array=0,
           base_level=0, last_level=0) -> list[int]:
    """The eight dwords of a gfx11 image descriptor (field list of ROCr resource_gfx11.h)."""
    assert base % 256 == 0
    w1 = (base >> 40) & 0xFF | fmt << 20 | ((width - 1) & 3) << 30
    w2 = (width - 1) >> 2 | (height - 1) << 14
    w3 = (dst_sel[0] | dst_sel[1] << 3 | dst_sel[2] << 6 | dst_sel[3] << 9 | base_level << 12 | last_level << 16
          | sw_mode << 20 | typ << 28)
    w4 = (depth if pitch is None else pitch - 1) | base_array << 16
    return [(base >> 8) & 0xFFFFFFFF, w1, w2, w3, w4, 0, 0, 0]


def as_int(words: list[int]) -> int:
    return sum(v << (32 * i) for i, v in enumerate(words))


def layout(dim: str, bpe: int):
    """(width, height, slices, row pitch, slice pitch) in texels as the engine's linear layout has them."""
    wdt, hgt, sl = SHAPES[dim]
    if dim in ("1d", "2d"):
        pitch = wdt + 3  # an explicit padded pitch
    else:
        assert wdt * bpe % 256 == 0  # whole 256-byte rows: pitch = width under any alignment up to 256 bytes
        pitch = wdt
    return wdt, hgt, sl, pitch, pitch * hgt


def desc_for(dim: str, base: int, fmt: int, **kw) -> list[int]:
    wdt, hgt, sl, pitch, _ = layout(dim, BPE[fmt])
    extra = {"pitch": pitch} if dim in ("1d", "2d") else {"depth": sl - 1}
    return tsharp(base, fmt, wdt, hgt, TYPES[dim], **extra, **kw)


def coords(dim: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-lane (x, y, slice) coordinates: distinct in-range texels plus out-of-range ones; and in-range."""
    wdt, hgt, sl = SHAPES[dim]
    rng = np.random.default_rng(seed)
    grid = np.stack(np.meshgrid(np.arange(wdt), np.arange(hgt), np.arange(sl), indexing="ij"), -1).reshape(-1, 3)
    grid = rng.permutation(grid)[: LANES - 8]
    c = np.zeros((LANES, 3), np.int64)
    c[: len(grid)] = grid
    bad = [(wdt, 0, 0), (0xFFFFFFFF, 0, 0), (0, hgt, 0), (0, 0, sl), (0, 0, 0xFFFFFFFF), (wdt + 100, 0, 0),
           (0, 0x80000000, 0), (0, 0, sl + 5)]
    bad = [b for b in bad if (b[1] == 0 or NCOORD[dim] >= 2 and dim != "1darray")
           and (b[2] == 0 or dim in ("3d", "1darray", "2darray"))]
    c[len(grid):] = [bad[i % len(bad)] for i in range(LANES - len(grid))]
    ok = np.arange(LANES) < len(grid)
    return c, ok


def arg_coords(dim: str, c: np.ndarray) -> np.ndarray:
    """The coordinates in intrinsic argument order (x, [y], [slice or z]) as [lanes, 4] uint32."""
    cols = {"1d": [0], "2d": [0, 1], "3d": [0, 1, 2], "1darray": [0, 2], "2darray": [0, 1, 2]}[dim]
    out = np.zeros((LANES, 4), np.uint32)
    out[:, : len(cols)] = c[:, cols]
    return out


def vty(n: int) -> str:
    return "i32" if n == 1 else f"<{n} x i32>"


def fty(n: int) -> str:
    return "float" if n == 1 else f"<{n} x float>"


def fname(n: int) -> str:
    return "f32" if n == 1 else f"v{n}f32"


def ir_kernel(dim: str, op: str, dmask: int) -> str:
    n = bin(dmask).count("1")
    names = ["%x", "%y", "%z"][: NCOORD[dim]]
    cargs = ", ".join(f"i32 {v}" for v in names)
    ext = "\n".join(f"  {v} = extractelement <4 x i32> %cv, i32 {i}" for i, v in enumerate(names))
    if op == "load":
        iname = "i32" if n == 1 else f"v{n}i32"
        decl = f"declare {vty(n)} @llvm.amdgcn.image.load.{dim}.{iname}.i32(i32 immarg, " \
               f"{', '.join(['i32'] * len(names))}, <8 x i32>, i32 immarg, i32 immarg)"
        body = f"""  %v = call {vty(n)} @llvm.amdgcn.image.load.{dim}.{iname}.i32(i32 {dmask},
        {cargs}, <8 x i32> %r, i32 0, i32 0)
  %po = getelementptr <4 x i32>, ptr addrspace(1) %o, i32 %t
  store {vty(n)} %v, ptr addrspace(1) %po"""
    else:  # store data is float-typed in the intrinsic: bitcast the raw dwords
        decl = f"declare void @llvm.amdgcn.image.store.{dim}.{fname(n)}.i32({fty(n)}, " \
               f"i32 immarg, {', '.join(['i32'] * len(names))}, <8 x i32>, i32 immarg, i32 immarg)"
        load_d = "  %pd = getelementptr <4 x float>, ptr addrspace(1) %o, i32 %t\n" \
                 "  %dv = load <4 x float>, ptr addrspace(1) %pd\n"
        if n == 1:
            load_d += "  %d = extractelement <4 x float> %dv, i32 0\n"
        else:
            mask = ", ".join(f"i32 {i}" for i in range(n))
            load_d += f"  %d = shufflevector <4 x float> %dv, <4 x float> poison, <{n} x i32> <{mask}>\n"
        body = load_d + f"""  call void @llvm.amdgcn.image.store.{dim}.{fname(n)}.i32(
        {fty(n)} %d, i32 {dmask}, {cargs}, <8 x i32> %r, i32 0, i32 0)"""
    return f"""
{decl}
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @k(<8 x i32> %r, ptr addrspace(1) %c, ptr addrspace(1) %o) {{
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pc = getelementptr <4 x i32>, ptr addrspace(1) %c, i32 %t
  %cv = load <4 x i32>, ptr addrspace(1) %pc
{ext}
{body}
  ret void
}}
"""


_kernels: dict = {}


def ir_run(tb, dim, op, dmask, desc_words, c, data=None):
    key = (id(tb), dim, op, dmask)
    if key not in _kernels:
        _kernels[key] = tb.load(compile_ir(ir_kernel(dim, op, dmask)))["k"]
    out = tb.upload(np.zeros((LANES, 4), np.uint32) if data is None else np.asarray(data, np.uint32))
    tb.launch(_kernels[key], [as_int(desc_words), tb.upload(arg_coords(dim, c)), out], (1,), (LANES,))
    return tb.download(out, np.uint32, LANES * 4).reshape(LANES, 4)


def image_bytes(dim: str, bpe: int, seed: int) -> np.ndarray:
    """Random texel memory [slices, height, pitch, bpe] (padding included)."""
    wdt, hgt, sl, pitch, _ = layout(dim, bpe)
    return np.random.default_rng(seed).integers(0, 256, (sl, hgt, pitch, bpe), dtype=np.uint8)


def upload_image(tb, img: np.ndarray) -> int:
    va = tb.alloc(img.nbytes + 512)
    va_al = (va + 255) // 256 * 256
    tb.write(va_al, img.tobytes())
    return va_al


def expected_texels(fmt: int, texel: np.ndarray) -> np.ndarray:
    """[lanes, 4] register values of raw texels [lanes, 4 bytes] after the format conversion (dst_sel xyzw)."""
    out = np.zeros((len(texel), 4), np.uint32)
    if fmt == F32:
        out[:, 0] = texel.copy().view(np.uint32)[:, 0]
        out[:, 3] = 0x3F800000
    elif fmt == UNORM8888:
        out[:] = (texel.astype(np.float64) / 255).astype(np.float32).view(np.uint32)
    else:
        out[:, :2] = texel.copy().view(np.uint16)
        out[:, 3] = 1
    return out


def reference_load(dim, fmt, img, c, ok, dmask):
    sel = np.where(ok[:, None], c, 0)
    texel = img[sel[:, 2], sel[:, 1], sel[:, 0]]
    vals = np.where(ok[:, None], expected_texels(fmt, texel), 0)
    chans = [i for i in range(4) if dmask >> i & 1]
    out = np.zeros((LANES, 4), np.uint32)
    out[:, : len(chans)] = vals[:, chans]
    return out


@pytest.mark.parametrize("fmt", [F32, UNORM8888, UINT1616])
@pytest.mark.parametrize("dim", list(TYPES))
def test_load_dims_formats(tb, dim, fmt):
    img = image_bytes(dim, BPE[fmt], seed=hash((dim, fmt)) & 0xFFFF)
    base = upload_image(tb, img)
    c, ok = coords(dim, seed=3)
    got = ir_run(tb, dim, "load", 15, desc_for(dim, base, fmt), c)
    np.testing.assert_array_equal(got, reference_load(dim, fmt, img, c, ok, 15))


@pytest.mark.parametrize("dmask", [0b0001, 0b0101, 0b1000, 0b0110, 0b1110])
def test_load_dmask(tb, dmask):
    img = image_bytes("2d", 4, seed=dmask)
    base = upload_image(tb, img)
    c, ok = coords("2d", seed=dmask)
    got = ir_run(tb, "2d", "load", dmask, desc_for("2d", base, UNORM8888), c)
    np.testing.assert_array_equal(got, reference_load("2d", UNORM8888, img, c, ok, dmask))


def test_load_dst_sel(tb):
    img = image_bytes("2d", 4, seed=9)
    base = upload_image(tb, img)
    c, ok = coords("2d", seed=9)
    got = ir_run(tb, "2d", "load", 15, desc_for("2d", base, UINT1616, dst_sel=(5, 4, 1, 0)), c)
    ref = reference_load("2d", UINT1616, img, c, ok, 15)
    want = np.stack([ref[:, 1], ref[:, 0], np.where(ok, 1, 0), np.zeros(LANES)], axis=1)
    np.testing.assert_array_equal(got, want)


def store_data(fmt: int, rng) -> np.ndarray:
    """[lanes, 4] register data whose conversion to the format is exact."""
    if fmt == F32:
        return rng.standard_normal((LANES, 4)).astype(np.float32).view(np.uint32)
    if fmt == UNORM8888:
        return (rng.integers(0, 256, (LANES, 4)) / 255).astype(np.float32).view(np.uint32)
    return rng.integers(0, 1 << 32, (LANES, 4), dtype=np.uint64).astype(np.uint32)


def encode(fmt: int, vals: np.ndarray, comp: int) -> np.ndarray:
    """Raw bytes [lanes, k] of component `comp` of the register values [lanes]."""
    if fmt == F32:
        return vals.astype(np.uint32).view(np.uint8).reshape(-1, 4)
    if fmt == UNORM8888:
        return np.rint(vals.view(np.float32).astype(np.float64) * 255).astype(np.uint8)[:, None]
    return (vals & 0xFFFF).astype(np.uint16).view(np.uint8).reshape(-1, 2)


def reference_store(fmt, img, c, ok, dmask, data):
    img = img.copy()
    widths = {F32: 4, UNORM8888: 1, UINT1616: 2}[fmt]
    ncomp = 4 // widths
    chans = [i for i in range(4) if dmask >> i & 1]
    for k, comp in enumerate(chans):
        if comp >= ncomp:
            continue
        raw = encode(fmt, data[:, k], comp)
        cc = c[ok]
        img[cc[:, 2], cc[:, 1], cc[:, 0], comp * widths: (comp + 1) * widths] = raw[ok]
    return img


@pytest.mark.parametrize("fmt,dmask", [(F32, 1), (UNORM8888, 15), (UINT1616, 3), (UNORM8888, 0b1010),
                                       (UINT1616, 0b0110)])
@pytest.mark.parametrize("dim", list(TYPES))
def test_store(tb, dim, fmt, dmask):
    img = image_bytes(dim, BPE[fmt], seed=dmask)
    base = upload_image(tb, img)
    c, ok = coords(dim, seed=dmask + 1)
    data = store_data(fmt, np.random.default_rng(dmask))
    ir_run(tb, dim, "store", dmask, desc_for(dim, base, fmt), c, data)
    got = np.frombuffer(tb.read(base, img.nbytes), np.uint8).reshape(img.shape)
    np.testing.assert_array_equal(got, reference_store(fmt, img, c, ok, dmask, data))


# ------------------------------------------------------------------------------------------ assembly

# s[0:1] kernarg: a0 T# pointer, a1 per-lane (x, y, slice, data) dwords, a2 out
PROLOGUE = """
    s_load_b128 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_load_b256 s[8:15], s[4:5], 0x0
    v_lshlrev_b32 v1, 4, v0
    global_load_b128 v[2:5], v1, s[6:7]
    v_mov_b32 v10, 0x5a5a5a5a
    v_mov_b32 v11, 0x5a5a5a5a
    v_mov_b32 v12, 0x5a5a5a5a
    v_mov_b32 v13, 0x5a5a5a5a
    s_waitcnt vmcnt(0) lgkmcnt(0)
"""
EPILOGUE = """
    s_waitcnt vmcnt(0)
    s_load_b64 s[4:5], s[0:1], 0x10
    s_waitcnt lgkmcnt(0)
    global_store_b128 v1, v[10:13], s[4:5]
    s_endpgm
"""

_asm: dict = {}


def asm_run(tb, op: str, desc_words, per: np.ndarray) -> np.ndarray:
    if (id(tb), op) not in _asm:
        _asm[(id(tb), op)] = tb.load_asm(PROLOGUE + op + EPILOGUE, args=3)
    out = tb.alloc(LANES * 16)
    tb.launch(_asm[(id(tb), op)], [tb.upload(np.array(desc_words, np.uint32)), tb.upload(per.astype(np.uint32)),
                                   out], (1,), (LANES,))
    return tb.download(out, np.uint32, LANES * 4).reshape(LANES, 4)


def per_lane(c: np.ndarray, data=0) -> np.ndarray:
    per = np.zeros((LANES, 4), np.uint32)
    per[:, :3] = c
    per[:, 3] = data
    return per


def test_asm_nsa_a16_tfe_d16(tb):
    img = image_bytes("2darray", 4, seed=21)
    base = upload_image(tb, img)
    c, ok = coords("2darray", seed=21)
    c = np.where(c > 0xFFFF, 0xFFFF, c)  # a16 coordinates are 16-bit
    ref = reference_load("2darray", UNORM8888, img, c, ok, 15)
    desc = desc_for("2darray", base, UNORM8888)
    got = asm_run(tb, "image_load v[10:13], [v2, v3, v4], s[8:15] dmask:0xb dim:SQ_RSRC_IMG_2D_ARRAY unorm tfe",
                  desc, per_lane(c))
    np.testing.assert_array_equal(got[:, :3], ref[:, [0, 1, 3]])
    np.testing.assert_array_equal(got[:, 3], 0)  # the TFE status dword
    # a16: x | y << 16 in v6, slice in v7
    pack = """v_lshlrev_b32 v6, 16, v3
    v_or_b32 v6, v6, v2
    v_mov_b32 v7, v4
    image_load v[10:11], v[6:7], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D_ARRAY unorm a16 d16"""
    got = asm_run(tb, pack, desc, per_lane(c))
    halves = got[:, :2].copy().view(np.uint16).view(np.float16).astype(np.float32)
    want = ref.view(np.float32).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(halves, want)


def test_asm_d16_store_and_mip_zero(tb):
    img = image_bytes("2d", 4, seed=5)
    base = upload_image(tb, img)
    c, ok = coords("2d", seed=5)
    data = np.random.default_rng(5).integers(0, 1 << 32, LANES, dtype=np.uint64).astype(np.uint32)
    desc = desc_for("2d", base, UINT1616)
    asm_run(tb, "v_mov_b32 v6, 0\n    image_store_mip v5, [v2, v3, v6], s[8:15] dmask:0x3 dim:SQ_RSRC_IMG_2D "
                "unorm d16", desc, per_lane(c, data))
    got = np.frombuffer(tb.read(base, img.nbytes), np.uint8).reshape(img.shape)
    regs = np.stack([data & 0xFFFF, data >> 16, data, data], axis=1).astype(np.uint32)
    np.testing.assert_array_equal(got, reference_store(UINT1616, img, c, ok, 3, regs))


def test_resinfo(tb):
    desc = tsharp(0x10000, F32, 37, 11, TYPES["3d"], depth=4, last_level=2)
    got = asm_run(tb, "v_and_b32 v6, 3, v0\n    image_get_resinfo v[10:13], v6, s[8:15] dmask:0xf "
                      "dim:SQ_RSRC_IMG_3D unorm", desc, per_lane(np.zeros((LANES, 3))))
    lod = np.arange(LANES) & 3
    live = lod < 3
    want = np.stack([np.where(live, np.maximum(1, 37 >> lod), 0), np.where(live, np.maximum(1, 11 >> lod), 0),
                     np.where(live, np.maximum(1, 5 >> lod), 0), np.full(LANES, 3)], axis=1)
    np.testing.assert_array_equal(got, want)
    desc = tsharp(0x10000, F32, 9, 6, TYPES["2darray"], depth=7, base_array=2)
    got = asm_run(tb, "v_mov_b32 v6, 0\n    image_get_resinfo v[10:11], v6, s[8:15] dmask:0xc "
                      "dim:SQ_RSRC_IMG_2D_ARRAY unorm", desc, per_lane(np.zeros((LANES, 3))))
    np.testing.assert_array_equal(got[:, :2], np.tile([6, 1], (LANES, 1)))


def test_atomics(tb):
    img = np.zeros((1, 3, 8, 4), np.uint8)
    base = upload_image(tb, img)
    lane = np.arange(LANES)
    c = np.stack([lane % 8, lane // 8 % 4, np.zeros(LANES, np.int64)], axis=1)  # y == 3 is out of range
    ok = c[:, 1] < 3
    desc = tsharp(base, 20, 5, 3, TYPES["2d"], pitch=8)  # 32_UINT, width 5: x >= 5 also out of range
    ok &= c[:, 0] < 5
    got = asm_run(tb, "v_mov_b32 v10, v5\n    image_atomic_add v10, v[2:3], s[8:15] dmask:0x1 dim:SQ_RSRC_IMG_2D "
                      "unorm glc", desc, per_lane(c, lane + 1))
    mem = np.frombuffer(tb.read(base, img.nbytes), np.uint32).reshape(3, 8)
    want = np.zeros((4, 8), np.int64)
    np.add.at(want, (c[ok, 1], c[ok, 0]), lane[ok] + 1)
    np.testing.assert_array_equal(mem, want[:3])
    prior = np.zeros((4, 8), np.int64)  # lanes 0-31 precede 32-63 on the same texel
    first = lane < 32
    np.add.at(prior, (c[ok & first, 1], c[ok & first, 0]), lane[ok & first] + 1)
    np.testing.assert_array_equal(got[:, 0], np.where(ok, np.where(first, 0, prior[c[:, 1], c[:, 0]]), 0))


# -------------------------------------------------------------------------------------------- faults

@pytest.mark.parametrize("op,desc_kw,match", [
    ("image_load v[10:13], v[2:3], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D unorm", {"sw_mode": 9}, "SW_MODE"),
    ("image_load v[10:13], v[2:3], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D unorm", {"last_level": 3}, "mip"),
    ("image_load v[10:13], v[2:3], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D unorm", {"typ": 13}, "TYPE"),
    ("image_load v[10:13], v[2:4], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_CUBE unorm", {"typ": 11}, "CUBE"),
    ("image_load_mip v[10:13], [v2, v3, v0], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D unorm", {}, "mip levels"),
    ("image_sample v[10:13], v[2:3], s[8:15], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D", {}, "not implemented"),
    ("image_gather4 v[10:13], v[2:3], s[8:15], s[8:11] dmask:0x1 dim:SQ_RSRC_IMG_2D", {}, "not implemented"),
    ("image_store v[10:13], v[2:3], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D unorm", {"fmt": 0}, "format"),
    ("image_load v[10:13], v[2:4], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_3D unorm", {"typ": 10, "pitch": None}, "256"),
])
def test_unmodelled_faults(tb, op, desc_kw, match):
    kw = {"fmt": F32, "typ": 9, "pitch": 8} | desc_kw
    desc = tsharp(0x100000, kw.pop("fmt"), 5, 3, kw.pop("typ"), **kw)
    with pytest.raises(HardwareFault) as e:
        asm_run(tb, op, desc, per_lane(np.zeros((LANES, 3))))
    assert e.value.kind == "illegal_instruction"
    assert match in str(e.value)
