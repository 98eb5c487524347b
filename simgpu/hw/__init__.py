"""simgpu.hw: facts about the hardware, written once (PM4, AQL and SDMA packet layouts, registers,
kernel descriptor, page-table entry format). Shared by the simulator and the runtime.

May import: nothing outside simgpu.hw.
"""
