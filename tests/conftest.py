import os
import sys

import pytest

# tools/ holds the oracle wrappers (llvm-mc in batch) and the golden-data generators the tests reuse.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))

pytest_plugins = ["pytester"]


def llvm_tool_or_skip(name: str, package: str = "llvm-19") -> str:
    """Path of an LLVM 19 tool, or skip the test naming the Debian package that provides it."""
    import oracle
    path = oracle.tool(name)
    if path is None:
        pytest.skip(f"needs {name} from the Debian package {package}")
    return path
