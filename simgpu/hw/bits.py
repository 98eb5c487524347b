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


class Field:
    """`width` bits at bit `lo` of a word."""

    __slots__ = ("lo", "width", "mask")

    def __init__(self, lo: int, width: int = 1):
        self.lo, self.width = lo, width
        self.mask = (1 << width) - 1  # the field's bits, unshifted

    def __repr__(self) -> str:
        return f"Field({self.lo}, {self.width})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Field) and (self.lo, self.width) == (other.lo, other.width)

    def __hash__(self) -> int:
        return hash((self.lo, self.width))

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
    """The named fields of one word; each is also an attribute (`layout.name`)."""

    def __init__(self, **fields: Field):
        for name in fields:
            if name in ("fields", "pack", "unpack"):
                raise ValueError(f"a field may not be called {name!r}")
        self.fields = fields
        self.__dict__.update(fields)

    def pack(self, **values: int) -> int:
        """The word with the given fields set (each masked to its width); the others 0."""
        word, fields = 0, self.fields
        for name, value in values.items():
            f = fields[name]
            word |= (value & f.mask) << f.lo
        return word

    def unpack(self, word: int) -> dict[str, int]:
        """Every field's value in `word`."""
        return {name: (word >> f.lo) & f.mask for name, f in self.fields.items()}


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
        cls.SIZE = cls._struct.size
        cls._fields = []  # (name, first value, end, tuple?) in the struct's flat value list
        annotations, at = {}, 0
        for name, fmt, *default in cls.LAYOUT:
            n, many = _items(fmt)
            at += n
            if name is None:
                continue
            cls._fields.append((name, at - n, at, many))
            kind = tuple if many else bytes if fmt.endswith("s") else int
            annotations[name] = kind.__name__
            zero = (0,) * n if many else bytes(struct.calcsize("<" + fmt)) if kind is bytes else 0
            setattr(cls, name, default[0] if default else zero)
        cls._count = at
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
        values = [0] * self._count
        for name, a, b, many in self._fields:
            v = getattr(self, name)
            if many:
                v = tuple(v)[:b - a]
                values[a:a + len(v)] = v
            else:
                values[a] = v
        return self._struct.pack(*values)

    @classmethod
    def unpack(cls, data: bytes):
        """The record the first SIZE bytes of `data` hold."""
        vals = cls._struct.unpack_from(data)
        return cls(*[vals[a:b] if many else vals[a] for _, a, b, many in cls._fields])


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
