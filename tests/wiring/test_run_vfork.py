"""A program under `simgpu run` that starts a subprocess keeps its device descriptors (found running tinygrad's
test_tiny with HCQ2 over AM: every test after the first subprocess failed with an empty pagemap read). Python's
subprocess starts its child with vfork: the child runs in the parent's memory until it execs, and closes every
descriptor it does not pass on through close() -- the interposer's, which forgot them in the parent's tables while
they stayed open there. The interposer now keeps its books only in the process that owns them (a fork child owns its
copy). Each program checks its descriptor works before and after a `subprocess.run`: /dev/kfd's ioctls, and
/proc/self/pagemap's entries under --am (on a dup of the descriptor: a copy of a pagemap descriptor answers as the
original does, as it did not before either). Skipped without a C compiler."""

import json
import sys
import textwrap

from tests.support.clients import simgpu_run

# Python's child closes what it does not pass on with close_range around each descriptor it keeps; two kept
# descriptors side by side make an empty range, which close_range refuses, and the child then closes every other
# descriptor one by one with close() -- as tinygrad's run did
SPAWN = textwrap.dedent("""
    import os, subprocess
    def spawn():
        r, w = os.pipe()
        kept = (os.dup2(r, 900), os.dup2(w, 901))  # side by side, above everything the program opened
        os.close(r), os.close(w)
        subprocess.run(["true"], check=True, pass_fds=kept)
        os.close(kept[0]), os.close(kept[1])
""")

KFD = SPAWN + textwrap.dedent("""
    import fcntl, json, os
    from runtime.uapi import kfd
    fd = os.dup2(os.open("/dev/kfd", os.O_RDWR | os.O_CLOEXEC), 950)  # above the kept pair: closed one by one
    def version():
        args = kfd.kfd_ioctl_get_version_args()
        fcntl.ioctl(fd, kfd.AMDKFD_IOC_GET_VERSION, args)
        return [args.major_version, args.minor_version]
    before = version()
    spawn()
    print(json.dumps({"before": before, "after": version()}))
""")

PAGEMAP = SPAWN + textwrap.dedent("""
    import json, mmap, os, struct, ctypes
    page = mmap.mmap(-1, mmap.PAGESIZE)  # shared anonymous memory, as tinygrad's host buffers
    page[0] = 1
    addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
    fd = os.dup2(os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC), 950)  # a copy answers as the original
    def entry():
        data = os.pread(fd, 8, addr // mmap.PAGESIZE * 8)
        return struct.unpack("<Q", data)[0] >> 63 if len(data) == 8 else "empty read"
    before = entry()
    spawn()
    print(json.dumps({"before": before, "after": entry()}))
""")


def _run(program: str, *options: str) -> dict:
    r = simgpu_run([sys.executable, "-c", program], *options)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


def test_a_subprocess_leaves_the_programs_kfd_descriptor_working():
    got = _run(KFD)
    assert got["before"] == got["after"] == [1, 17]


def test_a_subprocess_leaves_the_programs_pagemap_descriptor_answering():
    assert _run(PAGEMAP, "--am") == {"before": 1, "after": 1}  # present before and after
