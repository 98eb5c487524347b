"""The SMU message interfaces (smu_v13_0_0_ppsmc.h, smu_v13_0_6_ppsmc.h, smu_cmn.c): message ids, results, clock ids.

The driver clears the response register (MP1 C2PMSG_90), writes the argument (C2PMSG_82), then the message id
(C2PMSG_66); the SMU answers with a result in C2PMSG_90 and, for queries, a value in C2PMSG_82.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from enum import IntEnum


class Msg(IntEnum):
    """PPSMC_MSG_* of SMU 13.0.0 (the ones a compute driver sends)."""

    TestMessage = 0x1
    GetSmuVersion = 0x2
    GetDriverIfVersion = 0x3
    EnableAllSmuFeatures = 0x6
    DisableAllSmuFeatures = 0x7
    SetDriverDramAddrHigh = 0xE
    SetDriverDramAddrLow = 0xF
    TransferTableSmu2Dram = 0x12
    SetSoftMinByFreq = 0x19
    SetSoftMaxByFreq = 0x1A
    GetDpmFreqByIndex = 0x1F
    Mode1Reset = 0x2F
    SetPptLimit = 0x32


class Result(IntEnum):
    """PPSMC_Result_*."""

    OK = 0x1
    CmdRejectedBusy = 0xFC
    CmdRejectedPrereq = 0xFD
    UnknownCmd = 0xFE
    Failed = 0xFF


class Clock(IntEnum):
    """PPCLK_e: the clock domain in bits 31:16 of a frequency message's argument."""

    GFXCLK = 0
    SOCCLK = 1
    UCLK = 2
    FCLK = 3


DPM_COUNT_QUERY = 0xFF  # GetDpmFreqByIndex with this index answers the number of levels
DEBUG_MODE1_RESET = 0x2  # the debug mailbox's mode-1 reset message (DEBUGSMC_MSG_Mode1Reset)


class Msg13_6(IntEnum):  # noqa: N801 - the SMU's version
    """PPSMC_MSG_* of SMU 13.0.6 (MI300X, smu_v13_0_6_ppsmc.h): the same names as 13.0.0's where both have a message,
    other numbers; GfxDriverReset (argument 1: mode-1) is its reset, GetMetricsTable its table transfer."""

    TestMessage = 0x1
    GetSmuVersion = 0x2
    GfxDriverReset = 0x3
    GetDriverIfVersion = 0x4
    EnableAllSmuFeatures = 0x5
    DisableAllSmuFeatures = 0x6
    GetMetricsTable = 0x9
    SetDriverDramAddrHigh = 0xD
    SetDriverDramAddrLow = 0xE
    SetSoftMinByFreq = 0x13
    SetSoftMaxByFreq = 0x14
    GetDpmFreqByIndex = 0x17
    SetPptLimit = 0x18
    QueryValidMcaCount = 0x36
    McaBankDumpDW = 0x37
    QueryValidMcaCeCount = 0x3A
    McaBankCeDumpDW = 0x3B


class Clock13_6(IntEnum):  # noqa: N801 - the SMU's version
    """PPCLK_e of SMU 13.0.6 (no GFXCLK: the driver sets the graphics clock with its own messages)."""

    VCLK = 0
    DCLK = 1
    SOCCLK = 2
    UCLK = 3
    FCLK = 4
    LCLK = 5


GFX_DRIVER_RESET_MODE1 = 1  # GfxDriverReset's argument for a mode-1 reset (SMU_RESET_MODE_1)
