"""Every environment variable simgpu reads, declared once: its name, type, default and meaning.

A setting is read when it is used, not once at import: tests change settings with monkeypatch, and `simgpu run`
sets them for the programs it starts. The text is parsed here (once per distinct value) and a value that does not
parse is a ValueError naming the variable and what it takes. `python -m tools.gen_settings_doc` writes the table in
docs/settings.md from SETTINGS; a test keeps the two in step.

Variables that are not simgpu's own settings are read where they are used: those of the platform (HOME,
XDG_CACHE_HOME, XDG_CONFIG_HOME, CC, LD_PRELOAD, PYTEST_XDIST_WORKER), and the handshake `simgpu run` gives the
programs it starts (SIMGPU_SERVER, SIMGPU_SYSFS, SIMGPU_HOSTMAP, SIMGPU_LOCALPCI, SIMGPU_AM_CLIENT,
SIMGPU_AM_CLIENT_FIRMWARE, SIMGPU_AM_FIRMWARE_INSTALL), which the C interposer and standard-library-only scripts read
in the client's process, where simgpu may not be importable. The handshake is listed in INTERNAL for the docs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = ["INTERNAL", "SETTINGS", "Setting", "cache_root", "get"]


def _flag(text: str) -> bool:
    return text not in ("", "0")


def _integer(text: str) -> int:
    return int(text)


def _number(text: str) -> float:
    return float(text)


def _text(text: str) -> str:
    return text


def _jit_mode(text: str) -> str:
    v = text.lower()
    if v in ("0", "off", "no", "false"):
        return "off"
    if v in ("1", "on", "yes", "true", "hot"):
        return "hot"
    if v == "eager":
        return "eager"
    raise ValueError("0/off, eager, or 1/hot")


def _background(text: str) -> str:
    v = text.lower()
    if v not in ("auto", "now", "after"):
        raise ValueError("auto, now or after")
    return v


def _jit_opt(text: str) -> tuple[int, int]:
    level, cg = (int(x) for x in text.split(","))
    return level, cg


def _arches(text: str) -> tuple[str, ...]:
    """Architecture names (gfx<hex>), comma-separated; which ones exist is simgpu.hw.chips's to say (MockOS)."""
    names = tuple(a.strip().lower() for a in text.split(","))
    if not all(len(a) > 3 and a.startswith("gfx") and all(c in "0123456789abcdef" for c in a[3:]) for a in names):
        raise ValueError("architecture names like gfx1201, comma-separated (one per device, or one for all)")
    return names


def _optional_path(text: str) -> Path | None:
    """A directory, or off/0/none for none."""
    return None if text.lower() in ("off", "0", "none") else Path(text)


class Setting(NamedTuple):
    """One environment variable: `parse` turns its stripped, non-empty text into the value; unset or blank
    gives `default`. `takes` says what a valid value looks like (for the docs and the error). (A NamedTuple, not
    a dataclass: the pytest plugin imports this module in every pytest session, and dataclasses costs 15 ms.)"""

    name: str
    parse: Callable[[str], object]
    default: object
    takes: str
    meaning: str

    def get(self, environ: Mapping[str, str] | None = None):
        """The setting's value in `environ` (default: this process's environment, read now)."""
        text = (os.environ if environ is None else environ).get(self.name, "").strip()
        return _parse(self.name, text) if text else self.default


_DECLARED: tuple[Setting, ...] = (
    # ---- device selection and the simulated GPUs (mockgpu) ----
    Setting("MOCKGPU", _flag, False, "0 or 1",
            "1: the runtime drives the simulated GPU (mockgpu) instead of /dev/kfd"),
    Setting("MOCKGPU_DEVICES", _integer, 1, "1 to 64", "how many simulated GPUs MockOS creates"),
    Setting("SIMGPU_ARCH", _arches, ("gfx1100",), "gfx1100, gfx1201, gfx942, comma-separated",
            "the architecture of the simulated GPUs: one for all, or one per device (mixed)"),
    Setting("MOCKGPU_VRAM", _integer, None, "bytes", "VRAM per simulated GPU (unset: mockgpu's default, 8 GiB)"),
    Setting("MOCKGPU_WATCHDOG", _integer, 0, "wave-instructions",
            "a dispatch's instruction budget (0: the default, 2^32); over it the GPU faults and resets the queue"),
    Setting("SIMGPU_WATCHDOG_S", _number, 0.0, "seconds",
            "opt-in wall-clock limit of a dispatch in host seconds (0 or unset: none)"),
    Setting("MOCKGPU_LAZY_DOORBELLS", _integer, 0, "0 or 1",
            "1: doorbells only record the write pointer; the GPUs run when a wait needs them"),
    Setting("SIMGPU_AM_FIRMWARE", _text, "", "directory",
            "firmware files the AM PCI function serves (unset: the synthetic gfx1100 set)"),
    Setting("SIMGPU_PROGRESS", _flag, True, "0 or 1", "0: no progress bar for long dispatches on a terminal"),
    Setting("SIMGPU_SANITIZE", _text, "", "comma-separated checks",
            "sanitizers on every simulated GPU (memcheck, initcheck, racecheck, hazards, or all)"),
    # ---- the shader engine's JIT tier ----
    Setting("SIMGPU_JIT", _jit_mode, "hot", "0/off, eager, 1/hot",
            "the JIT tier: off, compile every kernel at its first dispatch, or compile kernels that get hot"),
    Setting("SIMGPU_JIT_HOT", _number, 20.0, "milliseconds", "interpreter time after which a kernel is hot"),
    Setting("SIMGPU_JIT_BACKGROUND", _background, "auto", "auto, now, after",
            "compile a hot kernel beside its launch (now), after a launch of it from its second on (after), or beside "
            "it when that pays, else as after (auto)"),
    Setting("SIMGPU_JIT_CPU", _text, "", "LLVM CPU[:features]",
            "the CPU the JIT compiles for (unset: the host's), e.g. haswell for an AVX2-only profile"),
    Setting("SIMGPU_JIT_CACHE", _optional_path, "", "directory or off",
            "the JIT's disk cache (unset: jit/ in simgpu's cache directory)"),
    Setting("SIMGPU_JIT_OPT", _jit_opt, (-1, 2), "level,codegen",
            "LLVM optimisation of JIT code: -1 runs SROA, instcombine and simplifycfg only"),
    # ---- the compiler ----
    Setting("SIMGPU_BACKEND", _text, "", "llvm, native, x86",
            "the compiler backend for a device kind (unset: the kind's first)"),
    Setting("SIMGPU_DEBUG", _integer, 0, "0 to 3", "1 prints launches, 2 adds the kernel IR, 3 the assembly"),
    Setting("SIMGPU_CHECK_OOB", _integer, 0, "0 or 1",
            "1: prove every load and store in bounds with z3 before compiling"),
    Setting("SIMGPU_PROOF_LOG", _text, "", "file", "append each kernel's bounds proofs to this file"),
    Setting("SIMGPU_X86_VECTOR", _flag, True, "0 or 1", "0: the x86 backend emits scalar code only"),
    Setting("SIMGPU_CACHE", _integer, 1, "0 or 1", "0: the compiler's kernel cache (memory and disk) is off"),
    Setting("SIMGPU_CACHE_DIR", _text, "", "directory",
            "simgpu's cache directory (unset: $XDG_CACHE_HOME/simgpu, else ~/.cache/simgpu)"),
    Setting("SIMGPU_CACHE_KEY", _text, "", "file",
            "the per-user secret that signs cache entries (unset: simgpu/cache-key in $XDG_CONFIG_HOME or ~/.config)"),
    # ---- the runtime and the CPU device ----
    Setting("SIMGPU_CPU_WATCHDOG", _number, 0.0, "seconds", "wall-clock limit of a CPU-device launch (0: none)"),
    Setting("SIMGPU_PROFILE", _flag, False, "0 or 1", "1: every device profiles its launches; a table at exit"),
    Setting("SIMGPU_SQTT", _flag, False, "0 or 1", "1: profile with thread traces (per-wave tracks)"),
    Setting("SIMGPU_PROFILE_OUT", _text, "", "file", "write the profile as a Perfetto trace to this file"),
    Setting("SIMGPU_STATS", _text, "", "file", "append per-dispatch counters to this file (simgpu stats)"),
    Setting("SIMGPU_PROFILE_HOST", _text, "", "file",
            "`simgpu run`: write the server's own time (round trips, CPU by component) to this file"),
    # ---- traces ----
    Setting("SIMGPU_TRACE", _text, "", "file", "record every call across the OS seam to this trace file"),
    Setting("SIMGPU_TRACE_MAX_RECORD", _integer, 0, "bytes",
            "the largest record a trace reader accepts (0 or unset: traces' default, 64 MiB)"),
)

SETTINGS: dict[str, Setting] = {s.name: s for s in _DECLARED}

INTERNAL: dict[str, str] = {
    "SIMGPU_SERVER": "`simgpu run` -> interposer: the server's socket",
    "SIMGPU_SYSFS": "`simgpu run` -> interposer: the directory served as the GPUs' sysfs",
    "SIMGPU_SERVER_STARTING": "`simgpu run` -> interposer: the program started before the server listens; wait for"
                              " its socket (while the run's directory exists, at most 60 s)",
    "SIMGPU_HOSTMAP": "`simgpu run --am` -> interposer: the host-mapping service's socket",
    "SIMGPU_LOCALPCI": "`simgpu run --am` -> interposer: the local-PCI service's socket",
    "SIMGPU_PCI_DOMAIN": "`simgpu run --am` -> interposer: the run's PCI domain (hex), where its GPUs are",
    "SIMGPU_AM_CLIENT": "`simgpu run --am` -> interposer: the script run when a program imports tinygrad",
    "SIMGPU_AM_CLIENT_FIRMWARE": "`simgpu run --am` -> that script: the synthetic firmware's directory",
    "SIMGPU_AM_FIRMWARE_INSTALL": "tinygrad's own AM mock with simgpu's firmware (wiring/am_site)",
}


@functools.lru_cache(maxsize=256)
def _parse(name: str, text: str):
    s = SETTINGS[name]
    try:
        return s.parse(text)
    except ValueError:
        raise ValueError(f"{name}={text!r}: give {s.takes} ({s.meaning})") from None


def get(name: str, environ: Mapping[str, str] | None = None):
    """The value of the setting `name` now (KeyError for a name that is not a setting)."""
    return SETTINGS[name].get(environ)


def cache_root() -> Path:
    """simgpu's cache directory: $SIMGPU_CACHE_DIR, else $XDG_CACHE_HOME/simgpu, else ~/.cache/simgpu."""
    given = get("SIMGPU_CACHE_DIR")
    if given:
        return Path(given)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "simgpu"
