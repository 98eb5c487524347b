"""The `simgpu trace ...` subcommands (wired into wiring/cli.py)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from traces.format import RECORD_TYPES
from traces.show import parse_range


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the record/replay/show/diff/export subcommands to the `trace` parser."""
    sub = p.add_subparsers(dest="trace_command", metavar="ACTION", required=True)
    r = sub.add_parser("record", help="run a command with SIMGPU_TRACE set: -o out.trace -- python script.py")
    r.add_argument("-o", "--output", required=True)
    r.add_argument("cmd", nargs=argparse.REMAINDER)
    p_ = sub.add_parser("replay", help="replay on a fresh MockOS; report the first divergence")
    p_.add_argument("path")
    s = sub.add_parser("show", help="strace-like listing")
    s.add_argument("path")
    s.add_argument("--kind", type=_kinds, help=f"comma-separated record types ({','.join(RECORD_TYPES)})")
    s.add_argument("--range", dest="rng", type=_record_range,
                   help="record range A:B or A-B (either end optional), or N")
    s.add_argument("-v", "--verbose", action="store_true", help="list the memory page runs too")
    s.add_argument("--no-packets", action="store_true", help="do not decode the packets submitted to the rings")
    d = sub.add_parser("diff", help="first records where two traces differ")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("-C", "--context", type=int, default=3)
    d.add_argument("-n", "--limit", type=int, default=1, help="how many differing records to show")
    e = sub.add_parser("export", help="Chrome trace-event JSON (Perfetto)")
    e.add_argument("--perfetto", action="store_true", help="trace-event JSON for ui.perfetto.dev (the default)")
    e.add_argument("path")
    e.add_argument("out")


def _kinds(text: str) -> set[str]:
    kinds = {k.strip() for k in text.split(",") if k.strip()}
    unknown = sorted(kinds - set(RECORD_TYPES))
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"unknown record type(s) {', '.join(unknown) or repr(text)}; "
                                         f"known: {', '.join(RECORD_TYPES)}")
    return kinds


def _record_range(text: str) -> tuple[int, int]:
    try:
        return parse_range(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad record range {text!r}: use A:B or A-B (either end optional), "
                                         "or N") from None


def run(args: argparse.Namespace) -> int:
    """Dispatch a parsed `simgpu trace` command; a file that cannot be read or written is a one-line error
    and exit status 2."""
    try:
        return _run(args)
    except BrokenPipeError:  # the reader went away (`simgpu trace show | head`): nothing more to say
        _quiet_stdout()
        return 0
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"simgpu trace {args.trace_command}: {where}{e.strerror or e}", file=sys.stderr)
        return 2


def _recorded(path: str, status: int) -> int:
    """The command's status, unless it recorded nothing: then a one-line error (and no empty file left behind)."""
    if os.path.exists(path) and os.path.getsize(path) == 0:
        os.unlink(path)
        print(f"simgpu trace record: {path}: nothing was recorded: the command made no driver calls through "
              "simgpu's runtime (SIMGPU_TRACE); record any other program with `simgpu trace record -o FILE -- "
              "simgpu run -- CMD`", file=sys.stderr)
        return status or 2
    return status


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush at exit does not fail on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _run(args: argparse.Namespace) -> int:
    cmd = args.trace_command
    if cmd == "record":
        argv = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
        if not argv:
            print("simgpu trace record: nothing to run (usage: -o out.trace -- python script.py)", file=sys.stderr)
            return 2
        with open(args.output, "wb"):  # fail here, in one line, rather than in the traced program
            pass
        env = dict(os.environ, SIMGPU_TRACE=os.path.abspath(args.output))
        return _recorded(args.output, subprocess.call(argv, env=env))
    if cmd == "replay":
        from traces.replay import replay_main
        return replay_main(args.path)
    if cmd == "show":
        from traces.show import show_main
        return show_main(args.path, args.kind, args.rng, args.verbose, packets=not args.no_packets)
    if cmd == "diff":
        from traces.diff import diff_main
        return diff_main(args.a, args.b, args.context, args.limit)
    from traces.export import export_main
    return export_main(args.path, args.out)
