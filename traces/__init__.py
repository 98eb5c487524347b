"""traces: record, replay, show, diff and export everything that crosses the OS seam.

May import: runtime, mockgpu.
"""
