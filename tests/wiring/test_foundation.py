"""The package layout, the CLI and the pytest plugin are there and behave."""

import importlib
import os
import subprocess
import sys

import pytest

from wiring.cli import main

PACKAGES = ["simgpu", "simgpu.isa", "simgpu.hw", "compiler", "runtime", "runtime.uapi", "mockgpu", "traces", "wiring"]


@pytest.mark.parametrize("name", PACKAGES)
def test_package_imports_and_says_what_lives_there(name):
    mod = importlib.import_module(name)
    assert mod.__doc__ and "import" in mod.__doc__.lower()


def test_cli_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "demo" in out and "disasm" in out


def test_demo_runs_and_exits_zero(capsys):
    assert main(["demo"]) == 0
    assert "matmul" in capsys.readouterr().out


def test_console_script_runs():
    r = subprocess.run([sys.executable, "-m", "wiring.cli", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "disasm" in r.stdout


def test_pytest_plugin_sets_mockgpu(pytester):
    pytester.makepyfile("import os\ndef test_env():\n    assert os.environ.get('MOCKGPU') == '1'\n")
    env_before = os.environ.pop("MOCKGPU", None)
    try:
        result = pytester.runpytest_subprocess("--mockgpu", "-p", "no:cacheprovider")
    finally:
        if env_before is not None:
            os.environ["MOCKGPU"] = env_before
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("cwd", ["repository", "elsewhere"])
def test_bare_pytest_imports_the_test_packages(cwd, tmp_path):
    # Issue 12, item 8: bare `pytest` (not `python -m pytest`) failed with "No module named 'tests'".
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    target = os.path.join(root, "tests", "traces", "test_traces_workloads.py")  # imports tests.runtime.* helpers
    pytest_bin = os.path.join(os.path.dirname(sys.executable), "pytest")
    r = subprocess.run([pytest_bin, "--co", "-q", "-p", "no:cacheprovider", target], capture_output=True, text=True,
                       cwd=root if cwd == "repository" else tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "error" not in r.stdout.lower()
