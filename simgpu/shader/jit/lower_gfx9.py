"""gfx9's (gfx942, gfx950: CDNA3/4) own translators: the family's entries of the semantics table that the JIT runs
natively, each translated from what the interpreter runs for it, so the two tiers stay bit-identical.

A gfx9 mnemonic that is also gfx11's (v_add_f32, s_and_b64, v_cmp_gt_u32, s_waitcnt, ...) uses the shared translator
(lower.translator), whose field readers know gfx9's encodings where they differ: the operand codes of null and M0
(Lowering.null / .m0), v_cmpx's VCC or SDST write (lower_valu.valu), the 16-bit results that zero the high half
(valu._zeroes_high); DPP and SDWA forms are left to the interpreter (lower_valu._check_form). gfx9's own meanings run
natively only from here:

- SMEM: s_load_dword(xN) with gfx9's offset (scalar.gfx9._smem_offset: IMM's signed 21-bit offset, or the SGPR
  the offset field names, + SGPR[SOFFSET] with SOE; IMM = 0 with SOE = 1 is refused there, left to it here).
- VALU: the renamed and gfx9-only specs (vector.gfx9.OWN_SPECS: v_add_u32, v_addc_co_u32, v_sub_co_u32 with its
  carry in VCC (e32) or SDST (VOP3B), v_lshl_add_u64, v_mov_b64, v_fmac_f64, ...) through the shared VALU
  translator, from the spec the interpreter executes.
- Memory: GLOBAL/FLAT loads and stores and DS loads and stores are what the interpreter runs, the shared function on
  the instruction's gfx11 view (shader.renamed.view: gfx11's mnemonic, saddr off 0x7f -> 0x7c, sc0/sc1/nt kept
  as fields no reader looks at): the shared translator of the view. A form with the acc bit (AccVGPR data, at
  ACCUM_OFFSET, which the compiled code is not keyed by) is left to the interpreter.
- No-ops: the SMEM cache maintenance s_dcache_wb/inv/discard (scalar.gfx9) and buffer_inv (memory.gfx9).

Left to the interpreter (callback or sync): everything else of gfx9's own, among them MFMA / SMFMAC (whole-wave
matrix operations: a callback costs little beside one), v_accvgpr_read/write/mov (ACCUM_OFFSET), v_pk_*_f32 and
v_pk_mov_b32, the fp8/bf8 conversions, SDWA and DPP forms, s_getreg/s_setreg (gfx9's hwreg ids), s_memtime,
scratch and MUBUF accesses, atomics, the acc forms of memory instructions.
"""

from __future__ import annotations

from simgpu.shader.jit.lower import TRANSLATORS, Lowering, Unsupported, from_definition, translates
from simgpu.shader.jit.lower_mem import s_load
from simgpu.shader.jit.lower_salu import _nop
from simgpu.shader.jit.lower_valu import valu
from simgpu.shader.lds.gfx9 import gfx11_names as ds_names
from simgpu.shader.memory.gfx9 import gfx11_names as flat_names
from simgpu.shader.renamed import view
from simgpu.shader.scalar.gfx9 import _IMM_BITS
from simgpu.shader.vector.gfx9 import OWN_SPECS

G = "gfx9"


# ---------------------------------------------------------------------------------------------- SMEM


@translates(*[f"s_load_dword{x}" for x in ("", "x2", "x4", "x8", "x16")], family=G)
def _s_load(lw: Lowering, inst):
    """scalar.gfx9._smem_offset, then the shared load (lower_mem.s_load)."""
    b, f = lw.b, inst.fields
    if f["imm"]:
        off = f["offset"]
        offset = str(off - (1 << _IMM_BITS) if off & (1 << (_IMM_BITS - 1)) else off)
    elif f["soe"]:
        raise Unsupported("IMM = 0 with SOE = 1 (the interpreter refuses it)")
    elif f["offset"] >= 128:
        raise Unsupported("SMEM offset operand")
    else:
        offset = b.op(f"zext i32 {lw.scalar_src(f['offset'], None)} to i64")
    if f["soe"]:
        if f["soffset"] >= 128:
            raise Unsupported("soffset")
        soffset = lw.scalar_src(f["soffset"], None)
        offset = b.op(f"add i64 {offset}, {b.op(f'zext i32 {soffset} to i64')}")
    s_load(lw, inst, offset)


translates("s_dcache_wb", "s_dcache_wb_vol", "s_dcache_inv_vol", "s_dcache_discard", "s_dcache_discard_x2",
           "buffer_inv", family=G)(_nop)


# ---------------------------------------------------------------------------------------------- memory views


def _viewed(gfx11: str, swap):
    """The translator of a gfx9 memory instruction the interpreter runs as its gfx11 view `gfx11` (renamed.renamed):
    the shared translator of that view, when there is one."""
    def fn(lw: Lowering, inst):
        shared = TRANSLATORS.get(gfx11)
        if shared is None:
            raise Unsupported(f"{gfx11}: no translator")
        if inst.fields.get("acc"):
            raise Unsupported("AccVGPR data (at ACCUM_OFFSET)")
        shared(lw, view(inst, gfx11, 0, swap))
    return fn


for _seg in ("global", "flat"):
    for _name, _gfx11 in flat_names(_seg).items():
        if "_load_" in _name or "_store_" in _name:
            translates(_name, family=G)(_viewed(_gfx11, None))
for _name, (_gfx11, _swap) in ds_names().items():
    if _name.startswith(("ds_read", "ds_write")) and "addtid" not in _name:
        translates(_name, family=G)(_viewed(_gfx11, _swap))


# ---------------------------------------------------------------------------------------------- VALU


def register_all() -> None:
    """A translator for every gfx9 VALU spec defined in the expression form (the semantics modules loaded:
    translate.load_translators)."""
    for name, spec in OWN_SPECS.items():
        if spec.definition is not None:
            translates(name, family=G)(from_definition(spec, lambda lw, inst, s=spec: valu(lw, inst, s)))
