"""Every MUBUF/MTBUF load/store form by channel count and d16 packing, table-driven from the RDNA3 ISA
(16.16/16.17 MUBUF/MTBUF: format conversion per channel; the _d16 forms pack two 16-bit channels per
VGPR, _d16_hi the high half; non-format d16 loads replace one half and keep the other).

Reuses the harness and reference conversions of test_sem_mubuf (a real V#, 64 lanes reading element
index*stride): format loads of 1-4 channels for buffer_ (dst_sel swizzle) and tbuffer_ (format field),
d16 format loads/stores, the non-format d16 byte/short loads.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.simgpu.shader.test_sem_mubuf import AREA, FMT, LANES, fmt_info, ref_decode, ref_encode, run, tb, vsharp
from tests.simgpu.shader.test_sem_mubuf import rd as _rd
from tests.simgpu.shader.test_sem_mubuf import wr as _wr

__all__ = ["tb"]  # the module-scoped Testbed fixture
CHANNELS = ["x", "xy", "xyz", "xyzw"]
PREV = 0x5A5A5A5A  # the harness's initial v10..v14


def _half(x: int) -> int:
    """f32 bits -> f16 bits, round to nearest even."""
    return int(np.array(x, np.uint32).view(np.float32).astype(np.float16).view(np.uint16))


def _regs(n: int) -> str:
    return "v10" if n == 1 else f"v[10:{9 + n}]"


def _elements(fmt: str, index, area: np.ndarray):
    """Per lane: the element's decoded channels (f32/int bits, 4 with the defaults), or zeros out of range."""
    bits, comps, kind = fmt_info(fmt)
    esize = bits // 8 * comps
    mem = bytearray(area.tobytes())
    one = 1 if kind in ("uint", "sint") else 0x3F800000
    out = []
    for i in index:
        live = i * esize + esize <= 30  # num_records 30 bytes (OOB_SELECT 3)
        comp = [ref_decode(_rd(mem, i * esize + c * bits // 8, bits // 8), bits, kind) if live else 0
                for c in range(comps)]
        out.append((comp + [0] * (3 - len(comp)) + ([one] if comps < 4 else []))[:4])
    return out


@pytest.mark.parametrize("fmt", ["8_8_8_8_unorm", "32_32_32_32_uint", "16_16_float"])
@pytest.mark.parametrize("chans", CHANNELS)
@pytest.mark.parametrize("unit", ["buffer", "tbuffer"])
def test_format_loads_by_channel_count(tb, unit, chans, fmt):
    bits, comps, _ = fmt_info(fmt)
    esize = bits // 8 * comps
    area = np.frombuffer(np.random.default_rng(FMT[fmt]).bytes(AREA), np.uint8)
    index = (np.arange(LANES) * 7) % 40
    tfmt = f" format:{FMT[fmt]}" if unit == "tbuffer" else ""
    n = len(chans)
    sel = (4, 5, 6, 7) if unit == "tbuffer" else (7, 6, 1, 4)  # buffer_: the V#'s dst_sel swizzle
    regs, _, _ = run(tb, f"{unit}_load_format_{chans} {_regs(n)}, v2, s[12:15], 0{tfmt} idxen\n",
                     lambda a: vsharp(a, esize, 30, 3, fmt=FMT[fmt], dst_sel=sel), index, np.zeros(LANES),
                     np.zeros((LANES, 4)), 0, area)
    one = 1 if fmt_info(fmt)[2] in ("uint", "sint") else 0x3F800000
    for lane, comp in enumerate(_elements(fmt, index, area)):
        want = [{0: 0, 1: one, 4: comp[0], 5: comp[1], 6: comp[2], 7: comp[3]}[s] for s in sel][:n]
        assert list(regs[lane][:n]) + [PREV] * (4 - n) == want + list(regs[lane][n:4]), (lane, chans)


def _d16_form(unit: str, chans: str, fmt: str) -> tuple[int, int, str, str]:
    """(channels, VGPRs, mnemonic suffix, format operand) of a d16 format load/store; skips the hi form
    tbuffer lacks."""
    if unit == "tbuffer" and chans == "hi_x":
        pytest.skip("tbuffer has no d16_hi_format_x form")
    n = 1 if chans == "hi_x" else len(chans)
    name = "d16_hi_format_x" if chans == "hi_x" else f"d16_format_{chans}"
    return n, (n + 1) // 2, name, f" format:{FMT[fmt]}" if unit == "tbuffer" else ""


@pytest.mark.parametrize("chans", CHANNELS + ["hi_x"])
@pytest.mark.parametrize("unit", ["buffer", "tbuffer"])
def test_d16_format_loads(tb, unit, chans):
    fmt = "16_16_16_16_snorm"
    n, dwords, name, tfmt = _d16_form(unit, chans, fmt)
    area = np.frombuffer(np.random.default_rng(3).bytes(AREA), np.uint8)
    index = np.arange(LANES) % 40
    regs, _, _ = run(tb, f"{unit}_load_{name} {_regs(dwords)}, v2, s[12:15], 0{tfmt} idxen\n",
                     lambda a: vsharp(a, 8, 30, 3, fmt=FMT[fmt]), index, np.zeros(LANES), np.zeros((LANES, 4)), 0,
                     area)
    for lane, comp in enumerate(_elements(fmt, index, area)):
        halves = [_half(c) for c in comp[:n]]
        if chans == "hi_x":  # the high half of v10, the low half kept
            want = [(PREV & 0xFFFF) | halves[0] << 16]
        else:  # pairs of channels per VGPR; an odd last channel keeps the register's high half
            want = [halves[2 * k] | ((halves[2 * k + 1] if 2 * k + 1 < n else PREV >> 16) << 16)
                    for k in range(dwords)]
        assert list(regs[lane][:dwords]) == want, (lane, chans)


@pytest.mark.parametrize("chans", CHANNELS + ["hi_x"])
@pytest.mark.parametrize("unit", ["buffer", "tbuffer"])
def test_d16_format_stores(tb, unit, chans):
    fmt = "16_16_16_16_snorm"
    n, dwords, name, tfmt = _d16_form(unit, chans, fmt)
    bits, comps, kind = fmt_info(fmt)
    esize = bits // 8 * comps
    rng = np.random.default_rng(4)
    halves = rng.standard_normal((LANES, 4)).astype(np.float16).view(np.uint16).astype(np.uint32)
    data = np.zeros((LANES, 4), np.uint32)
    data[:, 0] = halves[:, 0] | halves[:, 1] << 16
    data[:, 1] = halves[:, 2] | halves[:, 3] << 16
    index = np.arange(LANES) % 50
    vdata = "v6" if dwords == 1 else f"v[6:{5 + dwords}]"
    area = np.full(AREA, 0xA5, np.uint8)
    _, _, got = run(tb, f"{unit}_store_{name} {vdata}, v2, s[12:15], 0{tfmt} idxen\n",
                    lambda a: vsharp(a, esize, 40, 1, fmt=FMT[fmt]), index, np.zeros(LANES), data, area=area)
    mem = bytearray(area.tobytes())
    for lane in range(LANES):
        if index[lane] >= 40:
            continue
        src = [int(halves[lane, 1])] if chans == "hi_x" else [int(h) for h in halves[lane, :n]]
        for c, h in enumerate(src):
            f32 = int(np.array(h, np.uint16).view(np.float16).astype(np.float32).view(np.uint32))
            _wr(mem, index[lane] * esize + c * bits // 8, bits // 8, ref_encode(f32, bits, kind))
    assert got == mem, chans


@pytest.mark.parametrize("chans", ["xy", "xyz", "xyzw"])
@pytest.mark.parametrize("unit", ["buffer", "tbuffer"])
def test_format_stores_by_channel_count(tb, unit, chans):
    fmt = "8_8_8_8_unorm"
    bits, comps, kind = fmt_info(fmt)
    esize = bits // 8 * comps
    vals = np.array(([0x3F000000, 0xBF800000, 0x3E800000, 0x7FC00000, 0x40000000, 0x3F7FFFFF] * 50)[: 4 * LANES],
                    np.uint32)
    index = np.arange(LANES) % 50
    n = len(chans)
    area = np.full(AREA, 0xA5, np.uint8)
    tfmt = f" format:{FMT[fmt]}" if unit == "tbuffer" else ""
    _, _, got = run(tb, f"{unit}_store_format_{chans} v[6:{5 + n}], v2, s[12:15], 0{tfmt} idxen\n",
                    lambda a: vsharp(a, esize, 40, 1, fmt=FMT[fmt]), index, np.zeros(LANES), vals, area=area)
    mem = bytearray(area.tobytes())
    for lane in range(LANES):
        if index[lane] < 40:
            for c in range(n):
                _wr(mem, index[lane] * esize + c, 1, ref_encode(int(vals[4 * lane + c]), bits, kind))
    assert got == mem


D16_LOADS = {"d16_u8": (1, False, False), "d16_i8": (1, True, False), "d16_b16": (2, False, False),
             "d16_hi_u8": (1, False, True), "d16_hi_i8": (1, True, True), "d16_hi_b16": (2, False, True)}


@pytest.mark.parametrize("kind", sorted(D16_LOADS))
def test_d16_loads(tb, kind):
    # BUFFER_LOAD_D16_*: the byte/short (zero- or sign-extended to 16 bits) replaces one half of the VGPR
    size, signed, hi = D16_LOADS[kind]
    area = np.frombuffer(np.random.default_rng(9).bytes(AREA), np.uint8)
    offset = (np.arange(LANES) * 5) % 200
    regs, _, _ = run(tb, f"buffer_load_{kind} v10, v3, s[12:15], 0 offen\n", lambda a: vsharp(a), np.zeros(LANES),
                     offset, np.zeros((LANES, 4)), 0, area)
    mem = bytearray(area.tobytes())
    for lane in range(LANES):
        v = _rd(mem, int(offset[lane]), size)
        if signed and v >> (8 * size - 1):
            v -= 1 << (8 * size)
        v &= 0xFFFF
        want = (PREV & 0xFFFF) | v << 16 if hi else (PREV & 0xFFFF0000) | v
        assert regs[lane][0] == want, (kind, lane)
