"""Testbed: the shader engine on simulated memory with a VM already set up, no driver or queues.

For the shader engine's own tests, the sample kernels and the benchmarks: allocate mapped buffers,
load a code object, pack kernel arguments from its metadata (hidden arguments of code object v5
filled as ROCm's runtime fills them) and run a grid. The runtime (runtime/) does the same through
amdkfd and queues; this is the shortest path to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hw import kernargs
from .hw.regs import PGM_RSRC3_GFX90A
from .isa import assemble
from .isa.arch import get_arch
from .isa.codeobject import CodeObject, Kernel, read_code_object, write_code_object
from .isa.kdescriptor import make_descriptor
from .mem import MMU, PageTableBuilder, PhysicalMemory, bump_allocator
from .shader import Dispatch, ShaderEngine

PAGE = 4096
VMID = 1
HEAP_BASE = 0x7F00_0000_0000  # where buffers and code objects are mapped in the testbed's VM


@dataclass
class LoadedKernel:
    """A kernel of a loaded code object: its descriptor, where its code sits, its metadata."""

    kernel: Kernel
    base: int  # VA the code object image is loaded at

    @property
    def code_address(self) -> int:
        return self.base + self.kernel.entry_address

    @property
    def args(self) -> list[dict]:
        return self.kernel.metadata.get(".args", [])


class Testbed:
    """One simulated GPU VM with a bump allocator, a loader and a launcher."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, vram_size: int = 4 << 30, watchdog: int = 50_000_000, sanitize=None, arch: str = "gfx1100"):
        self.arch = arch  # the architecture the engine runs (kernels must be built for it: load() checks)
        self.phys = PhysicalMemory(vram_size)
        self.mmu = MMU(self.phys)
        table_pool = vram_size // 2
        self.tables = PageTableBuilder(self.phys, bump_allocator(table_pool, table_pool + (256 << 20)))
        self.mmu.set_root(VMID, self.tables.root)
        self.engine = ShaderEngine(self.mmu, watchdog=watchdog)
        # Sanitizers (simgpu.sanitize), off unless asked for: "all", "memcheck,initcheck", ...; None: whatever
        # SIMGPU_SANITIZE says (unset: off)
        from .sanitize import Sanitizer, parse_checks, requested
        checks = requested() if sanitize is None else parse_checks(sanitize)
        self.sanitizer = self.engine.sanitizer = Sanitizer(checks) if checks else None
        self._next_pa = 1 << 20
        self._next_va = HEAP_BASE

    # ---------------------------------------------------------------------------------------------- memory

    def alloc(self, nbytes: int, executable: bool = False, name: str = "buffer") -> int:
        """Map a zeroed buffer of at least `nbytes` bytes; returns its virtual address (sanitizers check
        accesses against exactly `nbytes`)."""
        size = max(PAGE, -(-nbytes // PAGE) * PAGE)
        pa, va = self._next_pa, self._next_va
        self._next_pa += size
        self._next_va += size + PAGE  # a guard page between buffers: overruns fault
        self.tables.map(va, size, pa, executable=executable)
        self.mmu.invalidate(VMID, (va, va + size))
        if self.sanitizer is not None:
            self.sanitizer.allocations.map(VMID, va, size, name).requested = max(nbytes, 1)
        return va

    def free(self, va: int) -> None:
        """Unmap a buffer (later accesses fault; a sanitizer names them a use after free)."""
        a = self.sanitizer.allocations.find(VMID, va) if self.sanitizer is not None else None
        size = a.size if a is not None else PAGE
        self.tables.unmap(va, size)
        self.mmu.invalidate(VMID, (va, va + size))
        if self.sanitizer is not None:
            self.sanitizer.allocations.remove(VMID, va, va + size)

    def write(self, va: int, data) -> None:
        raw = bytes(memoryview(data).cast("B"))
        self.mmu.write(VMID, va, raw)
        if self.sanitizer is not None:
            self.sanitizer.host_wrote(VMID, va, len(raw))

    def read(self, va: int, nbytes: int) -> bytes:
        return self.mmu.read(VMID, va, nbytes)

    def upload(self, array: np.ndarray) -> int:
        """A new buffer holding `array`'s bytes."""
        a = np.ascontiguousarray(array)
        va = self.alloc(max(a.nbytes, 4))
        self.write(va, a.tobytes())
        return va

    def download(self, va: int, dtype, count: int) -> np.ndarray:
        dt = np.dtype(dtype)
        return np.frombuffer(self.read(va, dt.itemsize * count), dt).copy()

    # ---------------------------------------------------------------------------------------------- code

    def load(self, code_object: bytes) -> dict[str, LoadedKernel]:
        """Load a code object at a fresh VA; its kernels by name."""
        co: CodeObject = read_code_object(code_object)
        if co.processor and co.processor != self.arch:
            raise ValueError(f"code object is built for {co.processor}; this testbed runs {self.arch}")
        size = len(co.image)
        base = self.alloc(size, executable=True, name="code object")
        self.write(base, co.relocated_image(base))
        loaded = {name: LoadedKernel(k, base) for name, k in co.kernels.items()}
        if self.sanitizer is not None:
            for name, k in loaded.items():
                self.sanitizer.name_kernel(k.code_address, name)
        return loaded

    def load_asm(self, body: str, name: str = "k", vgprs: int = 256, args: int = 4, lds: int = 0,
                 scratch: int = 0, wave32: bool = True, workitem_id_dims: int = 1, agprs: int = 0) -> LoadedKernel:
        """Assemble a kernel body (LLVM syntax) into a loaded kernel: s[0:1] holds the kernarg pointer,
        s2 the workgroup id x (gfx12: ttmp9), v0 the work-item id; `args` 64-bit pointer/value arguments. gfx942
        kernels are wave64 and have `agprs` AccVGPRs after the `vgprs` (rounded up to 4) in the unified file."""
        meta = {".args": [{".name": f"a{i}", ".offset": 8 * i, ".size": 8, ".value_kind": "by_value"}
                          for i in range(args)]}
        gfx9 = get_arch(self.arch).family == "gfx9"
        kd = make_descriptor(min(vgprs, 256), kernarg_size=8 * args, group_segment_size=lds,
                             private_segment_size=scratch, wave32=wave32 and not gfx9,
                             workitem_id_dims=workitem_id_dims)
        if gfx9:  # AMDGPUUsage: vgprs_used = align(arch VGPRs, 4) + AccVGPRs, in blocks of 8; ACCUM_OFFSET / 4 - 1
            arch_vgprs = max(4, -(-vgprs // 4) * 4)
            kd.granulated_workitem_vgpr_count = -(-(arch_vgprs + agprs) // 8) - 1
            kd.compute_pgm_rsrc3 = PGM_RSRC3_GFX90A.accum_offset.put(0, arch_vgprs // 4 - 1)
        co = write_code_object([(name, assemble(body, arch=self.arch), kd, meta)], target=self.arch)
        return self.load(co)[name]

    def launch(self, k: LoadedKernel, args: list, grid: tuple[int, ...], block: tuple[int, ...],
               shared: int = 0) -> Dispatch:
        """Run `k` over `grid` workgroups of `block` work-items (HIP launch conventions)."""
        grid = tuple(grid) + (1,) * (3 - len(grid))
        block = tuple(block) + (1,) * (3 - len(block))
        desc = k.kernel.descriptor
        kernarg = pack_kernargs(k, args, grid, block)
        kva = self.alloc(max(len(kernarg), 256), name="kernarg segment")
        self.write(kva, kernarg)
        d = Dispatch(code_address=k.code_address, descriptor=desc,
                     grid=tuple(g * b for g, b in zip(grid, block, strict=True)), workgroup=block,
                     kernarg_address=kva, group_segment_size=desc.group_segment_fixed_size + shared,
                     private_segment_size=desc.private_segment_fixed_size, vmid=VMID, arch=self.arch)
        self.engine.run(d)
        return d


def pack_kernargs(k: LoadedKernel, args: list, grid, block) -> bytes:
    """The kernarg segment: explicit arguments from `args`, hidden ones filled per code object v5."""
    try:
        return kernargs.pack(k.args, k.kernel.descriptor.kernarg_size, list(args), grid, block)
    except TypeError as e:
        raise TypeError(f"{k.kernel.name}: {e}") from None
