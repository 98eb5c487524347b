"""The matrix unit: WMMA."""
