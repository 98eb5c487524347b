"""hazards: instruction sequences that gfx11 hardware does not interlock, checked as each wave executes.

The simulator computes such code correctly; the hardware would not. The list is LLVM's hazard recognizer
for gfx1100 (llvm/lib/Target/AMDGPU/GCNHazardRecognizer.cpp; which apply to gfx1100 from GCNSubtarget.h
and AMDGPU.td's FeatureISAVersion11_0_0), restricted to compute code; docs/shader.md lists them with what
clears each. Checked per wave along the path it really executed (LLVM must assume every path).

- trans-use: a VALU reads a VGPR a transcendental (TRANS) VALU wrote, with at most 5 VALUs and 1 other
  TRANS between them and no VMEM/FLAT/DS instruction or `s_waitcnt_depctr va_vdst(0)` since (fixVALUTransUseHazard).
- vcmpx-permlane: v_permlane16/x16 after a v_cmpx (writes EXEC) with no VALU other than v_nop between
  (fixVcmpxPermlaneHazards; FeatureVcmpxPermlaneHazard).
- wmma: a WMMA reads as matrix A or B a VGPR the previous WMMA wrote, with no other VALU between (fixWMMAHazards).
- valu-mask-write (wave64): a VALU reads an SGPR as a lane mask (v_cndmask, v_add/sub(rev)_co_ci, v_div_fmas),
  then an SALU writes it, then an SALU reads it, with no `s_waitcnt_depctr sa_sdst(0)` and no VALU reading
  another SGPR or a literal in between (fixVALUMaskWriteHazard).
- valu-partial-forwarding (wave64): a VALU reads VGPRs Va and Vb where Va was written by a VALU before an
  SALU wrote EXEC and Vb after it, within the windows fixVALUPartialForwardingHazard gives.
- scratch-svs-swizzle: a scratch access with both SGPR and VGPR offsets whose low two bits carry into bit 2
  when added (hasFlatScratchSVSSwizzleBug: the hardware swizzles such addresses wrongly).

Not applicable: LDS-direct hazards (lds_direct_load/lds_param_load are not modelled), gfx10/gfx12-only ones.
Not checked: FeatureMADIntraFwdBug (v_mad_u64_u32/v_mad_i64_i32; LLVM selects a gfx11 variant of them,
but which operand overlaps are unsafe is not stated: LLVM 19 itself emits a destination overlapping the
addend's high half) and FeatureUserSGPRInit16Bug (a launch-setup rule, not an instruction sequence).
Findings are warnings: the dispatch goes on.
"""

from __future__ import annotations

import numpy as np

from simgpu.sanitize.context import Where, first_lane
from simgpu.sanitize.regs import EXEC, MASK_READERS, TRANS, regs_of, vopd_parts
from simgpu.sanitize.report import WARNING
from simgpu.shader.semantics import base_name

CHECK = "hazards"
_FAR = -(1 << 40)
_MEMORY = ("buffer_", "tbuffer_", "global_", "flat_", "scratch_", "image_", "ds_")


class Profile:
    """What the hazard checks need to know about one instruction (computed once per decoded instruction)."""

    def __init__(self, inst, wave64: bool):
        name = base_name(inst.mnemonic)
        self.name = name
        self.valu = name.startswith("v_")
        self.salu = name.startswith("s_") and not name.startswith(("s_load", "s_buffer_load"))
        r = vopd_parts(inst, wave64) if inst.encoding == "VOPD" else regs_of(inst, wave64)
        self.regs = r
        self.vuse = sorted(r.vuse)
        self.vdef = sorted(r.vdef)
        self.trans = name in TRANS
        self.nop = name == "v_nop"
        self.vmem = name.startswith(_MEMORY)
        depctr = inst.fields.get("simm16", 0xFFFF) if name == "s_waitcnt_depctr" else 0xFFFF
        self.va_vdst0 = self.vmem or (depctr >> 12) & 0xF == 0
        self.sa_sdst0 = depctr & 1 == 0
        self.cmpx = name.startswith("v_cmpx_")
        self.permlane = name in ("v_permlane16_b32", "v_permlanex16_b32")
        self.wmma = name.startswith("v_wmma_")
        if self.wmma:
            f = inst.fields
            size = {8: 8, 4: 4}.get(inst.info["entry"]["ops"][1][2], 8)
            self.wmma_ab = set(range(f["src0"] - 256, f["src0"] - 256 + size)) | \
                set(range(f["src1"] - 256, f["src1"] - 256 + size))
        # SGPRs read as a lane mask (wave64 VALU mask-write hazard)
        self.mask_reads: set[int] = set()
        if name.startswith("v_div_fmas") or (name.startswith(MASK_READERS) and inst.mnemonic.endswith("_e32")):
            self.mask_reads = r.suse & {106, 107}
        elif name.startswith(MASK_READERS):
            self.mask_reads = set(r.suse)
        if wave64:  # a mask is an SGPR pair in wave64 (the codec prints its first register)
            self.mask_reads |= {s + 1 for s in self.mask_reads if s < 127}
        self.sgpr_or_literal = self.valu and (bool(r.suse - {EXEC, EXEC + 1}) or r.literal)
        self.exec_write = self.salu and bool(r.sdef & {EXEC, EXEC + 1})
        self.scratch_svs = name.startswith("scratch_") and inst.fields.get("sve") and inst.fields.get("saddr") != 124


def profile(inst, wave64: bool) -> Profile:
    """The cached Profile of a decoded instruction."""
    key = "_hazard_profile64" if wave64 else "_hazard_profile32"
    p = inst.__dict__.get(key)
    if p is None:
        p = inst.__dict__[key] = Profile(inst, wave64)
    return p


class Hazards:
    """Per-wave history of one batch, updated by every instruction, and the checks above."""

    def __init__(self, obs):
        self.obs = obs
        self.wave64 = obs.ex.lanes == 64

    def batch(self) -> None:
        """Fresh history for a new batch of waves."""
        st = self.obs.ex.st
        n, nv = st.n, st.vgpr.shape[0]
        self.valus = np.zeros(n, np.int64)  # VALUs executed
        self.transes = np.zeros(n, np.int64)
        self.epoch = np.zeros(n, np.int64)  # va_vdst waits (VMEM/FLAT/DS, depctr va_vdst(0))
        self.trans_seen = False
        self.t_valu = self.t_trans = self.t_epoch = None  # [n, vgprs]: when a TRANS last wrote each VGPR
        self.nv = nv
        self.cmpx = np.zeros(n, bool)  # a v_cmpx with no VALU since (vcmpx-permlane)
        self.wmma_dst = np.full(n, -1, np.int64)  # last VALU was a WMMA: its first destination VGPR
        self.wmma_len = np.zeros(n, np.int64)
        if self.wave64:
            self.v_valu = np.full((n, nv), _FAR, np.int64)  # VALU count after the last VALU write of each VGPR
            self.v_epoch = np.zeros((n, nv), np.int64)
            self.exec_at = np.full(n, _FAR, np.int64)  # VALU count when an SALU last wrote EXEC
            self.exec_epoch = np.zeros(n, np.int64)
            self.mask_read = np.zeros((n, 128), bool)  # SGPRs a VALU read as a mask, not yet expired
            self.mask_written = np.zeros((n, 128), bool)  # ... and an SALU wrote since

    def _cols(self, regs: list[int]) -> list[int]:
        """VGPR numbers as columns of the batch's file: a 16-bit e32 operand printed v128 and up is the high
        half of v(N - 128) (simgpu.shader.vector.valu.t16_vgpr); anything else past the file is dropped."""
        out = []
        for v in regs:
            v = v - 128 if v >= self.nv and 0 <= v - 128 < self.nv else v
            if v < self.nv:
                out.append(v)
        return out

    def step(self, where: Where, inst) -> None:
        """Check the instruction about to execute for waves `where.w`, then record it."""
        p = profile(inst, self.wave64)
        w = where.w
        if p.valu:
            self._valu(where, p, w)
        elif p.salu:
            self._salu(where, p, w)
        if p.va_vdst0:
            self.epoch[w] += 1
        if p.scratch_svs:
            self._svs(where, inst)

    def _valu(self, where: Where, p: Profile, w) -> None:
        if self.trans_seen and p.vuse:
            self._trans_use(where, p, w)
        if self.cmpx[w].any() and p.permlane:
            self._report(where, w, self.cmpx[w], "v_permlane after v_cmpx",
                         "a v_permlane reads lanes right after a v_cmpx wrote EXEC, with no other VALU between "
                         "(LLVM inserts a v_mov_b32)")
        if p.wmma:
            self._wmma(where, p, w)
        if self.wave64:
            self._wave64_valu(where, p, w)
        if not p.nop:
            self.cmpx[w] = p.cmpx
        if p.wmma:
            self.wmma_dst[w], self.wmma_len[w] = p.vdef[0], len(p.vdef)
        else:
            self.wmma_dst[w] = -1
        self.valus[w] += 1
        if p.trans:
            self.transes[w] += 1
            if not self.trans_seen:
                shape = (len(self.valus), self.nv)
                self.t_valu, self.t_trans, self.t_epoch = np.full(shape, _FAR), np.zeros(shape, np.int64), \
                    np.zeros(shape, np.int64)
                self.trans_seen = True
        if self.trans_seen and p.vdef:
            cols = np.array(self._cols(p.vdef), np.int64)
            rows = np.asarray(w)[:, None]
            if p.trans:
                self.t_valu[rows, cols] = self.valus[w][:, None]
                self.t_trans[rows, cols] = self.transes[w][:, None]
                self.t_epoch[rows, cols] = self.epoch[w][:, None]
            else:
                self.t_valu[rows, cols] = _FAR

    def _trans_use(self, where: Where, p: Profile, w) -> None:
        cols = np.array(self._cols(p.vuse), np.int64)
        rows = np.asarray(w)[:, None]
        near = (self.valus[w][:, None] - self.t_valu[rows, cols] <= 5) & \
            (self.transes[w][:, None] - self.t_trans[rows, cols] <= 1) & \
            (self.t_epoch[rows, cols] == self.epoch[w][:, None])
        if near.any():
            hit = near.any(axis=1)
            reg = int(cols[np.argmax(near[np.argmax(hit)])])
            self._report(where, w, hit, "transcendental result used too soon",
                         f"v{reg} was written by a transcendental VALU at most 5 VALUs (and 1 TRANS) before, with no "
                         "s_waitcnt_depctr va_vdst(0) between (LLVM inserts one)")

    def _wmma(self, where: Where, p: Profile, w) -> None:
        dst, n = self.wmma_dst[w], self.wmma_len[w]
        hit = np.array([d >= 0 and bool(p.wmma_ab & set(range(int(d), int(d + k)))) for d, k in zip(dst, n,
                                                                                                    strict=True)])
        if hit.any():
            self._report(where, w, hit, "WMMA reads the previous WMMA's result as A or B",
                         "matrix A or B overlaps the destination of the WMMA just before, with no VALU between "
                         "(LLVM inserts a v_nop)")

    def _wave64_valu(self, where: Where, p: Profile, w) -> None:
        rows = np.asarray(w)
        if p.sgpr_or_literal:
            self.mask_read[rows] = False
            self.mask_written[rows] = False
        if p.mask_reads:
            cols = sorted(p.mask_reads)
            self.mask_read[rows[:, None], cols] = True
        srcs = sorted(set(self._cols(p.vuse)))
        if len(srcs) >= 2:
            self._partial_forwarding(where, w, srcs)
        if p.vdef:
            cols = self._cols(p.vdef)
            self.v_valu[rows[:, None], cols] = (self.valus[w] + 1)[:, None]
            self.v_epoch[rows[:, None], cols] = self.epoch[w][:, None]

    def _partial_forwarding(self, where: Where, w, srcs: list[int]) -> None:
        rows = np.asarray(w)
        now = self.valus[w]
        exec_pos = now - self.exec_at[w]  # VALUs since the SALU EXEC write
        defs = now[:, None] - self.v_valu[rows[:, None], srcs]  # VALUs strictly between each def and now
        fresh = self.v_epoch[rows[:, None], srcs] == self.epoch[w][:, None]
        fresh &= (self.exec_epoch[w] == self.epoch[w])[:, None]
        big = 1 << 40
        post = np.where(fresh & (defs < exec_pos[:, None]), defs, big).min(axis=1)
        pre = np.where(fresh & (defs >= exec_pos[:, None]), defs, big).min(axis=1)
        intv2 = exec_pos - post - 1
        intv1 = pre - exec_pos
        hit = (post < big) & (pre < big) & (post <= 4) & (intv2 <= 2) & (intv1 <= 2) & (intv1 + intv2 <= 2) & \
            (pre <= 8)
        if hit.any():
            self._report(where, w, hit, "VALU partial forwarding across an EXEC write",
                         "two VGPR sources were written by VALUs on both sides of an SALU EXEC write, too close "
                         "together (LLVM inserts s_waitcnt_depctr 0xfff)")

    def _salu(self, where: Where, p: Profile, w) -> None:
        if not self.wave64:
            return
        rows = np.asarray(w)
        if p.sa_sdst0:
            self.mask_read[rows] = False
            self.mask_written[rows] = False
        uses = sorted(s for s in p.regs.suse if s < 128)
        if uses:
            hit = self.mask_written[rows[:, None], uses].any(axis=1)
            if hit.any():
                self._report(where, w, hit, "SALU reads an SGPR a VALU used as a lane mask, after an SALU wrote it",
                             "a VALU read it as a lane mask, an SALU then wrote it, and this SALU reads it with no "
                             "s_waitcnt_depctr sa_sdst(0) between (LLVM inserts one after the write)")
        defs = sorted(s for s in p.regs.sdef if s < 128)
        if defs:
            self.mask_written[rows[:, None], defs] |= self.mask_read[rows[:, None], defs]
        if p.exec_write:
            self.exec_at[w] = self.valus[w]
            self.exec_epoch[w] = self.epoch[w]

    def _svs(self, where: Where, inst) -> None:
        ex, f = self.obs.ex, inst.fields
        w = where.w
        off = inst.fields["offset"]
        off = off - (1 << 13) if off & (1 << 12) else off
        s = (ex.st.sgpr[w, f["saddr"]].astype(np.int64) + off)[:, None]
        v = ex.st.vgpr[f["addr"], w, :].astype(np.int64)
        bad = ex.st.exec_lanes(w) & (((v & 3) + (s & 3)) >= 4)
        if bad.any():
            row, lane = first_lane(bad)
            self.obs.report(where.finding(CHECK, "scratch SGPR+VGPR offset carries out of bit 1",
                                          "gfx11 swizzles a scratch address wrongly when the low two bits of the VGPR "
                                          "offset and of SGPR + offset carry into bit 2 (LLVM avoids this form then)",
                                          row, lane, severity=WARNING, lanes=int(bad.sum())))

    def _report(self, where: Where, w, hit: np.ndarray, what: str, message: str) -> None:
        row = int(np.argmax(hit))
        self.obs.report(where.finding(CHECK, what, message, row, None, severity=WARNING, lanes=1))
