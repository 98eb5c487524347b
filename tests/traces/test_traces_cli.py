"""`simgpu trace ...` on bad input: one-line errors and non-zero exits, never a traceback (issue 12, item 10)."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys

import pytest

from tests import DATA
from tests.support.clients import c_program_or_skip, preload_or_skip
from tests.traces.test_traces import ROOT, record
from traces.cli import add_arguments, run
from traces.format import read_trace, write_trace
from traces.replay import replay


def _trace(argv: list[str], capsys) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="simgpu trace")
    add_arguments(parser)
    try:
        rc = run(parser.parse_args(argv))
    except SystemExit as e:  # argparse rejected an argument
        rc = e.code
    err = capsys.readouterr().err
    return rc, err


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "saxpy.trace"
    path.write_bytes(record())
    return str(path)


@pytest.mark.parametrize("argv", [["show", "/nonexistent.trace"], ["replay", "/nonexistent.trace"],
                                  ["diff", "/nonexistent.trace", "/nonexistent2.trace"],
                                  ["export", "/nonexistent.trace", "/tmp/out.json"]])
def test_missing_trace_is_one_line_error(argv, capsys):
    rc, err = _trace(argv, capsys)
    assert rc == 2
    assert err.strip() == f"simgpu trace {argv[0]}: /nonexistent.trace: No such file or directory"


def test_unwritable_export_path_is_one_line_error(trace_file, tmp_path, capsys):
    out = tmp_path / "missing-dir" / "out.json"
    rc, err = _trace(["export", trace_file, str(out)], capsys)
    assert rc == 2 and err.strip() == f"simgpu trace export: {out}: No such file or directory"


def test_unwritable_record_output_fails_before_running_anything(tmp_path, capsys):
    marker = tmp_path / "ran"
    out = tmp_path / "missing-dir" / "x.trace"
    rc, err = _trace(["record", "-o", str(out), "--", "touch", str(marker)], capsys)
    assert rc == 2 and "No such file or directory" in err and not marker.exists()


@pytest.mark.parametrize("rng, first, last", [("10-20", 10, 19), ("10:20", 10, 19), ("15", 15, 15), ("-3", 0, 2)])
def test_show_accepts_dash_and_colon_ranges(trace_file, capsys, rng, first, last):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert run(parser.parse_args(["show", trace_file, "--range", rng, "--no-packets"])) == 0
    numbers = [int(line.split()[0]) for line in capsys.readouterr().out.splitlines()[1:]]
    assert numbers[0] == first and numbers[-1] == last


@pytest.mark.parametrize("argv, says", [(["--range", "1-x"], "bad record range '1-x'"),
                                        (["--range", "20-10"], "bad record range '20-10'"),
                                        (["--kind", "ioctl,foo"], "unknown record type(s) foo; known: open")])
def test_show_rejects_bad_filters(trace_file, capsys, argv, says):
    rc, err = _trace(["show", trace_file, *argv], capsys)
    assert rc == 2 and says in err


def _cli_env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), ROOT])))


def test_show_into_a_pipe_closed_early_exits_quietly(tmp_path):
    """`simgpu trace show F | head`: the reader leaving is not an error (issue 26)."""
    path = tmp_path / "many.trace"
    write_trace(path, {"os": "MockOS"}, [{"t": "exists", "path": f"/sys/x{i}", "result": True} for i in range(20000)])
    p = subprocess.Popen([sys.executable, "-m", "wiring.cli", "trace", "show", str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=ROOT, env=_cli_env())
    assert p.stdout.readline().startswith(b"# simgpu trace")
    p.stdout.close()  # ~700 KB are still to come: far more than a pipe holds, so the next writes fail
    err = p.stderr.read()
    assert p.wait(timeout=300) == 0 and err == b""


def test_record_of_simgpu_run_records_the_clients_traffic(tmp_path):
    """`simgpu trace record -o F -- simgpu run -- CMD` records what the server sees of CMD, like `run --record F`
    (it wrote an empty F without a word, issue 26)."""
    prog = c_program_or_skip("kfd_aql_vadd")
    preload_or_skip()
    path = tmp_path / "c.trace"
    env = _cli_env()
    env.pop("MOCKGPU", None)
    cli = [sys.executable, "-m", "wiring.cli"]
    r = subprocess.run([*cli, "trace", "record", "-o", str(path), "--", *cli, "run", "--", str(prog),
                        str(DATA / "codeobjects" / "llvmlite_vadd.so")], env=env, cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    header, recs = read_trace(path)
    assert header["concurrent"] and any(rec["t"] == "mmio" for rec in recs)
    assert replay(path, out=io.StringIO()) == (None, len(recs))


def test_record_of_a_command_without_driver_calls_says_so(tmp_path, capsys):
    path = tmp_path / "x.trace"
    rc, err = _trace(["record", "-o", str(path), "--", sys.executable, "-c", "pass"], capsys)
    assert rc == 2 and not path.exists()
    assert err.count("\n") == 1 and "nothing was recorded" in err and "simgpu run" in err
