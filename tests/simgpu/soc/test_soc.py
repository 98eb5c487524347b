"""simgpu.soc's own behaviour through BAR5/BAR2 (register names and offsets from the amdgpu headers, checked against
tinygrad's autogen in tests/simgpu/hw): reset values, unknown registers, VM contexts, HQD activation from an MQD,
SDMA rings, the IH ring, the PSP bootloader and GPCOM ring, the SMU mailbox -- and the bring-up mistakes each named
by the register or packet that made them. Where a state needs a booted device, tinygrad's AM driver boots it."""

import itertools
import struct

import pytest

from simgpu.hw import discovery, ucode
from simgpu.hw import ih as hwih
from simgpu.hw import psp as hwpsp
from simgpu.hw import smu as hwsmu
from simgpu.hw.soc21 import mp
from simgpu.soc import MMIOError
from simgpu.soc.gmc import FB_BASE
from simgpu.soc.pci import SYSTEM_ADDRESS_BITS, PCIEndpoint
from tests.support.am_tinygrad import boot, device


def w(soc, name: str, value: int) -> None:
    soc.mmio_write(soc.regs.addr(name) * 4, value)


def r(soc, name: str) -> int:
    return soc.mmio_read(soc.regs.addr(name) * 4)


@pytest.fixture(scope="module")
def booted():
    return boot()


# ---- the register file ------------------------------------------------------------------------------------------
def test_memsize_is_at_the_fixed_dword_drivers_read_first():
    soc = device(256 << 20)
    assert soc.mmio_read(0xDE3 * 4) == 256  # mmRCC_CONFIG_MEMSIZE, MiB


def test_discovery_table_sits_64_kib_below_the_top_of_vram_and_parses():
    soc = device()
    table = soc.gpu.phys.read(soc.discovery_offset, 10 << 10)
    parsed = discovery.parse_table(table)
    assert soc.discovery_offset == soc.gpu.phys.vram_size - (64 << 10)
    gc = next(b for b in parsed.blocks if b.name == "GC")
    assert gc.version == (11, 0, 0)
    # the registers answer at the bases the table lists (the hw tests check the table against tinygrad's parser)
    assert soc.regs.addr("CP_HQD_ACTIVE") == gc.bases[0] + 0x1FAB


def test_an_unknown_register_read_faults_with_its_block_and_a_write_is_kept_and_described():
    soc = device()
    gc_base = soc.regs.map.bases["GC"][0]
    hole = gc_base + 0x1FB9  # the unnamed dword between CP_HQD_PQ_DOORBELL_CONTROL and CP_HQD_PQ_CONTROL
    with pytest.raises(MMIOError, match=r"unknown register: dword .*GC segment 0 \+ 0x1fb9"):
        soc.mmio_read(hole * 4)
    soc.mmio_write(hole * 4, 0xABCD)
    soc.mmio_write(hole * 4, 0x1234)
    assert any("unknown register written" in line and "0x00001234 (2 writes)" in line for line in soc.describe())
    assert soc.mmio_peek(hole * 4) == 0x1234


def test_a_declared_but_unmodelled_register_is_storage_with_its_reset_value():
    soc = device()
    assert r(soc, "GCVM_INVALIDATE_ENG3_SEM") == 1  # the reset the declaration gives (semaphore free)
    w(soc, "TCP_CNTL", 0x55)
    assert r(soc, "TCP_CNTL") == 0x55
    assert "TCP_CNTL" in soc.regs.unmodelled_touched()


def test_misaligned_and_out_of_range_mmio_is_refused():
    soc = device()
    with pytest.raises(MMIOError, match="aligned 32-bit"):
        soc.mmio_read(2)
    with pytest.raises(MMIOError, match="aligned 32-bit"):
        soc.mmio_write(1 << 20, 0)


# ---- VM contexts ------------------------------------------------------------------------------------------------
def test_a_vm_context_enabled_without_a_page_table_names_the_registers():
    soc = device()
    with pytest.raises(MMIOError, match=r"GCVM_CONTEXT1_CNTL: VM context 1 enabled without a page table: "
                                        r"GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32"):
        w(soc, "GCVM_CONTEXT1_CNTL", 1 | 3 << 1)
    assert not soc.gchub.enabled[1]


def test_a_vm_context_with_the_wrong_depth_or_an_empty_range_is_refused():
    soc = device()
    w(soc, "GCVM_CONTEXT2_PAGE_TABLE_BASE_ADDR_LO32", 0x10_0000 | 1)
    with pytest.raises(MMIOError, match="PAGE_TABLE_DEPTH 1"):
        w(soc, "GCVM_CONTEXT2_CNTL", 1 | 1 << 1)
    w(soc, "GCVM_CONTEXT2_PAGE_TABLE_START_ADDR_LO32", 0x100)
    with pytest.raises(MMIOError, match="empty range"):
        w(soc, "GCVM_CONTEXT2_CNTL", 1 | 3 << 1)


def test_a_context_translates_from_its_start_address_and_invalidation_acks(booted):
    adev, soc = booted
    vm = adev.mm.valloc(0x1000, contiguous=True)  # tinygrad maps it in VMID 0, whose range starts at 0x2000_0000_0000
    soc.gpu.phys.vram[vm.paddrs[0][0]:vm.paddrs[0][0] + 4] = memoryview(b"gfx!").cast("B")
    assert soc.gpu.mmu.read(0, vm.va_addr, 4) == b"gfx!"
    assert r(soc, "GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32") == 0x2  # page 0x2_0000_0000
    w(soc, "GCVM_INVALIDATE_ENG5_REQ", 1 << 3)
    assert r(soc, "GCVM_INVALIDATE_ENG5_ACK") & (1 << 3)


def test_the_system_aperture_maps_the_frame_buffer_for_vmid_0(booted):
    adev, soc = booted
    soc.gpu.phys.vram[0x7000:0x7004] = memoryview(b"phys").cast("B")
    assert soc.gpu.mmu.read(0, FB_BASE + 0x7000, 4) == b"phys"


# ---- queues ---------------------------------------------------------------------------------------------------
def _select(soc, pipe: int, queue: int) -> None:
    w(soc, "GRBM_GFX_CNTL", 1 << 2 | pipe | queue << 8)


def test_a_queue_activated_before_its_mqd_is_valid_is_refused_naming_cp_mqd_base_addr(booted):
    adev, soc = booted
    _select(soc, 2, 5)
    with pytest.raises(MMIOError, match=r"CP_HQD_ACTIVE \(ME 1 pipe 2 queue 5\): queue activated before its MQD is "
                                        r"valid: CP_MQD_BASE_ADDR is 0"):
        w(soc, "CP_HQD_ACTIVE", 1)
    assert r(soc, "CP_HQD_ACTIVE") == 0
    pa = adev.mm.palloc(0x1000, zero=True)
    w(soc, "CP_MQD_BASE_ADDR", (FB_BASE + pa) & 0xFFFFFFFF)
    w(soc, "CP_MQD_BASE_ADDR_HI", (FB_BASE + pa) >> 32)
    with pytest.raises(MMIOError, match=r"has header 0x00000000, not the v11/v12 compute MQD's 0xc0310800"):
        w(soc, "CP_HQD_ACTIVE", 1)
    _select(soc, 0, 0)


def test_an_sdma_ring_on_a_disabled_vm_context_is_refused(booted):
    adev, soc = booted
    w(soc, "SDMA0_QUEUE0_RB_BASE", 0x100)
    with pytest.raises(MMIOError, match=r"SDMA0_QUEUE0_RB_CNTL: RB_ENABLE refused: RB_VMID 7: that VM context is not "
                                        r"enabled \(GCVM_CONTEXT7_CNTL\)"):
        w(soc, "SDMA0_QUEUE0_RB_CNTL", 1 | 10 << 1 | 7 << 24)


def test_an_sdma_ring_before_its_firmware_is_refused():
    soc = device()
    with pytest.raises(MMIOError, match="SDMA0 has no firmware"):
        w(soc, "SDMA0_QUEUE0_RB_CNTL", 1)


def test_a_compute_queue_before_the_mec_firmware_is_refused():
    soc = device()
    _select(soc, 0, 0)
    with pytest.raises(MMIOError, match=r"MEC firmware was not loaded \(PSP LOAD_IP_FW RS64_MEC\)"):
        w(soc, "CP_HQD_ACTIVE", 1)


# ---- IH -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("address,write", [(0x7FFF_0000_3000, True), (0x1234_5678_9000, False), (0, False)])
def test_vm_fault_context_ids_round_trip_the_page_address(address, write):
    entry = hwih.Entry(hwih.Client.GFX, hwih.Source.UTCL2_FAULT, context=(*hwih.vm_fault_context(address, write), 0, 0))
    again = hwih.Entry.unpack(entry.pack())
    assert hwih.vm_fault_address(again) == address
    assert hwih.FAULT_CTX1.write.get(again.context[1]) == write


def test_the_ih_drops_entries_while_its_ring_is_off():
    soc = device()
    assert not soc.ih.post(hwih.Entry(hwih.Client.GFX, hwih.Source.SDMA_TRAP))
    assert soc.ih.dropped == 1


def test_a_full_ih_ring_sets_overflow_until_cleared(booted):
    adev, soc = booted
    adev.ih.drain()
    rptr = r(soc, "IH_RB_WPTR") & 0x3FFFC
    w(soc, "IH_RB_RPTR", (rptr + hwih.ENTRY_SIZE) % soc.ih.size)  # one entry of room: the ring is "full" at once
    assert not soc.ih.post(hwih.Entry(hwih.Client.GFX, hwih.Source.SDMA_TRAP))
    assert r(soc, "IH_RB_WPTR") & 1  # RB_OVERFLOW
    adev.ih.drain()  # tinygrad clears it the way amdgpu does: WPTR_OVERFLOW_CLEAR
    assert not r(soc, "IH_RB_WPTR") & 1


# ---- PSP ------------------------------------------------------------------------------------------------------
def _c2p(n: int) -> str:
    return mp.MP0_C2PMSG[n].name


def test_the_sos_before_the_system_driver_is_refused_and_the_bootloader_stays_busy():
    soc = device()
    soc.gpu.phys.write(1 << 20, b"\x01" * 4096)
    w(soc, _c2p(mp.PSP_BL_FW_ADDR), (FB_BASE + (1 << 20)) >> 20)
    with pytest.raises(MMIOError, match="LOAD_SOSDRV before LOAD_SYSDRV"):
        w(soc, _c2p(mp.PSP_BL_CMD), hwpsp.BootloaderCmd.LOAD_SOSDRV)
    assert not r(soc, _c2p(mp.PSP_BL_CMD)) & hwpsp.BL_READY  # a driver's wait for bit 31 times out


def test_an_empty_component_and_an_unknown_bootloader_command_are_named():
    soc = device()
    w(soc, _c2p(mp.PSP_BL_FW_ADDR), (FB_BASE + (2 << 20)) >> 20)
    with pytest.raises(MMIOError, match=r"LOAD_SYSDRV: the component buffer .* is empty"):
        w(soc, _c2p(mp.PSP_BL_CMD), hwpsp.BootloaderCmd.LOAD_SYSDRV)
    with pytest.raises(MMIOError, match="not a bootloader command"):
        w(soc, _c2p(mp.PSP_BL_CMD), 0x1234)


def test_the_gpcom_ring_needs_the_sos():
    soc = device()
    with pytest.raises(MMIOError, match="C2PMSG_64 .* before the sOS runs"):
        w(soc, _c2p(mp.PSP_RING_CMD), hwpsp.PSP_RING_TYPE_KM << 16)


def test_firmware_with_a_bad_header_fails_its_load_ip_fw_naming_the_firmware():
    fw = ucode.synthetic_set()
    bad = bytearray(fw["gc_11_0_0_mec.bin"])
    struct.pack_into("<I", bad, 24, 1 << 20)  # ucode_array_offset_bytes past the end of the file
    fw["gc_11_0_0_mec.bin"] = bytes(bad)
    with pytest.raises(ucode.FirmwareError, match=r"ucode_array_offset_bytes \(byte 24\)"):
        ucode.check("gc_11_0_0_mec.bin", fw["gc_11_0_0_mec.bin"])
    soc = device()
    with pytest.raises(RuntimeError, match="PSP command failed 6 1"):  # tinygrad: cmd LOAD_IP_FW, status 1
        boot(soc, fw)
    assert any("LOAD_IP_FW RS64_MEC" in e for e in soc.psp.errors), soc.psp.errors
    assert any("PSP error: LOAD_IP_FW RS64_MEC" in line for line in soc.describe())


def test_a_whole_firmware_file_handed_to_load_ip_fw_is_refused(booted):
    adev, soc = booted
    blob = ucode.synthetic_set()["sdma_6_0_0.bin"]
    with pytest.raises(RuntimeError, match="PSP command failed"):
        adev.psp._load_ip_fw_cmd([hwpsp.FW_TYPE["SDMA_UCODE_TH0"]], memoryview(bytearray(blob)))
    assert "holds a whole firmware file" in soc.psp.errors[-1]


# ---- SMU ------------------------------------------------------------------------------------------------------
def _smu(soc, msg: int, arg: int = 0) -> tuple[int, int]:
    w(soc, mp.MP1_C2PMSG[mp.SMU_RESP].name, 0)
    w(soc, mp.MP1_C2PMSG[mp.SMU_ARG].name, arg)
    w(soc, mp.MP1_C2PMSG[mp.SMU_MSG].name, msg)
    return r(soc, mp.MP1_C2PMSG[mp.SMU_RESP].name), r(soc, mp.MP1_C2PMSG[mp.SMU_ARG].name)


def test_the_smu_is_silent_until_its_firmware_is_loaded():
    soc = device()
    assert _smu(soc, hwsmu.Msg.TestMessage, 41) == (0, 41)


def test_the_smu_mailbox_answers_messages(booted):
    adev, soc = booted
    assert _smu(soc, hwsmu.Msg.TestMessage, 41) == (hwsmu.Result.OK, 42)
    assert _smu(soc, hwsmu.Msg.GetDpmFreqByIndex, hwsmu.Clock.GFXCLK << 16 | 0xFF) == (hwsmu.Result.OK, 2)
    assert _smu(soc, 0x77)[0] == hwsmu.Result.UnknownCmd
    assert 0x77 in soc.smu.unknown


# ---- doorbells --------------------------------------------------------------------------------------------------
def test_doorbells_are_dropped_while_the_aperture_is_off():
    soc = device()
    soc.doorbell_write(0x18, 5)
    assert soc.dropped_doorbells == 1 and "RCC_DOORBELL_APER_EN" in soc.bus_errors[-1]
    w(soc, "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN", 1)
    soc.doorbell_write(0x18, 5)
    assert soc.doorbell_read(0x18) == 5


def test_every_gpus_vram_bar_is_a_system_address_a_gfx11_gpu_reaches():
    """A peer reaches a GPU's VRAM at its BAR0 bus address: inside 44 bits (tinygrad's AM driver refuses a
    page-table entry beyond), one window per GPU, for 64 GPUs of 128 GiB."""
    bars = [PCIEndpoint(i, 128 << 30).bars[0] for i in range(64)]
    assert all(b.address + b.size <= 1 << SYSTEM_ADDRESS_BITS for b in bars)
    assert all(a.address + a.size <= b.address for a, b in itertools.pairwise(bars))
    with pytest.raises(ValueError, match="at most"):
        PCIEndpoint(0, 256 << 30)
