"""The process's user-mode queues: AMDKFD_IOC_CREATE_QUEUE, DESTROY_QUEUE and UPDATE_QUEUE (amdkfd's process queue
manager, kfd_process_queue_manager.c), each queue backed by a hardware queue of its GPU and a doorbell slot.

SDMA queues get their engine as amdkfd's device queue manager hands them out (allocate_sdma_queue): a GPU's engines
are split into PCIe and XGMI engines (mockgpu.hive.sdma_engines), each with the chip's queues; queue slot i of a pool
of e engines is queue i // e of engine i % e (the XGMI pool's engine ids follow the PCIe ones), minus the slots amdgpu
keeps (the chip's reserved bitmap, PCIe pool only). KFD_IOC_QUEUE_TYPE_SDMA takes the lowest free PCIe slot,
SDMA_XGMI the lowest free XGMI slot, SDMA_BY_ENG_ID the lowest free slot of the engine the caller names (EINVAL past
the last engine); no free slot is ENOMEM, as for a GPU without XGMI engines asked for an XGMI queue.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

from mockgpu import hive
from mockgpu.devmem import DeviceMemory
from mockgpu.kfd_node import DOORBELL_PAGE, VMID, Node, vm_node_of
from mockgpu.memory import KfdError
from runtime.uapi import kfd

QUEUE_FORMATS = {kfd.KFD_IOC_QUEUE_TYPE_COMPUTE: "pm4", kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: "aql",
                 kfd.KFD_IOC_QUEUE_TYPE_SDMA: "sdma", kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI: "sdma",
                 kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: "sdma"}
# The kernel's internal "not supported" (include/linux/errno.h), which amdkfd returns to user space for a queue type
# it does not know; Python's errno has no name for it (its ENOTSUP is 95).
ENOTSUPP = 524


@dataclass
class MockQueue:
    """A user-mode queue and the hardware queue backing it."""

    queue_id: int
    node: Node
    hw: object  # simgpu.cp.queue.Queue
    doorbell: int
    fmt: str
    sdma_slot: tuple[str, int] | None = None  # ("sdma" or "xgmi", slot) of an SDMA queue


def _sdma_pools(chip) -> dict[str, tuple[int, int, int]]:
    """pool -> (first engine id, engines, slots) of a chip (module docstring)."""
    pcie, xgmi = hive.sdma_engines(chip)
    per = chip.sdma_queues_per_engine
    return {"sdma": (0, pcie, pcie * per), "xgmi": (pcie, xgmi, xgmi * per)}


class ProcessQueueManager:
    """The queues of one kfd_process, by queue id (module docstring)."""

    def __init__(self, nodes: list[Node], devmem: DeviceMemory):
        self.nodes, self.devmem = nodes, devmem
        self.queues: dict[int, MockQueue] = {}
        self.sdma_used: dict[int, set[tuple[str, int]]] = {n.index: set() for n in nodes}  # per GPU: taken slots

    def _sdma_slot(self, n: Node, a) -> tuple[tuple[str, int], int]:
        """((pool, slot), engine id) for a new SDMA queue of node n (module docstring)."""
        pools, used = _sdma_pools(n.gpu.chip), self.sdma_used[n.index]
        reserved = n.gpu.chip.sdma_reserved_queues
        if a.queue_type == kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
            last = sum(engines for _, engines, _ in pools.values()) - 1
            if a.sdma_engine_id > last:
                raise KfdError(errno.EINVAL, f"sdma_engine_id {a.sdma_engine_id} exceeds maximum id of {last}")
            pool = "sdma" if a.sdma_engine_id < pools["sdma"][1] else "xgmi"
            first, engines, slots = pools[pool]
            candidates = range(a.sdma_engine_id - first, slots, engines)
        else:
            pool = "xgmi" if a.queue_type == kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI else "sdma"
            first, engines, slots = pools[pool]
            candidates = range(slots)
        free = [i for i in candidates if (pool, i) not in used and not (pool == "sdma" and reserved >> i & 1)]
        if not free:
            what = {"sdma": "SDMA", "xgmi": "XGMI SDMA"}[pool]
            raise KfdError(errno.ENOMEM, f"no more {what} queue to allocate on gpu_id {n.gpu_id} "
                                         f"({engines} {what} engines of {n.gpu.chip.sdma_queues_per_engine} queues)")
        return (pool, free[0]), first + free[0] % engines

    def create_queue(self, a) -> None:
        n = vm_node_of(self.nodes, a.gpu_id)
        fmt = QUEUE_FORMATS.get(a.queue_type)
        # bits 0-7 are the percentage, bits 8-15 the XCC a gfx9.4.3 PM4 queue targets (set_queue_properties_from_user)
        if a.queue_percentage & 0xFF > kfd.KFD_MAX_QUEUE_PERCENTAGE or a.queue_priority > kfd.KFD_MAX_QUEUE_PRIORITY:
            raise KfdError(errno.EINVAL, "queue percentage or priority out of range")
        if a.ring_size & (a.ring_size - 1) or a.ring_size < 256 or a.ring_base_address % 256:
            raise KfdError(errno.EINVAL, f"ring {a.ring_base_address:#x}+{a.ring_size:#x}: size must be a power of "
                                         "two >= 256, base 256-byte aligned")
        if fmt is None:  # (checked after the percentage, priority and ring, as set_queue_properties_from_user does)
            raise KfdError(ENOTSUPP, f"unknown queue type {a.queue_type}")
        for what, va, size in (("ring", a.ring_base_address, a.ring_size), ("rptr", a.read_pointer_address, 8),
                               ("wptr", a.write_pointer_address, 8)):
            if not va or not n.vm.mapped(va, size):
                raise KfdError(errno.EINVAL, f"{what} address {va:#x} is not mapped on the GPU")
        slot = next((s for s in range(2, DOORBELL_PAGE // 8) if s not in n.doorbells), None)
        if slot is None or len(self.queues) >= 1024:
            raise KfdError(errno.ENOMEM, "no free doorbell")
        qid = next(i for i in range(len(self.queues) + 1) if i not in self.queues)
        sdma_slot, engine = self._sdma_slot(n, a) if fmt == "sdma" else (None, 0)
        try:
            hw = n.gpu.create_queue(fmt, a.ring_base_address, a.ring_size, VMID, slot, a.read_pointer_address,
                                    a.write_pointer_address, name=f"{fmt}-q{qid}", engine=engine)
        except ValueError as e:
            raise KfdError(errno.EINVAL, str(e)) from None
        n.doorbells.add(slot)
        if sdma_slot is not None:
            self.sdma_used[n.index].add(sdma_slot)
        self.queues[qid] = MockQueue(qid, n, hw, slot, fmt, sdma_slot)
        a.queue_id = qid
        a.doorbell_offset = self.devmem.doorbell_offset(n.index) + slot * 8

    def destroy_queue(self, a) -> None:
        q = self.queues.pop(a.queue_id, None)
        if q is None:
            raise KfdError(errno.EINVAL, f"no queue {a.queue_id}")
        q.node.gpu.destroy_queue(q.hw)
        q.node.doorbells.discard(q.doorbell)
        self.sdma_used[q.node.index].discard(q.sdma_slot)

    def update_queue(self, a) -> None:
        q = self.queues.get(a.queue_id)
        if q is None:
            raise KfdError(errno.EINVAL, f"no queue {a.queue_id}")
        if a.queue_percentage > kfd.KFD_MAX_QUEUE_PERCENTAGE or a.queue_priority > kfd.KFD_MAX_QUEUE_PRIORITY:
            raise KfdError(errno.EINVAL, "queue percentage or priority out of range")
        if a.ring_size & (a.ring_size - 1) or a.ring_size < 256 or a.ring_base_address % 256:
            raise KfdError(errno.EINVAL, "bad ring geometry")
        if not q.node.vm.mapped(a.ring_base_address, a.ring_size):
            raise KfdError(errno.EINVAL, "ring is not mapped on the GPU")
        if q.hw.rptr != q.hw.wptr:
            raise KfdError(errno.EBUSY, "queue is not idle")
        try:
            q.node.gpu.update_queue(q.hw, a.ring_base_address, a.ring_size)
        except ValueError as e:
            raise KfdError(errno.EINVAL, str(e)) from None
