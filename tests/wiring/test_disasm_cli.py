"""`simgpu disasm` prints each kernel's descriptor summary and exactly llvm-objdump's disassembly lines:
every symbol through its padding (s_code_end, s_nop) and branch targets as `<symbol+0xOFF>`."""

import re
import subprocess
from pathlib import Path

import pytest

from tests import DATA
from tests.support.llvm import llvm_tool_or_skip
from wiring.cli import main

DATA = DATA / "codeobjects"
OBJECTS = sorted(DATA.glob("*.so")) + sorted(DATA.glob("*.o"))


def _objdump_lines(path: Path) -> list[str]:
    objdump = llvm_tool_or_skip("llvm-objdump")
    out = subprocess.run([objdump, "-d", "--mcpu=gfx1100", str(path)], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.startswith("\t") or re.match(r"[0-9a-f]{16} <", line)]


@pytest.mark.parametrize("path", OBJECTS, ids=lambda p: p.name)
def test_disasm_matches_llvm_objdump_line_for_line(path, capsys):
    assert main(["disasm", str(path)]) == 0
    ours = capsys.readouterr().out
    lines = [line for line in ours.splitlines() if line.startswith("\t") or re.match(r"[0-9a-f]{16} <", line)]
    assert lines == _objdump_lines(path)


def test_disasm_labels_branch_targets_and_lists_code_end_padding(capsys):
    assert main(["disasm", str(DATA / "opencl_kernels.so")]) == 0
    out = capsys.readouterr().out
    assert "; kernel saxpy" in out and "wave32" in out
    assert re.search(r"s_cbranch_execz \d+\s+// [0-9A-F]{12}: BFA5[0-9A-F]{4} <saxpy\+0x[0-9a-f]+>", out)
    assert re.search(r"s_code_end\s+// [0-9A-F]{12}: BF9F0000\n", out)  # the padding after the last kernel


def test_disasm_every_golden_object_decodes(capsys):
    for path in OBJECTS:
        assert main(["disasm", str(path)]) == 0
        out = capsys.readouterr().out
        assert "undecodable" not in out, path
        assert re.search(r"s_endpgm\s+// [0-9A-F]{12}: BFB00000", out), path


def test_disasm_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.o"
    bad.write_bytes(b"\x7fELF garbage")
    assert main(["disasm", str(bad)]) == 1
    assert "bad.o" in capsys.readouterr().err
