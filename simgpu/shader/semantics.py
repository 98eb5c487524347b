"""The registry of instruction semantics: a function per mnemonic, `fn(ex, w, inst) -> None | True`.

`ex` is the dispatch in flight (ex.st the wave state, ex.mem the MMU), `w` the indices of the waves
at this PC, `inst` the decoded instruction. A function returns None to fall through to the next
instruction, or True when it has set the PC (branches) or stopped the waves itself.

Mnemonics are looked up without the encoding suffix (_e32, _e64, _dpp, _e64_dpp), so one function
serves every encoding of an instruction; the function reads the operand fields of `inst`.
"""

from __future__ import annotations

from collections.abc import Callable

_TABLE: dict[str, Callable] = {}
_SUFFIXES = ("_e64_dpp", "_e32", "_e64", "_dpp")
_loaded = False
UNITS = ("scalar", "vector", "memory", "lds", "matrix")  # the subpackages holding semantics


def sem(*names: str):
    """Register the decorated function as the semantics of the given mnemonics."""
    def deco(fn):
        for n in names:
            _TABLE[n] = fn
        return fn
    return deco


def register(name: str, fn: Callable) -> None:
    """Register `fn` as the semantics of `name` (for table-built semantics)."""
    _TABLE[name] = fn


def base_name(mnemonic: str) -> str:
    """The mnemonic without its encoding suffix."""
    for s in _SUFFIXES:
        if mnemonic.endswith(s):
            return mnemonic[: -len(s)]
    return mnemonic


def lookup(inst) -> Callable | None:
    """The semantic function of a decoded instruction, or None when it is not implemented."""
    _load()
    if inst.encoding == "VOPD":
        return _TABLE.get("__vopd__")
    return _TABLE.get(base_name(inst.mnemonic))


def implemented() -> set[str]:
    """Every mnemonic (without suffix) that has semantics."""
    _load()
    return set(_TABLE)


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil

    # Every module of the unit packages registers its mnemonics when imported.
    for unit in UNITS:
        pkg = importlib.import_module(f"{__package__}.{unit}")
        for mod in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{pkg.__name__}.{mod.name}")
