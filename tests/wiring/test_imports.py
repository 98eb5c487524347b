"""The import table of docs/design.md ("Layers and imports"), enforced on every module of every package.

Each module is parsed (ast), and every import it makes counts, at the top or inside a function:
`import a.b`, `from a import b` (as a.b when b is a module), relative imports, and
importlib.import_module / __import__ with a constant name.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("simgpu", "compiler", "runtime", "mockgpu", "traces", "wiring")

# package -> what it may import of the packages above (a name allows the module and everything below it;
# "=name" allows that one module only). Every package may import itself.
ALLOWED = {
    "simgpu": (),
    "compiler": ("simgpu.isa", "=simgpu.diskcache", "=simgpu.settings", "runtime"),
    "runtime": ("simgpu.hw", "simgpu.isa", "=simgpu.settings"),
    "mockgpu": ("simgpu", "runtime.uapi", "runtime.os"),
    "traces": ("runtime", "mockgpu", "simgpu.hw", "simgpu.isa", "=simgpu", "=simgpu.settings"),
    "wiring": ("simgpu", "compiler", "runtime", "mockgpu", "traces"),
}


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(module: str, source: str, is_package: bool = False, tree: ast.AST | None = None) \
        -> list[tuple[int, str]]:
    """(line, imported module) for every import in `source`, the source of `module` (tree: source already parsed,
    by a caller that walks it too)."""
    here = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree if tree is not None else ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")[:len(here.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}" if base else a.name
                out.append((node.lineno, sub if _is_module(sub) else base))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                out.append((node.lineno, node.args[0].value))
    return out


def allowed(package: str, target: str) -> bool:
    """Whether `package` may import module `target` (True for modules outside our packages)."""
    top = target.split(".")[0]
    if top not in PACKAGES or top == package:
        return True
    for rule in ALLOWED[package]:
        if rule.startswith("="):
            if target == rule[1:]:
                return True
        elif target == rule or target.startswith(rule + "."):
            return True
    return False


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """The imports of `module` that break the table."""
    package = module.split(".")[0]
    return [f"{module}:{line} imports {target}" for line, target in imports_of(module, source, is_package)
            if not allowed(package, target)]


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield _module_name(path), path


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_imports_only_what_the_table_allows(package):
    found = []
    for module, path in _modules():
        if module.split(".")[0] == package:
            found += violations(module, path.read_text(), path.name == "__init__.py")
    assert not found, "\n".join(found)


def test_every_package_has_modules():
    names = {m.split(".")[0] for m, _ in _modules()}
    assert names == set(PACKAGES)


@pytest.mark.parametrize("module, source, bad", [
    ("runtime.device", "def f():\n    from mockgpu import MockOS\n", "runtime.device:2 imports mockgpu"),
    ("runtime.device", "import traces.record\n", "runtime.device:1 imports traces.record"),
    ("runtime.device", "from simgpu import gpu\n", "runtime.device:1 imports simgpu.gpu"),
    ("runtime.device", "import importlib\nimportlib.import_module('wiring.os_select')\n",
     "runtime.device:2 imports wiring.os_select"),
    ("simgpu.cp.queue", "from ...runtime import os\n", "simgpu.cp.queue:1 imports runtime.os"),
    ("mockgpu.kfd", "from runtime.device import Device\n", "mockgpu.kfd:1 imports runtime.device"),
    ("traces.record", "import simgpu.gpu\n", "traces.record:1 imports simgpu.gpu"),
    ("compiler.llvm", "from simgpu.hw import pm4\n", "compiler.llvm:1 imports simgpu.hw.pm4"),
    ("traces.cli", "from wiring import cli\n", "traces.cli:1 imports wiring.cli"),
])
def test_the_checker_sees_every_kind_of_import(module, source, bad):
    assert violations(module, source) == [bad]


@pytest.mark.parametrize("module, source", [
    ("mockgpu.driver", "from runtime.os import OS, Mapping\nfrom simgpu.gpu import GPU\n"),
    ("traces.record", "import simgpu\nfrom runtime.os import OS\n"),
    ("simgpu.testbed", "from .hw import kernargs\nfrom .isa import assemble\n"),
    ("wiring.demo", "import runtime\nfrom mockgpu import MockOS\nfrom traces.record import RecordingOS\n"),
])
def test_the_checker_accepts_what_the_table_allows(module, source):
    assert violations(module, source) == []
