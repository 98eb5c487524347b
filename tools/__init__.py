"""tools: the LLVM oracle wrappers (llvm-mc in batch) and the generators of simgpu's tables and golden data.

A package so that tests and generators import it plainly (`from tools import oracle`); run a generator
from the repository root as a module, e.g. `python -m tools.gen_isa_golden`.
"""
