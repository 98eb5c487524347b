"""Copies from one GPU's buffer to another GPU's of the same process (Device.copy_between across devices).

To a GPU of the sender's XGMI hive (an XGMI io_link in the KFD topology between their nodes) the copy goes straight
into the peer's VRAM: the peer's buffer is mapped on the sending GPU (MAP_MEMORY_TO_GPU with the sender's gpu_id,
which amdkfd maps over XGMI) and one of the sender's XGMI SDMA engines copies it (a KFD_IOC_QUEUE_TYPE_SDMA_XGMI
queue, made at the first such copy). Between other GPUs it goes through a system-memory bounce buffer both GPUs map,
each GPU's SDMA queue copying its half.
"""

from __future__ import annotations

from runtime.queues import SDMAXGMIQueue

BOUNCE = 4 << 20  # bytes of a bounce buffer, copied per round trip


def xgmi_peer(dev, other) -> bool:
    """Whether Device `other` is another GPU of `dev`'s XGMI hive (on the same OS)."""
    return other is not dev and other.os is dev.os and other.node_id in getattr(dev.driver, "xgmi_nodes", ())


def copy_across(dev, dst, src, nbytes: int) -> None:
    """dev's Buffer `src` -> another device's Buffer `dst` (module docstring)."""
    if xgmi_peer(dev, dst.device):
        _over_xgmi(dev, dst, src, nbytes)
        return
    bounce = dev.alloc_system(min(nbytes, BOUNCE), peers=(dst.device,), name="copy bounce buffer")
    try:
        for pos in range(0, nbytes, BOUNCE):
            n = min(BOUNCE, nbytes - pos)
            dev.sdma_copy(bounce.va, src.va + pos, n)
            dst.device.sdma_copy(dst.va + pos, bounce.va, n)
    finally:
        bounce.free()


def _over_xgmi(dev, dst, src, nbytes: int) -> None:
    """Into the hive peer's buffer, mapped on dev once, on dev's XGMI SDMA queue, after both GPUs' kernels."""
    if dev not in dst.mapped_on:
        dev.driver.map_on_peer(dst.handle, dev.gpu_id)
        dst.mapped_on.append(dev)
    if dev.sdma_xgmi is None:
        dev.sdma_xgmi = SDMAXGMIQueue(dev, dev.completion_event)
    dst.device.wait(dst.device.compute, dst.device.compute.submitted)  # its kernels may still use the buffer
    dev.sdma_copy(dst.va, src.va, nbytes, dev.sdma_xgmi)
