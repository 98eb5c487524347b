"""test/test_tiny.py of tinygrad's PyPI sdist (the version the test extra pins), for tests/wiring/test_run_sdist.py.

`pip download --no-deps --no-binary :all: tinygrad==0.14.0` fetches the sdist into the build cache
(mockgpu.native.cache_dir()/tinygrad-sdist); it is used only when its sha256 is the one pinned here (the cache is a
directory others might write), and test/test_tiny.py is read out of it. `make setup` fetches it (the install step:
`python -m tests.support.sdist`), so the tests need no network; without one, they fetch it themselves or skip saying
why.

    python -m tests.support.sdist      # fetch, print the path of the sdist
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
from pathlib import Path

from mockgpu.native import cache_dir

VERSION = "0.14.0"
SDIST = f"tinygrad-{VERSION}.tar.gz"
SHA256 = "437be6bb7481ec26e332e4f4342f6ea09e41258e62c5c09f4a9ed7aeb7829a07"  # PyPI's tinygrad-0.14.0.tar.gz
TEST_TINY = f"tinygrad-{VERSION}/test/test_tiny.py"


class FetchError(RuntimeError):
    """The sdist could not be had (no network, no pip, a file that is not PyPI's)."""


def _verified(path: Path) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == SHA256


def sdist() -> Path:
    """The verified sdist in the cache, downloaded if it is not there."""
    directory = cache_dir() / "tinygrad-sdist"
    path = directory / SDIST
    if _verified(path):
        return path
    directory.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
           f"tinygrad=={VERSION}", "-d", str(directory)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FetchError(f"{' '.join(cmd)}: {e}") from None
    if r.returncode != 0:
        lines = (r.stderr or r.stdout).strip().splitlines()
        raise FetchError(f"{' '.join(cmd)} failed: {lines[-1] if lines else f'exit {r.returncode}'}")
    if not _verified(path):
        raise FetchError(f"{path} is not PyPI's {SDIST} (sha256 differs from {SHA256})")
    return path


def test_tiny(directory: Path) -> Path:
    """The sdist's test/test_tiny.py written into `directory`; its path."""
    with tarfile.open(sdist()) as tar:
        member = tar.extractfile(TEST_TINY)
        if member is None:
            raise FetchError(f"{SDIST} has no {TEST_TINY}")
        out = directory / "test_tiny.py"
        out.write_bytes(member.read())
    return out


if __name__ == "__main__":
    try:
        print(sdist())
    except FetchError as e:
        sys.exit(f"tests.support.sdist: {e}")
