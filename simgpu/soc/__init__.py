"""The SOC21 blocks around the graphics core that a userspace (AM) driver programs through the PCI BARs: register
file, VM hubs, IH, PSP, SMU, MEC/HQDs, SDMA rings, NBIO/HDP, PCI configuration space (docs/device.md "The PCI
function and AM bring-up")."""

from simgpu.soc.regfile import MMIOError
from simgpu.soc.soc import SOC

__all__ = ["SOC", "MMIOError"]
