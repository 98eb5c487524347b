"""`simgpu run [--devices N] [--arch ARCH[,ARCH...]] [--vram BYTES] [--record FILE] [--sanitize CHECKS] [--stats]
[--profile] [--sqtt] [--perfetto OUT.json] -- CMD ...`: run any program against simulated GPUs.

The program runs with the interposer preloaded (mockgpu/csrc/preload.c, built on first use); this process is the
simgpu server (mockgpu/server.py) for it and for every process it starts, and exits with the program's status.
The sysfs the server serves (KFD topology, render nodes' IP discovery) is written to a private directory that the
interposer substitutes for /sys/devices/virtual/kfd and /sys/class/drm.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from simgpu import settings
from simgpu.hw.chips import device_arches
from wiring.run_observe import Observe

if TYPE_CHECKING:
    from mockgpu.hostprofile import HostProfile

PROFILE_HOST_ENV = "SIMGPU_PROFILE_HOST"  # mockgpu.hostprofile's, by name: the profiler is loaded only when asked for


def write_sysfs(root: Path, files: dict[str, str]) -> None:
    """The sysfs files (absolute path -> contents) under `root`."""
    for path, text in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def run_dir_parent() -> str | None:
    """Where the run's private directory goes: a memory file system when there is one we may write (the user's
    runtime directory, else /dev/shm), else the temporary directory. The directory holds the server's socket and
    the sysfs it serves -- 350 files in 120 directories for two GPUs -- and on the 2-core VM's ext4 /tmp their
    creation and removal took 0.1-0.3 s and 0.36-0.53 s of journal writes per run, against 0.03 s on tmpfs."""
    for d in (os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm"):
        if d and os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
            return d
    return None


def record_path(base: str, n: int) -> str:
    """Where the n-th process of a run records: `base` for the first, base.N.trace after."""
    if n == 0:
        return base
    root, ext = os.path.splitext(base)
    return f"{root}.{n}{ext or '.trace'}"


def name_from_process(mock, pid: int) -> None:
    """Kernels no code object in GPU memory names are looked for in the client's own memory (tinygrad's loader
    copies no ELF header to the GPU: mockgpu.symbols.ProcessCodeObjects)."""
    from mockgpu.symbols import ProcessCodeObjects  # (ELF and GPU memory: after the program's start, see run)
    objects = ProcessCodeObjects(pid)
    for g in mock.gpus:
        in_gpu_memory, in_process = g.engine.find_kernel_name, functools.partial(objects.kernel_symbol, g.mmu)
        g.engine.find_kernel_name = lambda vmid, va, a=in_gpu_memory, b=in_process: a(vmid, va) or b(vmid, va)


def run(cmd: list[str], devices: int | None = None, vram: int | None = None, record: str | None = None,
        sanitize: str | None = None, am: bool = False, local_pci: bool = True, stats: bool = False,
        profile: bool = False, sqtt: bool = False, perfetto: str | None = None, profile_host: str | None = None,
        arch: str | None = None) -> int:
    """Run `cmd` under the process-level device; its exit status (128 + signal if a signal ended it). `arch` (or
    SIMGPU_ARCH): the GPUs' architecture, one for all or comma-separated per device (MockOS). With
    `sanitize` (or SIMGPU_SANITIZE), the GPUs run the sanitizers and every finding is printed on stderr: the
    program cannot take the runtime's Python warnings. With `am`, the GPUs are also served as PCI functions for a
    userspace driver -- tinygrad's AM backend, DEV=PCI+AMD -- with the synthetic firmware installed where it looks
    (wiring/am_client.py) and host-visible memory mapped at the addresses it uses (mockgpu.hostmap); the program's
    environment needs nothing of simgpu (no PYTHONPATH: `python -I` works). With `local_pci` (the default) they are
    local PCI functions in a PCI domain of the run's own (mockgpu.localpci, mockgpu.pci.claim_domain); without it,
    remote ones over tinygrad's REMOTE transport (mockgpu.remote_pci, REMOTE set).
    `stats`, `profile` (`sqtt`, `perfetto`): the clients' GPUs' counters and per-kernel profile, printed on stdout
    after the program exits (wiring/run_observe.py; an outer `simgpu stats/profile` asks the same through the
    environment). `profile_host` (or SIMGPU_PROFILE_HOST): the server's own time -- round trips by kind, CPU by
    component -- printed on stderr after the program, its cProfile written to that file (mockgpu.hostprofile)."""
    try:
        device_arches(devices or settings.get("MOCKGPU_DEVICES"), arch)  # refuse unknown names before starting
    except ValueError as e:
        print(f"simgpu run: --arch: {e}", file=sys.stderr)
        return 2
    # Under `simgpu trace record -o F` (SIMGPU_TRACE=F) the server records its clients, as with --record F.
    record = record or settings.get("SIMGPU_TRACE") or None
    try:
        checks = _sanitizer_checks(sanitize)
    except ValueError as e:
        print(f"simgpu run: {e}", file=sys.stderr)
        return 2
    observe = Observe.requested(stats, profile, sqtt, perfetto)
    from mockgpu.native import BuildError, build_preload
    from mockgpu.pci import DomainError
    try:
        preload = build_preload()
    except BuildError as e:
        print(f"simgpu run: {e}", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="simgpu-run-", dir=run_dir_parent()))
    recorded = [0]
    remote = None

    def make_machine(memory, pid):
        from mockgpu import MockOS
        mock = MockOS(devices=devices, vram_size=vram, user=memory, place=False, sanitize=checks, arch=arch)
        name_from_process(mock, pid)
        collect = observe.attach(mock, pid)
        if not record:
            return mock, mock, collect
        from traces.record import RecordingOS
        rec = RecordingOS(mock, record_path(record, recorded[0]), user=memory, concurrent=True)
        recorded[0] += 1

        def finish():
            collect()
            rec.finish()
        return rec, mock, finish

    try:
        profile_host = profile_host or settings.get(PROFILE_HOST_ENV) or None
        host = None
        if profile_host:
            from mockgpu.hostprofile import HostProfile
            host = HostProfile(profile_host)
        env = dict(os.environ, SIMGPU_SERVER=str(tmp / "server.sock"), SIMGPU_SERVER_STARTING="1",
                   SIMGPU_SYSFS=str(tmp / "sysfs"),
                   LD_PRELOAD=" ".join(filter(None, [str(preload), os.environ.get("LD_PRELOAD")])))
        env.pop("MOCKGPU", None)  # the program talks to "/dev/kfd": it must not pick the in-process mock
        env.pop("SIMGPU_TRACE", None)  # the server records; a client's own recorder would write the same file
        if arch:
            env["SIMGPU_ARCH"] = arch  # what the GPUs are (a program that asks simgpu, e.g. a test's MockOS)
        observe.child_env(env)
        try:
            remote = _serve_am(env, tmp, devices, vram, local_pci, arch) if am else None
        except DomainError as e:
            print(f"simgpu run: {e}", file=sys.stderr)
            return 2
        try:
            child = subprocess.Popen(cmd, env=env)
        except OSError as e:
            print(f"simgpu run: {cmd[0]}: {e.strerror}", file=sys.stderr)
            return 127
        forward = {sig: signal.signal(sig, lambda n, _f: child.send_signal(n)) for sig in (signal.SIGINT,
                                                                                             signal.SIGTERM)}
        try:
            server = _listen(tmp, devices, vram, arch, make_machine, bool(record), host, child)
            server.serve(done=lambda: child.poll() is not None, program=child.pid)
        finally:
            for sig, old in forward.items():
                signal.signal(sig, old)
        code = child.wait()
        observe.report(sys.stdout)
        if host is not None:
            host.report(sys.stderr)
        return code if code >= 0 else 128 - code
    finally:
        if am and remote is not None:
            remote.close()
            if remote.local is not None:
                remote.local.close()  # after the program: its PCI domain is free for the next run
        shutil.rmtree(tmp, ignore_errors=True)


def _sanitizer_checks(sanitize: str | None) -> frozenset[str]:
    """The checks --sanitize (else SIMGPU_SANITIZE) names; with some, every finding is printed on stderr. The
    sanitizers' package brings the shader engine: it is loaded only when a selection is given."""
    spec = sanitize if sanitize is not None else settings.get("SIMGPU_SANITIZE")
    if not spec:
        return frozenset()
    from simgpu import sanitize as sanitizers
    checks = sanitizers.parse_checks(spec)
    if checks:
        sanitizers.reporters.append(sanitizers.printer(sys.stderr))
    return checks


def _listen(tmp: Path, devices: int | None, vram: int | None, arch: str | None, make_machine, record: bool,
            host: HostProfile | None, child: subprocess.Popen):
    """The driver model loaded, the KFD side's sysfs written, then the server listening. The program runs already
    (its own start -- Python, its imports -- beside this one's, ~0.5 CPU s); its interposer waits for the socket
    before its first sysfs path or connection, so the socket appears only once the sysfs is whole. If this fails
    the program is ended: nothing would serve it."""
    try:
        from mockgpu import MockOS
        from mockgpu.server import Server
        # The KFD side's sysfs; its PCI files are left out: with --am the interposer serves /sys/bus/pci/devices from
        # the AM side's GPUs alone (written by _serve_local_pci, in the run's own PCI domain), and otherwise never.
        kfd_sysfs = MockOS(devices=devices, vram_size=vram, user=False, place=False, arch=arch).sysfs
        write_sysfs(tmp / "sysfs", {k: v for k, v in kfd_sysfs.items() if not k.startswith("/sys/bus/pci/")})
        return Server(str(tmp / "server.sock"), make_machine, record=record, profile=host)
    except BaseException:
        child.kill()
        child.wait()
        raise


def _serve_am(env: dict, tmp: Path, devices: int | None, vram: int | None, local_pci: bool = False,
              arch: str | None = None):
    """Start the remote-PCI server on GPUs of its own; point the program's environment at it (with `local_pci`, at
    the local-PCI service over the same GPUs, and REMOTE unset)."""
    from mockgpu import MockOS
    from mockgpu.native import cache_dir
    from mockgpu.remote_pci import RemotePCIServer
    from simgpu.hw import ucode
    server = RemotePCIServer(MockOS(devices=devices, vram_size=vram, arch=arch),
                             hostmap=str(tmp / "hostmap.sock")).start()
    if local_pci:
        try:
            _serve_local_pci(env, tmp, server)
        except BaseException:
            server.close()
            raise
    firmware = tmp / "am-firmware"
    firmware.mkdir()
    for name, data in ucode.synthetic_set().items():
        (firmware / name).write_bytes(data)
    # The interposer runs wiring/am_client.py in a Python program when it first imports tinygrad (pyhook.c): it puts
    # the firmware into the program's download cache under the real files' names. Give the program a cache of
    # simgpu's own, so that the user's tinygrad cache never holds fake firmware a real GPU would get.
    if not local_pci:
        env["REMOTE"] = f"127.0.0.1:{server.port}"
    env.update(SIMGPU_HOSTMAP=str(tmp / "hostmap.sock"),
               SIMGPU_AM_CLIENT=str(Path(__file__).with_name("am_client.py")), SIMGPU_AM_CLIENT_FIRMWARE=str(firmware),
               XDG_CACHE_HOME=str(cache_dir() / "am-client"))
    return server


def _serve_local_pci(env: dict, tmp: Path, server) -> None:
    """The GPUs' PCI files in the run's sysfs directory (the interposer rewrites /sys/bus/pci/devices there) and the
    local-PCI service (mockgpu.localpci) for their BARs, configuration space and pagemap. The GPUs sit in a PCI
    domain of the run's own (mockgpu.pci.claim_domain), held until the service closes, so the driver's lock files
    named by bus address are the run's alone."""
    from mockgpu import pci
    from mockgpu.localpci import LocalPCIService
    socs = server.machine.socs
    claim = pci.claim_domain()
    try:
        files = dict(pci.sysfs(socs, claim.number))
        files.update({path: "" for path in pci.openable(len(socs), claim.number)})  # opened through the interposer
        files.update({f"{pci.device_dir(i, claim.number)}/enable": "0\n" for i in range(len(socs))})
        files["/proc/sys/vm/compact_unevictable_allowed"] = "0\n"  # what the driver checks before it reads pagemap
        write_sysfs(tmp / "sysfs", files)
        server.local = LocalPCIService(server, str(tmp / "localpci.sock"), claim).start()
    except BaseException:
        claim.release()
        raise
    env.update(SIMGPU_LOCALPCI=str(tmp / "localpci.sock"), SIMGPU_PCI_DOMAIN=f"{claim.number:04x}")
    env.pop("REMOTE", None)
