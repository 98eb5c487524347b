"""The PSP (MP0) interfaces a driver uses to load firmware, from amdgpu's psp_gfx_if.h, psp.h and psp_v13_0.c.

Bootloader (before the secure OS runs): the driver waits for C2PMSG_35 bit 31 (ready), copies a component into a
1 MiB-aligned buffer, writes that buffer's MC address >> 20 to C2PMSG_36 and a PSP_BL__LOAD_* command to C2PMSG_35;
the PSP answers by setting bit 31 again. After PSP_BL__LOAD_SOSDRV the sOS runs and C2PMSG_81 (its version) turns
nonzero.

GPCOM ring (the sOS's command ring): C2PMSG_64 bit 31 set means the sOS is ready; the driver writes the ring's MC
address to C2PMSG_69/70, its size to C2PMSG_71 and PSP_RING_TYPE__KM << 16 to C2PMSG_64, and waits for 64 to read
0x80000000 (response, status 0). A command is a 64-byte `RingFrame` written at the ring's write pointer (C2PMSG_67,
in dwords) pointing at a 1 KiB psp_gfx_cmd_resp buffer and a fence; the driver advances C2PMSG_67 and the sOS runs
the command, writes the response into the buffer (at +864) and the frame's fence value to the fence address.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from enum import IntEnum

from simgpu.hw.bits import Record

GFX_FLAG_RESPONSE = 0x80000000
BL_READY = 0x80000000  # C2PMSG_35 bit 31
PSP_1_MEG = 1 << 20
FW_ADDR_SHIFT = 20  # C2PMSG_36 holds the component buffer's MC address >> 20
CMD_BUF_SIZE = 1024  # psp_gfx_cmd_resp
RESP_OFFSET = 864  # psp_gfx_cmd_resp.resp
FRAME_SIZE = 64
PSP_RING_TYPE_KM = 2


class BootloaderCmd(IntEnum):
    """enum psp_bootloader_cmd (psp.h): what C2PMSG_35 asks the bootloader to load."""

    LOAD_SYSDRV = 0x10000
    LOAD_SOSDRV = 0x20000
    LOAD_KEY_DATABASE = 0x80000
    LOAD_SOCDRV = 0xB0000
    LOAD_DBGDRV = 0xC0000
    LOAD_INTFDRV = 0xD0000
    LOAD_RASDRV = 0xE0000
    LOAD_IPKEYMGRDRV = 0xF0000
    LOAD_TOS_SPL_TABLE = 0x10000000


class CtrlCmd(IntEnum):
    """enum psp_gfx_crtl_cmd_id: register-interface commands (C2PMSG_64)."""

    INIT_RBI_RING = 0x10000
    INIT_GPCOM_RING = 0x20000
    DESTROY_RINGS = 0x30000


class Cmd(IntEnum):
    """enum psp_gfx_cmd_id: GPCOM ring commands."""

    LOAD_TA = 0x1
    SETUP_TMR = 0x5
    LOAD_IP_FW = 0x6
    DESTROY_TMR = 0x7
    LOAD_TOC = 0x20
    AUTOLOAD_RLC = 0x21
    BOOT_CFG = 0x22
    SRIOV_SPATIAL_PART = 0x27


# enum psp_gfx_fw_type: what LOAD_IP_FW loads (the gfx1100 ones).
FW_TYPE = {"SMU": 18, "RLC_G": 8, "RLC_RESTORE_LIST_GPM_MEM": 20, "RLC_RESTORE_LIST_SRM_MEM": 21,
           "RLC_RESTORE_LIST_SRM_CNTL": 22, "RLC_P": 25, "RLC_IRAM": 26, "RLC_DRAM_BOOT": 48, "RLC_V": 7,
           "IMU_I": 68, "IMU_D": 69, "SDMA_UCODE_TH0": 71, "SDMA_UCODE_TH1": 72, "RS64_PFP": 87, "RS64_ME": 88,
           "RS64_MEC": 89, "RS64_PFP_P0_STACK": 90, "RS64_PFP_P1_STACK": 91, "RS64_ME_P0_STACK": 92,
           "RS64_ME_P1_STACK": 93, "RS64_MEC_P0_STACK": 94, "RS64_MEC_P1_STACK": 95, "RS64_MEC_P2_STACK": 96,
           "RS64_MEC_P3_STACK": 97, "TOC": 24, "PPTABLE": 73,
           # gfx942 (GC 9.4.3): the F32 MEC and its jump table, SDMA 4.4's four ucode slots, the SMU's P2S pptable,
           # the register list from the sOS container
           "CP_MEC": 4, "CP_MEC_ME1": 5, "SDMA0": 9, "SDMA1": 10, "SDMA2": 52, "SDMA3": 53, "P2S_TABLE": 129,
           "REG_LIST": 67}
FW_TYPE_NAMES = {v: k for k, v in FW_TYPE.items()}
# Firmware the RLC autoload needs before GFX_CMD_ID_AUTOLOAD_RLC (gfx_v11_0 with PSP front-door loading).
AUTOLOAD_REQUIRES = ("RLC_G", "RS64_MEC", "SDMA_UCODE_TH0", "IMU_I")

# The status a failed command reports (psp_gfx_if.h).
PSP_ERR_UNKNOWN_COMMAND = 0x100
TEE_ERROR_NOT_SUPPORTED = 0xFFFF000A


class RingFrame(Record):
    """struct psp_gfx_rb_frame (64 bytes)."""

    LAYOUT = (("cmd_buf_addr_lo", "I"), ("cmd_buf_addr_hi", "I"), ("cmd_buf_size", "I"), ("fence_addr_lo", "I"),
              ("fence_addr_hi", "I"), ("fence_value", "I"), ("sid_lo", "I"), ("sid_hi", "I"), ("vmid", "B"),
              ("frame_type", "B"), (None, "2x"), (None, "28x"))


class CmdHead(Record):
    """The head of psp_gfx_cmd_resp: buffer size/version, command id, RBI response fields; the command-specific
    words follow at +28 (LoadIpFw, SetupTmr, LoadToc)."""

    LAYOUT = (("buf_size", "I"), ("buf_version", "I"), ("cmd_id", "I"), ("resp_buf_addr_lo", "I"),
              ("resp_buf_addr_hi", "I"), ("resp_offset", "I"), ("resp_buf_size", "I"))


class LoadIpFw(Record):
    """struct psp_gfx_cmd_load_ip_fw (at +28)."""

    LAYOUT = (("fw_phy_addr_lo", "I"), ("fw_phy_addr_hi", "I"), ("fw_size", "I"), ("fw_type", "I"))


class SetupTmr(Record):
    """struct psp_gfx_cmd_setup_tmr (at +28)."""

    LAYOUT = (("buf_phy_addr_lo", "I"), ("buf_phy_addr_hi", "I"), ("buf_size", "I"), ("tmr_flags", "I"),
              ("system_phy_addr_lo", "I"), ("system_phy_addr_hi", "I"))


class SpatialPart(Record):
    """psp_gfx_cmd_sriov_spatial_part: `mode` is the number of partitions (XCPs) the XCCs are split into."""

    LAYOUT = (("mode", "I"), ("override_ips", "I"), ("override_xcds_avail", "I"), ("override_this_aid", "I"))


class LoadToc(Record):
    """struct psp_gfx_cmd_load_toc (at +28)."""

    LAYOUT = (("toc_phy_addr_lo", "I"), ("toc_phy_addr_hi", "I"), ("toc_size", "I"))


class Resp(Record):
    """struct psp_gfx_resp (at +864): status, session, firmware address in the TMR, TMR size (LOAD_TOC)."""

    LAYOUT = (("status", "I"), ("session_id", "I"), ("fw_addr_lo", "I"), ("fw_addr_hi", "I"), ("tmr_size", "I"),
              (None, "44x"), (None, "32x"))


CMD_OFFSET = CmdHead.SIZE  # 28
