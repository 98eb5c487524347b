"""The LLVM 19 command-line oracles, found or skipped."""

import pytest


def llvm_tool_or_skip(name: str, package: str = "llvm-19") -> str:
    """Path of an LLVM 19 tool, or skip the test naming the Debian package that provides it."""
    from tools import oracle
    path = oracle.tool(name)
    if path is None:
        pytest.skip(f"needs {name} from the Debian package {package}")
    return path
