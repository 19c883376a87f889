"""Text for players in their own language: English and Italian.

Every sentence a player reads (an analysis's reasons, the report and habits
pages, `cirulla play`) is written through a translator from `translator(tag)`
and its gettext methods, with named placeholders (``%(loss)s``) so that a
translation may order them as its language wants:

>>> _ = translator("it-IT").gettext
>>> _("%(card)s takes %(cards)s") % {"card": "7C", "cards": "2C 5S"}
'7C prende 2C 5S'
>>> translator("en").ngettext("%(count)s hand", "%(count)s hands", 2) % {"count": 2}
'2 hands'

The messages are in gettext catalogs, ``locale/<lang>/LC_MESSAGES/cirulla.po``
beside this module: Babel extracts them from the code and the templates
(babel.cfg) and the build compiles them to the ``.mo`` files read here
(setup.py), as it generates the protobuf code. To add or change a message
(the README's "Development" has the whole commands):

    pybabel extract -F babel.cfg ... -o build/cirulla.pot .
    pybabel update -i build/cirulla.pot -d solver/locale -D cirulla ...
    (translate the new entries of both catalogs), then pip install -e .

Never call _() inside an f-string: Babel does not find it there on Python 3.11.

The language is chosen per call (a request's BCP 47 tag, a `--lang` flag),
never process-wide: a server answers each client in its own language.
Figures keep one format in every language (``+0.25``, ``45%``): the texts are
built from them and tests find them there. Counts group their thousands as the
reader's language does (``whole``: 1,998 in English, 1.998 in Italian, where
1,998 would read as a number just short of 2).
"""
from __future__ import annotations

import gettext
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

__all__ = ["LANGUAGES", "DEFAULT_LANGUAGE", "DOMAIN", "LOCALE_DIR", "Translations", "language",
           "language_from_environment", "language_of", "translator", "whole", "N_"]

LANGUAGES = ("en", "it")            # the catalogs shipped; the messages in the code are English
DEFAULT_LANGUAGE = "en"
DOMAIN = "cirulla"
THOUSANDS = {"en": ",", "it": "."}  # a count's thousands separator, by language (CLDR's)
LOCALE_DIR = Path(__file__).with_name("locale")

Translations = gettext.NullTranslations     # gettext, ngettext, pgettext, npgettext

# BCP 47's shape (RFC 5646 section 2.1): a primary language subtag of letters, then
# subtags of letters and digits (script, region, variants, extensions, private use)
_TAG = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")
# a POSIX locale name, as LANG holds it: it_IT.UTF-8, it_IT@euro, C
_POSIX = re.compile(r"([A-Za-z]{2,8})(?:_[A-Za-z0-9]+)?(?:\.[\w-]+)?(?:@\w+)?")


def N_(message: str) -> str:
    """Marks a message for extraction where it is defined (a table of words);
    it is translated where it is used."""
    return message


def language(tag: str | None) -> str:
    """The catalog's language for a BCP 47 tag: "it" for it, it-IT, IT-ch; English
    for an unknown language, an empty tag or None.

    :raises ValueError: naming the tag, if it is not a well-formed BCP 47 tag.
    """
    if not tag:
        return DEFAULT_LANGUAGE
    if not _TAG.fullmatch(tag):
        raise ValueError(f"{tag!r} is not a language tag (BCP 47, e.g. it, it-IT, en)")
    primary = tag.split("-", 1)[0].lower()
    return primary if primary in LANGUAGES else DEFAULT_LANGUAGE


def language_from_environment(environ: Mapping[str, str] | None = None) -> str:
    """The language of the POSIX locale, as gettext reads it (LC_ALL, then
    LC_MESSAGES, then LANG: it_IT.UTF-8 is Italian); English if none is set, or
    for C, POSIX or a value that is no locale name."""
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            found = _POSIX.fullmatch(value)
            primary = found.group(1).lower() if found else ""
            return primary if primary in LANGUAGES else DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


@lru_cache(maxsize=len(LANGUAGES))
def _catalog(lang: str) -> Translations:
    try:
        return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang])
    except FileNotFoundError:
        raise RuntimeError(f"the compiled catalog {LOCALE_DIR / lang / 'LC_MESSAGES' / DOMAIN}.mo is missing: "
                           "the build writes it (pip install -e .)") from None


def translator(tag: str | None = None) -> Translations:
    """The translations for a BCP 47 tag (see `language`): gettext, ngettext,
    pgettext and npgettext. One object per language, shared.

    :raises ValueError: for a malformed tag.
    """
    return _catalog(language(tag))


def language_of(tr: Translations) -> str:
    """The language of a translator's catalog ("it"): its header's Language."""
    return tr.info().get("language", DEFAULT_LANGUAGE)


def whole(n: int, tr: Translations) -> str:
    """A count (playouts, iterations) with its thousands grouped as the reader's
    language groups them: 12,000 in English, 12.000 in Italian."""
    return f"{n:,}".replace(",", THOUSANDS.get(language_of(tr), ","))
