"""Boot tinygrad's AM driver (PyPI tinygrad, in this process, synthetic firmware) on a simulated GPU, set up a compute
and an SDMA queue as its runtime does, and print the registers it touched that the device keeps as plain storage
(no block models them or reads them): the list in docs/device.md "Registers tinygrad's AM driver touches".

    python tools/am_unmodelled.py [ARCH]      # gfx1100 (default), gfx1201, gfx942 or gfx950
"""

import collections
import re
import struct
import sys

from simgpu.gpu import GPU
from simgpu.hw import sdma
from simgpu.soc import SOC
from tests.support.am_tinygrad import boot


def main(arch: str = "gfx1100") -> None:
    """Print the registers, grouped by family."""
    adev, soc = boot(SOC(GPU(vram_size=1 << 30, arch=arch)))  # (tinygrad reserves 384 MiB on GC 9.4 and 9.5)
    buf = [adev.mm.valloc(0x1000, contiguous=True) for _ in range(4)]
    adev.gfx.setup_ring(buf[0].va_addr, 0x1000, buf[1].va_addr, buf[1].va_addr + 8, buf[2].va_addr, 0x1000, idx=0,
                        aql=True)
    doorbell = adev.sdma.setup_ring(buf[3].va_addr, 0x1000, buf[1].va_addr + 16, buf[1].va_addr + 24, idx=0)
    trap = sdma.trap(1)  # one interrupt through the IH ring, as every tinygrad SDMA submission ends
    pa = buf[3].paddrs[0][0]
    soc.gpu.phys.vram[pa:pa + 4 * len(trap)] = memoryview(struct.pack(f"<{len(trap)}I", *trap)).cast("B")
    adev.doorbell64[doorbell] = 4 * len(trap)
    adev.ih.interrupt_handler()
    adev.fini()
    groups: dict[str, list[str]] = collections.OrderedDict()
    for name in soc.regs.unmodelled_touched():
        groups.setdefault(re.sub(r"(?<=ENG|REG)\d+", "n", name), []).append(name)
    for family, names in groups.items():
        print(f"{family} ({len(names)})" if len(names) > 1 else names[0])
    for line in soc.regs.describe():
        if line.startswith("unknown register written"):
            print(line)


if __name__ == "__main__":
    main(*sys.argv[1:])
