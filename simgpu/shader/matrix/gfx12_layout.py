"""Where gfx12 (RDNA4) WMMA and SWMMAC operands live: the VGPR, lane and bit of each matrix element, for wave32 and
wave64.

The rules are those of AMD's matrix instruction calculator for RDNA4 (ROCm/amd_matrix_instruction_calculator,
`--architecture rdna4 --detail-instruction`, whose closed-form "A[i][k] GPR / Lane" equations this module restates
as a few general rules; tests/simgpu/shader/test_wmma_gfx12.py writes the equations out per shape):

- A and B (wave32): row i of A (column j of B) sits in lanes i and i + 16; lane half h (lane // 16) holds K in
  chunks of `chunk` consecutive k, alternating between the halves: element e of a lane (its registers read as one bit
  string, lowest bits first) is k = (2 * (e // chunk) + h) * chunk + e % chunk. A chunk is 64 bits of elements for
  the dense WMMA (f16: k 0-3 and 8-11 in lanes 0-15; 8-bit: k 0-7; iu4 16x16x16: k 0-7) and 128 bits for the
  operands of the sparse SWMMAC, never more than the lane's half of K.
- The sparse A holds two of each group of four k (4:2 structured sparsity): the lane's stored pairs are its groups,
  in the order a dense A would hold them (the 128-bit chunks, counted in dense elements), the pair's first element in
  the lower bits. The compression index (SWMMAC's src2, one VGPR) holds a 4-bit field per group, in the lane that
  holds the group, field n for the lane's n-th group: bits [1:0] say which k of the group the pair's first element
  is, bits [3:2] the second's. OPSEL (LLVM's index_key) picks which set of fields when a lane's fields fill less
  than 32 bits: set s starts at bit s * (bits the fields take).
- C and D: VGPR r of lane l holds row r + 8 * (l // 16), column l % 16 (f32/i32); 16-bit C/D hold rows 2r (low
  half) and 2r + 1 (high half) of the lane's 8 rows.
- wave64 runs the same operation with each lane's registers halved: what wave32 puts in register v of lane l, wave64
  puts in register v % (n / 2) of lane l + 32 * (v // (n / 2)) (n: the operand's wave32 register count; the index
  VGPR's fields likewise, when A is halved). An operand of one wave32 VGPR (iu4 16x16x16 A and B, SWMMAC iu4
  16x16x32 A and its index) stays in lanes 0-31 of one VGPR, and lanes 32-63 are not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

_I = np.arange(16)


@dataclass(frozen=True)
class Place:
    """Where each element of an operand lives: VGPR offset, lane and bit offset, arrays of one shape."""
    reg: np.ndarray
    lane: np.ndarray
    bit: np.ndarray
    nreg: int  # VGPRs the operand takes


def _wave64(p: Place, lanes: int) -> Place:
    """wave32's placement `p` as wave64 lays it out: each lane's registers halved between lanes l and l + 32."""
    if lanes == 32 or p.nreg == 1:
        return p
    half = p.nreg // 2
    return Place(p.reg % half, p.lane + 32 * (p.reg // half), p.bit, half)


def _chunk(bits: int, k_dim: int, chunk_bits: int) -> int:
    return min(chunk_bits // bits, k_dim // 2)


@cache
def dense(bits: int, k_dim: int, lanes: int, sparse_op: bool = False) -> Place:
    """A[i][k] (or B[k][i]) of a dense operand: arrays [16, k_dim]; `sparse_op` for SWMMAC's B (128-bit chunks)."""
    chunk = _chunk(bits, k_dim, 128 if sparse_op else 64)
    e = np.arange(k_dim // 2)  # element index within a lane
    k = np.stack([(2 * (e // chunk) + h) * chunk + e % chunk for h in (0, 1)])  # [h, e] -> k
    h_of, e_of = np.empty(k_dim, np.int64), np.empty(k_dim, np.int64)
    h_of[k], e_of[k] = np.arange(2)[:, None], e[None, :]
    lane = _I[:, None] + 16 * h_of[None, :]
    pos = np.broadcast_to(e_of * bits, (16, k_dim))
    nreg = max(1, k_dim // 2 * bits // 32)
    return _wave64(Place(pos // 32, lane, pos % 32, nreg), lanes)


@cache
def sparse_a(bits: int, k_dim: int, lanes: int) -> tuple[Place, Place]:
    """SWMMAC's compressed A: its pairs as arrays [16, k_dim // 4, 2] (row, group, which of the pair), and the
    compression index fields as [16, k_dim // 4] (register 0 of src2; OPSEL's set offset not included)."""
    groups = k_dim // 4
    per_lane = groups // 2
    chunk = _chunk(bits, k_dim, 128) // 4  # groups per chunk
    g_local = np.arange(per_lane)
    g = np.stack([(2 * (g_local // chunk) + h) * chunk + g_local % chunk for h in (0, 1)])  # [h, n] -> group
    h_of, n_of = np.empty(groups, np.int64), np.empty(groups, np.int64)
    h_of[g], n_of[g] = np.arange(2)[:, None], g_local[None, :]
    lane = _I[:, None] + 16 * h_of[None, :]  # [16, groups]
    pos = (2 * n_of[None, :, None] + np.arange(2)[None, None, :]) * bits  # [1, groups, 2]
    nreg = max(1, groups * bits // 32)
    pairs = Place(np.broadcast_to(pos // 32, (16, groups, 2)), np.broadcast_to(lane[:, :, None], (16, groups, 2)),
                  np.broadcast_to(pos % 32, (16, groups, 2)), nreg)
    zero = np.zeros((16, groups), np.int64)
    index = Place(zero, lane, zero + 4 * n_of, 1)  # at most 8 fields a lane: one VGPR
    if lanes == 64 and nreg > 1:  # the index fields follow A's registers into lanes 32-63
        fields = per_lane // 2
        index = Place(zero, lane + 32 * (n_of // fields), zero + 4 * (n_of % fields), 1)
    return _wave64(pairs, lanes), index


def index_sets(bits: int, k_dim: int, lanes: int) -> int:
    """How many sets of compression index fields fit in the index VGPR (OPSEL chooses one)."""
    _, index = sparse_a(bits, k_dim, lanes)
    used = int(index.bit.max()) + 4
    return 32 // used


@cache
def accumulator(bits: int, lanes: int) -> Place:
    """C[i][j] / D[i][j]: arrays [16, 16] (row, column)."""
    i, j = _I[:, None], _I[None, :]
    lane = np.broadcast_to(16 * (i // 8) + j, (16, 16))
    if bits == 32:
        p = Place(np.broadcast_to(i % 8, (16, 16)), lane, np.zeros((16, 16), np.int64), 8)
    else:
        p = Place(np.broadcast_to((i % 8) // 2, (16, 16)), lane, np.broadcast_to(16 * (i % 2), (16, 16)), 4)
    return _wave64(p, lanes)
