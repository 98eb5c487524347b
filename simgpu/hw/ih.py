"""Interrupt handler (IH) ring entries: the 32-byte records the IH writes into its ring in memory, and the client and
source ids of the interrupts this simulator raises on SOC21/SOC24 parts and (Soc15Client/Soc15Source) on gfx9's
SOC15 ones.

Entry (amdgpu_ih.h, SOC15_*_FROM_IH_ENTRY): dword 0 = client id [7:0], source id [15:8], ring id [23:16], VMID
[27:24], VMID type [31] (0: GFX hub, 1: MM hub); dwords 1-2 = the 48-bit timestamp (bit 31 of dword 2: its
source); dword 3 = PASID [15:0], node id [23:16]; dwords 4-7 = the source data (context ids 0-3).

Client ids: soc15_ih_clientid.h (enum soc21_ih_clientid). Source ids: irqsrcs_gfx_11_0_0.h (on gfx11 the SDMA
engines report through the GFX client). What a source's data means (gfx_v11_0.c, sdma_v6_0.c, gmc_v11_0.c,
kfd_int_process_v11.c): CP end-of-pipe -- ring id me [3:2], pipe [1:0], queue [6:4], context id 0 = RELEASE_MEM's
INT_CTXID; SDMA trap -- ring id = engine, context id 0 = the TRAP packet's INT_CONTEXT; UTCL2 (GPUVM) fault --
context id 0 = faulting page number bits 31:0, context id 1 = bits 35:32 in [3:0], write [5], retry [7]; SQ
interrupt -- context id 1 bits 7:6 the encoding (2 = error), context id 0 bits 24:21 the error type.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from simgpu.hw.bits import Field, Layout

ENTRY_SIZE = 32
ENTRY_DW0 = Layout(client_id=Field(0, 8), source_id=Field(8, 8), ring_id=Field(16, 8), vmid=Field(24, 4),
                   vmid_type=Field(31))
ENTRY_DW3 = Layout(pasid=Field(0, 16), node_id=Field(16, 8))
CP_RING_ID = Layout(pipe=Field(0, 2), me=Field(2, 2), queue=Field(4, 3))
FAULT_CTX1 = Layout(page_hi=Field(0, 4), write=Field(5), retry=Field(7))
SQ_CTX0 = Layout(error_type=Field(21, 4))
SQ_CTX1 = Layout(encoding=Field(6, 2))


class Client(IntEnum):
    """enum soc21_ih_clientid (the ones this device raises)."""

    GFX = 10
    VMC = 18  # the MM hub's faults
    GRBM_CP = 20


class Source(IntEnum):
    """GFX 11.0.0 source ids (irqsrcs_gfx_11_0_0.h) this device raises."""

    UTCL2_FAULT = 0
    SDMA_TRAP = 49
    SDMA_QUEUE_HANG = 55
    CP_EOP_INTERRUPT = 181
    CP_BAD_OPCODE_ERROR = 183
    SQ_INTERRUPT_ID = 239


class SqEncoding(IntEnum):
    """SQ_INTERRUPT_WORD encodings (kfd_int_process_v11.c)."""

    AUTO = 0
    INST = 1
    ERROR = 2


class SqError(IntEnum):
    """SQ_INTERRUPT error types."""

    EDC_FUE = 0
    ILLEGAL_INST = 1
    MEMVIOL = 2
    EDC_FED = 3


# ---- SOC15 (gfx9: MI300X) ------------------------------------------------------------------------------------
class Soc15Client(IntEnum):
    """enum soc15_ih_clientid (the ones a gfx9 part raises): SDMA engines report as SDMAn, SQ interrupts through the
    shader engine's client, GPUVM faults through UTCL2."""

    SDMA2 = 1
    SDMA3 = 4
    SDMA0 = 8
    SDMA1 = 9
    SE0SH = 10
    VMC = 18
    GRBM_CP = 20
    UTCL2 = 27


class Soc15Source(IntEnum):
    """gfx9 source ids (irqsrcs_gfx_9_0.h, irqsrcs_sdma0_4_0.h; the UTCL2 fault is source 0 of its client)."""

    UTCL2_FAULT = 0
    CP_EOP_INTERRUPT = 181
    CP_BAD_OPCODE_ERROR = 183
    SDMA_TRAP = 224
    SQ_INTERRUPT_ID = 239
    SDMA_SRBMWRITE = 247  # where amdgpu's sdma_v4 code takes its illegal-instruction interrupt


SDMA_CLIENTS = (Soc15Client.SDMA0, Soc15Client.SDMA1, Soc15Client.SDMA2, Soc15Client.SDMA3)  # an AID's engines 0-3
SQ9_CTX0 = Layout(encoding=Field(26, 2))


def sq9_context(encoding: int, data: int) -> tuple[int, int]:
    """Context ids 0 and 1 of a gfx9 SQ interrupt: its 24-bit data is spread as amdgpu's
    KFD_CONTEXT_ID_GET_SQ_INT_DATA reads it back (bits 11:0 in ctx0 11:0, 15:12 in ctx0 31:28, 23:16 in ctx1 7:0;
    an error's type is data bits 23:20), the encoding in ctx0 27:26."""
    ctx0 = (data & 0xFFF) | ((data >> 12) & 0xF) << 28 | SQ9_CTX0.pack(encoding=encoding)
    return ctx0, (data >> 16) & 0xFF


def sq9_data(ctx0: int, ctx1: int) -> int:
    """The 24-bit data of a gfx9 SQ interrupt's context ids (KFD_CONTEXT_ID_GET_SQ_INT_DATA)."""
    return (ctx0 & 0xFFF) | ((ctx0 >> 16) & 0xF000) | ((ctx1 << 16) & 0xFF0000)


@dataclass
class Entry:
    """One IH ring entry."""

    client_id: int
    source_id: int
    ring_id: int = 0
    vmid: int = 0
    vmid_type: int = 0
    timestamp: int = 0
    pasid: int = 0
    node_id: int = 0
    context: tuple[int, int, int, int] = (0, 0, 0, 0)

    def pack(self) -> bytes:
        """The 32 bytes the IH writes."""
        dw0 = ENTRY_DW0.pack(client_id=self.client_id, source_id=self.source_id, ring_id=self.ring_id,
                             vmid=self.vmid, vmid_type=self.vmid_type)
        ts = self.timestamp & ((1 << 48) - 1)
        dw3 = ENTRY_DW3.pack(pasid=self.pasid, node_id=self.node_id)
        return struct.pack("<8I", dw0, ts & 0xFFFFFFFF, ts >> 32, dw3, *(c & 0xFFFFFFFF for c in self.context))

    @classmethod
    def unpack(cls, data: bytes) -> Entry:
        """Decode 32 bytes of an IH ring."""
        dw = struct.unpack_from("<8I", data)
        f0, f3 = ENTRY_DW0.unpack(dw[0]), ENTRY_DW3.unpack(dw[3])
        return cls(f0["client_id"], f0["source_id"], f0["ring_id"], f0["vmid"], f0["vmid_type"],
                   dw[1] | ((dw[2] & 0xFFFF) << 32), f3["pasid"], f3["node_id"], tuple(dw[4:8]))


def vm_fault_address(entry: Entry) -> int:
    """The faulting byte address (page granular) of a UTCL2 / VMC fault entry."""
    return (entry.context[0] << 12) | (FAULT_CTX1.page_hi.get(entry.context[1]) << 44)


def vm_fault_context(address: int, write: bool) -> tuple[int, int]:
    """Context ids 0 and 1 of a fault at `address`."""
    return (address >> 12) & 0xFFFFFFFF, FAULT_CTX1.pack(page_hi=address >> 44, write=write)
