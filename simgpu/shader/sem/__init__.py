"""Instruction semantics written once: a small typed expression form (expr.py) that both engine tiers are
generated from - the interpreter's batched numpy kernels (numpy_gen.py, here) and the JIT's LLVM IR
(jit/lower_sem.py, in the JIT's layer). Definitions live beside the rest of their family's semantics
(vector/int_arith.py & co.) and register through vector.valu.define."""
