"""Tiled matrix products with LDS (see compiler.ir.lower's docstring); written in the next step."""


def plan(lowerer):
    """The tiled lowering of the kernel, or None when it does not apply."""
    return None
