"""The process's user-mode queues: AMDKFD_IOC_CREATE_QUEUE, DESTROY_QUEUE and UPDATE_QUEUE (amdkfd's process queue
manager, kfd_process_queue_manager.c), each queue backed by a hardware queue of its GPU and a doorbell slot."""

from __future__ import annotations

import errno
from dataclasses import dataclass

from mockgpu.devmem import DeviceMemory
from mockgpu.kfd_node import DOORBELL_PAGE, VMID, Node, vm_node_of
from mockgpu.memory import KfdError
from runtime.uapi import kfd

QUEUE_FORMATS = {kfd.KFD_IOC_QUEUE_TYPE_COMPUTE: "pm4", kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: "aql",
                 kfd.KFD_IOC_QUEUE_TYPE_SDMA: "sdma", kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI: "sdma",
                 kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: "sdma"}


@dataclass
class MockQueue:
    """A user-mode queue and the hardware queue backing it."""

    queue_id: int
    node: Node
    hw: object  # simgpu.cp.queue.Queue
    doorbell: int
    fmt: str


class ProcessQueueManager:
    """The queues of one kfd_process, by queue id (module docstring)."""

    def __init__(self, nodes: list[Node], devmem: DeviceMemory):
        self.nodes, self.devmem = nodes, devmem
        self.queues: dict[int, MockQueue] = {}

    def create_queue(self, a) -> None:
        n = vm_node_of(self.nodes, a.gpu_id)
        fmt = QUEUE_FORMATS.get(a.queue_type)
        if fmt is None:
            raise KfdError(errno.EINVAL, f"unknown queue type {a.queue_type}")
        if a.queue_percentage > kfd.KFD_MAX_QUEUE_PERCENTAGE or a.queue_priority > kfd.KFD_MAX_QUEUE_PRIORITY:
            raise KfdError(errno.EINVAL, "queue percentage or priority out of range")
        if a.ring_size & (a.ring_size - 1) or a.ring_size < 256 or a.ring_base_address % 256:
            raise KfdError(errno.EINVAL, f"ring {a.ring_base_address:#x}+{a.ring_size:#x}: size must be a power of "
                                         "two >= 256, base 256-byte aligned")
        for what, va, size in (("ring", a.ring_base_address, a.ring_size), ("rptr", a.read_pointer_address, 8),
                               ("wptr", a.write_pointer_address, 8)):
            if not va or not n.vm.mapped(va, size):
                raise KfdError(errno.EINVAL, f"{what} address {va:#x} is not mapped on the GPU")
        slot = next((s for s in range(2, DOORBELL_PAGE // 8) if s not in n.doorbells), None)
        if slot is None or len(self.queues) >= 1024:
            raise KfdError(errno.ENOMEM, "no free doorbell")
        qid = next(i for i in range(len(self.queues) + 1) if i not in self.queues)
        try:
            hw = n.gpu.create_queue(fmt, a.ring_base_address, a.ring_size, VMID, slot, a.read_pointer_address,
                                    a.write_pointer_address, name=f"{fmt}-q{qid}", engine=a.sdma_engine_id & 1)
        except ValueError as e:
            raise KfdError(errno.EINVAL, str(e)) from None
        n.doorbells.add(slot)
        self.queues[qid] = MockQueue(qid, n, hw, slot, fmt)
        a.queue_id = qid
        a.doorbell_offset = self.devmem.doorbell_offset(n.index) + slot * 8

    def destroy_queue(self, a) -> None:
        q = self.queues.pop(a.queue_id, None)
        if q is None:
            raise KfdError(errno.EINVAL, f"no queue {a.queue_id}")
        q.node.gpu.destroy_queue(q.hw)
        q.node.doorbells.discard(q.doorbell)

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
