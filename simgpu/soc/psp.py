"""The PSP (MP0 13.0 / 13.0.6 / 14.0): its bootloader and the secure OS's GPCOM ring (simgpu.hw.psp), as a driver sees
them.

Nothing a driver hands the PSP runs: the model checks the protocol and what it can of the bytes, and remembers what
was loaded (kind, MC address, size, a fingerprint) for describe(). Checks, each failure reported where the real PSP
reports it (a bootloader that does not become ready, a ring that answers a nonzero status) and named in
`errors` / describe() (and, in-process, an MMIOError from the write that caused it):

- bootloader (C2PMSG_35/36): the command is a PSP_BL__LOAD_* one, the component buffer lies in the frame buffer
  and holds something (its first 4 KiB are not all zero), the sOS is loaded last and only after the system driver;
- GPCOM ring (C2PMSG_64/67/69-71): only once the sOS runs; its address lies in the frame buffer, its size is a
  nonzero multiple of a frame; each frame's command and fence buffers lie in the frame buffer;
- LOAD_TOC answers the TMR size; SETUP_TMR needs a 1 MiB aligned buffer at least that large; LOAD_IP_FW needs a
  known GFX_FW_TYPE, a nonzero size within the 1 MiB firmware buffer, the TMR set up first (except for the SMU's
  firmware, which amdgpu loads before it), and a payload -- not a whole firmware file: a buffer that starts with a
  common_firmware_header describing exactly fw_size bytes is the container, not its ucode; AUTOLOAD_RLC needs the
  RLC, MEC, SDMA and IMU firmware loaded, and then starts the RLC autoload (RLC_RLCS_BOOTLOAD_STATUS);
- MP0 13.0.6 (MI300X) and 13.0.12 (MI350X) reserve their TMR at boot, take gfx9's firmware types (CP_MEC, SDMA0..3,
  the RLC restore lists, the P2S pptable, REG_LIST) and SRIOV_SPATIAL_PART: one partition (SPX) is what the model
  runs, any other count is answered with an error.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from simgpu.hw import psp as hw
from simgpu.hw import ucode
from simgpu.hw.soc21 import gc, mp
from simgpu.soc.regfile import MMIOError

SOS_VERSION = 0x00210000  # what C2PMSG_81 reads once the sOS runs
TMR_SIZE = 0x1000000  # what LOAD_TOC answers: 16 MiB of trusted memory
GFX9_MP0 = ((13, 0, 6), (13, 0, 12))  # the MI300X and MI350X PSPs (gfx9 firmware types, a REG_LIST)
_BL_ORDER = {hw.BootloaderCmd.LOAD_SOSDRV: (hw.BootloaderCmd.LOAD_SYSDRV,)}


@dataclass
class Loaded:
    """One thing the PSP took: bootloader component or IP firmware."""

    what: str
    mc: int
    size: int  # 0 when the protocol does not say (bootloader components)
    digest: str

    def __str__(self) -> str:
        return f"{self.what} from MC {self.mc:#x}" + (f", {self.size} bytes" if self.size else "") + \
            f", sha256 {self.digest}"


class PSP:
    """MP0's mailbox and rings over the register file of a SOC."""

    def __init__(self, soc):
        self.soc, regs = soc, soc.regs
        self.c2p = {n: mp.MP0_C2PMSG[n] for n in mp.MP0_C2PMSG}
        regs.on_write(self.c2p[mp.PSP_BL_CMD], self._bootloader)
        regs.on_write(self.c2p[mp.PSP_RING_CMD], self._ring_cmd)
        regs.on_write(self.c2p[mp.PSP_RING_WPTR], self._ring_wptr)
        sos = self.c2p[mp.PSP_SOS_VERSION]
        regs.on_read(sos, lambda: regs.get(sos))  # the PSP sets it when the sOS starts
        self.reset()

    @property
    def boot_time_tmr(self) -> bool:
        """Whether this PSP reserves its TMR at boot (amdgpu's boot_time_tmr): MP0 13.0.6, 13.0.12, 14.0.2 and 14.0.3
        (amdgpu's psp_early_init leaves it set for these; a SETUP_TMR a driver sends anyway is still taken)."""
        return self.mp0_version in GFX9_MP0 + ((14, 0, 2), (14, 0, 3))

    @property
    def mp0_version(self) -> tuple[int, int, int] | None:
        """MP0's IP version in the part's discovery table."""
        mp0 = next((b for b in self.soc.part.blocks if b.name == "MP0"), None)
        return mp0.version if mp0 is not None else None

    def reset(self) -> None:
        """Power-on: the bootloader is ready, no sOS, no ring, nothing loaded."""
        self.components: list[Loaded] = []
        self.firmware: dict[str, Loaded] = {}
        self.errors: list[str] = []
        self.sos_alive = False
        self.ring: tuple[int, int] | None = None  # (MC address, bytes)
        self.rptr = 0  # dwords
        self.tmr: tuple[int, int] | None = None
        self.toc_tmr_size = 0
        self.autoloaded = False
        self.partitions = 1  # SRIOV_SPATIAL_PART's mode (MI300X boots in SPX: one partition)
        self._set(mp.PSP_BL_CMD, hw.BL_READY)

    # ---- helpers -----------------------------------------------------------------------------------------------
    def _set(self, n: int, value: int) -> None:
        self.soc.regs.set(self.c2p[n], value)

    def _get(self, n: int) -> int:
        return self.soc.regs.get(self.c2p[n])

    def _fail(self, why: str) -> None:
        self.errors.append(why)
        raise MMIOError(f"PSP: {why}")

    def _bytes(self, mc: int, size: int, what: str) -> bytes:
        pa = self.soc.gchub.mc_to_pa(mc, size, f"PSP {what}")
        return self.soc.gpu.phys.read(pa, size)

    # ---- bootloader -----------------------------------------------------------------------------------------------
    def _bootloader(self, value: int) -> None:
        if self.sos_alive:
            self._fail(f"C2PMSG_35 = {value:#x}: the bootloader is gone once the sOS runs (C2PMSG_81 != 0)")
        try:
            cmd = hw.BootloaderCmd(value)
        except ValueError:
            self._set(mp.PSP_BL_CMD, value)  # never ready again: the driver's wait for bit 31 times out
            self._fail(f"C2PMSG_35 = {value:#x} is not a bootloader command (PSP_BL__LOAD_*)")
        mc = self._get(mp.PSP_BL_FW_ADDR) << hw.FW_ADDR_SHIFT
        head = self._bytes(mc, 4096, f"{cmd.name} component (C2PMSG_36 << 20)")
        if not any(head):
            self._set(mp.PSP_BL_CMD, value)
            self._fail(f"{cmd.name}: the component buffer at MC {mc:#x} (C2PMSG_36 << 20) is empty")
        missing = [c.name for c in _BL_ORDER.get(cmd, ()) if c.name not in [x.what for x in self.components]]
        if missing:
            self._set(mp.PSP_BL_CMD, value)
            self._fail(f"{cmd.name} before {', '.join(missing)}: the sOS needs the system driver loaded first")
        self.components.append(Loaded(cmd.name, mc, 0, hashlib.sha256(head).hexdigest()[:16]))
        if cmd == hw.BootloaderCmd.LOAD_SOSDRV:
            self.sos_alive = True
            if self.boot_time_tmr:  # MP0 14.0.2/3: the sOS sets up its TMR itself (amdgpu's boot_time_tmr)
                self.tmr = (0, 0)
            self._set(mp.PSP_SOS_VERSION, SOS_VERSION)
            self._set(mp.PSP_RING_CMD, hw.GFX_FLAG_RESPONSE)  # ready for ring creation
        self._set(mp.PSP_BL_CMD, hw.BL_READY)

    # ---- the GPCOM ring ---------------------------------------------------------------------------------------------
    def _ring_cmd(self, value: int) -> None:
        if not self.sos_alive:
            self._set(mp.PSP_RING_CMD, value)  # no sOS to answer
            self._fail(f"C2PMSG_64 = {value:#x} before the sOS runs (load it through the bootloader first)")
        if value == hw.CtrlCmd.DESTROY_RINGS:
            self.ring = None
            self._set(mp.PSP_RING_CMD, hw.GFX_FLAG_RESPONSE)
            return
        if value != hw.PSP_RING_TYPE_KM << 16:
            self._set(mp.PSP_RING_CMD, hw.GFX_FLAG_RESPONSE | (hw.PSP_ERR_UNKNOWN_COMMAND & 0xFFFF))
            self._fail(f"C2PMSG_64 = {value:#x}: not a ring command this PSP takes (PSP_RING_TYPE__KM << 16)")
        mc = self._get(mp.PSP_RING_ADDR_LO) | self._get(mp.PSP_RING_ADDR_HI) << 32
        size = self._get(mp.PSP_RING_SIZE)
        if size == 0 or size % hw.FRAME_SIZE:
            self._set(mp.PSP_RING_CMD, hw.GFX_FLAG_RESPONSE | 0x1)
            self._fail(f"GPCOM ring size {size} (C2PMSG_71) is not a nonzero multiple of {hw.FRAME_SIZE}")
        self.soc.gchub.mc_to_pa(mc, size, "PSP GPCOM ring (C2PMSG_69/70)")
        self.ring, self.rptr = (mc, size), 0
        self._set(mp.PSP_RING_WPTR, 0)
        self._set(mp.PSP_RING_CMD, hw.GFX_FLAG_RESPONSE)

    def _ring_wptr(self, wptr: int) -> None:
        if self.ring is None:
            self._fail(f"C2PMSG_67 = {wptr} with no GPCOM ring (create it through C2PMSG_64 first)")
        mc, size = self.ring
        frame_dw, ring_dw = hw.FRAME_SIZE // 4, size // 4
        if wptr % frame_dw:
            self._fail(f"C2PMSG_67 = {wptr} is not a multiple of a {hw.FRAME_SIZE}-byte frame ({frame_dw} dwords)")
        for _ in range(ring_dw // frame_dw):  # the write pointer counts dwords and may wrap with the ring
            if self.rptr % ring_dw == wptr % ring_dw:
                break
            off = (self.rptr % ring_dw) * 4
            self._frame(hw.RingFrame.unpack(self._bytes(mc + off, hw.FRAME_SIZE, "ring frame")))
            self.rptr = (self.rptr + frame_dw) % ring_dw

    def _frame(self, frame: hw.RingFrame) -> None:
        cmd_mc = frame.cmd_buf_addr_lo | frame.cmd_buf_addr_hi << 32
        buf = bytearray(self._bytes(cmd_mc, hw.CMD_BUF_SIZE, "command buffer"))
        head = hw.CmdHead.unpack(buf)
        body = buf[hw.CMD_OFFSET:]
        try:
            status, tmr = self._command(head.cmd_id, body), 0
        except _CmdFailed as e:
            self.errors.append(str(e))
            status, tmr = e.status, 0
        if head.cmd_id == hw.Cmd.LOAD_TOC and status == 0:
            tmr = self.toc_tmr_size
        resp = hw.Resp(status, 0, 0, 0, tmr).pack()
        buf[hw.RESP_OFFSET:hw.RESP_OFFSET + len(resp)] = resp
        gpu = self.soc.gpu
        gpu.phys.write(self.soc.gchub.mc_to_pa(cmd_mc, hw.CMD_BUF_SIZE, "PSP command buffer"), bytes(buf))
        fence = frame.fence_addr_lo | frame.fence_addr_hi << 32
        gpu.phys.write(self.soc.gchub.mc_to_pa(fence, 4, "PSP fence"), frame.fence_value.to_bytes(4, "little"))

    def _command(self, cmd_id: int, body: bytes) -> int:
        """Run one GPCOM command; its response status (0 = success)."""
        if cmd_id == hw.Cmd.LOAD_TOC:
            t = hw.LoadToc.unpack(body)
            mc = t.toc_phy_addr_lo | t.toc_phy_addr_hi << 32
            data = self._check_buffer(mc, t.toc_size, "LOAD_TOC")
            self.firmware["TOC"] = Loaded("TOC", mc, t.toc_size, hashlib.sha256(data).hexdigest()[:16])
            self.toc_tmr_size = TMR_SIZE
            return 0
        if cmd_id == hw.Cmd.SETUP_TMR:
            t = hw.SetupTmr.unpack(body)
            mc = t.buf_phy_addr_lo | t.buf_phy_addr_hi << 32
            need = self.toc_tmr_size
            if mc % hw.PSP_1_MEG or t.buf_size < need:
                raise _CmdFailed(f"SETUP_TMR: TMR at MC {mc:#x} of {t.buf_size:#x} bytes: needs 1 MiB alignment and "
                                 f"at least the {need:#x} bytes LOAD_TOC answered", 0x1)
            if t.buf_size:
                self.soc.gchub.mc_to_pa(mc, t.buf_size, "PSP TMR (SETUP_TMR)")
            self.tmr = (mc, t.buf_size)
            return 0
        if cmd_id == hw.Cmd.LOAD_IP_FW:
            return self._load_ip_fw(hw.LoadIpFw.unpack(body))
        if cmd_id == hw.Cmd.SRIOV_SPATIAL_PART:
            return self._spatial_partition(hw.SpatialPart.unpack(body))
        if cmd_id == hw.Cmd.AUTOLOAD_RLC:
            missing = [n for n in hw.AUTOLOAD_REQUIRES if n not in self.firmware]
            if missing:
                raise _CmdFailed(f"AUTOLOAD_RLC before {', '.join(missing)} firmware was loaded (LOAD_IP_FW)", 0x1)
            if not self.soc.regs.has(gc.RLC_RLCS_BOOTLOAD_STATUS):
                raise _CmdFailed("AUTOLOAD_RLC: gfx9's RLC is loaded by LOAD_IP_FW, it has no autoload", 0x1)
            self.autoloaded = True
            status = self.soc.regs.declared(gc.RLC_RLCS_BOOTLOAD_STATUS)  # (GFX_INIT_DONE moved in gfx12)
            self.soc.regs.set(status, status.pack(gfx_init_done=1, bootload_complete=1))
            return 0
        raise _CmdFailed(f"GPCOM command {cmd_id:#x} is not one this PSP model runs", hw.PSP_ERR_UNKNOWN_COMMAND)

    def _spatial_partition(self, c: hw.SpatialPart) -> int:
        """SRIOV_SPATIAL_PART: split the XCCs into `mode` partitions. One partition (SPX, every XCC one device) is
        what the model runs; other modes are refused (CPX/DPX/... are not modelled)."""
        xccs = len(self.soc.gchubs)
        if xccs == 1:
            raise _CmdFailed("SRIOV_SPATIAL_PART on a part with one XCC: there is nothing to partition",
                             hw.TEE_ERROR_NOT_SUPPORTED)
        if c.mode != 1:
            raise _CmdFailed(f"SRIOV_SPATIAL_PART mode {c.mode}: {c.mode} partitions of the {xccs} XCCs are not "
                             "modelled (one partition, SPX, is)", hw.TEE_ERROR_NOT_SUPPORTED)
        self.partitions = c.mode
        return 0

    def _check_buffer(self, mc: int, size: int, what: str) -> bytes:
        if not 0 < size <= hw.PSP_1_MEG:
            raise _CmdFailed(f"{what}: size {size} is not within the 1 MiB firmware buffer", 0x1)
        try:
            return self.soc.gpu.phys.read(self.soc.gchub.mc_to_pa(mc, size, what), size)
        except MMIOError as e:
            raise _CmdFailed(str(e), 0x1) from None

    def _load_ip_fw(self, c: hw.LoadIpFw) -> int:
        name = hw.FW_TYPE_NAMES.get(c.fw_type)
        if name is None:
            raise _CmdFailed(f"LOAD_IP_FW: fw_type {c.fw_type} is no GFX_FW_TYPE this part loads", 0x1)
        if self.tmr is None and name != "SMU":
            raise _CmdFailed(f"LOAD_IP_FW {name} before SETUP_TMR: the firmware has nowhere to go", 0x1)
        mc = c.fw_phy_addr_lo | c.fw_phy_addr_hi << 32
        data = self._check_buffer(mc, c.fw_size, f"LOAD_IP_FW {name}")
        if len(data) >= ucode.CommonHeader.SIZE:
            h = ucode.CommonHeader.unpack(data)
            if h.size_bytes == c.fw_size and h.header_size_bytes <= h.ucode_array_offset_bytes < c.fw_size:
                raise _CmdFailed(f"LOAD_IP_FW {name}: the buffer holds a whole firmware file (a {c.fw_size}-byte "
                                 "common_firmware_header container), not its ucode", 0x1)
        self.firmware[name] = Loaded(name, mc, c.fw_size, hashlib.sha256(data).hexdigest()[:16])
        return 0

    def describe(self) -> list[str]:
        """What the PSP loaded and what went wrong."""
        if not self.components and not self.errors:
            return []
        out = [f"PSP: sOS {'running' if self.sos_alive else 'not running'}, "
               f"{len(self.components)} bootloader components, {len(self.firmware)} firmware loaded"
               + (", RLC autoload done" if self.autoloaded else "")]
        out += [f"  bootloader: {c}" for c in self.components]
        out += [f"  LOAD_IP_FW: {f}" for f in self.firmware.values()]
        out += [f"  PSP error: {e}" for e in self.errors]
        return out


class _CmdFailed(Exception):
    """A GPCOM command the PSP answers with a nonzero status."""

    def __init__(self, why: str, status: int):
        super().__init__(why)
        self.status = status
