"""Decoding of recorded ioctls with runtime.uapi.kfd: names, argument structs, fields."""

from __future__ import annotations

import ctypes

from runtime.uapi import kfd

_STRUCT_OVERRIDES = {"AMDKFD_IOC_AVAILABLE_MEMORY": "kfd_ioctl_get_available_memory_args"}


# amdkfd command number -> name: a client built against an older kfd_ioctl.h encodes a shorter argument size in its
# request (amdkfd copies min(user, kernel) bytes), so a request is known by its type and number.
_BY_NR = {kfd.ioc_nr(req): name for req, name in kfd.COMMANDS.items()}


def _name(request: int) -> str | None:
    name = kfd.COMMANDS.get(request)
    if name is None and kfd.ioc_type(request) == kfd.AMDKFD_IOCTL_BASE:
        name = _BY_NR.get(kfd.ioc_nr(request))
    return name


def ioctl_name(request: int) -> str:
    """AMDKFD_IOC_* name of a request, or its hex number."""
    return _name(request) or f"{request:#x}"


def ioctl_struct(request: int):
    """The ctypes argument struct of a request, or None."""
    name = _name(request)
    if name is None:
        return None
    sname = _STRUCT_OVERRIDES.get(name, "kfd_ioctl_" + name[len("AMDKFD_IOC_"):].lower() + "_args")
    return getattr(kfd, sname, None)


def _flat_fields(cls, base: int = 0, prefix: str = ""):
    for fname, ftype, *_ in cls._fields_:
        off = getattr(cls, fname).offset + base
        if isinstance(ftype, type) and issubclass(ftype, ctypes.Structure | ctypes.Union):
            yield from _flat_fields(ftype, off, f"{prefix}{fname}.")
        else:
            yield f"{prefix}{fname}", off, ctypes.sizeof(ftype)


def fields(request: int, data: bytes) -> dict[str, int]:
    """Decoded fields of an argument buffer ({} when the request is unknown or the buffer short)."""
    cls = ioctl_struct(request)
    if cls is None:
        return {}
    return {n: int.from_bytes(data[o:o + s], "little") for n, o, s in _flat_fields(cls)
            if not n.startswith("pad") and o + s <= len(data)}  # the fields an older, shorter struct has


def field_at(request: int, offset: int) -> str:
    """The name of the struct field holding byte `offset` of the argument buffer."""
    cls = ioctl_struct(request)
    if cls is not None:
        for n, o, s in _flat_fields(cls):
            if o <= offset < o + s:
                return n
    return f"byte {offset}"


def format_fields(d: dict[str, int]) -> str:
    """{a=1, b=0x1000} (hex for large values)."""
    return "{" + ", ".join(f"{k}={v:#x}" if v > 4096 else f"{k}={v}" for k, v in d.items()) + "}"
