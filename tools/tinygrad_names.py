"""Coverage of tinygrad 0.14's public names by the compiler, per namespace (issue 28).

    python -m tools.tinygrad_names [--markdown | --json]

Namespaces compared (tinygrad -> ours): `Tensor` -> `compiler.Tensor`, `nn` -> `compiler.nn`, `nn.optim` ->
`compiler.nn.optim`, `nn.state` -> `compiler.nn.state`, `dtypes` -> `compiler.dtypes`. A namespace of ours that
does not exist yet counts every name as missing.

What counts as one of tinygrad's public names (decided by where the object is defined, not by a list):
- a public name (no leading underscore), and
- for a class or a class instance (`Tensor`, `dtypes`): an attribute whose defining class in the MRO (the first
  class whose `__dict__` holds it) is a class of the tinygrad package (tinygrad's mixins count: `Tensor` gets
  most methods from `tinygrad.mixin.*`), so nothing inherited from `object` or `typing` counts;
- for a module (`nn`, `nn.optim`, `nn.state`): a name the module's own source binds at top level (`def`, `class`,
  assignment, e.g. `BatchNorm2d = BatchNorm`, `CHUNK_SIZE = ...`), not a name it imports (`functools`, `getenv`,
  `Tensor`, `dtypes`, typing names) and not a submodule (`nn.optim` is counted as its own namespace).
A name is ours if the counterpart namespace has an attribute of that name. For callables present in both, the
tool also lists those whose positional parameters differ: tinygrad's (names, in order; `*args`/`**kwargs`
aside) must begin ours, which may add more after them (a `*args` of ours stands for the rest). Same name should
mean same arguments.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import sys
import textwrap
import types

NAMESPACES = (  # (label, tinygrad object path, our object path)
    ("Tensor", "tinygrad.tensor:Tensor", "compiler.tensor:Tensor"),
    ("nn", "tinygrad.nn", "compiler.nn"),
    ("nn.optim", "tinygrad.nn.optim", "compiler.nn.optim"),
    ("nn.state", "tinygrad.nn.state", "compiler.nn.state"),
    ("dtypes", "tinygrad.dtype:dtypes", "compiler.dtypes:dtypes"),
)


def resolve(path: str):
    """The object at 'package.module' or 'package.module:attribute'; None when the module does not exist, or when
    a module of ours comes from outside the imported `compiler` package (an editable install of another checkout
    can supply a subpackage this tree lacks: it is not this tree's)."""
    mod_name, _, attr = path.partition(":")
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        if e.name is not None and mod_name.startswith(e.name):  # the module itself (or a parent) is absent
            return None
        raise
    top = sys.modules[mod_name.split(".")[0]]
    if mod is not top and not any(str(getattr(mod, "__file__", "")).startswith(d) for d in top.__path__):
        return None
    return getattr(mod, attr) if attr else mod


def _module_own_names(mod: types.ModuleType) -> set[str]:
    """Names bound at top level by the module's own source (imports excluded)."""
    tree = ast.parse(inspect.getsource(mod))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for tgt in node.targets:
                names.update(n.id for n in ast.walk(tgt) if isinstance(n, ast.Name))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not isinstance(getattr(mod, n, None), types.ModuleType)}


def _class_own_names(obj) -> set[str]:
    """Attributes of a class (or of an instance's class) defined by a class of the tinygrad package."""
    cls = obj if isinstance(obj, type) else type(obj)
    names = set()
    for name in dir(obj):
        owner = next((c for c in cls.__mro__ if name in c.__dict__), None)
        if owner is None or owner.__module__.split(".")[0] == "tinygrad":
            names.add(name)  # owner None: set on the instance (or by a metaclass of tinygrad's)
    return names


def public_names(obj) -> list[str]:
    """tinygrad's own public names in a namespace (module docstring)."""
    names = _module_own_names(obj) if isinstance(obj, types.ModuleType) else _class_own_names(obj)
    return sorted(n for n in names if not n.startswith("_"))


def _params(fn) -> tuple[list[str], bool] | None:
    """The names of fn's positional parameters, in order (self, *args and **kwargs excluded), and whether it
    takes *args."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in sig.parameters.values() if p.kind in positional and p.name not in ("self", "cls")]
    return names, any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values())


def compare(label: str, theirs_path: str, ours_path: str) -> dict:
    """One namespace: tinygrad's names, which we have, which are missing, signature differences."""
    theirs, ours = resolve(theirs_path), resolve(ours_path)
    names = public_names(theirs)
    have = [n for n in names if ours is not None and hasattr(ours, n)]
    missing = [n for n in names if n not in have]
    differ = {}
    for n in have:
        a, b = getattr(theirs, n), getattr(ours, n)
        if callable(a) and callable(b) and not isinstance(a, type(sys)):
            sa, sb = _params(a), _params(b)
            if sa is None or sb is None:
                continue
            (pa, _), (pb, star) = sa, sb
            if star:  # ours takes *args (`reshape(*shape)`): tinygrad's leading parameters are passed through it
                pa = pa[:len(pb)]
            if pb[:len(pa)] != pa:
                differ[n] = {"tinygrad": pa, "ours": pb}
    return {"namespace": label, "ours": ours_path, "exists": ours is not None, "total": len(names),
            "have": have, "missing": missing, "signature_differs": differ,
            "percent": round(100 * len(have) / len(names), 1) if names else 100.0}


def report() -> list[dict]:
    """Every namespace's comparison, plus a final 'total' row."""
    rows = [compare(*ns) for ns in NAMESPACES]
    total = sum(r["total"] for r in rows)
    have = sum(len(r["have"]) for r in rows)
    rows.append({"namespace": "total", "total": total, "have_count": have,
                 "percent": round(100 * have / total, 1) if total else 100.0})
    return rows


def markdown(rows: list[dict]) -> str:
    """The table for docs/compiler.md, then the missing names per namespace."""
    out = ["| namespace | tinygrad 0.14 | ours | coverage | signatures that differ |", "|---|---|---|---|---|"]
    for r in rows[:-1]:
        out.append(f"| `{r['namespace']}` | {r['total']} | {len(r['have'])} | {r['percent']}% | "
                   f"{len(r['signature_differs'])} |")
    t = rows[-1]
    out.append(f"| total | {t['total']} | {t['have_count']} | {t['percent']}% | |")
    for r in rows[:-1]:
        if r["missing"]:
            out += ["", _wrap(f"Missing from `{r['namespace']}`" + ("" if r["exists"] else
                                                                    f" (`{r['ours']}` does not exist)")
                              + ": " + ", ".join(f"`{n}`" for n in r["missing"]) + ".")]
    for r in rows[:-1]:
        if r["signature_differs"]:
            diffs = "; ".join(f"`{n}({', '.join(d['tinygrad'])})` vs ours `({', '.join(d['ours'])})`"
                              for n, d in sorted(r["signature_differs"].items()))
            out += ["", _wrap(f"Parameters that differ in `{r['namespace']}`: {diffs}.")]
    return "\n".join(out)


def _wrap(text: str) -> str:
    return textwrap.fill(text, 116, break_long_words=False, break_on_hyphens=False)


def text(rows: list[dict]) -> str:
    """A plain summary: one line per namespace and its missing names."""
    out = []
    for r in rows[:-1]:
        out.append(f"{r['namespace']:9} {len(r['have']):4}/{r['total']:<4} {r['percent']:5}%  "
                   f"missing: {' '.join(r['missing'])}")
    t = rows[-1]
    out.append(f"{'total':9} {t['have_count']:4}/{t['total']:<4} {t['percent']:5}%")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    fmt = ap.add_mutually_exclusive_group()
    fmt.add_argument("--markdown", action="store_true", help="the table for docs/compiler.md")
    fmt.add_argument("--json", action="store_true", help="everything, machine-readable")
    args = ap.parse_args(argv)
    rows = report()
    print(json.dumps(rows, indent=1) if args.json else markdown(rows) if args.markdown else text(rows))


if __name__ == "__main__":
    main()
