"""One GPU as the mock amdkfd sees it (amdkfd's kfd_node with the process's per-device data, its pdd) and the fixed
layout of the process's GPU virtual address space, shared by the ioctl groups (mockgpu.kfd and its kfd_* parts)."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field

from mockgpu.hive import Hive
from mockgpu.memory import VM, KfdError, RangeAllocator

VMID = 8  # amdkfd hands the first process VMID 8 (0..7 belong to amdgpu graphics)
VRAM_BASE = 16 << 20  # VRAM below this is reserved (firmware, in the simulation: nothing)
DOORBELL_PAGE = 8192
LDS_APERTURE, SCRATCH_APERTURE = 1 << 48, 2 << 48
GPUVM_BASE, GPUVM_LIMIT = 0x200000, (1 << 47) - (1 << 32) - 1


@dataclass
class Node:
    """One GPU as the driver sees it."""

    index: int
    gpu: object  # simgpu.GPU
    gpu_id: int
    vram: RangeAllocator
    gtt: RangeAllocator  # this GPU's GTT window of the device memory file
    vm: VM | None = None
    drm_fd: int | None = None
    doorbells: set[int] = field(default_factory=set)
    xnack: int = 0
    hive: Hive | None = None  # its XGMI hive (mockgpu.hive), None for a GPU without XGMI


def node_of(nodes: list[Node], gpu_id: int) -> Node:
    """The node of a gpu_id, or EINVAL."""
    for n in nodes:
        if n.gpu_id == gpu_id:
            return n
    raise KfdError(errno.EINVAL, f"no GPU with gpu_id {gpu_id}")


def vm_node_of(nodes: list[Node], gpu_id: int) -> Node:
    """A node whose VM was acquired (EINVAL otherwise, like a pdd without drm_priv)."""
    n = node_of(nodes, gpu_id)
    if n.vm is None:
        raise KfdError(errno.EINVAL, f"gpu_id {gpu_id}: no VM (AMDKFD_IOC_ACQUIRE_VM first)")
    return n
