"""The codec's errors: each names where the problem is and what was expected."""

from __future__ import annotations


class DecodeError(ValueError):
    """Bytes that are not a gfx1100 instruction: carries the byte offset and the offending dword."""

    def __init__(self, message: str, offset: int = 0, word: int | None = None):
        self.offset, self.word = offset, word
        where = f"at byte offset {offset:#x}" + (f" (dword {word:#010x})" if word is not None else "")
        super().__init__(f"{message} {where}")


class AsmError(ValueError):
    """Assembly text that cannot be assembled: line, column, the token and what was expected."""

    def __init__(self, message: str, line: int = 0, column: int = 0, token: str = ""):
        self.line, self.column, self.token, self.expected = line, column, token, message
        super().__init__(f"line {line}, column {column}: {message}" + (f" (got {token!r})" if token else ""))


class CodeObjectError(ValueError):
    """A malformed or unsupported code object; the message says what and where."""
