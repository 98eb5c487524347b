"""The memory family of the gfx11 codec agrees with llvm-mc on every golden pair of its encodings."""

from __future__ import annotations

import pytest

from simgpu.isa import decode
from simgpu.isa.errors import DecodeError
from tests.support.isa_golden import check_pair, pairs_by_encoding

MEMORY_ENCODINGS = ["DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "EXP", "LDSDIR"]


@pytest.mark.parametrize("enc", MEMORY_ENCODINGS)
def test_golden_pairs(enc):
    """Decode, print, size, re-encode and assemble match llvm-mc for 100% of the encoding's golden pairs."""
    pairs = pairs_by_encoding()[enc]
    fails = [(d.hex(), t, why) for d, t in pairs if (why := check_pair(d, t))]
    assert not fails, f"{len(fails)}/{len(pairs)} fail, e.g. {fails[:5]}"


@pytest.mark.parametrize("data", [
    bytes.fromhex("0000d4d8"),  # DS cut short
    bytes.fromhex("000000dc000000000000"),  # FLAT opcode 0 of the flat segment does not exist
    bytes.fromhex("0000ecf0fcfc0058")[:6],
])
def test_undecodable_raises_decode_error(data):
    """Truncated or unknown memory instructions raise DecodeError, nothing else."""
    with pytest.raises(DecodeError):
        decode(data)


def test_random_bytes_only_raise_decode_error():
    """No byte pattern of a memory encoding makes the decoder fail with anything but DecodeError."""
    import random
    r = random.Random(11)
    for prefix in (0xD8, 0xDC, 0xE0, 0xE8, 0xF0, 0xF8, 0xCE):
        for _ in range(400):
            data = bytearray(r.randbytes(16))
            data[3] = prefix if prefix == 0xCE else prefix | (data[3] & 0x03)
            try:
                decode(bytes(data)).text()
            except DecodeError:
                pass
