"""The `cirulla` command line: play, hint, analyze, arena, serve, engine, habits, puzzles."""
from __future__ import annotations

import argparse
from typing import TypeAlias

from cirulla.solver import i18n

# what the `cirulla` parser's subcommands are added to (each module's add_parser takes it)
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _language_tag(text: str) -> str:
    try:
        i18n.language(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def seed_number(text: str) -> int:
    """A --seed: an integer 0 .. 2**64 - 1, the range of a request's seed (uint64)."""
    value = _integer(text)
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"{value} is out of range 0 .. 2**64 - 1")
    return value


def positive_int(text: str) -> int:
    """A count that must be given as 1 or more (--iterations, --threads, --pairs, --jobs): 0 is not "the default"."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def non_negative_int(text: str) -> int:
    """A count where 0 means none (--progress)."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def level_name(text: str) -> str:
    """A --level: a level's name, or its name in a language of the catalogs
    (amatore: casual), as `play` names the level it plays at."""
    from cirulla.solver.players import LEVEL_NAMES
    for name in LEVEL_NAMES:
        if text.casefold() in {i18n.translator(lang).gettext(name).casefold() for lang in i18n.LANGUAGES}:
            return name
    raise argparse.ArgumentTypeError(f"{text!r} is no level: {', '.join(LEVEL_NAMES)}")


def positive_ms(text: str) -> float:
    """A time in milliseconds (--time-ms, --hint-ms): a number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of milliseconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of milliseconds")
    return value


def add_lang_argument(p: argparse.ArgumentParser) -> None:
    """--lang: the language of what a command writes for players."""
    p.add_argument("--lang", type=_language_tag, metavar="TAG",
                   help=f"the language of the text for players: {', '.join(i18n.LANGUAGES)} (a BCP 47 tag, e.g. "
                        "it-IT; default: from LC_ALL, LC_MESSAGES or LANG, else en)")


def translator_for(args: argparse.Namespace) -> i18n.Translations:
    """The translator a command writes with: its --lang, else the locale's language."""
    return i18n.translator(getattr(args, "lang", None) or i18n.language_from_environment())
