"""Native pieces built with the system C compiler: the LD_PRELOAD interposer of `simgpu run` (mockgpu/csrc/preload.c)
and, for tests, C programs written against <linux/kfd_ioctl.h>.

Builds go to a cache directory ($SIMGPU_CACHE_DIR, else $XDG_CACHE_HOME/simgpu, else ~/.cache/simgpu), named after a
hash of the source, the flags and the compiler, so a changed source rebuilds and an unchanged one is reused -- only
if a manifest beside it (a simgpu.diskcache entry: its SHA-256 under that name, signed with the user's secret) vouches
for its bytes and the directory is the user's own: a planted library is rebuilt over, never LD_PRELOADed.
`make setup` builds the interposer ahead of time (`python -m mockgpu.native`); otherwise the first `simgpu run`
does. Without a C compiler the error says which one was looked for and how to install one.

    python -m mockgpu.native            # build the interposer, print its path
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import hmac
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mockgpu import localpci_wire, protocol
from simgpu import diskcache, settings

CSRC = Path(__file__).with_name("csrc")
PRELOAD_SOURCE = CSRC / "preload.c"
SPINWAIT_SOURCE = CSRC / "spinwait.c"  # linked into the interposer: a thread spinning on the GPU gives up the CPU
# Linked into the interposer: what `simgpu run --am` adds to a client (each idle unless its variable is set)
AM_CLIENT_SOURCES = (CSRC / "sigchain.c", CSRC / "hostmem.c", CSRC / "pyhook.c", CSRC / "localpci.c",
                     CSRC / "x86mov.c")
X86MOV_SOURCE = CSRC / "x86mov.c"  # the BAR trap's decoder of x86 moves


class BuildError(RuntimeError):
    """No C compiler, or the compiler refused the source."""


def cache_dir() -> Path:
    """Where built libraries and programs are kept ($SIMGPU_CACHE_DIR, the kernel cache's directory variable:
    SIMGPU_CACHE is the kernel cache's on/off switch, and SIMGPU_CACHE=0 put builds in a directory ./0). A
    directory simgpu.diskcache refuses (someone else's, or writable by others: a library planted there would be
    LD_PRELOADed into clients) is replaced, after one warning, by a private one of this process's."""
    return diskcache.directory(str(settings.cache_root())) or _private_dir()


@functools.cache
def _private_dir() -> Path:
    """A directory only this process uses (mode 0700), removed when it exits: builds without a trusted cache."""
    path = Path(tempfile.mkdtemp(prefix="simgpu-build-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
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
    (reused when up to date). The headers of mockgpu/csrc are on the include path, and their text is part of the
    build's identity (a changed header rebuilds)."""
    sources = source if isinstance(source, tuple) else (source,)
    texts = [s if isinstance(s, str) and "\n" in s else Path(s).read_text() for s in sources]
    headers = [h.read_text() for h in sorted(CSRC.glob("*.h"))]
    flags = [*flags, f"-I{CSRC}"]
    cc = compiler()
    key = chr(0).join([*texts, *headers, cc, *flags, str(shared)])
    ident = f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    d = cache_dir()
    out = d / f"{ident}{'.so' if shared else ''}"
    if _verified(out, ident):
        return out
    srcs = []
    for text in texts:
        fd, src = tempfile.mkstemp(dir=d, prefix=f".{ident}.", suffix=".c")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        srcs.append(src)
    tmp = f"{srcs[0][:-2]}.out"
    cmd = [cc, *(["-shared", "-fPIC"] if shared else []), "-O2", "-Wall", "-o", tmp, *srcs, *flags]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise BuildError(f"{' '.join(cmd)} failed:\n{r.stderr.strip()}")
        os.chmod(tmp, 0o755)  # not the umask's: a group-writable build would be refused at its next use
        os.replace(tmp, out)  # atomic: concurrent builders (pytest-xdist workers) never see half a file
        for i, src in enumerate(srcs):  # the sources beside it, to read
            os.replace(src, d / f"{ident}{f'-{i}' if i else ''}.c")
    finally:
        for leftover in (*srcs, tmp):
            Path(leftover).unlink(missing_ok=True)
    diskcache.store(_manifest(out), ident, {"sha256": hashlib.sha256(out.read_bytes()).digest()})
    return out


def _manifest(out: Path) -> Path:
    """The diskcache entry that vouches for a built file: its SHA-256, under the build's key."""
    return out.with_name(f"{out.name}.msgpack")


def _verified(out: Path, ident: str) -> bool:
    """Whether `out` is what this user's processes built for `ident`: a trusted file (simgpu.diskcache.read) whose
    digest is the one its manifest records. Nobody else can swap it afterwards: the directory is the user's own."""
    entry = diskcache.load(_manifest(out), ident)
    if entry is None:
        return False
    data = diskcache.read(out)
    return data is not None and hmac.compare_digest(hashlib.sha256(data).digest(), entry.get("sha256", b""))


def build_preload() -> Path:
    """The LD_PRELOAD interposer of `simgpu run`, built if needed."""
    flags = ["-U_FORTIFY_SOURCE", "-fvisibility=hidden", "-ldl", "-lpthread", *protocol.c_definitions(),
             *localpci_wire.c_definitions()]
    return build((PRELOAD_SOURCE, SPINWAIT_SOURCE, *AM_CLIENT_SOURCES), "libsimgpu-preload", flags, shared=True)


def build_x86mov() -> Path:
    """The BAR trap's x86 move decoder alone, as a shared library (its tests call it through ctypes)."""
    return build(X86MOV_SOURCE, "libsimgpu-x86mov", ["-fvisibility=default"], shared=True)


if __name__ == "__main__":
    try:
        print(build_preload())
    except BuildError as e:
        sys.exit(f"mockgpu.native: {e}")
