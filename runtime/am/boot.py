"""The AM bring-up: what a userspace driver does to a gfx1100 from power-on to running queues, step by step
(docs/device.md "AM bring-up" lists it register by register as the device sees it).

1. discovery: RCC_CONFIG_MEMSIZE, the IP discovery table at the top of VRAM -> register bases;
2. NBIO: the doorbell aperture on;
3. GMC: both hubs' system aperture onto the frame buffer; the user VM context (its page table, range) enabled;
4. IH: ring 0 in VRAM with wptr write-back;
5. PSP: the bootloader loads the sOS components, the GPCOM ring comes up, then LOAD_TOC, SETUP_TMR and one LOAD_IP_FW
   per firmware part (SMU first), then AUTOLOAD_RLC;
6. SMU: its mailbox answers (GetSmuVersion), features on;
7. GFX/MEC: the RLC autoload done; the MEC's program counter set per pipe, out of halt; its doorbell range;
8. SDMA: both engines out of halt.
Every firmware file is checked (simgpu.hw.ucode) before anything is handed to the PSP: a bad header is a
FirmwareError naming the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.am.pci import BringUpError, PCIFunction
from runtime.am.vram import PageTables, VRAMAllocator, Window
from simgpu.hw import psp as hwpsp
from simgpu.hw import smu as hwsmu
from simgpu.hw import ucode
from simgpu.hw.soc21 import gc, mp, oss

FIRMWARE_DIR = "/lib/firmware/amdgpu"
FIRMWARE_FILES = ("psp_13_0_0_sos.bin", "smu_13_0_0.bin", "sdma_6_0_0.bin", "gc_11_0_0_mec.bin",
                  "gc_11_0_0_imu.bin", "gc_11_0_0_rlc.bin")
USER_VMID = 8  # the VM context the runtime's queues run in (what amdkfd hands a process first)
RESERVED_LOW = 16 << 20  # VRAM kept from the allocators at the bottom (firmware scratch on real parts)
DRIVER_WINDOW = 16 << 20  # then the driver's own structures (rings, MQDs, page tables, PSP buffers), CPU-mapped
RESERVED_HIGH = 1 << 20  # ... and at the top: the discovery table's 64 KiB and what follows it
IH_RING_SIZE = 256 << 10
PSP_RING_SIZE = 0x1000
TMR_ALIGN = 1 << 20
MEC_DOORBELL_RANGE = (0x0, 0x7F8)  # byte offsets in BAR2 of the compute queues' doorbells (slots 0..255)
INVALIDATE_ENGINE = 17  # the hub invalidation engine the driver uses
# The sOS container's components in the order amdgpu's psp_hw_start loads them, and the bootloader command of each.
_BOOTLOADER = (("PSP_KDB", hwpsp.BootloaderCmd.LOAD_KEY_DATABASE), ("PSP_SPL", hwpsp.BootloaderCmd.LOAD_TOS_SPL_TABLE),
               ("PSP_SYS_DRV", hwpsp.BootloaderCmd.LOAD_SYSDRV), ("PSP_SOC_DRV", hwpsp.BootloaderCmd.LOAD_SOCDRV),
               ("PSP_INTF_DRV", hwpsp.BootloaderCmd.LOAD_INTFDRV), ("PSP_DBG_DRV", hwpsp.BootloaderCmd.LOAD_DBGDRV),
               ("PSP_RAS_DRV", hwpsp.BootloaderCmd.LOAD_RASDRV), ("PSP_SOS", hwpsp.BootloaderCmd.LOAD_SOSDRV))


@dataclass
class Booted:
    """What the bring-up leaves for the device: memory, page tables, the IH ring, firmware facts."""

    vram: VRAMAllocator  # buffers (and the TMR)
    window: Window  # the driver's own structures
    tables: PageTables
    fb_base: int  # MC address of VRAM byte 0
    ih_ring: int  # VRAM PA of the IH ring
    ih_wptr: int  # VRAM PA of its wptr write-back
    mec_start: int
    smu_version: int


def read_firmware(os_, name: str) -> bytes:
    """A firmware file's bytes from /lib/firmware/amdgpu through the seam."""
    fd = os_.open(f"{FIRMWARE_DIR}/{name}")
    try:
        data, pos = bytearray(), 0
        while chunk := os_.pread(fd, 1 << 20, pos):
            data += chunk
            pos += len(chunk)
        return bytes(data)
    finally:
        os_.close(fd)


def bring_up(dev: PCIFunction) -> Booted:
    """Run the whole AM bring-up on an opened PCI function."""
    files = {name: read_firmware(dev.os, name) for name in FIRMWARE_FILES}
    parts = {name: {p.name: p.data for p in ucode.check(name, data)} for name, data in files.items()}
    dev.discover()
    dev.wreg("RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN", 1)
    window = Window(dev, RESERVED_LOW, DRIVER_WINDOW)
    vram = VRAMAllocator(RESERVED_LOW + DRIVER_WINDOW, dev.vram_size - RESERVED_HIGH)
    tables = PageTables(window)
    fb_base = _gmc(dev, tables)
    ih_ring, ih_wptr = _ih(dev, window, fb_base)
    _psp(dev, window, vram, fb_base, parts)
    smu_version = _smu(dev)
    mec_start = ucode.mec_start_address(files["gc_11_0_0_mec.bin"])
    _gfx(dev, mec_start)
    _sdma(dev)
    return Booted(vram, window, tables, fb_base, ih_ring, ih_wptr, mec_start, smu_version)


# ---- GMC --------------------------------------------------------------------------------------------------------
def _gmc(dev: PCIFunction, tables: PageTables) -> int:
    fb_base = (dev.rreg("GCMC_VM_FB_LOCATION_BASE") & 0xFFFFFF) << 24
    fb_top = ((dev.rreg("GCMC_VM_FB_LOCATION_TOP") & 0xFFFFFF) << 24) | 0xFFFFFF
    for hub in ("GC", "MM"):
        dev.wreg(f"{hub}MC_VM_SYSTEM_APERTURE_LOW_ADDR", fb_base >> 18)
        dev.wreg(f"{hub}MC_VM_SYSTEM_APERTURE_HIGH_ADDR", fb_top >> 18)
    vm = f"GCVM_CONTEXT{USER_VMID}"
    dev.wreg64(f"{vm}_PAGE_TABLE_START_ADDR_LO32", f"{vm}_PAGE_TABLE_START_ADDR_HI32", 0)
    dev.wreg64(f"{vm}_PAGE_TABLE_END_ADDR_LO32", f"{vm}_PAGE_TABLE_END_ADDR_HI32", (1 << 36) - 1)
    dev.wreg64(f"{vm}_PAGE_TABLE_BASE_ADDR_LO32", f"{vm}_PAGE_TABLE_BASE_ADDR_HI32", tables.root_pde)
    dev.wreg_fields(f"{vm}_CNTL", enable_context=1, page_table_depth=3, range_protection_fault_enable_interrupt=1,
                    valid_protection_fault_enable_interrupt=1, read_protection_fault_enable_interrupt=1,
                    write_protection_fault_enable_interrupt=1, execute_protection_fault_enable_interrupt=1)
    flush_tlb(dev)
    return fb_base


def flush_tlb(dev: PCIFunction) -> None:
    """Invalidate the user VMID's translations on the GC hub (semaphore, request, wait for the ack)."""
    sem, req, ack = (f"GCVM_INVALIDATE_ENG{INVALIDATE_ENGINE}_{r}" for r in ("SEM", "REQ", "ACK"))
    dev.wait_reg(sem, 1, 1, "TLB invalidation semaphore")
    dev.wreg_fields(req, per_vmid_invalidate_req=1 << USER_VMID, invalidate_l2_ptes=1, invalidate_l2_pde0=1,
                    invalidate_l2_pde1=1, invalidate_l2_pde2=1, invalidate_l1_ptes=1)
    dev.wait_reg(ack, 1 << USER_VMID, 1 << USER_VMID, "TLB invalidation")
    dev.wreg(sem, 0)


# ---- IH ---------------------------------------------------------------------------------------------------------
def _ih(dev: PCIFunction, window: Window, fb_base: int) -> tuple[int, int]:
    ring, wptr = window.allocator.alloc(IH_RING_SIZE), window.allocator.alloc(4096)
    window.at(ring, IH_RING_SIZE)[:] = bytes(IH_RING_SIZE)
    dev.wreg64("IH_RB_BASE", "IH_RB_BASE_HI", (fb_base + ring) >> 8)
    dev.wreg64("IH_RB_WPTR_ADDR_LO", "IH_RB_WPTR_ADDR_HI", fb_base + wptr)
    dev.wreg("IH_RB_WPTR", 0)
    dev.wreg("IH_RB_RPTR", 0)
    dev.wreg("IH_RB_CNTL", oss.RB_CNTL.pack(rb_enable=1, rb_size=(IH_RING_SIZE // 4).bit_length() - 1,
                                            wptr_writeback_enable=1, wptr_overflow_enable=1))
    return ring, wptr


# ---- PSP --------------------------------------------------------------------------------------------------------
def _c2p(n: int) -> str:
    return mp.MP0_C2PMSG[n].name


def _psp(dev: PCIFunction, window: Window, vram: VRAMAllocator, fb_base: int,
         parts: dict[str, dict[str, bytes]]) -> None:
    buf = window.allocator.alloc(hwpsp.PSP_1_MEG, align=hwpsp.PSP_1_MEG)  # the firmware buffer, 1 MiB aligned
    sos = parts["psp_13_0_0_sos.bin"]
    for component, cmd in _BOOTLOADER:
        if component not in sos:
            continue
        dev.wait_reg(_c2p(mp.PSP_BL_CMD), hwpsp.BL_READY, hwpsp.BL_READY, f"PSP bootloader ready for {cmd.name}")
        _stage(window, buf, sos[component])
        dev.wreg(_c2p(mp.PSP_BL_FW_ADDR), (fb_base + buf) >> hwpsp.FW_ADDR_SHIFT)
        dev.wreg(_c2p(mp.PSP_BL_CMD), cmd)
    dev.wait_reg(_c2p(mp.PSP_BL_CMD), hwpsp.BL_READY, hwpsp.BL_READY, "PSP bootloader after LOAD_SOSDRV")
    if not dev.rreg(_c2p(mp.PSP_SOS_VERSION)):
        raise BringUpError(f"{dev.bdf}: the PSP's secure OS did not start ({_c2p(mp.PSP_SOS_VERSION)} is 0)")
    ring = GpcomRing(dev, window, fb_base)
    tmr_size = ring.submit(hwpsp.Cmd.LOAD_TOC, _load(hwpsp.LoadToc, fb_base + buf, sos["PSP_TOC"], window, buf,
                                                     "toc_phy_addr_lo", "toc_phy_addr_hi", "toc_size")).tmr_size
    tmr = vram.alloc(tmr_size, align=TMR_ALIGN)
    ring.submit(hwpsp.Cmd.SETUP_TMR, hwpsp.SetupTmr(buf_phy_addr_lo=(fb_base + tmr) & 0xFFFFFFFF,
                                                    buf_phy_addr_hi=(fb_base + tmr) >> 32, buf_size=tmr_size).pack())
    order = [("smu_13_0_0.bin", "SMU")] + [(f, p) for f in FIRMWARE_FILES[2:] for p in parts[f]]
    for name, part in order:
        data = parts[name][part]
        body = _load(hwpsp.LoadIpFw, fb_base + buf, data, window, buf, "fw_phy_addr_lo", "fw_phy_addr_hi", "fw_size",
                     fw_type=hwpsp.FW_TYPE[part])
        ring.submit(hwpsp.Cmd.LOAD_IP_FW, body, f"LOAD_IP_FW {part} ({name})")
    ring.submit(hwpsp.Cmd.AUTOLOAD_RLC, b"")


def _stage(window: Window, buf: int, data: bytes) -> None:
    if len(data) > hwpsp.PSP_1_MEG:
        raise BringUpError(f"a {len(data)}-byte firmware part does not fit the PSP's 1 MiB buffer")
    window.at(buf, hwpsp.PSP_1_MEG)[:] = data + bytes(hwpsp.PSP_1_MEG - len(data))


def _load(record, mc: int, data: bytes, window: Window, buf: int, lo: str, hi: str, size: str, **extra) -> bytes:
    """Stage `data` in the firmware buffer; the command body (`record`) pointing at it."""
    _stage(window, buf, data)
    return record(**{lo: mc & 0xFFFFFFFF, hi: mc >> 32, size: len(data)}, **extra).pack()


class GpcomRing:
    """The PSP's GPCOM ring: one 64-byte frame per command, pointing at a 1 KiB command buffer and a fence."""

    def __init__(self, dev: PCIFunction, window: Window, fb_base: int):
        self.dev, self.window, self.fb_base = dev, window, fb_base
        alloc = window.allocator.alloc
        self.ring, self.cmd, self.fence = alloc(PSP_RING_SIZE), alloc(4096), alloc(4096)
        self.wptr, self.fence_value = 0, 0
        dev.wait_reg(_c2p(mp.PSP_RING_CMD), hwpsp.GFX_FLAG_RESPONSE, hwpsp.GFX_FLAG_RESPONSE, "PSP sOS ready")
        dev.wreg64(_c2p(mp.PSP_RING_ADDR_LO), _c2p(mp.PSP_RING_ADDR_HI), fb_base + self.ring)
        dev.wreg(_c2p(mp.PSP_RING_SIZE), PSP_RING_SIZE)
        dev.wreg(_c2p(mp.PSP_RING_CMD), hwpsp.PSP_RING_TYPE_KM << 16)
        status = dev.wait_reg(_c2p(mp.PSP_RING_CMD), hwpsp.GFX_FLAG_RESPONSE, hwpsp.GFX_FLAG_RESPONSE,
                              "GPCOM ring creation")
        if status & 0xFFFF:
            raise BringUpError(f"{dev.bdf}: the PSP refused the GPCOM ring: {_c2p(mp.PSP_RING_CMD)} = {status:#x}")

    def submit(self, cmd: int, body: bytes, what: str = "") -> hwpsp.Resp:
        """Run one command; its response (BringUpError naming the command if its status is not 0)."""
        dev, at = self.dev, self.window.at
        head = hwpsp.CmdHead(buf_size=hwpsp.CMD_BUF_SIZE, cmd_id=cmd).pack()
        at(self.cmd, hwpsp.CMD_BUF_SIZE)[:] = (head + body).ljust(hwpsp.CMD_BUF_SIZE, b"\0")
        self.fence_value += 1
        cmd_mc, fence_mc = self.fb_base + self.cmd, self.fb_base + self.fence
        frame = hwpsp.RingFrame(cmd_buf_addr_lo=cmd_mc & 0xFFFFFFFF, cmd_buf_addr_hi=cmd_mc >> 32,
                                cmd_buf_size=hwpsp.CMD_BUF_SIZE, fence_addr_lo=fence_mc & 0xFFFFFFFF,
                                fence_addr_hi=fence_mc >> 32, fence_value=self.fence_value).pack()
        at(self.ring + (self.wptr * 4) % PSP_RING_SIZE, hwpsp.FRAME_SIZE)[:] = frame
        self.wptr += hwpsp.FRAME_SIZE // 4
        dev.wreg(_c2p(mp.PSP_RING_WPTR), self.wptr % (PSP_RING_SIZE // 4))
        if int.from_bytes(at(self.fence, 4), "little") != self.fence_value:
            raise BringUpError(f"{dev.bdf}: PSP command {what or hwpsp.Cmd(cmd).name} did not complete (its fence "
                               f"at MC {fence_mc:#x} was not written)")
        resp = hwpsp.Resp.unpack(bytes(at(self.cmd + hwpsp.RESP_OFFSET, hwpsp.CMD_BUF_SIZE - hwpsp.RESP_OFFSET)))
        if resp.status:
            raise BringUpError(f"{dev.bdf}: PSP command {what or hwpsp.Cmd(cmd).name} failed with status "
                               f"{resp.status:#x}")
        return resp


# ---- SMU, GFX, SDMA ---------------------------------------------------------------------------------------------
def smu_message(dev: PCIFunction, msg: int, arg: int = 0) -> int:
    """Send an SMU message; its answer (BringUpError unless the SMU answers OK)."""
    resp, argr, msgr = (mp.MP1_C2PMSG[n].name for n in (mp.SMU_RESP, mp.SMU_ARG, mp.SMU_MSG))
    dev.wreg(resp, 0)
    dev.wreg(argr, arg)
    dev.wreg(msgr, msg)
    result = dev.rreg(resp)
    if result == 0:  # not answered yet: wait (a driver's timeout if the SMU never runs)
        dev.wait_reg(resp, 0xFFFFFFFF, hwsmu.Result.OK, f"SMU message {hwsmu.Msg(msg).name}")
        result = hwsmu.Result.OK
    if result != hwsmu.Result.OK:
        raise BringUpError(f"{dev.bdf}: SMU message {hwsmu.Msg(msg).name} answered {result:#x} ({resp})")
    return dev.rreg(argr)


def _smu(dev: PCIFunction) -> int:
    version = smu_message(dev, hwsmu.Msg.GetSmuVersion)
    smu_message(dev, hwsmu.Msg.EnableAllSmuFeatures)
    return version


def _gfx(dev: PCIFunction, mec_start: int) -> None:
    dev.wait_reg("RLC_RLCS_BOOTLOAD_STATUS", 1 << 31, 1 << 31, "RLC autoload (BOOTLOAD_COMPLETE)")
    for pipe in range(4):
        dev.wreg_fields("GRBM_GFX_CNTL", meid=1, pipeid=pipe)
        dev.wreg("CP_MEC_RS64_PRGRM_CNTR_START", (mec_start >> 2) & 0xFFFFFFFF)
        dev.wreg("CP_MEC_RS64_PRGRM_CNTR_START_HI", mec_start >> 34)
    dev.wreg("GRBM_GFX_CNTL", 0)
    dev.wreg_fields("CP_MEC_RS64_CNTL", mec_pipe0_active=1, mec_pipe1_active=1, mec_pipe2_active=1,
                    mec_pipe3_active=1)
    dev.wreg("CP_MEC_DOORBELL_RANGE_LOWER", MEC_DOORBELL_RANGE[0])
    dev.wreg("CP_MEC_DOORBELL_RANGE_UPPER", MEC_DOORBELL_RANGE[1])


def _sdma(dev: PCIFunction) -> None:
    for engine in range(gc.SDMA_ENGINES):
        dev.wreg(f"SDMA{engine}_F32_CNTL", gc.SDMA_F32_CNTL.pack(th0_enable=1))
