"""The native gfx1100 backend's target: instruction selection rules over the kernel IR (select, alu_int,
alu_float, convert, divide, memory, matrix), uniformity (uniform), register files and spill code (target),
waits (waitcnt), hazards, and emission through simgpu.isa (emit). compiler.backend.native is its Backend."""

from compiler.backend.gfx11 import alu_float, alu_int, convert, divide, matrix, memory  # noqa: F401 - rules
