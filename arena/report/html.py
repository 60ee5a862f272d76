"""The report page: ``report.html`` rendered with jinja2 from the records and standings.

Bot names, offending lines, details and stderr are untrusted text, so every value the page
shows has its control characters escaped (:func:`arena.protocol.escape_controls`; stderr
keeps its line breaks and tabs, see :func:`shown`) and is then HTML-escaped.  The charts are
embedded as base64, so the page stands alone.  jinja2 is imported lazily.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from arena.protocol import escape_controls
from arena.records import GameRecord
from arena.report.text import format_number
from arena.report.words import COLUMNS, GLOSSARY, elo_gap_sentence, plain_note, ranking_caption

if TYPE_CHECKING:
    from arena.ratings import Standings
    from arena.report.data import ReportData
    from arena.standings import Source
    from arena.report.charts import Chart
    from arena.report.forfeits import ForfeitGroup
    from arena.report.rounds import RoundsData

#: games whose moves are listed in report.html by default (a bigger page is hard to open)
MAX_GAMES_LISTED = 10_000
#: with more listed games than this, their moves are left to the viewer's pages (a light page)
MAX_MOVES_INLINE = 1_000
#: games named per group of identical forfeits (the others are counted)
MAX_FORFEITS_LISTED = 20


def _move_text(r: GameRecord) -> list[tuple[int, str, str]]:
    """``(number, white's turn, black's turn)`` rows for a move list."""
    moves = [m.move for m in r.moves]
    return [(k // 2 + 1, moves[k], moves[k + 1] if k + 1 < len(moves) else "")
            for k in range(0, len(moves), 2)]


def _crosstable(records: Source, variant: Optional[str],
                order: Sequence[str]) -> dict[str, Any]:
    from arena.ratings import head_to_head

    bots, points, games = head_to_head(records, variant)
    pos = {b: i for i, b in enumerate(bots)}
    names = [b for b in order if b in pos] + sorted(b for b in bots if b not in order)
    rows = []
    for a in names:
        cells = []
        for b in names:
            i, j = pos[a], pos[b]
            g = int(games[i, j])
            cells.append(None if a == b or g == 0 else (f"{points[i, j]:g}/{g}",
                                                         points[i, j] / g))
        total_g = int(games[pos[a]].sum())
        rows.append({"bot": a, "cells": cells, "points": f"{points[pos[a]].sum():g}",
                     "games": total_g})
    return {"bots": names, "rows": rows, "print_size": _print_size(names, rows)}


#: the width a printed crosstable may take: a landscape page (A4 or Letter) less its margins
PRINT_WIDTH_PT = 720.0


def _print_size(names: Sequence[str], rows: Sequence[dict[str, Any]]) -> float:
    """The font size (pt, 4.5 to 9) at which the crosstable of ``rows`` fits the width of a
    printed landscape page: its width in em is estimated from the longest cell and name
    (about 0.55 em per character, 0.4 em of padding per cell)."""
    cell = max((len(c[0]) for r in rows for c in r["cells"] if c is not None), default=3)
    name = len(f"{len(names)}. ") + min(max((len(n) for n in names), default=4), 40)
    ems = len(names) * (0.55 * cell + 0.5) + (0.55 * name + 0.5) + 2 * (0.55 * 5 + 0.5)
    return round(min(9.0, max(4.5, PRINT_WIDTH_PT / ems)), 1)


def _matches(records: Source, variant: Optional[str],
             bots: Sequence[str]) -> list[dict[str, Any]]:
    from arena.ratings import all_matches

    out = []
    for m in all_matches(records, variant, bots):
        e = m.estimate
        paired = bool(sum(m.pentanomial))
        out.append({
            "a": m.a, "b": m.b, "games": m.games, "wdl": f"{m.wins}-{m.draws}-{m.losses}",
            "penta": "-".join(str(c) for c in m.pentanomial) if paired else "",
            "unpaired": m.unpaired,
            "elo": format_number(e.elo if e else None, "+.1f"),
            "elo95": format_number(e.elo95 if e else None, ".1f"),
            "nelo": format_number(e.nelo if e and paired else None, "+.1f"),
            "los": format_number(100 * e.los if e else None, ".1f"),
            "draw": format_number(100 * m.draw_ratio, ".1f"),
        })
    return out


def _forfeits(listed: set[str],
              groups_by_bot: dict[str, list[ForfeitGroup]]) -> list[dict[str, Any]]:
    """Each forfeiting bot with its forfeits grouped by reason (:mod:`arena.report.forfeits`):
    one row per group with its count, its first games (linked when the page lists them) and
    the first game's detail, offending line and stderr as the example."""
    out = []
    for bot, groups in groups_by_bot.items():
        kinds = Counter[str]()
        for g in groups:
            kinds[g.termination] += g.count
        out.append({
            "bot": bot, "total": sum(kinds.values()),
            "kinds": ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
            "groups": [{
                "kind": g.termination, "count": g.count,
                "games": [(gid, gid in listed) for gid in g.games[:MAX_FORFEITS_LISTED]],
                "more": max(g.count - MAX_FORFEITS_LISTED, 0),
                "variants": ", ".join(sorted(g.variants)),
                "detail": g.first.detail, "line": g.first.offending_line,
                "stderr": g.stderr, "first": g.first.game_id,
            } for g in groups],
        })
    return out


def page_context(records: Union[Sequence[GameRecord], ReportData], tables: Sequence[Standings],
                 charts: Sequence[Chart], title: str, method: str,
                 max_games: Optional[int],
                 pages: Optional[dict[str, str]] = None,
                 bot_pages: Optional[dict[str, str]] = None,
                 titles: Optional[dict[str, str]] = None,
                 forfeit_groups: Optional[dict[str, list[ForfeitGroup]]] = None,
                 endgames: Optional[Sequence[Any]] = None,
                 rounds: Optional[RoundsData] = None) -> dict[str, Any]:
    """Everything the page shows, as plain values for the template.

    ``method`` names the interval estimate in the page's text; the moves of the first
    ``max_games`` records are listed (None: all), each linked to its viewer page in
    ``pages`` (game id to a path relative to the report, :mod:`arena.report.viewer`); each
    bot's name in the standings links to its page in ``bot_pages`` (:mod:`arena.report.botpages`).
    ``titles`` are :func:`arena.report.viewer.game_titles` of ``records`` and
    ``forfeit_groups`` :func:`arena.report.forfeits.group_forfeits` of them (each made here
    when not given).  ``rounds`` (a Swiss's or a knockout's, :func:`arena.report.rounds.load_rounds`)
    adds their section: the rounds' tables or the bracket (:mod:`arena.report.rounds`).
    """
    import markupsafe

    from arena.report.data import ReportData, collect
    from arena.report.rounds import rounds_section

    data = (records if isinstance(records, ReportData)
            else collect(records, max_games=max_games))
    standings = []
    for st in tables:
        rows = []
        for row in st.rows:
            rating, half = row.rating, row.rating95
            rows.append({
                "rank": row.place, "bot": row.bot, "points": f"{row.points:g}",
                "h2h": "–" if row.h2h is None else f"{row.h2h:g}",
                "sb": "–" if not row.level else f"{row.sb:g}",
                "bh": "–" if not row.level else f"{row.buchholz:g}",
                "bh1": "–" if not row.level else f"{row.buchholz_cut1:g}",
                "elo": format_number(rating, "+.0f"), "prior": row.prior,
                "elo95": format_number(half, ".0f"), "games": row.games,
                "elo_exact": format_number(rating, "+.1f"),
                "elo95_exact": format_number(half, ".1f"),
                "score": f"{100 * row.score:.1f}",
                "range": ("–" if rating is None or half is None else
                          f"{format_number(rating - half, '+.0f')} to "
                          f"{format_number(rating + half, '+.0f')}"),
                "wdl": row.wdl, "draw": f"{100 * row.draw_ratio:.1f}",
                "los": format_number(None if row.los_next is None else 100 * row.los_next, ".1f"),
                "forfeits": row.forfeits_text(), "flag": row.flag,
                "note": plain_note(row.flag) or "",
                "page": (bot_pages or {}).get(row.bot),
            })
        order = [r.bot for r in st.rows]
        standings.append({
            "label": st.label, "games": st.games, "rows": rows, "note": st.note,
            "rule": ranking_caption(st),
            # the column the table is ranked by (bold): points, score or Elo
            "key": getattr(st, "ranked_by", "points"),
            "prior": any(row.prior for row in st.rows),
            # bots level on points: the tie-break columns are shown
            "ties": st.ties,
            "buchholz": "buchholz" in st.tiebreaks or "buchholz-cut1" in st.tiebreaks,
            "forfeits": any(row.forfeits for row in st.rows),
            "anchor": st.anchor, "cross": _crosstable(data.tallies, st.variant, order),
            "matches": _matches(data.tallies, st.variant, order),
        })
    listed_games = data.listed
    titles = titles if titles is not None else data.titles
    inline = not pages or len(listed_games) <= MAX_MOVES_INLINE
    forfeits = _forfeits({r.game_id for r in listed_games},
                         forfeit_groups if forfeit_groups is not None else data.forfeits)
    games = [{
        "id": r.game_id, "variant": r.variant, "white": r.white.name, "black": r.black.name,
        "result": r.result, "termination": r.termination, "plies": r.plies,
        "forfeit": r.forfeit, "detail": r.detail, "moves": _move_text(r) if inline else [],
        "opening": len(r.opening), "page": (pages or {}).get(r.game_id),
        "title": titles[r.game_id],
    } for r in listed_games]
    section = rounds_section(rounds, data.staged if isinstance(records, ReportData)
                             else records, pages)
    return {
        "rounds": None if section is None else {
            "id": section[0], "title": section[1], "html": markupsafe.Markup(section[2])},
        "clock": data.clock,
        "endgames": endgame_rows(endgames or [], pages or {}),
        "title": title, "generated": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "n_games": data.total, "n_bots": len(data.bots),
        "variants": data.variants,
        "standings": standings, "charts": charts, "forfeits": forfeits,
        "games": games, "method": method, "games_omitted": data.total - len(listed_games),
        "endings": _endings(data),
        "moves_inline": inline, "max_inline": MAX_MOVES_INLINE,
        "columns": COLUMNS, "glossary": GLOSSARY, "elo_gap": elo_gap_sentence(),
    }


def _endings(data: ReportData) -> list[dict[str, Any]]:
    """:func:`game_endings` from what :func:`arena.report.data.collect` counted."""
    return [{"variant": v, "games": sum(c.values()), "kinds": c.most_common()}
            for v, c in data.endings.items()]


def game_endings(records: Sequence[GameRecord]) -> list[dict[str, Any]]:
    """Per variant (in order of first appearance), its number of games and how they ended
    (``kinds``: ``(termination, count)``, the most frequent first): the summary printed in
    place of the game list."""
    out: dict[str, Counter[str]] = {}
    for r in records:
        out.setdefault(r.variant, Counter())[r.termination or "unknown"] += 1
    return [{"variant": v, "games": sum(c.values()), "kinds": c.most_common()}
            for v, c in out.items()]


def endgame_rows(games: Sequence[Any], pages: dict[str, str]) -> list[dict[str, Any]]:
    """The report's endgame table (``arena analyse``: :mod:`arena.report.endgames`): per
    bot, moves played in endgames the tables cover, the share that kept their value, won
    endgames thrown away, and links to those moments (the game's viewer page at the ply)."""
    from arena.report.endgames import summarise

    rows = []
    for row in summarise(games):
        moments = [{"game": gid, "ply": ply, "kind": kind,
                    "href": f"{pages[gid]}#ply={ply}" if gid in pages else f"#game-{gid}"}
                   for gid, ply, kind in row.thrown[:8]]
        rows.append({"bot": row.bot, "moves": row.moves, "won": row.won_positions,
                     "accuracy": "-" if row.accuracy is None else f"{100 * row.accuracy:.1f}",
                     "thrown": len(row.thrown), "wins_thrown": row.wins_thrown,
                     "moments": moments, "more": max(0, len(row.thrown) - 8)})
    return rows


def clock_summary(records: Sequence[GameRecord]) -> dict[str, Any]:
    """Which clock charged the games (``clocks``: phrases with counts), the games played
    again because a bot was starved (``replayed``: game id and reasons), and the share of
    the bots' thinking time spent waiting for a CPU (``waited``: percent, None if not
    measured): what a reader needs to trust the results of a busy machine."""
    clocks: Counter[str] = Counter()
    for r in records:
        tc = r.time_control or {}
        if tc.get("clock") == "cpu":
            clocks[f"the bot's CPU time (wall-clock cap {tc.get('wall_factor', 5):g}x)"] += 1
        elif tc.get("clock") == "own":
            clocks["the bot's own time (wall time less its waits for a CPU; wall-clock cap "
                   f"{tc.get('wall_factor', 5):g}x)"] += 1
        else:
            clocks["wall time"] += 1
    waited = thought = 0.0
    for r in records:
        for m in r.moves:
            if m.wait_ms is not None and not m.opening:
                waited += m.wait_ms
                thought += m.wall_ms
    return {
        "clocks": [f"{what}: {n} game{'s' if n != 1 else ''}" for what, n in clocks.most_common()],
        "replayed": [{"id": r.game_id, "reasons": list(r.replays)} for r in records if r.replays],
        "waited": None if thought <= 0 else round(100 * waited / thought, 1),
    }


def render_html(context: dict[str, Any]) -> str:
    """The report page for a :func:`page_context` dictionary (jinja2, autoescaped)."""
    import jinja2
    import markupsafe

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, finalize=shown)
    return env.from_string(_TEMPLATE).render(css=markupsafe.Markup(report_css()), **context)


def shown(value: Any) -> Any:
    """How the page shows a value (the template's ``finalize``, so no value escapes it):
    text with its control characters escaped, line breaks and tabs kept (they are white
    space in HTML, and line breaks in a stderr ``<pre>``); autoescape then escapes the HTML."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return escape_controls(value, "\n\t")
    return value


def report_css() -> str:
    """The report's style sheet (``report.css`` next to this module), also inlined in the bot
    pages (:mod:`arena.report.botpages`): screen and print rules."""
    return _report_css()


@lru_cache(maxsize=None)
def _report_css() -> str:
    return resources.files("arena.report").joinpath("report.css").read_text(encoding="utf-8")


#: the header cell of a standings column: its name, explained on hover
_TH = r"""{% macro th(key, cls="") %}<th{% if cls %} class="{{ cls }}"{% endif %} scope="col" title="{{ columns[key].meaning }}">{{ columns[key].header }}</th>{% endmacro %}"""

_TEMPLATE = _TH + r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} – Morris Arena report</title>
<style>
{{ css }}</style>
</head>
<body>
<h1>{{ title }}</h1>
<p class="meta">{{ n_games }} games, {{ n_bots }} bots, variants: {{ variants | join(", ") }}.
Generated {{ generated }} by Morris Arena.</p>
<p class="meta" id="clock">Each move was charged {{ clock.clocks | join("; ") }}.
{% if clock.waited is not none %}The bots spent {{ clock.waited }}% of their thinking time
waiting for a CPU{% if clock.waited >= 20 %} (the machine was overloaded: fewer workers, or a
quieter machine, give fairer timing){% endif %}.{% endif %}
{% if clock.replayed %}{{ clock.replayed | length }} game{% if clock.replayed | length != 1 %}s were{% else %} was{% endif %}
played again because a bot lost on time while the machine starved it (not counted):
{% for g in clock.replayed %}<a href="#game-{{ g.id }}">{{ g.id }}</a> ({{ g.reasons | join("; ") }}){% if not loop.last %}, {% endif %}{% endfor %}.{% endif %}</p>
<nav class="toc"><a href="#standings">Standings</a><a href="#glossary">What the columns mean</a><a href="#method">How the numbers are computed</a>{% if rounds %}<a href="#{{ rounds.id }}">{{ rounds.title }}</a>{% endif %}<a href="#charts">Charts</a><a href="#crosstable">Crosstable</a>{% if endgames %}<a href="#endgames">Endgames</a>{% endif %}<a href="#forfeits">Forfeits</a><a href="#games">Games</a></nav>

<h2 id="standings">Standings</h2>
<ul class="read">
<li><b>points</b>: a win is 1 point, a draw ½, a loss 0.</li>
<li><b>Elo</b> is a strength number worked out from all the games. Only the gap between two
bots counts: {{ elo_gap }}.</li>
<li><b>±</b> says how sure the Elo is: the real strength is very likely within Elo ± this
number. More games make it smaller.{% if standings | selectattr("prior") | list %} A <b>*</b>
marks an Elo that is only a rough guess.{% endif %}</li>
</ul>
<p class="read"><span class="screen-only">Point at a column's name to see what it means. </span>The
list <a href="#glossary">What the columns mean</a>, below the tables, explains them all.</p>
{% for st in standings %}
<h3 id="table-{{ loop.index }}">{{ st.label }} <small class="meta">({{ st.games }} games)</small></h3>
{% if st.note %}<p class="note">{{ st.note }}</p>{% endif %}
<div class="scroll">
<table class="standings">
<caption>{{ st.rule }}{% if st.anchor %} Elo: {{ st.anchor }} is fixed as the reference.{% endif %}</caption>
<thead><tr>{{ th("rank") }}{{ th("bot", "name") }}{{ th("points") }}{{ th("wdl") }}{{ th("games") }}{{ th("score") }}{% if st.ties %}{% if st.buchholz %}{{ th("bh1") }}{{ th("bh") }}{% endif %}{{ th("h2h") }}{{ th("sb") }}{% endif %}{{ th("elo") }}{{ th("elo95") }}{% if st.prior %}{{ th("prior") }}{% endif %}{% if st.forfeits %}{{ th("forfeits", "name") }}{% endif %}{% if st.prior %}{{ th("note", "name") }}{% endif %}</tr></thead>
<tbody>
{% for r in st.rows %}
<tr{% if r.flag %} class="flagged"{% endif %}><td>{{ r.rank }}</td><td class="name">{% if r.page %}<a href="{{ r.page }}">{{ r.bot }}</a>{% else %}{{ r.bot }}{% endif %}</td>
<td{% if st.key == "points" %} class="key"{% endif %}>{{ r.points }}</td><td>{{ r.wdl }}</td><td>{{ r.games }}</td><td{% if st.key == "score" %} class="key"{% endif %}>{{ r.score }}</td>{% if st.ties %}{% if st.buchholz %}<td>{{ r.bh1 }}</td><td>{{ r.bh }}</td>{% endif %}<td>{{ r.h2h }}</td><td>{{ r.sb }}</td>{% endif %}
<td{% if st.key == "elo" %} class="key"{% endif %}>{{ r.elo }}</td><td>{{ r.elo95 }}</td>{% if st.prior %}<td class="prior">{% if r.prior %}*{% endif %}</td>{% endif %}
{% if st.forfeits %}<td class="name">{{ r.forfeits }}</td>{% endif %}{% if st.prior %}<td class="flag">{{ r.note }}</td>{% endif %}</tr>
{% endfor %}
</tbody>
</table>
</div>
{% if st.prior %}<p class="note">* This Elo is only a rough guess: the games alone cannot pin
it down (the note says why).</p>{% endif %}
{% endfor %}

<section id="glossary">
<h3>What the columns mean</h3>
<dl class="glossary">
{% for col in columns.values() %}
<dt>{{ col.header }}</dt><dd>{{ col.meaning }}</dd>
{% endfor %}
{% for term, meaning in glossary %}
<dt>{{ term }}</dt><dd>{{ meaning }}</dd>
{% endfor %}
</dl>
</section>

<details class="method" id="method"><summary>How these numbers are computed</summary>
<p class="read">Elo is fitted to all games at once (Bradley–Terry maximum likelihood, a draw
is half a point; 400 Elo points = 10:1 expected score){% if standings[0].anchor %}{% else %},
centred so the maximum-likelihood bots average 0{% endif %}. <b>±</b> is the half-width of
the 95% interval ({{ method }} estimate: the two colour-swapped games of a pair count as one
unit). A bot marked <b>*</b> has no finite maximum-likelihood Elo (all won, all lost, in a
group that won or lost every game against the rest, or never linked by games to them; its
note says which): its Elo rests on the prior, one virtual draw against the centre of the
scale, and its interval is the wider side of its
likelihood interval. How each table is ordered is said above it; bots level there are
ordered by the points they scored against each other (h2h), then by Sonneborn–Berger (SB: the
points a bot scored against each opponent times that opponent's points, summed); bots level
on all of these share a place (5=), listed by Elo.
<b>LOS</b> (likelihood of superiority, "stronger than next") is the probability that a
bot is stronger than the one ranked below it, from the joint covariance of the fit.
docs/RATINGS.md explains every number.</p>
{% for st in standings %}
<div class="scroll">
<table class="standings details">
<caption>{{ st.label }}: the Elo range, draws and how sure each order is</caption>
<thead><tr>{{ th("rank") }}{{ th("bot", "name") }}{{ th("elo") }}{{ th("elo95") }}{{ th("range") }}{{ th("draw") }}{{ th("los") }}{% if st.prior %}{{ th("note", "name") }}{% endif %}</tr></thead>
<tbody>
{% for r in st.rows %}
<tr><td>{{ r.rank }}</td><td class="name">{{ r.bot }}</td><td>{{ r.elo_exact }}{% if r.prior %}*{% endif %}</td><td>{{ r.elo95_exact }}</td><td>{{ r.range }}</td>
<td>{{ r.draw }}</td><td>{{ r.los }}</td>{% if st.prior %}<td class="flag">{{ r.flag }}</td>{% endif %}</tr>
{% endfor %}
</tbody>
</table>
</div>
{% endfor %}
</details>

{% if rounds %}
{{ rounds.html }}

{% endif %}
<h2 id="charts">Charts</h2>
{% for c in charts %}
{% if c.png is none %}
<p class="nochart">{{ c.reason }}</p>
{% else %}
<figure><img src="{{ c.data_uri }}" alt="{{ c.caption }}"><figcaption>{{ c.caption }}
({{ c.file }})</figcaption></figure>
{% endif %}
{% endfor %}

<h2 id="crosstable">Crosstable</h2>
<p class="read">Points of the row bot against the column bot, out of the games they played:
1.5/2 means 1.5 points from 2 games. Green is good for the row bot, red is bad. The columns
are numbered as the rows.<span class="screen-only"> Point at a column's number to see the
bot's name.{% if standings and standings[0].cross.bots | length > 12 %} The table scrolls
sideways; the bot names stay in place.{% endif %}</span></p>
{% for st in standings %}
<section class="crossblock">
<h3>{{ st.label }}</h3>
<div class="scroll crosswrap">
<table class="cross" style="--print-size: {{ st.cross.print_size }}pt">
<thead><tr><th class="name" scope="col">bot</th>{% for b in st.cross.bots %}<th scope="col" title="{{ b }}">{{ loop.index }}</th>{% endfor %}<th scope="col" title="{{ columns.points.meaning }}">points</th><th scope="col" title="{{ columns.games.meaning }}">games</th></tr></thead>
<tbody>
{% for row in st.cross.rows %}
<tr><td class="name">{{ loop.index }}. {{ row.bot }}</td>
{% for cell in row.cells %}{% if cell is none %}<td class="self"></td>{% else %}<td style="background: hsl({{ (cell[1] * 120) | round(0) }}, 60%, 88%)">{{ cell[0] }}</td>{% endif %}{% endfor %}
<td>{{ row.points }}</td><td>{{ row.games }}</td></tr>
{% endfor %}
</tbody>
</table>
</div>
</section>
{% if st.matches %}
<details><summary>Match statistics for each pair of bots ({{ st.label }})</summary>
<p>From the first bot's side. Pairs are the pentanomial counts of colour-swapped game pairs
(LL-LD-WL/DD-WD-WW); Elo ± and LOS use pairs when there are any, single games otherwise;
nElo is the normalised Elo of chess engine testing.</p>
<div class="scroll">
<table>
<thead><tr><th class="name">bot</th><th class="name">against</th><th>games</th><th>W-D-L</th><th>pairs</th><th>unpaired</th>
<th>Elo</th><th>±95%</th><th>nElo</th><th>LOS %</th><th>draw %</th></tr></thead>
<tbody>
{% for m in st.matches %}
<tr><td class="name">{{ m.a }}</td><td class="name">{{ m.b }}</td><td>{{ m.games }}</td><td>{{ m.wdl }}</td>
<td>{{ m.penta }}</td><td>{{ m.unpaired }}</td><td>{{ m.elo }}</td><td>{{ m.elo95 }}</td>
<td>{{ m.nelo }}</td><td>{{ m.los }}</td><td>{{ m.draw }}</td></tr>
{% endfor %}
</tbody>
</table>
</div>
</details>
{% endif %}
{% endfor %}

{% if endgames %}
<h2 id="endgames">Endgames</h2>
<p class="read">Every move played in an endgame the tables know perfectly (<code>arena
analyse</code>): did it keep what the position was worth (a win stays a win, a draw a draw)?
<b>accuracy</b> is the share of a bot's moves there that did; a <b>thrown</b> endgame was won
(or drawn) before the move and not after it. Each moment links to the game at that move.</p>
<div class="scroll">
<table class="endgames">
<thead><tr><th class="name">bot</th><th title="Moves the bot played in positions the tables cover">moves</th><th title="Of them, moves played in a won position">in won positions</th><th title="The share of its moves that kept the position's value">accuracy %</th><th title="Moves that threw a win or a draw away">thrown</th><th title="Won endgames it drew or lost">wins thrown</th><th class="name">the moments</th></tr></thead>
{% for r in endgames %}
<tr><td class="name">{{ r.bot }}</td><td>{{ r.moves }}</td><td>{{ r.won }}</td><td>{{ r.accuracy }}</td><td>{{ r.thrown }}</td><td>{{ r.wins_thrown }}</td>
<td class="name">{% for m in r.moments %}<a href="{{ m.href }}">{{ m.kind }}, move {{ m.ply }} of {{ m.game }}</a>{% if not loop.last %}; {% endif %}{% endfor %}{% if r.more %} and {{ r.more }} more{% endif %}</td></tr>
{% endfor %}
</table>
</div>
{% endif %}

<h2 id="forfeits">Forfeits</h2>
{% if not forfeits %}<p>No game was lost by forfeit.</p>{% endif %}
{% if forfeits %}<p>Identical forfeits are grouped: one row per bot and reason (the same
ending and detail up to numbers such as move numbers and times), with the games it happened in
and the first game's detail and stderr as the example.</p>{% endif %}
{% for entry in forfeits %}
<h3>{{ entry.bot }} <small class="meta">({{ entry.total }} forfeit{% if entry.total != 1 %}s{% endif %}: {{ entry.kinds }})</small></h3>
<table class="forfeits">
<thead><tr><th class="name">reason</th><th>games</th><th class="name">example (the first of these games)</th><th class="name">in games</th></tr></thead>
<tbody>
{% for f in entry.groups %}
<tr><td class="name">{{ f.kind }}</td><td>{{ f.count }}</td>
<td class="name example">{{ f.detail }}
{% if f.line is not none %}<br>sent: <code>{{ f.line }}</code>{% endif %}
{% if f.stderr %}<details><summary>stderr of game {{ f.first }}</summary><pre>{{ f.stderr }}</pre></details>{% endif %}
</td>
<td class="name ids">{% for gid, linked in f.games %}<span class="gid">{% if linked %}<a href="#game-{{ gid }}">{{ gid }}</a>{% else %}{{ gid }}{% endif %}{% if not loop.last %},{% endif %}</span> {% endfor %}{% if f.more %}and {{ f.more }} more{% endif %}
{% if variants | length > 1 %}<br><span class="meta">{{ f.variants }}</span>{% endif %}</td></tr>
{% endfor %}
</tbody>
</table>
{% endfor %}

<h2 id="games">Games</h2>
<p class="print-only">{{ n_games }} game{% if n_games != 1 %}s{% endif %}{% for v in endings %}{% if endings | length > 1 %}; {{ v.variant }}: {{ v.games }}{% endif %}, ended by
{% for kind, count in v.kinds %}{{ kind }} {{ count }}{% if not loop.last %}, {% endif %}{% endfor %}{% endfor %}.
The list of every game and its moves is left out of the printout: it is in report.html on
screen, in games.csv and games.jsonl{% if games and games[0].page %}, and each game has its
viewer page (games/){% endif %}.</p>
<div class="gamelist">
<p>Each game's moves; grey moves are the opening set by the referee.{% if games and games[0].page %}
 <b>view</b> opens the game in a viewer (board, step through the moves, each move's time,
how it ended).{% if not moves_inline %} With more than {{ max_inline }} games listed, their
moves are on the viewer's pages only, to keep this page light.{% endif %}{% endif %}{% if games_omitted %}
 <b>Only the first {{ games | length }} games are listed here</b> ({{ games_omitted }} more are in
games.jsonl and games.csv); every number above uses all games.{% endif %}</p>
<div class="scroll">
<table class="games">
<thead><tr><th class="name">game</th><th class="name">variant</th><th class="name">white</th><th class="name">black</th>
<th>result</th><th class="name">ending</th><th>turns</th></tr></thead>
<tbody>
{% for g in games %}
<tr id="game-{{ g.id }}"><td class="name">
{% if g.page %}<a class="view" href="{{ g.page }}" title="{{ g.title }}">view</a>{% endif %}
{% if moves_inline %}
<details><summary>{{ g.id }}</summary>
<div class="moves">{% for n, w, b in g.moves %}{{ n }}.&nbsp;<span{% if loop.index0 * 2 < g.opening %} class="opening"{% endif %}>{{ w }}</span>{% if b %}&nbsp;<span{% if loop.index0 * 2 + 1 < g.opening %} class="opening"{% endif %}>{{ b }}</span>{% endif %} {% endfor %}</div>
{% if g.detail %}<div class="meta">{{ g.detail }}</div>{% endif %}
</details>{% else %}{{ g.id }}{% endif %}</td>
<td class="name">{{ g.variant }}</td><td class="name">{{ g.white }}</td><td class="name">{{ g.black }}</td>
<td>{{ g.result }}</td><td class="name">{{ g.termination }}{% if g.forfeit %} ({{ g.forfeit }}){% endif %}</td>
<td>{{ g.plies }}</td></tr>
{% endfor %}
</tbody>
</table>
</div>
</div>
</body>
</html>
"""
