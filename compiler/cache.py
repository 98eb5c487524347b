"""The kernel cache: compiled programs by a structural key (the linearized IR's text, the backend's
fingerprint and target), in memory and on disk, so a second process running the same program compiles
nothing. Proofs are cached with the program: an entry exists only for a kernel whose proof passed (or
that was compiled without SIMGPU_CHECK_OOB; the flag is part of the key).

Disk: $SIMGPU_CACHE_DIR or ~/.cache/simgpu, one msgpack file per kernel under kernels/<fingerprint>/.
SIMGPU_CACHE=0 turns both off. Files are written to a temporary name and renamed, so concurrent processes
(pytest -n) never read half a file.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import tempfile

import msgpack

from compiler.helpers import getenv

_memory: dict[str, dict] = {}


def enabled() -> bool:
    """Whether caching is on (SIMGPU_CACHE, default 1)."""
    return bool(getenv("SIMGPU_CACHE", 1))


def directory() -> pathlib.Path:
    """Where cached kernels live on disk."""
    return pathlib.Path(os.environ.get("SIMGPU_CACHE_DIR") or pathlib.Path.home() / ".cache" / "simgpu")


def key(fingerprint: str, text: str, proved: bool) -> str:
    """The cache key of a kernel (hex)."""
    return hashlib.sha256(f"{fingerprint}\n{int(proved)}\n{text}".encode()).hexdigest()


def _path(fingerprint: str, k: str) -> pathlib.Path:
    return directory() / "kernels" / fingerprint / f"{k}.msgpack"


def get(fingerprint: str, k: str) -> dict | None:
    """The cached entry ({'binary', 'name', 'proof_s', ...}) or None."""
    if not enabled():
        return None
    if k in _memory:
        return _memory[k]
    try:
        entry = msgpack.unpackb(_path(fingerprint, k).read_bytes(), raw=False)
    except (OSError, ValueError, msgpack.exceptions.ExtraData):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("binary"), bytes):
        return None  # a file we did not write: ignore it
    _memory[k] = entry
    return entry


def put(fingerprint: str, k: str, entry: dict) -> None:
    """Remember an entry in memory and on disk (a failure to write is not an error: the cache is optional)."""
    if not enabled():
        return
    _memory[k] = entry
    path = _path(fingerprint, k)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(msgpack.packb(entry, use_bin_type=True))
        os.replace(tmp, path)
    except OSError:
        pass


def clear_memory() -> None:
    """Forget the in-memory entries (tests of the disk cache)."""
    _memory.clear()
