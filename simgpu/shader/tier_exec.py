"""The interface between the interpreter and an execution tier (the JIT, simgpu.shader.jit): what a tier may read
and change of a dispatch in flight. The engine hands a tier its `Exec` at `begin`; the tier uses it only
through `TierExec`, as it uses the memory system only through simgpu.mem.windows.TierMemory. Exec's methods
under "for a tier" exist for it: the interpreter's invariants (the watchdog's slices and ticks, the counters and
clock) stay the interpreter's to keep.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol, runtime_checkable

import numpy as np

from simgpu.shader.dispatch import Dispatch
from simgpu.shader.state import WaveState

# Wave-instructions between the engine's checks of the wall clock (deadline) and its progress hooks: the interpreter
# spends the watchdog's budget in slices of at most TICK, and a tier's native code returns to it at least as often.
TICK = 1 << 16


class TierCounters(Protocol):
    """The engine's counters (engine.Counters) as a tier may change them: wave-instructions per opcode."""

    per_opcode: Counter


class TierEngine(Protocol):
    """The engine (engine.ShaderEngine) as a tier may use it: whether batches keep their final registers
    (`exit_states` is a list), whether anyone hears progress, and the per-opcode counts it adds its blocks to."""

    exit_states: list | None
    progress_hooks: list
    counters: TierCounters


@runtime_checkable
class TierExec(Protocol):
    """One dispatch in the interpreter (engine.Exec), as an execution tier may use it.

    Reads: the dispatch (`d`, `lanes`, `waves_per_group`, `group_count`), where the batch is (`groups_before`,
    `batch_count`), the watchdog's slice (`budget`) and what it still allows (`allowed`), and of the engine only
    `exit_states` (whether batches keep their registers) and `progress_hooks` (whether anyone listens).
    Changes: the batch's registers and LDS, in place in `st` (a fused batch, which has its own, leaves them
    there instead, or None); memory through its windows (simgpu.mem.windows.TierWindows over `mem`) and the
    interpreter's own routines (`run`, and simgpu.shader.memory's and simgpu.shader.lds's reads, which take this
    object); code and SMEM bytes through `mem.read`; `engine.counters.per_opcode`, to which it adds what its
    blocks ran; and the counters, clock and budget only through `charge`, as the interpreter counts its own.
    """

    d: Dispatch
    lanes: int
    waves_per_group: int
    mem: object  # the MMU: TierMemory (for TierWindows), and read(vmid, va, size, access)
    vmid: int
    engine: TierEngine
    groups_before: int  # workgroups of earlier batches
    batch_count: int  # workgroups in this batch
    budget: int  # wave-instructions left in the watchdog's slice
    st: WaveState | None

    def group_count(self) -> int: ...

    def allowed(self) -> int: ...

    def initial_state(self, start: int, count: int) -> WaveState: ...

    def charge(self, n: int, lanes: int, w: np.ndarray | None = None) -> None: ...

    def overdue(self) -> tuple[str, str] | None: ...

    def report_progress(self, waves_done: int, ran: int = 0) -> None: ...

    def fetch(self, pc: int, w: np.ndarray) -> tuple: ...

    def decoded(self, pc: int): ...

    def run(self, pc: int, w: np.ndarray, straight: bool) -> None: ...

    def active_lanes(self, w: np.ndarray) -> int: ...

    def release_barriers(self) -> bool: ...

    def hang(self, w: np.ndarray, pc: int, inst, kind: str, message: str) -> Exception: ...
