"""The x86-64 backend's specifics: operands and instructions (isa), the encoder (encode), instruction selection
(select and its rule modules alu, convert, memory), expansion after register allocation (expand), the
pipeline (target) and the Backend (backend: registered as "x86", for the CPU device kind)."""
