"""traces: record, replay, show, diff and export everything that crosses the OS seam.

May import: runtime, mockgpu (replay runs on a MockOS), simgpu.hw and simgpu.isa (decoding
the packets and instructions a trace holds) and the simgpu package itself (its version).
"""
