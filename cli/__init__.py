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


def add_lang_argument(p: argparse.ArgumentParser) -> None:
    """--lang: the language of what a command writes for players."""
    p.add_argument("--lang", type=_language_tag, metavar="TAG",
                   help=f"the language of the text for players: {', '.join(i18n.LANGUAGES)} (a BCP 47 tag, e.g. "
                        "it-IT; default: from LC_ALL, LC_MESSAGES or LANG, else en)")


def translator_for(args: argparse.Namespace) -> i18n.Translations:
    """The translator a command writes with: its --lang, else the locale's language."""
    return i18n.translator(getattr(args, "lang", None) or i18n.language_from_environment())
