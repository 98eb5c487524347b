"""The SMU (MP1 13.0 / 14.0 / 13.0.6 / 13.0.12) message mailbox (simgpu.hw.smu): C2PMSG_66 message, 82
argument/result, 90 response.

The SMU answers once the PSP has loaded its firmware (LOAD_IP_FW SMU); before that a message gets no response (90
stays 0, so a driver's wait times out, as on a part whose SMU is not running). Messages: GetSmuVersion,
TestMessage (argument + 1), the driver table address (SetDriverDramAddrHigh/Low), Enable/DisableAllSmuFeatures,
GetDpmFreqByIndex (index 0xFF: the number of levels; GFXCLK's top level is the simulator's core clock),
SetSoftMin/MaxByFreq and SetPptLimit (remembered), TransferTableSmu2Dram (writes a zeroed table: no telemetry is
modelled); anything else answers UnknownCmd. The debug mailbox (75 message, 53 argument, 54 response) takes
DEBUGSMC_MSG_Mode1Reset, which resets the SOC (`SOC.mode1_reset`). SMU 13.0.6 (MI300X) numbers its messages and
clocks its own way (no GFXCLK), runs without the driver loading it, resets with GfxDriverReset(1) and transfers its
table with GetMetricsTable; its machine-check queries answer 0 banks.
"""

from __future__ import annotations

from simgpu.hw import smu as hw
from simgpu.hw.soc21 import mp

SMU_VERSION = 0x004E4C00  # what GetSmuVersion answers
TABLE_SIZE = 0x4000  # bytes TransferTableSmu2Dram writes
# DPM levels per clock (MHz); GFXCLK tops out at the virtual clock's core frequency.
DPM_LEVELS = {hw.Clock.GFXCLK: (500, 2500), hw.Clock.SOCCLK: (500, 1200), hw.Clock.UCLK: (97, 1249),
              hw.Clock.FCLK: (400, 1900)}


class SMU:
    """MP1's mailboxes."""

    def __init__(self, soc):
        self.soc, regs = soc, soc.regs
        self.reg = {n: mp.MP1_C2PMSG[n] for n in mp.MP1_C2PMSG}
        mp1 = next((b.version for b in soc.part.blocks if b.name == "MP1"), None)
        # SMU 13.0.6 (MI300X): its own message and clock numbers; its firmware comes with the IFWI (running from
        # power-on: the driver hands the PSP only the P2S pptable), and GfxDriverReset is the mode-1 reset.
        # SMU 13.0.12 (MI350X) is smu_v13_0_6_ppt.c's too: smu_v13_0_12_ppsmc.h numbers every message modelled here
        # as 13.0.6 does (it adds others), and amdgpu loads no firmware image for it either.
        self.v13_6 = mp1 in ((13, 0, 6), (13, 0, 12))
        self.msgs, self.clocks = (hw.Msg13_6, hw.Clock13_6) if self.v13_6 else (hw.Msg, hw.Clock)
        self.levels = {self.clocks[c.name]: v for c, v in DPM_LEVELS.items() if c.name in self.clocks.__members__}
        regs.on_write(self.reg[mp.SMU_MSG], self._message)
        regs.on_write(self.reg[mp.SMU_DEBUG_MSG], self._debug)
        for n in (mp.SMU_RESP, mp.SMU_ARG, mp.SMU_DEBUG_RESP):  # the SMU answers in them
            regs.on_read(self.reg[n], lambda r=self.reg[n]: regs.get(r))
        self.reset()

    def reset(self) -> None:
        """Power-on: no firmware, no features, default limits."""
        self.features = False
        self.driver_table = 0
        self.soft_limits: dict[int, tuple[int, int]] = {}
        self.ppt_limit = 0
        self.messages = 0
        self.unknown: list[int] = []

    @property
    def running(self) -> bool:
        """Whether the SMU's firmware runs: loaded by the PSP, or (13.0.6) from the IFWI at power-on."""
        return self.v13_6 or "SMU" in self.soc.psp.firmware

    def _message(self, msg: int) -> None:
        regs = self.soc.regs
        if not self.running:
            return  # nobody answers: the response register stays as the driver left it
        self.messages += 1
        arg = regs.get(self.reg[mp.SMU_ARG])
        name = self.msgs(msg).name if msg in self.msgs._value2member_map_ else ""
        result, out = self._run(name, arg) if name else (hw.Result.UnknownCmd, None)
        if not name:
            self.unknown.append(msg)
        if out is not None:
            regs.set(self.reg[mp.SMU_ARG], out & 0xFFFFFFFF)
        regs.set(self.reg[mp.SMU_RESP], result)

    def _run(self, msg: str, arg: int) -> tuple[int, int | None]:
        ok = hw.Result.OK
        if msg == "GetSmuVersion":
            return ok, SMU_VERSION
        if msg == "TestMessage":
            return ok, arg + 1
        if msg == "SetDriverDramAddrHigh":
            self.driver_table = (self.driver_table & 0xFFFFFFFF) | arg << 32
            return ok, None
        if msg == "SetDriverDramAddrLow":
            self.driver_table = (self.driver_table & ~0xFFFFFFFF) | arg
            return ok, None
        if msg in ("EnableAllSmuFeatures", "DisableAllSmuFeatures"):
            self.features = msg == "EnableAllSmuFeatures"
            return ok, None
        if msg == "GetDpmFreqByIndex":
            levels = self.levels.get(arg >> 16)
            if levels is None:
                return hw.Result.Failed, None
            index = arg & 0xFFFF
            if index == hw.DPM_COUNT_QUERY:
                return ok, len(levels)
            return (ok, levels[index]) if index < len(levels) else (hw.Result.Failed, None)
        if msg in ("SetSoftMinByFreq", "SetSoftMaxByFreq"):
            lo, hi = self.soft_limits.get(arg >> 16, (0, 0xFFFF))
            self.soft_limits[arg >> 16] = (arg & 0xFFFF, hi) if msg == "SetSoftMinByFreq" else (lo, arg & 0xFFFF)
            return ok, None
        if msg == "SetPptLimit":
            self.ppt_limit = arg
            return ok, None
        if msg in ("TransferTableSmu2Dram", "GetMetricsTable"):
            if not self.driver_table:
                return hw.Result.CmdRejectedPrereq, None
            pa = self.soc.mmhub.mc_to_pa(self.driver_table, TABLE_SIZE, "SMU driver table")
            self.soc.gpu.phys.write(pa, bytes(TABLE_SIZE))
            return ok, None
        if msg in ("QueryValidMcaCount", "QueryValidMcaCeCount"):
            return ok, 0  # no machine-check (RAS) errors are modelled
        if msg == "GfxDriverReset" and arg == hw.GFX_DRIVER_RESET_MODE1:
            self.soc.mode1_reset()
            return ok, None
        self.unknown.append(self.msgs[msg].value)
        return hw.Result.UnknownCmd, None

    def _debug(self, msg: int) -> None:
        if msg == hw.DEBUG_MODE1_RESET:
            self.soc.mode1_reset()
            self.soc.regs.set(self.reg[mp.SMU_DEBUG_RESP], hw.Result.OK)
        else:
            self.soc.regs.set(self.reg[mp.SMU_DEBUG_RESP], hw.Result.UnknownCmd)

    def describe(self) -> list[str]:
        """The SMU's state, when a driver talked to it."""
        if not self.messages:
            return []
        return [f"SMU: {self.messages} messages, features {'on' if self.features else 'off'}"
                + (f", unknown messages {', '.join(hex(m) for m in self.unknown)}" if self.unknown else "")]
