"""Loaded (PYTHONPATH) into programs that `simgpu run --am` starts: installs the synthetic gfx1100 firmware set where
tinygrad's AM backend looks for firmware.

tinygrad fetches each linux-firmware file from a pinned URL into its download cache and checks it against a sha256
table (tinygrad.runtime.autogen.am.fw.hashes). Here the synthetic files (simgpu.hw.ucode) are written into that
cache under the names tinygrad computes, and the table is told their hashes: the one change to tinygrad's data, since
the real files cannot be downloaded (nor their hashes matched). tinygrad's code -- the fetch, the header parsing,
the PSP loads -- runs as published. Nothing happens unless SIMGPU_AM_FIRMWARE_INSTALL is set.
"""

import hashlib
import os


def _install() -> None:
    from tinygrad.helpers import _ensure_downloads_dir
    from tinygrad.runtime.autogen.am import fw

    from simgpu.hw import ucode
    commit = "0a6871b19abf5d6e024b5d208b101ae53e7fa0de"  # the linux-firmware commit tinygrad 0.14.0 pins (fetch_fw)
    cache = _ensure_downloads_dir() / "fw"
    cache.mkdir(parents=True, exist_ok=True)
    for name, data in ucode.synthetic_set().items():
        url = f"https://gitlab.com/kernel-firmware/linux-firmware/-/raw/{commit}/amdgpu/{name}"
        (cache / hashlib.md5(url.encode()).hexdigest()).write_bytes(data)
        fw.hashes[name] = hashlib.sha256(data).hexdigest()


if os.environ.get("SIMGPU_AM_FIRMWARE_INSTALL"):
    _install()
