"""What the isatab_* generators share: where simgpu's codec tables live and how a table is written."""

from __future__ import annotations

import json
import os
import sys

DATA = os.path.join(os.path.dirname(__file__), "..", "simgpu", "isa", "data")


def table_path(name: str) -> str:
    """Path of the codec table `name` (scalar, valu, memory)."""
    return os.path.join(DATA, f"{name}.json")


def write_table(path: str, tables: dict, indent: int | None = None) -> None:
    """Write a generated table as key-sorted JSON (compact unless `indent` is given) and say where it went."""
    with open(path, "w") as f:
        json.dump(tables, f, indent=indent, separators=(",", ":") if indent is None else None, sort_keys=True)
        f.write("\n")
    print(f"{os.path.getsize(path)} bytes -> {path}", file=sys.stderr)
