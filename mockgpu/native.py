"""Native pieces built with the system C compiler: the LD_PRELOAD interposer of `simgpu run` (mockgpu/csrc/preload.c)
and, for tests, C programs written against <linux/kfd_ioctl.h>.

Builds go to a cache directory ($SIMGPU_CACHE_DIR, else $XDG_CACHE_HOME/simgpu, else ~/.cache/simgpu), named after a
hash of the source, the flags and the compiler, so a changed source rebuilds and an unchanged one is reused.
`make setup` builds the interposer ahead of time (`python -m mockgpu.native`); otherwise the first `simgpu run`
does. Without a C compiler the error says which one was looked for and how to install one.

    python -m mockgpu.native            # build the interposer, print its path
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mockgpu import protocol

CSRC = Path(__file__).with_name("csrc")
PRELOAD_SOURCE = CSRC / "preload.c"
# Linked into the interposer: what `simgpu run --am` adds to a client (each idle unless its variable is set)
AM_CLIENT_SOURCES = (CSRC / "hostmem.c", CSRC / "pyhook.c")


class BuildError(RuntimeError):
    """No C compiler, or the compiler refused the source."""


def cache_dir() -> Path:
    """Where built libraries and programs are kept ($SIMGPU_CACHE_DIR, the kernel cache's directory variable:
    SIMGPU_CACHE is the kernel cache's on/off switch, and SIMGPU_CACHE=0 put builds in a directory ./0)."""
    base = os.environ.get("SIMGPU_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "simgpu")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def compiler() -> str:
    """The system C compiler ($CC, else cc, gcc or clang on PATH)."""
    for cc in filter(None, (os.environ.get("CC"), "cc", "gcc", "clang")):
        path = shutil.which(cc.split()[0])
        if path:
            return path
    raise BuildError("no C compiler found ($CC, cc, gcc, clang): `simgpu run` builds its LD_PRELOAD interposer with "
                     "one. Install one (Debian/Ubuntu: apt-get install gcc) or set CC.")


def build(source: Path | str | tuple[Path, ...], name: str, flags: list[str], shared: bool = False) -> Path:
    """Compile `source` (a file, C text, or several files linked together) into the cache; the path of the result
    (reused when up to date)."""
    sources = source if isinstance(source, tuple) else (source,)
    texts = [s if isinstance(s, str) and "\n" in s else Path(s).read_text() for s in sources]
    cc = compiler()
    key = hashlib.sha256("\0".join([*texts, cc, *flags, str(shared)]).encode()).hexdigest()[:16]
    out = cache_dir() / f"{name}-{key}{'.so' if shared else ''}"
    if out.exists():
        return out
    srcs = [cache_dir() / f"{name}-{key}{f'-{i}' if i else ''}.c" for i in range(len(texts))]
    for src, text in zip(srcs, texts, strict=True):
        src.write_text(text)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    cmd = [cc, *(["-shared", "-fPIC"] if shared else []), "-O2", "-Wall", "-o", str(tmp), *map(str, srcs), *flags]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed:\n{r.stderr.strip()}")
    os.replace(tmp, out)  # atomic: concurrent builders (pytest-xdist workers) never see half a file
    return out


def build_preload() -> Path:
    """The LD_PRELOAD interposer of `simgpu run`, built if needed."""
    flags = ["-U_FORTIFY_SOURCE", "-fvisibility=hidden", "-ldl", "-lpthread", *protocol.c_definitions()]
    return build((PRELOAD_SOURCE, *AM_CLIENT_SOURCES), "libsimgpu-preload", flags, shared=True)


if __name__ == "__main__":
    try:
        print(build_preload())
    except BuildError as e:
        sys.exit(f"mockgpu.native: {e}")
