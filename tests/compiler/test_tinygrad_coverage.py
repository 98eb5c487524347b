"""tools/tinygrad_names.py (issue 28): its counts are consistent with tinygrad 0.14 and with the compiler, and its
rule (names defined in tinygrad's namespace, not ones it imports) holds. Runs the tool as a user does."""

import json
import os
import subprocess
import sys

import pytest

from tools import tinygrad_names

pytest.importorskip("tinygrad")


@pytest.fixture(scope="module")
def rows():
    run = subprocess.run([sys.executable, "-m", "tools.tinygrad_names", "--json"], capture_output=True, text=True,
                         env=dict(os.environ), timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def test_counts_add_up(rows):
    *spaces, total = rows
    assert [r["namespace"] for r in spaces] == [ns[0] for ns in tinygrad_names.NAMESPACES]
    for r in spaces:
        have, missing = r["have"], r["missing"]
        assert not set(have) & set(missing), r["namespace"]
        assert sorted(have + missing) == sorted(set(have + missing)) and len(have) + len(missing) == r["total"]
        assert r["percent"] == round(100 * len(have) / r["total"], 1)
        assert set(r["signature_differs"]) <= set(have)
    assert total["total"] == sum(r["total"] for r in spaces)
    assert total["have_count"] == sum(len(r["have"]) for r in spaces)


def test_names_exist_on_both_sides(rows):
    """Every name listed is tinygrad's; every name we claim is an attribute of ours, every missing one is not."""
    for r, (_, theirs, ours) in zip(rows, tinygrad_names.NAMESPACES, strict=False):
        t, o = tinygrad_names.resolve(theirs), tinygrad_names.resolve(ours)
        for n in r["have"] + r["missing"]:
            assert hasattr(t, n) and not n.startswith("_"), (r["namespace"], n)
        for n in r["have"]:
            assert hasattr(o, n), (r["namespace"], n)
        for n in r["missing"]:
            assert o is None or not hasattr(o, n), (r["namespace"], n)


def test_imported_names_do_not_count(rows):
    """The rule: modules and helpers a namespace imports are not its API; what it defines is."""
    by = {r["namespace"]: set(r["have"] + r["missing"]) for r in rows[:-1]}
    assert not {"functools", "math", "Tensor", "dtypes", "prod", "TRAINING", "optim", "state"} & by["nn"]
    assert not {"getenv", "itertools", "flatten", "dedup"} & by["nn.optim"]
    assert not {"Any", "cast", "json", "struct", "OrderedDict", "prod"} & by["nn.state"]
    assert {"Linear", "BatchNorm2d", "Conv1d"} <= by["nn"] and {"SGD", "Adam", "Optimizer"} <= by["nn.optim"]
    assert {"safe_save", "safe_load", "safe_dtypes"} <= by["nn.state"] and "CHUNK_SIZE" not in by["nn.state"]
    assert {"relu", "shape", "T", "grad"} <= by["Tensor"] and "mro" not in by["Tensor"]
    assert {"float32", "long", "finfo", "ints"} <= by["dtypes"]


def test_markdown_table_has_a_row_per_namespace(rows):
    run = subprocess.run([sys.executable, "-m", "tools.tinygrad_names", "--markdown"], capture_output=True,
                         text=True, env=dict(os.environ), timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    for r in rows[:-1]:
        row = next(line for line in lines if line.startswith(f"| `{r['namespace']}` |"))
        assert f"| {r['total']} | {len(r['have'])} | {r['percent']}% |" in row


def test_our_namespaces_come_from_this_tree():
    """A subpackage this tree lacks is missing, even when an editable install of another checkout could supply
    it (the tool counts what the imported compiler package holds)."""
    import compiler
    for _, _, ours in tinygrad_names.NAMESPACES:
        obj = tinygrad_names.resolve(ours)
        mod = sys.modules[ours.partition(":")[0]] if obj is not None else None
        assert mod is None or any(str(mod.__file__).startswith(d) for d in compiler.__path__), ours
