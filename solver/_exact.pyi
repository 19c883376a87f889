"""Stub of _exact.pyx (the exact endgame solver): C-level only (cimported by the other
Cython modules), nothing visible from Python."""
