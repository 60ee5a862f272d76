"""A page per bot (issue 12.4): ``bots/<name>.html`` next to ``report.html``.

Each page shows one bot's rank, points and Elo in every table of the report (the same
:class:`arena.ratings.Standings`), its results by opponent and variant, every game it played
(linked to the game's viewer page where there is one) and its forfeits grouped by reason
(:mod:`arena.report.forfeits`) with one example each, so a student finds their own games.
The page has the report's style inline and no script: it opens from disk with no network.
Everything a bot sent is shown through the report's ``finalize`` (control characters
escaped, :func:`arena.report.html.shown`) and HTML-escaped by jinja2's autoescape.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from arena.records import GameRecord
from arena.report.text import format_number, page_paths
from arena.report.words import plain_note, ranking_caption
from arena.standings import Tally

if TYPE_CHECKING:
    from arena.ratings import Standings
    from arena.report.data import ReportData
    from arena.tallies import GameTallies
    from arena.report.forfeits import ForfeitGroup

#: the folder of the bot pages, next to report.html
BOTS_FOLDER = "bots"


def bot_names(records: Union[Sequence[GameRecord], GameTallies, ReportData]) -> list[str]:
    """Every bot that played in ``records`` (or their tallies), in name order."""
    from arena.report.data import ReportData
    from arena.tallies import GameTallies

    if isinstance(records, ReportData):
        records = records.tallies
    if isinstance(records, GameTallies):
        return sorted(records.players)
    return sorted({r.white.name for r in records} | {r.black.name for r in records})


def bot_page_names(records: Union[Sequence[GameRecord], GameTallies, ReportData]
                   ) -> dict[str, str]:
    """The page of each bot, relative to the report: ``bots/<slug of the name>.html`` (a
    number added where two names make the same file name, case ignored)."""
    return page_paths(bot_names(records), BOTS_FOLDER)


def _pct(points: float, games: int) -> str:
    return f"{100 * points / games:.1f}" if games else "–"


def bot_context(bot: str, records: Union[Sequence[GameRecord], ReportData],
                tables: Sequence[Standings],
                title: str, game_pages: Optional[dict[str, str]] = None,
                game_titles: Optional[dict[str, str]] = None,
                bot_pages: Optional[dict[str, str]] = None,
                forfeit_groups: Optional[dict[str, list[ForfeitGroup]]] = None) -> dict[str, Any]:
    """What ``bot``'s page shows, as plain values for the template (links relative to the
    page, in ``bots/``): games in order of variant, round and pair; opponents linked to their
    pages in ``bot_pages`` (paths relative to the report, :func:`bot_page_names`).
    ``forfeit_groups`` is :func:`arena.report.forfeits.group_forfeits` of ``records`` (made
    here when not given; :func:`write_bot_pages` groups once for every page)."""
    from arena.report.data import ReportData, collect
    from arena.report.viewer import ending_text

    data = records if isinstance(records, ReportData) else collect(records)
    if forfeit_groups is None:
        forfeit_groups = data.forfeits

    game_pages = game_pages or {}
    game_titles = game_titles or {}
    others = {b: f"../{p}" for b, p in (bot_pages or {}).items()}
    standings: list[dict[str, Any]] = []
    for st in tables:
        try:
            row = st.row(bot)
        except KeyError:
            continue
        standings.append({
            "label": st.label, "rank": row.place, "of": len(st.rows),
            "points": f"{row.points:g}", "elo": format_number(row.rating, "+.0f"),
            "elo95": format_number(row.rating95, ".0f"), "prior": row.prior,
            "games": row.games, "score": f"{100 * row.score:.1f}" if row.games else "–",
            "wdl": row.wdl, "forfeits": row.forfeits_text(), "flag": row.flag,
            "note": plain_note(row.flag) or "", "rule": ranking_caption(st),
        })
    tallies: dict[tuple[str, str], Tally] = {}
    overall = Tally(bot)
    for variant, table in data.tallies.variants.items():
        for (w, b), (ww, d, bw, other_result) in table.results.items():
            for mine, opp, won, lost in ((w, b, ww, bw), (b, w, bw, ww)):
                if mine != bot:
                    continue
                for t in (tallies.setdefault((opp, variant), Tally(bot, variant)), overall):
                    t.wins += won
                    t.draws += d
                    t.losses += lost + other_result
    games: list[dict[str, Any]] = []
    ordered = sorted(data.listed, key=lambda r: (r.variant, r.round is None, r.round or 0,
                                                 r.pair is None, r.pair or 0, r.game_id))
    for r in ordered:
        for color, me, other in (("white", r.white, r.black), ("black", r.black, r.white)):
            if me.name != bot:
                continue
            s = r.score(color)
            result = "won" if s == 1 else "drew" if s == 0.5 else "lost"
            page = game_pages.get(r.game_id)
            games.append({
                "id": r.game_id, "title": game_titles.get(r.game_id, r.game_id),
                "color": color, "opponent": other.name, "variant": r.variant,
                "opponent_page": others.get(other.name),
                "result": r.result, "outcome": result, "ending": ending_text(r),
                "forfeit": r.forfeit == color, "plies": r.plies,
                "page": f"../{page}" if page else None,
            })
    opponents: list[dict[str, Any]] = []
    for (opp, variant), t in sorted(tallies.items()):
        opponents.append({"opponent": opp, "page": others.get(opp), "variant": variant,
                          "games": t.games, "wdl": t.wdl, "points": f"{t.points:g}",
                          "score": _pct(t.points, t.games)})
    forfeits: list[dict[str, Any]] = [{
        "kind": g.termination, "reason": g.reason, "count": g.count,
        "games": [(gid, f"../{game_pages[gid]}" if gid in game_pages else None)
                  for gid in g.games[:20]],
        "more": max(g.count - 20, 0),
        "detail": g.first.detail, "line": g.first.offending_line, "stderr": g.stderr,
        "first": g.first.game_id,
    } for g in forfeit_groups.get(bot, [])]
    return {
        "bot": bot, "title": title, "standings": standings, "opponents": opponents,
        "total": {"games": overall.games, "points": f"{overall.points:g}",
                  "wdl": overall.wdl, "score": _pct(overall.points, overall.games)},
        "games": games, "forfeits": forfeits,
        "games_omitted": overall.games - len(games),
        "n_forfeits": sum(f["count"] for f in forfeits),
    }


def render_bot_page(context: dict[str, Any]) -> str:
    """One bot's page for a :func:`bot_context` dictionary (jinja2, autoescaped)."""
    import jinja2

    from arena.report.html import report_css, shown
    from arena.report.words import COLUMNS, elo_gap_sentence

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, finalize=shown)
    return env.from_string(_TEMPLATE).render(css=_markup(report_css()), columns=COLUMNS,
                                             elo_gap=elo_gap_sentence(), **context)


def _markup(text: str) -> Any:
    """``text`` marked safe for the template (our own style sheet, not bot text)."""
    import markupsafe

    return markupsafe.Markup(text)


def write_bot_pages(folder: str | os.PathLike[str],
                    records: Union[Sequence[GameRecord], ReportData],
                    tables: Sequence[Standings], title: str,
                    names: Optional[dict[str, str]] = None,
                    game_pages: Optional[dict[str, str]] = None,
                    game_titles: Optional[dict[str, str]] = None,
                    forfeit_groups: Optional[dict[str, list[ForfeitGroup]]] = None) -> int:
    """Write a page per bot under ``folder/bots/`` (removing the pages of bots no longer in
    the records); returns how many.  Each page goes to a temporary name and is renamed.
    ``forfeit_groups`` is :func:`arena.report.forfeits.group_forfeits` of ``records`` (made
    here, once for every page, when not given)."""
    from arena.report.data import ReportData, collect

    out = Path(folder)
    data = records if isinstance(records, ReportData) else collect(records)
    if forfeit_groups is None:
        forfeit_groups = data.forfeits
    names = names if names is not None else bot_page_names(data)
    (out / BOTS_FOLDER).mkdir(exist_ok=True)
    wanted = {out / page for page in names.values()}
    for old in (out / BOTS_FOLDER).glob("*.html"):
        if old not in wanted:
            old.unlink(missing_ok=True)
    for bot, page in names.items():
        path = out / page
        tmp = path.with_name(f".{path.name}.tmp")
        context = bot_context(bot, data, tables, title, game_pages, game_titles, names,
                              forfeit_groups)
        tmp.write_text(render_bot_page(context), encoding="utf-8")
        os.replace(tmp, path)
    return len(names)


_TEMPLATE = r"""{% macro th(key, cls="") %}<th{% if cls %} class="{{ cls }}"{% endif %} scope="col" title="{{ columns[key].meaning }}">{{ columns[key].header }}</th>{% endmacro %}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ bot }} – {{ title }} – Morris Arena</title>
<style>
{{ css }}
td.won { color: #1a7f37; } td.lost { color: #b42318; }
tr.forfeited td { background: #fff4f2; }
th, td:not(.name) { white-space: nowrap; } td.flag { white-space: normal; }
</style>
</head>
<body>
<p class="meta"><a href="../report.html">← {{ title }}: the report</a></p>
<h1>{{ bot }}</h1>
<p class="meta">{{ total.games }} game{% if total.games != 1 %}s{% endif %}: {{ total.wdl }} (W-D-L),
{{ total.points }} point{% if total.points != "1" %}s{% endif %}{% if n_forfeits %}, {{ n_forfeits }} lost by forfeit{% endif %}.</p>

<h2 id="standings">Standings</h2>
{% set prior = standings | selectattr("prior") | list %}
{% set forfeited = standings | selectattr("forfeits") | list %}
<p class="read">Where {{ bot }} stands in each table of the report. A win is 1 point, a draw ½.
Only the gap between two bots' Elo counts: {{ elo_gap }}.<span class="screen-only"> Point at a
column's name to see what it means;</span> the report's list <a href="../report.html#glossary">What
the columns mean</a> explains them all.</p>
<div class="scroll">
<table class="standings">
<thead><tr><th class="name" scope="col" title="Each variant has its own table; &quot;all variants&quot; adds them together.">table</th>{{ th("rank") }}{{ th("points") }}{{ th("wdl") }}{{ th("games") }}{{ th("score") }}{{ th("elo") }}{{ th("elo95") }}{% if prior %}{{ th("prior") }}{% endif %}{% if forfeited %}{{ th("forfeits", "name") }}{% endif %}{% if prior %}{{ th("note", "name") }}{% endif %}</tr></thead>
<tbody>
{% for s in standings %}
<tr{% if s.flag %} class="flagged"{% endif %}><td class="name" title="{{ s.rule }}">{{ s.label }}</td><td>{{ s.rank }} of {{ s.of }}</td>
<td class="key">{{ s.points }}</td><td>{{ s.wdl }}</td><td>{{ s.games }}</td><td>{{ s.score }}</td>
<td>{{ s.elo }}</td><td>{{ s.elo95 }}</td>{% if prior %}<td class="prior">{% if s.prior %}*{% endif %}</td>{% endif %}
{% if forfeited %}<td class="name">{{ s.forfeits }}</td>{% endif %}{% if prior %}<td class="flag">{{ s.note }}</td>{% endif %}</tr>
{% endfor %}
</tbody>
</table>
</div>
{% if prior %}<p class="note">* This Elo is only a rough guess:
the games alone cannot pin it down (the note says why; see the report).</p>{% endif %}

<h2 id="opponents">Results by opponent and variant</h2>
<table class="opponents">
<tr><th class="name">opponent</th><th class="name">variant</th><th>games</th><th>W-D-L</th><th>points</th><th>score %</th></tr>
{% for o in opponents %}
<tr><td class="name">{% if o.page %}<a href="{{ o.page }}">{{ o.opponent }}</a>{% else %}{{ o.opponent }}{% endif %}</td><td class="name">{{ o.variant }}</td><td>{{ o.games }}</td>
<td>{{ o.wdl }}</td><td>{{ o.points }}</td><td>{{ o.score }}</td></tr>
{% endfor %}
<tr><th class="name">total</th><th></th><th>{{ total.games }}</th><th>{{ total.wdl }}</th><th>{{ total.points }}</th><th>{{ total.score }}</th></tr>
</table>

<h2 id="forfeits">Forfeits</h2>
{% if not forfeits %}<p>{{ bot }} lost no game by forfeit.</p>{% else %}
<p>Identical forfeits are grouped: one row per reason (the same ending and detail up to
numbers such as move numbers and times), with the first game's detail, the line it sent and
its stderr as the example.</p>
<table class="forfeits">
<tr><th class="name">reason</th><th>games</th><th class="name">example (the first of these games)</th><th class="name">in games</th></tr>
{% for f in forfeits %}
<tr class="group"><td class="name">{{ f.kind }}</td><td>{{ f.count }}</td>
<td class="name example">{{ f.detail }}
{% if f.line is not none %}<br>sent: <code>{{ f.line }}</code>{% endif %}
{% if f.stderr %}<details open><summary>stderr of game {{ f.first }} (the end)</summary><pre>{{ f.stderr[-4000:] }}</pre></details>{% else %}<br><span class="meta">no stderr</span>{% endif %}
</td>
<td class="name ids">{% for gid, page in f.games %}<span class="gid">{% if page %}<a href="{{ page }}">{{ gid }}</a>{% else %}{{ gid }}{% endif %}{% if not loop.last %},{% endif %}</span> {% endfor %}{% if f.more %}and {{ f.more }} more{% endif %}</td></tr>
{% endfor %}
</table>
{% endif %}

<h2 id="games">Games</h2>
{% if games_omitted %}<p class="note">Only its games among those the report lists are here
({{ games | length }}); its {{ games_omitted }} other game{% if games_omitted != 1 %}s are{% else %} is{% endif %} in games.jsonl
and games.csv. Every number above counts all its games.</p>{% endif %}
<div class="scroll">
<table class="games">
<tr><th class="name">game</th><th class="name">colour</th><th class="name">opponent</th><th class="name">variant</th>
<th>result</th><th class="name">how it ended</th><th>turns</th></tr>
{% for g in games %}
<tr{% if g.forfeit %} class="forfeited"{% endif %}><td class="name">{% if g.page %}<a href="{{ g.page }}" title="{{ g.id }}">{{ g.title }}</a>{% else %}{{ g.title }}{% endif %}</td>
<td class="name">{{ g.color }}</td><td class="name">{% if g.opponent_page %}<a href="{{ g.opponent_page }}">{{ g.opponent }}</a>{% else %}{{ g.opponent }}{% endif %}</td><td class="name">{{ g.variant }}</td>
<td class="{{ g.outcome }}">{{ g.result }} ({{ g.outcome }})</td><td class="name">{{ g.ending }}</td><td>{{ g.plies }}</td></tr>
{% endfor %}
</table>
</div>
</body>
</html>
"""
