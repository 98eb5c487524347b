"""tinygrad 0.14's CPU device as the frontend's oracle, run once and committed: a script's output is kept in
tests/data/tinygrad_golden/<key>, the key a SHA-256 of everything that decides it (the script, its input bytes and
tinygrad's version). A test whose result is there reads it and needs neither tinygrad nor clang; one whose result
is missing runs tinygrad (DEV=CPU, clang from LLVM 19 on PATH, in a subprocess so its device choice stays its own)
and writes the file, which the developer commits with the test (as tools/ writes the other golden files).

Regenerate everything: `rm -r tests/data/tinygrad_golden && make test` on a machine with tinygrad 0.14 and
clang-19 (both installed by `make setup`), then commit the directory. The files are this repository's own test
data, read as bytes (JSON or .npz without pickles), never executed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

LLVM_BIN = "/usr/lib/llvm-19/bin"
TINYGRAD_VERSION = "0.14.0"  # the pinned test dependency (pyproject.toml); part of every key
GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "tinygrad_golden"


def output(argv_script: str, stdin: bytes = b"", files: dict[str, bytes] | None = None, suffix: str = ".json",
           identity: bytes | None = None, timeout: float = 900) -> bytes:
    """What `python -c argv_script [input files...]` prints (suffix .json) or writes to its last argument (suffix
    .npz) under tinygrad's CPU device: from the committed golden file if there is one, else by running tinygrad
    (skips without tinygrad or clang) and writing that file. files: name -> bytes given as argument paths;
    identity: what the files mean, when their bytes are not canonical (a .npz carries a time stamp)."""
    files = files or {}
    h = hashlib.sha256(f"tinygrad {TINYGRAD_VERSION}\n{suffix}\n".encode() + argv_script.encode() + b"\0" + stdin)
    if identity is not None:
        h.update(b"\0identity\0" + identity)
    else:
        for name in sorted(files):
            h.update(b"\0" + name.encode() + b"\0" + files[name])
    path = GOLDEN / f"{h.hexdigest()[:32]}{suffix}"
    if path.exists():
        return path.read_bytes()
    GOLDEN.mkdir(parents=True, exist_ok=True)
    with open(GOLDEN / ".lock", "w") as lock:  # xdist workers asking for the same result run tinygrad once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            data = _run(argv_script, stdin, files, suffix, timeout)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
    return path.read_bytes()


def _run(script: str, stdin: bytes, files: dict[str, bytes], suffix: str, timeout: float) -> bytes:
    pytest.importorskip("tinygrad")
    if not pathlib.Path(LLVM_BIN, "clang").exists():
        pytest.skip("tinygrad's CPU device needs clang (LLVM 19)")
    env = dict(os.environ, DEV="CPU", PATH=f"{LLVM_BIN}:{os.environ.get('PATH', '')}")
    env.pop("MOCKGPU", None)
    with tempfile.TemporaryDirectory() as d:
        args = []
        for name in sorted(files):
            p = pathlib.Path(d, name)
            p.write_bytes(files[name])
            args.append(str(p))
        out = pathlib.Path(d, "out" + suffix)
        if suffix != ".json":
            args.append(str(out))
        proc = subprocess.run([sys.executable, "-c", script, *args], input=stdin, capture_output=True, env=env,
                              timeout=timeout)
        assert proc.returncode == 0, f"tinygrad failed:\n{proc.stderr.decode(errors='replace')[-4000:]}"
        return proc.stdout if suffix == ".json" else out.read_bytes()
