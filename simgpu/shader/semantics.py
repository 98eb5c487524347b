"""The registry of instruction semantics: a function per mnemonic, `fn(ex, w, inst) -> None | True`.

`ex` is the dispatch in flight (ex.st the wave state, ex.mem the MMU), `w` the indices of the waves
at this PC, `inst` the decoded instruction. A function returns None to fall through to the next
instruction, or True when it has set the PC (branches) or stopped the waves itself.

Mnemonics are looked up without the encoding suffix (_e32, _e64, _dpp, _e64_dpp, _sdwa), so one function
serves every encoding of an instruction; the function reads the operand fields of `inst`.

Per architecture: the table is gfx11's (RDNA3). Another ISA family (gfx12: RDNA4) uses it for every mnemonic it
shares, where the meaning is the same (the helpers that read fields know each family's encodings, e.g. gfx12's
VGLOBAL offsets), and registers its own entries, with `family=`, for the mnemonics it adds and those whose meaning
differs; a family entry takes precedence over the shared one.
"""

from __future__ import annotations

from collections.abc import Callable

from simgpu.isa.arch import get_arch

_TABLE: dict[str, Callable] = {}
_FAMILY_TABLES: dict[str, dict[str, Callable]] = {}  # ISA family ("gfx12") -> its own entries
_ALIASES: dict[str, dict[str, str]] = {}  # ISA family -> {its name for a renamed instruction: the shared name}
_FAMILY_OF: dict[str, str] = {}  # architecture name -> ISA family (simgpu.isa.arch), cached
_SUFFIXES = ("_e64_dpp", "_e32", "_e64", "_dpp", "_sdwa")  # gfx9 has SDWA forms
_loaded = False
UNITS = ("scalar", "vector", "memory", "lds", "matrix")  # the subpackages holding semantics


def sem(*names: str, family: str | None = None):
    """Register the decorated function as the semantics of the given mnemonics (of one ISA family's only, when
    `family` is given)."""
    def deco(fn):
        for n in names:
            register(n, fn, family)
        return fn
    return deco


def register(name: str, fn: Callable, family: str | None = None) -> None:
    """Register `fn` as the semantics of `name` (for table-built semantics): shared by every family, or, with
    `family`, that ISA family's own entry."""
    (_TABLE if family is None else _FAMILY_TABLES.setdefault(family, {}))[name] = fn


def alias(name: str, shared: str, family: str) -> None:
    """Make the shared semantics of `shared` also `family`'s entry for `name`: an instruction that the family
    renamed without changing its meaning (gfx12's s_add_co_i32 is gfx11's s_add_i32). The module defining
    `shared` must be imported first."""
    register(name, _TABLE[shared], family)
    _ALIASES.setdefault(family, {})[name] = shared


def shared_meaning(name: str, family: str) -> str | None:
    """The shared mnemonic whose semantics `name` (without suffix) has in `family`: `name` itself when the family
    has no entry of its own for it, the shared name of a renamed one (`alias`), None when the family's meaning is
    its own. (The JIT translates by the shared name, and leaves a family's own meanings to the interpreter unless
    it has a translator for that family.)"""
    _load()
    own = _FAMILY_TABLES.get(family)
    if own is None or name not in own:
        return name
    return _ALIASES.get(family, {}).get(name)


def shared(name: str) -> Callable:
    """The shared (gfx11) semantic function of `name` (its module must be imported first)."""
    return _TABLE[name]


def family_of(arch: str) -> str:
    """The ISA family of an architecture name ("gfx1201" -> "gfx12")."""
    fam = _FAMILY_OF.get(arch)
    if fam is None:
        fam = _FAMILY_OF[arch] = get_arch(arch).family
    return fam


def base_name(mnemonic: str) -> str:
    """The mnemonic without its encoding suffix."""
    for s in _SUFFIXES:
        if mnemonic.endswith(s):
            return mnemonic[: -len(s)]
    return mnemonic


def lookup(inst) -> Callable | None:
    """The semantic function of a decoded instruction (its architecture's), or None when it is not implemented."""
    _load()
    name = "__vopd__" if inst.encoding == "VOPD" else base_name(inst.mnemonic)
    own = _FAMILY_TABLES.get(family_of(inst.arch))
    if own is not None and name in own:
        return own[name]
    return _TABLE.get(name)


def implemented(family: str | None = None) -> set[str]:
    """Every mnemonic (without suffix) that has semantics: the shared ones, and a family's own with `family`."""
    _load()
    return set(_TABLE) | set(_FAMILY_TABLES.get(family, {}) if family else ())


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
