"""On-disk cache entries that are used only when verified: the one place the JIT's object cache, the compiler's
kernel cache and the interposer's build directory check what they read from disk.

Trust model. A cache directory (and every directory from the cache's root down to it) is used only if it is
owned by this user and not writable by group or others; an entry file likewise (and it must be a regular file,
not a symbolic link). Anything else is refused with one line on stderr (once per path and reason per process)
and the caller compiles afresh: a refused directory is neither read nor written.

An entry is a msgpack map that carries the key it was stored under and, as its last field, `hmac`: HMAC-SHA256
over every byte before that field, with a per-user secret kept outside every cache (`$SIMGPU_CACHE_KEY`, else
`$XDG_CONFIG_HOME/simgpu/cache-key`, else `~/.config/simgpu/cache-key`; 32 random bytes, mode 0600, created by
the first process that needs it). An entry whose tag does not verify, or whose key is not the one asked for,
is treated as absent: the caller compiles and overwrites it. So a file planted or altered by anyone without the
secret (another user, a copied or restored cache, a bit flip, an entry copied over another) is never used; the
secret's owner (the user's own processes) is trusted. The file stays plain msgpack, so tools read it as before.

Writes go to a temporary file in the same directory (mode 0600) renamed over the entry, so concurrent readers
(pytest-xdist workers, several `simgpu run` servers) see the old entry or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import sys
import tempfile
from pathlib import Path

import msgpack

from simgpu import settings

KEY_BYTES = 32
_TAG_FIELD = b"\xa4hmac\xc4\x20"  # msgpack: the str "hmac", then a bin of 32 bytes (the tag)
_TRAILER = len(_TAG_FIELD) + hashlib.sha256().digest_size

_keys: dict[str, bytes | None] = {}  # the secret by its path (None: refused), read once per process
_warned: set[str] = set()


def warn(message: str) -> None:
    """One line on stderr, once per process per message (a refused cache is reported, not repeated per entry)."""
    if message not in _warned:
        _warned.add(message)
        print(f"simgpu: {message}", file=sys.stderr)


def refusal(st: os.stat_result, kind: str) -> str | None:
    """Why a directory or file with this status may not be trusted (None: it may): the wrong kind, owned by
    someone else, or writable by group or others."""
    if kind == "directory" and not stat.S_ISDIR(st.st_mode) or kind == "file" and not stat.S_ISREG(st.st_mode):
        return f"not a {'regular file' if kind == 'file' else kind}"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not {os.geteuid()}"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by group or others, mode {stat.S_IMODE(st.st_mode):04o}"
    return None


def directory(root: Path | str, *parts: str) -> Path | None:
    """`root/parts...`, created (mode 0700) where missing, if it and every directory from root down to it are the
    user's own and not writable by others; else None, with one warning (the caller compiles without the cache)."""
    root = Path(root)
    for path in (root, *(root.joinpath(*parts[:i]) for i in range(1, len(parts) + 1))):
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            why = refusal(os.stat(path), "directory")
        except OSError as e:
            why = e.strerror or str(e)
        if why is not None:
            warn(f"cache directory {path} refused ({why}); compiling without it")
            return None
    return path


def read(path: Path) -> bytes | None:
    """The bytes of a file in a trusted directory if the file itself is trusted (module docstring); None when it
    is missing, or refused (with one warning)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        warn(f"cache file {path} refused ({'a symbolic link' if os.path.islink(path) else e.strerror})")
        return None
    with os.fdopen(fd, "rb") as f:
        why = refusal(os.fstat(fd), "file")  # of the file opened, not of whatever the name points to later
        if why is not None:
            warn(f"cache file {path} refused ({why}); compiling afresh")
            return None
        return f.read()


def write(path: Path, data: bytes) -> bool:
    """Replace `path` with `data` atomically (a temporary file, mode 0600, renamed); False if that failed (a
    read-only or full disk only costs the next process a compile)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return False


def key_path() -> Path:
    """Where the per-user secret lives (module docstring): outside every cache directory."""
    if settings.get("SIMGPU_CACHE_KEY"):
        return Path(settings.get("SIMGPU_CACHE_KEY"))
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "simgpu" / "cache-key"


def secret() -> bytes | None:
    """The per-user secret, created on first use; None (one warning: no disk cache) if it is refused."""
    path = key_path()
    name = str(path)
    if name not in _keys:
        _keys[name] = _load_or_create(path)
    return _keys[name]


def forget_secret() -> None:
    """Read the secret again at its next use (tests that move it)."""
    _keys.clear()


def _load_or_create(path: Path) -> bytes | None:
    if directory(path.parent) is None:
        return None
    if not os.path.lexists(path):
        _create_secret(path)
    return _read_secret(path)


def _read_secret(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        warn(f"cache key {path} refused ({'a symbolic link' if os.path.islink(path) else e.strerror}); "
             "disk caches off")
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        why = refusal(st, "file")
        if why is None and st.st_mode & 0o077:
            why = f"readable by group or others, mode {stat.S_IMODE(st.st_mode):04o}, not 0600"
        data = f.read(KEY_BYTES + 1)
    if why is None and len(data) != KEY_BYTES:
        why = f"{len(data)} bytes, not {KEY_BYTES}"
    if why is not None:
        warn(f"cache key {path} refused ({why}); disk caches off")
        return None
    return data


def _create_secret(path: Path) -> None:
    """A new secret under `path` unless another process made one first (link: never replaces, never half-written)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cache-key.")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
        os.link(tmp, path)
    except OSError:  # FileExistsError: another process's secret won; anything else: read finds no secret
        pass
    finally:
        Path(tmp).unlink(missing_ok=True)


def _tag(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).digest()


def pack(key: str, fields: dict) -> bytes | None:
    """The entry of `fields` stored under `key` (module docstring); None without a secret."""
    assert "key" not in fields and "hmac" not in fields, "names the entry's own fields use"
    secret_key = secret()
    if secret_key is None:
        return None
    packer = msgpack.Packer(use_bin_type=True)
    body = b"".join([packer.pack_map_header(len(fields) + 2), packer.pack("key"), packer.pack(key),
                     *(packer.pack(k) + packer.pack(v) for k, v in fields.items())])
    return body + _TAG_FIELD + _tag(secret_key, body)


def unpack(key: str, data: bytes) -> dict | None:
    """The fields of an entry if its tag verifies and it was stored under `key`, else None."""
    secret_key = secret()
    if secret_key is None or len(data) <= _TRAILER or data[-_TRAILER:-_TRAILER + len(_TAG_FIELD)] != _TAG_FIELD:
        return None
    body = data[:-_TRAILER]
    if not hmac.compare_digest(_tag(secret_key, body), data[-hashlib.sha256().digest_size:]):
        return None
    try:
        fields = msgpack.unpackb(data, raw=False)
    except (ValueError, msgpack.exceptions.ExtraData):  # (verified bytes: only a writer's bug gets here)
        return None
    if not isinstance(fields, dict) or fields.pop("key", None) != key:
        return None
    fields.pop("hmac", None)
    return fields


def load(path: Path, key: str) -> dict | None:
    """The fields of the entry at `path` stored under `key`, if the file is trusted and the entry verifies."""
    data = read(path)
    return None if data is None else unpack(key, data)


def store(path: Path, key: str, fields: dict) -> bool:
    """Write the entry of `fields` under `key` to `path` atomically; False if it was not written."""
    data = pack(key, fields)
    return data is not None and write(path, data)
