"""The CPU device's kernel ABI: where a launch puts things in the sandbox's address space, and what a kernel's
code may assume. The x86-64 backend (compiler.backend.x86) builds code against these numbers; the device
(runtime.cpu.device) maps memory by them. Nothing else is mapped (but the code space between programs, below),
so any other address faults.

- kernarg page, `KERNARG` (read/write, for the device's life): at `8*i` the address of buffer argument i;
  at `FUEL` the instruction budget left; at `SCHED` the fiber scheduler's words.
- code, `CODE_BASE + k * CODE_STRIDE` (read/execute-only, from its first launch on): program k's .text. Code
  stays mapped so that unicorn's translations of it survive from one launch to the next (unmapping memory
  makes unicorn drop every translation); it is never writable. The code of `CODE_CHUNK // CODE_STRIDE`
  programs shares one mapping (zeros between programs): every mapping slows each later map and protect in
  unicorn, and a device that loaded a thousand kernels had a thousand code mappings.
- buffers, in the heap from `HEAP_BASE` (mapped for the buffer's life, but accessible, read/write, only
  during a launch that has it as an argument; no access otherwise): the buffer's bytes, placed so that its
  last byte is the last byte of a page, followed by `BUFFER_GUARD` bytes that are never mapped: the first byte
  past the end faults.
- LDS, `LDS_BASE` (`LDS_SIZE`; read/write and zeroed during launches that use it): the workgroup's shared
  memory (workgroups run one after another).
- fibers, `FIBER_BASE` (`FIBER_SIZE`; read/write during launches with barriers): the fiber table (a saved
  stack pointer per work-item of a workgroup), then one stack per work-item.
- stack, below `STACK_TOP` (`STACK_SIZE`, read/write, for the device's life): the entry's frame (spill
  slots); `[STACK_TOP - 8]` holds `EXIT`.

Entry: `rip` = the code's `entry` offset, `rsp` = `STACK_TOP - 8` pointing at the return address `EXIT` (never
mapped: the device stops when the kernel returns there); every other register is zero, MXCSR = `MXCSR`
(round to nearest even, all float exceptions masked, denormals kept: no FTZ/DAZ). The kernel walks its whole
grid itself and returns.

Budget: every backward branch the backend emits is preceded by `sub qword ptr [FUEL], n; jb trap` (n the
instructions of the loop's body), so a runaway loop ends at its trap, a `ud2` the image's metadata maps back
to the loop's branch.
"""

KERNARG = 0x10000
KERNARG_SIZE = 0x1000
MAX_PARAMS = 0x100  # 8 bytes each: the first half of the kernarg page
FUEL = KERNARG + 0x800
SCHED = KERNARG + 0x840  # fiber scheduler: current work-item, the driver's rsp, group ids (8 bytes each)
SCHED_WORDS = 8

CODE_BASE = 0x400000000000  # above the heap
CODE_STRIDE = 0x100000  # 1 MiB of address space per loaded program (the largest kernel text)
CODE_CHUNK = 64 * CODE_STRIDE  # one mapping holds the code of 64 programs
LDS_BASE = 0x20000000
LDS_SIZE = 0x10000  # gfx11's 64 KiB per workgroup
FIBER_BASE = 0x30000000
FIBER_SIZE = 0x1000000
STACK_TOP = 0x70000000
STACK_SIZE = 0x100000
EXIT = 0x7FFF0000

PAGE = 0x1000
HEAP_BASE = 1 << 40
HEAP_END = CODE_BASE
BUFFER_GUARD = 1 << 32  # unmapped bytes after every buffer (an int32 index past the end lands in them)
MXCSR = 0x1F80
DEFAULT_BUDGET = 20_000_000_000  # instructions charged at loop branches (about two minutes of emulation)


def pages(nbytes: int) -> int:
    """Bytes of whole pages holding nbytes (at least one page)."""
    return max(-(-nbytes // PAGE), 1) * PAGE
