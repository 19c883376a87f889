"""Stub of _exact.pyx (the exact endgame solver): C-level (cimported by the other
Cython modules) but for the switch the tests use."""

def _reference(on: bool) -> None:
    """Solve without the memos (the slow path the tests compare with); every searcher of the process."""
