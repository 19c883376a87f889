"""`cirulla analyze --html`: the analysis as one self-contained page (inline
CSS and SVG, no scripts, nothing fetched): the evaluation graph with the
errors and the luck of each deal, the per-player summary, where the result
came from, and every decision."""
from __future__ import annotations

import html
import re
from collections.abc import Sequence

from cirulla.solver import analysis
from cirulla.solver.analysis import Decision, PointKind, Summary
from cirulla.solver.cards import RANKS, SUITS, Card
from cirulla.solver.match import Match

SIDE_COLOURS = ("#2563eb", "#db2777")
GRADE_COLOURS = {"inaccuracy": "#d4a106", "mistake": "#f97316", "blunder": "#dc2626"}
_CARD = re.compile(rf"\b([{RANKS}])([{SUITS}])(?![A-Za-z])")

_ROOT = (f":root {{ --ink:#1f2937; --muted:#6b7280; --line:#e5e7eb; --bg:#f8fafc; "
         f"--s0:{SIDE_COLOURS[0]}; --s1:{SIDE_COLOURS[1]}; --inacc:{GRADE_COLOURS['inaccuracy']}; "
         f"--mist:{GRADE_COLOURS['mistake']}; --blun:{GRADE_COLOURS['blunder']}; }}")
CSS = _ROOT + """
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
       color:var(--ink); background:var(--bg); }
main { max-width:1280px; margin:0 auto; padding:28px 24px 48px; }
h1 { font-size:26px; margin:0 0 4px; letter-spacing:-.01em; }
h2 { font-size:18px; margin:0 0 12px; }
.sub { color:var(--muted); margin:0 0 22px; }
.score { font-weight:600; color:var(--ink); }
section { background:#fff; border:1px solid var(--line); border-radius:12px; padding:18px 20px; margin:0 0 18px;
          box-shadow:0 1px 2px rgba(0,0,0,.04); }
.players { display:grid; grid-template-columns:repeat(auto-fit,minmax(250px,1fr)); gap:14px; }
.player { border:1px solid var(--line); border-radius:10px; padding:14px 16px; border-top:4px solid var(--side); }
.player h3 { margin:0 0 6px; font-size:16px; }
.acc { font-size:38px; font-weight:700; line-height:1; }
.acc small { font-size:14px; font-weight:500; color:var(--muted); margin-left:4px; }
.chips { display:flex; gap:6px; flex-wrap:wrap; margin:10px 0 8px; }
.chip { border-radius:999px; padding:2px 9px; font-size:13px; font-weight:600; background:#f3f4f6; }
.chip.inaccuracy { background:#fef3c7; color:#92400e; } .chip.mistake { background:#ffedd5; color:#9a3412; }
.chip.blunder { background:#fee2e2; color:#991b1b; }
.kv { display:grid; grid-template-columns:1fr auto; gap:2px 12px; font-size:13px; color:var(--muted); }
.kv b { color:var(--ink); font-weight:600; text-align:right; }
svg { width:100%; height:auto; display:block; }
.legend { display:flex; gap:16px; flex-wrap:wrap; font-size:13px; color:var(--muted); margin-top:8px; }
.legend i { display:inline-block; width:10px; height:10px; border-radius:50%; margin-right:5px; vertical-align:-1px; }
table { border-collapse:collapse; width:100%; font-size:13.5px; }
th, td { padding:6px 8px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { font-size:12px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); font-weight:600; }
td.n, th.n { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.who, td.mv { white-space:nowrap; }
.scroll { overflow-x:auto; } table.dec th, table.dec td { padding:6px 6px; }
tr.inaccuracy td:first-child { box-shadow:inset 3px 0 var(--inacc); }
tr.mistake td:first-child { box-shadow:inset 3px 0 var(--mist); }
tr.blunder td:first-child { box-shadow:inset 3px 0 var(--blun); }
tr.blunder { background:#fef2f2; } tr.mistake { background:#fff7ed; } tr.inaccuracy { background:#fffbeb; }
tr.forced { color:var(--muted); }
.badge { font-size:12px; font-weight:700; border-radius:4px; padding:1px 6px; color:#fff; }
.badge.inaccuracy { background:var(--inacc); } .badge.mistake { background:var(--mist); }
.badge.blunder { background:var(--blun); } .badge.forced { background:#9ca3af; }
.c { font-weight:600; white-space:nowrap; } .c.r { color:#c81e1e; }
.pos { color:#15803d; } .neg { color:#b91c1c; } .dim { color:var(--muted); }
.split td.n b { font-size:15px; }
.bar { display:flex; height:12px; border-radius:3px; overflow:hidden; background:#f3f4f6; min-width:160px; }
.note { color:var(--muted); font-size:13px; margin:10px 0 0; }
.key { margin-right:14px; } .key i { display:inline-block; width:10px; height:10px; border-radius:2px;
  margin-right:5px; vertical-align:-1px; }
footer { color:var(--muted); font-size:12.5px; }
footer p { margin:4px 0; }
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def cards_html(text: str) -> str:
    """A move's text with suit symbols, red suits red."""
    def one(m: re.Match) -> str:
        c = Card.parse(m.group(0))
        return f'<span class="c{" r" if c.suit < 2 else ""}">{_e(c.symbol)}</span>'
    return _CARD.sub(one, _e(text).replace(" x ", " × "))


def _num(x: float, digits: int = 2, signed: bool = True) -> str:
    cls = "pos" if x > 0.005 else "neg" if x < -0.005 else "dim"
    return f'<span class="{cls}">{x:+.{digits}f}</span>' if signed else f"{x:.{digits}f}"


# --- the evaluation graph -------------------------------------------------------

def graph_svg(summary: Summary, decisions: Sequence[Decision], side_names: Sequence[str],
              names: Sequence[str]) -> str:
    """Side 0's expected match margin after every event, the errors on it and
    the luck of each deal below it."""
    points = summary.timeline
    if not points:
        return ""
    by_number = {d.number: d for d in decisions}
    W, left, right = 1040, 56, 16
    top, plot_h, gap, luck_h, bottom = 26, 250, 34, 86, 26
    H = top + plot_h + gap + luck_h + bottom
    n = len(points)
    x = [left + (W - left - right) * i / max(n - 1, 1) for i in range(n)]
    lo = min(0.0, min(p.margin for p in points))
    hi = max(0.0, max(p.margin for p in points))
    pad = max(2.0, 0.08 * (hi - lo))
    lo, hi = lo - pad, hi + pad

    def y(v: float) -> float:
        return top + plot_h * (hi - v) / (hi - lo)

    out = [f'<svg id="evaluation" viewBox="0 0 {W} {H}" role="img" data-points="{n}" '
           f'aria-label="Expected score margin after each event">']
    # hands as bands
    hands = sorted({p.hand for p in points})
    for h in hands:
        idx = [i for i, p in enumerate(points) if p.hand == h]
        x0, x1 = x[idx[0]], x[idx[-1]]
        if h % 2:
            out.append(f'<rect x="{x0:.1f}" y="{top}" width="{x1 - x0:.1f}" height="{plot_h + gap + luck_h}" '
                       f'fill="#f8fafc"/>')
        out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{top - 9}" text-anchor="middle" font-size="12" '
                   f'fill="#6b7280">Hand {h + 1}</text>')
        if idx[0] > 0:
            out.append(f'<line x1="{x0:.1f}" x2="{x0:.1f}" y1="{top}" y2="{top + plot_h + gap + luck_h}" '
                       f'stroke="#e5e7eb"/>')
    # y grid
    step = _nice_step((hi - lo) / 5)
    v = step * int(lo / step)
    while v <= hi:
        if v >= lo:
            dash = ' stroke="#9ca3af" stroke-dasharray="4 3"' if v == 0 else ' stroke="#eef0f3"'
            out.append(f'<line x1="{left}" x2="{W - right}" y1="{y(v):.1f}" y2="{y(v):.1f}"{dash}/>')
            out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="11" '
                       f'fill="#6b7280">{v:+g}</text>')
        v += step
    # who is ahead, along the y axis
    zero = y(0)
    for side, (a, b) in enumerate(((top, zero), (zero, top + plot_h))):
        if b - a > 40:
            cy = (a + b) / 2
            out.append(f'<text x="14" y="{cy:.1f}" transform="rotate(-90 14 {cy:.1f})" text-anchor="middle" '
                       f'font-size="12" font-weight="600" fill="{SIDE_COLOURS[side]}">'
                       f'{_e(side_names[side])} ahead</text>')
    # the line, filled towards zero in each side's colour
    path = " ".join(f"{'M' if i == 0 else 'L'}{x[i]:.1f},{y(p.margin):.1f}" for i, p in enumerate(points))
    area = f"{path} L{x[-1]:.1f},{zero:.1f} L{x[0]:.1f},{zero:.1f} Z"
    out.append('<defs>'
               f'<clipPath id="above"><rect x="0" y="0" width="{W}" height="{zero:.1f}"/></clipPath>'
               f'<clipPath id="below"><rect x="0" y="{zero:.1f}" width="{W}" height="{H}"/></clipPath></defs>')
    out.append(f'<path d="{area}" fill="{SIDE_COLOURS[0]}" fill-opacity=".13" clip-path="url(#above)"/>')
    out.append(f'<path d="{area}" fill="{SIDE_COLOURS[1]}" fill-opacity=".13" clip-path="url(#below)"/>')
    out.append(f'<path id="margin-line" d="{path}" fill="none" stroke="#374151" stroke-width="1.6" '
               f'stroke-linejoin="round"/>')
    # hand ends: the score margin
    for i, p in enumerate(points):
        if p.kind is PointKind.END:
            out.append(f'<circle cx="{x[i]:.1f}" cy="{y(p.margin):.1f}" r="3.5" fill="#374151">'
                       f'<title>End of hand {p.hand + 1}: score margin {p.margin:+.0f}</title></circle>')
    # errors
    for i, p in enumerate(points):
        d = by_number.get(p.decision) if p.kind is PointKind.TURN else None
        if d is None or d.judgement is None:
            continue
        r = {"inaccuracy": 4.5, "mistake": 5.5, "blunder": 7}[d.judgement]
        tip = (f"{names[d.seat]}, hand {d.hand + 1} round {d.round + 1}: {d.played} — {d.judgement}, "
               f"lost {d.loss:.2f} points; best {d.best}")
        out.append(f'<circle class="err {d.judgement}" data-decision="{d.number}" cx="{x[i]:.1f}" '
                   f'cy="{y(p.margin):.1f}" r="{r}" fill="{GRADE_COLOURS[d.judgement]}" stroke="#fff" '
                   f'stroke-width="1.5"><title>{_e(tip)}</title></circle>')
    # luck of each deal, below
    ly0 = top + plot_h + gap
    mid = ly0 + luck_h / 2
    biggest = max([abs(dl.luck) for dl in summary.deals] + [1.0])
    out.append(f'<text x="{left - 8}" y="{ly0 - 10}" text-anchor="end" font-size="11" fill="#6b7280">luck</text>')
    out.append(f'<text x="{left + 6}" y="{ly0 - 10}" font-size="12" fill="#6b7280">'
               f'Luck of each deal (points of expected margin; up: good for {_e(side_names[0])})</text>')
    out.append(f'<line x1="{left}" x2="{W - right}" y1="{mid:.1f}" y2="{mid:.1f}" stroke="#d1d5db"/>')
    where = {p.event_index: i for i, p in enumerate(points) if p.kind is PointKind.DEAL}
    bw = max(3.0, min(10.0, (W - left - right) / max(n, 1) * 0.9))
    for dl in summary.deals:
        i = where.get(dl.event_index)
        if i is None:
            continue
        h = (luck_h / 2 - 4) * abs(dl.luck) / biggest
        colour = SIDE_COLOURS[0] if dl.luck >= 0 else SIDE_COLOURS[1]
        yb = mid - h if dl.luck >= 0 else mid
        out.append(f'<rect class="luck" data-luck="{dl.luck:.3f}" x="{x[i] - bw / 2:.1f}" y="{yb:.1f}" '
                   f'width="{bw:.1f}" height="{max(h, 0.8):.1f}" fill="{colour}" rx="1.5">'
                   f'<title>Hand {dl.hand + 1}, deal of round {dl.round + 1}: {dl.luck:+.2f} for '
                   f'{_e(side_names[0])}</title></rect>')
    out.append(f'<text x="{W - right}" y="{H - 6}" text-anchor="end" font-size="11" fill="#9ca3af">'
               f'events of the match →</text>')
    out.append("</svg>")
    return "\n".join(out)


def _nice_step(raw: float) -> float:
    for s in (1, 2, 5, 10, 20, 25, 50, 100):
        if raw <= s:
            return float(s)
    return 100.0 * round(raw / 100 + 0.5)


# --- the page -------------------------------------------------------------------

def html_report(match: Match, decisions: Sequence[Decision], summary: Summary) -> str:
    r = match.rules
    names = list(match.names)
    sides = match.side_names
    score = " – ".join(f'{_e(n)} <span class="score">{s}</span>' for n, s in zip(sides, summary.scores, strict=False))
    goal = f"{r.hands} hand{'s' if r.hands > 1 else ''}" if r.hands else f"to {r.target}"
    outcome = "unfinished" if summary.winner is None else f"{_e(sides[summary.winner])} won"
    title = " vs ".join(sides)
    parts = [f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cirulla analysis — {_e(title)}</title>
<style>{CSS}</style></head>
<body><main>
<h1>Cirulla — game analysis</h1>
<p class="sub">{_e(r.name)} · {r.players} players · {goal} · {score} · <b>{outcome}</b></p>"""]
    parts.append(_players(summary))
    if summary.timeline:
        parts.append('<section id="graph"><h2>How the match went</h2>'
                     + graph_svg(summary, decisions, sides, names)
                     + '<div class="legend">'
                     + f'<span><i style="background:{SIDE_COLOURS[0]}"></i>{_e(sides[0])} ahead</span>'
                     + f'<span><i style="background:{SIDE_COLOURS[1]}"></i>{_e(sides[1])} ahead</span>'
                     + "".join(f'<span><i style="background:{c}"></i>{g}</span>' for g, c in GRADE_COLOURS.items())
                     + '<span><i style="background:#374151"></i>end of a hand (score)</span></div>'
                     + '<p class="note">The line is the expected score margin after every deal and move: '
                       "the score before the hand plus the hand's expected margin, valued with every dealt "
                       "card visible and the stock unknown.</p></section>")
        parts.append(_split(summary))
        parts.append(_luck(summary, sides))
    else:
        parts.append('<section id="graph"><p class="note">With three or more sides the search rates only '
                     "the side to move, so there is no common evaluation graph and no luck.</p></section>")
    parts.append(_decisions(decisions, names))
    parts.append(_footer(summary))
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def _players(summary: Summary) -> str:
    cards = []
    for p in summary.players:
        chips = "".join(f'<span class="chip {cls}">{count} {label}</span>' for cls, count, label in (
            ("inaccuracy", p.inaccuracies, "inaccurac" + ("y" if p.inaccuracies == 1 else "ies")),
            ("mistake", p.mistakes, "mistake" + ("" if p.mistakes == 1 else "s")),
            ("blunder", p.blunders, "blunder" + ("" if p.blunders == 1 else "s"))))
        cards.append(f"""<div class="player" style="--side:{SIDE_COLOURS[p.side % 2]}" data-seat="{p.seat}">
<h3>{_e(p.name)}</h3><div class="acc" data-accuracy="{p.accuracy:.1f}">{p.accuracy:.1f}<small>accuracy</small></div>
<div class="chips">{chips}</div>
<div class="kv"><span>decisions (forced)</span><b>{p.decisions} ({p.forced})</b>
<span>points lost</span><b>{p.loss:.2f}</b><span>lost per decision</span><b>{p.average_loss:.3f}</b>
<span>lost against perfect knowledge</span><b>{p.hindsight_loss:.1f}</b>
<span>… by the best moves it could see</span><b>{p.unavoidable_loss:.1f}</b></div></div>""")
    return f'<section id="players"><h2>Players</h2><div class="players">{"".join(cards)}</div></section>'


def _split(summary: Summary) -> str:
    rows = []
    for s in summary.sides:
        total = sum(abs(v) for v in (s.start, s.luck, s.play, s.rest)) or 1.0
        bar = "".join(f'<span title="{label} {v:+.2f}" style="width:{100 * abs(v) / total:.1f}%;'
                      f'background:{colour};opacity:{1 if v >= 0 else .45}"></span>'
                      for label, v, colour in (("dealer's edge", s.start, "#9ca3af"), ("luck", s.luck, "#0ea5e9"),
                                               ("play", s.play, "#16a34a"), ("rest", s.rest, "#a78bfa")))
        rows.append(f'<tr data-side="{s.side}"><td><b style="color:{SIDE_COLOURS[s.side]}">{_e(s.name)}</b></td>'
                    f'<td class="n"><b>{s.result:+.0f}</b></td><td class="n">{_num(s.start)}</td>'
                    f'<td class="n">{_num(s.luck)}</td><td class="n">{_num(s.play)}</td>'
                    f'<td class="n">{_num(s.rest)}</td><td><div class="bar">{bar}</div></td></tr>')
    return ('<section id="split" class="split"><h2>Where the result came from</h2><table>'
            '<tr><th>side</th><th class="n">result</th><th class="n">dealer\'s edge</th><th class="n">luck</th>'
            '<th class="n">play</th><th class="n">rest</th><th>share</th></tr>' + "".join(rows) + "</table>"
            '<p class="note">' + "".join(f'<span class="key"><i style="background:{c}"></i>{k}</span>' for k, c in
                                         (("dealer's edge", "#9ca3af"), ("luck", "#0ea5e9"), ("play", "#16a34a"),
                                          ("rest", "#a78bfa"))) + '(lighter: negative)<br>'
            'result = dealer\'s edge + luck + play + rest, in points of score margin. '
            "<b>Luck</b>: what the deals did to the expected margin. <b>Play</b>: the points each side's "
            "errors lost (its own) or gained (the other's), judged from what the player could see. "
            "<b>Rest</b>: what the hidden cards and the evaluation's noise did.</p></section>")


def _luck(summary: Summary, sides: Sequence[str]) -> str:
    rounds = max((d.round for d in summary.deals), default=0) + 1
    head = "".join(f'<th class="n">round {k + 1}</th>' for k in range(rounds))
    rows = []
    for hand in sorted({d.hand for d in summary.deals}):
        cells = [""] * rounds
        deals = [d for d in summary.deals if d.hand == hand]
        for d in deals:
            cells[d.round] = _num(d.luck)
        rows.append(f'<tr><td>Hand {hand + 1}</td>' + "".join(f'<td class="n">{c}</td>' for c in cells)
                    + f'<td class="n"><b>{_num(sum(d.luck for d in deals))}</b></td></tr>')
    return (f'<section id="luck"><h2>Luck of each deal, for {_e(sides[0])}</h2><table><tr><th>hand</th>{head}'
            '<th class="n">hand</th></tr>' + "".join(rows) + "</table>"
            f'<p class="note">Positive: the cards favoured {_e(sides[0])}; negative: {_e(sides[1])}.</p></section>')


def _decisions(decisions: Sequence[Decision], names: Sequence[str]) -> str:
    rows = []
    for d in decisions:
        cls = "forced" if d.forced else (d.judgement or "")
        badge = ('<span class="badge forced">forced</span>' if d.forced else
                 f'<span class="badge {d.judgement}">{d.judgement}</span>' if d.judgement else "")
        same = d.forced or d.played == d.best
        lost = "" if same else f"{d.loss:.2f} <span class=\"dim\">± {d.loss_stderr:.2f}</span>"
        win = "" if same or d.win_chance_loss is None else f"{-100 * d.win_chance_loss:+.1f}%"
        hind = "" if d.forced else cards_html(str(d.hindsight_best)) + (
            f' <span class="dim">({d.hindsight_loss:.2f})</span>' if d.hindsight_loss > 0.005 else "")
        luck = "" if d.luck is None else _num(d.luck[d.side])
        best = "" if d.best == d.played else cards_html(str(d.best))
        rows.append(f'<tr class="{cls}" data-decision="{d.number}" data-judgement="{d.judgement or ""}">'
                    f'<td class="n">{d.number + 1}</td><td class="n">{d.hand + 1}.{d.round + 1}</td>'
                    f'<td class="who">{_e(names[d.seat])}</td><td class="mv">{cards_html(str(d.played))}</td>'
                    f'<td class="mv">{best}</td>'
                    f'<td class="n">{lost}</td><td class="n">{win}</td><td>{badge}</td><td class="mv">{hind}</td>'
                    f'<td class="n">{luck}</td></tr>')
    return ('<section id="decisions"><h2>Every decision</h2><div class="scroll"><table class="dec">'
            '<tr><th class="n">#</th><th class="n" title="hand.round">hand</th><th>player</th><th>played</th>'
            '<th>best</th><th class="n">lost</th>'
            '<th class="n" title="the change in the chance of winning the match">win</th><th>judgement</th>'
            '<th title="the best move had every card been visible, and what the played move lost by it">'
            'seeing every card</th><th class="n" title="the luck of the deal just before, for the player\'s side">'
            'luck</th></tr>'
            + "".join(rows) + "</table></div></section>")


def _footer(summary: Summary) -> str:
    th = ", ".join(f"{name} ≥ {value:g}" for name, value in reversed(analysis.THRESHOLDS))
    worth = ("" if summary.point_worth is None else
             f" Near the target the search ranks by the chance of winning the match; there the drop in that "
             f"chance is graded, one point being {100 * summary.point_worth:.1f}% (its worth at 0-0).")
    return (f'<footer><p>Each decision is judged from what that player could see at the time. Points lost: '
            f"{th} is an inaccuracy, a mistake, a blunder (one scopa = 1 point), if the loss is at least "
            f"{analysis.SIGNIFICANCE:g} standard errors; a forced move is never an error.{worth} "
            f"A decision's accuracy is 100 × 2^(−loss/{analysis.HALF_ACCURACY:g}); a player's, the mean "
            f"over their unforced decisions.</p><p>{summary.decisions} decisions, "
            f"{summary.iterations:,} iterations per search, seed {summary.seed}, "
            f"{summary.elapsed_ms / 1000:.1f} s. Made by <code>cirulla analyze</code>.</p></footer>")
