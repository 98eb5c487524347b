"""Decode throughput of the gfx11 codec on a large kernel: instructions/s for decode, for decode plus
disassembly text, and for assembly. The kernel is every golden instruction the codec decodes, laid
end to end (tests/data/isa/gfx1100_golden.tsv.gz).

    python -m bench.bench_decode
"""

from __future__ import annotations

import gzip
import os
import time

from simgpu.isa import DecodeError, assemble, decode

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "isa", "gfx1100_golden.tsv.gz")


def _kernel() -> tuple[bytes, list[str]]:
    code, texts = bytearray(), []
    with gzip.open(GOLDEN, "rt") as f:
        for line in f:
            h, t = line.rstrip("\n").split("\t", 1)
            data = bytes.fromhex(h)
            try:
                decode(data)
            except DecodeError:
                continue
            code += data
            texts.append(t)
    return bytes(code), texts


def _rate(fn, n: int) -> float:
    t0 = time.perf_counter()
    fn()
    return n / (time.perf_counter() - t0)


def main() -> None:
    code, texts = _kernel()
    n = len(texts)

    def decode_all() -> None:
        pos = 0
        while pos < len(code):
            pos += decode(code, pos).size

    def decode_text() -> None:
        pos = 0
        while pos < len(code):
            inst = decode(code, pos)
            inst.text()
            pos += inst.size

    source = "\n".join(texts)
    print(f"kernel: {n} instructions, {len(code)} bytes")
    print(f"decode:            {_rate(decode_all, n):12,.0f} instructions/s")
    print(f"decode + text:     {_rate(decode_text, n):12,.0f} instructions/s")
    print(f"assemble:          {_rate(lambda: assemble(source), n):12,.0f} instructions/s")


if __name__ == "__main__":
    main()
