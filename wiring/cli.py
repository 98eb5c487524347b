"""The `simgpu` command line: one subcommand per tool (demo, disasm, ...)."""

import argparse
import atexit
import os
import sys


def _cmd_demo(args: argparse.Namespace) -> int:
    from wiring.demo import run
    return 0 if run(args.queue, compiled=not args.kernels_only, driver=args.driver) else 1


def _cmd_disasm(args: argparse.Namespace) -> int:
    from runtime.cpu.disasm import disasm_main as cpu_disasm  # CPU kernels and kernel cache entries
    status = cpu_disasm(args.file, out=sys.stdout)
    if status is not None:
        return status
    from simgpu.isa.objdump import disasm_main
    return disasm_main(args.file, out=sys.stdout)


def _cmd_run(args: argparse.Namespace) -> int:
    from wiring.run import run
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        print("simgpu run: nothing to run (usage: simgpu run [--devices N] [--arch ARCH] [--record FILE] -- CMD ...)",
              file=sys.stderr)
        return 2
    code = run(cmd, args.devices, args.vram, args.record, args.sanitize, args.am, local_pci=not args.remote_pci,
               stats=args.stats, profile=args.profile, sqtt=args.sqtt, perfetto=args.perfetto,
               profile_host=args.profile_host, arch=args.arch)
    if args.own_process:
        # The program has exited and every session is finished (recordings written): exit now. Python's own exit
        # would join the JIT's compile threads (concurrent.futures waits for a compile in flight, at the lowest
        # priority on a busy machine) and tear down every module, for nothing anyone waits for. The atexit
        # functions still run (a private build directory is removed); the thread joins are not among them.
        exit_now(code)
    return code


def exit_now(code: int) -> None:
    """Exit at once: the atexit functions, the JIT's compile worker ended, the output flushed, os._exit.

    os._exit skips threading's exit hooks, among them the one that ends the JIT's worker process
    (simgpu.shader.jit.worker). A worker left compiling outlives `simgpu run` -- minutes for a large kernel on a busy
    machine -- and holds the stderr it inherited, so whoever reads that to its end (`| tee`, a test's captured
    output, tinygrad-suite.sh) waited for the compile, not for the program."""
    atexit._run_exitfuncs()
    worker = sys.modules.get("simgpu.shader.jit.worker")  # loaded only if a kernel got hot: nothing to end otherwise
    if worker is not None:
        worker.stop(only_if_busy=False)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _cmd_trace(args: argparse.Namespace) -> int:
    from traces.cli import run
    return run(args)


def _cmd_stats(args: argparse.Namespace) -> int:
    from wiring.stats import stats_main
    return stats_main(args.cmd, args.top)


def _cmd_profile(args: argparse.Namespace) -> int:
    import os
    import subprocess

    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        print("simgpu profile: nothing to run (usage: simgpu profile [--sqtt] -- python script.py)", file=sys.stderr)
        return 2
    env = dict(os.environ, MOCKGPU="1", SIMGPU_PROFILE="1")
    if args.sqtt:
        env["SIMGPU_SQTT"] = "1"
    if args.perfetto:
        env["SIMGPU_PROFILE_OUT"] = args.perfetto
    return subprocess.call(cmd, env=env)


def build_parser(trace: bool = True) -> argparse.ArgumentParser:
    """The `simgpu` parser; without `trace`, the `trace` command's own arguments are not built (their help text
    needs traces.format's record types: 0.25-0.65 s of imports at load 8 before `simgpu run` starts its program)."""
    p = argparse.ArgumentParser(prog="simgpu", description="GPU-free AMD gfx1100 / gfx1201 / gfx942 / gfx950 testbed")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="run the end-to-end demo on the emulated GPU")
    d.add_argument("--queue", choices=["pm4", "aql"], default="pm4")
    d.add_argument("--driver", choices=["kfd", "am"], default="kfd",
                   help="am: the runtime boots and drives the GPU's PCI function itself (no amdkfd)")
    d.add_argument("--kernels-only", action="store_true",
                   help="only the hand-written LLVM IR kernels, not the compiler's MLP and transformer block")
    d.set_defaults(func=_cmd_demo)
    s = sub.add_parser("disasm", help="disassemble the kernels of an AMDGPU code object, a CPU kernel (x86-64) or "
                                      "a kernel cache entry")
    s.add_argument("file")
    s.set_defaults(func=_cmd_disasm)
    r = sub.add_parser("run", help="run any program (tinygrad, C on amdkfd) against simulated GPUs")
    r.add_argument("--devices", type=int, default=None, help="number of GPUs (default: $MOCKGPU_DEVICES or 1)")
    r.add_argument("--arch", default=None, metavar="ARCH[,ARCH...]",
                   help="the GPUs' architecture: gfx1100, gfx1201, gfx942 or gfx950, one for all or comma-separated "
                        "per device "
                        "(default: $SIMGPU_ARCH or gfx1100)")
    r.add_argument("--vram", type=int, default=None, help="bytes of VRAM per GPU (default: $MOCKGPU_VRAM or 8 GiB)")
    r.add_argument("--record", metavar="FILE", help="record each process's driver traffic (simgpu trace replay)")
    r.add_argument("--sanitize", metavar="CHECKS", help="memcheck,initcheck,racecheck,hazards or all; findings on "
                                                        "stderr (default: $SIMGPU_SANITIZE)")
    r.add_argument("--am", action="store_true", help="also serve the GPUs as PCI functions for a userspace (AM) "
                   "driver: tinygrad's, with DEV=PCI+AMD; local ones (/sys/bus/pci/devices in a PCI domain of the "
                   "run's own, BAR accesses trapped, /proc/self/pagemap), so the driver maps CPU memory into the GPU "
                   "too")
    pci = r.add_mutually_exclusive_group()
    pci.add_argument("--remote-pci", action="store_true", help="with --am: serve them over tinygrad's REMOTE "
                     "transport instead (sets REMOTE; a driver refuses to map CPU memory into a remote GPU)")
    pci.add_argument("--local-pci", action="store_true", help="with --am: local PCI functions (the default)")
    r.add_argument("--stats", action="store_true", help="print the clients' GPUs' counters after the program (as "
                                                        "simgpu stats does)")
    r.add_argument("--profile", action="store_true", help="profile every kernel the clients dispatch; print the "
                                                          "per-kernel table after the program (as simgpu profile)")
    r.add_argument("--sqtt", action="store_true", help="thread-trace every dispatch too (implies --profile)")
    r.add_argument("--perfetto", metavar="OUT.json", help="write a Perfetto / Chrome trace of the dispatches "
                                                          "(implies --profile)")
    r.add_argument("--profile-host", metavar="FILE", help="profile the server itself: round trips by kind and CPU by "
                   "component on stderr after the program, its cProfile (pstats) in FILE ($SIMGPU_PROFILE_HOST; "
                   "FILE -: round trips only, no cProfile)")
    r.add_argument("cmd", nargs=argparse.REMAINDER)
    r.set_defaults(func=_cmd_run)
    st = sub.add_parser("stats", help="run a command on the simulated GPU and print the shader engine's counters "
                                      "(wave-instructions, lane-ops, virtual time, per-opcode histogram)")
    st.add_argument("--top", type=int, default=20, help="opcodes to list per GPU (0: all)")
    st.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command [args...]")
    st.set_defaults(func=_cmd_stats)
    pr = sub.add_parser("profile", help="run a command on the simulated GPU with every kernel launch profiled "
                                        "(performance counters, optionally thread traces) and print a table per kernel")
    pr.add_argument("--sqtt", action="store_true", help="thread-trace every launch too (SIMGPU_SQTT=1)")
    pr.add_argument("--perfetto", metavar="OUT.json", help="also write a Perfetto / Chrome trace of the launches")
    pr.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command [args...]")
    pr.set_defaults(func=_cmd_profile)
    t = sub.add_parser("trace", help="record, replay, show, diff and export traces of the driver seam")
    if trace:
        from traces.cli import add_arguments
        add_arguments(t)
    t.set_defaults(func=_cmd_trace)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `simgpu` console script."""
    given = sys.argv[1:] if argv is None else argv
    command = next((a for a in given if not a.startswith("-")), None)  # (the only top-level option is -h)
    parser = build_parser(trace=command in (None, "trace"))
    args = parser.parse_args(argv)
    args.own_process = argv is None  # the process's own command line (not a call from a test or a script)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into `head` and the like: not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
