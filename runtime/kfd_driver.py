"""KFDDriver: the driver protocol (runtime.driver) over amdkfd's ioctls and the DRM render node, through the OS seam."""

from __future__ import annotations

import ctypes
import struct

from runtime.fault import HW, MEMORY, GPUFault
from runtime.os import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, MAP_SHARED, PROT_READ, PROT_WRITE, TOPOLOGY, Mapping
from runtime.process import kfd_context
from runtime.uapi import amdgpu_drm as drm
from runtime.uapi import kfd

_EVENT_SIZE = ctypes.sizeof(kfd.kfd_event_data)
# Offsets in the host page of ioctl pointer arguments (args_page).
_ARGS_DEVICE_IDS, _ARGS_EVENTS, _ARGS_INFO = 0, 4096, 8192


def _arch(version: int) -> str:
    return f"gfx{version // 10000}{(version // 100) % 100:x}{version % 100:x}"


def _props(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        if k:
            out[k] = int(v) if v.strip().lstrip("-").isdigit() else v.strip()
    return out


class KFDDriver:
    """amdkfd: one GPU of the KFD topology in the process's amdkfd context (runtime.process), shared by every
    Device on one OS object."""

    name = "kfd"
    system_memory = True

    def __init__(self, dev):
        self.dev, self.os = dev, dev.os

    # ---- discovery and set-up ---------------------------------------------------------------------------------
    def open(self) -> None:
        """The dev.index-th GPU node of the topology, in the process's amdkfd context (opened by the first Device on
        this OS object), with its render node's VM acquired."""
        nodes = sorted(int(n) for n in self.os.listdir(f"{TOPOLOGY}/nodes"))
        gpus = [n for n in nodes if int(self.os.read_text(f"{TOPOLOGY}/nodes/{n}/gpu_id").strip() or 0)]
        if not 0 <= self.dev.index < len(gpus):
            raise RuntimeError(f"{self.dev.name}: no such device ({len(gpus)} AMD GPU(s) found)")
        node = gpus[self.dev.index]
        self.node_id = node
        self.gpu_id = int(self.os.read_text(f"{TOPOLOGY}/nodes/{node}/gpu_id"))
        self.properties = _props(self.os.read_text(f"{TOPOLOGY}/nodes/{node}/properties"))
        self.xgmi_nodes = self._xgmi_nodes(node)
        self.arch = _arch(self.properties["gfx_target_version"])
        self.process = kfd_context(self.os)
        self.kfd_fd, self.kfd_version = self.process.kfd_fd, self.process.version
        self.drm_fd = self.process.render_fd(self.gpu_id, self.properties["drm_render_minor"])
        # Host memory for ioctl arguments that are pointers (device id arrays, event data).
        self.args_page = self.os.mmap(-1, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS)
        self._doorbells: dict[int, Mapping] = {}
        self._mmap_offsets: dict[int, int] = {}  # allocation handle -> its mmap offset on the render node

    def _xgmi_nodes(self, node: int) -> frozenset[int]:
        """The nodes this GPU's io_links reach over XGMI (type 11): the other GPUs of its hive."""
        links = f"{TOPOLOGY}/nodes/{node}/io_links"
        if not self.os.exists(links):
            return frozenset()
        props = [_props(self.os.read_text(f"{links}/{e}/properties")) for e in self.os.listdir(links)]
        return frozenset(p["node_to"] for p in props if p.get("type") == kfd.CRAT_IOLINK_TYPE_XGMI)

    def query_info(self) -> None:
        """What the render node says (AMDGPU_INFO): clocks for .properties, the engines the runtime needs."""
        self.dev_info = self.drm_info(drm.AMDGPU_INFO_DEV_INFO, drm.drm_amdgpu_info_device)
        self.properties["gpu_counter_freq"] = self.dev_info.gpu_counter_freq * 1000  # KHz -> Hz
        self.properties["max_engine_clk"] = self.dev_info.max_engine_clock // 1000  # KHz -> MHz
        self.counter_hz = self.properties["gpu_counter_freq"]
        self.hw_ip = {name: self.drm_info(drm.AMDGPU_INFO_HW_IP_INFO, drm.drm_amdgpu_info_hw_ip, query_hw_ip=(ip, 0))
                      for name, ip in (("gfx", drm.AMDGPU_HW_IP_GFX), ("compute", drm.AMDGPU_HW_IP_COMPUTE),
                                       ("dma", drm.AMDGPU_HW_IP_DMA))}
        for name in ("compute", "dma"):
            if not self.hw_ip[name].available_rings:
                raise RuntimeError(f"{self.dev.name}: the driver reports no {name} engine")
        self.firmware = {name: self.drm_info(drm.AMDGPU_INFO_FW_VERSION, drm.drm_amdgpu_info_firmware,
                                             query_fw=drm.drm_amdgpu_query_fw(fw_type=fw)).ver
                         for name, fw in (("me", drm.AMDGPU_INFO_FW_GFX_ME), ("mec", drm.AMDGPU_INFO_FW_GFX_MEC),
                                          ("rlc", drm.AMDGPU_INFO_FW_GFX_RLC))}

    def drm_info(self, query: int, result_type, **arg):
        """DRM_IOCTL_AMDGPU_INFO on the render node: the answer to `query` as a `result_type` struct; `arg`
        sets the query's argument (query_hw_ip=(type, instance), query_fw=drm_amdgpu_query_fw(...))."""
        size = ctypes.sizeof(result_type)
        a = drm.drm_amdgpu_info(return_pointer=self.args_page.addr + _ARGS_INFO, return_size=size, query=query)
        for k, v in arg.items():
            setattr(a, k, v)
        self.args_page.view[_ARGS_INFO:_ARGS_INFO + size] = bytes(size)
        self.os.ioctl(self.drm_fd, drm.DRM_IOCTL_AMDGPU_INFO, a.pack())
        return result_type.unpack(self.args_page.view[_ARGS_INFO:_ARGS_INFO + size])

    def memory_info(self) -> dict:
        """VRAM and GTT sizes and usage in bytes (AMDGPU_INFO_VRAM_GTT and AMDGPU_INFO_MEMORY)."""
        vg = self.drm_info(drm.AMDGPU_INFO_VRAM_GTT, drm.drm_amdgpu_info_vram_gtt)
        mem = self.drm_info(drm.AMDGPU_INFO_MEMORY, drm.drm_amdgpu_memory_info)
        return {"vram_size": vg.vram_size, "vram_cpu_accessible_size": vg.vram_cpu_accessible_size,
                "gtt_size": vg.gtt_size, "vram_used": mem.vram.heap_usage, "gtt_used": mem.gtt.heap_usage,
                "vram_max_allocation": mem.vram.max_allocation, "gtt_max_allocation": mem.gtt.max_allocation}

    def create_events(self) -> None:
        """The process's event page mapped on this GPU; a signal event for completions, and the memory and hardware
        exception events a wait takes faults from."""
        self.process.event_page_on(self.gpu_id)
        self.event_page_va = self.process.event_page_va  # signal event e's mailbox is at + 8 * e
        self.completion_event = self.process.create_event(kfd.KFD_IOC_EVENT_SIGNAL, self.node_id)
        self.memory_event = self.process.create_event(kfd.KFD_IOC_EVENT_MEMORY, self.node_id)
        self.hw_event = self.process.create_event(kfd.KFD_IOC_EVENT_HW_EXCEPTION, self.node_id)

    def destroy_events(self) -> None:
        """DESTROY_EVENT for the three events."""
        for event in (self.completion_event, self.memory_event, self.hw_event):
            self.process.destroy_event(event)

    def kfd_ioctl(self, request: int, args):
        """Issue an amdkfd ioctl with a ctypes argument struct; returns the updated struct."""
        buf = args.pack()
        self.os.ioctl(self.kfd_fd, request, buf)
        return type(args).unpack(buf)

    # ---- queues -----------------------------------------------------------------------------------------------
    def create_queue(self, q, ring_size: int, rptr: int, wptr: int) -> tuple[int, Mapping, int]:
        """CREATE_QUEUE for a runtime.queues queue: (queue id, doorbell page mapping, byte offset in it)."""
        a = kfd.kfd_ioctl_create_queue_args(ring_base_address=q.ring.va, ring_size=ring_size, gpu_id=self.gpu_id,
                                            queue_type=q.queue_type, queue_percentage=100, queue_priority=7,
                                            read_pointer_address=rptr, write_pointer_address=wptr)
        a = self.kfd_ioctl(kfd.AMDKFD_IOC_CREATE_QUEUE, a)
        return a.queue_id, self.doorbell_mapping(a.doorbell_offset), a.doorbell_offset & 0x1FFF

    def destroy_queue(self, q) -> None:
        """DESTROY_QUEUE."""
        self.kfd_ioctl(kfd.AMDKFD_IOC_DESTROY_QUEUE, kfd.kfd_ioctl_destroy_queue_args(queue_id=q.queue_id))

    def doorbell_mapping(self, doorbell_offset: int) -> Mapping:
        """The CPU mapping of the doorbell page holding `doorbell_offset` (mapped once)."""
        page = doorbell_offset & ~0x1FFF
        if page not in self._doorbells:
            self._doorbells[page] = self.os.mmap(self.kfd_fd, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, page)
        return self._doorbells[page]

    # ---- memory -----------------------------------------------------------------------------------------------
    def alloc_memory(self, va: int, size: int, host: bool, executable: bool, uncached: bool,
                     peers: tuple) -> tuple[int, bool]:
        """ALLOC_MEMORY_OF_GPU (GTT when `host`, else VRAM), mapped on this GPU and `peers`."""
        f = kfd
        flags = (f.KFD_IOC_ALLOC_MEM_FLAGS_GTT if host else f.KFD_IOC_ALLOC_MEM_FLAGS_VRAM) | \
            f.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | (f.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE if executable else 0) | \
            (f.KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | f.KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED if uncached else
             f.KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE)
        a = self.kfd_ioctl(f.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, f.kfd_ioctl_alloc_memory_of_gpu_args(
            va_addr=va, size=size, gpu_id=self.gpu_id, flags=flags))
        self._map_on(a.handle, [self.gpu_id, *(p.gpu_id for p in peers)])
        self._mmap_offsets[a.handle] = a.mmap_offset
        return a.handle, host

    def _map_on(self, handle: int, gpu_ids: list[int], unmap: bool = False) -> None:
        struct.pack_into(f"<{len(gpu_ids)}I", self.args_page.view, _ARGS_DEVICE_IDS, *gpu_ids)
        cls, req = ((kfd.kfd_ioctl_unmap_memory_from_gpu_args, kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU) if unmap else
                    (kfd.kfd_ioctl_map_memory_to_gpu_args, kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU))
        self.kfd_ioctl(req, cls(handle=handle, device_ids_array_ptr=self.args_page.addr + _ARGS_DEVICE_IDS,
                                n_devices=len(gpu_ids)))

    def map_on_peer(self, handle: int, gpu_id: int) -> None:
        """MAP_MEMORY_TO_GPU of this GPU's buffer on another GPU (over XGMI in a hive, else PCIe peer-to-peer)."""
        self._map_on(handle, [gpu_id])

    def map_cpu(self, handle: int, va: int, size: int) -> Mapping:
        """mmap of the render node at the allocation's offset, over its VA reservation: CPU address = GPU address."""
        return self.os.mmap(self.drm_fd, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                            self._mmap_offsets[handle], va)

    def free_memory(self, handle: int, va: int, size: int) -> None:
        """FREE_MEMORY_OF_GPU (amdkfd unmaps it from every GPU)."""
        self._mmap_offsets.pop(handle, None)
        self.kfd_ioctl(kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU, kfd.kfd_ioctl_free_memory_of_gpu_args(handle=handle))

    # ---- waiting and faults -----------------------------------------------------------------------------------
    def wait_event(self, timeout_ms: int, done) -> tuple[tuple | None, bool]:
        """WAIT_EVENTS on the completion, memory and hardware exception events (amdkfd wakes the wait when a queue
        completes, so `done` needs no polling here): the first exception event for this GPU as (MEMORY | HW, its
        data), and whether the wait timed out."""
        ids = (self.completion_event, self.memory_event, self.hw_event)
        arr = b"".join(bytes(kfd.kfd_event_data(event_id=i)) for i in ids)
        base = _ARGS_EVENTS
        self.args_page.view[base:base + len(arr)] = arr
        a = self.kfd_ioctl(kfd.AMDKFD_IOC_WAIT_EVENTS, kfd.kfd_ioctl_wait_events_args(
            events_ptr=self.args_page.addr + base, num_events=len(ids), wait_for_all=0, timeout=timeout_ms))
        out = [kfd.kfd_event_data.unpack(self.args_page.view[base + i * _EVENT_SIZE:]) for i in range(1, 3)]
        mem, hw = out[0].u.memory_exception_data, out[1].u.hw_exception_data
        fired = [(event, data) for event, data in ((MEMORY, mem), (HW, hw)) if data.gpu_id == self.gpu_id]
        return (fired[0] if fired else None), a.wait_result == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT

    def fault(self, event: tuple, report, notes: list[str], usable: bool) -> GPUFault:
        """The GPUFault of an exception event (runtime.fault.GPUFault.from_exception)."""
        return GPUFault.from_exception(self.dev.name, self.gpu_id, *event, report, notes, usable)

    def close(self) -> None:
        """Unmap the doorbell pages and the ioctl argument page."""
        for mapping in (*self._doorbells.values(), self.args_page):
            self.os.munmap(mapping)
        self._doorbells.clear()
