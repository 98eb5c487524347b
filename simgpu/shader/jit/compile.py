"""Native code from LLVM IR text through llvmlite, for the host CPU, cached in memory and on disk.

Every module is compiled to an object file (optimised for the host: `llvm.get_host_cpu_name()` and its
features, or the CPU SIMGPU_JIT_CPU names: `target_cpu`) and loaded from that object (by jit.elfload, without
LLVM; McjitImage where that loader does not run), so code from the disk cache and fresh code are the same bytes.
The memory cache's keys cover the IR's inputs (see build.py); the disk cache's are the IR text itself, the CPU
compiled for, the optimisation levels and the LLVM version. llvmlite is loaded by a process's first eager compile
(and in the JIT's worker process), not when the tier is created: a process whose kernels never get hot, or are
compiled in the worker, never loads LLVM. The disk cache
lives in $SIMGPU_JIT_CACHE (default ~/.cache/simgpu/jit; `off` disables it), one `<key>.msgpack` per object: an
entry of simgpu.diskcache, so an object is loaded (and run) only if this user's processes wrote it under that key
(a planted or altered file is compiled over), and entries are written whole or not at all.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

from simgpu import diskcache, settings

# LLVM's initialisation, the process's global LLVMContext and MCJIT loading, one thread at a time. A compile runs
# outside it, in an LLVMContext and target machines of its own, so compiles share no LLVM state (llvmlite still
# makes their calls into LLVM take turns, under its own lock).
_LOCK = threading.Lock()
_READY = False  # LLVM's native target initialised (prepare)


def _binding():
    """llvmlite.binding, imported on first use."""
    import llvmlite.binding
    return llvmlite.binding


def cpu_setting() -> str:
    """SIMGPU_JIT_CPU as set ('' for the host): part of the memory cache's keys (no LLVM needed to read it)."""
    return settings.get("SIMGPU_JIT_CPU")


def code_setting() -> str:
    """What the object of a module depends on besides its IR, as set (no LLVM needed to read it): the CPU
    (cpu_setting) and the optimisation levels (SIMGPU_JIT_OPT), so that code made at a test's lower level is never
    served where the default one was asked for, from memory or disk."""
    return f"{cpu_setting()}|{settings.get('SIMGPU_JIT_OPT')}"


def target_cpu() -> tuple[str, str]:
    """(CPU name, features) the JIT compiles for: the host's, or SIMGPU_JIT_CPU's `name` or `name:features`
    (LLVM's spelling: `haswell`, `x86-64-v3`, `skylake-avx512:-avx512f`). Another CPU than the host's
    reproduces its code on this machine, say an AVX2-only laptop's on an AVX-512 server; the CPU must
    still run here (its features a subset of the host's)."""
    value = cpu_setting()
    if value in ("", "host", "native"):
        llvm = _binding()
        return llvm.get_host_cpu_name(), host_features()
    name, _, features = value.partition(":")
    return name, features


def _new_target_machine(opt: int):
    """A target machine for the JIT's CPU (target_cpu) of this compile's own (LLVM's are not shared between
    threads)."""
    llvm = _binding()
    cpu, features = target_cpu()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=cpu, features=features, opt=opt, reloc="pic", codemodel="jitdefault")


def prepare() -> None:
    """llvmlite imported and LLVM's native target initialised (the Python part of starting LLVM), once."""
    global _READY
    if _READY:
        return
    with _LOCK:
        if not _READY:
            llvm = _binding()
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            host_key()
            _READY = True


def ready() -> bool:
    """Whether llvmlite is loaded and LLVM started in this process (prepare ran)."""
    return _READY


def host_features() -> str:
    return _binding().get_host_cpu_features().flatten()


def host_key() -> str:
    """What compiled code depends on besides its IR: LLVM, the CPU and features compiled for (target_cpu), the
    optimisation levels (SIMGPU_JIT_OPT)."""
    import llvmlite
    llvm = _binding()
    cpu, features = target_cpu()
    return f"{llvmlite.__version__}|{llvm.llvm_version_info}|{cpu}|{features}|{settings.get('SIMGPU_JIT_OPT')}"


def cache_dir() -> Path | None:
    value = settings.get("SIMGPU_JIT_CACHE")
    return settings.cache_root() / "jit" if value == "" else value


def key_of(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def _entry_path(key: str) -> Path | None:
    """Where the disk cache keeps the object of `key`, if the cache is on and its directory trusted
    (simgpu.diskcache: one warning, then compiles without it, otherwise)."""
    root = cache_dir()
    d = None if root is None else diskcache.directory(root)
    return None if d is None else d / f"{key}.msgpack"


def _read_cached(key: str) -> bytes | None:
    path = _entry_path(key)
    entry = None if path is None else diskcache.load(path, key)
    obj = None if entry is None else entry.get("object")
    return obj if isinstance(obj, bytes) else None


def _write_cached(key: str, obj: bytes) -> None:
    path = _entry_path(key)
    if path is not None:
        diskcache.store(path, key, {"object": obj})


def object_code(ir: str, make=None) -> tuple[bytes, bool]:
    """(object file, whether it came from the disk cache) for module text `ir`. The disk cache keys it by the text
    itself and this host's LLVM, CPU and levels (host_key), all an object depends on: kernels whose inputs differ
    but translate to the same module (another initial MODE or VGPR count their code does not read, the same code
    elsewhere) share one entry. `make(ir)` makes the object on a miss (default: emit, here)."""
    key = key_of("object", ir, host_key())
    obj = _read_cached(key)
    if obj is not None:
        return obj, True
    obj = (make or emit)(ir)
    _write_cached(key, obj)
    return obj, False


def emit(ir: str) -> bytes:
    """The object file of module text `ir`, made by LLVM in this process."""
    mod, cg = _optimised(ir)
    return _new_target_machine(opt=cg).emit_object(mod)


def assembly(ir: str) -> str:
    """The machine code object_code would make of module text `ir`, as assembly text (to read what a kernel
    compiles to: `SIMGPU_JIT_CPU` picks the CPU)."""
    mod, cg = _optimised(ir)
    return _new_target_machine(opt=cg).emit_assembly(mod)


def _optimised(ir: str):
    """(the parsed and optimised module of `ir`, the code generation's optimisation level): SIMGPU_JIT_OPT
    `level,codegen` (default -1,2: SROA, instcombine and simplifycfg only; a level >= 0 runs LLVM's pipeline
    at that speed level)."""
    llvm = _binding()
    prepare()
    level, cg = settings.get("SIMGPU_JIT_OPT")
    mod = llvm.parse_assembly(ir, context=llvm.create_context())  # (the module keeps its context alive)
    mod.verify()
    tm = _new_target_machine(opt=2)
    if level >= 0:
        pb = llvm.create_pass_builder(tm, llvm.PipelineTuningOptions(speed_level=level))
        pb.getModulePassManager().run(mod, pb)
    else:
        pb = llvm.create_pass_builder(tm, llvm.PipelineTuningOptions(speed_level=1))
        mpm = llvm.create_new_module_pass_manager()
        mpm.add_sroa_pass()
        mpm.add_instruction_combine_pass()
        mpm.add_simplify_cfg_pass()
        mpm.run(mod, pb)
    return mod, cg


class McjitImage:
    """An object file loaded by LLVM's MCJIT, with elfload.Image's face (`address`). The tier loads with jit.elfload,
    which needs no LLVM, where that loader runs (Linux on x86-64: elfload.supported); this is the loader elsewhere
    and the reference elfload's tests compare it with (test_jit_elfload.py). The code lives as long as the image."""

    def __init__(self, obj: bytes, entries: tuple[str, ...] = ("round",)):
        llvm = _binding()
        prepare()
        with _LOCK:
            tm = _new_target_machine(opt=2)  # an engine owns (and disposes of) its target machine
            self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            self.engine.finalize_object()
        for name in entries:
            self.address(name)

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise ValueError(f"object file without the function {name!r}")
        return addr


class Timer:
    """Seconds of a block: this thread's CPU time (`seconds`: other processes sharing the machine do not
    count) and wall time (`wall`)."""

    def __enter__(self):
        self.t0, self.w0 = time.thread_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.thread_time() - self.t0
        self.wall = time.perf_counter() - self.w0
