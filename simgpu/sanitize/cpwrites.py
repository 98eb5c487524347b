"""initcheck's view of the command processor and SDMA: their memory writes (copies, fills, WRITE_DATA,
fences, signals, atomics) mark the bytes written. The GPU's engines reach memory through `GPU.mmu`; with
initcheck on, that attribute is this front-end over the same MMU (the shader engine keeps the MMU itself
and reports its own accesses), so nothing is added to those paths when the sanitizers are off."""

from __future__ import annotations

import numpy as np


class MarkingMMU:
    """An MMU whose write(), copy() and atomic() also tell the sanitizer which bytes were written."""

    def __init__(self, mmu, sanitizer):
        self._mmu, self._sanitizer = mmu, sanitizer

    def __getattr__(self, name):
        return getattr(self._mmu, name)

    def page_view(self, vmid: int, va: int, access: str = "read"):
        """MMU.page_view for reads only: a write into a page's memory would not be marked."""
        return self._mmu.page_view(vmid, va, access) if access == "read" else None

    def page_ends(self, vmid: int, dst: int, src: int, nbytes: int):
        """No pages for a copy (MMU.page_ends): its write would not be marked; copy() then."""
        return None

    def write(self, vmid: int, va: int, data) -> None:
        """MMU.write, then mark [va, va + len(data))."""
        self._mmu.write(vmid, va, data)
        self._sanitizer.host_wrote(vmid, va, memoryview(data).nbytes)

    def copy(self, vmid: int, dst: int, src: int, nbytes: int) -> None:
        """MMU.copy, then mark [dst, dst + nbytes)."""
        self._mmu.copy(vmid, dst, src, nbytes)
        self._sanitizer.host_wrote(vmid, dst, nbytes)

    def atomic(self, vmid: int, op: str, addrs, src, cmp=None, size: int = 4, mask=None, return_old: bool = True):
        """MMU.atomic, then mark every updated word."""
        out = self._mmu.atomic(vmid, op, addrs, src, cmp, size=size, mask=mask, return_old=return_old)
        flat = np.asarray(addrs).reshape(-1)
        live = flat if mask is None else flat[np.asarray(mask).reshape(-1)]
        for va in live.tolist():
            self._sanitizer.host_wrote(vmid, int(va), size)
        return out
