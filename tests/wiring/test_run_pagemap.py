"""/proc/self/pagemap under `simgpu run --am`, as the kernel answers it (mockgpu/csrc/localpci.c): a page the process
never touched is not present; a touched page of anonymous memory, private or shared, is present with a frame number
the GPUs resolve (its pages moved, contents kept, into system memory the service registers); a file's pages are not
present, with a warning; a misaligned read is EINVAL and a read past user space is empty. Private pages stay private
across fork: the child gets a copy as of the fork, and neither process sees the other's later stores. (That the GPU
reaches those frames is tests/wiring/test_run_tinygrad_am_local.py's.) Skipped without a C compiler."""

import sys
from functools import cache
from pathlib import Path

from tests.support.clients import json_checks, simgpu_run


@cache
def _checks() -> dict:
    r = simgpu_run([sys.executable, str(Path(__file__).with_name("pagemap_client.py"))], "--am")
    checks = json_checks(r, "fork")
    checks["stderr"] = r.stderr
    return checks


def test_touched_private_pages_are_present_and_untouched_ones_are_not():
    private = _checks()["private"]
    assert private["present"] == [True, True, True, False, False, True, True, False]
    pfns = private["pfns"]
    assert pfns[1] == pfns[0] + 1 and pfns[2] == pfns[0] + 2 and pfns[6] == pfns[5] + 1  # a touched run: one block
    assert len({pfns[0], pfns[5]}) == 2 and all(pfns[i] == 0 for i in (3, 4, 7))
    assert private["contents_kept"] and private["zero_page"]
    assert private["same_again"]  # a second read answers from where the pages went


def test_touched_shared_pages_are_present_and_untouched_ones_are_not():
    assert _checks()["shared"] == {"present": [True, False], "kept": True}


def test_a_files_pages_are_reported_not_present_with_a_warning():
    checks = _checks()
    assert checks["file"]["entries"] == [0]
    assert "is not anonymous memory the CPU can read; the GPU cannot reach it" in checks["stderr"]


def test_reads_are_checked_as_the_kernel_checks_them():
    assert _checks()["edges"] == {"misaligned": "EINVAL", "past_user_space": 0}


def test_private_pages_moved_for_the_gpu_stay_private_across_fork():
    fork = _checks()["fork"]
    assert fork["child_ok"]  # the child saw the pages as at the fork, not the parent's later store
    assert fork["parent_kept"]  # the parent does not see the child's store
    assert fork["parent_entries_same"]  # the parent keeps the frames the GPU reaches
