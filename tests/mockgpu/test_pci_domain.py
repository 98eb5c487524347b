"""A PCI domain of the run's own (mockgpu.pci.claim_domain): each `simgpu run --am` presents its GPUs in a domain no
concurrent run holds, so a driver's lock files named by bus address (tinygrad's $TMPDIR/am_<bdf>.lock) never meet.
The claim is an flock on <dir>/simgpu-pci-domain-<DDDD>.lock, held for the run's life; a lock file someone planted
as a symlink, a FIFO or a file we may not open is skipped, never followed or waited on."""

import fcntl
import os
import subprocess
import sys

import pytest

from mockgpu import pci


def test_two_claims_get_different_domains_and_a_released_one_is_reused(tmp_path):
    a = pci.claim_domain(str(tmp_path))
    b = pci.claim_domain(str(tmp_path))
    assert (a.number, b.number) == (pci.FIRST_DOMAIN, pci.FIRST_DOMAIN + 1)
    a.release()
    c = pci.claim_domain(str(tmp_path))
    assert c.number == pci.FIRST_DOMAIN
    a.release()  # a second release is harmless
    b.release(), c.release()


def test_a_domain_another_process_holds_is_skipped_until_that_process_exits(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys\nfrom mockgpu import pci\n"
                               f"c = pci.claim_domain({str(tmp_path)!r})\nprint(c.number, flush=True)\n"
                               "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    try:
        assert int(holder.stdout.readline()) == pci.FIRST_DOMAIN
        mine = pci.claim_domain(str(tmp_path))
        assert mine.number == pci.FIRST_DOMAIN + 1
        mine.release()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    again = pci.claim_domain(str(tmp_path))  # the holder's exit dropped its lock
    assert again.number == pci.FIRST_DOMAIN
    again.release()


def test_planted_symlinks_fifos_and_directories_are_skipped_untouched(tmp_path):
    target = tmp_path / "victim"
    target.write_text("keep")
    first = pci.FIRST_DOMAIN
    (tmp_path / pci.DOMAIN_LOCK.format(first)).symlink_to(target)
    os.mkfifo(tmp_path / pci.DOMAIN_LOCK.format(first + 1))  # opening a FIFO to read would block: must not hang
    (tmp_path / pci.DOMAIN_LOCK.format(first + 2)).mkdir()
    claim = pci.claim_domain(str(tmp_path))
    assert claim.number == first + 3
    assert target.read_text() == "keep"
    fd = os.open(target, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the symlink's target was never locked
    os.close(fd)
    claim.release()


def test_no_free_domain_is_a_clear_error(tmp_path):
    held = pci.claim_domain(str(tmp_path), first=0x200, last=0x200)
    with pytest.raises(pci.DomainError, match=r"no free PCI domain in \[0x0200, 0x0200\]"):
        pci.claim_domain(str(tmp_path), first=0x200, last=0x200)
    held.release()


def test_the_devices_are_named_in_the_claimed_domain():
    assert pci.bus_id(1, 0x1a2) == "01a2:04:00.0"
    assert pci.device_dir(0, 0x100) == "/sys/bus/pci/devices/0100:03:00.0"
    assert pci.openable(1, 0x100)[0].startswith("/sys/bus/pci/devices/0100:03:00.0/")
