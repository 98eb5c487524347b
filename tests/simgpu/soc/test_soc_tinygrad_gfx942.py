"""MI300X (gfx942, GC 9.4.3) over AM, driven by tinygrad's AM driver (PyPI tinygrad 0.14.0, unmodified) in this
process: it boots the simulated PCI function -- MI300X's discovery binary, NBIO 7.9 (the SMN window to the other
AIDs), four MM hubs and eight GC hubs with gfx9 translate-further page tables, the IH, PSP 13.0.6 (the gfx9 firmware
containers, the register list, SRIOV_SPATIAL_PART), SMU 13.0.6, the eight XCCs' MECs, sixteen SDMA 4.4.2 engines --
then sets up an AQL queue over all eight XCCs, a PM4 queue, an SDMA ring, and reads SOC15 IH entries with its own
macros. (tests/wiring/test_run_tinygrad_am.py runs tinygrad's whole AM backend on it under `simgpu run --am`.)"""

import struct

import pytest

from simgpu.gpu import GPU
from simgpu.hw import ih as hwih
from simgpu.hw import pm4, pm4_gfx9, sdma, soc15
from simgpu.hw.mqd import V9MQD as mqd_v9
from simgpu.soc import SOC
from tests.support.am_tinygrad import boot

am = pytest.importorskip("tinygrad.runtime.autogen.am.am")
GFX9_FIRMWARE = {"CP_MEC", "CP_MEC_ME1", "SDMA0", "SDMA1", "SDMA2", "SDMA3", "RLC_G", "RLC_RESTORE_LIST_SRM_CNTL",
                 "RLC_RESTORE_LIST_GPM_MEM", "RLC_RESTORE_LIST_SRM_MEM", "P2S_TABLE", "REG_LIST"}


def _boot():
    return boot(SOC(GPU(vram_size=1 << 30, arch="gfx942")))  # (tinygrad reserves 384 MiB on GC 9.4)


@pytest.fixture(scope="module")
def booted():
    return _boot()


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


def test_tinygrad_boots_mi300x_over_am(booted):
    adev, soc = booted
    assert adev.ip_ver[am.GC_HWIP] == (9, 4, 3) and adev.ip_ver[am.MP0_HWIP] == (13, 0, 6)
    assert adev.gfx.xccs == 8 and adev.aids == [0, 1, 2, 3]
    assert soc.psp.sos_alive and not soc.psp.autoloaded  # gfx9: the RLC is loaded, not autoloaded
    assert GFX9_FIRMWARE <= set(soc.psp.firmware)
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


def test_an_sdma_4_4_2_ring_copies_and_traps_through_its_engines_client(booted):
    adev, soc = booted
    ring_va, ring_pa = _buf(adev, 0x1000)
    ptr_va, ptr_pa = _buf(adev, 0x1000)
    buf_va, buf_pa = _buf(adev, 0x2000)
    vram = soc.gpu.phys.vram
    vram[buf_pa:buf_pa + 16] = memoryview(b"simulated mi300x").cast("B")
    doorbell = adev.sdma.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, idx=0)
    assert soc.sdma.queues[0].engine == 0
    cmds = sdma.copy_linear(buf_va + 0x1000, buf_va, 16, major=4) + sdma.fence(buf_va + 0x1800, 0xFEED, major=4) + \
        sdma.trap(5)
    _put(soc, ring_pa, cmds)
    vram[ptr_pa + 8:ptr_pa + 16] = memoryview(struct.pack("<Q", 4 * len(cmds))).cast("B")
    adev.doorbell64[doorbell] = 4 * len(cmds)  # SDMA pointers count bytes
    assert bytes(vram[buf_pa + 0x1000:buf_pa + 0x1010]) == b"simulated mi300x"
    assert struct.unpack_from("<I", bytes(vram[buf_pa + 0x1800:buf_pa + 0x1804]))[0] == 0xFEED
    traps = [e for e in _ih_entries(adev) if am.SOC15_SOURCE_ID_FROM_IH_ENTRY(e) == am.SDMA0_4_0__SRCID__SDMA_TRAP]
    assert traps and am.SOC15_CLIENT_ID_FROM_IH_ENTRY(traps[-1]) == am.SOC15_IH_CLIENTID_SDMA0
    assert am.SOC15_CONTEXT_ID0_FROM_IH_ENTRY(traps[-1]) == 5
    assert adev.soc.ih_srcs_names[am.SOC15_IH_CLIENTID_SDMA0][am.SDMA0_4_0__SRCID__SDMA_TRAP] == "SDMA_TRAP"
    adev.ih.interrupt_handler()  # tinygrad skips SDMA_TRAP entries
    assert not adev.is_err_state


def test_a_page_fault_is_a_utcl2_entry_tinygrad_reads_back_then_recovers(capsys):
    adev, soc = _boot()  # a device of its own: tinygrad gives every compute ring the same doorbell
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


def test_an_xccs_hqd_that_disagrees_with_the_aql_queue_it_shares_is_refused():
    from simgpu.soc.regfile import MMIOError
    adev, soc = _boot()
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


def test_the_psp_splits_the_xccs_only_into_one_partition():
    adev, soc = _boot()
    with pytest.raises(RuntimeError, match="PSP command failed"):
        adev.psp._spatial_partition_cmd(8)  # CPX: eight partitions
    assert soc.psp.partitions == 1 and "8 partitions" in soc.psp.errors[-1]
