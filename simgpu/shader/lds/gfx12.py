"""gfx12 (RDNA4) LDS instructions: the family's own entries of the semantics table (semantics.py).

DS keeps its layout (the gds bit is gone); every shared mnemonic runs gfx11's semantics, with one difference the
RDNA4 reference's pseudo-code states: ds_permute_b32 / ds_bpermute_b32 index the whole wave (`% num_lanes`, 64
in wave64), where gfx11's stay within each 32-lane half (lds.ds_lane). New atomics, from the pseudo-code
(memory.atomic_ops): ds_min_num_f32/f64 / ds_max_num_f32/f64 (IEEE 754-2019 minimumNumber / maximumNumber),
ds_cond_sub_u32 (old >= data ? old - data : old), ds_sub_clamp_u32 (old >= data ? old - data : 0),
ds_pk_add_f16 / ds_pk_add_bf16, each with its _rtn form. Not implemented: ds_bvh_stack_* and the graphics-only
ds_param_load / ds_direct_load.
"""

from __future__ import annotations

from simgpu.shader.lds.ds import SPECIAL_DS_ATOMICS, atomic
from simgpu.shader.semantics import register

G = "gfx12"

for _name, _op, _size in (("min_num_f32", "fminnum", 4), ("max_num_f32", "fmaxnum", 4),
                          ("min_num_f64", "fminnum", 8), ("max_num_f64", "fmaxnum", 8),
                          ("cond_sub_u32", "condsub", 4), ("sub_clamp_u32", "csub", 4),
                          ("pk_add_f16", "pkaddf16", 4), ("pk_add_bf16", "pkaddbf16", 4)):
    base, _, kind = _name.rpartition("_")
    for _mn, _rtn in ((f"ds_{_name}", False), (f"ds_{base}_rtn_{kind}", True)):
        SPECIAL_DS_ATOMICS[_mn] = (_op, _size, _rtn)
        register(_mn, atomic, G)
