"""Which INST_TYPE a real CDNA GPU's thread trace gives each instruction: tests/data/sqtt/gfx950_inst_types.json, the
golden simgpu.profile.classify_gfx9 is checked against (tests/simgpu/profile/test_sqtt_gfx9.py).

The traces are the gfx950 (MI350X) captures tinygrad publishes in its repository (extra/sqtt/examples/gfx950/*.pkl:
tinygrad's profile events, each SE's SQTT blob and the kernel's code object). For every wave that starts on CU 0 of a
traced SE, its INST tokens are walked through the kernel's code from its first instruction (JUMP follows the branch,
NEXT falls through; SOPP instructions that are not branches, s_endpgm or s_sendmsg write no token), and each token's
INST_TYPE is recorded with the instruction's bytes. Tokens are decoded by tinygrad's decoder, instructions by ours.

    python -m tools.gen_sqtt_cdna_golden /path/to/tinygrad/extra/sqtt/examples/gfx950
"""

from __future__ import annotations

import json
import pickle
import sys
from collections import Counter
from pathlib import Path

from simgpu.isa.codec import decode
from simgpu.isa.codeobject import read_code_object

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "sqtt" / "gfx950_inst_types.json"
ARCH = "gfx950"
UNTRACED_SOPP_KEEP = ("s_branch", "s_cbranch", "s_endpgm", "s_sendmsg")


class _Event:
    """Any tinygrad object in the pickles: only its attributes are read (their classes changed between versions)."""

    def __init__(self, *args, **kwargs):
        self.args = args

    def __setstate__(self, state):
        if isinstance(state, tuple):
            state = {**(state[0] or {}), **(state[1] or {})}
        self.__dict__.update(state if isinstance(state, dict) else {})


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module.startswith("tinygrad"):
            return type(name, (_Event,), {})
        return super().find_class(module, name)


def _text(lib: bytes) -> tuple[int, bytes]:
    """The code object's .text: (its address, its bytes)."""
    co = read_code_object(lib)
    return co.text_address, co.text


def _walk(tg, blob: bytes, base: int, text: bytes, found: Counter) -> None:
    pcs: dict[tuple[int, int], int] = {}
    for p in tg.decode(blob):
        if isinstance(p, tg.CDNA_WAVESTART) and p.cu == 0:
            pcs[(p.simd, p.wave)] = base
        if not (isinstance(p, tg.CDNA_INST) and (p.simd, p.wave) in pcs):
            continue
        pc = pcs[(p.simd, p.wave)]
        while True:
            inst = decode(text, pc - base, arch=ARCH)
            if inst.encoding != "SOPP" or inst.mnemonic.startswith(UNTRACED_SOPP_KEEP):
                break
            pc += inst.size
        found[(text[pc - base:pc - base + inst.size].hex(), inst.mnemonic, p.op.name)] += 1
        x = inst.fields.get("simm16", 0) & 0xFFFF
        pc += inst.size + ((x - 0x10000 if x & 0x8000 else x) * 4 if p.op.name == "JUMP" else 0)
        pcs[(p.simd, p.wave)] = pc
        if inst.mnemonic == "s_endpgm":
            del pcs[(p.simd, p.wave)]


def main(examples: str) -> None:
    from tinygrad.renderer.amd import sqtt as tg  # the decoder is the oracle's: imported only when regenerating

    found: Counter = Counter()
    files = sorted(Path(examples).glob("*.pkl"))
    for f in files:
        events = _Unpickler(f.open("rb")).load()
        prg = next(e for e in events if type(e).__name__ == "ProfileProgramEvent")
        base, text = _text(prg.lib)
        for e in events:
            if type(e).__name__ == "ProfileSQTTEvent" and e.itrace:
                _walk(tg, e.blob, base, text, found)
    rows = [{"bytes": b, "mnemonic": m, "inst_type": t, "tokens": n} for (b, m, t), n in sorted(found.items())]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"source": "tinygrad extra/sqtt/examples/gfx950: " + ", ".join(f.name for f in files),
                               "arch": ARCH, "rows": rows}, indent=1) + "\n")
    print(f"{OUT}: {len(rows)} instructions, {sum(found.values())} INST tokens")


if __name__ == "__main__":
    main(sys.argv[1])
