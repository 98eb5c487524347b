"""Every scalar ALU definition (scalar.define.SPECS) in both tiers: the interpreter's generated kernel and the
JIT's generated IR must leave the same registers, SCC and EXEC, over edge and random inputs, one wave per input
row (the interpreter then computes on Python ints) and many (uint64 arrays).

Each kernel loads eight input dwords s4..s11 per workgroup, sets SCC from them, then runs a chunk of the
defined instructions, each reading s4..s11 (or a literal) and writing its own SGPRs, with SCC after each one
kept by s_cselect. The instruction text is built from the definition's signature (what it reads and writes).
"""

import numpy as np
import pytest

from simgpu.shader.scalar.define import SPECS
from simgpu.shader.sem.expr import bits
from simgpu.shader.semantics import implemented
from tests.support import tiers

EDGES = [0, 1, 2, 31, 32, 63, 64, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x12345678, 0x1F0005, 0x3F0021]
CHUNK = 12  # instructions per kernel: 4 SGPRs each from s20 up, below VCC


def _reg(first: int, t: str) -> str:
    return f"s[{first}:{first + 1}]" if bits(t) == 64 else f"s{first}"


def _text(name: str, spec, dst: int, literal: bool, imm: int) -> list[str]:
    """The instruction as text (and the moves that set a destination it also reads)."""
    types = dict(spec.reads) | dict(spec.writes)
    ops, pre = [], []
    if "sdst" in types:
        ops.append(_reg(dst, types["sdst"]))
        if "sdst" in dict(spec.reads):
            pre.append(f"s_mov_b64 s[{dst}:{dst + 1}], s[8:9]")
    for k, src in enumerate(("ssrc0", "ssrc1")):
        if src in types:
            ops.append("0x80000001" if literal and k == 0 else _reg(4 + 2 * k, types[src]))
    if "simm16" in types:
        ops.append(hex(imm))
    return [*pre, f"{name} {', '.join(ops)}", f"s_cselect_b32 s{dst + 2}, 1, 0"]


def _names(family: str | None) -> list[str]:
    implemented()
    return sorted(n for n, s in SPECS.items() if s.family == family)


def _chunks(names: list[str]) -> list[list[str]]:
    return [names[i:i + CHUNK] for i in range(0, len(names), CHUNK)]


CASES = [(arch, chunk) for arch, fam in (("gfx1100", None), ("gfx1201", "gfx12")) for chunk in _chunks(_names(fam))]


@pytest.mark.parametrize("literal", [False, True])
@pytest.mark.parametrize("arch,names", CASES, ids=[f"{a}-{n[0]}" for a, n in CASES])
def test_defined_salu_agrees_in_both_tiers(arch, names, literal):
    rng = np.random.default_rng(len(names) * 7 + literal)
    smem = "s_waitcnt lgkmcnt(0)" if arch == "gfx1100" else "s_wait_kmcnt 0x0"
    group = "s2" if arch == "gfx1100" else "ttmp9"
    lines = ["s_load_b64 s[16:17], s[0:1], 0x0", smem, f"s_lshl_b32 s18, {group}, 5",
             "s_load_b256 s[4:11], s[16:17], s18",
             smem, "s_cmp_lg_u32 s11, 0"]
    for i, name in enumerate(names):
        lines += _text(name, SPECS[name], 20 + 4 * i, literal, int(rng.integers(0, 1 << 16)))
    lines.append("s_endpgm")
    words = rng.choice(np.array(EDGES, np.uint32), (64, 8))
    words[32:] = rng.integers(0, 1 << 32, (32, 8), dtype=np.uint64).astype(np.uint32)
    pair = tiers.pair(arch=arch)
    for tb in pair:
        k = tb.load_asm("\n".join(lines), args=1, vgprs=8)
        data = tb.upload(words)
        for groups in (1, 64):  # one wave alone, then many at one PC
            assert tiers.launch(tb, k, [data], (groups,), (32,)) is None
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.native_instructions > 0
