"""The local-PCI service's messages (mockgpu.localpci has the protocol's description): the request and reply
layouts and the operations' numbers, and the -D flags that give the interposer (mockgpu/csrc/localpci.c) the same
numbers. Apart from the service so that `simgpu run` builds the interposer before it loads the GPUs' model."""

from __future__ import annotations

import struct

REQUEST = struct.Struct("<6Q")  # op, gpu, bar, offset, size, value
REPLY = struct.Struct("<qQQQ")  # status (0 or -errno), value, offset, length
READ, WRITE, MAP_VRAM, CFG_READ, CFG_WRITE, SYSMEM = range(1, 7)


def c_definitions() -> list[str]:
    """-D flags that give the interposer these numbers."""
    names = ("READ", "WRITE", "MAP_VRAM", "CFG_READ", "CFG_WRITE", "SYSMEM")
    return [f"-DSIMGPU_LP_{n}={globals()[n]}" for n in names]
