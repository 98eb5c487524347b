"""The compiler's error type."""


class CompileError(ValueError):
    """A kernel the compiler refuses: LLVM rejected the IR, an index proof failed (kernel, buffer, index and a
    counterexample in the message), or an unknown target was asked for."""
