"""The AM backend: the runtime as a userspace driver of the GPU's PCI function (runtime.Device(..., driver="am")).

pci.py: the PCI function through the OS seam, registers by name; boot.py: the bring-up; vram.py: VRAM allocation and
page tables; driver.py: AMDriver, the driver (runtime.driver) a Device composes, whose queues, memory, waits and
faults go through those.
"""
