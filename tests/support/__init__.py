"""Helpers shared by the tests: ISA golden data, GPU and VALU harnesses (sample kernels: compiler.samples)."""
