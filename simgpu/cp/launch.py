"""Launching dispatches: from the COMPUTE_* registers (PM4) or an AQL kernel-dispatch packet.

Both paths build a simgpu.shader.Dispatch and hand it to the shader engine, which runs it to completion
synchronously (a valid order of events: the CP waits for the dispatch before the next packet that
needs it). The device's limits turn shapes the hardware rejects (or the simulator cannot hold) into
queue errors instead of host exceptions.
"""

from __future__ import annotations

from simgpu import clock as costs
from simgpu.cp.queue import PacketError, Queue, read_u32, read_u64
from simgpu.fault import HardwareFault
from simgpu.hw import aql, regs
from simgpu.isa.kdescriptor import KD_SIZE, KernelDescriptor
from simgpu.shader import Dispatch

MAX_WORKGROUP_ITEMS = 1024


def _reg(q: Queue, r: int) -> int:
    return q.regs.get(r, 0)


def pm4_dispatch(q: Queue, dims: tuple[int, int, int], initiator: int, family: str = "gfx11") -> Dispatch | None:
    """A Dispatch from the queue's COMPUTE_* registers (None when COMPUTE_SHADER_EN is clear); `family` is the
    device's ISA family (COMPUTE_TMPRING_SIZE.WAVESIZE: gfx12's is 18 bits wide, gfx11's 15, gfx9's 13 in 1 KiB
    units; gfx9's COMPUTE_PGM_RSRC3 is at another address)."""
    flags = regs.DISPATCH_INITIATOR.unpack(initiator)
    if not flags["compute_shader_en"]:
        return None
    code = regs.address_of(_reg(q, regs.COMPUTE_PGM_LO), _reg(q, regs.COMPUTE_PGM_HI))
    workgroup = tuple(regs.NUM_THREAD.num_thread_full.get(_reg(q, regs.COMPUTE_NUM_THREAD_X + i)) for i in range(3))
    start = tuple(_reg(q, regs.COMPUTE_START_X + i) for i in range(3))
    # The registers hold the descriptor's rsrc words; the wave size comes from the initiator.
    kd = KernelDescriptor(compute_pgm_rsrc1=_reg(q, regs.COMPUTE_PGM_RSRC1),
                          compute_pgm_rsrc2=_reg(q, regs.COMPUTE_PGM_RSRC2),
                          compute_pgm_rsrc3=_reg(q, regs.compute_pgm_rsrc3(family)))
    kd.enable_wavefront_size32 = flags["cs_w32_en"]
    if flags["use_thread_dimensions"]:
        grid = tuple(dims)  # dimensions in threads: the last workgroup of a row may be partial
    else:
        # DIM is the end of the workgroup range and START its beginning (PAL's DispatchOffset programs
        # DIM = offset + size), so the grid covers DIM workgroups and the engine skips those below START.
        grid = tuple(d * w for d, w in zip(dims, workgroup, strict=True))
    tmpring, unit = regs.tmpring_layout(family)
    wave_bytes = tmpring.wavesize.get(_reg(q, regs.COMPUTE_TMPRING_SIZE)) * unit
    d = Dispatch(code_address=code, descriptor=kd, grid=grid, workgroup=workgroup,
                 group_segment_size=regs.lds_size(kd.compute_pgm_rsrc2),
                 private_segment_size=wave_bytes // kd.wavefront_size if kd.enable_private_segment else 0, vmid=q.vmid,
                 user_sgprs=[_reg(q, regs.COMPUTE_USER_DATA_0 + i) for i in range(regs.NUM_USER_DATA)],
                 grid_offset=start, dispatch_id=q.dispatches)
    d.extra["scratch_base"] = regs.address_of(_reg(q, regs.COMPUTE_DISPATCH_SCRATCH_BASE_LO),
                                              _reg(q, regs.COMPUTE_DISPATCH_SCRATCH_BASE_HI))
    return d


def aql_dispatch(gpu, q: Queue, pkt: aql.KernelDispatchPacket, packet_va: int, dispatch_id: int) -> Dispatch:
    """A Dispatch from an AQL kernel-dispatch packet: descriptor from kernel_object, queue_ptr from the rptr."""
    dims = aql.SETUP.dimensions.get(pkt.setup)
    if dims == 0:
        raise PacketError("kernel dispatch with setup.dimensions = 0")
    if pkt.kernel_object % 64:
        raise PacketError(f"kernel_object {pkt.kernel_object:#x} is not 64-byte aligned")
    kd = KernelDescriptor.from_bytes(gpu.mmu.read(q.vmid, pkt.kernel_object, KD_SIZE))
    wg = tuple(pkt.workgroup_size[i] if i < dims else 1 for i in range(3))
    grid = tuple(pkt.grid_size[i] if i < dims else 1 for i in range(3))
    if 0 in grid:
        raise PacketError(f"grid size {grid} has a zero dimension")
    queue_ptr = q.rptr_addr - aql.QUEUE_READ_DISPATCH_ID if q.rptr_addr else 0
    d = Dispatch(code_address=(pkt.kernel_object + kd.kernel_code_entry_byte_offset) & ((1 << 64) - 1),
                 descriptor=kd, grid=grid, workgroup=wg,
                 kernarg_address=pkt.kernarg_address, dispatch_ptr=packet_va, queue_ptr=queue_ptr,
                 dispatch_id=dispatch_id, vmid=q.vmid,
                 group_segment_size=max(pkt.group_segment_size, kd.group_segment_fixed_size),
                 private_segment_size=max(pkt.private_segment_size, kd.private_segment_fixed_size))
    if d.private_segment_size and queue_ptr:
        _scratch_from_queue(gpu, q, d, queue_ptr)
    return d


def _scratch_from_queue(gpu, q: Queue, d: Dispatch, queue_ptr: int) -> None:
    """Record the queue's scratch set-up (amd_queue_t) like the CP reads it for a scratch-using dispatch."""
    try:
        d.extra["tmpring_size"] = read_u32(gpu.mmu, q.vmid, queue_ptr + aql.QUEUE_COMPUTE_TMPRING_SIZE)
        d.extra["scratch_base"] = read_u64(gpu.mmu, q.vmid, queue_ptr + aql.QUEUE_SCRATCH_BACKING_MEMORY_LOCATION)
        d.extra["scratch_size"] = read_u64(gpu.mmu, q.vmid, queue_ptr + aql.QUEUE_SCRATCH_BACKING_MEMORY_BYTE_SIZE)
    except HardwareFault as f:
        raise PacketError("kernel needs scratch but the queue descriptor (amd_queue_t) is unreadable", f) from None


def check_shape(gpu, d: Dispatch) -> None:
    """Reject dispatch shapes the hardware cannot launch (PacketError)."""
    wg = d.workgroup
    if 0 in wg:
        raise PacketError(f"workgroup size {wg} has a zero dimension (COMPUTE_NUM_THREAD_* unset?)")
    if wg[0] * wg[1] * wg[2] > MAX_WORKGROUP_ITEMS:
        raise PacketError(f"workgroup of {wg[0] * wg[1] * wg[2]} work-items exceeds {MAX_WORKGROUP_ITEMS}")
    if d.group_segment_size > gpu.chip.lds_bytes:
        raise PacketError(f"group segment of {d.group_segment_size} bytes exceeds the "
                          f"{gpu.chip.lds_bytes >> 10} KiB of LDS")
    if any(g >= 1 << 32 for g in d.grid):
        raise PacketError(f"grid {d.grid} exceeds 32 bits per dimension")
    groups = 1
    for n in d.workgroups:
        groups *= n
    if groups > gpu.max_dispatch_workgroups:
        raise PacketError(f"dispatch of {groups} workgroups exceeds the simulator limit "
                          f"({gpu.max_dispatch_workgroups}; GPU(max_dispatch_workgroups=...))")


def run(gpu, q: Queue, d: Dispatch) -> None:
    """Run a dispatch on the shader engine, charging the launch cost; engine faults name the queue."""
    check_shape(gpu, d)
    groups = 1
    for n in d.workgroups:
        groups *= n
    gpu.clock.advance(costs.DISPATCH_CYCLES + costs.WORKGROUP_CYCLES * groups)
    q.dispatches += 1
    if groups == 0:
        return
    d.queue = q.name  # named by the interrupts its waves raise
    d.arch = gpu.arch  # the device's machine code
    observer = gpu.perfmon.begin(q, d)  # counters / thread trace (simgpu.profile): None when both are off
    try:
        gpu.engine.run(d)
    except HardwareFault as f:
        f.queue = q.name
        f.args = (str(f),)
        raise PacketError(f"shader fault: {f}", f) from None
    finally:
        gpu.perfmon.end(observer)
