"""How many of gfx1100's compute opcodes the semantics test suites execute and check.

    python -m tools.opcode_coverage [--list] [pytest args ...]

Runs the semantics suites (tests/simgpu/shader/test_sem_*.py: reference models written from the RDNA3
ISA pseudo-code, the LLVM constant-folding differential test, LLVM IR kernels checked against numpy, the
regression cases; each compares results) with this module as a pytest plugin, which records every opcode
the engine executes, and prints covered / total for the compute set. Other pytest arguments replace the
suite list.

The compute set is every mnemonic of the codec's tables (data/scalar.json, valu.json incl. its True16
entries, memory.json; encoding suffixes _e32/_e64/_dpp dropped) except the graphics-only ones: exports,
pixel interpolation (VINTERP, LDSDIR), sampling image instructions, BVH and GDS/GWS operations.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "simgpu", "isa", "data")
SUITES = "tests/simgpu/shader"
_LOG = "SIMGPU_OPCODE_LOG"  # directory the plugin writes each worker's executed opcodes to
GRAPHICS = re.compile(r"^(exp|v_interp_|lds_param_load|lds_direct_load|image_(sample|gather4|get_lod|msaa_load|bvh)|"
                      r"ds_gws_|ds_ordered_count|ds_(add|sub)_gs_reg_rtn|ds_bvh_stack)")
_SUFFIX = re.compile(r"_(e32|e64|dpp|e64_dpp|sdwa)$")


def base(name: str) -> str:
    """A mnemonic without its encoding suffix."""
    for _ in range(2):
        name = _SUFFIX.sub("", name)
    return name


def compute_set() -> set[str]:
    """Every compute mnemonic (without encoding suffix) of the codec's tables."""
    names: set[str] = set()
    with open(os.path.join(DATA, "scalar.json")) as f:
        scalar = json.load(f)
    for enc in ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM"):
        names |= {e["name"] for e in scalar[enc].values()}
    with open(os.path.join(DATA, "valu.json")) as f:
        valu = json.load(f)
    for key in ("ops", "ops16"):
        for entries in valu.get(key, {}).values():
            names |= {e["m"] for e in entries.values()}
    for side in valu["vopd"].values():
        names |= {e["m"] for e in side.values()}
    with open(os.path.join(DATA, "memory.json")) as f:
        memory = json.load(f)
    for entries in memory["ops"].values():
        names |= {e["m"] for e in entries.values()}
    return {base(n) for n in names if not GRAPHICS.match(base(n))}


# ---------------------------------------------------------------------------------------------- pytest plugin


def pytest_configure(config) -> None:
    """Record the opcodes every engine executes (workers included: each writes its own file)."""
    if not os.environ.get(_LOG):
        return
    from simgpu.shader.engine import ShaderEngine
    seen: set[str] = set()
    run = ShaderEngine.run

    def recording_run(self, *args, **kwargs):
        try:
            return run(self, *args, **kwargs)
        finally:  # instructions are decoded when first fetched: the decode cache lists what ran
            for _, entry in self.decoded.values():
                inst = entry[0]
                seen.add(inst.mnemonic)
                if inst.encoding == "VOPD":  # a dual instruction runs its Y half too
                    seen.add(inst.info["y"]["m"])
    ShaderEngine.run = recording_run
    config._simgpu_opcodes = seen


def pytest_unconfigure(config) -> None:
    """Write this process's recorded opcodes to the log directory."""
    seen = getattr(config, "_simgpu_opcodes", None)
    if seen is None:
        return
    with open(os.path.join(os.environ[_LOG], f"{os.getpid()}.txt"), "w") as f:
        f.write("\n".join(sorted(seen)))


# ---------------------------------------------------------------------------------------------- report


def main() -> None:
    """Run the suites under the plugin and print covered / total (with --list, the missing names)."""
    args = sys.argv[1:]
    show = "--list" in args
    args = [a for a in args if a != "--list"]
    with tempfile.TemporaryDirectory() as log:
        env = dict(os.environ, **{_LOG: log})
        suites = sorted(glob.glob(os.path.join(ROOT, SUITES, "test_sem_*.py")))
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "tools.opcode_coverage", *(args or ["-n", "2", *suites])]
        subprocess.run(cmd, cwd=ROOT, env=env, check=False)
        seen = set()
        for name in os.listdir(log):
            with open(os.path.join(log, name)) as f:
                seen |= {base(line) for line in f.read().split()}
    total = compute_set()
    covered = total & seen
    print(f"compute opcodes executed by the semantics suites: {len(covered)} / {len(total)} "
          f"({100 * len(covered) / len(total):.1f}%)")
    missing = sorted(total - seen)
    families: dict[str, list[str]] = {}
    for m in missing:
        families.setdefault(m.split("_")[0], []).append(m)
    for fam, ms in sorted(families.items()):
        print(f"  not executed, {fam}: {len(ms)}" + (": " + " ".join(ms) if show else ""))


if __name__ == "__main__":
    main()
