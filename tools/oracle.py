"""Batch access to the LLVM 19 tools that serve as the oracle for the codec (gfx1100 unless `target` says
otherwise).

llvm-mc is run once per batch (thousands of instructions), not once per instruction. Used by the
generators in tools/ and by the tests that compare against a live llvm-mc.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess

LLVM_BIN = os.environ.get("SIMGPU_LLVM_BIN", "/usr/lib/llvm-19/bin")
TRIPLE = "amdgcn-amd-amdhsa"
MCPU = "gfx1100"
# Extra subtarget features for every llvm-mc run (features()): "+real-true16" selects LLVM's True16
# syntax and encodings (16-bit VGPR halves as vN.l/vN.h), which the default (fake16) mode rejects.
MATTR: list[str] = []

# llvm-mc's disassembler reads its input as one byte stream (an instruction short of bytes takes the
# next line's), so each probe is followed by three copies of a numbered sentinel, s_nop <index>: a
# later copy re-synchronizes the stream even when the probe swallowed the first ones.
def _sentinel(i: int) -> bytes:
    return (0xBF808000 | (i & 0x7FFF)).to_bytes(4, "little")


_DIAG = re.compile(r"^<stdin>:(\d+):(\d+): (warning|error): (.*)$")
_ENCODING = re.compile(r"^\s*(.*?)\s*; encoding: \[([^\]]*)\]\s*$")


def tool(name: str) -> str | None:
    """Path of an LLVM 19 tool, or None when it is not installed."""
    path = os.path.join(LLVM_BIN, name)
    if os.access(path, os.X_OK):
        return path
    return shutil.which(f"{name}-19")


def _sentinel_index(text: str, data: bytes) -> int | None:
    if not text.startswith("s_nop") or len(data) != 4:
        return None
    word = int.from_bytes(data, "little")
    idx = word & 0x7FFF
    return idx if data == _sentinel(idx) else None


class Crashed(RuntimeError):
    """llvm-mc died of a signal (LLVM 19 does on some gfx942 words: an SDWA select of 7, some MFMA operands)."""


def _run_mc(args: list[str], stdin: str) -> tuple[list[str], dict[int, str]]:
    mc = tool("llvm-mc")
    if mc is None:
        raise RuntimeError("llvm-mc from Debian package llvm-19 is not installed")
    mattr = [f"-mattr={','.join(MATTR)}"] if MATTR else []
    r = subprocess.run([mc, f"-triple={TRIPLE}", f"-mcpu={MCPU}", *mattr, "-show-encoding", *args],
                       input=stdin, capture_output=True, text=True)
    if r.returncode < 0:
        raise Crashed(f"llvm-mc died of signal {-r.returncode}")
    diags: dict[int, str] = {}
    for line in r.stderr.splitlines():
        m = _DIAG.match(line)
        if m and (m.group(3) == "error" or "--disassemble" in args):
            diags.setdefault(int(m.group(1)), m.group(4))
    out = [line for line in r.stdout.splitlines() if "; encoding:" in line]
    return out, diags


def _parse_encoded(line: str) -> tuple[str, bytes]:
    m = _ENCODING.match(line)
    assert m, line
    text = m.group(1).strip()
    data = bytes(int(x, 16) for x in m.group(2).split(",") if x.strip())
    return text, data


def probe_outputs(words: list[bytes]) -> list[tuple[str, bytes] | None]:
    """llvm-mc's (text, re-encoded bytes) for each byte string, or None where llvm-mc warns or does not
    print exactly one instruction for it. The re-encoding may differ from the probe (non-canonical input)."""
    results: list[tuple[str, bytes] | None] = []
    for base in range(0, len(words), 0x8000):
        results += _probe_batch(words[base:base + 0x8000])
    return results


def disassemble(words: list[bytes]) -> list[str | None]:
    """llvm-mc's text for each byte string (one instruction each), or None where it is not exactly one
    valid instruction that llvm-mc encodes back to the same bytes."""
    return [r[0] if r is not None and r[1] == w else None for r, w in zip(probe_outputs(words), words, strict=True)]


def _probe_batch(words: list[bytes]) -> list[tuple[str, bytes] | None]:
    """Probe a batch; where llvm-mc crashes on one of its words, the halves are probed apart (the crashing word
    counts as not decoded)."""
    try:
        return _probe_run(words)
    except Crashed:
        if len(words) == 1:
            return [None]
        half = len(words) // 2
        return _probe_batch(words[:half]) + _probe_batch(words[half:])


def _probe_run(words: list[bytes]) -> list[tuple[str, bytes] | None]:
    lines = []
    for i, w in enumerate(words):
        lines.append(" ".join(f"0x{b:02x}" for b in w))
        lines.append(" ".join(f"0x{b:02x}" for b in _sentinel(i) * 3))
    out, diags = _run_mc(["--disassemble"], "\n".join(lines) + "\n")
    # a line llvm-mc cut short (it happens for some invalid MFMA operands on gfx942) is left out: its probe's
    # group comes out empty, so the probe counts as not decoded
    parsed = [_parse_encoded(line) for line in out if _ENCODING.match(line)]
    groups: dict[int, list[tuple[str, bytes]]] = {}
    group: list[tuple[str, bytes]] = []
    nxt = 0
    for k, (text, data) in enumerate(parsed):
        idx = _sentinel_index(text, data)
        paired = k + 1 < len(parsed) and parsed[k + 1] == (text, data)
        if idx is not None and (idx == nxt or (nxt < idx < len(words) and paired)):
            groups[idx] = group if idx == nxt else []
            nxt, group = idx + 1, []
        elif group or idx is None or idx != nxt - 1:
            group.append((text, data))
    results: list[tuple[str, bytes] | None] = []
    for i in range(len(words)):
        g = groups.get(i, [])
        results.append(g[0] if (2 * i + 1) not in diags and len(g) == 1 else None)
    return results


@contextlib.contextmanager
def target(mcpu: str):
    """Run llvm-mc with -mcpu=`mcpu` inside the block."""
    global MCPU
    saved, MCPU = MCPU, mcpu
    try:
        yield
    finally:
        MCPU = saved


@contextlib.contextmanager
def features(*mattr: str):
    """Run llvm-mc with these subtarget features (e.g. "+real-true16") inside the block."""
    saved = MATTR[:]
    MATTR[:] = list(mattr)
    try:
        yield
    finally:
        MATTR[:] = saved


def assemble(texts: list[str]) -> list[bytes | str]:
    """llvm-mc's bytes for each line of assembly, or the diagnostic text where it is rejected."""
    return [r if isinstance(r, str) else r[1] for r in assemble_printed(texts)]


def assemble_printed(texts: list[str]) -> list[tuple[str, bytes] | str]:
    """llvm-mc's (printed text, bytes) for each line of assembly, or the diagnostic where it is rejected.
    The printed text is LLVM's asm printer's canonical spelling of what it assembled."""
    out, diags = _run_mc([], "\n".join(texts) + "\n")
    results: list[tuple[str, bytes] | str] = []
    pos = 0
    for i, _ in enumerate(texts):
        if (i + 1) in diags:
            results.append(diags[i + 1])
            continue
        results.append(_parse_encoded(out[pos]))
        pos += 1
    return results


def roundtrip(words: list[bytes]) -> list[str | None]:
    """llvm-mc's text for each encoding that it both decodes and re-assembles to the same bytes."""
    texts = disassemble(words)
    idx = [i for i, t in enumerate(texts) if t is not None]
    back = assemble([texts[i] for i in idx]) if idx else []
    result: list[str | None] = [None] * len(words)
    for i, b in zip(idx, back, strict=True):
        if isinstance(b, bytes) and b == words[i]:
            result[i] = texts[i]
    return result
