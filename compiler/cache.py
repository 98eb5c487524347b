"""The kernel cache: compiled programs by a structural key (the linearized IR's text, the backend's
fingerprint and target), in memory and on disk, so a second process running the same program compiles
nothing. Proofs are cached with the program: an entry exists only for a kernel whose proof passed (or
that was compiled without SIMGPU_CHECK_OOB; the flag is part of the key).

Disk: simgpu's cache directory (simgpu.settings.cache_root), one msgpack file per kernel under
kernels/<fingerprint>/: an entry of simgpu.diskcache, carrying its key and an HMAC with the user's secret, so a
file planted, altered or copied over another key's is never used (the kernel is compiled afresh and the entry
rewritten); nor is one whose binary its device refuses to load (compiler.realize compiles it afresh).
SIMGPU_CACHE=0 turns both off. Entries are written to a temporary name and renamed, so concurrent processes (pytest
-n) never read half a file.
"""

from __future__ import annotations

import hashlib
import pathlib

import simgpu.diskcache as diskcache
import simgpu.settings as settings

_memory: dict[str, dict] = {}


def enabled() -> bool:
    """Whether caching is on (SIMGPU_CACHE, default 1)."""
    return bool(settings.get("SIMGPU_CACHE"))


def directory() -> pathlib.Path:
    """Where cached kernels live on disk."""
    return settings.cache_root()


def key(fingerprint: str, text: str, proved: bool) -> str:
    """The cache key of a kernel (hex)."""
    return hashlib.sha256(f"{fingerprint}\n{int(proved)}\n{text}".encode()).hexdigest()


def _path(fingerprint: str, k: str) -> pathlib.Path | None:
    """The entry's file, if its directory is trusted (simgpu.diskcache; else one warning and no disk cache)."""
    d = diskcache.directory(directory(), "kernels", fingerprint)
    return None if d is None else d / f"{k}.msgpack"


def get(fingerprint: str, k: str) -> dict | None:
    """The cached entry ({'binary', 'name', 'proof_s', ...}) or None. A disk entry counts only if it verifies as
    written by this user under key `k` (simgpu.diskcache): anything else is compiled afresh and overwritten (and so
    is an entry whose binary the device refuses to load: compiler.realize)."""
    if not enabled():
        return None
    if k in _memory:
        return _memory[k]
    path = _path(fingerprint, k)
    entry = None if path is None else diskcache.load(path, k)
    if entry is None or not isinstance(entry.get("binary"), bytes) or not isinstance(entry.get("name"), str):
        return None
    _memory[k] = entry
    return entry


def put(fingerprint: str, k: str, entry: dict) -> None:
    """Remember an entry in memory and on disk (a failure to write is not an error: the cache is optional)."""
    if not enabled():
        return
    _memory[k] = entry
    path = _path(fingerprint, k)
    if path is not None:
        diskcache.store(path, k, entry)


def clear_memory() -> None:
    """Forget the in-memory entries (tests of the disk cache)."""
    _memory.clear()
