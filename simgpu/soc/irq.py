"""Which IH ring entry (simgpu.hw.ih) each interrupt of the simulated GPU becomes, per SOC family.

SOC21 / SOC24 (gfx11, gfx12): everything but the CP's end-of-pipe comes through the GFX client -- SDMA traps, SQ
interrupts, UTCL2 faults (kfd_int_process_v11.c). SOC15 (gfx9, MI300X): end-of-pipe and bad opcodes from GRBM_CP,
SDMA traps from the engine's own SDMAn client (an AID's engines 0-3; the entry's node id is the AID), SQ interrupts
from the shader engine's SEnSH client with gfx9's context encoding, GPUVM faults from UTCL2 (gmc_v9_0.c), an SDMA
queue error on SDMA_SRBMWRITE (the source amdgpu's sdma_v4 code takes its illegal-instruction interrupt from).
"""

from __future__ import annotations

from simgpu.hw import ih as hw
from simgpu.interrupt import Interrupt, Kind

_SHADER_ERRORS = {"illegal_instruction": hw.SqError.ILLEGAL_INST}


def entry(intr: Interrupt, owner: tuple, vmid: int, soc15: bool) -> hw.Entry | None:
    """The IH entry of an interrupt of a queue `owner` ("cp", me, pipe, queue) / ("sdma", engine) runs, or None."""
    ring = hw.CP_RING_ID.pack(me=owner[1], pipe=owner[2], queue=owner[3]) if owner[:1] == ("cp",) else \
        owner[1] if owner else 0
    e = hw.Entry(0, 0, ring, vmid, timestamp=intr.timestamp)
    return (_soc15 if soc15 else _soc21)(intr, owner, e)


def _soc21(intr: Interrupt, owner: tuple, e: hw.Entry) -> hw.Entry | None:
    e.client_id, e.source_id = hw.Client.GFX, hw.Source.SQ_INTERRUPT_ID
    if intr.kind in (Kind.END_OF_PIPE, Kind.SIGNAL):
        e.client_id, e.source_id, e.context = hw.Client.GRBM_CP, hw.Source.CP_EOP_INTERRUPT, (intr.context_id, 0, 0, 0)
    elif intr.kind == Kind.SDMA_TRAP:
        e.source_id, e.context = hw.Source.SDMA_TRAP, (intr.context_id, 0, 0, 0)
    elif intr.kind == Kind.SENDMSG:
        e.context = (intr.context_id & 0xFFFFFF, hw.SQ_CTX1.pack(encoding=hw.SqEncoding.INST), 0, 0)
    elif intr.kind != Kind.QUEUE_ERROR:
        return None
    elif _page_fault(intr):
        e.source_id = hw.Source.UTCL2_FAULT
        e.context = (*hw.vm_fault_context(intr.fault.address, _written(intr)), 0, 0)
    elif intr.fault is not None:
        err = _SHADER_ERRORS.get(intr.fault.kind, hw.SqError.MEMVIOL)
        e.context = (hw.SQ_CTX0.pack(error_type=err), hw.SQ_CTX1.pack(encoding=hw.SqEncoding.ERROR), 0, 0)
    elif owner[:1] == ("sdma",):
        e.source_id = hw.Source.SDMA_QUEUE_HANG
    else:
        e.client_id, e.source_id = hw.Client.GRBM_CP, hw.Source.CP_BAD_OPCODE_ERROR
    return e


def _soc15(intr: Interrupt, owner: tuple, e: hw.Entry) -> hw.Entry | None:
    if owner[:1] == ("sdma",):  # an engine's client; its AID in the node id, the GFX queue is ring 0
        e.client_id, e.node_id, e.ring_id = hw.SDMA_CLIENTS[owner[1] % 4], owner[1] // 4, 0
    if intr.kind in (Kind.END_OF_PIPE, Kind.SIGNAL):
        e.client_id, e.source_id = hw.Soc15Client.GRBM_CP, hw.Soc15Source.CP_EOP_INTERRUPT
        e.context = (intr.context_id, 0, 0, 0)
    elif intr.kind == Kind.SDMA_TRAP:
        e.source_id, e.context = hw.Soc15Source.SDMA_TRAP, (intr.context_id, 0, 0, 0)
    elif intr.kind == Kind.SENDMSG:
        e.client_id, e.source_id = hw.Soc15Client.SE0SH, hw.Soc15Source.SQ_INTERRUPT_ID
        e.context = (*hw.sq9_context(hw.SqEncoding.INST, intr.context_id & 0xFFFFFF), 0, 0)
    elif intr.kind != Kind.QUEUE_ERROR:
        return None
    elif _page_fault(intr):
        e.client_id, e.source_id = hw.Soc15Client.UTCL2, hw.Soc15Source.UTCL2_FAULT
        e.context = (*hw.vm_fault_context(intr.fault.address, _written(intr)), 0, 0)
    elif intr.fault is not None:
        err = _SHADER_ERRORS.get(intr.fault.kind, hw.SqError.MEMVIOL)
        e.client_id, e.source_id = hw.Soc15Client.SE0SH, hw.Soc15Source.SQ_INTERRUPT_ID
        e.context = (*hw.sq9_context(hw.SqEncoding.ERROR, err << 20), 0, 0)
    elif owner[:1] == ("sdma",):
        e.source_id = hw.Soc15Source.SDMA_SRBMWRITE
    else:
        e.client_id, e.source_id = hw.Soc15Client.GRBM_CP, hw.Soc15Source.CP_BAD_OPCODE_ERROR
    return e


def _page_fault(intr: Interrupt) -> bool:
    return intr.fault is not None and intr.fault.kind == "page_fault" and intr.fault.address is not None


def _written(intr: Interrupt) -> bool:
    return intr.fault.access in ("write", "atomic")
