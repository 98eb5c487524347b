"""Shared set-up for the GPU device tests: a VM on a simgpu.GPU, queues whose rings live in it, and
kernel launch helpers for the PM4 and AQL paths (what the mock driver and the runtime will do)."""

from __future__ import annotations

import struct

import numpy as np

from simgpu.gpu import GPU
from simgpu.hw import aql, regs
from simgpu.hw import pm4 as hw
from simgpu.isa import assemble
from simgpu.isa.codeobject import read_code_object, write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from simgpu.mem import PageTableBuilder, bump_allocator
from simgpu.testbed import LoadedKernel, pack_kernargs

PAGE = 4096
HEAP = 0x7F00_0000_0000
__test__ = False


class VM:
    """A GPU virtual address space (one VMID) with a bump allocator over the GPU's VRAM."""

    def __init__(self, gpu: GPU, vmid: int = 1, heap: int = HEAP):
        self.gpu, self.vmid = gpu, vmid
        pool = gpu.phys.vram_size // 2
        self.tables = PageTableBuilder(gpu.phys, bump_allocator(pool + vmid * (8 << 20), pool + (vmid + 1) * (8 << 20)))
        gpu.mmu.set_root(vmid, self.tables.root)
        self.next_pa, self.next_va = 1 << 20, heap
        self.mapped: list[tuple[int, int]] = []

    def alloc(self, nbytes: int, executable: bool = False, scattered: bool = False) -> int:
        """Map zeroed memory; scattered maps its pages to non-contiguous, reversed physical pages."""
        size = max(PAGE, -(-nbytes // PAGE) * PAGE)
        va = self.next_va
        self.next_va += size + PAGE  # guard page
        if scattered:
            pages = size // PAGE
            pas = [self.next_pa + 2 * PAGE * (pages - 1 - i) for i in range(pages)]
            self.next_pa += 2 * PAGE * pages
            self.tables.map_pages(va, pas, executable=executable)
        else:
            self.tables.map(va, size, self.next_pa, executable=executable)
            self.next_pa += size
        self.gpu.mmu.invalidate(self.vmid)
        self.mapped.append((va, size))
        return va

    def write(self, va: int, data) -> None:
        self.gpu.mmu.write(self.vmid, va, bytes(memoryview(data).cast("B")))

    def read(self, va: int, n: int) -> bytes:
        return self.gpu.mmu.read(self.vmid, va, n)

    def u32(self, va: int, count: int = 1) -> list[int]:
        return np.frombuffer(self.read(va, 4 * count), "<u4").tolist()

    def u64(self, va: int) -> int:
        return struct.unpack("<Q", self.read(va, 8))[0]

    def upload(self, a: np.ndarray) -> int:
        va = self.alloc(max(a.nbytes, 4))
        self.write(va, np.ascontiguousarray(a).tobytes())
        return va

    def download(self, va: int, dtype, count: int) -> np.ndarray:
        dt = np.dtype(dtype)
        return np.frombuffer(self.read(va, dt.itemsize * count), dt).copy()

    def load(self, code_object: bytes) -> dict[str, LoadedKernel]:
        co = read_code_object(code_object)
        base = self.alloc(len(co.image), executable=True)
        self.write(base, co.relocated_image(base))
        return {name: LoadedKernel(k, base) for name, k in co.kernels.items()}

    def snapshot(self) -> bytes:
        """Every mapped byte (for determinism checks)."""
        return b"".join(self.read(va, size) for va, size in self.mapped)


class Ring:
    """A queue of the GPU with its ring in the VM; submit() writes packets at wptr and rings the doorbell."""

    def __init__(self, vm: VM, fmt: str, size: int = 4096, doorbell: int | None = None, wptr_poll: bool = False):
        self.vm, self.fmt, self.size = vm, fmt, size
        self.base = vm.alloc(size)
        if fmt == "aql":
            self.amd_queue = vm.alloc(aql.QUEUE_SIZE)
            vm.write(self.amd_queue, aql.make_queue(self.base, size // aql.PACKET_SIZE))
            self.rptr_addr = self.amd_queue + aql.QUEUE_READ_DISPATCH_ID
            self.wptr_addr = self.amd_queue + aql.QUEUE_WRITE_DISPATCH_ID
        else:
            ptrs = vm.alloc(64)
            self.rptr_addr, self.wptr_addr = ptrs, ptrs + 8
        doorbell = len(vm.gpu.queues) if doorbell is None else doorbell
        self.q = vm.gpu.create_queue(fmt, self.base, size, vm.vmid, doorbell, self.rptr_addr,
                                     self.wptr_addr if wptr_poll else 0)
        self.wptr = 0  # in the queue's unit

    @property
    def unit(self) -> int:
        return self.q.unit

    def write(self, data: bytes, ring: bool = True) -> None:
        """Append raw bytes at wptr (wrapping), then ring the doorbell with the new wptr."""
        pos = (self.wptr * self.unit) % self.size
        first = min(len(data), self.size - pos)
        self.vm.write(self.base + pos, data[:first])
        if first < len(data):
            self.vm.write(self.base, data[first:])
        self.wptr += len(data) // self.unit
        self.vm.write(self.wptr_addr, struct.pack("<Q", self.wptr))
        if ring:
            self.vm.gpu.ring_doorbell(self.q.doorbell, self.wptr)

    def submit(self, *packets, ring: bool = True) -> None:
        """Append dword lists (PM4/SDMA) or 64-byte AQL packets."""
        parts = []
        for p in packets:
            parts.append(p if isinstance(p, bytes | bytearray) else np.array(p, "<u4").tobytes())
        self.write(b"".join(parts), ring)


# ---- kernels -----------------------------------------------------------------------------------------------
def user_data(k: LoadedKernel, kernarg: int, dispatch_ptr: int = 0, queue_ptr: int = 0) -> list[int]:
    """COMPUTE_USER_DATA values for the user SGPRs the kernel descriptor enables (AMDGPUUsage order)."""
    kd = k.kernel.descriptor
    out: list[int] = []
    if kd.enable_sgpr_private_segment_buffer:
        out += [0, 0, 0, 0]
    for flag, value in ((kd.enable_sgpr_dispatch_ptr, dispatch_ptr), (kd.enable_sgpr_queue_ptr, queue_ptr),
                        (kd.enable_sgpr_kernarg_segment_ptr, kernarg), (kd.enable_sgpr_dispatch_id, 0)):
        if flag:
            out += [value & 0xFFFFFFFF, value >> 32]
    return out


def kernarg_buffer(vm: VM, k: LoadedKernel, args: list, grid, block) -> int:
    data = pack_kernargs(k, args, grid, block)
    va = vm.alloc(max(len(data), 256))
    vm.write(va, data)
    return va


def pm4_launch(vm: VM, k: LoadedKernel, args: list, grid: tuple, block: tuple) -> list[int]:
    """The PM4 packets that launch k (SET_SH_REG of the COMPUTE_* registers, then DISPATCH_DIRECT)."""
    grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
    kd = k.kernel.descriptor
    kernarg = kernarg_buffer(vm, k, args, grid, block)
    code = k.code_address
    initiator = regs.dispatch_initiator(wave32=kd.enable_wavefront_size32)
    return [*hw.set_sh_reg(regs.COMPUTE_PGM_LO, *regs.address_regs(code)),
            *hw.set_sh_reg(regs.COMPUTE_PGM_RSRC1, kd.compute_pgm_rsrc1, kd.compute_pgm_rsrc2),
            *hw.set_sh_reg(regs.compute_pgm_rsrc3(vm.gpu.chip.family), kd.compute_pgm_rsrc3),
            *hw.set_sh_reg(regs.COMPUTE_TMPRING_SIZE, regs.tmpring_size(1, kd.private_segment_fixed_size * 32)),
            *hw.set_sh_reg(regs.COMPUTE_USER_DATA_0, *user_data(k, kernarg)),
            *hw.set_sh_reg(regs.COMPUTE_START_X, 0, 0, 0, *block),
            *hw.dispatch_direct(*grid, initiator=initiator)]


def aql_launch(vm: VM, k: LoadedKernel, args: list, grid: tuple, block: tuple, signal: int = 0) -> bytes:
    """The AQL kernel-dispatch packet for k (grid in workgroups like HIP; AQL wants work-items)."""
    grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
    kd = k.kernel.descriptor
    kernarg = kernarg_buffer(vm, k, args, grid, block)
    dims = 3 if grid[2] * block[2] > 1 else 2 if grid[1] * block[1] > 1 else 1
    items = tuple(g * b for g, b in zip(grid, block, strict=True))
    pkt = aql.KernelDispatchPacket(header=aql.make_header(aql.PacketType.KERNEL_DISPATCH), setup=dims,
                                   workgroup_size=block, grid_size=items,
                                   private_segment_size=kd.private_segment_fixed_size,
                                   group_segment_size=kd.group_segment_fixed_size,
                                   kernel_object=k.base + k.kernel.descriptor_address, kernarg_address=kernarg,
                                   completion_signal=signal)
    return pkt.pack()


def new_signal(vm: VM, value: int = 1, mailbox: int = 0, event_id: int = 0) -> int:
    va = vm.alloc(aql.SIGNAL_SIZE)
    vm.write(va, aql.Signal(aql.SignalKind.USER, value, mailbox, event_id).pack())
    return va


def asm_kernel(vm: VM, body: str, args: int = 1, name: str = "k") -> LoadedKernel:
    """Assemble a kernel body: s[0:1] = kernarg pointer, s2 = workgroup id x, v0 = work-item id x."""
    meta = {".args": [{".name": f"a{i}", ".offset": 8 * i, ".size": 8, ".value_kind": "by_value"}
                      for i in range(args)]}
    kd = make_descriptor(64, kernarg_size=8 * args)
    return vm.load(write_code_object([(name, assemble(body), kd, meta)]))[name]


class Recorder:
    """An engine observer that records the PCs wave 0 of workgroup 0 executes (what the simulator did), but for the
    instructions `unseen` names (a trace writes no token for them)."""

    def __init__(self, unseen: tuple[str, ...] = ()):
        self.pcs: list[int] = []
        self.unseen = unseen

    def batch_start(self, ex):
        self.first = ex.groups_before == 0

    def batch_end(self, ex):
        pass

    def before(self, ex, w, pc, inst):
        return inst

    def after(self, ex, w, pc, inst, kind, time):
        if self.first and 0 in w.tolist() and inst.mnemonic not in self.unseen:
            self.pcs.append(pc)
