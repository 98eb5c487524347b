"""Decoding of recorded ioctls with runtime.uapi.kfd: names, argument structs, fields."""

from __future__ import annotations

import ctypes

from runtime.uapi import kfd

_STRUCT_OVERRIDES = {"AMDKFD_IOC_AVAILABLE_MEMORY": "kfd_ioctl_get_available_memory_args"}


def ioctl_name(request: int) -> str:
    """AMDKFD_IOC_* name of a request, or its hex number."""
    return kfd.COMMANDS.get(request, f"{request:#x}")


def ioctl_struct(request: int):
    """The ctypes argument struct of a request, or None."""
    name = kfd.COMMANDS.get(request)
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
    if cls is None or len(data) < ctypes.sizeof(cls):
        return {}
    return {n: int.from_bytes(data[o:o + s], "little") for n, o, s in _flat_fields(cls) if not n.startswith("pad")}


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
