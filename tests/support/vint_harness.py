"""Shared harness of the VALU integer tests: run one instruction over many lanes on the Testbed.

Each lane loads 64-bit words a, b, c (into v[10:11], v[12:13], v[14:15]) and an initial destination d
(into v[20:21], v[22:23]), runs the instruction text, then stores v[20:23] and a lane bit of VCC
(v24 = VCC ? 1 : 0) and EXEC (v25). Operand values are drawn by hypothesis with special values mixed in."""

from __future__ import annotations

import numpy as np
from hypothesis import Phase, settings
from hypothesis import strategies as st

BLOCK = 256

SPECIAL32 = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFF, 0x10000, 0x7FFF,
             0x8000, 0xFF, 0x80, 0x7F, 0x800000, 0xFFFFFF, 0x1000000, 31, 32, 33, 63, 64, 16, 15]
SPECIAL64 = [0, 1, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFF, 0x100000000]


def _words_from_bytes(blob: bytes, bits: int) -> np.ndarray:
    """Lane words from ten bytes each: byte 0 picks the kind (mod 3) -- a special value (byte 1 picks it), random
    `bits` bits (bytes 2-9), or a SPECIAL32 value repeated in both halves of a 64-bit word -- as the one_of below."""
    b = np.frombuffer(blob, np.uint8).reshape(-1, 10)
    special = np.array(SPECIAL32 + SPECIAL64 if bits == 64 else SPECIAL32, np.uint64)
    s32 = np.array(SPECIAL32, np.uint64)
    random = b[:, 2:].copy().view("<u8")[:, 0] & np.uint64((1 << bits) - 1)
    pair = s32[b[:, 1] % len(s32)]
    pair = pair | (pair << np.uint64(32)) if bits == 64 else pair
    kind = b[:, 0] % 3
    return np.where(kind == 0, special[b[:, 1] % len(special)], np.where(kind == 1, random, pair))


def words(n: int, bits: int = 64):
    """A strategy of n lane words (uint64 arrays) mixing special values and random bits: one third each special
    values, random bits and repeated 32-bit specials, as one_of(sampled_from(special), integers(0, 2**bits - 1),
    sampled_from(SPECIAL32).map(repeat)) would draw them, but from one byte string. Drawing the words one by one was
    most of the VALU integer tests' time (hypothesis's bookkeeping per draw: 64 words per operand, five operands)."""
    return st.binary(min_size=10 * n, max_size=10 * n).map(lambda blob: _words_from_bytes(blob, bits))


def kernel_text(inst: str, pre: str = "") -> str:
    return f"""
        s_load_b256 s[4:11], s[0:1], 0x0
        s_load_b64 s[12:13], s[0:1], 0x20
        s_waitcnt lgkmcnt(0)
        v_lshl_add_u32 v1, s2, 8, v0
        v_lshlrev_b32 v2, 3, v1
        v_lshlrev_b32 v3, 4, v1
        v_lshlrev_b32 v4, 5, v1
        global_load_b64 v[10:11], v2, s[6:7]
        global_load_b64 v[12:13], v2, s[8:9]
        global_load_b64 v[14:15], v2, s[10:11]
        global_load_b128 v[20:23], v3, s[12:13]
        s_waitcnt vmcnt(0)
        {pre}
        {inst}
        s_mov_b32 exec_lo, -1
        v_cndmask_b32_e64 v24, 0, 1, vcc_lo
        global_store_b128 v4, v[20:23], s[4:5]
        global_store_b32 v4, v24, s[4:5] offset:16
        s_endpgm
    """


class Runner:
    """Runs instruction texts on a Testbed, one launch per call."""

    def __init__(self, tb):
        self.tb = tb
        self.cache = {}

    def run(self, inst: str, a, b=None, c=None, d=None, pre: str = "", vcc: int | None = None,
            block: int = BLOCK):
        """Per lane: (dst dwords [n, 4] uint32, vcc bit [n] bool)."""
        n = len(a)
        assert n % block == 0
        z = np.zeros(n, np.uint64)
        b = z if b is None else b
        c = z if c is None else c
        d = np.zeros((n, 2), np.uint64) if d is None else d
        if vcc is not None:
            pre = f"s_mov_b32 vcc_lo, {vcc:#x}\n" + pre
        key = (inst, pre)
        if key not in self.cache:
            self.cache[key] = self.tb.load_asm(kernel_text(inst, pre), args=6)
        k = self.cache[key]
        bufs = [self.tb.upload(np.ascontiguousarray(x, np.uint64)) for x in (a, b, c, d)]
        out = self.tb.alloc(32 * n)
        self.tb.launch(k, [out, *bufs, 0], (n // block,), (block,))
        raw = self.tb.download(out, np.uint32, 8 * n).reshape(n, 8)
        return raw[:, :4], raw[:, 4].astype(bool)


M16, M32, M64 = 0xFFFF, 0xFFFFFFFF, (1 << 64) - 1
VCC_PATTERN = 0x5A5A33CC  # the VCC/carry-in pattern of `check`: lane l reads bit l % 32


def sx(v: int, bits: int) -> int:
    """v's low `bits` bits as a signed integer."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def lanes_input(data, n: int, bits: int, rng_seed: int) -> np.ndarray:
    """n lane words: a hypothesis-drawn head (special values) then seeded random bits."""
    head = data.draw(words(min(n, 64), bits))
    rng = np.random.default_rng(rng_seed)
    tail = rng.integers(0, 1 << 63, n - len(head), dtype=np.uint64) * np.uint64(2) + \
        rng.integers(0, 2, n - len(head), dtype=np.uint64)
    if bits < 64:
        tail &= np.uint64((1 << bits) - 1)
    return np.concatenate([head, tail])


def check(runner, data, inst: str, ref, bits=(32, 32, 32), dwords: int = 1, carry: bool = False,
          pre: str = "", n: int = 2 * BLOCK, block: int = BLOCK) -> None:
    """Run `inst` over n lanes (workgroups of `block`) and compare with ref(a, b, c, d, vcc_in, lane) ->
    (dwords tuple, carry). n = block = 32 is one wave: the engine's single-wave paths."""
    seed = data.draw(st.integers(0, 2**32 - 1))
    a, b, c = (lanes_input(data, n, bt, seed + i) for i, bt in enumerate(bits))
    d = np.stack([lanes_input(data, n, 64, seed + 7), lanes_input(data, n, 64, seed + 8)], axis=1)
    out, vcc = runner.run(inst, a, b, c, d, pre=pre, vcc=VCC_PATTERN, block=block)
    for lane in range(n):
        dv = int(d[lane, 0]) | (int(d[lane, 1]) << 64)
        cin = (VCC_PATTERN >> (lane % 32)) & 1
        want, wcarry = ref(int(a[lane]), int(b[lane]), int(c[lane]), dv, cin, lane % 32)
        got = tuple(int(x) for x in out[lane, :dwords])
        assert got == tuple(want), (inst, lane, hex(int(a[lane])), hex(int(b[lane])), hex(int(c[lane])),
                                    [hex(x) for x in got], [hex(x) for x in want])
        if carry:
            assert bool(vcc[lane]) == bool(wcarry), (inst, lane, hex(int(a[lane])), hex(int(b[lane])), "carry")


# Few examples (each runs 512 lanes), no shrinking (a failure report names the lane and operands).
SETTINGS = settings(max_examples=2, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])
