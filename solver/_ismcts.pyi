"""Stub of _ismcts.pyx (SO-ISMCTS): C-level only (cimported by the other
Cython modules), nothing visible from Python."""
