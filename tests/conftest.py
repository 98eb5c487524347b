import os
import sys

# tools/ holds the oracle wrappers (llvm-mc in batch) and the golden-data generators the tests reuse.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))

pytest_plugins = ["pytester"]
