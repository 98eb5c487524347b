"""gfx12 (RDNA4) vector memory instructions: the family's own entries of the semantics table (semantics.py).

gfx12's VGLOBAL, VFLAT, VSCRATCH and VBUFFER encodings run gfx11's global/flat/scratch/buffer semantics (the
helpers read either encoding: vmem._offset, mubuf.rsrc_of / inst_offset, atomic.returns). What gfx12 adds or
renames, from the RDNA4 ISA reference's pseudo-code:

- global_inv, global_wb, global_wbinv (cache invalidate / write-back at a scope): no-ops, the simulator has no
  caches (every access reaches memory at its instruction).
- Atomics (global, flat, buffer): min_num_f32 / max_num_f32 (IEEE 754-2019 minimumNumber / maximumNumber;
  gfx11's min_f32 / max_f32 are 2008's minNum / maxNum), cond_sub_u32 (old >= data ? old - data : old),
  sub_clamp_u32 (gfx11's csub_u32: old >= data ? old - data : 0), pk_add_f16 / pk_add_bf16
  (memory.atomic_ops).
- Buffer format loads and stores (buffer_*_format_*, tbuffer_*): gfx11's (mubuf_format; gfx12 keeps the unified
  format ids and the V#'s FORMAT / DST_SEL fields).
- global_load_tr_b64 / global_load_tr_b128 (transposing loads): memory.gfx12_tr (wave32).
- Not implemented: global_atomic_ordered_add_b64 (GS ordered-count), *_load_block / *_store_block, image atomics.
"""

from __future__ import annotations

from simgpu.shader.memory import atomic, mubuf, vmem  # noqa: F401 - the shared entries aliased below
from simgpu.shader.memory.atomic import SPECIAL_ATOMICS
from simgpu.shader.semantics import alias, register

G = "gfx12"


def _nop(ex, w, inst):
    return None


for _name in ("global_inv", "global_wb", "global_wbinv"):
    register(_name, _nop, G)

_NEW_ATOMICS = {"min_num_f32": ("fminnum", 4), "max_num_f32": ("fmaxnum", 4), "cond_sub_u32": ("condsub", 4),
                "sub_clamp_u32": ("csub", 4), "pk_add_f16": ("pkaddf16", 4), "pk_add_bf16": ("pkaddbf16", 4)}
SPECIAL_ATOMICS.update(_NEW_ATOMICS)
for _suffix in _NEW_ATOMICS:
    for _seg, _shared in (("global", "global_atomic_add_u32"), ("flat", "flat_atomic_add_u32"),
                          ("buffer", "buffer_atomic_add_u32")):
        alias(f"{_seg}_atomic_{_suffix}", _shared, G)
