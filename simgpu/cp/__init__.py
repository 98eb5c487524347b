"""simgpu.cp: the command processors of the simulated device: PM4 and AQL compute queues (MEC), the SDMA
engines, queue state and error reports, DMA helpers and the virtual clock's cost model.

May import: simgpu.hw, simgpu.mem, simgpu.shader, simgpu.isa, simgpu.fault, simgpu.interrupt.
"""
