"""The register state of a batch of waves, as numpy arrays over [waves, ...].

SGPRs are stored by operand code (0-105 SGPRs, 106/107 VCC, 108-123 TTMP, 124 null, 125 M0, 126/127
EXEC; gfx9 swaps null and M0: null_and_m0), so an instruction's operand field indexes the file directly.
VGPRs are [vgpr, waves, lanes]: one register of every wave in a batch is one contiguous plane, so a VALU op over
many waves is a single pass (with [waves, vgpr, lanes] numpy pays a 32-lane inner loop per wave, several times slower).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from simgpu.isa.arch import get_arch

VCC_LO, M0, EXEC_LO, NULL = 106, 125, 126, 124
# Scalar memory returns data to SGPRs and VCC (operand codes 0-107: LLVM allocates VCC as a 32/64-bit scalar
# register for loaded values, e.g. `s_load_b32 vcc_lo, ...`); TTMPs are a trap handler's, so data for them
# and past them is dropped.
SMEM_SDATA_END = VCC_LO + 2

RUNNING, BARRIER, DONE = 0, 1, 2
# gfx9 numbers two scalar operand codes the other way round: 124 is M0 and 125 null (the CDNA3 ISA's scalar operand
# table; llvm-mc -mcpu=gfx942 prints them so). gfx10 and later: 124 null, 125 M0. A write to null is dropped, so
# the null code's SGPR slot stays 0 and reads as null does.
_NULL_M0 = {"gfx9": (125, 124)}


def null_and_m0(family: str) -> tuple[int, int]:
    """The operand codes of null and M0 in an ISA family ("gfx11", "gfx9")."""
    return _NULL_M0.get(family, (NULL, M0))


@cache
def null_of(arch: str) -> int:
    """The null operand code of an architecture's instructions (Inst.arch)."""
    return null_and_m0(get_arch(arch).family)[0]


def wsel(w: np.ndarray):
    """An index for the waves `w` that numpy can apply without copying: a slice when they are a
    contiguous run (the common case: every wave of a batch at one PC), else the index array."""
    n = len(w)
    if n == 1:  # a lone wave (every instruction of a serial loop): one element read
        w0 = w.item(0)
        return slice(w0, w0 + 1)
    if n and int(w[-1]) - int(w[0]) + 1 == n:
        return slice(int(w[0]), int(w[0]) + n)
    return w

# Hardware registers reachable with s_getreg/s_setreg (RDNA3 ISA reference, hwreg ids).
HW_MODE, HW_STATUS, HW_TRAPSTS, HW_HW_ID1, HW_HW_ID2, HW_GPR_ALLOC, HW_LDS_ALLOC, HW_IB_STS = 1, 2, 3, 23, 24, 5, 6, 7
HW_FLAT_SCR_LO, HW_FLAT_SCR_HI, HW_SHADER_CYCLES = 20, 21, 29


class WaveState:
    """Registers and status of `n` waves of one dispatch batch."""

    def __init__(self, n: int, nvgpr: int, lanes: int, lds_groups: int, lds_bytes: int):
        self.n, self.lanes = n, lanes
        self.sgpr = np.zeros((n, 128), np.uint32)
        self.vgpr = np.zeros((max(nvgpr, 1), n, lanes), np.uint32)
        self.scc = np.zeros(n, np.uint32)
        self.pc = np.zeros(n, np.int64)
        self.status = np.full(n, RUNNING, np.int8)
        self.hwreg = np.zeros((n, 64), np.uint32)
        self.group = np.zeros(n, np.int64)  # workgroup index within the batch
        self.wave_in_group = np.zeros(n, np.int64)
        self.lds = np.zeros((lds_groups, lds_bytes), np.uint8) if lds_bytes else np.zeros((lds_groups, 0), np.uint8)
        self.lane_ids = np.arange(lanes, dtype=np.uint64)
        self.lane_bits = (np.uint64(1) << self.lane_ids).astype(np.uint64)

    def launch_copy(self) -> WaveState:
        """A copy of this state as setup leaves it (simgpu.shader.setup's launch states): VGPRs past v0 and the LDS
        are zero there, so they are allocated zeroed rather than copied."""
        st = object.__new__(WaveState)
        st.n, st.lanes = self.n, self.lanes
        st.sgpr, st.scc, st.pc, st.status = self.sgpr.copy(), self.scc.copy(), self.pc.copy(), self.status.copy()
        st.hwreg, st.group, st.wave_in_group = self.hwreg.copy(), self.group.copy(), self.wave_in_group.copy()
        st.vgpr = np.zeros_like(self.vgpr)
        st.vgpr[0] = self.vgpr[0]
        st.lds = np.zeros_like(self.lds)
        st.lane_ids, st.lane_bits = self.lane_ids.copy(), self.lane_bits.copy()
        return st

    # EXEC and VCC as lane masks --------------------------------------------------------------------

    def mask64(self, w: np.ndarray, code: int) -> np.ndarray:
        """The 32/64-bit lane mask held in SGPR pair `code` (EXEC or VCC or an SGPR) for waves `w`."""
        ix = wsel(w)
        lo = self.sgpr[ix, code].astype(np.uint64)
        if self.lanes == 32:
            return lo
        return lo | (self.sgpr[ix, code + 1].astype(np.uint64) << np.uint64(32))

    def set_mask64(self, w: np.ndarray, code: int, value: np.ndarray) -> None:
        value = np.asarray(value, np.uint64)
        self.sgpr[w, code] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        if self.lanes == 64:
            self.sgpr[w, code + 1] = (value >> np.uint64(32)).astype(np.uint32)

    def lanes_of(self, bits: np.ndarray) -> np.ndarray:
        """[n, lanes] bool from per-wave bit masks (any integer type; bits above `lanes` are ignored)."""
        word = "<u4" if self.lanes == 32 else "<u8"
        return self.lanes_of_words(np.asarray(bits).astype(word, copy=False))

    def lanes_of_words(self, words: np.ndarray) -> np.ndarray:
        """[n, lanes] bool from little-endian mask words: [n] masks, or [n, 2] dword pairs for wave64
        (an SGPR pair sliced from the file). One flat unpackbits: per-row unpacking is several times slower."""
        flat = np.ascontiguousarray(words).view(np.uint8)
        return np.unpackbits(flat, bitorder="little").reshape(-1, self.lanes).view(bool)

    def bits_of(self, lanes: np.ndarray) -> np.ndarray:
        """Per-wave bit masks (uint64) from [n, lanes] bool."""
        return self.words_of(lanes).view("<u8" if self.lanes == 64 else "<u4").reshape(-1).astype(np.uint64)

    def words_of(self, lanes: np.ndarray) -> np.ndarray:
        """[n, lanes / 32] uint32 mask dwords (low first) from [n, lanes] bool: ready for an SGPR (pair).
        Packs the flattened array in one call (per-row packbits is several times slower)."""
        flat = np.ascontiguousarray(lanes, bool).reshape(-1)
        return np.packbits(flat, bitorder="little").view("<u4").reshape(-1, self.lanes // 32)

    def exec_words(self, w: np.ndarray) -> np.ndarray:
        """EXEC of waves `w` as [n, lanes / 32] dwords (a view of the SGPR file)."""
        return self.sgpr[wsel(w), EXEC_LO:EXEC_LO + self.lanes // 32]

    def exec_full(self, w: np.ndarray) -> bool:
        """Every lane of every wave in `w` is active (then results need no mask)."""
        if len(w) == 1:  # one wave: plain element reads, no numpy reduction
            sg, w0 = self.sgpr, w.item(0)
            return sg[w0, EXEC_LO] == 0xFFFFFFFF and (self.lanes == 32 or sg[w0, EXEC_LO + 1] == 0xFFFFFFFF)
        return bool((self.exec_words(w) == 0xFFFFFFFF).all())

    def exec_lanes(self, w: np.ndarray) -> np.ndarray:
        return self.lanes_of_words(self.exec_words(w))
