"""simgpu.settings: every environment variable simgpu reads is declared once, parsed in one place (a bad value is an
error naming the variable), read when used, and listed in docs/settings.md (python -m tools.gen_settings_doc)."""

import ast
import re
from pathlib import Path

import pytest

from simgpu import settings
from tools import gen_settings_doc

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("simgpu", "compiler", "runtime", "mockgpu", "traces", "wiring")
# Read where they are used, with the reason (simgpu/settings.py's docstring): the handshake `simgpu run` gives the
# programs it starts, read in the client's process by standard-library-only scripts.
DIRECT = {"wiring/am_client.py": {"SIMGPU_AM_CLIENT_FIRMWARE"}, "wiring/am_site/sitecustomize.py":
          {"SIMGPU_AM_FIRMWARE_INSTALL"}}


def test_the_docs_table_is_generated_from_the_module():
    assert gen_settings_doc.main(["--check"]) == 0, "run python -m tools.gen_settings_doc"
    doc = (ROOT / "docs" / "settings.md").read_text()
    for name in settings.SETTINGS:
        assert f"| `{name}` |" in doc


def _environ_reads(tree: ast.AST) -> set[str]:
    """Names of our variables read from os.environ or os.getenv in a module (writes into a child's env are not
    reads: dict(os.environ, NAME=...) passes NAME as a keyword)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            f = node.func
            if (f.attr == "get" and ast.unparse(f.value) == "os.environ") or ast.unparse(f) == "os.getenv":
                out.add(node.args[0].value)
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ" \
                and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
            out.add(node.slice.value)
    return {n for n in out if re.match(r"(SIMGPU|MOCKGPU)", n)}


def test_no_module_reads_one_of_our_variables_but_through_settings():
    found = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            rel = str(path.relative_to(ROOT))
            if rel == "simgpu/settings.py":
                continue
            reads = _environ_reads(ast.parse(path.read_text())) - DIRECT.get(rel, set())
            if reads:
                found[rel] = reads
    assert not found, found


@pytest.mark.parametrize(("name", "text", "value"), [
    ("SIMGPU_JIT", "0", "off"), ("SIMGPU_JIT", "off", "off"), ("SIMGPU_JIT", "Eager", "eager"),
    ("SIMGPU_JIT", "1", "hot"), ("SIMGPU_JIT", " ", "hot"), ("SIMGPU_JIT_OPT", "2,3", (2, 3)),
    ("SIMGPU_JIT_CACHE", "off", None), ("SIMGPU_JIT_CACHE", "/x/jit", Path("/x/jit")),
    ("MOCKGPU", "0", False), ("MOCKGPU", "1", True), ("SIMGPU_X86_VECTOR", "0", False),
    ("SIMGPU_X86_VECTOR", "", True), ("MOCKGPU_DEVICES", "6", 6), ("SIMGPU_WATCHDOG_S", "0.5", 0.5),
])
def test_values_parse_as_declared(name, text, value):
    assert settings.get(name, {name: text}) == value


@pytest.mark.parametrize(("name", "text"), [
    ("SIMGPU_JIT", "sometimes"), ("SIMGPU_JIT_BACKGROUND", "later"), ("SIMGPU_JIT_OPT", "2"),
    ("MOCKGPU_DEVICES", "two"), ("SIMGPU_WATCHDOG_S", "half a second"), ("SIMGPU_TRACE_MAX_RECORD", "1e6"),
])
def test_a_bad_value_is_an_error_naming_the_variable_and_what_it_takes(name, text):
    takes = re.escape(settings.SETTINGS[name].takes)
    with pytest.raises(ValueError, match=f"^{name}={re.escape(repr(text))}: give {takes}"):
        settings.get(name, {name: text})


def test_a_setting_is_read_when_used(monkeypatch):
    monkeypatch.setenv("SIMGPU_DEBUG", "2")
    assert settings.get("SIMGPU_DEBUG") == 2
    monkeypatch.setenv("SIMGPU_DEBUG", "0")
    assert settings.get("SIMGPU_DEBUG") == 0


def test_one_cache_directory_rule(monkeypatch, tmp_path):
    monkeypatch.delenv("SIMGPU_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert settings.cache_root() == tmp_path / "xdg" / "simgpu"
    monkeypatch.setenv("SIMGPU_CACHE_DIR", str(tmp_path / "mine"))
    assert settings.cache_root() == tmp_path / "mine"
    from compiler import cache
    from simgpu.shader.jit import compile as jc
    monkeypatch.delenv("SIMGPU_JIT_CACHE", raising=False)
    assert cache.directory() == tmp_path / "mine" and jc.cache_dir() == tmp_path / "mine" / "jit"
