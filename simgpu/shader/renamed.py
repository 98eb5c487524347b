"""Running a gfx9 memory instruction on the shared semantics of the gfx11 instruction it means.

gfx9 (gfx942) spells the memory instructions otherwise (global_load_dword is gfx11's global_load_b32, ds_read2_b32
its ds_load_2addr_b32) and its encodings differ in fields that do not change a result (gfx940's sc0/sc1/nt cache
bits) or in conventions (FLAT's saddr "off" is code 0x7f, not gfx11's 0x7c; the acc bit names AccVGPRs). The shared
functions read the mnemonic and the fields, so a gfx9 instruction runs them through a *view*: the same instruction
with gfx11's mnemonic and fields (the acc bit's AccVGPRs moved to where they live in the unified VGPR file,
Dispatch.accum_offset + n), decoded for gfx1100. A view is built once per instruction and ACCUM_OFFSET and cached on
the instruction; a fault names the gfx9 instruction, not its view.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from simgpu.fault import HardwareFault
from simgpu.shader.semantics import shared

GFX9_SADDR_OFF, GFX11_SADDR_OFF = 0x7F, 0x7C
_ACC_FIELDS = ("vdst", "data", "data0", "data1", "vdata")  # the register operands the acc bit moves to AccVGPRs


def view(inst, name: str, accum_offset: int, swap: tuple[str, str] | None = None):
    """`inst` as the gfx1100 instruction `name` (see the module doc); `swap` exchanges two fields."""
    f = dict(inst.fields)
    if f.get("saddr") == GFX9_SADDR_OFF:
        f["saddr"] = GFX11_SADDR_OFF
    if f.pop("acc", 0):
        for k in _ACC_FIELDS:
            if k in f:
                f[k] += accum_offset
    if swap is not None:
        a, b = swap
        f[a], f[b] = f[b], f[a]
    return dataclasses.replace(inst, mnemonic=name, fields=f, arch="gfx1100")


def renamed(name: str, swap: tuple[str, str] | None = None, via: str | None = None) -> Callable:
    """The semantic function of a gfx9 instruction that means gfx11's `name`; `via` names the shared entry whose
    function runs it when `name` has none of its own (a mnemonic another family added, e.g. gfx12's pk_add atomics,
    run by the function that reads the op from the mnemonic)."""
    fn = shared(via or name)

    def view_of(ex, inst):
        """The gfx11 view of `inst` in dispatch `ex` (built once per ACCUM_OFFSET)."""
        views = inst.__dict__.setdefault("_gfx11_views", {})
        acc = ex.d.accum_offset if inst.fields.get("acc") else 0
        v = views.get(acc)
        if v is None:
            v = views[acc] = view(inst, name, acc, swap)
        return v

    def run(ex, w, inst):
        try:
            return fn(ex, w, view_of(ex, inst))
        except HardwareFault as f:
            f.instruction = inst.text()
            f.args = (str(f),)
            raise
    run.gfx11_name, run.gfx11_view = name, view_of  # the sanitizers' footprints read the view too (sanitize.observer)
    return run
