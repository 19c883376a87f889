"""A CPU hog: one process spinning on every core, so that the tests run as
they would on a busy machine (.ci/run runs the whole suite beside it).

    python tests/cpu_hog.py [--procs N] [--seconds S] &

It stops by itself: after --seconds (default 1800), on SIGTERM or SIGINT, and
when the process that started it dies, so no spinner outlives the run it
was started for. On the way out it prints the load average it left behind.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time

CHECK_SECONDS = 0.2         # how often the hog and its spinners look whether to stop


def spin(hog: int, until: float) -> None:
    """Burn one core until `until` (time.monotonic) or until the hog is gone."""
    while time.monotonic() < until and os.getppid() == hog:
        end = time.monotonic() + CHECK_SECONDS
        while time.monotonic() < end:
            pass


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 1, help="spinning processes (default: cores)")
    parser.add_argument("--seconds", type=float, default=1800, help="stop after this long (default: 1800)")
    args = parser.parse_args(argv)
    if args.procs < 1 or args.seconds <= 0:
        parser.error("--procs must be at least 1 and --seconds more than 0")
    started_by, until = os.getppid(), time.monotonic() + args.seconds
    # forked, so that each spinner's parent is the hog (a fork server would be their parent instead)
    fork = multiprocessing.get_context("fork")
    spinners = [fork.Process(target=spin, args=(os.getpid(), until), daemon=True) for _ in range(args.procs)]
    for spinner in spinners:
        spinner.start()
    # only now, when every spinner has started: a SIGTERM before this ends the hog at once (the spinners then
    # see their parent gone); after it, the hog stops them itself, with a SIGKILL nothing in them can delay
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"cpu_hog: {args.procs} spinning processes for at most {args.seconds:.0f} s", file=sys.stderr)
    try:
        while time.monotonic() < until and os.getppid() == started_by:
            time.sleep(CHECK_SECONDS)
    except KeyboardInterrupt:
        pass
    finally:
        print(f"cpu_hog: stopping, load average {loadavg()}", file=sys.stderr)
        for spinner in spinners:
            spinner.kill()
            spinner.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
