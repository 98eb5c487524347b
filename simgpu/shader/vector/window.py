"""A lone wave's lane window: VALU ops computed over the lanes EXEC spans, not the whole wave.

A wave of a one-workgroup kernel (a serial loop: one lane of 32 active) pays for every lane of every VALU op, and
its inactive lanes hold whatever they held: NaNs and infinities left from constants and earlier results send the
float kernels into their NaN and flush paths (first_nan's np.where per source) although no active lane needs them.
An op defined in the expression form (sem.expr) computes each lane from that lane's sources alone (no node reads
another lane; the `lane` node, a lane's index, is the exception and keeps the whole wave), so computing it over the
lanes from the lowest to the highest active one and writing those under EXEC leaves the registers bit for bit as
the whole-wave op does: inactive lanes are never written, and a lane mask result (VOPC, a carry) is zero outside
EXEC either way. Only one wave at a time (a batch's waves have their own EXECs) and only when EXEC is not full.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem.expr import nodes
from simgpu.shader.state import EXEC_LO


def windowed(spec) -> bool:
    """Whether `spec` (vector.valu.VOp) computes lane by lane: defined in the expression form, no lane index. Cached
    on the spec (valu.override resets it with the definition)."""
    ok = spec.windowed
    if ok is None:
        d = spec.definition
        ok = spec.windowed = d is not None and not any(n.op == "lane" for tree in (d.tree(False), d.tree(True))
                                                       for n in nodes(tree))
    return ok


def lane_window(st, w: np.ndarray) -> tuple[slice, int, int] | None:
    """(lanes from the lowest to the highest active one, their count, EXEC shifted down to them) for one wave
    whose EXEC is neither full nor empty; None otherwise (the whole-wave path)."""
    if len(w) != 1:
        return None
    w0 = w.item(0)
    sg = st.sgpr
    e = int(sg[w0, EXEC_LO])
    if st.lanes == 64:
        e |= int(sg[w0, EXEC_LO + 1]) << 32
    if e == 0 or e == (1 << st.lanes) - 1:
        return None
    lo = (e & -e).bit_length() - 1
    hi = e.bit_length()
    return slice(lo, hi), hi - lo, e >> lo


def active(st, width: int, bits: int) -> np.ndarray | None:
    """[1, width] bool of the window's active lanes; None when all of them are (the common one-lane window)."""
    if bits == (1 << width) - 1:
        return None
    return ((np.uint64(bits) & st.lane_bits[:width]) != 0)[None, :]


def per_lane(x, width: int) -> np.ndarray:
    """x as [1, width] (an op whose sources were all scalars returns [1, 1] or 0-d)."""
    x = np.asarray(x)
    return x if x.shape == (1, width) else np.broadcast_to(x, (1, width))


def store(st, reg: int, ix, ls: slice, value: np.ndarray, act: np.ndarray | None) -> None:
    """Write [1, width] dwords to VGPR `reg`'s window lanes (only the active ones when `act` is given)."""
    if act is None:
        st.vgpr[reg, ix, ls] = value
    else:
        np.copyto(st.vgpr[reg, ix, ls], value, where=act, casting="unsafe")


def mask_bits(st, lo: int, width: int, lanes_true, bits: int) -> int:
    """A lane mask result over the window as the whole wave's mask int: its lanes at their places, inactive
    lanes (outside EXEC, inside or outside the window) 0."""
    m = int(per_lane(np.asarray(lanes_true, bool), width).reshape(-1) @ st.lane_bits[:width])
    return (m & bits) << lo
