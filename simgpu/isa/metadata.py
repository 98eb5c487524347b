"""The schema of code-object metadata (AMDGPUUsage, "Code Object V3 to V6 Metadata"): what NT_AMDGPU_METADATA's
msgpack map must hold before a loader believes it.

Checked once, where a code object enters (simgpu.isa.codeobject reads the note): the keys AMDGPUUsage marks
required, the type of every key this project or a launcher reads, and the ranges the hardware and the kernarg
layout need (each argument inside .kernarg_segment_size, power-of-two alignments, wave32/wave64, at most 1024
work-items). A violation is a CodeObjectError naming the kernel and the key, so nothing downstream (the kernarg
packer, the launch) meets a missing or absurd value. Keys the schema does not know are kept unchecked: newer
LLVMs add optional ones.
"""

from __future__ import annotations

from collections.abc import Callable

from simgpu.isa.errors import CodeObjectError

U32 = (1 << 32) - 1
MAX_WORKGROUP_ITEMS = 1024
MAX_SGPRS, MAX_VGPRS = 128, 512  # per wave: generous bounds above gfx9-gfx12 (106 SGPRs, 256 (512 with AGPRs))

# ".value_kind" of explicit arguments; hidden ones are "hidden_*" (a launcher fills those it knows, zeroes others).
EXPLICIT_KINDS = frozenset({"by_value", "global_buffer", "dynamic_shared_pointer", "sampler", "image", "pipe",
                            "queue"})
ADDRESS_SPACES = frozenset({"private", "global", "constant", "local", "generic", "region"})
ACCESS = frozenset({"read_only", "write_only", "read_write"})


def _int(lo: int, hi: int) -> Callable[[object], str | None]:
    def check(v: object) -> str | None:
        if not isinstance(v, int) or isinstance(v, bool):
            return f"is {_kind(v)}, not an integer"
        return None if lo <= v <= hi else f"is {v}, outside {lo}..{hi}"
    return check


def _pow2(hi: int) -> Callable[[object], str | None]:
    within = _int(1, hi)

    def check(v: object) -> str | None:
        return within(v) or (None if v & (v - 1) == 0 else f"is {v}, not a power of two")
    return check


def _one_of(values) -> Callable[[object], str | None]:
    def check(v: object) -> str | None:
        known = isinstance(v, str | int) and not isinstance(v, bool) and v in values
        return None if known else f"is {v!r}, not one of {', '.join(map(repr, sorted(values)))}"
    return check


def _type(t: type) -> Callable[[object], str | None]:
    def check(v: object) -> str | None:
        return None if isinstance(v, t) and not (t is int and isinstance(v, bool)) else \
            f"is {_kind(v)}, not a {t.__name__}"
    return check


def _ints(n: int, lo: int, hi: int) -> Callable[[object], str | None]:
    each = _int(lo, hi)

    def check(v: object) -> str | None:
        if not isinstance(v, list) or len(v) != n:
            return f"is {_kind(v)}, not a sequence of {n} integers"
        return next((f"[{i}] {why}" for i, x in enumerate(v) if (why := each(x))), None)
    return check


def _value_kind(v: object) -> str | None:
    if not isinstance(v, str):
        return f"is {_kind(v)}, not a string"
    return None if v in EXPLICIT_KINDS or v.startswith("hidden_") else \
        f"is {v!r}, not a value kind ({', '.join(sorted(EXPLICIT_KINDS))} or hidden_*)"


# key -> (required, check). AMDGPUUsage "AMDHSA Code Object V3 Kernel Metadata Map" (V4-V6 add no required key).
KERNEL_KEYS: dict[str, tuple[bool, Callable[[object], str | None]]] = {
    ".name": (True, _type(str)),
    ".symbol": (True, _type(str)),
    ".kernarg_segment_size": (True, _int(0, U32)),
    ".group_segment_fixed_size": (True, _int(0, U32)),
    ".private_segment_fixed_size": (True, _int(0, U32)),
    ".kernarg_segment_align": (True, _pow2(1 << 16)),
    ".wavefront_size": (True, _one_of({32, 64})),
    ".sgpr_count": (True, _int(0, MAX_SGPRS)),
    ".vgpr_count": (True, _int(0, MAX_VGPRS)),
    ".max_flat_workgroup_size": (True, _int(1, MAX_WORKGROUP_ITEMS)),
    ".args": (False, _type(list)),
    ".agpr_count": (False, _int(0, MAX_VGPRS)),
    ".sgpr_spill_count": (False, _int(0, U32)),
    ".vgpr_spill_count": (False, _int(0, U32)),
    ".language": (False, _type(str)),
    ".language_version": (False, _ints(2, 0, U32)),
    ".reqd_workgroup_size": (False, _ints(3, 1, MAX_WORKGROUP_ITEMS)),
    ".workgroup_size_hint": (False, _ints(3, 1, MAX_WORKGROUP_ITEMS)),
    ".vec_type_hint": (False, _type(str)),
    ".device_enqueue_symbol": (False, _type(str)),
    ".kind": (False, _one_of({"normal", "init", "fini"})),
    ".uses_dynamic_stack": (False, _type(bool)),
    ".workgroup_processor_mode": (False, _int(0, 1)),
    ".uniform_work_group_size": (False, _int(0, 1)),
}
# AMDGPUUsage "AMDHSA Code Object V3 Kernel Argument Metadata Map".
ARG_KEYS: dict[str, tuple[bool, Callable[[object], str | None]]] = {
    ".offset": (True, _int(0, U32)),
    ".size": (True, _int(0, U32)),
    ".value_kind": (True, _value_kind),
    ".name": (False, _type(str)),
    ".type_name": (False, _type(str)),
    ".value_type": (False, _type(str)),
    ".pointee_align": (False, _pow2(1 << 16)),
    ".address_space": (False, _one_of(ADDRESS_SPACES)),
    ".access": (False, _one_of(ACCESS)),
    ".actual_access": (False, _one_of(ACCESS)),
    ".is_const": (False, _type(bool)),
    ".is_restrict": (False, _type(bool)),
    ".is_volatile": (False, _type(bool)),
    ".is_pipe": (False, _type(bool)),
}


def check_metadata(meta: object, where: str) -> dict:
    """`meta` (the decoded note) if it follows the schema; else CodeObjectError naming `where`, the kernel and key."""
    if not isinstance(meta, dict):
        raise CodeObjectError(f"{where}: metadata is {_kind(meta)}, not a map")
    version = meta.get("amdhsa.version")
    if version is not None and (why := _ints(2, 0, U32)(version)):
        raise CodeObjectError(f"{where}: amdhsa.version {why}")
    if "amdhsa.target" in meta and not isinstance(meta["amdhsa.target"], str):
        raise CodeObjectError(f"{where}: amdhsa.target is {_kind(meta['amdhsa.target'])}, not a string")
    kernels = meta.get("amdhsa.kernels", [])
    if not isinstance(kernels, list):
        raise CodeObjectError(f"{where}: amdhsa.kernels is {_kind(kernels)}, not a sequence")
    for i, k in enumerate(kernels):
        _check_kernel(k, f"{where}: amdhsa.kernels[{i}]")
    return meta


def _check_kernel(k: object, where: str) -> None:
    if not isinstance(k, dict):
        raise CodeObjectError(f"{where} is {_kind(k)}, not a map")
    name = k.get(".name")
    if isinstance(name, str):
        where = f"{where}: kernel {name!r}"
    _check_keys(k, KERNEL_KEYS, where)
    size = k[".kernarg_segment_size"]
    for i, arg in enumerate(k.get(".args", [])):
        if not isinstance(arg, dict):
            raise CodeObjectError(f"{where}: .args[{i}] is {_kind(arg)}, not a map")
        label = f"{where}: .args[{i}]" + (f" ({arg['.name']})" if isinstance(arg.get(".name"), str) else "")
        _check_keys(arg, ARG_KEYS, label)
        if arg[".value_kind"] == "by_value" and arg[".size"] == 0:  # no value fits (it was a ValueError at launch)
            raise CodeObjectError(f"{label}: .size 0: a by-value argument holds at least one byte")
        if arg[".offset"] + arg[".size"] > size:
            raise CodeObjectError(f"{label}: .offset {arg['.offset']} + .size {arg['.size']} lies past the "
                                  f"{size}-byte kernarg segment (.kernarg_segment_size)")


def _check_keys(m: dict, schema: dict, where: str) -> None:
    for key, (required, check) in schema.items():
        if key not in m:
            if required:
                raise CodeObjectError(f"{where}: required key {key} is missing")
            continue
        why = check(m[key])
        if why:
            raise CodeObjectError(f"{where}: {key} {why}")


def _kind(v: object) -> str:
    return "missing" if v is None else f"a {type(v).__name__}"
