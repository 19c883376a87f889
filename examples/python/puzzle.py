"""A puzzle in a client app: check a player's answer against a `cirulla.v1.Puzzle`
(a line of `cirulla puzzles --out`), then ask the engine for the position's
hint with `cirulla.v1.EngineService.GetHint`.

    python puzzle.py [ADDRESS] [PUZZLE_JSON] [ANSWER]

ADDRESS defaults to 127.0.0.1:50051 and PUZZLE_JSON to ../puzzle.json (next
to this folder): a Puzzle in protobuf's JSON mapping (a .jsonl file: its
first line). ANSWER is a move in its text form (`2C x 7D 6D`, `3H`,
`declare AS 2S 3S`), the player's.

It prints the puzzle, then whether the answer is right: a move is its card
and the *set* of table cards it takes (R-MOVE), so `2C x 7D 6D` names the
solution `2C x 6D 7D`; a wrong legal move is told with its reason (the
puzzle carries one for every legal move), any other move is not legal here.
Then the engine's best move for the puzzle's view, sent as it is as a
GetHintRequest's view, and whether it is the solution. Exit codes: 0 done
(right or wrong), 1 a failed call (`error: CODE: message`), 2 bad usage.

It needs only grpcio and the generated `cirulla.v1` modules, like hint.py;
in Python with the cirulla package, `puzzle_from_proto(msg).is_solution(text)`
(cirulla.server.convert) is the same check.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

import grpc
from google.protobuf import json_format

from cirulla.v1 import engine_service_pb2, engine_service_pb2_grpc, game_pb2, puzzle_pb2

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_PUZZLE = Path(__file__).resolve().parent.parent / "puzzle.json"
SERVICE_CONFIG = Path(__file__).resolve().parent.parent / "service_config.json"
DEADLINE_S = 10.0
USAGE = "usage: python puzzle.py [ADDRESS] [PUZZLE_JSON] [ANSWER]"
THEMES = {"SCOPA": "scopa", "SWEEP_AVOIDED": "sweep avoided", "SETTEBELLO": "settebello",
          "PRIMIERA": "primiera", "DIAMONDS": "diamonds", "DECLARATION": "declaration",
          "LAST_CAPTURE": "the last capture"}


class UsageError(Exception):
    pass


def move_key(card: str, captured: Iterable[str] = (), declared: Iterable[str] = (),
             declared_second: Iterable[str] = (), matta_as: str = "") -> tuple:
    """A move as an app compares two: the card, and the sets of cards it takes or
    declares (their order says nothing), in upper case."""
    def cards(names: Iterable[str]) -> frozenset[str]:
        return frozenset(c.upper() for c in names)
    # R-VC: two triples are one declaration whichever comes first
    groups = frozenset({cards(declared), cards(declared_second)} - {frozenset()})
    return card.upper(), cards(captured), groups, matta_as.upper()


def key_of(move: game_pb2.Move) -> tuple:
    """The key of a move message (its fields, as the engine fills them)."""
    return move_key(move.card, move.captured, move.declared, move.declared_second, move.matta_as)


def key_of_text(text: str) -> tuple:
    """The key of a move's text form: `7C x 2C 5S`, `7C`, `declare 2S 5C 7H=A + ...`."""
    words = text.strip()
    if words.lower().startswith("declare"):
        groups, named = [], ""
        for part in words[len("declare"):].split("+"):
            group = []
            for word in part.split():
                card, _, rank = word.partition("=")
                group.append(card)
                named = rank or named
            groups.append(group)
        return move_key("", (), groups[0], groups[1] if len(groups) > 1 else (), named)
    card, _, taken = words.partition(" x ")
    return move_key(card.strip(), taken.split())


def read_puzzle(file: str) -> puzzle_pb2.Puzzle:
    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {file}: {e}") from None
    if file.endswith(".jsonl"):
        text = text.splitlines()[0] if text.strip() else ""
    try:
        return json_format.Parse(text, puzzle_pb2.Puzzle())
    except json_format.ParseError as e:
        raise UsageError(f"{file}: not a cirulla.v1.Puzzle: {e}") from None


def check(puzzle: puzzle_pb2.Puzzle, answer: str) -> str:
    """The verdict on an answer, as a line."""
    key = key_of_text(answer)
    if key == key_of(puzzle.solution):
        return f"answer {answer}: right"
    for other in puzzle.others:
        if key == key_of(other.move):
            return f"answer {answer}: wrong, {other.loss:.2f} points behind: {other.reason}"
    return f"answer {answer}: not a legal move here"


def main(args: list[str]) -> int:
    if len(args) > 3 or "-h" in args or "--help" in args:
        raise UsageError(USAGE)
    address = args[0] if args else DEFAULT_ADDRESS
    puzzle = read_puzzle(args[1] if len(args) > 1 else str(DEFAULT_PUZZLE))
    theme = puzzle_pb2.PuzzleTheme.Name(puzzle.theme).removeprefix("PUZZLE_THEME_")
    print(f"puzzle {puzzle.id[:8]}: {THEMES.get(theme, theme.lower())}, difficulty {puzzle.difficulty} of 5")
    print(f"table: {' '.join(puzzle.view.table) or '(empty)'}")
    print(f"hand: {' '.join(puzzle.view.hand)}")
    if len(args) > 2:
        print(check(puzzle, args[2]))

    token = os.environ.get("CIRULLA_TOKEN")
    metadata = [("authorization", f"Bearer {token}")] if token else []
    options = [("grpc.service_config", SERVICE_CONFIG.read_text(encoding="utf-8")), ("grpc.enable_retries", 1)]
    with grpc.insecure_channel(address, options=options) as channel:
        engine = engine_service_pb2_grpc.EngineServiceStub(channel)
        # the position as it is, the hint's reasons in the puzzle's language
        request = engine_service_pb2.GetHintRequest(view=puzzle.view, language=puzzle.language)
        try:
            response = engine.GetHint(request, timeout=DEADLINE_S, metadata=metadata)
        except grpc.RpcError as e:
            print(f"error: {e.code().name}: {e.details()}", file=sys.stderr)
            return 1
    best = response.hint.best
    print(f"engine: {best.text}" + (", the solution" if key_of(best) == key_of(puzzle.solution) else
                                    f", not the solution {puzzle.solution.text}"))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
