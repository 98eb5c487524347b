"""MP0 (the PSP) and MP1 (the SMU) mailbox registers, MP 13.0.0 (mp_13_0_0_offset.h): C2PMSG ("CPU to PSP/SMU
message") dwords. MP0 and MP1 share one register space (the same discovery bases): MP0's C2PMSG_n is at 0x40 + n,
MP1's at 0x240 + n.

The PSP bootloader uses C2PMSG_35 (command / ready bit 31) and 36 (firmware address >> 20), the sOS reports itself
in 81, and its GPCOM ring is created through 64 (command/response), 69/70 (ring address) and 71 (size), with the
write pointer in 67 (psp_v13_0.c). The SMU takes a message in C2PMSG_66 with its argument in 82 and answers in 90
(82 carries a result back); the debug mailbox is 75 / 53 / 54 (smu_v13_0.c, smu_cmn.c).

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw.mmio import Reg, name_registers

_MP0, _MP1 = 0x40, 0x240


def _c2pmsg(block: str, base: int, n: int) -> Reg:
    return Reg(block, 0, base + n, name=f"{block}_SMN_C2PMSG_{n}")


MP0_C2PMSG = {n: _c2pmsg("MP0", _MP0, n) for n in range(32, 104)}
MP1_C2PMSG = {n: _c2pmsg("MP1", _MP1, n) for n in range(32, 128)}

# The PSP's roles (psp_v13_0.c).
PSP_BL_CMD, PSP_BL_FW_ADDR, PSP_SOS_VERSION = 35, 36, 81
PSP_RING_CMD, PSP_RING_WPTR, PSP_RING_ADDR_LO, PSP_RING_ADDR_HI, PSP_RING_SIZE = 64, 67, 69, 70, 71
# The SMU's (smu_v13_0.c): message, argument, response; the debug mailbox.
SMU_MSG, SMU_ARG, SMU_RESP = 66, 82, 90
SMU_DEBUG_MSG, SMU_DEBUG_ARG, SMU_DEBUG_RESP = 75, 53, 54

REGISTERS = name_registers({r.name: r for r in (*MP0_C2PMSG.values(), *MP1_C2PMSG.values())})
