"""`cirulla`: play against the engine, ask for hints, analyse games, run arenas."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rich.console import Console

from cirulla.solver.errors import CirullaError
from cirulla.solver.match import Match
from cirulla.solver.players import LEVEL_NAMES, make_player
from cirulla.solver.rules import PRESETS, Rules

EXAMPLES = """examples:
  cirulla play                          a 2-player match against the engine
  cirulla play --players 4 --level 2    you and an engine partner against two engines
"""

# exit codes
OK, USAGE, BAD_INPUT, UNREACHABLE = 0, 2, 3, 4


def _rules(args) -> Rules:
    options = {"players": args.players} if args.players else {}
    if args.target:
        options["target"] = args.target
    return Rules.preset(args.preset, **options)


def cmd_play(args, console: Console) -> int:
    from .play import Game
    rules = _rules(args)
    match = Match(rules, seed=args.seed, names=["You"] + [f"Engine {i}" for i in range(1, rules.players)])
    opponents = {seat: make_player(args.level, seed=None if args.seed is None else args.seed + seat)
                 for seat in range(1, rules.players)}
    save_to = Path(args.save or time.strftime("cirulla-%Y%m%d-%H%M%S.json"))
    return Game(match, 0, opponents, console=console, save_to=save_to).run()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cirulla", description=__doc__, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play a match against engine players",
                          description="Play a match in the terminal; the record is saved at the end and on quit.")
    play.add_argument("--preset", default="classic", choices=list(PRESETS))
    play.add_argument("--players", type=int, choices=(2, 3, 4, 5))
    play.add_argument("--target", type=int, help="points that end the match (default: the preset's)")
    play.add_argument("--level", default="greedy", choices=list(LEVEL_NAMES), help="the engines' strength")
    play.add_argument("--seed", type=int, help="seed for the deals and the engines")
    play.add_argument("--save", metavar="FILE", help="where to save the record")
    play.set_defaults(run=cmd_play)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    try:
        return args.run(args, console)
    except CirullaError as e:
        Console(stderr=True, highlight=False).print(f"[red]error:[/] {e}")
        return BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
