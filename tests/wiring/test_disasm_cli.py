"""`simgpu disasm` prints each kernel's descriptor summary and llvm-objdump's disassembly lines."""

import re
import subprocess
from pathlib import Path

from tests import DATA
from tests.support.llvm import llvm_tool_or_skip
from wiring.cli import main

DATA = DATA / "codeobjects"


def _objdump_lines(path: Path) -> list[str]:
    objdump = llvm_tool_or_skip("llvm-objdump")
    out = subprocess.run([objdump, "-d", "--mcpu=gfx1100", str(path)], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.startswith("\t") and "//" in line]


def test_disasm_matches_llvm_objdump(capsys):
    path = DATA / "llvmlite_vadd.so"
    assert main(["disasm", str(path)]) == 0
    ours = capsys.readouterr().out
    assert "; kernel vadd" in ours and "wave32" in ours
    lines = [line for line in ours.splitlines() if line.startswith("\t")]
    theirs = _objdump_lines(path)
    assert lines and lines == theirs[:len(lines)]


def test_disasm_every_golden_object_decodes(capsys):
    for path in sorted(DATA.glob("*.so")):
        assert main(["disasm", str(path)]) == 0
        out = capsys.readouterr().out
        assert "undecodable" not in out, path
        assert re.search(r"s_endpgm\s+// [0-9A-F]{12}: BFB00000", out), path


def test_disasm_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.o"
    bad.write_bytes(b"\x7fELF garbage")
    assert main(["disasm", str(bad)]) == 1
    assert "bad.o" in capsys.readouterr().err
