"""gfx942 (CDNA3, ISA family gfx9) vector memory instructions: the family's own entries of the semantics table.

GLOBAL, FLAT and SCRATCH keep gfx11's meaning under gfx9's names, so each runs the shared semantics through a view
of it as the gfx11 instruction (shader.renamed): loads and stores of ubyte/sbyte/ushort/sshort/short/byte/dword(xN)
are gfx11's u8/i8/u16/i16/b16/b8/b32..b128 (the d16 forms likewise: global_load_short_d16_hi is
global_load_d16_hi_b16), atomics swap/cmpswap/add/sub/smin/umin/smax/umax/and/or/xor/inc/dec (x2: 64-bit) are
gfx11's typed ones; an atomic returns the old value when sc0 (gfx11's glc bit) is set. gfx940's cache-policy bits
(sc0 on loads and stores, sc1, nt) do not change a result: every access reaches memory at its instruction. With the
acc bit, the data or destination registers are AccVGPRs. Offsets: 13 bits, signed for global and scratch, unsigned
for flat (as gfx11's). pk_add_f16 / pk_add_bf16 atomics run gfx12's definition (memory.gfx12), add_f32 gfx11's.
buffer_wbl2, buffer_inv, buffer_wbinvl1(_vol): no-ops (no caches).

MUBUF loads, stores and atomics (buffer_load_dword, buffer_store_short_d16_hi, buffer_atomic_add_x2...) take the same
gfx11 names and run gfx11's MUBUF semantics, which read the V# by gfx9's layout and range-check it by gfx9's rules
in a gfx9 dispatch (memory.mubuf.rsrc: a raw buffer checks bytes, a structured one its index); gfx9's MUBUF has no
TFE bit.

Not implemented (illegal_instruction): the format accesses (buffer_load/store_format_*, MTBUF tbuffer_*: gfx9's
separate num_format / data_format), swizzled buffers (V# SWIZZLE_EN), the f64 atomics
(global/flat_atomic_add/min/max_f64), scratch_load_lds_*. The loads into LDS (global_load_lds_*, MUBUF's lds bit) are
memory.gfx950's.
"""

from __future__ import annotations

from simgpu.shader.memory import atomic, gfx12, mubuf, mubuf_format, vmem  # noqa: F401 - the shared entries
from simgpu.shader.memory.gfx950 import buffer_lds
from simgpu.shader.renamed import renamed
from simgpu.shader.semantics import register

G = "gfx9"
_LOADS = {"ubyte": "u8", "sbyte": "i8", "ushort": "u16", "sshort": "i16", "dword": "b32", "dwordx2": "b64",
          "dwordx3": "b96", "dwordx4": "b128"}
_STORES = {"byte": "b8", "short": "b16", "dword": "b32", "dwordx2": "b64", "dwordx3": "b96", "dwordx4": "b128"}
_D16_LOADS = {"ubyte": "u8", "sbyte": "i8", "short": "b16"}
_ATOMICS = {"swap": "swap_b", "cmpswap": "cmpswap_b", "add": "add_u", "sub": "sub_u", "smin": "min_i", "umin": "min_u",
            "smax": "max_i", "umax": "max_u", "and": "and_b", "or": "or_b", "xor": "xor_b", "inc": "inc_u",
            "dec": "dec_u"}


def gfx11_names(seg: str) -> dict[str, str]:
    """gfx9 mnemonic -> gfx11 mnemonic of one FLAT segment's loads, stores and atomics."""
    out = {}
    for old, new in _LOADS.items():
        out[f"{seg}_load_{old}"] = f"{seg}_load_{new}"
    for old, new in _D16_LOADS.items():
        out[f"{seg}_load_{old}_d16"] = f"{seg}_load_d16_{new}"
        out[f"{seg}_load_{old}_d16_hi"] = f"{seg}_load_d16_hi_{new}"
    for old, new in _STORES.items():
        out[f"{seg}_store_{old}"] = f"{seg}_store_{new}"
    out[f"{seg}_store_byte_d16_hi"] = f"{seg}_store_d16_hi_b8"
    out[f"{seg}_store_short_d16_hi"] = f"{seg}_store_d16_hi_b16"
    if seg != "scratch":
        for old, new in _ATOMICS.items():
            out[f"{seg}_atomic_{old}"] = f"{seg}_atomic_{new}32"
            out[f"{seg}_atomic_{old}_x2"] = f"{seg}_atomic_{new}64"
        for k in ("add_f32", "pk_add_f16", "pk_add_bf16"):
            out[f"{seg}_atomic_{k}"] = f"{seg}_atomic_{k}"
    return out


for _seg in ("global", "flat", "scratch"):
    for _old, _new in gfx11_names(_seg).items():
        # gfx12's pk_add atomics have no shared entry: the shared atomic function reads their op from the mnemonic
        register(_old, renamed(_new, via=f"{_seg}_atomic_add_u32" if "pk_add" in _new else None), G)


def _buffer(name: str, via: str | None):
    """A gfx9 MUBUF instruction run as gfx11's `name`, but for the lds bit (a load into LDS: memory.gfx950)."""
    fn = renamed(name, via=via)

    def run(ex, w, inst):
        if inst.fields.get("lds"):
            if not inst.mnemonic.startswith("buffer_load_"):
                raise ex.illegal_inst(w, inst, f"{inst.mnemonic} lds: only loads go to LDS")
            return buffer_lds(ex, w, inst)
        return fn(ex, w, inst)
    # the sanitizers' footprint is the view's (the lds bit kept: sanitize.footprint gives a load into LDS its own)
    run.gfx11_name, run.gfx11_view = fn.gfx11_name, fn.gfx11_view
    return run


for _old, _new in gfx11_names("buffer").items():
    if _old != "buffer_atomic_pk_add_bf16":  # (global and flat only on gfx942)
        register(_old, _buffer(_new, "buffer_atomic_add_u32" if "pk_add" in _new else None), G)


def _nop(ex, w, inst):
    return None


def _format_not_modelled(ex, w, inst):
    raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: gfx9's buffer formats (num_format, data_format) are not modelled")


for _name in ("buffer_wbl2", "buffer_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol"):
    register(_name, _nop, G)
# the format accesses gfx9 shares a name with gfx11 (the others have no entry: "not implemented")
for _name in (f"{t}buffer_{op}_format_{c}" for t in ("", "t") for op in ("load", "store")
              for c in ("x", "xy", "xyz", "xyzw")):
    register(_name, _format_not_modelled, G)
