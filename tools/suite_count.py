"""Count what the project's suite checks: collected test ids and assertions, per test directory.

`python -m tools.suite_count` (from the checkout, PYTHONPATH set to it) prints, for each folder under tests/,
the number of collected test ids (`pytest --collect-only`, so parametrised cases count one each) and the number
of assertions written in its files: `assert` statements, and calls that assert by themselves (`assert_*` helpers
such as numpy.testing's, `pytest.raises`/`warns`, `pytest.fail`). `--json FILE` also writes the figures, so a
change to the suite can be compared before/after (`--compare OLD.json` prints both and the differences).
"""

import argparse
import ast
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_RAISING = {"raises", "warns", "fail", "deprecated_call"}


def _call_name(node: ast.Call) -> str:
    """The last name of a call's function (`np.testing.assert_equal(...)` -> `assert_equal`)."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def count_assertions(path: Path) -> tuple[int, int]:
    """(assert statements, asserting calls) written in one Python file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    statements = calls = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            statements += 1
        elif isinstance(node, ast.Call):
            name = _call_name(node)
            if name.startswith("assert") or name in _RAISING:
                calls += 1
    return statements, calls


def _area(relpath: str) -> str:
    """The reporting folder of a test path: tests/simgpu/shader/x.py -> simgpu/shader, tests/wiring/x.py -> wiring."""
    parts = Path(relpath).parts[1:-1]  # drop "tests" and the file name
    if not parts:
        return "."
    return "/".join(parts[:2]) if parts[0] == "simgpu" else parts[0]


def collected_ids(extra: list[str]) -> list[str]:
    """The test ids pytest collects from tests/ (the suite's own configuration, no xdist)."""
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "-p", "no:xdist", *extra]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False).stdout
    return [line.strip() for line in out.splitlines() if "::" in line and not line.startswith(" ")]


def figures(extra: list[str]) -> dict:
    """Per-area counts of collected test ids, assert statements and asserting calls, and their totals."""
    areas: dict[str, Counter] = {}
    for test_id in collected_ids(extra):
        areas.setdefault(_area(test_id.split("::")[0]), Counter())["tests"] += 1
    for path in sorted((ROOT / "tests").rglob("*.py")):
        statements, calls = count_assertions(path)
        area = areas.setdefault(_area(str(path.relative_to(ROOT))), Counter())
        area["assert_statements"] += statements
        area["assert_calls"] += calls
    total = sum(areas.values(), Counter())
    return {"areas": {k: dict(v) for k, v in sorted(areas.items())}, "total": dict(total)}


def _row(name: str, counts: dict, old: dict | None) -> str:
    """One printed line: the area's three counts, with the old figures beside them when comparing."""
    cells = []
    for key in ("tests", "assert_statements", "assert_calls"):
        now = counts.get(key, 0)
        cells.append(f"{now:<7}" if old is None else f"{old.get(key, 0):>7} -> {now:<7}")
    return f"{name:<18}" + "  ".join(cells)


def main(argv: list[str] | None = None) -> int:
    """Print the counts; optionally save them as JSON and compare with an earlier save."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--compare", help="an earlier --json file: print its figures beside today's")
    ap.add_argument("pytest_args", nargs="*", help="extra arguments for pytest's collection (e.g. a marker)")
    args = ap.parse_args(argv)
    now = figures(args.pytest_args)
    old = json.loads(Path(args.compare).read_text()) if args.compare else None
    width = 7 if old is None else 18
    print(f"{'area':<18}" + "  ".join(f"{h:<{width}}" for h in ("tests", "asserts", "assert calls")))
    for name, counts in now["areas"].items():
        if any(counts.values()):
            print(_row(name, counts, old["areas"].get(name, {}) if old else None))
    print(_row("TOTAL", now["total"], old["total"] if old else None))
    if args.json:
        Path(args.json).write_text(json.dumps(now, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
