"""The bound on a stop, for `cirulla-server` and `cirulla engine`: when a
stop begins (SIGTERM, SIGINT) a deadline is armed, and whatever still runs
when it comes is abandoned: named in the log (an ERROR line), then the
process ends at once with status ABANDONED (os._exit: no thread is waited for).
A deadline that finds no work left (the stop itself was slow: grpcio, the
exit's wait for threads) abandons nothing: a WARNING, and the status the
stop was ending with (0; the engine's 130 after SIGINT).

Work that no deadline, cancellation or shutdown reaches (a handler stuck in
a pure-Python loop that never looks: a defect) would otherwise keep the
process alive for ever, since interpreter exit joins the worker threads of
every ThreadPoolExecutor, grpcio's handler threads among them. The deadline
runs on a daemon timer thread: it needs only a turn of the GIL, which a
pure-Python loop gives up every few milliseconds. (Code that never lets go
of the GIL, a C loop, stops the signal handlers too: no stop begins.)
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

# sysexits.h EX_SOFTWARE, "internal software error": the stop had to abandon work that
# ignored cancellation, a defect to look into (a clean stop exits 0)
ABANDONED = 70
# past its own bound (the server's grace, the engine's half second), how long a stop may
# take (for cancelled work to return, for grpcio to stop) before what still runs is abandoned
OVERRUN_SECONDS = 0.3
MAX_NAMED = 20                  # the work named in the log line, at most: one bounded line


@dataclass(frozen=True)
class Unfinished:
    """Work still running: what it is, for how long, on which thread."""
    name: str                   # e.g. "/cirulla.v1.EngineService/GetHint request_id=..."
    seconds: float
    thread: int | None          # its thread's threading.get_ident(): where it is stuck


class StopDeadline:
    """Armed when a stop begins; at `seconds` from then, abandon() runs
    unless the process has ended. It stays armed through the interpreter's
    exit, which joins threads too."""

    def __init__(self, seconds: float, unfinished: Callable[[], list[Unfinished]], nouns: tuple[str, str],
                 logger: logging.Logger, stopped: int = 0):
        self._stopped = stopped         # the status of a stop that abandons nothing
        self._began = time.monotonic()
        self._at = self._began + seconds
        self._unfinished = unfinished
        self._nouns = nouns             # ("call", "calls")
        self._log = logger
        self._abandoning = threading.Lock()
        timer = threading.Timer(seconds, self.abandon)
        timer.daemon = True
        timer.name = "cirulla-stop-deadline"
        timer.start()

    def remaining(self) -> float:
        return max(0.0, self._at - time.monotonic())

    def abandon(self) -> NoReturn:
        """End the process now: with ABANDONED if work still runs (the ERROR
        line names it), else with the stop's own status."""
        self._abandoning.acquire()          # once: a second caller waits here for the exit
        code = ABANDONED
        try:
            after = time.monotonic() - self._began
            unfinished = self._unfinished()
            if unfinished:
                self._log.error("abandoning %d %s still running %.1f s after the stop began (they ignored "
                                "cancellation): exit %d: %s", len(unfinished), self._nouns[len(unfinished) != 1],
                                after, ABANDONED, _named(unfinished))
            else:
                code = self._stopped
                self._log.warning("the stop has not ended %.1f s after it began, with nothing left running "
                                  "(grpcio, or the exit's wait for threads): exiting now", after)
            logging.shutdown()              # flushes every handler: os._exit does not
        finally:
            os._exit(code)


def _named(unfinished: list[Unfinished]) -> str:
    """The work, and where each thread is: at most MAX_NAMED of them."""
    frames = sys._current_frames()
    named = []
    for work in unfinished[:MAX_NAMED]:
        frame = frames.get(work.thread) if work.thread is not None else None
        where = "" if frame is None else \
            f", at {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
        named.append(f"{work.name} ({work.seconds:.1f} s{where})")
    more = f"; and {len(unfinished) - MAX_NAMED} more" if len(unfinished) > MAX_NAMED else ""
    return "; ".join(named) + more

