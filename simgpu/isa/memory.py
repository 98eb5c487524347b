"""The memory instruction family of the gfx11 codec (placeholder until its tables and printer land)."""

from __future__ import annotations

from .errors import DecodeError
from .inst import Family, Inst, register

ENCODINGS = ("DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "EXP", "LDSDIR")


def _decode(enc: str, data: bytes, offset: int) -> Inst:
    word = int.from_bytes(data[offset:offset + 4], "little")
    raise DecodeError(f"{enc} is not decoded yet", offset, word)


def _format(inst: Inst) -> str:
    raise NotImplementedError(inst.encoding)


def _assemble(mnemonic: str, toks: list[str], ctx) -> bytes | None:
    return None


register(Family("memory", ENCODINGS, _decode, _format, _assemble, lambda: set()))
