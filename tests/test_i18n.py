"""Every text a player reads in English and Italian (cirulla.solver.i18n).

The catalogs (solver/locale/<lang>/LC_MESSAGES/cirulla.po): every message has
both translations, with the same placeholders and markup; extracting the
messages again from the code and the templates (babel.cfg) gives exactly the
catalogs' messages; the compiled catalogs the package reads are the .po files'.
Then what a player sees in Italian: the analysis report (in headless Chromium,
its heading, a reason, the script's count, and no text cut at 360 px), the
habits page, `cirulla play`'s prompts, chosen by --lang or the locale; and no
English message left in the Italian pages, no template text outside the
catalogs.

The Chromium tests skip without a Chromium on the PATH (in CI a skip is a
failure: conftest.py).
"""
from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from browser_support import chromium, find_browser
from rich.console import Console
from test_analysis import drop_handing_a_scopa, record_where
from test_report import Dom, measure

from cirulla.cli import render
from cirulla.cli.main import main
from cirulla.cli.report import html_report
from cirulla.solver import Rules, record
from cirulla.solver.analysis import analyze_all, explain
from cirulla.solver.cards import Card
from cirulla.solver.i18n import LANGUAGES, LOCALE_DIR, language, language_from_environment, translator, whole
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = {lang: ROOT / "solver" / "locale" / lang / "LC_MESSAGES" / "cirulla.po" for lang in LANGUAGES}
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")
MARKUP = re.compile(r"</?[a-z]+\b|\[/?[a-z ]*\]")       # HTML tags, rich's [bold] ... [/]
CLI = [sys.executable, "-m", "cirulla.cli.main"]


def catalog(lang: str):
    with CATALOGS[lang].open("rb") as f:
        return read_po(f, locale=lang)


def messages(lang: str) -> list:
    return [m for m in catalog(lang) if m.id]


# --- the language of a tag ---------------------------------------------------------------

@pytest.mark.parametrize("tag, lang", [("it", "it"), ("it-IT", "it"), ("IT-ch", "it"), ("en", "en"), ("en-GB", "en"),
                                       ("fr", "en"), ("zh-Hant-TW", "en"), ("", "en"), (None, "en")])
def test_a_tag_chooses_its_catalog_and_an_unknown_language_english(tag, lang):
    assert language(tag) == lang
    assert translator(tag).info()["language"] == lang


@pytest.mark.parametrize("tag", ["it_IT", "it-", "-it", "it IT", "1t", "it-IT.UTF-8", "english!", "it-toolongsubtag"])
def test_a_malformed_tag_is_an_error_naming_it(tag):
    with pytest.raises(ValueError, match=re.escape(repr(tag))):
        translator(tag)


@pytest.mark.parametrize("environ, lang", [({"LANG": "it_IT.UTF-8"}, "it"), ({"LANG": "en_GB.UTF-8"}, "en"),
                                           ({"LANG": "C.UTF-8"}, "en"), ({"LANG": "POSIX"}, "en"), ({}, "en"),
                                           ({"LC_ALL": "it_IT@euro", "LANG": "en_US"}, "it"),
                                           ({"LC_MESSAGES": "it_CH", "LANG": "en_US"}, "it"),
                                           ({"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "it_IT"}, "en"),
                                           ({"LANG": "not a locale"}, "en")])
def test_the_locale_gives_the_default_language(environ, lang):
    assert language_from_environment(environ) == lang


# --- the catalogs --------------------------------------------------------------------------

def forms(m) -> list[str]:
    return list(m.id) if m.pluralizable else [m.id]


def translations(m) -> list[str]:
    return list(m.string) if m.pluralizable else [m.string]


def test_counts_group_thousands_as_the_readers_language_does(capsys):
    """1,998 playouts in English; in Italian 1.998 (1,998 reads there as a number just short of 2)."""
    assert [whole(n, translator("en")) for n in (7, 1_998, 12_000_000)] == ["7", "1,998", "12,000,000"]
    assert [whole(n, translator("it-IT")) for n in (7, 1_998, 12_000_000)] == ["7", "1.998", "12.000.000"]
    view = Path(__file__).parents[1] / "examples" / "view.json"
    for lang, count in (("en", r"\d,\d{3} playouts"), ("it", r"\d\.\d{3} simulazioni")):
        assert main(["hint", "--view", str(view), "--iterations", "2000", "--lang", lang]) == 0
        out, _ = capsys.readouterr()
        assert re.search(count, out), out


@pytest.mark.parametrize(("method", "english", "italian"), [
    (epb.SEARCH_METHOD_ISMCTS, "search, 1,998 playouts, 7 ms", "ricerca, 1.998 simulazioni, 7 ms"),
    (epb.SEARCH_METHOD_FLAT, "simple search, 1,998 playouts, 7 ms", "ricerca semplice, 1.998 simulazioni, 7 ms"),
    (epb.SEARCH_METHOD_EXACT, "solved exactly, 7 ms", "calcolo esatto, 7 ms"),
    (epb.SEARCH_METHOD_FORCED, "the only move, 7 ms", "mossa obbligata, 7 ms"),
])
def test_a_hints_caption_says_how_it_was_found_in_the_players_words(method, english, italian):
    """The method as a player says it, not the enum's name (an Italian read
    "ismcts, 1.998 simulazioni"); an exact solve or a forced move counts no playouts."""
    hint = epb.Hint(stats=epb.EngineStats(method=method, iterations=1_998, elapsed_ms=7.2))
    for lang, caption in (("en", english + "; ranked by expected points"),
                          ("it", italian + "; in ordine di punti attesi")):
        assert render.hint_table(hint, tr=translator(lang)).caption == caption


def test_a_hints_moves_say_declare_in_the_players_words_and_star_the_matta():
    """The hint table drew a declaration in its text form's English ("declare
    6♦ 6♥ 7♥=6") for an Italian, and no card as the matta."""
    hint = epb.Hint(moves=[epb.MoveEvaluation(move=pb.Move(text="declare 6D 6H 7H=6")),
                           epb.MoveEvaluation(move=pb.Move(text="7H x 2S 5D"))])
    console = Console(record=True, width=200, color_system=None)
    console.print(render.hint_table(hint, tr=translator("it"), matta=Card.parse("7H")))
    rows = console.export_text()
    assert "dichiara 6♦ 6♥ 7♥*=6" in rows and "7♥* × 2♠ 5♦" in rows and "declare" not in rows
    assert render.move_text("declare 2S 5C 7H=A") == render.move_text("declare 2S 5C 7H=A", tr=translator("en"))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_has_its_translation_with_the_same_placeholders_and_markup(lang):
    cat = catalog(lang)
    assert cat.num_plurals == 2 and not cat.fuzzy
    found = messages(lang)
    assert len(found) > 250
    for m in found:
        texts = translations(m)
        assert len(texts) == len(forms(m)) and all(t.strip() for t in texts), (lang, m.id)
        assert "fuzzy" not in m.flags, (lang, m.id)
        wanted = set().union(*(PLACEHOLDER.findall(f) for f in forms(m)))
        for text in texts:
            # a plural form may leave out the count ("1 carta" names no %(count)s), never add one
            got = set(PLACEHOLDER.findall(text))
            assert got <= wanted and (got == wanted or m.pluralizable), (lang, m.id, text)
            assert text.count("%") == len(PLACEHOLDER.findall(text)), (lang, m.id, text)     # no stray %
            assert sorted(MARKUP.findall(text)) == sorted(MARKUP.findall(forms(m)[0])), (lang, m.id, text)
    assert not list(cat.check())                    # Babel's own checks: python-format and plural forms


def test_the_english_catalog_says_what_the_code_says():
    """English is the code's own language: its catalog changes no message."""
    for m in messages("en"):
        assert translations(m) == forms(m), m.id


def test_the_catalogs_hold_exactly_the_messages_of_the_code_and_templates(monkeypatch):
    """Extracting again (babel.cfg) finds no message the catalogs lack, and the
    catalogs hold none the code no longer has; no message is used both alone
    and as the first form of a plural (gettext would not find the lone one)."""
    monkeypatch.chdir(ROOT)
    with open("babel.cfg") as f:
        method_map, options_map = parse_mapping_cfg(f)
    single: set[tuple[str | None, str]] = set()
    plural: set[tuple[str | None, str]] = set()
    for _file, _line, message, _comments, context in extract_from_dir(".", method_map, options_map):
        (plural if isinstance(message, tuple) else single).add((context, message[0] if isinstance(message, tuple)
                                                                else message))
    assert not single & plural, single & plural
    extracted = single | plural
    for lang in LANGUAGES:
        held = {(m.context, m.id[0] if m.pluralizable else m.id) for m in messages(lang)}
        assert extracted - held == set(), f"{lang}: new messages: run pybabel extract and update (cirulla.solver.i18n)"
        assert held - extracted == set(), f"{lang}: messages the code no longer has"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_compiled_catalog_is_the_po_file(lang):
    """The .mo the package reads (built by the install) says what the .po says:
    reinstall (pip install -e .) after changing a catalog."""
    tr = translator(lang)
    for m in messages(lang):
        if m.pluralizable:
            got = [tr.npgettext(m.context, m.id[0], m.id[1], n) if m.context else tr.ngettext(m.id[0], m.id[1], n)
                   for n in (1, 2)]
        else:
            got = [tr.pgettext(m.context, m.id) if m.context else tr.gettext(m.id)]
        assert got == translations(m), (lang, m.id)
    assert (LOCALE_DIR / lang / "LC_MESSAGES" / "cirulla.mo").is_file()


def test_every_template_text_goes_through_the_catalogs():
    """What the templates write outside their {{ }} and {% %}: tags, entities,
    punctuation, figures, no words (the words are _() calls and trans blocks)."""
    from jinja2 import Environment
    env = Environment(extensions=["jinja2.ext.i18n"])
    for path in sorted((ROOT / "cli" / "templates").glob("*.html")):
        data, in_trans, after_begin = [], False, False
        for _, kind, value in env.lex(path.read_text(encoding="utf-8")):
            if kind == "name" and after_begin and value in ("trans", "endtrans"):
                in_trans = value == "trans"             # a trans block's text is its message
            if kind != "whitespace":
                after_begin = kind == "block_begin"
            if kind == "data" and not in_trans:
                data.append(value)
        text = re.sub(r"<(style|script)\b.*?</\1>", " ", "".join(data), flags=re.S)
        shown = re.findall(r'\b(?:title|aria-label|alt)="([^"]*)"', text)     # attributes a person reads
        text = re.sub(r"<!--.*?-->|<[^>]*>|&\w+;", " ", text, flags=re.S)
        words = set(re.findall(r"[A-Za-z]{2,}", " ".join([text, *shown]))) - {"Cirulla"}
        assert not words, f"{path.name}: text outside the catalogs: {sorted(words)}"


# --- what an Italian player sees ------------------------------------------------------------

def english_left(page: str) -> list[str]:
    """The English messages (of a few words, with no placeholder, unlike their
    Italian) found in an Italian page's text."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    text = " ".join(html.unescape(re.sub(r"<[^>]*>", " ", page)).split())
    found = []
    for m in messages("it"):
        for english, italian in zip(forms(m), translations(m), strict=True):
            if "%" in english or english == italian or len(english.split()) < 2 or english in italian:
                continue
            if re.search(rf"(?<!\w){re.escape(english)}(?!\w)", text):
                found.append(english)
    return found


@pytest.fixture(scope="module")
def blunder_record(tmp_path_factory):
    """Two hands with a known blunder (a drop that hands over a scopa), saved as a record."""
    match, event = record_where(drop_handing_a_scopa, rules=Rules(hands=2))
    path = tmp_path_factory.mktemp("i18n") / "game.json"
    record.save(match, path)
    return path, match, event


@pytest.fixture(scope="module")
def italian_report(blunder_record, tmp_path_factory):
    """`cirulla analyze RECORD --html r.html --lang it`, as a player runs it."""
    path, match, event = blunder_record
    page = tmp_path_factory.mktemp("report-it") / "r.html"
    done = subprocess.run([*CLI, "analyze", str(path), "--html", str(page), "--lang", "it", "--iterations", "1500",
                           "--seed", "1"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    assert "Rapporto scritto in" in done.stdout and "Gli errori più costosi" not in done.stdout
    assert "[bold]" not in done.stdout and "Analisi" in done.stdout and "Posizioni" in done.stdout
    decisions, _ = analyze_all(match, iterations=1500, seed=1)
    blunder = next(d for d in decisions if d.event_index == event)
    return page, blunder


def test_the_italian_report_in_chromium(italian_report, tmp_path):
    page, blunder = italian_report
    browser = find_browser()
    done = chromium(browser, tmp_path, "--virtual-time-budget=3000", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Dom(done.stdout)
    assert '<html lang="it">' in done.stdout
    headings = [t for _, t in dom.find("h2")]
    assert "Gli errori più costosi" in headings and "Com'è andata la partita" in headings
    assert "Tutte le decisioni" in headings and "The costliest errors" not in headings
    reason = " ".join(explain(blunder, translator("it")).split())
    assert "chi gioca dopo fa scopa con probabilità" in reason and "mossa migliore" in reason
    shown = [t for a, t in dom.find("p", class_="why") if str(blunder.judgement) in a.get("class", "")]
    # the reason as drawn (its card codes as symbols: 7D -> 7♦), its figures as explain() writes them
    percent = f"{blunder.played_scopa_risk:.0%}"
    assert any(f"chi gioca dopo fa scopa con probabilità {percent}" in t and f"vale {blunder.loss:.2f} punti in più"
               in t for t in shown), shown
    # the script wrote the count of the decision in focus in Italian
    (_, count), = dom.find("span", id="count")
    assert re.fullmatch(r"decisione \d+ di \d+", count), count
    assert [t for _, t in dom.find("span", class_="badge") if t in ("errore grave", "imprecisione", "errore")]


def test_the_italian_report_keeps_no_english_message(italian_report):
    page, _ = italian_report
    assert english_left(page.read_text(encoding="utf-8")) == []


def test_the_italian_report_at_360_pixels_cuts_no_text(italian_report, tmp_path):
    got = measure(find_browser(), tmp_path, italian_report[0], 360)
    assert got["inner"] == 360 and got["scroll"] <= got["client"], got
    assert got["cut"] == [], got
    [graph] = got["scrolls"]
    assert "scorre di lato" in graph["hint"]


def test_the_same_page_in_english_and_in_italian_differs_only_in_words(blunder_record):
    path, match, _ = blunder_record
    decisions, summary = analyze_all(match, iterations=500, seed=2)
    english, italian = (html_report(match, decisions, summary, translator(lang)) for lang in ("en", "it"))
    assert english == html_report(match, decisions, summary)          # English by default
    assert '<html lang="en">' in english and '<html lang="it">' in italian
    # the same figures and cards: every data attribute alike
    attributes = re.compile(r'data-(?!label|pattern)[\w-]+="[^"]*"')      # (data-label: a column's name)
    assert attributes.findall(english) == attributes.findall(italian)


def test_the_habits_page_and_terminal_in_italian(capsys, tmp_path):
    """A reason in the habits' examples is explained again in Italian from the
    decision's figures (the analysis line holds the English one)."""
    from test_habits import play

    from cirulla.cli.analyze import game_analysis
    from cirulla.cli.batch import game_id, line_text
    lines = []
    for seed in range(6):
        m = play(seed)
        decisions, summary = analyze_all(m, iterations=300, seed=seed, jobs=1)
        lines.append(line_text(game_id(record.to_proto(m)), f"g{seed}.json", game_analysis(decisions, summary)))
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = tmp_path / "habits.html"
    code = main(["habits", str(results), "--html", str(page), "--lang", "it"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "Abitudini su 6 partite" in out and "Pagina scritta in" in out and "più spesso" in out
    # the costliest examples name their moves as cards (3♣), never by code (3C: an Italian
    # reader would take the C for cuori)
    examples = out[out.index("più spesso"):out.index("Pagina scritta in")]
    assert re.search("[♦♥♣♠]", examples) and not re.search(r"\b[A2-7JQK][DHCS]\b", examples), examples
    text = page.read_text(encoding="utf-8")
    assert '<html lang="it">' in text and "Precisione nel tempo" in text and "Per tipo di errore" in text
    reasons = re.findall(r'<p class="why">(.*?)</p>', text, re.S)
    assert reasons and all("la mossa migliore" in r for r in reasons)
    assert english_left(text) == []


# --- cirulla play --------------------------------------------------------------------------

def play_in(*args: str, env: dict[str, str] | None = None, stdin: str = "help\nhint\n1\nundo\nquit\n"):
    return subprocess.run([*CLI, "play", "--hands", "1", "--seed", "3", "--level", "greedy", "--hint-ms", "50",
                           *args], input=stdin, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "120", **(env or {})})


def test_play_speaks_italian_with_lang_it(tmp_path):
    save = tmp_path / "p.json"
    done = play_in("--lang", "it", "--save", str(save))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for italian in ("Giochi al posto 0. La matta (il jolly) è 7♥*.", "Scrivi aiuto per i comandi.",
                    "Mano 1", "Tavolo:", "Le tue carte:",
                    "Comandi: il numero di una mossa", "La classifica delle tue mosse secondo il motore",
                    "rischio scopa", "In questa mano: Tu", f"Partita salvata in {save}",
                    "perché", "seconda mossa migliore",      # the hint's reasons
                    "motori al livello avido"):                 # the level's name, as GetEngineInfo's label
        assert italian in " ".join(out.split()), italian
    assert "Type help" not in out and "on the table" not in out and english_left(out) == []
    assert record.load(save).names == ("Tu", "Motore 1")


def test_play_takes_its_language_from_the_locale_and_lang_wins(tmp_path):
    italian = play_in("--save", str(tmp_path / "a.json"), env={"LANG": "it_IT.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""},
                      stdin="quit\n")
    assert italian.returncode == 0 and "Scrivi aiuto per i comandi." in " ".join(italian.stdout.split())
    english = play_in("--save", str(tmp_path / "b.json"), "--lang", "en-GB",
                      env={"LANG": "it_IT.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}, stdin="quit\n")
    assert english.returncode == 0 and "Type help for commands." in " ".join(english.stdout.split())


def test_a_malformed_lang_is_a_usage_error_naming_it(capsys):
    for command in (["play"], ["analyze", "game.json"], ["habits", "results.jsonl"], ["hint", "game.json"]):
        with pytest.raises(SystemExit) as stop:
            main([*command, "--lang", "it_IT!"])
        assert stop.value.code == 2
        assert "'it_IT!' is not a language tag" in capsys.readouterr().err


def test_why_a_move_is_illegal_in_italian_cites_the_same_rule():
    """Match.why_illegal and SeatView.why_illegal in the player's language: the
    same facts and rule ids as the English reason, the Italian words."""
    from cirulla.solver import Match
    m = Match(Rules.preset("classic"), seed=7)              # seat 0: 3S 4S QD; table JH QS KD KH
    it = translator("it")
    cases = {"QD": ("R-MUST", "può prendere, e prendere è obbligatorio"),
             "5C": ("R-TURN", "il posto 0 non ha in mano 5C"),
             "QD x AS": ("R-MOVE", "AS non è in tavola"),
             "QD x JH": ("R-SIMPLE", "QD prende carte che fanno il suo valore, 9")}
    for move, (rule, words) in cases.items():
        english, italian = m.why_illegal(move), m.why_illegal(move, tr=it)
        assert rule in english and rule in italian and words in italian, (english, italian)
        assert italian.split(":")[0] == english.split(":")[0] == move
    assert m.view(0).why_illegal("5C", tr=it) == m.why_illegal("5C", tr=it)
    assert m.why_illegal("QD x QS", tr=it) is None
