"""MI300X (gfx942, GC 9.4.3) over AM, driven by tinygrad's AM driver (PyPI tinygrad 0.14.0, unmodified) in this
process: it boots the simulated PCI function -- MI300X's discovery binary, NBIO 7.9 (the SMN window to the other
AIDs), four MM hubs and eight GC hubs with gfx9 translate-further page tables, the IH, PSP 13.0.6 (the gfx9 firmware
containers, the register list, SRIOV_SPATIAL_PART), SMU 13.0.6, the eight XCCs' MECs, sixteen SDMA 4.4.2 engines --
then sets up an AQL queue over all eight XCCs, a PM4 queue, an SDMA ring, and reads SOC15 IH entries with its own
macros. (tests/wiring/test_run_tinygrad_am.py runs tinygrad's whole AM backend on it under `simgpu run --am`.)

Every test runs on MI350X (gfx950, GC 9.5.0) too: the same blocks at SDMA 4.4.4 / MMHUB 1.8.1 / MP 13.0.12, where
tinygrad takes its 9.5.0 paths -- psp_13_0_12_sos (SETUP_TMR of its own TMR buffer, as it does for MP0 13.0.12),
sdma_4_4_4 and gc_9_5_0 firmware, no SMU image (SMU 13.0.12 runs from the IFWI, answering 13.0.6's message numbers),
and its GC 9.5.0 check of SCRATCH_REG7 that forces a partial boot on a device it booted before."""

import struct

import pytest

from simgpu.gpu import GPU
from simgpu.hw import ih as hwih
from simgpu.hw import pm4, pm4_gfx9, sdma, soc15
from simgpu.hw import smu as hwsmu
from simgpu.hw.mqd import V9MQD as mqd_v9
from simgpu.soc import SOC
from tests.support.am_tinygrad import boot
from tools import am_unmodelled

am = pytest.importorskip("tinygrad.runtime.autogen.am.am")
GFX9_FIRMWARE = {"CP_MEC", "CP_MEC_ME1", "SDMA0", "SDMA1", "SDMA2", "SDMA3", "RLC_G", "RLC_RESTORE_LIST_SRM_CNTL",
                 "RLC_RESTORE_LIST_GPM_MEM", "RLC_RESTORE_LIST_SRM_MEM", "REG_LIST"}
# what differs per part: GC and MP versions, and the firmware the PSP takes beyond GFX9_FIRMWARE (SMU 13.0.6's P2S
# pptable; SMU 13.0.12 takes none)
PARTS = {"gfx942": ((9, 4, 3), (13, 0, 6), {"P2S_TABLE"}), "gfx950": ((9, 5, 0), (13, 0, 12), set())}


@pytest.fixture(scope="module", params=sorted(PARTS))
def arch(request):
    return request.param


def _boot(arch: str):
    return boot(SOC(GPU(vram_size=1 << 30, arch=arch)))  # (tinygrad reserves 384 MiB on GC 9.4 and 9.5)


@pytest.fixture(scope="module")
def booted(arch):
    return _boot(arch)


def _buf(adev, size: int):
    """A GPU buffer in VMID 0 (tinygrad's allocator and page tables): (GPU VA, VRAM offset)."""
    vm = adev.mm.valloc(size, contiguous=True)
    return vm.va_addr, vm.paddrs[0][0]


def _ih_entries(adev) -> list[list[int]]:
    wptr, rptr = adev.regIH_RB_WPTR.read_bitfields()["offset"], adev.regIH_RB_RPTR.read()
    ring, size, out = adev.ih.ring_view, adev.ih.ring_size // 4, []
    while rptr != wptr:
        out.append([ring[(rptr + i) % size] for i in range(8)])
        rptr = (rptr + 8) % size
    return out


def _put(soc, pa: int, dwords: list[int]) -> None:
    soc.gpu.phys.vram[pa:pa + 4 * len(dwords)] = memoryview(struct.pack(f"<{len(dwords)}I", *dwords)).cast("B")


def _pm4_queue(adev, soc):
    """tinygrad's PM4 compute queue (XCC 0's HQD): (doorbell, ring PA, pointers PA)."""
    ring_va, ring_pa = _buf(adev, 0x1000)
    ptr_va, ptr_pa = _buf(adev, 0x1000)
    eop_va, _ = _buf(adev, 0x1000)
    return adev.gfx.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, eop_va, 0x1000, idx=0, aql=False), ring_pa, ptr_pa


def _submit(adev, soc, queue, cmds: list[int]) -> None:
    doorbell, ring_pa, ptr_pa = queue
    _put(soc, ring_pa, cmds)
    soc.gpu.phys.vram[ptr_pa + 8:ptr_pa + 16] = memoryview(struct.pack("<Q", len(cmds))).cast("B")
    adev.doorbell64[doorbell] = len(cmds)


def test_tinygrad_boots_mi300x_and_mi350x_over_am(booted, arch):
    adev, soc = booted
    gc, mp, extra = PARTS[arch]
    assert adev.ip_ver[am.GC_HWIP] == gc and adev.ip_ver[am.MP0_HWIP] == adev.ip_ver[am.MP1_HWIP] == mp
    assert adev.gfx.xccs == 8 and adev.aids == [0, 1, 2, 3]
    assert soc.psp.sos_alive and not soc.psp.autoloaded  # gfx9: the RLC is loaded, not autoloaded
    assert set(soc.psp.firmware) == GFX9_FIRMWARE | extra
    assert soc.psp.partitions == 1  # its SRIOV_SPATIAL_PART(1): SPX
    assert soc.smu.features and not soc.smu.unknown and soc.smu.driver_table
    assert all(h.enabled[0] for h in soc.gchubs) and all(h.enabled[0] for h in soc.mmhubs)  # every XCC, every AID
    assert soc.gpu.mmu.walker._further[0]  # VMID 0 walks gfx9's translate-further tables (depth 2, block size 9)
    fence = soc15.XCC_DOORBELL_FENCE
    for aid in (1, 2, 3):  # written through the SMN window with the AID's extended address bits
        assert fence.get(soc.nbio.remote[(aid, soc.regs.addr(fence))], "shub_slv_mode") == 1
    assert adev.reg("regSCRATCH_REG7").read() == adev.Version
    assert not soc.bus_errors, soc.bus_errors


def test_an_aql_queue_spans_the_eight_xccs_as_one_queue(booted):
    adev, soc = booted
    ring_va, _ = _buf(adev, 0x1000)
    ptr_va, _ = _buf(adev, 0x1000)
    eop_va, _ = _buf(adev, 0x1000)
    adev.gfx.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, eop_va, 0x1000, idx=1, aql=True)
    lead = (0, 1, 0, 1)  # XCC 0, ME 1, pipe 0, queue 1
    q = soc.cp.queues[lead]
    assert q.fmt == "aql" and q.ring_base == ring_va
    assert {k for k, v in soc.cp.members.items() if v == lead} == {(x, 1, 0, 1) for x in range(1, 8)}
    for x in range(8):  # every XCC's HQD reads active
        adev.gfx._grbm_select(me=1, pipe=0, queue=1, inst=x)
        assert adev.regCP_HQD_ACTIVE.read(inst=x) == 1
        adev.gfx._grbm_select(inst=x)
    adev.gfx._dequeue_hqds()  # tinygrad's teardown: every XCC's HQD, then the queue is gone
    assert not soc.cp.queues and not soc.cp.members and q not in soc.gpu.queues


def test_a_pm4_queue_runs_and_its_end_of_pipe_is_a_soc15_grbm_cp_entry(booted):
    adev, soc = booted
    queue = _pm4_queue(adev, soc)
    out_va, out_pa = _buf(adev, 0x1000)
    big_va, big_pa = _buf(adev, 2 << 20)  # a 2 MiB page: a PDB0 entry without PTE_TF is the leaf
    _submit(adev, soc, queue, pm4.write_data(out_va, 0x1234, 0x5678) + pm4.write_data(big_va + 0x1FF000, 7) +
            pm4_gfx9.release_mem(out_va + 8, 0xC0FFEE, int_sel=pm4.IntSel.INT_AFTER_WRITE, ctx_id=77))
    vram = soc.gpu.phys.vram
    assert struct.unpack_from("<3I", bytes(vram[out_pa:out_pa + 12])) == (0x1234, 0x5678, 0xC0FFEE)
    assert struct.unpack_from("<I", bytes(vram[big_pa + 0x1FF000:big_pa + 0x1FF004]))[0] == 7
    walker = soc.gpu.mmu.walker  # what those walks found: a 4 KiB PTE behind a PTE_TF entry, a 2 MiB PDB0 leaf
    assert walker.walk(0, out_va).log2 == 0 and walker.walk(0, big_va).log2 >= 9
    eops = [e for e in _ih_entries(adev) if am.SOC15_CLIENT_ID_FROM_IH_ENTRY(e) == am.SOC15_IH_CLIENTID_GRBM_CP]
    assert eops, soc.describe()
    e = eops[-1]
    assert adev.soc.ih_srcs_names[am.SOC15_IH_CLIENTID_GRBM_CP][am.SOC15_SOURCE_ID_FROM_IH_ENTRY(e)] == \
        "CP_EOP_INTERRUPT"  # the name in its own gfx 9.0 source table
    assert am.SOC15_RING_ID_FROM_IH_ENTRY(e) == hwih.CP_RING_ID.pack(me=1, pipe=0, queue=0)
    assert am.SOC15_CONTEXT_ID0_FROM_IH_ENTRY(e) == 77
    adev.ih.drain()


def test_an_sdma_4_4_ring_copies_and_traps_through_its_engines_client(booted):
    adev, soc = booted
    ring_va, ring_pa = _buf(adev, 0x1000)
    ptr_va, ptr_pa = _buf(adev, 0x1000)
    buf_va, buf_pa = _buf(adev, 0x2000)
    vram = soc.gpu.phys.vram
    vram[buf_pa:buf_pa + 16] = memoryview(b"simulated mi3x0x").cast("B")
    doorbell = adev.sdma.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, idx=0)
    assert soc.sdma.queues[0].engine == 0
    cmds = sdma.copy_linear(buf_va + 0x1000, buf_va, 16, major=4) + sdma.fence(buf_va + 0x1800, 0xFEED, major=4) + \
        sdma.trap(5)
    _put(soc, ring_pa, cmds)
    vram[ptr_pa + 8:ptr_pa + 16] = memoryview(struct.pack("<Q", 4 * len(cmds))).cast("B")
    adev.doorbell64[doorbell] = 4 * len(cmds)  # SDMA pointers count bytes
    assert bytes(vram[buf_pa + 0x1000:buf_pa + 0x1010]) == b"simulated mi3x0x"
    assert struct.unpack_from("<I", bytes(vram[buf_pa + 0x1800:buf_pa + 0x1804]))[0] == 0xFEED
    traps = [e for e in _ih_entries(adev) if am.SOC15_SOURCE_ID_FROM_IH_ENTRY(e) == am.SDMA0_4_0__SRCID__SDMA_TRAP]
    assert traps and am.SOC15_CLIENT_ID_FROM_IH_ENTRY(traps[-1]) == am.SOC15_IH_CLIENTID_SDMA0
    assert am.SOC15_CONTEXT_ID0_FROM_IH_ENTRY(traps[-1]) == 5
    assert adev.soc.ih_srcs_names[am.SOC15_IH_CLIENTID_SDMA0][am.SDMA0_4_0__SRCID__SDMA_TRAP] == "SDMA_TRAP"
    adev.ih.interrupt_handler()  # tinygrad skips SDMA_TRAP entries
    assert not adev.is_err_state


def test_a_page_fault_is_a_utcl2_entry_tinygrad_reads_back_then_recovers(capsys, arch):
    adev, soc = _boot(arch)  # a device of its own: tinygrad gives every compute ring the same doorbell
    queue = _pm4_queue(adev, soc)
    bad = 0x7FFF_0000_0000  # never mapped in VMID 0
    _submit(adev, soc, queue, pm4.write_data(bad, 1))
    faults = [e for e in _ih_entries(adev) if am.SOC15_CLIENT_ID_FROM_IH_ENTRY(e) == am.SOC15_IH_CLIENTID_UTCL2]
    assert faults, soc.describe()
    assert hwih.vm_fault_address(hwih.Entry.unpack(struct.pack("<8I", *faults[-1]))) == bad
    adev.ih.interrupt_handler()  # gfx9: a UTCL2-client entry makes it read GCVM_L2_PROTECTION_FAULT_STATUS/ADDR
    printed = capsys.readouterr().out
    assert "GCVM_L2_PROTECTION_FAULT_STATUS" in printed and f"{bad:#x}" in printed, printed
    assert adev.is_err_state and soc.regs.get("GCVM_L2_PROTECTION_FAULT_STATUS") == 0  # cleared by its write
    adev.recover()  # drain the IH, reset every XCC's MEC (its queues go)
    assert not adev.is_err_state and not soc.cp.queues
    queue = _pm4_queue(adev, soc)  # the device is usable afterwards
    out_va, out_pa = _buf(adev, 0x1000)
    _submit(adev, soc, queue, pm4.write_data(out_va, 42))
    assert struct.unpack_from("<I", bytes(soc.gpu.phys.vram[out_pa:out_pa + 4]))[0] == 42


def test_gfx9_sq_interrupts_encode_as_amdgpus_kfd_reads_them():
    ctx0, ctx1 = hwih.sq9_context(hwih.SqEncoding.ERROR, hwih.SqError.MEMVIOL << 20)
    data = hwih.sq9_data(ctx0, ctx1)
    assert (ctx0 >> 26) & 3 == hwih.SqEncoding.ERROR and (data >> 20) & 0xF == hwih.SqError.MEMVIOL
    # tinygrad's own decoding of a gfx9 SQ entry (AM_IH.interrupt_handler): encoding bits 27:26 of ctx0, the error
    # type bits 23:20 of the spread data
    assert ((ctx0 & 0xFFF) | ((ctx0 >> 16) & 0xF000) | ((ctx1 << 16) & 0xFF0000)) >> 20 & 0xF == 2
    assert hwih.sq9_data(*hwih.sq9_context(hwih.SqEncoding.INST, 0xABCDEF)) == 0xABCDEF


def test_an_xccs_hqd_that_disagrees_with_the_aql_queue_it_shares_is_refused(arch):
    from simgpu.soc.regfile import MMIOError
    adev, soc = _boot(arch)
    ring_va, _ = _buf(adev, 0x1000)
    other_va, _ = _buf(adev, 0x1000)
    ptr_va, _ = _buf(adev, 0x1000)
    eop_va, _ = _buf(adev, 0x1000)
    adev.gfx.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, eop_va, 0x1000, idx=0, aql=True)
    adev.gfx._grbm_select(me=1, pipe=0, queue=0, inst=3)  # XCC 3 re-activated on another ring
    adev.regCP_HQD_ACTIVE.write(0, inst=3)
    adev.regCP_HQD_PQ_BASE.write((other_va >> 8) & 0xFFFFFFFF, inst=3)
    mqd = adev.gfx.mqd_paddr[0] + 3 * 0x1000 + mqd_v9.offset("cp_hqd_pq_base_lo")  # and its MQD agrees
    soc.gpu.phys.vram[mqd:mqd + 4] = memoryview(struct.pack("<I", (other_va >> 8) & 0xFFFFFFFF)).cast("B")
    with pytest.raises(MMIOError, match="XCC 3's HQD shares XCC 0's AQL queue slot but not its ring"):
        adev.regCP_HQD_ACTIVE.write(1, inst=3)


def test_the_psp_splits_the_xccs_only_into_one_partition(arch):
    adev, soc = _boot(arch)
    with pytest.raises(RuntimeError, match="PSP command failed"):
        adev.psp._spatial_partition_cmd(8)  # CPX: eight partitions
    assert soc.psp.partitions == 1 and "8 partitions" in soc.psp.errors[-1]


def test_mp_13_0_12_takes_tinygrads_own_tmr_and_answers_13_0_6s_messages(booted, arch):
    """What differs between the two parts' PSP and SMU as tinygrad drives them: on MP0 13.0.6 it sends SETUP_TMR of
    nothing (the PSP's boot-time TMR), on 13.0.12 its own 1 MiB-aligned TMR buffer; both SMUs answer the frequency
    queries of UCLK, FCLK and SOCCLK (no GFXCLK on either) with 13.0.6's message numbers, and neither loads an
    SMU image (13.0.6's P2S pptable is no image)."""
    adev, soc = booted
    mc, size = soc.psp.tmr
    assert size == 0 and (mc != 0) == (arch == "gfx950") and mc % (1 << 20) == 0
    assert "SMU" not in soc.psp.firmware and soc.smu.v13_6 and not soc.smu.unknown
    clocks = {hwsmu.Clock13_6(c).name for c in soc.smu.soft_limits}
    assert clocks == {"UCLK", "FCLK", "SOCCLK"}


def test_a_second_tinygrad_session_on_mi350x_boots_partially_even_from_an_unclean_state():
    """tinygrad's GC 9.5.0 rule: a device whose SCRATCH_REG7 says AM booted it is only partially re-booted (GFX and
    SDMA), even when SCRATCH_REG6 says the last session did not finish (a full boot over live state can hang
    MI350's fabric); MI300X's driver resets such a device through the SMU instead. Either way the device works."""
    for arch, partial in (("gfx942", False), ("gfx950", True)):
        adev, soc = _boot(arch)
        assert adev.reg("regSCRATCH_REG6").read() == 1  # the session never ran fini
        again, _ = boot(soc)
        assert again.partial_boot is partial, arch
        queue = _pm4_queue(again, soc)
        out_va, out_pa = _buf(again, 0x1000)
        _submit(again, soc, queue, pm4.write_data(out_va, 0x950))
        assert struct.unpack_from("<I", bytes(soc.gpu.phys.vram[out_pa:out_pa + 4]))[0] == 0x950, arch


def test_tinygrads_unmodelled_register_list_is_the_same_on_both_parts(capsys):
    """tools/am_unmodelled.py: the registers tinygrad touches that the device only stores are MI300X's on MI350X
    too (tinygrad takes the same paths on GC 9.4.3 and 9.5.0 once booted; docs/device.md lists them)."""
    lists = {}
    for arch in sorted(PARTS):
        am_unmodelled.main(arch)
        lists[arch] = capsys.readouterr().out
    assert lists["gfx942"] == lists["gfx950"]
    assert "XCC_DOORBELL_FENCE" in lists["gfx950"] and "SDMA_GFX_IB_CNTL" in lists["gfx950"]
