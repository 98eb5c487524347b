"""The suite's test time per file (all its tests, and its longest test), from a run's JUnit XML:
tests/data/suite_durations.json, which the scheduling plugin (tests/support/schedule.py) reads to start the files of
the longest tests first on every xdist worker.

    python -m pytest -n 2 --dist worksteal -q --junitxml=/tmp/suite.xml     # a cold run: a fresh SIMGPU_CACHE_DIR
    python -m tools.suite_durations /tmp/suite.xml --load "load ~15, 2 cores"  # rewrites the committed file

A test's time is its setup, call and teardown as JUnit records them (module fixtures count in the file's first test),
so a file's sum is what a worker spends on it. Figures from a busy machine are inflated, but by a similar factor
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
    parts = [p for p in classname.split(".") if p]
    for n in range(len(parts), 0, -1):
        path = Path(*parts[:n]).with_suffix(".py")
        if (ROOT / path).is_file():
            return path.as_posix()
    return None


def per_file(xml_paths: list[Path]) -> dict[str, dict[str, float]]:
    """Per test file: its tests' seconds summed ("seconds") and its longest test's ("longest"), over every report."""
    seconds: dict[str, float] = defaultdict(float)
    longest: dict[str, float] = defaultdict(float)
    for xml_path in xml_paths:
        for case in ET.parse(xml_path).getroot().iter("testcase"):
            path = file_of(case.get("classname", ""))
            if path is not None:
                t = float(case.get("time", 0))
                seconds[path] += t
                longest[path] = max(longest[path], t)
    return {p: {"seconds": round(seconds[p], 1), "longest": round(longest[p], 1)} for p in seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("xml", nargs="+", type=Path, help="JUnit XML reports of a whole-suite run")
    parser.add_argument("--load", default="", help="the machine and its load during the run, kept with the figures")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    figures = per_file(args.xml)
    files = dict(sorted(figures.items(), key=lambda kv: -kv[1]["longest"]))
    doc = {"measured": args.load, "total_seconds": round(sum(f["seconds"] for f in files.values()), 1), "files": files}
    rows = ",\n".join(f"  {json.dumps(path)}: {json.dumps(f)}" for path, f in files.items())  # a file a line
    head = json.dumps({k: v for k, v in doc.items() if k != "files"}, indent=1)[:-2]
    args.out.write_text(f'{head},\n "files": {{\n{rows}\n }}\n}}\n')
    print(f"{args.out}: {len(files)} files, {doc['total_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
