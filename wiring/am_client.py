"""Run inside a Python program that `simgpu run --am` starts, when it first imports tinygrad (the interposer's audit
hook, mockgpu/csrc/pyhook.c, runs this file): installs the synthetic gfx1100, gfx1201, gfx942 and gfx950 firmware where
tinygrad's AM backend looks for it. The standard library only -- the program's Python need not be able to import simgpu.

tinygrad fetches each linux-firmware file from a pinned URL into its download cache and checks it against a sha256
table (tinygrad.runtime.autogen.am.fw.hashes). When that table's module is loaded, the files of
$SIMGPU_AM_CLIENT_FIRMWARE (the synthetic set, simgpu.hw.ucode, written there by `simgpu run`) are copied into that
cache under the names tinygrad computes, and the table is told their hashes: the one change to tinygrad's data, since
the real files cannot be downloaded (nor their hashes matched). tinygrad's code -- the fetch, the header parsing, the
PSP loads -- runs as published.
"""

import hashlib
import importlib.abc
import importlib.machinery
import os
import sys
import tempfile

FW_MODULE = "tinygrad.runtime.autogen.am.fw"
LINUX_FIRMWARE = "0a6871b19abf5d6e024b5d208b101ae53e7fa0de"  # the linux-firmware commit tinygrad pins (fetch_fw)


def install(module, directory: str) -> None:
    """Copy the firmware files of `directory` into tinygrad's download cache; tell `module` (the fw table) their
    hashes."""
    from tinygrad.helpers import _ensure_downloads_dir  # loaded by now: the fw table is imported from tinygrad's code
    cache = _ensure_downloads_dir() / "fw"
    cache.mkdir(parents=True, exist_ok=True)
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        url = f"https://gitlab.com/kernel-firmware/linux-firmware/-/raw/{LINUX_FIRMWARE}/amdgpu/{name}"
        store(cache / hashlib.md5(url.encode()).hexdigest(), data)
        module.hashes[name] = hashlib.sha256(data).hexdigest()


def store(path, data: bytes) -> None:
    """Put `data` at `path` whole: programs started by `simgpu run --am` at the same time share this cache, and one
    reads (and hashes) a file while another installs it. A file truncated and rewritten in place could be read half
    written -- tinygrad then finds a wrong hash and goes to the network for it -- so a complete copy is renamed over
    it, and a file that already holds these bytes is left alone."""
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name + ".", delete=False) as f:
        f.write(data)
    os.replace(f.name, path)


class FirmwareTableFinder(importlib.abc.MetaPathFinder):
    """Finds tinygrad's firmware table as the path finder does, and installs the firmware once it has run."""

    def __init__(self, directory: str):
        self.directory = directory

    def find_spec(self, fullname, path, target=None):
        """The table's spec, its loader wrapped; None for every other module."""
        if fullname != FW_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader, directory = spec.loader, self.directory

        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                install(module, directory)

        spec.loader = Loader()
        return spec


if __name__ == "__simgpu_am_client__":
    if os.environ.get("SIMGPU_AM_CLIENT_FIRMWARE"):
        sys.meta_path.insert(0, FirmwareTableFinder(os.environ["SIMGPU_AM_CLIENT_FIRMWARE"]))
