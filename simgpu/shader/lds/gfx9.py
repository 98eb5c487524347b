"""gfx942 (CDNA3, ISA family gfx9) LDS instructions: the family's own entries of the semantics table.

gfx9's DS instructions mean gfx11's under older names and run the shared semantics through a view (shader.renamed):
ds_read_* / ds_write_* are ds_load_* / ds_store_* (ds_read2 / ds_read2st64 ds_load_2addr / _stride64, the d16 forms
likewise), ds_wrxchg* ds_storexchg*, and ds_cmpst_* gfx11's ds_cmpstore_* with DATA0 and DATA1 exchanged (gfx9
compares with DATA0 and stores DATA1; LLVM selects cmpxchg onto both, swapping the operands before gfx11). With the
acc bit, the data and destination registers are AccVGPRs. ds_permute_b32 / ds_bpermute_b32 index the whole wave64
(lds.ds_lane: as gfx12). M0 does not bound LDS accesses (gfx9 dropped that; only ds_*_addtid reads M0[15:0]).
ds_pk_add_f16 / ds_pk_add_bf16 (and _rtn) run gfx12's definition (lds.gfx12).

Not implemented (illegal_instruction): ds_add_f64 / ds_add_rtn_f64, ds_gws_* (global wave sync).
"""

from __future__ import annotations

from simgpu.shader.lds import ds, ds_lane, gfx12  # noqa: F401 - the shared entries renamed below
from simgpu.shader.renamed import renamed
from simgpu.shader.semantics import register

G = "gfx9"


def gfx11_names() -> dict[str, tuple[str, tuple[str, str] | None]]:
    """gfx9 mnemonic -> (gfx11 mnemonic, fields to exchange)."""
    out: dict[str, tuple[str, tuple[str, str] | None]] = {}
    for k in ("u8", "i8", "u16", "i16", "b32", "b64", "b96", "b128"):
        out[f"ds_read_{k}"] = (f"ds_load_{k}", None)
    for k in ("u8", "i8", "u16"):
        out[f"ds_read_{k}_d16"] = (f"ds_load_{k}_d16", None)
        out[f"ds_read_{k}_d16_hi"] = (f"ds_load_{k}_d16_hi", None)
    for k in ("b8", "b16", "b32", "b64", "b96", "b128"):
        out[f"ds_write_{k}"] = (f"ds_store_{k}", None)
    out["ds_write_b8_d16_hi"] = ("ds_store_b8_d16_hi", None)
    out["ds_write_b16_d16_hi"] = ("ds_store_b16_d16_hi", None)
    for b in ("b32", "b64"):
        out[f"ds_read2_{b}"] = (f"ds_load_2addr_{b}", None)
        out[f"ds_read2st64_{b}"] = (f"ds_load_2addr_stride64_{b}", None)
        out[f"ds_write2_{b}"] = (f"ds_store_2addr_{b}", None)
        out[f"ds_write2st64_{b}"] = (f"ds_store_2addr_stride64_{b}", None)
        out[f"ds_wrxchg_rtn_{b}"] = (f"ds_storexchg_rtn_{b}", None)
        out[f"ds_wrxchg2_rtn_{b}"] = (f"ds_storexchg_2addr_rtn_{b}", None)
        out[f"ds_wrxchg2st64_rtn_{b}"] = (f"ds_storexchg_2addr_stride64_rtn_{b}", None)
    for t in ("b32", "b64", "f32", "f64"):
        out[f"ds_cmpst_{t}"] = (f"ds_cmpstore_{t}", ("data0", "data1"))
        out[f"ds_cmpst_rtn_{t}"] = (f"ds_cmpstore_rtn_{t}", ("data0", "data1"))
    out["ds_read_addtid_b32"] = ("ds_load_addtid_b32", None)
    out["ds_write_addtid_b32"] = ("ds_store_addtid_b32", None)
    return out


for _old, (_new, _swap) in gfx11_names().items():
    register(_old, renamed(_new, _swap), G)
for _name in ("ds_pk_add_f16", "ds_pk_add_rtn_f16", "ds_pk_add_bf16", "ds_pk_add_rtn_bf16"):
    register(_name, ds.atomic, G)  # lds.gfx12 put their ops in SPECIAL_DS_ATOMICS
