"""The test suite, in folders mirroring the packages; support/ holds shared helpers, data/ golden files."""

from pathlib import Path

DATA = Path(__file__).parent / "data"  # generated golden files (`python -m tools.gen_*` regenerates them)
