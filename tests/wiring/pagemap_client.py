"""Run by tests/wiring/test_run_pagemap.py under `simgpu run --am`: reads /proc/self/pagemap as a userspace driver
does (os.pread of 8-byte entries), for a private anonymous mapping with some pages touched, a shared one, a file's
pages; then forks and checks that private pages moved for the GPU are still private to each process. Prints one JSON
object per check (not a test module itself)."""

import errno
import json
import mmap
import os
import struct
import sys
import tempfile

PAGE = mmap.PAGESIZE
PRESENT, PFN = 1 << 63, (1 << 55) - 1


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def address(m: mmap.mmap) -> int:
    import ctypes
    return ctypes.addressof(ctypes.c_char.from_buffer(m))


def entries(fd: int, addr: int, pages: int) -> list[int]:
    data = os.pread(fd, pages * 8, addr // PAGE * 8)
    return list(struct.unpack(f"<{len(data) // 8}Q", data))


def main() -> None:
    fd = os.open("/proc/self/pagemap", os.O_RDONLY)
    # private anonymous: pages 0-2 and 5 written, 6 only read (the zero page: present, as the kernel says), 3, 4, 7
    # never touched
    priv = mmap.mmap(-1, 8 * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    pattern = bytes((i * 7 + 3) & 0xFF for i in range(PAGE))
    for p in (0, 1, 2, 5):
        priv[p * PAGE:(p + 1) * PAGE] = pattern[p:] + pattern[:p]
    _ = priv[6 * PAGE]
    base = address(priv)
    first = entries(fd, base, 8)
    again = entries(fd, base, 8)
    kept = all(priv[p * PAGE:(p + 1) * PAGE] == pattern[p:] + pattern[:p] for p in (0, 1, 2, 5))
    report("private", present=[bool(e & PRESENT) for e in first], pfns=[e & PFN for e in first],
           same_again=first == again, contents_kept=kept, zero_page=priv[6 * PAGE:7 * PAGE] == bytes(PAGE))

    shared = mmap.mmap(-1, 2 * PAGE, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    shared[:4] = b"shrd"
    e = entries(fd, address(shared), 2)
    report("shared", present=[bool(x & PRESENT) for x in e], kept=shared[:4] == b"shrd")

    with tempfile.TemporaryFile() as f:
        f.write(b"f" * PAGE)
        f.flush()
        fmap = mmap.mmap(f.fileno(), PAGE, flags=mmap.MAP_PRIVATE)
        _ = fmap[0]
        report("file", entries=entries(fd, address(fmap), 1))

    try:
        os.pread(fd, 8, 4)
        misaligned = "read"
    except OSError as err:
        misaligned = errno.errorcode[err.errno]
    report("edges", misaligned=misaligned, past_user_space=len(os.pread(fd, 64, (1 << 47) // PAGE * 8)))

    # fork: the child sees the pages as they were at the fork; neither sees the other's later stores
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        ok = priv[:PAGE] == pattern and priv[PAGE:2 * PAGE] == pattern[1:] + pattern[:1]
        priv[:4] = b"kid!"
        os.write(w1, b"1")
        os.read(r2, 1)  # the parent has stored into page 1
        ok = ok and priv[PAGE:PAGE + 4] == (pattern[1:] + pattern[:1])[:4]
        child = entries(os.open("/proc/self/pagemap", os.O_RDONLY), base, 3)
        ok = ok and all(x & PRESENT for x in child) and child != first[:3]  # its copy moves to blocks of its own
        os._exit(0 if ok else 1)
    os.read(r1, 1)
    parent_kept = priv[:4] == pattern[:4]
    priv[PAGE:PAGE + 4] = b"par!"
    os.write(w2, b"1")
    _, status = os.waitpid(pid, 0)
    report("fork", child_ok=os.WEXITSTATUS(status) == 0, parent_kept=parent_kept,
           parent_entries_same=entries(fd, base, 8) == first)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
