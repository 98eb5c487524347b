"""LDS bank conflicts of a DS instruction, by address (gfx11: 64 banks of 4 bytes per WGP).

Model: a DS access moves each lane's data in dword passes (a b64 access is two passes, a 2addr form two
accesses). In a pass, the lanes of a 32-lane half-wave (a wave32, or each half of a wave64) that touch the same
bank at different dword addresses are served one address per cycle; lanes reading the same dword share it
(broadcast). A pass takes as many cycles as its busiest bank has distinct addresses: the extra cycles beyond
one are bank-conflict cycles (SQC_LDS_BANK_CONFLICT), all of them LDS-active cycles (SQC_LDS_IDX_ACTIVE).
Instructions without LDS addresses (ds_permute, ds_bpermute, ds_swizzle, ds_append, ds_consume) take one cycle.
"""

from __future__ import annotations

import re

import numpy as np

from simgpu.shader.lds.ds import ds_address

BANKS = 64
HALF = 32
_SIZE = re.compile(r"_(u8|i8|u16|i16|b8|b16|b32|b64|b96|b128|u32|i32|f32|u64|i64|f64|f16|bf16)(?:_|$)")
_BYTES = {"u8": 1, "i8": 1, "b8": 1, "u16": 2, "i16": 2, "b16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
          "i32": 4, "f32": 4, "b64": 8, "u64": 8, "i64": 8, "f64": 8, "b96": 12, "b128": 16}
_NO_ADDRESS = ("ds_permute", "ds_bpermute", "ds_swizzle", "ds_append", "ds_consume", "ds_nop")


def element_bytes(mnemonic: str) -> int:
    """Bytes each lane moves per address of a DS instruction."""
    m = _SIZE.search(mnemonic)
    return _BYTES[m.group(1)] if m else 4


def addresses(ex, w, inst) -> list[np.ndarray]:
    """The [waves, lanes] byte addresses of each access the instruction makes (two for 2addr forms)."""
    m = inst.mnemonic
    if "2addr" in m:
        size = element_bytes(m)
        scale = size * (64 if "stride64" in m else 1)
        base = ex.st.vgpr[inst.fields["addr"], w, :].astype(np.int64)
        return [base + inst.fields["offset0"] * scale, base + inst.fields["offset1"] * scale]
    return [ds_address(ex, w, inst)]


def cycles(ex, w, inst) -> tuple[np.ndarray, np.ndarray]:
    """(LDS-active cycles, bank-conflict cycles) per wave of `w` for one DS instruction."""
    n = len(w)
    if inst.mnemonic.startswith(_NO_ADDRESS):
        return np.ones(n, np.int64), np.zeros(n, np.int64)
    mask = ex.st.exec_lanes(w)
    lanes = mask.shape[1]
    passes = -(-element_bytes(inst.mnemonic) // 4)
    active = np.zeros(n, np.int64)
    conflict = np.zeros(n, np.int64)
    half = (np.arange(lanes) // HALF)[None, :]
    for addr in addresses(ex, w, inst):
        for j in range(passes):
            dw = (addr >> 2) + j
            busiest = _busiest_bank(dw, mask, half, n)
            used = busiest > 0
            active += np.where(used, busiest, 0)
            conflict += np.where(used, busiest - 1, 0)
    return active, conflict


def _busiest_bank(dw: np.ndarray, mask: np.ndarray, half: np.ndarray, n: int) -> np.ndarray:
    """Per wave: the largest number of distinct dwords any bank serves in one half-wave (summed over halves)."""
    wave = np.broadcast_to(np.arange(n)[:, None], dw.shape)
    halves = np.broadcast_to(half, dw.shape)
    sel = mask.astype(bool)
    if not sel.any():
        return np.zeros(n, np.int64)
    d = dw[sel] & 0xFFFFFF
    key = ((wave[sel] * 2 + halves[sel]) << 32) | ((d % BANKS) << 24) | d
    uniq = np.unique(key)
    bank_key, per_bank = np.unique(uniq >> 24, return_counts=True)
    most = np.zeros(2 * n, np.int64)
    np.maximum.at(most, bank_key >> 8, per_bank)
    return most.reshape(n, 2).sum(axis=1)
