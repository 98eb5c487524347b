"""The engine's decode cache (engine._decode_entry): an instruction is decoded once by its own bytes, whatever follows
it in the fetch (another kernel's next instruction), and never mistaken for an instruction that decodes differently
with the bytes after it (gfx950's scaled-MFMA pair, whose scale word alone is another instruction)."""

import numpy as np
import pytest

from simgpu.hw.gmc import PAGE_SIZE
from simgpu.isa import assemble, decode, fetch_size
from simgpu.shader import engine
from simgpu.testbed import Testbed

CASES = [
    ("gfx1100", "v_add_f32_e32 v1, v2, v3", ["s_endpgm", "v_mov_b32_e32 v4, v5", "s_nop 0"]),
    ("gfx1100", "v_add_f32_e64 v1, v2, v3", ["s_endpgm", "v_mov_b32_e32 v4, v5"]),
    ("gfx1100", "s_mov_b32 s1, s2", ["s_endpgm", "s_nop 0"]),
    ("gfx1201", "v_mul_f32_e32 v1, v2, v3", ["s_endpgm", "v_mov_b32_e32 v4, v5"]),
    ("gfx942", "v_add_f32_e32 v1, v2, v3", ["s_endpgm", "v_mov_b32_e32 v4, v5"]),
]


def _fetched(code: bytes, arch: str) -> bytes:
    """What the engine's fetch reads at the start of `code`: as many bytes as the first dword's encoding may take."""
    return code[:fetch_size(int.from_bytes(code[:4], "little"), arch)]


@pytest.fixture
def counted(monkeypatch):
    """Decode calls the engine makes, counted; the caches emptied first so every case starts cold."""
    calls = []
    real = engine.decode

    def counting(data, *a, **kw):
        calls.append(bytes(data))
        return real(data, *a, **kw)
    monkeypatch.setattr(engine, "decode", counting)
    for cache in (*engine._DECODED_BY_ARCH.values(), *engine._EXACT_BY_ARCH.values()):
        cache.clear()
    return calls


@pytest.mark.parametrize("arch,inst,nexts", CASES, ids=[f"{a}:{i}" for a, i, _ in CASES])
def test_an_instruction_decodes_once_whatever_follows(counted, arch, inst, nexts):
    entries = [engine._decode_entry(_fetched(assemble(f"{inst}\n{n}\ns_endpgm", arch=arch), arch), arch)
               for n in nexts]
    assert all(e is entries[0] for e in entries) and entries[0][0].text() == decode(
        assemble(inst, arch=arch), arch=arch).text()
    assert len(counted) == 1


def test_the_scaled_mfma_pair_is_not_its_scale_word(counted):
    """v_mfma_ld_scale_b32 fetches 16 bytes: alone (not followed by its MFMA) it is an 8-byte instruction, with the MFMA
    after it one 16-byte scaled MFMA; neither may be answered from the other's entry."""
    arch = "gfx950"
    pair = assemble("v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21 "
                    "op_sel_hi:[0,0,0]", arch=arch)
    alone = pair[:8] + assemble("s_nop 0\ns_nop 0", arch=arch)
    a = engine._decode_entry(_fetched(alone, arch), arch)
    p = engine._decode_entry(_fetched(pair, arch), arch)
    assert a[0].size == 8 and a[0].mnemonic == "v_mfma_ld_scale_b32"
    assert p[0].size == 16 and p[0].mnemonic.startswith("v_mfma_scale_f32")
    assert engine._decode_entry(_fetched(alone, arch), arch) is a


def test_undecodable_bytes_are_not_cached(counted):
    assert engine._decode_entry(b"\xff\xff\xff\xff\x00\x00\x00\x00") is None
    assert engine._decode_entry(b"\xff\xff\xff\xff\x00\x00\x00\x01") is None


@pytest.mark.parametrize("tail", [4, 8])
def test_an_instruction_across_a_page_boundary(tail):
    """A fetch reads ahead only within the PC's page; an instruction that crosses into the next page (its literal
    there, or half its VOP3 word and its literal) reads the rest from that page."""
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = None
    body = "v_add_f32_e64 v1, 0x40490fdb, v0" if tail == 8 else "v_mov_b32_e32 v1, 0x12345678"
    store = "\nv_mov_b32 v2, 0\nglobal_store_b32 v2, v1, s[4:5]\ns_endpgm"
    probe = tb.load_asm("s_load_b64 s[4:5], s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\n" + "s_nop 0\n" * 4 + body + store,
                        args=1)
    start = probe.code_address + 8  # after the s_load and s_waitcnt
    nops = (PAGE_SIZE - tail - start % PAGE_SIZE) // 4
    k = tb.load_asm("s_load_b64 s[4:5], s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\n" + "s_nop 0\n" * nops + body + store,
                    args=1)
    assert (k.code_address + 8 + 4 * nops) % PAGE_SIZE == PAGE_SIZE - tail  # it straddles the boundary
    out = tb.alloc(4)
    tb.launch(k, [out], (1,), (1,))
    assert int(tb.download(out, np.uint32, 1)[0]) == (0x12345678 if tail == 4 else 0x40490FDB)  # (pi + v0 = 0)
