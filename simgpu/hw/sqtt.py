"""The gfx11 SQ thread-trace (SQTT) token stream: token layouts, a writer and a reader.

A trace is a stream of 4-bit nibbles (low nibble of each byte first). Each token starts with an encoding in its
low bits that says what it is and how many nibbles it spans; most carry a small `delta` that advances the
trace clock, and timing tokens (TS_DELTA_SHORT, TS_DELTA_OR_MARK) advance it further. RDNA3 streams begin with a
LAYOUT_HEADER of layout 3. The layouts below follow the public decoders' description of the format (tinygrad's
renderer/amd/sqtt.py, rocprofiler's trace decoder); the field positions are facts of the hardware format.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from simgpu.hw.bits import Field, Layout

LAYOUT_RDNA3 = 3


@dataclass(frozen=True)
class Token:
    """One token kind: its encoding (`code` in the low `code_bits` bits), size in nibbles, fields."""

    name: str
    code_bits: int
    code: int
    nibbles: int
    fields: Layout
    delta_bias: int = 0  # added to the delta field (TS_DELTA_SHORT counts from 4)

    @property
    def delta(self) -> Field | None:
        return self.fields.fields.get("delta")


def _t(name: str, code_bits: int, code: int, nibbles: int, bias: int = 0, **fields: Field) -> Token:
    return Token(name, code_bits, code, nibbles, Layout(**fields), bias)


TOKENS = {t.name: t for t in (
    _t("NOP", 4, 0b0000, 1),
    _t("TS_DELTA_SHORT", 4, 0b1000, 2, bias=4, delta=Field(4, 4)),
    _t("TS_DELTA_OR_MARK", 7, 0b0000001, 12, pl=Field(8), rt=Field(9), delta=Field(12, 36)),
    _t("TS_DELTA_S8_W3", 7, 0b0100001, 18, delta=Field(8, 3)),
    _t("TS_DELTA_S5_W3", 5, 0b00110, 13, delta=Field(5, 3)),
    _t("TS_DELTA_S5_W2", 5, 0b11100, 12, delta=Field(5, 2)),
    _t("VALUINST", 3, 0b011, 3, delta=Field(3, 3), flag=Field(6), wave=Field(7, 5)),
    _t("VMEMEXEC", 4, 0b1111, 2, delta=Field(4, 2), src=Field(6, 2)),
    _t("ALUEXEC", 4, 0b1110, 2, delta=Field(4, 2), src=Field(6, 2)),
    _t("IMMEDIATE", 4, 0b1101, 3, delta=Field(4, 3), wave=Field(7, 5)),
    _t("IMMEDIATE_MASK", 5, 0b00100, 6, delta=Field(5, 3), mask=Field(8, 16)),
    _t("WAVERDY", 5, 0b10100, 6, delta=Field(5, 3), mask=Field(8, 16)),
    _t("WAVEEND", 5, 0b10101, 5, delta=Field(5, 3), sa=Field(8), simd=Field(9, 2), wgp=Field(11, 3),
       wave=Field(15, 5)),
    _t("WAVESTART", 5, 0b01100, 8, delta=Field(5, 2), sa=Field(7), simd=Field(8, 2), wgp=Field(10, 3),
       wave=Field(13, 5), id7=Field(18, 14)),
    _t("WAVEALLOC", 5, 0b00101, 5, delta=Field(5, 3)),
    _t("PERF", 5, 0b10110, 7, delta=Field(5, 3), arg=Field(8, 20)),
    _t("TS_WAVE_STATE", 7, 0b1010001, 6, delta=Field(7, 9), coarse=Field(16, 8)),
    _t("EVENT", 8, 0b01100001, 6, delta=Field(8, 3), event=Field(11, 13)),
    _t("EVENT_BIG", 8, 0b11100001, 8, delta=Field(8, 3), event=Field(11, 21)),
    _t("REG", 4, 0b1001, 16, delta=Field(4, 3), slot=Field(7, 3), hi_byte=Field(8, 8), subop=Field(16, 16),
       val32=Field(32, 32)),
    _t("SNAPSHOT", 7, 0b1110001, 16, delta=Field(7, 3), snap=Field(10, 54)),
    _t("LAYOUT_HEADER", 7, 0b0010001, 16, layout=Field(7, 6), simd=Field(13, 2), group=Field(15, 3),
       sel_a=Field(28, 4), sel_b=Field(33, 4), flag4=Field(59)),
    _t("INST", 3, 0b010, 5, flag1=Field(3), delta=Field(4, 3), flag2=Field(7), wave=Field(8, 5), op=Field(13, 7)),
    _t("UTILCTR", 7, 0b0110001, 12, delta=Field(7, 2), ctr=Field(9, 39)),
)}


class InstOp(IntEnum):
    """INST token `op` values of RDNA3 (the instruction's kind, on the traced SIMD)."""

    SALU = 0x00
    SMEM_RD = 0x01
    JUMP = 0x03  # branch taken
    JUMP_NO = 0x04  # branch not taken
    CALL = 0x05
    MESSAGE = 0x09
    VALUT_4 = 0x0B  # transcendental
    VALUB_2 = 0x0D  # 64-bit shift
    VALUB_4 = 0x0E  # 64-bit multiply-add
    VALUB_16 = 0x0F  # 64-bit float
    BARRIER = 0x13
    FLAT_RD_2 = 0x1C
    FLAT_WR_3 = 0x1D
    SGMEM_RD_1 = 0x21  # global load, SGPR base
    SGMEM_RD_2 = 0x22  # global load, VGPR address
    SGMEM_WR_2 = 0x24
    SGMEM_WR_3 = 0x25
    LDS_RD = 0x29
    LDS_WR_2 = 0x2B
    SALU_WR_EXEC = 0x72  # s_*_saveexec
    VALU1_WR_EXEC = 0x73  # v_cmpx_*


# Tokens by their first byte: the most specific encoding that matches (the decoder's state table).
_BY_BYTE: list[Token] = []
for _b in range(256):
    _match = [t for t in TOKENS.values() if (_b & ((1 << t.code_bits) - 1)) == t.code and t.name != "NOP"]
    _BY_BYTE.append(max(_match, key=lambda t: t.code_bits) if _match else TOKENS["NOP"])
OR_MARK_MAX = (1 << 36) - 1


class TraceWriter:
    """Packs tokens into a nibble stream, inserting timing tokens so each token's time is exact.

    Nibbles collect in an integer (`acc`, `acc_nibbles` of them, first nibble lowest) that moves into `data`
    in whole bytes once it holds a few tokens: a token costs a shift and an or, not a bytes conversion."""

    FLUSH_NIBBLES = 64

    def __init__(self, now: int = 0):
        self.data = bytearray()
        self.acc = 0  # nibbles not yet in `data`
        self.acc_nibbles = 0
        self.now = now  # the trace clock after the last token
        self.tokens = 0

    def nibbles(self) -> int:
        """Nibbles written so far."""
        return 2 * len(self.data) + self.acc_nibbles

    def _put(self, value: int, n: int) -> None:
        self.acc |= value << (4 * self.acc_nibbles)
        self.acc_nibbles += n
        if self.acc_nibbles >= self.FLUSH_NIBBLES:
            self._drain()

    def _drain(self) -> None:
        """Move the whole bytes of `acc` into `data` (an odd nibble stays behind)."""
        whole = self.acc_nibbles // 2
        if whole:
            self.data += (self.acc & ((1 << (8 * whole)) - 1)).to_bytes(whole, "little")
            self.acc >>= 8 * whole
            self.acc_nibbles -= 2 * whole

    def emit(self, name: str, time: int | None = None, **fields: int) -> None:
        """Append a token at trace time `time` (None: the current time)."""
        tok = TOKENS[name]
        gap = 0 if time is None else max(0, time - self.now)
        delta = tok.delta
        small = 0 if delta is None else delta.mask
        if gap > small:
            cover = gap if 4 <= gap <= 19 else gap - small
            self._advance(cover)
            gap -= cover
        if delta is not None:
            fields["delta"] = gap
        self._put(tok.code | tok.fields.pack(**fields), tok.nibbles)
        self.now = self.now if time is None else max(time, self.now)
        self.tokens += 1

    def emit_static(self, static: int, nibbles: int, delta: Field, time: int) -> None:
        """Append a token whose fields other than `delta` are already packed into `static` (with its code), at
        trace time `time`: what `emit` does, for the per-instruction tokens of a traced wave."""
        gap = time - self.now
        if gap > 0:
            if gap > delta.mask:
                cover = gap if 4 <= gap <= 19 else gap - delta.mask
                self._advance(cover)
                gap -= cover
            static |= gap << delta.lo
            self.now = time
        self._put(static, nibbles)
        self.tokens += 1

    def _advance(self, cycles: int) -> None:
        """Timing tokens that move the trace clock by exactly `cycles`."""
        while cycles:
            if 4 <= cycles <= 19:
                self._put(TOKENS["TS_DELTA_SHORT"].code | Field(4, 4).bits(cycles - 4), 2)
                return
            step = min(cycles, OR_MARK_MAX)
            self._put(TOKENS["TS_DELTA_OR_MARK"].code | Field(12, 36).bits(step), 12)
            cycles -= step

    def pad(self, align_bytes: int, lookahead: int = 8) -> None:
        """NOP tokens to the next multiple of `align_bytes`, at least `lookahead` bytes of them (a reader
        looks 16 nibbles ahead of a token before decoding it)."""
        if self.acc_nibbles & 1:
            self._put(0, 1)
        self._drain()
        target = len(self.data) + lookahead
        target += -target % align_bytes
        self.data += bytes(target - len(self.data))


@dataclass
class Packet:
    """A decoded token: its kind, the trace time after its delta, its fields."""

    name: str
    time: int
    fields: dict


def decode(data: bytes) -> list[Packet]:
    """Every token of a trace stream (NOPs left out). Raises ValueError on a stream that is not RDNA3's."""
    out: list[Packet] = []
    total = 2 * len(data)
    pos, now = 0, 0
    while pos + 2 <= total:
        first = _nibbles(data, pos, 2)
        tok = _BY_BYTE[first]
        if pos + tok.nibbles > total:
            break
        value = _nibbles(data, pos, tok.nibbles)
        pos += tok.nibbles
        if tok.name == "NOP":
            continue
        fields = tok.fields.unpack(value)
        if tok.name == "TS_DELTA_OR_MARK" and fields["rt"] and not fields["pl"]:
            fields["delta"] = 0  # a marker, not a time step
        now += fields.get("delta", 0) + (tok.delta_bias if "delta" in fields else 0)
        if not out and (tok.name != "LAYOUT_HEADER" or fields["layout"] != LAYOUT_RDNA3):
            raise ValueError(f"not an RDNA3 thread trace: it starts with {tok.name}, not LAYOUT_HEADER layout 3")
        out.append(Packet(tok.name, now, fields))
    return out


def _nibbles(data: bytes, pos: int, n: int) -> int:
    """`n` nibbles of the stream starting at nibble `pos`, as an integer (first nibble lowest)."""
    first, last = pos // 2, (pos + n + 1) // 2
    value = int.from_bytes(data[first:last], "little")
    return (value >> (4 * (pos & 1))) & ((1 << (4 * n)) - 1)
