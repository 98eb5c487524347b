"""simgpu.soc driven by a driver nobody here wrote: tinygrad's AM driver (PyPI tinygrad 0.14.0, unmodified) boots the
emulated PCI function -- IP discovery, GMC, IH, PSP with the (synthetic) firmware set, SMU, RLC, MEC, SDMA -- then
runs a PM4 compute queue and an SDMA ring it set up by MQD/HQD and register programming, and reads the IH ring with
its own SOC15 entry macros (amdgpu_ih.h's, in tinygrad's autogen). On gfx1100 (Navi 31) and gfx1201 (Navi 48: its
gfx12 register map, page tables and firmware)."""

import struct

import pytest

from simgpu.gpu import GPU
from simgpu.hw import ih as hwih
from simgpu.hw import pm4, sdma
from simgpu.soc import SOC
from tests.support.am_tinygrad import boot

am = pytest.importorskip("tinygrad.runtime.autogen.am.am")
# (GC, MP0) versions each part's discovery table gives, and the firmware only that part loads
PARTS = {"gfx1100": ((11, 0, 0), (13, 0, 0), set()), "gfx1201": ((12, 0, 1), (14, 0, 3), {"RS64_PFP", "RS64_ME"})}


@pytest.fixture(scope="module", params=sorted(PARTS))
def arch(request):
    return request.param


def _boot(arch: str):
    return boot(SOC(GPU(vram_size=512 << 20, arch=arch)))


@pytest.fixture(scope="module")
def booted(arch):
    return _boot(arch)


def _ring(adev, size: int):
    """A GPU buffer in VMID 0 (tinygrad's allocator and page tables): (GPU VA, VRAM offset)."""
    vm = adev.mm.valloc(size, contiguous=True)
    return vm.va_addr, vm.paddrs[0][0]


def _ih_entries(adev, soc) -> list[list[int]]:
    """The IH ring's entries between tinygrad's rptr and the device's wptr, as dwords."""
    wptr = adev.regIH_RB_WPTR.read_bitfields()["offset"]
    rptr = adev.regIH_RB_RPTR.read()
    ring = adev.ih.ring_view
    size = adev.ih.ring_size // 4
    out = []
    while rptr != wptr:
        out.append([ring[(rptr + i) % size] for i in range(8)])
        rptr = (rptr + 8) % size
    return out


def test_tinygrad_boots_the_device_and_loads_every_firmware_through_the_psp(booted, arch):
    adev, soc = booted
    gc, mp0, own = PARTS[arch]
    assert adev.ip_ver[am.GC_HWIP] == gc and adev.ip_ver[am.MP0_HWIP] == mp0
    assert adev.vram_size == soc.gpu.phys.vram_size
    assert soc.psp.sos_alive and soc.psp.autoloaded
    assert {"SMU", "RS64_MEC", "SDMA_UCODE_TH0", "RLC_G", "IMU_I", "TOC"} | own <= set(soc.psp.firmware)
    assert soc.smu.features and not soc.smu.unknown
    assert soc.gchub.enabled[0] and soc.mmhub.enabled[0]
    assert adev.reg("regSCRATCH_REG7").read() == adev.Version  # its "booted by AM" mark, kept in the register
    assert not soc.bus_errors, soc.bus_errors


def test_a_pm4_queue_tinygrad_activates_from_its_mqd_runs_and_interrupts(booted):
    adev, soc = booted
    ring_va, ring_pa = _ring(adev, 0x1000)
    ptr_va, ptr_pa = _ring(adev, 0x1000)
    eop_va, _ = _ring(adev, 0x1000)
    out_va, out_pa = _ring(adev, 0x1000)
    doorbell = adev.gfx.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, eop_va, 0x1000, idx=0, aql=False)
    assert [q for q in soc.gpu.queues if q.name == "hqd1.0.0"], soc.describe()
    cmds = pm4.write_data(out_va, 0x1234, 0x5678) + \
        pm4.release_mem(out_va + 8, 0xC0FFEE, int_sel=pm4.IntSel.INT_AFTER_WRITE, ctx_id=77)
    vram = soc.gpu.phys.vram
    vram[ring_pa:ring_pa + 4 * len(cmds)] = memoryview(struct.pack(f"<{len(cmds)}I", *cmds)).cast("B")
    vram[ptr_pa + 8:ptr_pa + 16] = memoryview(struct.pack("<Q", len(cmds))).cast("B")
    adev.doorbell64[doorbell] = len(cmds)
    assert struct.unpack_from("<3I", bytes(vram[out_pa:out_pa + 12])) == (0x1234, 0x5678, 0xC0FFEE)
    assert struct.unpack_from("<Q", bytes(vram[ptr_pa:ptr_pa + 8]))[0] == len(cmds)  # rptr reported
    entries = [e for e in _ih_entries(adev, soc) if am.SOC15_SOURCE_ID_FROM_IH_ENTRY(e) == hwih.Source.CP_EOP_INTERRUPT]
    assert entries, soc.describe()
    e = entries[-1]
    assert am.SOC15_CLIENT_ID_FROM_IH_ENTRY(e) == am.SOC15_IH_CLIENTID_GRBM_CP
    assert adev.soc.ih_srcs_names[am.SOC15_IH_CLIENTID_GRBM_CP][181] == "CP_EOP_INTERRUPT"  # its own header's name
    assert am.SOC15_RING_ID_FROM_IH_ENTRY(e) == hwih.CP_RING_ID.pack(me=1, pipe=0, queue=0)
    assert am.SOC15_CONTEXT_ID0_FROM_IH_ENTRY(e) == 77
    adev.ih.drain()  # (its interrupt_handler would call this entry an error: it skips only "CP_EOP_INTR")
    assert not _ih_entries(adev, soc)


def test_an_sdma_ring_tinygrad_sets_up_copies_and_traps(booted):
    adev, soc = booted
    ring_va, ring_pa = _ring(adev, 0x1000)
    ptr_va, ptr_pa = _ring(adev, 0x1000)
    buf_va, buf_pa = _ring(adev, 0x2000)
    vram = soc.gpu.phys.vram
    vram[buf_pa:buf_pa + 16] = memoryview(b"simulated gfx11!").cast("B")
    doorbell = adev.sdma.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, idx=0)
    cmds = sdma.copy_linear(buf_va + 0x1000, buf_va, 16) + sdma.fence(buf_va + 0x1800, 0xFEED) + sdma.trap(5)
    vram[ring_pa:ring_pa + 4 * len(cmds)] = memoryview(struct.pack(f"<{len(cmds)}I", *cmds)).cast("B")
    wptr = 4 * len(cmds)  # SDMA pointers count bytes
    vram[ptr_pa + 8:ptr_pa + 16] = memoryview(struct.pack("<Q", wptr)).cast("B")
    adev.doorbell64[doorbell] = wptr
    assert bytes(vram[buf_pa + 0x1000:buf_pa + 0x1010]) == b"simulated gfx11!"
    assert struct.unpack_from("<I", bytes(vram[buf_pa + 0x1800:buf_pa + 0x1804]))[0] == 0xFEED
    traps = [e for e in _ih_entries(adev, soc) if am.SOC15_SOURCE_ID_FROM_IH_ENTRY(e) == hwih.Source.SDMA_TRAP]
    assert traps and am.SOC15_CONTEXT_ID0_FROM_IH_ENTRY(traps[-1]) == 5
    assert adev.soc.ih_srcs_names[am.SOC15_CLIENT_ID_FROM_IH_ENTRY(traps[-1])][hwih.Source.SDMA_TRAP] == "SDMA_TRAP"
    adev.ih.interrupt_handler()  # tinygrad skips SDMA_TRAP entries
    assert not adev.is_err_state


def test_a_page_fault_reaches_tinygrad_as_a_utcl2_entry_and_the_fault_registers(capsys, arch):
    adev, soc = _boot(arch)  # a device of its own: tinygrad gives every compute ring the same doorbell
    ring_va, ring_pa = _ring(adev, 0x1000)
    ptr_va, ptr_pa = _ring(adev, 0x1000)
    eop_va, _ = _ring(adev, 0x1000)
    doorbell = adev.gfx.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, eop_va, 0x1000, idx=0, aql=False)
    bad = 0x7FFF_0000_0000  # never mapped in VMID 0
    cmds = pm4.write_data(bad, 1)
    vram = soc.gpu.phys.vram
    vram[ring_pa:ring_pa + 4 * len(cmds)] = memoryview(struct.pack(f"<{len(cmds)}I", *cmds)).cast("B")
    vram[ptr_pa + 8:ptr_pa + 16] = memoryview(struct.pack("<Q", len(cmds))).cast("B")
    adev.doorbell64[doorbell] = len(cmds)
    faults = [e for e in _ih_entries(adev, soc) if am.SOC15_SOURCE_ID_FROM_IH_ENTRY(e) == hwih.Source.UTCL2_FAULT]
    assert faults, soc.describe()
    assert hwih.vm_fault_address(hwih.Entry.unpack(struct.pack("<8I", *faults[-1]))) == bad
    adev.ih.interrupt_handler()  # reads GCVM_L2_PROTECTION_FAULT_STATUS/ADDR and clears them
    printed = capsys.readouterr().out
    assert "UTCL2_FAULT" in printed and f"{bad:#x}" in printed, printed
    assert adev.is_err_state
    # cleared by its CLEAR_PROTECTION_FAULT_STATUS_ADDR (on gfx1201 the name reaches ..._STATUS_LO32)
    assert soc.regs.get("GCVM_L2_PROTECTION_FAULT_STATUS") == 0
    adev.recover()  # tinygrad's recovery: drain the IH, reset the MEC (its queues go)
    assert not adev.is_err_state and not soc.cp.queues
    out_va, out_pa = _ring(adev, 0x1000)  # the device is usable afterwards: a new queue runs
    doorbell = adev.gfx.setup_ring(ring_va, 0x1000, ptr_va, ptr_va + 8, eop_va, 0x1000, idx=0, aql=False)
    cmds = pm4.write_data(out_va, 42)
    vram[ring_pa:ring_pa + 4 * len(cmds)] = memoryview(struct.pack(f"<{len(cmds)}I", *cmds)).cast("B")
    adev.doorbell64[doorbell] = len(cmds)
    assert struct.unpack_from("<I", bytes(vram[out_pa:out_pa + 4]))[0] == 42
