"""Vector memory: global/flat/scratch, buffer (MUBUF/MTBUF) and image (MIMG) loads, stores and atomics."""
