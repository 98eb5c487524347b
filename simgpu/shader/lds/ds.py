"""DS (LDS) loads, stores and atomics, from the RDNA3 ISA "LDS & GDS Instructions" pseudo-code.

ADDR = VGPR[addr] + {offset1, offset0} (unsigned byte offset); 2addr forms use ADDR_BASE + offsetN *
element size (* 64 for stride64). Atomics with several lanes on one address apply in lane order
(waves in order, then lanes). gfx11 cmpstore: DATA0 is the value stored, DATA1 the compare value
("the order of src and cmp agree with BUFFER_ATOMIC_CMPSWAP"). Out-of-range LDS bytes: see
lds.ds_mem. GDS (gds=1), ds_gws_*, ds_ordered_count, ds_add/sub_gs_reg_rtn and ds_bvh_stack_rtn_b32
are not implemented (no GDS in the simulated compute path).
"""

from __future__ import annotations

import re

import numpy as np

from simgpu.isa.memory import tables
from simgpu.shader.lds.ds_mem import lds_atomic, lds_read, lds_write
from simgpu.shader.memory.atomic import read_data
from simgpu.shader.memory.atomic_ops import TWO_DATA, op_of
from simgpu.shader.memory.vmem import register_loads_stores, store_data, write_loaded
from simgpu.shader.operand import write_vgpr
from simgpu.shader.semantics import register

U32, U64 = np.uint32, np.uint64
_SIZES = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}


def ds_offset(inst) -> int:
    """The 16-bit unsigned instruction offset {offset1, offset0}."""
    return inst.fields["offset0"] | (inst.fields["offset1"] << 8)


def ds_address(ex, w, inst) -> np.ndarray:
    """[n, lanes] int64 LDS byte address: VGPR addr + instruction offset."""
    return ex.st.vgpr[inst.fields["addr"], w, :].astype(np.int64) + ds_offset(inst)


# ---------------------------------------------------------------------------------------------- loads/stores

_LOAD = re.compile(r"^ds_load_(u8|i8|u16|i16|b32|b64|b96|b128)(?:_d16(?:_hi)?)?$")
_STORE = re.compile(r"^ds_store_(b8|b16|b32|b64|b96|b128)(?:_d16_hi)?$")


def _load(ex, w, inst):
    kind = _LOAD.match(inst.mnemonic).group(1)
    mask = ex.st.exec_lanes(w)
    raw = lds_read(ex, w, ds_address(ex, w, inst), _SIZES[kind], mask)
    write_loaded(ex, w, inst.fields["vdst"], inst.mnemonic, raw, kind, mask)


def _store(ex, w, inst):
    size = _SIZES[_STORE.match(inst.mnemonic).group(1)]
    mask = ex.st.exec_lanes(w)
    lds_write(ex, w, ds_address(ex, w, inst), store_data(ex, w, inst.fields["data0"], inst.mnemonic, size), mask)


def _two_addresses(ex, w, inst) -> tuple[np.ndarray, np.ndarray, int]:
    size = 8 if inst.mnemonic.endswith("b64") else 4
    scale = size * (64 if "stride64" in inst.mnemonic else 1)
    base = ex.st.vgpr[inst.fields["addr"], w, :].astype(np.int64)
    return base + inst.fields["offset0"] * scale, base + inst.fields["offset1"] * scale, size


def _load_2addr(ex, w, inst):
    a0, a1, size = _two_addresses(ex, w, inst)
    mask = ex.st.exec_lanes(w)
    raw = np.concatenate([lds_read(ex, w, a0, size, mask), lds_read(ex, w, a1, size, mask)], axis=-1)
    write_loaded(ex, w, inst.fields["vdst"], inst.mnemonic, raw, "b", mask)


def _store_2addr(ex, w, inst):
    a0, a1, size = _two_addresses(ex, w, inst)
    mask = ex.st.exec_lanes(w)
    f = inst.fields
    lds_write(ex, w, a0, store_data(ex, w, f["data0"], inst.mnemonic, size), mask)
    lds_write(ex, w, a1, store_data(ex, w, f["data1"], inst.mnemonic, size), mask)


def _addtid_address(ex, w, inst) -> np.ndarray:
    """DS_*_ADDTID_B32: {offset1, offset0} + M0[15:0] + lane id * 4."""
    base = (ex.st.sgpr[w, ex.m0] & U32(0xFFFF)).astype(np.int64) + ds_offset(inst)
    return base[:, None] + np.arange(ex.st.lanes, dtype=np.int64)[None, :] * 4


def _load_addtid(ex, w, inst):
    mask = ex.st.exec_lanes(w)
    raw = lds_read(ex, w, _addtid_address(ex, w, inst), 4, mask)
    write_loaded(ex, w, inst.fields["vdst"], inst.mnemonic, raw, "b32", mask)


def _store_addtid(ex, w, inst):
    mask = ex.st.exec_lanes(w)
    lds_write(ex, w, _addtid_address(ex, w, inst), store_data(ex, w, inst.fields["data0"], inst.mnemonic, 4), mask)


# ---------------------------------------------------------------------------------------------- atomics

_ATOMIC = re.compile(r"^ds_(add|sub|rsub|inc|dec|min|max|and|or|xor|mskor|cmpstore|storexchg|wrap)"
                     r"(_rtn)?_([ubif])(32|64)$")


# DS atomics the pattern above does not parse (gfx12's, lds.gfx12): mnemonic -> (memory op, size, returns)
SPECIAL_DS_ATOMICS: dict[str, tuple[str, int, bool]] = {}


def ds_atomic_op(mnemonic: str) -> tuple[str, int, bool]:
    """(memory op, size in bytes, returns) of a DS atomic mnemonic."""
    m = _ATOMIC.match(mnemonic)
    if m is None:
        return SPECIAL_DS_ATOMICS[mnemonic]
    name, rtn, kind, bits = m.groups()
    return op_of(name, kind), int(bits) // 8, bool(rtn)


def atomic(ex, w, inst):
    op, size, rtn = ds_atomic_op(inst.mnemonic)
    f = inst.fields
    mask = ex.st.exec_lanes(w)
    src = read_data(ex, w, f["data0"], size)
    cmp = read_data(ex, w, f["data1"], size) if op in TWO_DATA else None
    old = lds_atomic(ex, w, op, ds_address(ex, w, inst), src, cmp, size, mask)
    if rtn:
        write_vgpr(ex, w, f["vdst"], old, mask, size // 4)


def _storexchg_2addr(ex, w, inst):
    a0, a1, size = _two_addresses(ex, w, inst)
    f = inst.fields
    mask = ex.st.exec_lanes(w)
    old0 = lds_atomic(ex, w, "swap", a0, read_data(ex, w, f["data0"], size), None, size, mask)
    old1 = lds_atomic(ex, w, "swap", a1, read_data(ex, w, f["data1"], size), None, size, mask)
    dw = size // 4
    write_vgpr(ex, w, f["vdst"], old0, mask, dw)
    write_vgpr(ex, w, f["vdst"] + dw, old1, mask, dw)


def _condxchg32(ex, w, inst):
    """DS_CONDXCHG32_RTN_B64: the qword at (ADDR + offset) & 0xfff8; each half written when its bit 31 is set."""
    f = inst.fields
    mask = ex.st.exec_lanes(w)
    addr = ds_address(ex, w, inst) & 0xFFF8
    old = lds_atomic(ex, w, "condxchg", addr, read_data(ex, w, f["data0"], 8), None, 8, mask)
    write_vgpr(ex, w, f["vdst"], old, mask, 2)


def _nop(ex, w, inst):
    return None


def ds_mnemonics() -> list[str]:
    """Every DS mnemonic of the gfx11 codec table."""
    return sorted(e["m"] for e in tables()["ops"]["DS"].values())


register_loads_stores(_load, _store, lambda op, kind, d16: f"ds_{op}_{kind}{'_' + d16 if d16 else ''}",
                      d16_loads=("u8", "i8", "u16"))
for _s in ("", "_stride64"):
    for _b in ("b32", "b64"):
        register(f"ds_load_2addr{_s}_{_b}", _load_2addr)
        register(f"ds_store_2addr{_s}_{_b}", _store_2addr)
        register(f"ds_storexchg_2addr{_s}_rtn_{_b}", _storexchg_2addr)
register("ds_load_addtid_b32", _load_addtid)
register("ds_store_addtid_b32", _store_addtid)
register("ds_condxchg32_rtn_b64", _condxchg32)
register("ds_nop", _nop)
for _mn in ds_mnemonics():
    if _ATOMIC.match(_mn):
        register(_mn, atomic)
