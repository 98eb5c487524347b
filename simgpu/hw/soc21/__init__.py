"""Registers of the SOC21 (gfx11) blocks a userspace driver programs, declared once (simgpu.hw.mmio): GC 11.0.0
(simgpu.hw.soc21.gc), the GC and MM VM hubs (vmhub), OSSSYS 6.0 (oss: the IH), MP0/MP1 13.0 (mp: PSP and SMU
mailboxes), NBIO 4.3 and HDP 6.0 (nbio). `REGISTERS` is all of them by name; `navi31_map()` places them at the
base addresses of this part's IP discovery table (simgpu.hw.discovery).

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw import discovery
from simgpu.hw.mmio import Reg, RegisterMap
from simgpu.hw.soc21 import gc, mp, nbio, oss, vmhub

REGISTERS: dict[str, Reg] = {**gc.REGISTERS, **vmhub.GCHUB.registers(), **vmhub.MMHUB.registers(),
                             vmhub.MM_ATC_L2_MISC_CG.name: vmhub.MM_ATC_L2_MISC_CG, **oss.REGISTERS, **mp.REGISTERS,
                             **nbio.REGISTERS}


def navi31_map() -> RegisterMap:
    """Every register at its absolute dword address on the simulated Navi 31."""
    return RegisterMap(REGISTERS, discovery.block_bases())
