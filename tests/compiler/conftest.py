"""The compiler's tests run on the device the session selects: `--mockgpu`/MOCKGPU=1 (the project's addopts) the
simulated gfx1100, a real GPU otherwise; the choice is printed in the header. Every kernel is proven in
bounds (SIMGPU_CHECK_OOB=1) unless the environment says otherwise.

The `backend` fixture runs a test once per registered backend (compiler.backend.available()), making that
backend and its device kind the defaults inside the test: the ops suite is written once for every backend. The
GPU backends run in reverse order of preference (the default last), and every kernel a case launches is
checked against the other GPU backend on the same inputs (tests/support/differential.py; the first run of a
case records, the second compares, or runs the other backend itself when the first ran elsewhere).

A module that asks for `gpu_arch` as well (`pytestmark = pytest.mark.usefixtures("gpu_arch")`) also runs on a
simulated gfx1201 (AMD:0 for that test), with the backends that compile for it (the LLVM backend; the native one
is gfx1100's only): a representative part of the suite on the second architecture, written once.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("SIMGPU_CHECK_OOB", "1")

# Each hypothesis example compiles and runs kernels: few examples, no deadline, and the same examples on every
# run (SIMGPU_HYPOTHESIS=explore draws new ones).
settings.register_profile("compiler", max_examples=12, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("explore", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("explore" if os.environ.get("SIMGPU_HYPOTHESIS") == "explore" else "compiler")


def pytest_report_header(config):
    return f"compiler tests: MOCKGPU={os.environ.get('MOCKGPU')} SIMGPU_CHECK_OOB={os.environ.get('SIMGPU_CHECK_OOB')}"


DEFAULT_ARCH, OTHER_ARCHS = "gfx1100", ("gfx1201",)


def _backends():
    from compiler import backend
    return list(reversed(backend.available()))


def _partner(name: str, arch: str = DEFAULT_ARCH) -> str | None:
    """The backend a case's kernels are compared with: another GPU backend of the same device kind compiling for the
    architecture (none on gfx1201: the LLVM backend alone compiles for it; the case's own checks stand)."""
    from compiler import backend as backends
    kind = backends.get(name).device_kind
    others = [n for n in backends.available(kind) if n != name and backends.REGISTRY[n].compiles_for(arch)]
    return others[0] if kind == "AMD" and others else None


def pytest_generate_tests(metafunc):
    """`backend`: every registered backend (module docstring). With `gpu_arch` too: gfx1100 with every backend, and
    each other architecture with the AMD backends that compile for it (pairs given to the two fixtures)."""
    named = {n for m in metafunc.definition.iter_markers("parametrize") for n in _names(m.args[0])}
    if "backend" not in metafunc.fixturenames:
        if "gpu_arch" in metafunc.fixturenames and "gpu_arch" not in named:  # (a test may name its own)
            metafunc.parametrize("gpu_arch", (DEFAULT_ARCH, *OTHER_ARCHS), indirect=True)
        return
    if "gpu_arch" not in metafunc.fixturenames:
        metafunc.parametrize("backend", _backends(), indirect=True)
        return
    from compiler import backend as backends
    extra = [(b, a) for a in OTHER_ARCHS for b in _backends()
             if backends.REGISTRY[b].device_kind == "AMD" and backends.REGISTRY[b].compiles_for(a)]
    pairs = [(b, DEFAULT_ARCH) for b in _backends()] + extra
    metafunc.parametrize(("backend", "gpu_arch"), pairs, indirect=True, ids=[f"{b}-{a}" for b, a in pairs])


def _names(argnames) -> list[str]:
    return [n.strip() for n in argnames.split(",")] if isinstance(argnames, str) else list(argnames)


@pytest.fixture(scope="session")
def _arch_devices():
    """The devices of the other architectures, one per architecture for the session (opened on first use, closed
    at its end): opening and closing one per test cost a garbage collection each, most of a test's time in a full
    run (0.3-1 s a case, 405 s over the gfx1201 cases)."""
    devices: dict = {}
    yield devices
    for adapter in devices.values():
        adapter.rt.close()


@pytest.fixture
def gpu_arch(request, _arch_devices):
    """The simulated AMD GPU's architecture for the test: gfx1100 (the session's device), or another one attached
    as AMD:0 for this test only (a MockOS of that architecture, kept for the session's other tests of it)."""
    arch = getattr(request, "param", DEFAULT_ARCH)
    if arch == DEFAULT_ARCH:
        yield arch
        return
    if os.environ.get("MOCKGPU", "") in ("", "0"):
        pytest.skip(f"needs the simulator's {arch}")
    import runtime
    from compiler import device
    from mockgpu import MockOS
    if arch not in _arch_devices:
        rt = runtime.Device("AMD:0", os=MockOS(devices=1, vram_size=1 << 28, arch=arch))
        _arch_devices[arch] = device.DeviceAdapter("AMD:0", rt=rt)
    saved = dict(device._OPEN)
    device._OPEN.clear()
    device.attach("AMD:0", _arch_devices[arch])
    try:
        yield arch
    finally:
        device.release_unreferenced()
        device._OPEN.clear()
        device._OPEN.update(saved)


def pytest_collection_modifyitems(items):
    """A case's runs with each backend one after the other (pytest orders a function's cases by the first
    parameter, `backend` here: every x86 case, then every llvm case...): the second run then compares with the
    first's records (tests/support/differential.py) instead of running the other backend again."""
    groups: dict[tuple, list] = {}
    for item in items:
        params = getattr(item, "callspec", None) and item.callspec.params
        key = (id(item.parent), item.originalname, tuple((k, id(v)) for k, v in params.items() if k != "backend")) \
            if params and "backend" in params else (id(item),)
        groups.setdefault(key, []).append(item)
    items[:] = [item for group in groups.values() for item in group]


_NEXT: list = [None]  # the test that runs after the current one in this process (None: none, or not known)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _NEXT[0] = nextitem
    yield


def _next_is_with(request, partner: str | None) -> bool:
    """Whether the next test is this case with the partner backend (the same function and other parameters)."""
    nxt, me = _NEXT[0], request.node
    if partner is None or nxt is None or not hasattr(nxt, "callspec") or nxt.parent is not me.parent \
            or nxt.originalname != me.originalname:
        return False
    mine, theirs = me.callspec.params, nxt.callspec.params
    return theirs.get("backend") == partner and mine.keys() == theirs.keys() and \
        all(theirs[k] is v for k, v in mine.items() if k != "backend")


@pytest.fixture
def backend(request):
    """Compile with each registered backend in turn (and default to its device kind); kernels are checked
    against the partner backend (module docstring): when the next test is the same case with the partner, by
    that test's own launches. With `gpu_arch`, that architecture's device is AMD:0 first."""
    from compiler import backend as backends
    from compiler import device
    from tests.support import differential
    arch = request.getfixturevalue("gpu_arch") if "gpu_arch" in request.fixturenames else DEFAULT_ARCH
    be = backends.get(request.param)
    old = device.DEFAULT
    device.DEFAULT = be.device_kind
    partner = _partner(request.param, arch)
    try:
        with backends.using(request.param), \
                differential.watch(request.param, partner, defer=_next_is_with(request, partner)):
            yield request.param
    finally:
        device.DEFAULT = old


def pytest_sessionfinish(session):
    """Launches deferred to a next test that did not run (the end of a worker's share) are checked now."""
    from tests.support import differential
    differential.flush()


def pytest_terminal_summary(terminalreporter):
    from tests.support import differential
    if differential.stats["compared"]:
        terminalreporter.write_line(f"differential: {differential.stats['compared']} kernel launches compared "
                                    f"between backends in {differential.stats['tests']} tests (this process)")
