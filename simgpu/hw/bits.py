"""Bit fields of hardware words, declared once and used both ways: builders pack values into a word,
parsers read them back out, from the same declaration.

A `Field` is `width` bits at bit `lo` of a word (a packet dword, a register, a descriptor word); a `Layout`
names the fields of one word (`layout.name` is the Field, `pack(name=value, ...)` builds the word).
Values are masked to their field's width on the way in, as the hardware reads only those bits. A `Record`
is a fixed-size structure of such words in memory (an AQL packet, amd_signal_t, the kernel descriptor).

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import ClassVar


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


class Record:
    """Base of a fixed-size little-endian structure in memory (an AQL packet, amd_signal_t, the kernel descriptor).

    `LAYOUT` lists its parts in memory order as (field name, struct format[, default]); a subclass becomes a
    dataclass with those fields, in that order. A format with a count ("3H") makes a tuple field (packed with
    zeros after the values given), "Ns" a bytes field; a part named None is reserved: zeros when packed,
    dropped when unpacked. Fields default to zeros."""

    LAYOUT: ClassVar[tuple[tuple, ...]] = ()
    SIZE: ClassVar[int] = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._struct = struct.Struct("<" + "".join(part[1] for part in cls.LAYOUT))
        cls._parts = tuple((part[0], *_items(part[1])) for part in cls.LAYOUT)  # (name, values, tuple?)
        cls.SIZE = cls._struct.size
        annotations = {}
        for name, fmt, *default in cls.LAYOUT:
            if name is None:
                continue
            n, many = _items(fmt)
            kind = tuple if many else bytes if fmt.endswith("s") else int
            annotations[name] = kind.__name__
            zero = (0,) * n if many else bytes(struct.calcsize("<" + fmt)) if kind is bytes else 0
            setattr(cls, name, default[0] if default else zero)
        cls.__annotations__ = annotations
        dataclass(cls)

    @classmethod
    def offset(cls, name: str) -> int:
        """Byte offset of a field in the structure."""
        at = 0
        for part in cls.LAYOUT:
            if part[0] == name:
                return at
            at += struct.calcsize("<" + part[1])
        raise KeyError(f"{cls.__name__} has no field {name!r}")

    def pack(self) -> bytes:
        """The structure's bytes."""
        values: list = []
        for name, n, many in self._parts:
            if name is None:
                values += [0] * n
            elif many:
                given = tuple(getattr(self, name))[:n]
                values += [*given, *(0,) * (n - len(given))]
            else:
                values.append(getattr(self, name))
        return self._struct.pack(*values)

    @classmethod
    def unpack(cls, data: bytes):
        """The record the first SIZE bytes of `data` hold."""
        items, fields = iter(cls._struct.unpack(bytes(data[:cls.SIZE]))), {}
        for name, n, many in cls._parts:
            values = tuple(next(items) for _ in range(n))
            if name is not None:
                fields[name] = values if many else values[0]
        return cls(**fields)


def _items(fmt: str) -> tuple[int, bool]:
    """(how many values a struct format part holds, whether they form a tuple)."""
    n = len(struct.unpack("<" + fmt, bytes(struct.calcsize("<" + fmt))))
    return n, fmt[:1].isdigit() and fmt[-1] not in "sx"


def lo32(v: int) -> int:
    """The low dword of a 64-bit value (an address or a count split across two packet dwords)."""
    return v & 0xFFFFFFFF


def hi32(v: int) -> int:
    """The high dword of a 64-bit value."""
    return (v >> 32) & 0xFFFFFFFF


def u64(lo: int, hi: int) -> int:
    """A 64-bit value from its two dwords."""
    return lo | (hi << 32)
