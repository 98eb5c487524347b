"""Module and Kernel: a loaded code object and launches through PM4 or AQL (HIP launch conventions)."""

from __future__ import annotations

import struct

from runtime.kernel_args import convert
from runtime.launch import Launch
from runtime.limits import check_launch
from runtime.memory import Buffer
from simgpu.hw import aql, kernargs, regs
from simgpu.hw import pm4 as hw
from simgpu.isa.arch import get_arch
from simgpu.isa.codeobject import CodeObjectError, read_code_object

_POINTER_KINDS = ("global_buffer", "dynamic_shared_pointer")
MAX_SHAPES = 64  # launch shapes whose fixed PM4 packets a kernel keeps (Kernel.pm4_packets)


class Module:
    """A code object loaded into device memory: `.kernels` (names), module[name] -> Kernel."""

    def __init__(self, dev, code_object: bytes):
        co = read_code_object(code_object)
        _check_target(co, dev)
        self.device = dev
        self.code = dev.alloc(max(len(co.image), 256), executable=True, name="code object")
        self.code_image = co.relocated_image(self.code.va)  # what the GPU fetches (profilers map traces onto it)
        self.code.copyin(self.code_image)
        try:
            self._kernels = {name: Kernel(self, k) for name, k in co.kernels.items()}
        except CodeObjectError:
            self.code.free()
            raise
        self.metadata = getattr(co, "metadata", {})
        # For whoever reads a recording: which kernel lives where (traces name dispatches with it).
        dev.os.annotate({"what": "code_object", "gpu_id": dev.gpu_id, "base": self.code.va, "size": self.code.size,
                         "kernels": [[k.name, k.descriptor_va, k.code_va] for k in self._kernels.values()]})

    @property
    def kernels(self) -> list[str]:
        """Names of the kernels in the code object."""
        return list(self._kernels)

    def __getitem__(self, name: str) -> Kernel:
        if name not in self._kernels:
            raise KeyError(f"no kernel {name!r}; the code object has {self.kernels}")
        return self._kernels[name]


class Kernel:
    """A kernel of a loaded module; call it to launch."""

    def __init__(self, module: Module, k):
        self.module, self.name, self._k = module, k.name, k
        self.metadata = k.metadata
        self.descriptor = k.descriptor
        self.descriptor_va = module.code.va + k.descriptor_address
        self.code_va = module.code.va + k.entry_address
        self.args = self.metadata.get(".args", [])
        self._shape_packets: dict[tuple, tuple[list[int], list[int]]] = {}  # (grid, block, shared) -> pm4_packets'
        size = kernargs.segment_size(self.args, self.descriptor.kernarg_size)
        if size > module.device.kernarg_ring.size:  # (the metadata was checked at load: simgpu.isa.metadata)
            raise CodeObjectError(f"kernel {self.name!r}: a kernarg segment of {size} bytes (KERNARG_SIZE "
                                  f"{self.descriptor.kernarg_size}) exceeds the runtime's "
                                  f"{module.device.kernarg_ring.size}-byte kernarg ring")

    def _check_args(self, args: tuple) -> list:
        explicit = kernargs.explicit_args(self.args)
        if len(args) != len(explicit):
            raise TypeError(f"{self.name}() takes {len(explicit)} arguments ({', '.join(_names(explicit))}), "
                            f"got {len(args)}")
        values = []
        for i, (meta, a) in enumerate(zip(explicit, args, strict=True)):
            name = meta.get(".name", f"#{i}")
            kind = meta.get(".value_kind", "by_value")
            if kind in _POINTER_KINDS:
                if a is not None and not isinstance(a, Buffer):
                    raise TypeError(f"{self.name}: argument {name} is a pointer; pass a Buffer or None, "
                                    f"not {type(a).__name__}")
                if isinstance(a, Buffer):
                    a._check()
                values.append(0 if a is None else a.va)
            else:
                values.append(convert(self.name, name, meta, a))
        return values

    def __call__(self, *args, grid=(1, 1, 1), block=(1, 1, 1), shared: int = 0, wait: bool = True,
                 timeout_ms: int | None = None) -> float | Launch:
        """Launch over `grid` workgroups of `block` work-items (each an int or up to three ints). wait=True:
        block and return the GPU time in seconds; wait=False: return the `Launch` handle at once (its .wait()
        gives the time). Shapes are checked against the device's limits first (runtime.limits)."""
        dev = self.module.device
        grid, block = check_launch(grid, block, shared, self.descriptor.group_segment_fixed_size,
                                   dev.properties["lds_size_in_kb"] << 10)
        dev._check_usable()
        aql_queue = dev.queue_kind == "aql"
        data = self.kernarg_segment(args, grid, block, shared)
        # Both regions are fenced: they are free once the launches that used them last have completed.
        ka_off = dev.kernarg_alloc(len(data))
        dev.kernargs.view[ka_off:ka_off + len(data)] = data
        ka_va = dev.kernargs.va + ka_off
        slot = dev.stamp_slot()
        slot_va = dev.stamps.va + slot
        prof = dev.profiler  # runtime.profile: counters / thread trace around this launch
        # A simulator runs the dispatch at its doorbell: the limit of the wait that follows must hold there too.
        limit = {"what": "wait", "gpu_id": dev.gpu_id, "timeout_ms": int(timeout_ms)} \
            if wait and timeout_ms is not None else None
        if aql_queue:
            if prof is not None:
                prof.submit_aql(prof.before(self))
            if limit is not None:
                dev.os.annotate(limit)
            dev.stamps.view[slot:slot + aql.SIGNAL_SIZE] = completion_signal(dev)
            value = dev.compute.submit(self.aql_packet(grid, block, shared, ka_va, slot_va))
            start_off, end_off = aql.SIGNAL_START_TS, aql.SIGNAL_END_TS
        else:
            packets = self.pm4_packets(grid, block, shared, ka_va, slot_va)
            if prof is not None:
                packets = prof.before(self) + packets + prof.after()
            if limit is not None:
                dev.os.annotate(limit)
            value = dev.compute.submit(packets)
            start_off, end_off = 0, 8
        launch = Launch(dev, self.name, value, slot, start_off, end_off)
        dev.launched(launch, ka_off, len(data))
        if prof is not None:
            return self._profiled(prof, launch, slot, (start_off, end_off), timeout_ms, wait)
        return launch.wait(timeout_ms) if wait else launch

    def kernarg_segment(self, args: tuple, grid, block, shared: int = 0) -> bytes:
        """The kernarg segment of a launch with `args` (checked against the metadata, as a launch checks them)."""
        dev = self.module.device
        extra = {"hidden_dynamic_lds_size": shared,
                 "hidden_queue_ptr": dev.compute.ptrs.va if dev.queue_kind == "aql" else 0}
        return kernargs.pack(self.args, self.descriptor.kernarg_size, self._check_args(args), grid, block, extra)

    def pointer_offsets(self) -> list[int | None]:
        """Per explicit argument, its byte offset in the kernarg segment when it is a pointer (else None): where a
        recorded launch patches another buffer's address in (runtime.graph)."""
        return [a[".offset"] if a.get(".value_kind", "by_value") in _POINTER_KINDS else None
                for a in kernargs.explicit_args(self.args)]

    def _profiled(self, prof, launch: Launch, slot: int, offsets: tuple[int, int], timeout_ms, wait: bool):
        """Finish a profiled launch: wait for it, read the counters out (on AQL after a second PM4 packet)."""
        seconds = launch.wait(timeout_ms)
        if self.module.device.queue_kind == "aql":
            prof.submit_aql(prof.after())
        stamps = self.module.device.stamps.view
        start, end = (struct.unpack_from("<Q", stamps, slot + o)[0] for o in offsets)
        prof.collect(self, start, end)
        return seconds if wait else launch

    def _user_data(self, kernarg: int) -> list[int]:
        kd, out = self.descriptor, []
        if kd.enable_sgpr_private_segment_buffer:
            out += [0, 0, 0, 0]
        for flag, value in ((kd.enable_sgpr_dispatch_ptr, 0), (kd.enable_sgpr_queue_ptr, 0),
                            (kd.enable_sgpr_kernarg_segment_ptr, kernarg), (kd.enable_sgpr_dispatch_id, 0)):
            if flag:
                out += [value & 0xFFFFFFFF, value >> 32]
        return out

    def pm4_packets(self, grid, block, shared: int, kernarg: int, stamp: int) -> list[int]:
        """The PM4 packets of one dispatch: GPU clock to `stamp`, the program, its registers, DISPATCH_DIRECT, the
        clock again to `stamp + 8`. All but the kernarg address and the stamps are fixed by the kernel and the
        launch's shape: built once per shape (a training step launches the same kernels every step)."""
        key = (tuple(grid), tuple(block), shared)
        fixed = self._shape_packets.get(key)
        if fixed is None:
            if len(self._shape_packets) >= MAX_SHAPES:
                self._shape_packets.clear()
            fixed = self._shape_packets[key] = self._fixed_packets(grid, block, shared)
        program, dispatch = fixed
        return [*hw.release_mem(stamp, data_sel=hw.DataSel.GPU_CLOCK), *program,
                *hw.set_sh_reg(regs.COMPUTE_USER_DATA_0, *(self._user_data(kernarg) or [0])), *dispatch,
                *hw.release_mem(stamp + 8, data_sel=hw.DataSel.GPU_CLOCK)]

    def _fixed_packets(self, grid, block, shared: int) -> tuple[list[int], list[int]]:
        """pm4_packets' packets before the user data (program, resources, scratch) and after it (workgroup shape,
        DISPATCH_DIRECT)."""
        kd, family = self.descriptor, get_arch(self.module.device.arch).family
        rsrc2 = regs.with_lds_size(kd.compute_pgm_rsrc2, kd.group_segment_fixed_size + shared)
        program = [*hw.set_sh_reg(regs.COMPUTE_PGM_LO, *regs.address_regs(self.code_va)),
                   *hw.set_sh_reg(regs.COMPUTE_PGM_RSRC1, kd.compute_pgm_rsrc1, rsrc2),
                   *hw.set_sh_reg(regs.compute_pgm_rsrc3(family), kd.compute_pgm_rsrc3),
                   *hw.set_sh_reg(regs.COMPUTE_TMPRING_SIZE,
                                  regs.tmpring_size(1, kd.private_segment_fixed_size * kd.wavefront_size, family))]
        dispatch = [*hw.set_sh_reg(regs.COMPUTE_START_X, 0, 0, 0, *block),
                    *hw.dispatch_direct(*grid, initiator=regs.dispatch_initiator(wave32=kd.enable_wavefront_size32))]
        return program, dispatch

    def aql_packet(self, grid, block, shared: int, kernarg: int, signal_va: int, barrier: bool = True) -> bytes:
        """The AQL kernel dispatch packet of one launch (completion signal at `signal_va`; `barrier`: it starts
        after the packets before it completed)."""
        kd = self.descriptor
        dims = kernargs.grid_dims(grid, block)
        items = tuple(g * b for g, b in zip(grid, block, strict=True))
        pkt = aql.KernelDispatchPacket(header=aql.make_header(aql.PacketType.KERNEL_DISPATCH, barrier=barrier),
                                       setup=dims,
                                       workgroup_size=block, grid_size=items,
                                       private_segment_size=kd.private_segment_fixed_size,
                                       group_segment_size=kd.group_segment_fixed_size + shared,
                                       kernel_object=self.descriptor_va, kernarg_address=kernarg,
                                       completion_signal=signal_va)
        return pkt.pack()

    def __repr__(self) -> str:
        return f"<Kernel {self.name} ({', '.join(_names(kernargs.explicit_args(self.args)))})>"


def completion_signal(dev) -> bytes:
    """An armed amd_signal_t (value 1) that raises the device's completion event when the CP decrements it."""
    mailbox = dev.event_page_va + 8 * dev.completion_event
    return aql.Signal(aql.SignalKind.USER, 1, mailbox, dev.completion_event).pack()


def _names(args: list[dict]) -> list[str]:
    return [a.get(".name", f"#{i}") for i, a in enumerate(args)]


def _check_target(co, dev) -> None:
    """Refuse a code object built for another processor (it would fail later as illegal instructions). The reader
    parsed the target ID by its grammar and checked it against e_flags: `co.processor` is what both say."""
    if co.processor != dev.arch:
        built = co.processor or "an unknown processor"
        raise CodeObjectError(f"code object is built for {built} ({co.target}); {dev.name} is a {dev.arch}: "
                              f"compile it with -mcpu={dev.arch}")
