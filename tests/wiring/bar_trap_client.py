"""Run by tests/wiring/test_run_tinygrad_am_local.py under `simgpu run --am`: maps the first GPU's BAR5
(registers) through libc's mmap, as a userspace driver does, reads a dword of the MMIO remap page (the HDP flush page,
simgpu.hw.soc21.nbio) with a plain 4-byte load (emulated by the trap), then copies 64 bytes there with memmove --
vector moves the trap does not emulate, which must stop the program with a message, never return made-up bytes."""

import ctypes
import os

libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)

device = "/sys/bus/pci/devices/" + sorted(os.listdir("/sys/bus/pci/devices"))[0]
fd = os.open(f"{device}/resource5", os.O_RDWR)
bar = libc.mmap(None, 1 << 20, 3, 1, fd, 0)  # PROT_READ|PROT_WRITE, MAP_SHARED
REMAP = 0x80000 - 4096
print("register", ctypes.c_uint32.from_address(bar + REMAP).value, flush=True)
buf = ctypes.create_string_buffer(64)
ctypes.memmove(buf, bar + REMAP, 64)
print("memmove returned", flush=True)
