"""Scalar unit (SALU, SOPP): SOP1/SOP2/SOPC/SOPK/SOPP semantics over values of the scalar unit."""
