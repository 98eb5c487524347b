"""For running tinygrad's own AM mock (not simgpu) offline: loaded from PYTHONPATH, with simgpu importable, it installs
simgpu's synthetic gfx1100 firmware set where tinygrad looks, as `simgpu run --am` does for its clients
(wiring/am_client.py), for the tinygrad side of a comparison run. `simgpu run --am` itself does not
use this file: its clients need nothing of simgpu on their path. Nothing happens unless SIMGPU_AM_FIRMWARE_INSTALL is
set."""

import atexit
import os
import shutil
import sys
import tempfile


def _install() -> None:
    from simgpu.hw import ucode
    from wiring import am_client
    directory = tempfile.mkdtemp(prefix="simgpu-am-firmware-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    for name, data in ucode.synthetic_set().items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    sys.meta_path.insert(0, am_client.FirmwareTableFinder(directory))


if os.environ.get("SIMGPU_AM_FIRMWARE_INSTALL"):
    _install()
