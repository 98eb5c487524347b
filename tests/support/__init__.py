"""Helpers shared by the tests: kernel corpus, ISA golden data, VALU harnesses."""
