"""Function-level imports of project modules (docs/design.md: "an import inside a function to break a cycle is a
design smell"): every one is listed here with its reason, so a new one fails this test until it is either moved to
the top of its module or given a reason.

Two kinds of reason. Start-up: a command, an optional driver or a backend's code generator loads what only it needs
when it runs (the CLI's subcommands, AM, the native and x86 code generators, the sanitizers, the codec). Cycle: the
imported module imports this one at its top, so the import waits until call time; these were the debt issue 30 named
(the JIT's lowering registry, the codec, the sanitizers, the engine; compiler and runtime) and none is left:
CYCLES_TODAY is 0 and may not rise. The imports at the top of the modules form no cycle either
(test_module_top_imports_form_no_cycle). (The Tensor mixins construct Tensors as type(self), and module functions
as the class of a tensor they are given.)
"""

import ast
import subprocess
import sys
from collections import defaultdict
from functools import cache
from graphlib import CycleError, TopologicalSorter

import pytest

from tests.wiring.test_imports import PACKAGES, ROOT, _module_name, imports_of

START = "start-up"
CYCLE = "cycle"
ALLOWED: dict[str, dict[str, str]] = {
    # ---- start-up: loaded when the function that needs it runs ----
    "simgpu": {"simgpu.gpu": START},  # `import simgpu` stays cheap for the runtime (module __getattr__)
    "simgpu.isa": {"simgpu.isa.codec": START},  # ... and so does `import simgpu.isa`: code objects need no codec
    "simgpu.gpu": {"simgpu.sanitize": START, "simgpu.sanitize.cpwrites": START},
    "simgpu.testbed": {"simgpu.sanitize": START},
    # `simgpu run` starts its program before the driver model is loaded, and the trace format needs only
    # mockgpu.devmem (every CLI parser loads it)
    "mockgpu": {"mockgpu.driver": START},
    "mockgpu.driver": {"simgpu.gpu": START, "simgpu.sanitize": START},
    "mockgpu.kfd_memory": {"simgpu.sanitize": START},
    "runtime.cpu.disasm": {"runtime.cpu.image": START, "simgpu.isa.objdump": START},
    # a backend's code generator, loaded when it first compiles (the registry imports every backend's module)
    "compiler.backend.llvm": {"compiler.backend.llvmir": START},
    "compiler.backend.native": {"compiler.backend.gfx11.target": START},
    "compiler.backend.x86.backend": {m: START for m in (
        "compiler.backend.x86.target", "compiler.backend.x86.vector", "runtime.cpu.disasm", "runtime.cpu.image")},
    "compiler.device": {"runtime": START, "runtime.cpu": START},
    "traces.cli": {m: START for m in ("traces.diff", "traces.export", "traces.replay", "traces.show")},
    "traces.replay": {"mockgpu": START, "traces.decode": START},
    "wiring.am_site.sitecustomize": {"simgpu.hw.ucode": START, "wiring.am_client": START},
    "wiring.cli": {m: START for m in (
        "runtime.cpu.disasm", "simgpu.isa.objdump", "traces.cli", "wiring.demo", "wiring.run", "wiring.stats")},
    "wiring.demo": {m: START for m in (
        "compiler.device", "compiler.examples", "compiler.samples", "runtime", "wiring.os_select")},
    "wiring.os_select": {"mockgpu": START, "traces.record": START, "wiring.stats": START},
    "wiring.pytest_plugin": {"runtime": START, "simgpu.sanitize": START},
    # ... and the profiler only for --profile; the profile's definitions (packets, counters) only to report one
    "wiring.run_observe": {m: START for m in (
        "simgpu.profile.dispatches", "runtime.profile", "runtime.profile_export")},
    # (the host profiler and the code objects' symbols, which bring GPU memory and numpy, after the program starts)
    "wiring.run": {m: START for m in (
        "mockgpu", "mockgpu.hostprofile", "mockgpu.localpci", "mockgpu.native", "mockgpu.pci", "mockgpu.remote_pci",
        "mockgpu.server", "mockgpu.symbols", "simgpu.hw.ucode", "simgpu.sanitize", "traces.record")},
    # `import runtime.uapi` (mockgpu, the interposer's build key) does not load the device, its queues and numpy
    "runtime": {m: START for m in (
        "runtime.device", "runtime.fault", "runtime.launch", "runtime.memory", "runtime.module", "runtime.os",
        "runtime.sanitize")},
    "runtime.device": {"runtime.am.driver": START},
    # the JIT's lowering of every instruction, loaded by a process's first compile (a server whose kernels never
    # get hot does not import it)
    "simgpu.shader.jit.build": {"simgpu.shader.jit.translate": START},
    # the engine's packages load their parts when asked: the JIT's compile worker imports jit.compile alone
    "simgpu.shader": {"simgpu.shader.dispatch": START, "simgpu.shader.engine": START},
    "simgpu.shader.jit": {"simgpu.shader.jit.tier": START},
    # ---- cycles (issue 30): none left; a new one is not added here but removed by restructuring ----
}
CYCLES_TODAY = 0  # (module, imported module) pairs marked CYCLE: none left (issue 30), and none may be added


@cache
def project_imports() -> dict[str, tuple[set[str], set[str]]]:
    """module -> (the project modules it imports at its top, those it imports inside a function). Imports under
    `if TYPE_CHECKING:` are neither: they never run."""
    out: dict[str, tuple[set[str], set[str]]] = defaultdict(lambda: (set(), set()))
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            module, source = _module_name(path), path.read_text()
            tree = ast.parse(source)
            inner, typing = _import_lines(tree)
            for line, name in imports_of(module, source, path.name == "__init__.py", tree):
                if name.split(".")[0] in PACKAGES and line not in typing:
                    out[module][line in inner].add(name)
    return out


def _import_lines(tree: ast.AST) -> tuple[set[int], set[int]]:
    """The lines of the imports inside a function, and of those under an `if` on TYPE_CHECKING, in one walk of the
    module (a walk of every function's subtree, nested ones again, made this file 4 CPU-s of the suite)."""
    inner, typing = set(), set()
    todo = [(tree, False, False)]
    while todo:
        node, in_function, in_typing = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if in_function:
                inner.add(node.lineno)
            if in_typing:
                typing.add(node.lineno)
        in_function = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        in_typing = in_typing or isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        todo += [(child, in_function, in_typing) for child in ast.iter_child_nodes(node)]
    return inner, typing


def function_level_imports() -> dict[str, set[str]]:
    """module -> the project modules it imports inside a function."""
    return {m: inner for m, (_, inner) in project_imports().items() if inner}


def test_every_function_level_import_has_a_reason():
    unlisted = {m: sorted(n - set(ALLOWED.get(m, {}))) for m, n in function_level_imports().items()}
    assert not {m: n for m, n in unlisted.items() if n}, \
        "import at the top of the module, or add it to ALLOWED with its reason"


def test_the_list_has_no_stale_entries():
    found = function_level_imports()
    stale = {m: sorted(set(n) - found.get(m, set())) for m, n in ALLOWED.items()}
    assert not {m: n for m, n in stale.items() if n}, "remove what is no longer imported inside a function"


def test_cycles_only_fall():
    assert sum(r == CYCLE for n in ALLOWED.values() for r in n.values()) <= CYCLES_TODAY


def test_module_top_imports_form_no_cycle():
    """No module reaches itself through the imports at the tops of modules (a package's __init__ importing its
    submodules is not counted as their importing it back: Python runs it first either way)."""
    graph = {m: top for m, (top, _) in project_imports().items()}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as e:
        raise AssertionError(f"import cycle at module top: {' -> '.join(e.args[1])}") from None


# Processes the suite and its users start by the hundred, and what each must leave unloaded (the start-up imports
# above are what keeps them so): the JIT's compile worker (started again after a test that ended with a compile under
# way), every `simgpu` subcommand's parser (it loads the trace format), a `simgpu run` server before its first compile.
LIGHT_STARTS = {
    "jit-worker": ("from simgpu.shader.jit import remote", ("simgpu.shader.engine", "simgpu.shader.jit.tier")),
    "cli-parser": ("import wiring.cli, traces.cli", ("mockgpu.driver", "simgpu.shader.engine")),
    "server": ("import wiring.run, mockgpu.driver, mockgpu.server, mockgpu.session", ("simgpu.shader.jit.translate",)),
}


@pytest.mark.parametrize("start", sorted(LIGHT_STARTS))
def test_a_frequent_start_leaves_what_only_others_need_unloaded(start):
    imports, unloaded = LIGHT_STARTS[start]
    code = f"import sys\n{imports}\nprint(sorted(m for m in {unloaded!r} if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr
