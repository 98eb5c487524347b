"""Vector ALU: VOP1/VOP2/VOP3/VOPC/VOP3P/VOPD semantics (integer, float, conversion, lane ops), exactly rounded."""
