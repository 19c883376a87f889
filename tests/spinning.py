"""A test-only launcher: `cirulla-server` or `cirulla engine` whose hints
spin for ever, the way a request once made a handler spin in a pure-Python
loop that holds the GIL and that no deadline, cancel or shutdown reaches.
Production code has no hook for this: the launcher patches the service.

    python tests/spinning.py server --listen 127.0.0.1:0 --grace-seconds 2
    python tests/spinning.py engine --warm-presets ''

Each hint writes SPINNING and its thread's name on standard error as it
starts to spin, so that a test knows when every call is stuck. The server's
spin in their handler threads; the engine's, whose queries run on daemon
threads, on a ThreadPoolExecutor's worker, where an analysis's searches run:
interpreter exit joins those.
"""
from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from cirulla.server.service import Service

SPINNING = "spinning: a hint that ignores cancellation"


def spin(*_):
    print(f"{SPINNING} ({threading.current_thread().name})", file=sys.stderr, flush=True)
    while True:
        sum(range(1000))


def main() -> None:
    command, args = sys.argv[1], sys.argv[2:]
    if command == "server":
        from cirulla.server.app import main as server
        Service.get_hint = spin
        server(args)
    elif command == "engine":
        from cirulla.cli.engine import main as engine
        pool = ThreadPoolExecutor(thread_name_prefix="spinning")
        Service.get_hint = lambda self, request, call: pool.submit(spin).result()
        sys.exit(engine(args))
    else:
        sys.exit(f"usage: {sys.argv[0]} server|engine ARGS")


if __name__ == "__main__":
    main()
