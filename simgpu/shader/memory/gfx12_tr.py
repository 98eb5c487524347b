"""gfx12 (RDNA4) transposing loads: global_load_tr_b64 (8-bit elements) and global_load_tr_b128 (16-bit elements),
wave32.

Each lane reads at its address what global_load_b64 / global_load_b128 would (8 elements: one row of an 8x8 block),
and each group of 8 consecutive lanes then exchanges its rows as an 8x8 transpose: lane 8g + j receives element j of
the rows lanes 8g + 0 .. 8g + 7 read, in that order (its element e is row e's element j). The instructions load
"a 16x16 matrix ... and transpose between row-major and column-major order" (the ISA reference's words, RDNA4 and
its gfx1250 descendant, which keeps these encodings as global_load_tr8_b64 / global_load_tr16_b128); the 8-lane
grouping is the one measured on gfx1250 hardware for the 16-bit form (a public probe: lane l of a wave32 whose lanes
address consecutive 8-element rows receives elements l % 8 + 8 * (0 .. 7) of its group's block) and, for the 8-bit
form, the same rule at byte granularity (8 bytes a lane). A lane's rows come from the lanes of its group whatever
their addresses, so a kernel can put any 8 rows in any order; no alignment beyond the plain load's is needed.

Not modelled: wave64 (LLVM's global_load_tr_b64 returns 32 bits a lane there, _b128 64 bits; how the block is split
between a wave64's lanes is not in a source this model could check), and a partial EXEC (the transpose reads other
lanes' rows: a group must be whole, else illegal_instruction).

The sanitizers see the plain load's footprint (each lane's 8 or 16 bytes at its address).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from simgpu.shader.memory import vmem  # noqa: F401 - the shared global loads this runs
from simgpu.shader.semantics import register, shared
from simgpu.shader.state import wsel

G = "gfx12"
_PLAIN = {"global_load_tr_b64": ("global_load_b64", 8), "global_load_tr_b128": ("global_load_b128", 16)}

# For each lane of a wave32 and element e of its result: the lane whose row it comes from (element: the lane's own
# index in its group)
_ROW_LANE = (np.arange(32)[:, None] // 8) * 8 + np.arange(8)[None, :]  # [lanes, e]
_ELEMENT = np.broadcast_to(np.arange(32)[:, None] % 8, (32, 8))


def _plain_view(inst, name: str):
    """`inst` as the plain load `name` (same encoding and fields), built once per instruction."""
    v = inst.__dict__.get("_plain_view")
    if v is None:
        v = inst.__dict__["_plain_view"] = dataclasses.replace(inst, mnemonic=name)
    return v


def _transposing(mnemonic: str):
    plain, bits = _PLAIN[mnemonic]
    load = shared(plain)
    nreg = 8 * bits // 32
    mask = np.uint64((1 << bits) - 1)
    shifts = np.arange(8, dtype=np.uint64) * np.uint64(bits)

    def run(ex, w, inst):
        if ex.st.lanes != 32:
            raise ex.illegal_inst(w, inst, f"{mnemonic} in wave64 is not implemented (its lane mapping is unknown)")
        if not ex.st.exec_full(w):
            raise ex.illegal_inst(w, inst, f"{mnemonic} needs EXEC all ones (each lane receives other lanes' rows)")
        load(ex, w, _plain_view(inst, plain))
        vdst, ix = inst.fields["vdst"], wsel(w)
        regs = np.ascontiguousarray(ex.st.vgpr[vdst:vdst + nreg, ix, :].transpose(1, 2, 0))  # [n, lanes, nreg]
        halves = regs.view(np.uint64)  # [n, lanes, nreg // 2] 64-bit words
        rows = ((halves[..., :, None] >> shifts[: 64 // bits]) & mask).reshape(len(w), 32, 8)  # [n, lane, element]
        moved = rows[:, _ROW_LANE, _ELEMENT]  # [n, lanes, e]
        words = (moved.reshape(len(w), 32, -1, 64 // bits) << shifts[: 64 // bits]).sum(axis=-1, dtype=np.uint64)
        out = np.ascontiguousarray(words).view(np.uint32)  # [n, lanes, nreg]
        for r in range(nreg):
            ex.st.vgpr[vdst + r, ix, :] = out[:, :, r]
    run.gfx11_name = plain  # the sanitizers' footprint: the plain load's, on the same fields
    run.gfx11_view = lambda ex, inst: _plain_view(inst, plain)
    return run


for _name in _PLAIN:
    register(_name, _transposing(_name), G)
