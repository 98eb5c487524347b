"""The suite's test time per file, from a run's JUnit XML: tests/data/suite_durations.json, which the scheduling
plugin (tests/support/schedule.py) reads to start the longest files first on every xdist worker.

    python -m pytest -n 2 --dist worksteal -q --junitxml=/tmp/suite.xml     # a cold run: a fresh SIMGPU_CACHE_DIR
    python -m tools.suite_durations /tmp/suite.xml --load "load ~15, 2 cores"  # rewrites the committed file

A test's time is its setup, call and teardown as JUnit records them (module fixtures count in the file's first test),
so a file's figure is what a worker spends on it. Figures from a busy machine are inflated, but by a similar factor
for every file; only their order and rough ratios matter to the schedule.
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "suite_durations.json"


def file_of(classname: str) -> str | None:
    """The test file of a JUnit classname (`tests.compiler.test_ops.TestX` -> tests/compiler/test_ops.py)."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        path = Path(*parts[:n]).with_suffix(".py")
        if (ROOT / path).is_file():
            return path.as_posix()
    return None


def per_file(xml_paths: list[Path]) -> dict[str, float]:
    """Seconds per test file, summed over the testcases of every report given."""
    seconds: dict[str, float] = defaultdict(float)
    for xml_path in xml_paths:
        for case in ET.parse(xml_path).getroot().iter("testcase"):
            path = file_of(case.get("classname", ""))
            if path is not None:
                seconds[path] += float(case.get("time", 0))
    return dict(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("xml", nargs="+", type=Path, help="JUnit XML reports of a whole-suite run")
    parser.add_argument("--load", default="", help="the machine and its load during the run, kept with the figures")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    seconds = per_file(args.xml)
    files = {path: round(s, 1) for path, s in sorted(seconds.items(), key=lambda kv: -kv[1])}
    doc = {"measured": args.load, "total_seconds": round(sum(seconds.values()), 1), "files": files}
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{args.out}: {len(files)} files, {doc['total_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
