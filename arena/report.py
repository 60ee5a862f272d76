"""Charts and a self-contained ``report.html`` for a results folder.

:func:`build_report` reads nothing but the records it is given (or ``games.jsonl``), computes
the standings with :mod:`arena.ratings`, draws PNG charts with matplotlib (Agg, no pyplot
state) and renders one HTML file with jinja2: bot names, offending lines, details and stderr
are untrusted text, so every value the page shows has its control characters escaped
(:func:`arena.protocol.escape_controls`; stderr keeps its line breaks and tabs) and is then
HTML-escaped.  The images are embedded as base64 so the HTML stands alone.
Every file is written to a temporary name and moved into place with ``os.replace``.
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from arena.errors import ArenaError
from arena.protocol import escape_controls
from arena.records import GameRecord, atomic_write, read_records

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from arena.ratings import Standings

GAMES_FILE = "games.jsonl"
REPORT_FILE = "report.html"
RATINGS_FILE = "ratings.csv"
_NAME_CAP = 28  # characters of a bot name shown on a chart axis


# ---------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------


def games_path(results: str | os.PathLike[str]) -> Path:
    """The ``games.jsonl`` of a results folder, or ``results`` itself if it is a file.

    :raises ArenaError: the path does not exist, or the folder has no ``games.jsonl``.
    """
    p = Path(results)
    if p.is_dir():
        p = p / GAMES_FILE
        if not p.is_file():
            raise ArenaError(f"no {GAMES_FILE} in {results}")
    elif not p.is_file():
        raise ArenaError(f"no such results folder or file: {results}")
    return p


def load_games(results: str | os.PathLike[str]) -> list[GameRecord]:
    """The records of a results folder or ``games.jsonl`` file; at least one.

    :raises ArenaError: missing, unreadable, corrupt or empty.
    """
    p = games_path(results)
    records = read_records(p)
    if not records:
        raise ArenaError(f"no games in {p}")
    return records


def select_variant(records: Sequence[GameRecord], variant: Optional[str]) -> Optional[str]:
    """The canonical name of ``variant`` among the records' variants (aliases resolved).

    :raises ArenaError: no game of that variant.
    """
    if variant is None:
        return None
    present = list(dict.fromkeys(r.variant for r in records))
    if variant in present:
        return variant
    from arena.variants import ALIASES

    canonical = ALIASES.get(variant, variant)
    if canonical in present:
        return canonical
    raise ArenaError(f"no games of variant {variant!r} (the results have: {', '.join(present)})")


# ---------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------


def slug(text: str) -> str:
    """``text`` made safe as part of a file name."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s[:60] or "x"


def clean_text(text: str) -> str:
    """``text`` with control and other unprintable characters replaced by ``?`` (for terminals)."""
    return "".join(c if c.isprintable() else "?" for c in text)


def short(name: str, cap: int = _NAME_CAP) -> str:
    """A name cut to ``cap`` characters (with an ellipsis), for chart labels."""
    name = clean_text(name)
    return name if len(name) <= cap else name[: cap - 1] + "…"


# ---------------------------------------------------------------------------------------
# Text, CSV and JSON tables (for ``arena rate``)
# ---------------------------------------------------------------------------------------


def format_match(m: Any) -> str:
    """One line of two-bot statistics for a :class:`arena.ratings.Match`."""
    e = m.estimate
    parts = [f"{clean_text(m.a)} vs {clean_text(m.b)}: {m.games} games, W-D-L "
             f"{m.wins}-{m.draws}-{m.losses}, draws {100 * m.draw_ratio:.1f}%"]
    if sum(m.pentanomial):
        parts.append("pairs LL-LD-WL/DD-WD-WW " + "-".join(str(c) for c in m.pentanomial)
                     + (f" ({m.unpaired} unpaired games)" if m.unpaired else ""))
    if e is not None:
        parts.append(format_estimate(e, nelo=bool(sum(m.pentanomial))))
    return "; ".join(parts)


def format_estimate(e: Any, *, nelo: bool = True, los: bool = True) -> str:
    """``Elo +55.6 ± 27.7; nElo +57.9 ± 28.3; LOS 100.0%`` for a ``ScoreEstimate``.

    An infinite Elo (every game won or lost) is shown without an interval.
    """
    if not math.isfinite(e.elo):
        return f"Elo {'+' if e.elo > 0 else '-'}inf (no {'loss' if e.elo > 0 else 'win'} yet)"
    out = f"Elo {e.elo:+.1f} ± {_fmt(e.elo95, '.1f')}"
    if nelo and math.isfinite(e.nelo):
        out += f"; nElo {e.nelo:+.1f} ± {e.nelo95:.1f}"
    return out + (f"; LOS {100 * e.los:.1f}%" if los else "")


def format_standings(tables: Sequence[Standings], records: Sequence[GameRecord] = ()) -> str:
    """Aligned text tables (one per variant, then pooled), flags as notes below each.

    With exactly two bots in a table, the match statistics (pentanomial, LOS) follow.
    """
    from arena.ratings import match_stats

    out = io.StringIO()
    head = ("rank", "bot", "Elo", "±95%", "games", "score", "W-D-L", "draw", "LOS>next",
            "forfeits")
    for st in tables:
        where = (f"anchored on {clean_text(st.anchor)}" if st.anchor else "centred on the mean")
        out.write(f"{st.label}: {st.games} games, Elo {where}\n")
        rows = [(str(r.rank or "-"), clean_text(r.bot), _fmt(r.elo, "+.1f", "-"),
                 _fmt(r.elo95, ".1f", "-"), str(r.games), f"{100 * r.score:.1f}%", r.wdl,
                 f"{100 * r.draw_ratio:.1f}%",
                 _fmt(None if r.los_next is None else 100 * r.los_next, ".1f", "-")
                 + ("%" if r.los_next is not None else ""),
                 r.forfeits_text() or "-") for r in st.rows]
        widths = [max(len(h), *(len(row[k]) for row in rows)) for k, h in enumerate(head)]
        left = {1, 6, 9}

        def line(cells: Sequence[str]) -> str:
            return "  ".join(c.ljust(w) if k in left else c.rjust(w)
                             for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

        out.write(line(head) + "\n")
        for row in rows:
            out.write(line(row) + "\n")
        for r in st.rows:
            if r.flag:
                out.write(f"  note: {clean_text(r.bot)}: {r.flag}\n")
        if st.note:
            out.write(f"  note: {st.note}\n")
        if len(st.rows) == 2 and records:
            m = match_stats(records, st.rows[0].bot, st.rows[1].bot, st.variant)
            out.write("  " + format_match(m) + "\n")
        out.write("\n")
    return out.getvalue().rstrip("\n") + "\n"


def standings_json(tables: Sequence[Standings], records: Sequence[GameRecord] = ()) -> str:
    """The tables as JSON: ``{"tables": [{"variant", "games", "anchor", "rows", ...}]}``."""
    import json

    from arena.ratings import match_stats, standings_rows

    def finite(x: Any) -> Any:
        return None if isinstance(x, float) and not math.isfinite(x) else x

    doc = []
    for st in tables:
        rows = [{k: finite(v) for k, v in row.items() if k != "variant"}
                for row in standings_rows([st])]
        item: dict[str, Any] = {"variant": st.variant, "label": st.label, "games": st.games,
                                "anchor": st.anchor, "note": st.note, "rows": rows}
        if len(st.rows) == 2 and records:
            m = match_stats(records, st.rows[0].bot, st.rows[1].bot, st.variant)
            e = m.estimate
            item["match"] = {
                "a": m.a, "b": m.b, "wins": m.wins, "draws": m.draws, "losses": m.losses,
                "pentanomial": list(m.pentanomial), "unpaired": m.unpaired,
                "elo": finite(e.elo) if e else None, "elo95": finite(e.elo95) if e else None,
                "nelo": finite(e.nelo) if e else None, "los": finite(e.los) if e else None,
                "draw_ratio": finite(m.draw_ratio),
            }
        doc.append(item)
    return json.dumps({"tables": doc}, indent=2, ensure_ascii=False, allow_nan=False)


def standings_csv(tables: Sequence[Standings]) -> str:
    """The tables as CSV (one row per bot per table; text cells guarded against formulas)."""
    from arena.ratings import ratings_table

    return csv_safe(ratings_table(tables)).to_csv(index=False)


# ---------------------------------------------------------------------------------------
# Charts: each returns PNG bytes
# ---------------------------------------------------------------------------------------


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, min(max(height, 2.5), 40.0)), dpi=100, layout="constrained")


def _png(fig: Figure) -> bytes:
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _rc() -> Any:
    import matplotlib

    # bot names may hold '$' or backslashes: never interpret them as math text
    return matplotlib.rc_context({"text.parse_math": False, "text.usetex": False})


def chart_elo(st: Standings) -> bytes:
    """Elo with 95 % error bars for one standings table, best at the top."""
    rated = [r for r in st.rows if r.elo is not None]
    with _rc():
        fig = _figure(7.5, 0.32 * max(len(rated), 1) + 1.4)
        ax = fig.add_subplot()
        if rated:
            ys = list(range(len(rated)))[::-1]
            ax.errorbar([r.elo for r in rated], ys, xerr=[r.elo95 for r in rated], fmt="o",
                        color="#1f5fa8", ecolor="#7aa6d6", capsize=3)
            ax.set_yticks(ys, [short(r.bot) for r in rated])
            if st.anchor is None:
                ax.axvline(0, color="#999", lw=0.8, ls=":")
        else:
            ax.text(0.5, 0.5, "no bot could be rated", ha="center", va="center",
                    transform=ax.transAxes)
            ax.set_yticks([])
        flagged = len(st.rows) - len(rated)
        ax.set_xlabel("Elo (95% interval)" + (f"; {flagged} bot(s) flagged, not shown"
                                             if flagged else ""))
        ax.set_title(f"Elo: {st.label} ({st.games} games)")
        ax.grid(axis="x", alpha=0.3)
        return _png(fig)


def chart_variant_comparison(tables: Sequence[Standings]) -> bytes:
    """Each bot's Elo (± 95 %) in every variant side by side (one colour per variant)."""
    per_variant = [t for t in tables if t.variant is not None] or list(tables)
    bots = sorted({r.bot for t in per_variant for r in t.rows if r.elo is not None})
    pooled = next((t for t in tables if t.variant is None), per_variant[0])
    order = {r.bot: k for k, r in enumerate(pooled.rows)}
    bots.sort(key=lambda b: (order.get(b, len(order)), b))
    k = max(len(per_variant), 1)
    with _rc():
        fig = _figure(8.0, 0.35 * max(len(bots), 1) * (1 + 0.15 * k) + 1.6)
        ax = fig.add_subplot()
        cmap = _colors(k)
        for v, t in enumerate(per_variant):
            xs, ys, es = [], [], []
            for b_i, b in enumerate(bots):
                try:
                    r = t.row(b)
                except KeyError:
                    continue
                if r.elo is None:
                    continue
                xs.append(r.elo)
                es.append(r.elo95)
                ys.append(len(bots) - 1 - b_i + (v - (k - 1) / 2) * (0.7 / k))
            ax.errorbar(xs, ys, xerr=es, fmt="o", ms=4, capsize=2, color=cmap[v],
                        label=short(t.label, 40))
        ax.set_yticks(range(len(bots))[::-1], [short(b) for b in bots])
        ax.axvline(0, color="#999", lw=0.8, ls=":")
        ax.set_xlabel("Elo (95% interval)")
        ax.set_title("Elo by variant")
        ax.grid(axis="x", alpha=0.3)
        if per_variant:
            ax.legend(fontsize="small", loc="best")
        return _png(fig)


def _colors(k: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if k <= 10 else "viridis"]
    return [cmap(i if k <= 10 else i / max(k - 1, 1)) for i in range(k)]


def _termination_colors(terms: Sequence[str]) -> list[Any]:
    """Blues/greens for endings by the rules, reds/oranges for forfeits."""
    import matplotlib

    from arena.rules import Termination

    forfeit = {t.value for t in Termination if t.is_forfeit}
    cool, warm = matplotlib.colormaps["GnBu"], matplotlib.colormaps["OrRd"]
    rules = [t for t in terms if t not in forfeit]
    bad = [t for t in terms if t in forfeit]
    shade = {t: cool(0.35 + 0.6 * k / max(len(rules) - 1, 1)) for k, t in enumerate(rules)}
    shade.update({t: warm(0.45 + 0.5 * k / max(len(bad) - 1, 1)) for k, t in enumerate(bad)})
    return [shade[t] for t in terms]


def chart_head_to_head(records: Sequence[GameRecord], order: Sequence[str] = ()) -> bytes:
    """Heat map of each row bot's score % against each column bot (all variants pooled)."""
    import numpy as np

    from arena.ratings import head_to_head

    bots, points, games = head_to_head(records)
    idx = sorted(range(len(bots)), key=lambda i: (list(order).index(bots[i])
                                                  if bots[i] in order else len(order), bots[i]))
    points, games = points[np.ix_(idx, idx)], games[np.ix_(idx, idx)]
    names = [bots[i] for i in idx]
    n = len(names)
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = np.where(games > 0, 100.0 * points / games, np.nan)
    with _rc():
        size = min(0.45 * n + 2.5, 40.0)
        fig = _figure(size + 1.5, size)
        ax = fig.add_subplot()
        im = ax.imshow(np.ma.masked_invalid(pct), cmap="RdYlGn", vmin=0, vmax=100)
        ticks = range(n)
        ax.set_xticks(ticks, [short(b, 16) for b in names], rotation=60, ha="right",
                      fontsize="small" if n > 12 else None)
        ax.set_yticks(ticks, [short(b) for b in names], fontsize="small" if n > 12 else None)
        if n <= 16:
            for i in range(n):
                for j in range(n):
                    if games[i, j] > 0:
                        dark = pct[i, j] < 20 or pct[i, j] > 80  # the colour map's dark ends
                        ax.text(j, i, f"{pct[i, j]:.0f}", ha="center", va="center", fontsize=8,
                                color="white" if dark else "black")
        fig.colorbar(im, ax=ax, label="score % of the row bot", shrink=0.8)
        ax.set_title("Head to head (row against column)")
        return _png(fig)


def chart_elo_vs_games(st: Standings) -> bytes:
    """Elo (± 95 %) against games played: how the uncertainty shrinks with games."""
    rated = [r for r in st.rows if r.elo is not None]
    with _rc():
        fig = _figure(7.5, 4.8)
        ax = fig.add_subplot()
        if rated:
            ax.errorbar([r.games for r in rated], [r.elo for r in rated],
                        yerr=[r.elo95 for r in rated], fmt="o", color="#1f5fa8",
                        ecolor="#7aa6d6", capsize=3)
            if len(rated) <= 30:
                for r in rated:
                    ax.annotate(short(r.bot, 18), (r.games, r.elo), textcoords="offset points",
                                xytext=(5, 3), fontsize=8)
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("games played")
        ax.set_ylabel("Elo (95% interval)")
        ax.set_title(f"Elo against games played: {st.label}")
        ax.grid(alpha=0.3)
        return _png(fig)


def chart_game_lengths(records: Sequence[GameRecord]) -> bytes:
    """Game length (turns) per variant, and how games ended (terminations) per variant."""
    variants = list(dict.fromkeys(r.variant for r in records))
    terms = sorted({r.termination for r in records})
    colors = _colors(len(variants))
    with _rc():
        fig = _figure(11.0, max(4.2, 0.45 * len(variants) + 2.5))
        ax1, ax2 = fig.subplots(1, 2)
        longest = max((r.plies for r in records), default=1)
        bins = min(40, max(longest, 1))
        lengths: dict[str, list[int]] = {v: [] for v in variants}
        for r in records:
            lengths[r.variant].append(r.plies)
        for v, color in zip(variants, colors):
            ax1.hist(lengths[v], bins=bins, range=(0, max(longest, 1)), histtype="step", lw=1.6,
                     color=color, label=short(v, 30))
        ax1.set_xlabel("turns per game")
        ax1.set_ylabel("games")
        ax1.set_title("Game length")
        ax1.legend(fontsize="small")
        tcolors = _termination_colors(terms)
        left = [0.0] * len(variants)
        ys = list(range(len(variants)))[::-1]
        ends = Counter((r.variant, r.termination) for r in records)
        totals = [sum(ends[v, t] for t in terms) for v in variants]
        for t, color in zip(terms, tcolors):
            counts = [ends[v, t] for v in variants]
            shares = [100.0 * c / n if n else 0.0 for c, n in zip(counts, totals)]
            ax2.barh(ys, shares, left=left, color=color, label=short(t, 24))
            left = [a + b for a, b in zip(left, shares)]
        ax2.set_yticks(ys, [short(v, 24) for v in variants])
        ax2.set_xlim(0, 100)
        ax2.set_xlabel("% of games")
        ax2.set_title("How games ended")
        ax2.legend(fontsize="small", loc="lower left", bbox_to_anchor=(0, 1.08), ncol=3,
                   frameon=False)
        return _png(fig)


# ---------------------------------------------------------------------------------------
# The HTML report
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chart:
    """One chart: its file name, caption and PNG bytes."""

    file: str
    caption: str
    png: bytes

    @property
    def data_uri(self) -> str:
        """The PNG as a ``data:`` URI, for embedding."""
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


def build_charts(records: Sequence[GameRecord], tables: Sequence[Standings]) -> list[Chart]:
    """Every chart of the report, in the order shown."""
    charts: list[Chart] = []
    for st in tables:
        name = "all" if st.variant is None else slug(st.variant)
        charts.append(Chart(f"elo-{name}.png", f"Elo with 95% intervals: {st.label}",
                            chart_elo(st)))
    charts.append(Chart("elo-by-variant.png", "Elo of each bot in each variant",
                        chart_variant_comparison(tables)))
    main = tables[-1]
    charts.append(Chart("head-to-head.png", "Head-to-head score (all variants)",
                        chart_head_to_head(records, [r.bot for r in main.rows])))
    charts.append(Chart("elo-vs-games.png", f"Elo against games played ({main.label})",
                        chart_elo_vs_games(main)))
    charts.append(Chart("game-lengths.png", "Game length and terminations per variant",
                        chart_game_lengths(records)))
    return charts


def _move_text(r: GameRecord) -> list[tuple[int, str, str]]:
    """``(number, white's turn, black's turn)`` rows for a move list."""
    moves = [m.move for m in r.moves]
    return [(k // 2 + 1, moves[k], moves[k + 1] if k + 1 < len(moves) else "")
            for k in range(0, len(moves), 2)]


def _fmt(x: Optional[float], spec: str, none: str = "–") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return none
    return format(x, spec)


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
            "elo": _fmt(e.elo if e else None, "+.1f"), "elo95": _fmt(e.elo95 if e else None, ".1f"),
            "nelo": _fmt(e.nelo if e and paired else None, "+.1f"),
            "los": _fmt(100 * e.los if e else None, ".1f"),
            "draw": _fmt(100 * m.draw_ratio, ".1f"),
        })
    return out


#: games whose moves are listed in report.html by default (a bigger page is hard to open)
MAX_GAMES_LISTED = 10_000
#: forfeits listed one by one per bot (the others are counted)
MAX_FORFEITS_LISTED = 100


def _context(records: Sequence[GameRecord], tables: Sequence[Standings], charts: Sequence[Chart],
             title: str, method: str, max_games: Optional[int]) -> dict[str, Any]:
    standings = []
    for st in tables:
        rows = []
        for r in st.rows:
            rows.append({
                "rank": r.rank or "–", "bot": r.bot, "elo": _fmt(r.elo, "+.1f"),
                "elo95": _fmt(r.elo95, ".1f"), "games": r.games, "score": f"{100 * r.score:.1f}",
                "wdl": r.wdl, "draw": f"{100 * r.draw_ratio:.1f}",
                "los": _fmt(None if r.los_next is None else 100 * r.los_next, ".1f"),
                "forfeits": r.forfeits_text(), "flag": r.flag,
            })
        order = [r.bot for r in st.rows]
        standings.append({
            "label": st.label, "games": st.games, "rows": rows, "note": st.note,
            "anchor": st.anchor, "cross": _crosstable(records, st.variant, order),
            "matches": _matches(records, st.variant, order),
        })
    forfeits: dict[str, dict[str, Any]] = {}
    shown = records if max_games is None else records[:max_games]
    listed = {id(r) for r in shown}
    for r in records:
        if r.forfeit not in ("white", "black"):
            continue
        color = r.forfeit
        bot = r.white.name if color == "white" else r.black.name
        entry = forfeits.setdefault(bot, {"items": [], "total": 0, "kinds": Counter()})
        entry["total"] += 1
        entry["kinds"][r.termination] += 1
        if len(entry["items"]) < MAX_FORFEITS_LISTED:
            entry["items"].append({
                "game": r.game_id, "variant": r.variant, "kind": r.termination,
                "detail": r.detail, "line": r.offending_line,
                "stderr": (r.stderr or {}).get(color, ""), "linked": id(r) in listed,
            })
    for entry in forfeits.values():
        entry["kinds"] = ", ".join(f"{k} {v}" for k, v in sorted(entry["kinds"].items()))
    games = [{
        "id": r.game_id, "variant": r.variant, "white": r.white.name, "black": r.black.name,
        "result": r.result, "termination": r.termination, "plies": r.plies,
        "forfeit": r.forfeit, "detail": r.detail, "moves": _move_text(r),
        "opening": len(r.opening),
    } for r in shown]
    return {
        "title": title, "generated": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "n_games": len(records), "n_bots": len({r.white.name for r in records}
                                               | {r.black.name for r in records}),
        "variants": list(dict.fromkeys(r.variant for r in records)),
        "standings": standings, "charts": charts, "forfeits": sorted(forfeits.items()),
        "games": games, "method": method, "games_omitted": len(records) - len(shown),
    }


def render_html(context: dict[str, Any]) -> str:
    """The report page for a :func:`_context` dictionary (jinja2, autoescaped)."""
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


def build_report(folder: str | os.PathLike[str], records: Optional[Sequence[GameRecord]] = None,
                 *, title: Optional[str] = None, anchor: Optional[tuple[str, float]] = None,
                 max_games: Optional[int] = MAX_GAMES_LISTED) -> Path:
    """Write the charts, ``ratings.csv`` and ``report.html`` into ``folder``; returns the HTML path.

    ``records`` default to the folder's ``games.jsonl``.  ``anchor=(bot, elo)`` pins one bot's
    Elo (the tables stay centred on 0 where it is not rated).  The moves of the first
    ``max_games`` games are listed (None: all); every number uses every game.

    :raises ArenaError: no games, or a missing/corrupt ``games.jsonl``.
    """
    from arena.ratings import rate_all

    out = Path(folder)
    if records is None:
        records = load_games(out)
    if not records:
        raise ArenaError(f"no games to report in {out}")
    if not out.is_dir():
        raise ArenaError(f"no such results folder: {out}")
    tables = rate_all(records, anchor=anchor)
    charts = build_charts(records, tables)
    for chart in charts:
        atomic_write(out / chart.file, chart.png)
    atomic_write(out / RATINGS_FILE, standings_csv(tables).encode("utf-8"))
    context = _context(records, tables, charts, title or out.resolve().name,
                       "pair-clustered sandwich", max_games)
    html_path = out / REPORT_FILE
    atomic_write(html_path, render_html(context).encode("utf-8"))
    return html_path


def write_report(config: Any, folder: str | os.PathLike[str],
                 records: Optional[Sequence[GameRecord]] = None) -> Path:
    """The tournament runner's entry point: :func:`build_report` titled with ``config.name``.

    ``config`` is the tournament's configuration (anything with a ``name``) or None.
    """
    title = getattr(config, "name", None) if config is not None else None
    return build_report(folder, records, title=title)


def csv_safe(df: Any) -> Any:
    """A copy of ``df`` whose text cells cannot run as spreadsheet formulas (``'`` prefix)."""
    df = df.copy()
    for col in ("bot", "flag", "forfeits", "variant"):
        if col in df.columns:
            df[col] = df[col].map(lambda v: "'" + v if isinstance(v, str) and v and v[0] in "=+-@\t\r"
                                  else v)
    return df


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} – Morris Arena report</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto;
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
</style>
</head>
<body>
<h1>{{ title }}</h1>
<p class="meta">{{ n_games }} games, {{ n_bots }} bots, variants: {{ variants | join(", ") }}.
Generated {{ generated }} by Morris Arena.</p>

<h2 id="standings">Standings</h2>
<p>Elo is fitted to all games at once (Bradley–Terry maximum likelihood, a draw is half a
point; 400 Elo points = 10:1 expected score){% if standings[0].anchor %}{% else %}, centred
so the rated bots average 0{% endif %}. <b>±95%</b> is the half-width of the 95% interval
({{ method }} estimate: the two colour-swapped games of a pair count as one unit).
<b>LOS</b> is the probability that the bot is stronger than the one ranked below it.
Bots whose results give no finite Elo (all won, all lost, or never linked by games to the
others) are listed without one.</p>
{% for st in standings %}
<h3>{{ st.label }} <small class="meta">({{ st.games }} games{% if st.anchor %}, {{ st.anchor }} anchored{% endif %})</small></h3>
{% if st.note %}<p class="note">{{ st.note }}</p>{% endif %}
<table>
<tr><th>#</th><th class="name">bot</th><th>Elo</th><th>±95%</th><th>games</th><th>score %</th>
<th>W-D-L</th><th>draw %</th><th>LOS next %</th><th class="name">forfeits</th><th class="name">note</th></tr>
{% for r in st.rows %}
<tr{% if r.flag %} class="flagged"{% endif %}><td>{{ r.rank }}</td><td class="name">{{ r.bot }}</td>
<td>{{ r.elo }}</td><td>{{ r.elo95 }}</td><td>{{ r.games }}</td><td>{{ r.score }}</td>
<td>{{ r.wdl }}</td><td>{{ r.draw }}</td><td>{{ r.los }}</td><td class="name">{{ r.forfeits }}</td>
<td class="flag">{{ r.flag }}</td></tr>
{% endfor %}
</table>
{% endfor %}

<h2 id="charts">Charts</h2>
{% for c in charts %}
<figure><img src="{{ c.data_uri }}" alt="{{ c.caption }}"><figcaption>{{ c.caption }}
({{ c.file }})</figcaption></figure>
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
{% for bot, entry in forfeits %}
<h3>{{ bot }} <small class="meta">({{ entry.total }} forfeit{% if entry.total != 1 %}s{% endif %}: {{ entry.kinds }})</small></h3>
{% if entry.total > entry["items"] | length %}<p class="meta">The first {{ entry["items"] | length }} are listed.</p>{% endif %}
<table>
<tr><th class="name">game</th><th class="name">variant</th><th class="name">reason</th><th class="name">detail</th></tr>
{% for f in entry["items"] %}
<tr><td class="name">{% if f.linked %}<a href="#game-{{ f.game }}">{{ f.game }}</a>{% else %}{{ f.game }}{% endif %}</td><td class="name">{{ f.variant }}</td>
<td class="name">{{ f.kind }}</td><td class="name">{{ f.detail }}
{% if f.line is not none %}<br>sent: <code>{{ f.line }}</code>{% endif %}
{% if f.stderr %}<details><summary>stderr</summary><pre>{{ f.stderr }}</pre></details>{% endif %}
</td></tr>
{% endfor %}
</table>
{% endfor %}

<h2 id="games">Games</h2>
<p>Each game's moves; grey moves are the opening set by the referee.{% if games_omitted %}
<b>Only the first {{ games | length }} games are listed here</b> ({{ games_omitted }} more are in
games.jsonl and games.csv); every number above uses all games.{% endif %}</p>
<table>
<tr><th class="name">game</th><th class="name">variant</th><th class="name">white</th><th class="name">black</th>
<th>result</th><th class="name">ending</th><th>turns</th></tr>
{% for g in games %}
<tr id="game-{{ g.id }}"><td class="name">
<details><summary>{{ g.id }}</summary>
<div class="moves">{% for n, w, b in g.moves %}{{ n }}.&nbsp;<span{% if loop.index0 * 2 < g.opening %} class="opening"{% endif %}>{{ w }}</span>{% if b %}&nbsp;<span{% if loop.index0 * 2 + 1 < g.opening %} class="opening"{% endif %}>{{ b }}</span>{% endif %} {% endfor %}</div>
{% if g.detail %}<div class="meta">{{ g.detail }}</div>{% endif %}
</details></td>
<td class="name">{{ g.variant }}</td><td class="name">{{ g.white }}</td><td class="name">{{ g.black }}</td>
<td>{{ g.result }}</td><td class="name">{{ g.termination }}{% if g.forfeit %} ({{ g.forfeit }}){% endif %}</td>
<td>{{ g.plies }}</td></tr>
{% endfor %}
</table>
</body>
</html>
"""
