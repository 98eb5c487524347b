"""The native call interface: the context block (ctx, lower.C_*) a region's @round and @fused read, the engine's
window table in it (simgpu.mem.windows.TierWindows: VA ranges native code reads and writes directly), and the helpers
native code calls back: `callback` (one instruction in the interpreter, for one wave), `memory` (a read no window
holds, through the interpreter's routines; it adds a window) and `tick` (the watchdog's budget, the deadline and
progress hooks every TICK wave-instructions).
An exception in a helper cannot unwind through native code: the helper keeps it in `pending` and stops the call, and
the caller raises it once the waves are rolled back (raise_pending); unraisable.kept_by catches one raised before the
helper's `try` (Ctrl-C's KeyboardInterrupt lands at any bytecode).
"""

from __future__ import annotations

import ctypes

import numpy as np

from simgpu.mem.windows import TierWindows
from simgpu.shader.jit import lower as lo
from simgpu.shader.jit.build import CompiledRegion
from simgpu.shader.jit.lower_mem import MEM_FLAT, MEM_GLOBAL, MEM_LDS, MEM_SMEM, MEM_WRITABLE
from simgpu.shader.jit.unraisable import kept_by
from simgpu.shader.lds.ds_mem import lds_read
from simgpu.shader.memory.vmem import flat_read, global_read
from simgpu.shader.state import DONE, WaveState
from simgpu.shader.tier_exec import TICK, TierExec

CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64)
MEMORY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_uint64,
                               ctypes.c_int64, ctypes.c_void_p)


class Helpers:
    """The helpers' C entry points of one tier, made once (making three ctypes callbacks and taking their addresses
    cost about 40 us a dispatch): each calls the NativeCall of the dispatch running now, `current` (a tier runs one
    dispatch at a time)."""

    def __init__(self):
        self.current: NativeCall | None = None
        self._fns = (CALLBACK_TYPE(lambda row, wave: self.current._callback(row, wave)),
                     MEMORY_TYPE(lambda *args: self.current._memory(*args)),
                     CALLBACK_TYPE(lambda row, wave: self.current._tick(row, wave)))
        self.addresses = tuple(ctypes.cast(f, ctypes.c_void_p).value for f in self._fns)


class NativeCall:
    """One dispatch's native calls: their ctx, helpers, budget and what stopped them."""

    def __init__(self, ex: TierExec, stats, windows: TierWindows, helpers: Helpers):
        self.ex, self.stats, self.windows = ex, stats, windows
        self.ctx = np.zeros(lo.CTX_SIZE, np.int64)
        helpers.current = self
        self._helpers = helpers.addresses
        # The budget of a call (see _tick): wave-instructions the watchdog still allows, the stretch given
        # to native code until its next tick, whether that stretch is all the watchdog allows.
        self._allowance = self._stretch = 0
        self._final = False
        # What stopped a call from inside a helper, raised once its waves are rolled back: an exception
        # (Ctrl-C's KeyboardInterrupt, a progress hook's error) or (fault kind, message) of the deadline.
        self.pending: BaseException | tuple[str, str] | None = None
        self.corrections: list = []  # (wave, mnemonic, lane-ops) of callbacks counted with their block that did not run
        self.fusing = False  # a fused batch is running (fused.py)
        self._hint_table: np.ndarray | None = None
        self._hints = 0  # the address of self._hint_table
        self._pointed: WaveState | None = None  # the batch ctx's register pointers are set for (point_at)

    def point_at(self, st: WaveState, bound: int) -> None:
        """ctx's register file, code base and bound, windows and helpers for native code over `st`. The
        pointers are set once per batch (a WaveState's arrays and the tier's window table are never
        replaced; `.ctypes.data` costs microseconds, and a tiled kernel's few waves run hundreds of rounds)."""
        ctx, base = self.ctx, self.ex.d.code_address
        ctx[lo.C_BOUND] = bound
        ctx[lo.C_NWINDOWS] = len(self.windows.views)
        if self._pointed is st and ctx[lo.C_BASE] == base:
            return
        self._pointed = st
        for slot, value in ((lo.C_SGPR, st.sgpr), (lo.C_VGPR, st.vgpr), (lo.C_SCC, st.scc), (lo.C_PC, st.pc),
                            (lo.C_STATUS, st.status), (lo.C_HWREG, st.hwreg), (lo.C_LDS, st.lds),
                            (lo.C_GROUP, st.group), (lo.C_WINDOWS, self.windows.table)):
            ctx[slot] = value.ctypes.data
        ctx[lo.C_PLANE] = st.vgpr.strides[0]
        ctx[lo.C_BASE] = base
        ctx[lo.C_LDS_BYTES] = st.lds.shape[1]
        ctx[lo.C_CALLBACK], ctx[lo.C_MEMORY], ctx[lo.C_TICK] = self._helpers

    def hints(self, cr: CompiledRegion) -> int:
        """The address of the window each memory instruction used last, shared by the waves of this dispatch
        (windows are only added during a dispatch): [lo, hi, host] per instruction, starting empty (lo > hi)."""
        if not self._hints:
            self._hint_table = np.tile(np.array([1, 0, 0], np.int64), max(cr.nhints // 3, 1))
            self._hints = self._hint_table.ctypes.data
        return self._hints

    def allow(self, allowance: int) -> None:
        """At most `allowance` wave-instructions (the watchdog's) for the next call."""
        self._allowance = allowance
        self._give_stretch()

    def call(self, fn) -> int:
        """Native code `fn` (@round or @fused) over ctx."""
        with kept_by(self._unraisable):
            return fn(self.ctx.ctypes.data)

    def raise_pending(self, w: np.ndarray, pc: int) -> None:
        """Raise what stopped the call (its waves `w` are back at `pc`, where it started)."""
        pending, self.pending = self.pending, None
        if isinstance(pending, BaseException):
            raise pending
        ex = self.ex
        raise ex.hang(w, pc, ex.fetch(pc, w)[0], *pending)

    def _give_stretch(self) -> None:
        """Native code's budget until its next tick: TICK wave-instructions, or what the watchdog allows."""
        self._stretch = min(self._allowance, TICK)
        self._final = self._stretch == self._allowance
        self.ctx[lo.C_BUDGET] = self._stretch

    # ---------------------------------------------------------------------------------------- helpers
    def _callback(self, row: int, wave: int) -> int:
        """Run the instruction at the wave's PC in the interpreter (native code stored its registers)."""
        ex, st = self.ex, self.ex.st
        self.stats.callbacks += 1
        pc = int(st.pc[wave])
        w1 = np.array([wave], np.int64)
        saved = (st.vgpr[:, wave].copy(), st.sgpr[wave].copy(), st.scc[wave], st.status[wave], st.hwreg[wave].copy())
        inst = None
        try:
            inst, fn, is_valu = ex.fetch(pc, w1)
            if self.ctx[lo.C_B2B] and inst.mnemonic.startswith(("ds_", "flat_")):
                raise RuntimeError("LDS unchecked in a barrier-to-barrier interval")  # (undone: rounds run it)
            if fn(ex, w1, inst) is not None:
                raise AssertionError(f"{inst.mnemonic} changed control flow in a callback")
            st.pc[wave] = pc + inst.size
            return 0
        except BaseException as e:  # noqa: BLE001 - the interpreter reports it when the waves get there together
            st.vgpr[:, wave], st.sgpr[wave], st.scc[wave], st.status[wave], st.hwreg[wave] = saved
            st.pc[wave] = pc
            if inst is not None:
                lanes = ex.active_lanes(w1) if inst.mnemonic.startswith("v_") else 0
                self.corrections.append((wave, inst.mnemonic, lanes))
                self.ctx[lo.C_BUDGET] += 1
            if not isinstance(e, Exception):  # Ctrl-C: raised once the round is rolled back
                self.pending = e
            return 1

    def _tick(self, row: int, wave: int) -> int:
        """A wave found the stretch of budget too small for its next block. Every TICK wave-instructions of
        native code this checks the engine's deadline and tells the progress hooks, as the interpreter's
        tick does (Python runs here, so Ctrl-C arrives here too), and gives a new stretch: the wave goes on
        (TICK_GO_ON; a tick changes nothing the tiers must agree on, so the round's order stays). TICK_STOP
        ends the round: the watchdog's limit (the round keeps what a lone wave ran, or is rolled back), or
        what `pending` holds."""
        try:
            if self.pending is not None:
                return lo.TICK_STOP
            self._allowance -= self._stretch - int(self.ctx[lo.C_BUDGET])
            if self._final:
                return lo.TICK_STOP
            ex = self.ex
            overdue = ex.overdue()
            if overdue is not None:
                self.pending = overdue
                return lo.TICK_STOP
            if ex.engine.progress_hooks:
                done = int(self.ctx[lo.C_CURRENT]) if self.fusing else int(np.count_nonzero(ex.st.status == DONE))
                ex.report_progress(done, ex.allowed() - self._allowance)
            self._give_stretch()
            return lo.TICK_GO_ON
        except BaseException as e:  # noqa: BLE001 - raised by the round once its waves are rolled back
            self.pending = e
            return lo.TICK_STOP

    def _unraisable(self, info) -> None:
        """sys.unraisablehook while native code runs: an exception that escaped a callback before its `try`
        (Ctrl-C's KeyboardInterrupt lands at any bytecode) is kept for the round to raise, not printed."""
        if self.pending is None:
            self.pending = info.exc_value if info.exc_value is not None else KeyboardInterrupt()

    def _memory(self, wave: int, kind: int, addrs: int, mask: int, size: int, out: int) -> int:
        """Native code's slow path for a memory read: the lanes of `mask` read `size` bytes each at the
        addresses at `addrs` (the interpreter's routines: MMU, LDS, scratch) into `out` (dword k of every
        lane after the other, or the bytes of sub-dword reads); 1 if the read faults (or cannot be done
        here), and then the wave stops before the instruction. A window is added for next time."""
        ex = self.ex
        try:
            if kind == MEM_SMEM:
                addr = int(np.ctypeslib.as_array((ctypes.c_uint64 * 1).from_address(addrs))[0])
                data = ex.mem.read(ex.vmid, addr, size)
                ctypes.memmove(out, data, size)
                self._add_window(addr, addr + size)
                return int(self.fusing and not self._windowed(addr, addr + size))
            lanes = ex.lanes
            addr = np.ctypeslib.as_array((ctypes.c_uint64 * lanes).from_address(addrs)).copy()[None, :]
            active = ((np.uint64(mask) >> np.arange(lanes, dtype=np.uint64)) & np.uint64(1)).astype(bool)[None, :]
            if kind == MEM_WRITABLE:  # a store found no writable window: one for its lanes, if memory allows
                a = addr[active]
                lo_va, hi_va = int(a.min()), int(a.max()) + size
                return int(not (self._add_window(lo_va, hi_va, "write") and self._windowed(lo_va, hi_va)))
            if self.fusing and kind != MEM_GLOBAL:  # a fused batch has no LDS, scratch or register file here
                return 1
            w1 = np.array([wave], np.int64)
            if kind == MEM_LDS:
                if self.ctx[lo.C_B2B]:  # an interval's LDS read outside the row: undone, rounds run it (barrier.py)
                    return 1
                data = lds_read(ex, w1, addr.astype(np.int64), size, active)
                _planar(data, size, lanes, out)
                return 0
            if kind == MEM_FLAT:
                raw, g = flat_read(ex, w1, addr, size, active)
                if self.ctx[lo.C_B2B] and (active & ~g).any():  # LDS or scratch, unchecked in an interval
                    return 1
            else:
                g = active
                raw = global_read(ex, addr, size, g)
            _planar(raw, size, lanes, out)
            if g.any():
                lo_va, hi_va = int(addr[g].min()), int(addr[g].max()) + size
                self._add_window(lo_va, hi_va)
                return int(self.fusing and not self._windowed(lo_va, hi_va))
            return 0
        except BaseException as e:  # noqa: BLE001 - faults are the interpreter's to report, with every wave there
            if not isinstance(e, Exception):  # Ctrl-C: raised once the round is rolled back
                self.pending = e
            return 1

    def _add_window(self, lo_va: int, hi_va: int, access: str = "read") -> bool:
        ex = self.ex
        if not lo_va < hi_va <= (1 << 47):
            return False
        got = self.windows.add(ex.mem, ex.vmid, lo_va, hi_va, access)
        self.ctx[lo.C_NWINDOWS] = len(self.windows.views)
        return got

    def _windowed(self, lo_va: int, hi_va: int) -> bool:
        """Whether a fused batch's access of [lo_va, hi_va) stays comparable by VA (fused.py): one window
        holds it and no two windows reach the same memory through different VAs."""
        return self.windows.covered(lo_va, hi_va) and not self.windows.aliased()


def _planar(raw: np.ndarray, size: int, lanes: int, out: int) -> None:
    """Bytes read for one wave ([1, lanes, size]) into native code's buffer at `out`: dword k of every lane,
    lane after lane (or the lanes' bytes of a sub-dword read)."""
    dst = np.ctypeslib.as_array((ctypes.c_uint8 * (lanes * max(size, 4))).from_address(out))
    if size >= 4:
        dst[:] = np.ascontiguousarray(raw[0].view(np.uint32).T).view(np.uint8).reshape(-1)
    else:
        dst[:lanes * size] = raw[0].reshape(-1)
