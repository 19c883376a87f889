"""Stub of _worlds.pyx (determinization): C-level only (cimported by the other
Cython modules), nothing visible from Python."""
