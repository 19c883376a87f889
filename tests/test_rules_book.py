"""The rules book (docs/rules.md) against the rest of the repository.

Every rule id the code, tests, schema and docs cite, and every id in an error
message the engine raises, must resolve to an anchor of the rules book; the
book must document every option and preset the code has; and no file may
point outside the repository.
"""
from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from cirulla.solver import Match, Move, Rules
from cirulla.solver.errors import CirullaError, IllegalMoveError, InvalidMoveError, RulesError, StateError
from cirulla.solver.rules import PRESETS

REPO = Path(__file__).resolve().parents[1]
BOOK = REPO / "docs" / "rules.md"
BOOK_NAME = "docs/rules.md"

# a rule id: R-MUST, R-ACE-ACE, R-V5, and the group names R-DECL-* and R-SC-*
ID_RE = re.compile(r"(?<![A-Za-z0-9_\-])R-[A-Z0-9]+(?:-[A-Z0-9]+)*(?:-\*)?")
ANCHOR_RE = re.compile(r'<a\s+id="([^"]+)"\s*>\s*</a>')
SCANNED = {".py", ".pyx", ".pxd", ".proto", ".md", ".toml", ".cfg", ".txt", ".json", ".js"}

# every rule of the book: sections 1-7 and the variants of section 9
BOOK_IDS = """
R-DECK R-VALUE R-PRIM R-SUITS R-CODE
R-SEATS R-SIDES R-DEALER
R-DEAL R-MONTE R-DEALER-BUONA
R-DECL-WHEN R-BUONA3 R-DECINO R-DECL-ONE R-MATTA R-DECL-CHOICE R-MATTA-CHOICE
R-TURN R-MUST R-SIMPLE R-FIFTEEN R-ACE R-ACE-ACE R-CHOICE R-MOVE R-SCOPA R-LEFTOVER
R-SC-SCOPE R-SC-BUONE R-SC-CARTE R-SC-DENARI R-SC-SETTEBELLO R-SC-PRIMIERA R-SC-GRANDE R-SC-PICCOLA R-CAPPOTTO
R-TARGET R-WINNER R-HANDS-LIMIT
R-CAPOTUN R-V13 R-V30 R-VC R-V5
""".split()

# paths that lead out of the repository, spelled in pieces so that this file
# does not contain them itself
OUTSIDE = ("../" + "shared", "/" + "work/", "shared" + "/RULES")
SPEC_NAME = "RULES" + ".md"


# --- helpers ---

def _book() -> str:
    assert BOOK.is_file(), f"{BOOK_NAME} is missing"
    return BOOK.read_text(encoding="utf-8")


def _anchors() -> list[str]:
    return ANCHOR_RE.findall(_book())


def _resolves(rule_id: str, anchors: set[str]) -> bool:
    if rule_id.endswith("-*"):                      # a group: some rule of it
        return any(a.startswith(rule_id[:-1]) for a in anchors)
    return rule_id in anchors


def _tracked() -> list[str]:
    """The repository's tracked files (relative paths), or skip without git."""
    try:
        out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (git clone the repository)")
    files = [f for f in out.decode("utf-8").split("\0") if f]
    assert len(files) > 20, "git ls-files listed almost nothing"
    return files


def _text(rel: str) -> str | None:
    path = REPO / rel
    if not path.is_file():                          # deleted in the working tree
        return None
    data = path.read_bytes()
    if b"\0" in data[:4096]:                        # binary
        return None
    return data.decode("utf-8", errors="replace")


def _files_to_check() -> list[str]:
    """Tracked files, plus the rules book and the license while they are new."""
    files = _tracked()
    for extra in (BOOK_NAME, "LICENSE"):
        if extra not in files and (REPO / extra).is_file():
            files.append(extra)
    return files


# --- the book itself ---

def test_the_book_has_the_numbered_sections_the_code_cites():
    headings = re.findall(r"^## (\d+)\. (.+)$", _book(), flags=re.M)
    numbers = [int(n) for n, _ in headings]
    assert numbers[:11] == list(range(1, 12)), headings
    titles = dict((int(n), t) for n, t in headings)
    assert titles[1] == "Cards" and titles[8] == "What each player knows" \
        and titles[9] == "Options and variants" and titles[10] == "Presets" \
        and titles[11] == "Worked examples", titles
    assert any(t.startswith("Where the sources were silent") for t in titles.values())


def test_anchors_are_unique_and_cover_every_rule():
    anchors = _anchors()
    dupes = sorted({a for a in anchors if anchors.count(a) > 1})
    assert not dupes, f"anchors defined twice in {BOOK_NAME}: {dupes}"
    missing = [i for i in BOOK_IDS if i not in anchors]
    assert not missing, f"rules without an anchor in {BOOK_NAME}: {missing}"
    extra = sorted(a for a in anchors if a.startswith("R-") and a not in BOOK_IDS)
    assert not extra, f"anchors for ids this test does not know (add them to BOOK_IDS): {extra}"


def test_every_rule_anchor_starts_its_rule_with_the_id_in_bold():
    text = _book()
    for rule_id in BOOK_IDS:
        labelled = re.findall(rf'<a id="{re.escape(rule_id)}"></a>\*\*{re.escape(rule_id)}\*\* — ', text)
        assert len(labelled) == 1, f'{rule_id}: want one `<a id="{rule_id}"></a>**{rule_id}** — ...`'


def test_the_book_links_within_itself_to_anchors_that_exist():
    anchors = set(_anchors())
    broken = sorted({f for f in re.findall(r"\]\(#([^)\s]+)\)", _book()) if f not in anchors})
    assert not broken, f"links in {BOOK_NAME} to anchors it does not have: {broken}"


def test_every_option_and_preset_is_documented():
    text = _book()
    section9 = text[text.index("## 9. "):text.index("## 10. ")]
    section10 = text[text.index("## 10. "):text.index("## 11. ")]
    options = [f.name for f in dataclasses.fields(Rules) if f.name != "name"]
    undocumented = [o for o in options if not re.search(rf"^\| `{o}` \|", section9, flags=re.M)]
    assert not undocumented, f"options missing from the table of section 9: {undocumented}"
    for option in options:                          # the default is the first value listed
        default = getattr(Rules(), option)
        row = re.search(rf"^\| `{option}` \| ([^|]+)\|", section9, flags=re.M).group(1)
        if default is None:
            first = "none"
        elif isinstance(default, bool):
            first = "on" if default else "off"
        else:
            first = str(default)
        assert row.strip().strip("`").startswith(first), f"{option}: default {first!r}, row says {row!r}"
    missing = [p for p in PRESETS if not re.search(rf"^\| `{p}`", section10, flags=re.M)]
    assert not missing, f"presets missing from the table of section 10: {missing}"
    for name, opts in PRESETS.items():
        row = re.search(rf"^\| `{name}`.*$", section10, flags=re.M).group(0)
        for option in opts:
            assert f"`{option}`" in row, f"preset {name}: {option} is not in its row"


def test_the_wire_rules_fields_are_documented():
    proto = (REPO / "proto" / "cirulla" / "v1" / "game.proto").read_text(encoding="utf-8")
    body = re.search(r"message Rules \{(.*?)\n\}", proto, flags=re.S).group(1)
    fields = re.findall(r"^\s*(?:optional\s+)?\w+\s+(\w+)\s*=\s*\d+;", body, flags=re.M)
    assert "preset" in fields and len(fields) > 10, fields
    text = _book()
    missing = [f for f in fields if f != "preset" and f"`{f}`" not in text]
    assert not missing, f"fields of cirulla.v1.Rules the rules book does not name: {missing}"


def test_license_is_mit():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Copyright (c) 2026 The cirulla authors" in text
    assert 'license = { text = "MIT" }' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


# --- every id the repository cites resolves ---

def test_every_rule_id_cited_in_the_repository_resolves():
    anchors = set(_anchors())
    where: dict[str, str] = {}
    for rel in _tracked():
        if rel == BOOK_NAME or Path(rel).suffix not in SCANNED:
            continue
        text = _text(rel)
        if text is None:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for rule_id in ID_RE.findall(line):
                where.setdefault(rule_id, f"{rel}:{lineno}")
    assert len(where) >= 30, f"only {len(where)} rule ids found in the tracked files: {sorted(where)}"
    unresolved = {i: f for i, f in where.items() if not _resolves(i, anchors)}
    assert not unresolved, f"rule ids with no anchor in {BOOK_NAME}:\n" + "\n".join(
        f"  {i}  (cited in {f})" for i, f in sorted(unresolved.items()))


# --- every id in an error message the engine raises resolves ---

def _dealt(rules: Rules | None = None, hands=("2S 3S 4S", "5H 6H KC"), table="5D JD QD KH") -> Match:
    """A first round dealt by seat 0: seat 1 is to move."""
    m = Match(rules or Rules(), dealer=0, manual_deal=True)
    m.deal(hands=list(hands), table=table)
    return m


def _late_declaration() -> None:
    m = _dealt()
    m.play("5H x 5D")
    m.play("declare 2S 3S 4S")
    m.play("2S")
    m.play("declare 6H KC")                         # seat 1 has played a card this round


def _bad_view() -> None:
    m = Match(Rules(), seed=1)
    dataclasses.replace(m.view(m.to_move), round=6).validate()


# (what, how to raise it, the error, whether the message must cite a rule id)
ERRORS = [
    ("a drop when a capture is mandatory", lambda: _dealt().play("5H"), IllegalMoveError, True),
    ("a capture that adds up to neither", lambda: _dealt().play("5H x JD"), IllegalMoveError, True),
    ("a card the seat does not hold", lambda: _dealt().play("AS"), IllegalMoveError, True),
    ("a card not on the table", lambda: _dealt().play("KC x 2S"), IllegalMoveError, True),
    ("cards that make no declaration", lambda: _dealt().play("declare 5H 6H KC"), IllegalMoveError, True),
    ("declaring another seat's cards", lambda: _dealt().play("declare 2S 3S 4S"), IllegalMoveError, True),
    ("declaring after playing", _late_declaration, IllegalMoveError, True),
    ("an ace that must sweep", lambda: _dealt(hands=("2S 3S 4S", "AH 6H KC"), table="5D 4C QD KH")
     .play("AH x 5D 4C"), IllegalMoveError, True),
    ("an ace on an ace", lambda: _dealt(hands=("2S 3S 4S", "AH 6H KC"), table="AD 6C JS 3D")
     .play("AH x 6C 3D"), IllegalMoveError, True),
    ("a group when a single card matches", lambda: _dealt(Rules(single_match_first=True), ("2S 3S 4S", "7C 6H KC"),
                                                          "7D 2C 5S 3D").play("7C x 2C 5S"), IllegalMoveError, True),
    ("a play before a mandatory declaration", lambda: _dealt(Rules(declarations="mandatory"), ("2S 3S 4S", "AH 2H 3C"),
                                                             "7D 2C 5S 3D").play("AH"), IllegalMoveError, True),
    ("a matta named to no purpose", lambda: _dealt(hands=("2S 3S 4S", "7H 5C 2D"), table="7D 2C 5S 3D")
     .play("declare 7H=3 5C 2D"), IllegalMoveError, True),
    ("naming a card that is not the matta", lambda: Move.parse("declare 7D=A 2C 3C"), InvalidMoveError, True),
    ("naming the matta a rank that is not", lambda: Move.parse("declare 7H=Z 2C 3C"), InvalidMoveError, True),
    ("three groups declared", lambda: Move.parse("declare AC + 2C + 3C"), InvalidMoveError, True),
    ("5 players without the variant", lambda: Rules.preset("classic", players=5), RulesError, True),
    ("6 players", lambda: Rules(players=6), RulesError, True),
    ("a bad capture option", lambda: Rules(capture="sometimes"), RulesError, True),
    ("a bad ace_on_ace", lambda: Rules(ace_on_ace="all"), RulesError, True),
    ("a bad declarations option", lambda: Rules(declarations="never"), RulesError, True),
    ("a bad matta", lambda: Rules(matta="7D"), RulesError, True),
    ("a bad target", lambda: Rules(target=0), RulesError, True),
    ("a bad hands", lambda: Rules(hands=0), RulesError, True),
    ("a switch that is not a bool", lambda: Rules(buona_stack=1), RulesError, True),
    ("re_bello not a bool", lambda: Rules(re_bello="yes"), RulesError, True),
    ("cirullone with five players", lambda: Rules.preset("five", cirullone=True), RulesError, True),
    ("a deal short of a holding", lambda: Match(Rules(), dealer=0, manual_deal=True)
     .deal(hands=["AD 2D 3D"], table="7D JD QD KH"), StateError, True),
    ("a deal of a card twice", lambda: Match(Rules(), dealer=0, manual_deal=True)
     .deal(hands=["AD 2D 3D", "4D 5D 3D"], table="7D JD QD KH"), StateError, True),
    ("a cirullone deal of 3 cards", lambda: Match(Rules(cirullone=True), dealer=0, manual_deal=True)
     .deal(hands=["AD 2D 3D", "4D 5D 6D"], table="7D JD QD KH"), StateError, True),
    ("a dealer that is no seat", lambda: Match(Rules(), dealer=7), StateError, True),
    ("a view past the last round", _bad_view, CirullaError, False),
]


def _message(raise_it, error) -> str:
    with pytest.raises(error) as info:
        raise_it()
    return str(info.value)


@pytest.mark.parametrize("what, raise_it, error, cites", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_cite_rules_that_resolve(what, raise_it, error, cites):
    message = _message(raise_it, error)
    ids = ID_RE.findall(message)
    if cites:
        assert ids, f"{what}: the message cites no rule id: {message}"
    anchors = set(_anchors())
    unresolved = [i for i in ids if not _resolves(i, anchors)]
    assert not unresolved, f"{what}: {unresolved} have no anchor in {BOOK_NAME}: {message}"


def test_error_messages_cite_many_rules():
    seen = set()
    for _, raise_it, error, _ in ERRORS:
        seen.update(ID_RE.findall(_message(raise_it, error)))
    assert len(seen) >= 20, f"the errors cite only {sorted(seen)}"
    anchors = set(_anchors())
    assert all(_resolves(i, anchors) for i in seen), sorted(i for i in seen if not _resolves(i, anchors))


# --- links into the book, and paths out of the repository ---

def test_links_into_the_rules_book_point_to_anchors():
    anchors = {a.lower() for a in _anchors()}
    broken = []
    for rel in _files_to_check():
        if not rel.endswith(".md"):
            continue
        text = _text(rel) or ""
        for lineno, line in enumerate(text.splitlines(), 1):
            for fragment in re.findall(r"rules\.md#([A-Za-z0-9_\-]+)", line):
                if fragment.lower() not in anchors:
                    broken.append(f"  {rel}:{lineno}: #{fragment}")
    assert not broken, f"links to anchors {BOOK_NAME} does not have:\n" + "\n".join(broken)


def _files_containing(needles: tuple[str, ...]) -> list[str]:
    found = []
    for rel in _files_to_check():
        text = _text(rel)
        if text is None:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for needle in needles:
                if needle in line:
                    found.append(f"  {rel}:{lineno}: {needle!r} in {line.strip()[:100]!r}")
    return found


def test_no_file_points_outside_the_repository():
    found = _files_containing(OUTSIDE)
    assert not found, "paths outside the repository:\n" + "\n".join(found)


def test_no_file_names_the_outside_spec():
    found = _files_containing((SPEC_NAME,))
    assert not found, f"references to {SPEC_NAME}, a file the repository does not have " \
                      f"(the rules book is {BOOK_NAME}):\n" + "\n".join(found)
