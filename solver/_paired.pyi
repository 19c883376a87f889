"""Stub of _paired.pyx (the paired phase): C-level only (cimported by the other
Cython modules), nothing visible from Python."""
