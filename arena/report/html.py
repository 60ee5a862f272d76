"""The report page: ``report.html`` rendered with jinja2 from the records and standings.

Bot names, offending lines, details and stderr are untrusted text, so every value the page
shows has its control characters escaped (:func:`arena.protocol.escape_controls`; stderr
keeps its line breaks and tabs, see :func:`shown`) and is then HTML-escaped.  The charts are
embedded as base64, so the page stands alone.  jinja2 is imported lazily.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from typing import TYPE_CHECKING, Any, Optional, Sequence

from arena.protocol import escape_controls
from arena.records import GameRecord
from arena.report.text import format_number

if TYPE_CHECKING:
    from arena.ratings import Standings
    from arena.report.charts import Chart
    from arena.report.forfeits import ForfeitGroup

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


def _crosstable(records: Sequence[GameRecord], variant: Optional[str],
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
    return {"bots": names, "rows": rows}


def _matches(records: Sequence[GameRecord], variant: Optional[str],
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


def _forfeits(records: Sequence[GameRecord], listed: set[str],
              groups_by_bot: dict[str, list[ForfeitGroup]]) -> list[dict[str, Any]]:
    """Each forfeiting bot with its forfeits grouped by reason (:mod:`arena.report.forfeits`):
    one row per group with its count, its first games (linked when the page lists them) and
    the first game's detail, offending line and stderr as the example."""
    variant_of = {r.game_id: r.variant for r in records}
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
                "variants": ", ".join(sorted({variant_of[gid] for gid in g.games})),
                "detail": g.first.detail, "line": g.first.offending_line,
                "stderr": g.stderr, "first": g.first.game_id,
            } for g in groups],
        })
    return out


def page_context(records: Sequence[GameRecord], tables: Sequence[Standings],
                 charts: Sequence[Chart], title: str, method: str,
                 max_games: Optional[int],
                 pages: Optional[dict[str, str]] = None,
                 bot_pages: Optional[dict[str, str]] = None,
                 titles: Optional[dict[str, str]] = None,
                 forfeit_groups: Optional[dict[str, list[ForfeitGroup]]] = None
                 ) -> dict[str, Any]:
    """Everything the page shows, as plain values for the template.

    ``method`` names the interval estimate in the page's text; the moves of the first
    ``max_games`` records are listed (None: all), each linked to its viewer page in
    ``pages`` (game id to a path relative to the report, :mod:`arena.report.viewer`); each
    bot's name in the standings links to its page in ``bot_pages`` (:mod:`arena.report.botpages`).
    ``titles`` are :func:`arena.report.viewer.game_titles` of ``records`` and
    ``forfeit_groups`` :func:`arena.report.forfeits.group_forfeits` of them (each made here
    when not given).
    """
    from arena.report.forfeits import group_forfeits
    from arena.report.viewer import game_titles

    standings = []
    for st in tables:
        rows = []
        for row in st.rows:
            rows.append({
                "rank": row.rank or "–", "bot": row.bot, "points": f"{row.points:g}",
                "elo": format_number(row.rating, "+.1f"), "prior": row.prior,
                "elo95": format_number(row.rating95, ".1f"), "games": row.games,
                "score": f"{100 * row.score:.1f}",
                "wdl": row.wdl, "draw": f"{100 * row.draw_ratio:.1f}",
                "los": format_number(None if row.los_next is None else 100 * row.los_next, ".1f"),
                "forfeits": row.forfeits_text(), "flag": row.flag,
                "page": (bot_pages or {}).get(row.bot),
            })
        order = [r.bot for r in st.rows]
        standings.append({
            "label": st.label, "games": st.games, "rows": rows, "note": st.note,
            "prior": any(row.prior for row in st.rows),
            "anchor": st.anchor, "cross": _crosstable(records, st.variant, order),
            "matches": _matches(records, st.variant, order),
        })
    listed_games = records if max_games is None else records[:max_games]
    titles = titles if titles is not None else game_titles(records)
    inline = not pages or len(listed_games) <= MAX_MOVES_INLINE
    forfeits = _forfeits(records, {r.game_id for r in listed_games},
                         forfeit_groups if forfeit_groups is not None
                         else group_forfeits(records))
    games = [{
        "id": r.game_id, "variant": r.variant, "white": r.white.name, "black": r.black.name,
        "result": r.result, "termination": r.termination, "plies": r.plies,
        "forfeit": r.forfeit, "detail": r.detail, "moves": _move_text(r) if inline else [],
        "opening": len(r.opening), "page": (pages or {}).get(r.game_id),
        "title": titles[r.game_id],
    } for r in listed_games]
    return {
        "clock": clock_summary(records),
        "title": title, "generated": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "n_games": len(records), "n_bots": len({r.white.name for r in records}
                                               | {r.black.name for r in records}),
        "variants": list(dict.fromkeys(r.variant for r in records)),
        "standings": standings, "charts": charts, "forfeits": forfeits,
        "games": games, "method": method, "games_omitted": len(records) - len(listed_games),
        "moves_inline": inline, "max_inline": MAX_MOVES_INLINE,
    }


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

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, finalize=shown)
    return env.from_string(_TEMPLATE).render(**context)


def shown(value: Any) -> Any:
    """How the page shows a value (the template's ``finalize``, so no value escapes it):
    text with its control characters escaped, line breaks and tabs kept (they are white
    space in HTML, and line breaks in a stderr ``<pre>``); autoescape then escapes the HTML."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return escape_controls(value, "\n\t")
    return value


#: the report's style, also used by the bot pages (:mod:`arena.report.botpages`)
REPORT_CSS = """body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto;
       max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.1em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
.meta { color: #666; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: right; vertical-align: top; }
th { background: #f2f4f7; } td.name, th.name { text-align: left; }
tr.flagged td { color: #8a5a00; background: #fff8e6; }
td.flag { text-align: left; font-size: 0.9em; }
.cross td { text-align: center; min-width: 3.2em; } .cross td.self { background: #eee; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
pre, code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.88em; }
pre { background: #f6f6f6; padding: 0.5em; white-space: pre-wrap; word-break: break-all;
      max-height: 16em; overflow: auto; }
details { margin: 0.15em 0; } summary { cursor: pointer; }
.moves { max-width: 60em; font-family: ui-monospace, Menlo, Consolas, monospace;
         font-size: 0.85em; margin: 0.3em 0 0.8em 1em; }
.opening { color: #888; }
.note { color: #8a5a00; }
table.forfeits { width: 100%; } .forfeits td.example { width: 50%; }
.forfeits td.ids { width: 32%; font-size: 0.85em; } .gid { white-space: nowrap; }
.nochart { color: #666; font-style: italic; }
table.standings th, table.standings td { white-space: nowrap; }
table.standings td.flag { white-space: normal; min-width: 16em; }
a.view { float: right; margin-left: 0.6em; }
"""

_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} – Morris Arena report</title>
<style>
""" + REPORT_CSS + r"""</style>
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

<h2 id="standings">Standings</h2>
<p>Bots are ranked by <b>points</b> (a win 1, a draw ½); bots level on points by the points
they scored against each other, then by Sonneborn–Berger, then by Elo. Elo is fitted to all
games at once (Bradley–Terry maximum likelihood, a draw is half a point; 400 Elo points =
10:1 expected score){% if standings[0].anchor %}{% else %}, centred so the
maximum-likelihood bots average 0{% endif %}. <b>±95%</b> is the half-width of the 95%
interval ({{ method }} estimate: the two colour-swapped games of a pair count as one unit).
<b>LOS</b> is the probability that the bot is stronger than the one ranked below it.
A bot marked <b>*</b> has no finite maximum-likelihood Elo (all won, all lost, no upset
against the others, or never linked by games to them): its Elo rests on the prior, one
virtual draw against the centre of the scale, and its interval is the wider side of its
likelihood interval (see docs/RATINGS.md).</p>
{% for st in standings %}
<h3>{{ st.label }} <small class="meta">({{ st.games }} games{% if st.anchor %}, {{ st.anchor }} anchored{% endif %})</small></h3>
{% if st.note %}<p class="note">{{ st.note }}</p>{% endif %}
<table class="standings">
<tr><th>#</th><th class="name">bot</th><th>points</th><th>Elo</th><th>±95%</th><th></th>
<th>games</th><th>score %</th>
<th>W-D-L</th><th>draw %</th><th>LOS next %</th><th class="name">forfeits</th><th class="name">note</th></tr>
{% for r in st.rows %}
<tr{% if r.flag %} class="flagged"{% endif %}><td>{{ r.rank }}</td><td class="name">{% if r.page %}<a href="{{ r.page }}">{{ r.bot }}</a>{% else %}{{ r.bot }}{% endif %}</td>
<td>{{ r.points }}</td><td>{{ r.elo }}</td><td>{{ r.elo95 }}</td>
<td class="prior">{% if r.prior %}*{% endif %}</td><td>{{ r.games }}</td><td>{{ r.score }}</td>
<td>{{ r.wdl }}</td><td>{{ r.draw }}</td><td>{{ r.los }}</td><td class="name">{{ r.forfeits }}</td>
<td class="flag">{{ r.flag }}</td></tr>
{% endfor %}
</table>
{% if st.prior %}<p class="note">* Elo from the prior: no finite maximum-likelihood Elo from
these results (the note says why).</p>{% endif %}
{% endfor %}

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
<p>Points of the row bot against the column bot, out of the games they played.</p>
{% for st in standings %}
<h3>{{ st.label }}</h3>
<table class="cross">
<tr><th class="name">bot</th>{% for b in st.cross.bots %}<th title="{{ b }}">{{ loop.index }}</th>{% endfor %}<th>points</th><th>games</th></tr>
{% for row in st.cross.rows %}
<tr><td class="name">{{ loop.index }}. {{ row.bot }}</td>
{% for cell in row.cells %}{% if cell is none %}<td class="self"></td>{% else %}<td style="background: hsl({{ (cell[1] * 120) | round(0) }}, 60%, 88%)">{{ cell[0] }}</td>{% endif %}{% endfor %}
<td>{{ row.points }}</td><td>{{ row.games }}</td></tr>
{% endfor %}
</table>
{% if st.matches %}
<details><summary>Match statistics for each pair of bots ({{ st.label }})</summary>
<p>From the first bot's side. Pairs are the pentanomial counts of colour-swapped game pairs
(LL-LD-WL/DD-WD-WW); Elo ± and LOS use pairs when there are any, single games otherwise;
nElo is the normalised Elo of chess engine testing.</p>
<table>
<tr><th class="name">bot</th><th class="name">against</th><th>games</th><th>W-D-L</th><th>pairs</th><th>unpaired</th>
<th>Elo</th><th>±95%</th><th>nElo</th><th>LOS %</th><th>draw %</th></tr>
{% for m in st.matches %}
<tr><td class="name">{{ m.a }}</td><td class="name">{{ m.b }}</td><td>{{ m.games }}</td><td>{{ m.wdl }}</td>
<td>{{ m.penta }}</td><td>{{ m.unpaired }}</td><td>{{ m.elo }}</td><td>{{ m.elo95 }}</td>
<td>{{ m.nelo }}</td><td>{{ m.los }}</td><td>{{ m.draw }}</td></tr>
{% endfor %}
</table>
</details>
{% endif %}
{% endfor %}

<h2 id="forfeits">Forfeits</h2>
{% if not forfeits %}<p>No game was lost by forfeit.</p>{% endif %}
{% if forfeits %}<p>Identical forfeits are grouped: one row per bot and reason (the same
ending and detail up to numbers such as move numbers and times), with the games it happened in
and the first game's detail and stderr as the example.</p>{% endif %}
{% for entry in forfeits %}
<h3>{{ entry.bot }} <small class="meta">({{ entry.total }} forfeit{% if entry.total != 1 %}s{% endif %}: {{ entry.kinds }})</small></h3>
<table class="forfeits">
<tr><th class="name">reason</th><th>games</th><th class="name">example (the first of these games)</th><th class="name">in games</th></tr>
{% for f in entry.groups %}
<tr><td class="name">{{ f.kind }}</td><td>{{ f.count }}</td>
<td class="name example">{{ f.detail }}
{% if f.line is not none %}<br>sent: <code>{{ f.line }}</code>{% endif %}
{% if f.stderr %}<details><summary>stderr of game {{ f.first }}</summary><pre>{{ f.stderr }}</pre></details>{% endif %}
</td>
<td class="name ids">{% for gid, linked in f.games %}<span class="gid">{% if linked %}<a href="#game-{{ gid }}">{{ gid }}</a>{% else %}{{ gid }}{% endif %}{% if not loop.last %},{% endif %}</span> {% endfor %}{% if f.more %}and {{ f.more }} more{% endif %}
{% if variants | length > 1 %}<br><span class="meta">{{ f.variants }}</span>{% endif %}</td></tr>
{% endfor %}
</table>
{% endfor %}

<h2 id="games">Games</h2>
<p>Each game's moves; grey moves are the opening set by the referee.{% if games and games[0].page %}
 <b>view</b> opens the game in a viewer (board, step through the moves, each move's time,
how it ended).{% if not moves_inline %} With more than {{ max_inline }} games listed, their
moves are on the viewer's pages only, to keep this page light.{% endif %}{% endif %}{% if games_omitted %}
<b>Only the first {{ games | length }} games are listed here</b> ({{ games_omitted }} more are in
games.jsonl and games.csv); every number above uses all games.{% endif %}</p>
<table>
<tr><th class="name">game</th><th class="name">variant</th><th class="name">white</th><th class="name">black</th>
<th>result</th><th class="name">ending</th><th>turns</th></tr>
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
</table>
</body>
</html>
"""
