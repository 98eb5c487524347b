"""The engine's decode cache (engine._decode_entry): an instruction is decoded once by its own bytes, whatever follows
it in the fetch (another kernel's next instruction), and never mistaken for an instruction that decodes differently
with the bytes after it (gfx950's scaled-MFMA pair, whose scale word alone is another instruction)."""

import pytest

from simgpu.isa import assemble, decode, fetch_size
from simgpu.shader import engine

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
