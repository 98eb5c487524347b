"""AMDGPU target IDs and the processor an ELF header's e_flags name (AMDGPUUsage, "Target ID" and "ELF Header").

A code object v4+ target ID is `<arch>-<vendor>-<os>-<environment>-<processor>{:<feature>(+|-)}`: the first four
fields are the target triple, whose environment is often empty ("amdgcn-amd-amdhsa--gfx1100", as clang writes it)
but need not be: newer LLVMs (Triton 3.9's) write "amdgpu11.00-amd-amdhsa-unknown-gfx1100", an `amdgpu` arch with
the processor's version as its sub-architecture and an `unknown` environment. So the ID is split by its grammar,
never by searching for "--". The ELF header says the same thing a second way: EF_AMDGPU_MACH names the processor
and the v4 feature fields the xnack/sramecc settings; a code object whose two statements disagree is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EF_AMDGPU_MACH = 0xFF
EF_AMDGPU_FEATURE_XNACK_V4 = 0x300
EF_AMDGPU_FEATURE_SRAMECC_V4 = 0xC00
# A v4 feature field's values (AMDGPUUsage, EF_AMDGPU_FEATURE_*_V4): unsupported, any, off, on.
_UNSUPPORTED, _ANY, _OFF, _ON = 0, 1, 2, 3
# Processor -> (EF_AMDGPU_MACH value, has an XNACK setting, has an SRAMECC setting); values as llvm-mc 19 writes them
# (gfx950, which LLVM 19 does not know, as llvmlite's LLVM 22 does).
TARGETS = {
    "gfx1030": (0x36, False, False), "gfx90a": (0x3F, True, True), "gfx942": (0x4C, True, True),
    "gfx950": (0x4F, True, True),  # as LLVM 22 (llvmlite) writes it: e_flags 0x54f
    "gfx1100": (0x41, False, False), "gfx1101": (0x46, False, False), "gfx1102": (0x47, False, False),
    "gfx1103": (0x44, False, False), "gfx1150": (0x43, False, False), "gfx1151": (0x4A, False, False),
    "gfx1152": (0x55, False, False), "gfx1200": (0x48, False, False), "gfx1201": (0x4E, False, False),
}
TRIPLE = "amdgcn-amd-amdhsa"
# Target features a target ID may carry, in the order of AMDGPUUsage's table (which is also alphabetic, the
# canonical order), with their e_flags field.
FEATURES = {"sramecc": EF_AMDGPU_FEATURE_SRAMECC_V4, "xnack": EF_AMDGPU_FEATURE_XNACK_V4}

# arch: amdgcn, or amdgpu with an optional sub-architecture ("amdgpu11.00"); vendor amd; os amdhsa (the HSA code
# objects read_code_object accepts); environment any lower-case word, possibly empty; processor gfx<version> or
# gfx<major>[-<minor>]-generic.
_TARGET_ID = re.compile(r"(?P<arch>amdgcn|amdgpu(?P<subarch>[0-9][0-9a-f.]*)?)-(?P<vendor>amd)-(?P<os>amdhsa)"
                        r"-(?P<environment>[a-z0-9_]*)-(?P<processor>gfx[0-9a-f]+(?:-[0-9a-f]+)?(?:-generic)?)"
                        r"(?P<features>(?::[a-z]+[+-])*)")
_PROCESSOR = re.compile(r"(?P<processor>gfx[0-9a-f]+(?:-[0-9a-f]+)?(?:-generic)?)(?P<features>(?::[a-z]+[+-])*)")


class TargetIDError(ValueError):
    """A target ID that does not follow the grammar; the message quotes it (codeobject turns it into
    CodeObjectError)."""


@dataclass(frozen=True)
class TargetID:
    """A parsed target ID. `features` maps each named feature to True (+) or False (-); absent means "any"."""

    arch: str
    vendor: str
    os: str
    environment: str
    processor: str
    features: dict[str, bool]

    def __str__(self) -> str:
        features = "".join(f":{name}{'+' if on else '-'}" for name, on in self.features.items())
        return f"{self.arch}-{self.vendor}-{self.os}-{self.environment}-{self.processor}{features}"


def parse_target_id(text: str) -> TargetID:
    """Parse a full target ID ("amdgpu11.00-amd-amdhsa-unknown-gfx1100", "amdgcn-amd-amdhsa--gfx90a:xnack-")."""
    m = _TARGET_ID.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise TargetIDError(f"target ID {text!r} is not <arch>-amd-amdhsa-<environment>-<processor>[:<feature>(+|-)]"
                            f" (e.g. {TRIPLE}--gfx1100)")
    return TargetID(m["arch"], m["vendor"], m["os"], m["environment"], m["processor"],
                    _features(text, m["processor"], m["features"]))


def parse_processor(text: str) -> TargetID:
    """A processor with optional features ("gfx1100", "gfx90a:sramecc+"), or a full target ID."""
    m = _PROCESSOR.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        return parse_target_id(text)
    arch, vendor, os_, environment = TRIPLE.split("-") + [""]
    return TargetID(arch, vendor, os_, environment, m["processor"], _features(text, m["processor"], m["features"]))


def _features(text: str, processor: str, spec: str) -> dict[str, bool]:
    """The `:name+` / `:name-` settings: known features, each once, and only those the processor has."""
    out: dict[str, bool] = {}
    known = TARGETS.get(processor)
    for item in spec.split(":")[1:]:
        name, sign = item[:-1], item[-1]
        if name not in FEATURES:
            raise TargetIDError(f"target ID {text!r}: unknown target feature {name!r} (known: {', '.join(FEATURES)})")
        if name in out:
            raise TargetIDError(f"target ID {text!r}: feature {name!r} is given twice")
        if known is not None and not _has_feature(processor, name):
            raise TargetIDError(f"target ID {text!r}: feature {name!r} does not apply to {processor}")
        out[name] = sign == "+"
    return out


def _has_feature(processor: str, name: str) -> bool:
    _, has_xnack, has_sramecc = TARGETS[processor]
    return {"xnack": has_xnack, "sramecc": has_sramecc}[name]


def _field(e_flags: int, mask: int) -> int:
    return (e_flags & mask) >> ((mask & -mask).bit_length() - 1)


def processor_from_flags(e_flags: int) -> str | None:
    """The processor EF_AMDGPU_MACH names, or None for a value this table does not know."""
    mach = e_flags & EF_AMDGPU_MACH
    return next((name for name, (m, _, _) in TARGETS.items() if m == mach), None)


def target_from_flags(e_flags: int) -> str:
    """The target ID (e.g. "amdgcn-amd-amdhsa--gfx1100") that e_flags name: for objects without a metadata note."""
    mach = e_flags & EF_AMDGPU_MACH
    processor = processor_from_flags(e_flags) or f"unknown-mach-{mach:#x}"
    features = "".join({_OFF: f":{name}-", _ON: f":{name}+"}.get(_field(e_flags, mask), "")
                       for name, mask in FEATURES.items())
    return f"{TRIPLE}--{processor}{features}"


def e_flags_for(target: str) -> int:
    """e_flags for a processor ("gfx1100", "gfx90a:xnack-") or a full target ID (v4+ feature fields)."""
    tid = parse_processor(target)
    if tid.processor not in TARGETS:
        raise TargetIDError(f"unknown target {tid.processor!r}; known: {sorted(TARGETS)}")
    mach, has_xnack, has_sramecc = TARGETS[tid.processor]
    flags = mach
    for name, mask in FEATURES.items():
        if _has_feature(tid.processor, name):
            setting = {True: _ON, False: _OFF}.get(tid.features.get(name), _ANY)
            flags |= setting << ((mask & -mask).bit_length() - 1)
    return flags


def check_flags(tid: TargetID, e_flags: int, features: bool = True) -> str | None:
    """Why the ELF header's e_flags contradict the target ID, or None when they agree. A processor neither side
    knows cannot be compared (the loader's processor check refuses it later); with `features`, the v4 feature
    fields are compared where the processor has them, a feature absent from the ID meaning "any"."""
    mach = e_flags & EF_AMDGPU_MACH
    from_flags = processor_from_flags(e_flags)
    if tid.processor in TARGETS or from_flags is not None:
        if from_flags != tid.processor:
            named = from_flags or "a processor simgpu does not know"
            return f"e_flags EF_AMDGPU_MACH {mach:#x} names {named}, the target ID {tid} names {tid.processor}"
    if tid.processor not in TARGETS or not features:
        return None
    for name, mask in FEATURES.items():
        if not _has_feature(tid.processor, name):
            continue
        want = {True: _ON, False: _OFF}.get(tid.features.get(name), _ANY)
        got = _field(e_flags, mask)
        if got != want:
            return (f"e_flags {e_flags:#x} set {name} to {_SETTING_NAMES.get(got, got)}, the target ID {tid} "
                    f"to {_SETTING_NAMES[want]}")
    return None


_SETTING_NAMES = {_UNSUPPORTED: "unsupported", _ANY: "any", _OFF: "off", _ON: "on"}
