"""The pages behind every mmap of /dev/kfd and the render nodes: one shared-memory file for the whole machine.

Every byte a client can map lives in one sparse memfd (simgpu.mem.shared), at the offset that is the mmap offset
the driver hands out for it:

    [0, 512 KiB)               doorbell page of GPU i at i * 8 KiB (CREATE_QUEUE's doorbell_offset points here)
    [512 KiB, 1 MiB)           MMIO remap page of GPU i at 512 KiB + i * 4 KiB
    (i + 1) << 40              VRAM of GPU i (a VRAM buffer's mmap_offset is this + its physical address)
    ((i + 1) << 40) + 1 << 39  GTT window of GPU i: system-memory buffers allocated through GPU i

So the file descriptor of /dev/kfd or of a render node can be this very file: a client that maps it with a plain
mmap, even one that bypasses an LD_PRELOAD interposer (ctypes' CDLL(libc).mmap), gets the right pages, and a
plain store into a doorbell page is a store into the page the simulated GPU watches. amdkfd's mmap offsets
encode a type and gpu_id in their top bits instead; they are opaque to user space (kfd_priv.h, not the uapi).
"""

from __future__ import annotations

import numpy as np

from simgpu.mem.shared import SharedMemory

DOORBELL_PAGE = 8192
MAX_GPUS = 64
MMIO_AREA = MAX_GPUS * DOORBELL_PAGE
MMIO_PAGE = 4096
GPU_AREA_SHIFT = 40
GTT_WINDOW = 1 << 39


class DeviceMemory:
    """The machine's device-memory file: doorbells, MMIO remap pages, each GPU's VRAM and GTT window."""

    def __init__(self, vram_sizes: list[int], gtt_size: int):
        if len(vram_sizes) > MAX_GPUS:
            raise ValueError(f"at most {MAX_GPUS} GPUs")
        self.vram_sizes, self.gtt_size = vram_sizes, gtt_size
        # Sparse: only the windows below are mapped here (a few GiB of address space per GPU, no memory until used).
        self.file = SharedMemory((len(vram_sizes) + 1) << GPU_AREA_SHIFT, "simgpu-device-memory", mapped=False)
        self.fd = self.file.fd
        self._kfd = self.file.map(0, MMIO_AREA + MAX_GPUS * MMIO_PAGE)
        self._vram = [self.file.map(self.vram_offset(i), n) for i, n in enumerate(vram_sizes)]
        self._gtt = [self.file.map(self.gtt_offset(i), gtt_size) for i in range(len(vram_sizes))]

    # ---- layout --------------------------------------------------------------------------------------
    @staticmethod
    def doorbell_offset(gpu: int) -> int:
        """File offset of GPU `gpu`'s doorbell page."""
        return gpu * DOORBELL_PAGE

    @staticmethod
    def mmio_offset(gpu: int) -> int:
        """File offset of GPU `gpu`'s MMIO remap page."""
        return MMIO_AREA + gpu * MMIO_PAGE

    @staticmethod
    def vram_offset(gpu: int) -> int:
        """File offset of physical address 0 of GPU `gpu`'s VRAM."""
        return (gpu + 1) << GPU_AREA_SHIFT

    @classmethod
    def gtt_offset(cls, gpu: int) -> int:
        """File offset of GPU `gpu`'s GTT window."""
        return cls.vram_offset(gpu) + GTT_WINDOW

    # ---- bytes ---------------------------------------------------------------------------------------
    def doorbell_page(self, gpu: int) -> np.ndarray:
        """GPU `gpu`'s doorbell page (8 KiB)."""
        off = self.doorbell_offset(gpu)
        return self._kfd[off:off + DOORBELL_PAGE]

    def vram(self, gpu: int) -> np.ndarray:
        """GPU `gpu`'s VRAM."""
        return self._vram[gpu]

    def gtt(self, gpu: int, offset: int, size: int) -> np.ndarray:
        """[offset, offset + size) of GPU `gpu`'s GTT window."""
        return self._gtt[gpu][offset:offset + size]

    def span(self, offset: int, size: int) -> np.ndarray | None:
        """The bytes an mmap of [offset, offset + size) shows, when that lies in one mapped window (else None)."""
        windows = [(0, self._kfd)] + [(self.vram_offset(i), v) for i, v in enumerate(self._vram)] + \
            [(self.gtt_offset(i), g) for i, g in enumerate(self._gtt)]
        for base, arr in windows:
            if base <= offset and offset + size <= base + arr.size:
                return arr[offset - base:offset - base + size]
        return None

    def clear(self, offset: int, size: int) -> None:
        """Zero a range of the file (giving its pages back): what amdgpu does to memory it hands to user space."""
        self.file.clear(offset, size)
