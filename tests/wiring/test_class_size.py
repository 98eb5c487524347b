"""No class over MAX_LINES lines (the project's standard: a class that grew past it holds several jobs; split it
along them). The generated tables are data files (simgpu/isa/data's JSON, written by tools/isatab_*), not
classes, so every class of every package counts. A class over the limit would be listed with its size: it could
only shrink, and leave the list once within the limit (issue 30 split the last four: Tensor, MathOps, KfdProcess,
MockOS)."""

import ast
from functools import cache

from tests.wiring.test_imports import ROOT

MAX_LINES = 350
PACKAGES = ("simgpu", "compiler", "runtime", "mockgpu", "traces", "wiring", "tools", "bench")
OVER_TODAY: dict[str, int] = {}  # "module.Class": its lines today (none since issue 30)


@cache
def class_lines() -> dict[str, int]:
    """"module.Class" (nested classes as module.Outer.Inner) -> lines from its `class` line to its last (one walk of
    the tree, about 1.3 CPU-s, for both tests)."""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            _collect(ast.parse(path.read_text()), module, out)
    return out


def _collect(node, prefix: str, out: dict[str, int]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            name = f"{prefix}.{child.name}"
            out[name] = child.end_lineno - child.lineno + 1
            _collect(child, name, out)
        elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _collect(child, prefix, out)


def test_no_class_over_the_limit_but_the_listed_ones():
    over = {name: n for name, n in class_lines().items() if n > MAX_LINES}
    new = {name: n for name, n in over.items() if name not in OVER_TODAY}
    assert not new, f"split these classes along their jobs (at most {MAX_LINES} lines): {new}"


def test_the_listed_classes_only_shrink():
    lines = class_lines()
    grown = {name: (lines.get(name), n) for name, n in OVER_TODAY.items() if lines.get(name, 0) > n}
    assert not grown, f"(lines now, lines listed): {grown}"
    within = sorted(name for name in OVER_TODAY if lines.get(name, 0) <= MAX_LINES)
    assert not within, f"within the limit now: remove from OVER_TODAY: {within}"
