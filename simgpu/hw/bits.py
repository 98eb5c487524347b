"""Bit fields of hardware words, declared once and used both ways: builders pack values into a word,
parsers read them back out, from the same declaration.

A `Field` is `width` bits at bit `lo` of a word (a packet dword, a register, a descriptor word); a `Layout`
names the fields of one word (`layout.name` is the Field, `pack(name=value, ...)` builds the word).
Values are masked to their field's width on the way in, as the hardware reads only those bits.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """`width` bits at bit `lo` of a word."""

    lo: int
    width: int = 1

    @property
    def mask(self) -> int:
        """The field's bits, unshifted: (1 << width) - 1."""
        return (1 << self.width) - 1

    def get(self, word: int) -> int:
        """The field's value in `word`."""
        return (word >> self.lo) & self.mask

    def put(self, word: int, value: int) -> int:
        """`word` with this field replaced by `value` (masked to the field's width)."""
        return (word & ~(self.mask << self.lo)) | ((int(value) & self.mask) << self.lo)

    def bits(self, value: int = 1) -> int:
        """`value` in place, every other bit 0 (a single-bit field's flag by default)."""
        return (int(value) & self.mask) << self.lo


class Layout:
    """The named fields of one word."""

    def __init__(self, **fields: Field):
        self.fields = fields

    def __getattr__(self, name: str) -> Field:
        try:
            return self.__dict__["fields"][name]
        except KeyError:
            raise AttributeError(f"layout has no field {name!r}") from None

    def pack(self, **values: int) -> int:
        """The word with the given fields set (each masked to its width); the others 0."""
        word = 0
        for name, value in values.items():
            word |= getattr(self, name).bits(value)
        return word

    def unpack(self, word: int) -> dict[str, int]:
        """Every field's value in `word`."""
        return {name: f.get(word) for name, f in self.fields.items()}


def lo32(v: int) -> int:
    """The low dword of a 64-bit value (an address or a count split across two packet dwords)."""
    return v & 0xFFFFFFFF


def hi32(v: int) -> int:
    """The high dword of a 64-bit value."""
    return (v >> 32) & 0xFFFFFFFF


def u64(lo: int, hi: int) -> int:
    """A 64-bit value from its two dwords."""
    return lo | (hi << 32)
