"""simgpu.cp: the command processors of the simulated device: PM4 and AQL compute queues (MEC), the SDMA
engines, queue state and error reports, DMA helpers (the virtual clock and its cost model: simgpu.clock).

May import: simgpu.hw, simgpu.mem, simgpu.shader, simgpu.isa, simgpu.fault, simgpu.interrupt, simgpu.clock.
"""
