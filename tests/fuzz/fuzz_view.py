"""Coverage-guided fuzzing (atheris, libFuzzer) of the view decoder: bytes ->
cirulla.v1.SeatView -> what the server does with a request's view
(`Service._view_to_move`: `convert.view_from_proto`, the rules' view builder,
then the legal moves).

A finding is any exception but BadRequest (bad input, named field by field),
a view the server completes that it then refuses when it comes back (a
client sends back the view a hint answered with), or an input slower than
`-timeout` or taking the process past `-rss_limit_mb` (libFuzzer's: a view of
the corpus takes milliseconds; a deal's round at 2^31-1 took minutes). Bytes that are not a
SeatView at all (DecodeError) are skipped: the server's lenient decoding
answers them before any of this runs (tests/test_fuzz.py checks that).

Half of the mutations are structural (`fuzz/malformed.py`'s `mutate`, through
the message's descriptor: bad cards, out-of-range numbers, unknown enum
numbers, fields dropped or repeated), half libFuzzer's own on the bytes.
Only the project's modules (cirulla.*) are instrumented.

    python tests/fuzz/fuzz_view.py NEW tests/fuzz/corpus/view -max_total_time=300 -timeout=5   # finds go to NEW/
    python tests/fuzz/fuzz_view.py -merge=1 tests/fuzz/corpus/view NEW   # keep those that add coverage
    python tests/fuzz/fuzz_view.py crash-<sha1>                          # replay one input (or timeout-, oom-)

tests/test_fuzz.py runs it for a few seconds over the committed corpus, with
the limits FUZZ_TIMEOUT_SECONDS and FUZZ_RSS_LIMIT_MB.
"""
from __future__ import annotations

import sys
from pathlib import Path

import atheris
from google.protobuf.message import DecodeError

with atheris.instrument_imports(include=["cirulla"]):
    from cirulla.server import convert
    from cirulla.server.errors import BadRequest
    from cirulla.server.service import Service
    from cirulla.solver import players  # noqa: F401 - imported by fuzz.malformed: instrumented here
    from cirulla.v1 import game_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))       # tests/, for fuzz.malformed
from fuzz.mutator import structural  # noqa: E402


def TestOneInput(data: bytes) -> None:
    try:
        msg = game_pb2.SeatView.FromString(data)
    except DecodeError:
        return
    try:
        view = Service._view_to_move(msg)
    except BadRequest:
        return
    completed = convert.view_to_proto(view)             # what GetHint answers with
    try:
        again = Service._view_to_move(completed)
    except BadRequest as e:
        raise AssertionError(f"the completed view is refused: {e.violations}\n{completed}") from None
    if convert.view_to_proto(again) != completed:
        raise AssertionError(f"the completed view changes when it comes back:\n{completed}")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput, custom_mutator=structural(game_pb2.SeatView))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
