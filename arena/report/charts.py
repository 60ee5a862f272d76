"""The report's charts, each returned as PNG bytes.

matplotlib is imported lazily, inside the functions, and used through its object API
(:class:`matplotlib.figure.Figure` on the Agg canvas, no pyplot state).  Bot names may hold
``$`` or backslashes: math text is switched off while drawing, so they show as written.
"""

from __future__ import annotations

import base64
import io
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

from arena.records import GameRecord
from arena.report.text import short, slug

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from arena.ratings import BotStanding, Standings
    from arena.report.data import ReportData
    from arena.tallies import GameTallies


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


def _rated(st: Standings) -> list[tuple[BotStanding, float, float]]:
    """``(row, elo, elo95)`` for every row of ``st`` that has an Elo, in table order: the
    maximum-likelihood value, or the prior-based one for a bot that rests on the prior
    (``row.prior``; docs/RATINGS.md)."""
    out = []
    for r in st.rows:
        elo, half = r.rating, r.rating95
        if elo is not None and half is not None:
            out.append((r, elo, half))
    return out


def chart_elo(st: Standings) -> Optional[bytes]:
    """Elo with 95 % error bars for one standings table, best at the top; bots that rest on
    the prior are drawn hollow and marked ``*`` (None when no bot has an Elo: nothing to
    draw)."""
    rated = _rated(st)
    if not rated:
        return None
    with _rc():
        fig = _figure(7.5, 0.32 * max(len(rated), 1) + 1.4)
        ax = fig.add_subplot()
        ys = list(range(len(rated)))[::-1]
        for prior in (False, True):
            pts = [(elo, y, half) for (r, elo, half), y in zip(rated, ys) if r.prior == prior]
            if pts:
                ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                            xerr=[p[2] for p in pts], fmt="o", color="#1f5fa8",
                            mfc="white" if prior else "#1f5fa8", ecolor="#7aa6d6", capsize=3)
        ax.set_yticks(ys, [short(r.bot) + ("*" if r.prior else "") for r, _, _ in rated])
        if st.anchor is None:
            ax.axvline(0, color="#999", lw=0.8, ls=":")
        missing = len(st.rows) - len(rated)
        on_prior = sum(1 for r, _, _ in rated if r.prior)
        notes = ([f"* {on_prior} on the prior (hollow)"] if on_prior else []) + (
            [f"{missing} bot(s) without an Elo, not shown"] if missing else [])
        ax.set_xlabel("Elo (95% interval)" + ("; " + "; ".join(notes) if notes else ""))
        ax.set_title(f"Elo: {st.label} ({st.games} games)")
        ax.grid(axis="x", alpha=0.3)
        return _png(fig)


def chart_variant_comparison(tables: Sequence[Standings]) -> Optional[bytes]:
    """Each bot's Elo (± 95 %) in every variant side by side (one colour per variant); None
    with fewer than two variants or no rated bot (nothing to compare)."""
    per_variant = [t for t in tables if t.variant is not None]
    bots = sorted({r.bot for t in per_variant for r in t.rows if r.rating is not None})
    if len(per_variant) < 2 or not bots:
        return None
    pooled = next((t for t in tables if t.variant is None), per_variant[0])
    order = {r.bot: k for k, r in enumerate(pooled.rows)}
    bots.sort(key=lambda b: (order.get(b, len(order)), b))
    k = max(len(per_variant), 1)
    with _rc():
        fig = _figure(8.0, 0.35 * max(len(bots), 1) * (1 + 0.15 * k) + 1.6)
        ax = fig.add_subplot()
        cmap = _colors(k)
        for v, t in enumerate(per_variant):
            xs: list[float] = []
            ys: list[float] = []
            es: list[float] = []
            for b_i, b in enumerate(bots):
                try:
                    r = t.row(b)
                except KeyError:
                    continue
                elo, half = r.rating, r.rating95
                if elo is None or half is None:  # no Elo at all
                    continue
                xs.append(elo)
                es.append(half)
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


#: the width (inches at 100 dpi: pixels / 100) at which the report shows a chart unshrunk
#: (report.css: the page is at most 1200 pixels wide, less its padding)
PAGE_WIDTH_IN = 11.6
#: bots beyond which the head-to-head map numbers its columns (as the crosstable does)
#: instead of writing each name under them
NUMBERED_FROM = 20


@dataclass(frozen=True)
class HeatMapLayout:
    """The size of the head-to-head map for ``n`` bots: ``width`` x ``height`` inches,
    labels of ``fontsize`` points, one cell ``cell`` inches wide, columns ``numbered``
    (beyond :data:`NUMBERED_FROM` bots) and score figures written in the cells
    (``figures``, up to 16 bots), drawn at ``dpi`` (as the other charts)."""

    n: int
    width: float
    height: float
    fontsize: float
    cell: float
    numbered: bool
    figures: bool
    dpi: int = 100

    def shown_px(self, page_px: float = 100 * PAGE_WIDTH_IN) -> float:
        """The labels' height in screen pixels where the report shows the chart: at its
        natural size (``dpi`` pixels an inch), shrunk to a page ``page_px`` wide
        (report.css: ``max-width: 100%``)."""
        return self.fontsize / 72 * min(float(self.dpi), page_px / self.width)


def heat_map_layout(n: int, longest: int = 16) -> HeatMapLayout:
    """The head-to-head map's size for ``n`` bots whose longest label has ``longest``
    characters: labels between 6 and 10 points, cells tall enough for a label (and at most
    0.45 inch), the whole map about as wide as the report's page, so that it is shown at
    its size and not shrunk until its labels cannot be read (40 bots: 8-point labels in
    0.18-inch cells, 9.5 inches wide).  Beyond :data:`NUMBERED_FROM` bots the columns are
    numbered like the rows (``12 name``), as in the crosstable, instead of carrying names."""
    numbered = n > NUMBERED_FROM
    fontsize = max(6.0, min(10.0, 10.0 - 0.1 * (n - NUMBERED_FROM)))
    cell = max(fontsize * 1.55 / 72, min(0.45, 7.0 / max(n, 1)))
    side = n * cell
    label = min(longest + (4 if numbered else 0), 32) * fontsize * 0.6 / 72 + 0.2
    under = (2 * fontsize * 1.6 / 72 + 0.2 if numbered          # numbers above and below
             else 0.87 * min(longest, 16) * fontsize * 0.6 / 72 + 0.2)  # names at 60 degrees
    return HeatMapLayout(n, width=label + side + 1.4, height=side + under + 0.5,
                         fontsize=fontsize, cell=cell, numbered=numbered, figures=n <= 16)


def chart_head_to_head(records: Union[Iterable[GameRecord], GameTallies],
                       order: Sequence[str] = ()) -> Optional[bytes]:
    """Heat map of each row bot's score % against each column bot (all variants pooled);
    None without a game between two bots.  Sized by :func:`heat_map_layout`, so that its
    labels stay readable on the page with 40 bots."""
    import numpy as np

    from arena.ratings import head_to_head

    bots, points, games = head_to_head(records)
    if len(bots) < 2 or not games.any():
        return None
    idx = sorted(range(len(bots)), key=lambda i: (list(order).index(bots[i])
                                                  if bots[i] in order else len(order), bots[i]))
    points, games = points[np.ix_(idx, idx)], games[np.ix_(idx, idx)]
    names = [bots[i] for i in idx]
    n = len(names)
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = np.where(games > 0, 100.0 * points / games, np.nan)
    layout = heat_map_layout(n, max(len(short(b)) for b in names))
    with _rc():
        fig = _figure(layout.width, layout.height)
        fig.set_dpi(layout.dpi)
        ax = fig.add_subplot()
        im = ax.imshow(np.ma.masked_invalid(pct), cmap="RdYlGn", vmin=0, vmax=100)
        ticks = range(n)
        size = layout.fontsize
        if layout.numbered:
            ax.set_xticks(ticks, [str(k + 1) for k in ticks], fontsize=size * 0.85)
            ax.tick_params(axis="x", top=True, labeltop=True, length=2, pad=1)
            ax.set_yticks(ticks, [f"{k + 1}  {short(b)}" for k, b in enumerate(names)],
                          fontsize=size)
            ax.set_xlabel("column k: the bot of row k", fontsize=size)
        else:
            ax.set_xticks(ticks, [short(b, 16) for b in names], rotation=60, ha="right",
                          fontsize=size)
            ax.set_yticks(ticks, [short(b) for b in names], fontsize=size)
        ax.tick_params(axis="y", length=2, pad=1)
        if layout.figures:
            for i in range(n):
                for j in range(n):
                    if games[i, j] > 0:
                        dark = pct[i, j] < 20 or pct[i, j] > 80  # the colour map's dark ends
                        ax.text(j, i, f"{pct[i, j]:.0f}", ha="center", va="center", fontsize=8,
                                color="white" if dark else "black")
        bar = fig.colorbar(im, ax=ax, shrink=0.6, fraction=0.05, pad=0.02)
        bar.set_label("score % of the row bot", fontsize=size)
        bar.ax.tick_params(labelsize=size)
        ax.set_title("Head to head (row against column)", fontsize=size + 2)
        return _png(fig)


def score_over_rounds(records: Iterable[GameRecord]) -> tuple[str, list[int],
                                                            dict[str, list[float]]]:
    """Each bot's cumulative points (all variants pooled, a win 1, a draw 1/2) after each
    round, or after each game when the records hold fewer than two rounds (every k-th game
    beyond :data:`arena.report.data.SCORE_POINTS` games): ``(unit, xs, {bot: points at
    each x})`` with ``unit`` ``"round"`` or ``"game"`` and ``xs`` starting at 0 (before any
    game)."""
    from arena.report.data import ScoreSeries

    series = ScoreSeries()
    for r in records:
        series.add(r.white.name, r.black.name, r.score("white"), r.score("black"), r.round)
    unit, xs, points, _ = series.result()
    return unit, xs, points


def chart_score_over_rounds(records: Union[Sequence[GameRecord], ReportData]
                            ) -> Optional[bytes]:
    """Each bot's cumulative points by round (by game when there is one round), all variants
    pooled: who led when, and who fell behind; None without games."""
    from arena.report.data import ReportData

    if isinstance(records, ReportData):
        if not records.total:
            return None
        unit, xs, series, step = records.score
    else:
        if not records:
            return None
        unit, xs, series = score_over_rounds(records)
        step = 1
    order = sorted(series, key=lambda b: (-series[b][-1], b))
    colors = _colors(len(order))
    with _rc():
        fig = _figure(8.5, 4.8 + 0.12 * max(len(order) - 8, 0))
        ax = fig.add_subplot()
        for bot, color in zip(order, colors):
            ys = series[bot]
            # the legend names each line and its final points (labels at the lines' ends
            # overlap when bots tie)
            ax.plot(xs, ys, color=color, lw=1.8, marker="o" if len(xs) <= 40 else None,
                    ms=3, label=f"{short(bot, 24)} ({ys[-1]:g})")
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("after round" if unit == "round"
                      else "after game (in the order of the games list below)" if step == 1
                      else f"after game (in the order of games.jsonl; every {step}th game "
                           "drawn)")
        ax.set_ylabel("points (win 1, draw ½)")
        ax.set_title("Score over rounds" if unit == "round" else "Score over the games")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="upper left", ncol=2 if len(order) > 8 else 1)
        return _png(fig)


def chart_game_lengths(records: Union[Sequence[GameRecord], ReportData]) -> Optional[bytes]:
    """Game length (turns) per variant, and how games ended (terminations) per variant; None
    without games."""
    from arena.report.data import ReportData

    lengths: dict[str, Counter[int]]
    ends: Counter[tuple[str, str]]
    if isinstance(records, ReportData):
        if not records.total:
            return None
        lengths, ends = records.lengths, records.terminations
    else:
        if not records:
            return None
        lengths, ends = {}, Counter()
        for r in records:
            lengths.setdefault(r.variant, Counter())[r.plies] += 1
            ends[r.variant, r.termination] += 1
    variants = list(lengths)
    terms = sorted({t for _, t in ends})
    colors = _colors(len(variants))
    with _rc():
        fig = _figure(11.0, max(4.2, 0.45 * len(variants) + 2.5))
        ax1, ax2 = fig.subplots(1, 2)
        longest = max((n for c in lengths.values() for n in c), default=1)
        bins = min(40, max(longest, 1))
        for v, color in zip(variants, colors):
            ax1.hist(list(lengths[v]), weights=list(lengths[v].values()), bins=bins,
                     range=(0, max(longest, 1)), histtype="step", lw=1.6, color=color,
                     label=short(v, 30))
        ax1.set_xlabel("turns per game")
        ax1.set_ylabel("games")
        ax1.set_title("Game length")
        ax1.legend(fontsize="small")
        tcolors = _termination_colors(terms)
        left = [0.0] * len(variants)
        ys = list(range(len(variants)))[::-1]
        totals = [sum(ends[v, t] for t in terms) for v in variants]
        for t, color in zip(terms, tcolors):
            counts = [ends[v, t] for v in variants]
            shares = [100.0 * c / n if n else 0.0 for c, n in zip(counts, totals)]
            ax2.barh(ys, shares, left=left, color=color, label=short(t or "unfinished", 24))
            left = [a + b for a, b in zip(left, shares)]
        ax2.set_yticks(ys, [short(v, 24) for v in variants])
        ax2.set_xlim(0, 100)
        ax2.set_xlabel("% of games")
        ax2.set_title("How games ended")
        ax2.legend(fontsize="small", loc="lower left", bbox_to_anchor=(0, 1.08), ncol=3,
                   frameon=False)
        return _png(fig)


# ---------------------------------------------------------------------------------------
# The charts of the report
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chart:
    """One chart: its file name, caption and PNG bytes, or no PNG and the one line the page
    shows instead (``reason``: why there is nothing to draw)."""

    file: str
    caption: str
    png: Optional[bytes]
    reason: str = ""

    @property
    def data_uri(self) -> str:
        """The PNG as a ``data:`` URI, for embedding (empty without a PNG)."""
        if self.png is None:
            return ""
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


def _chart(file: str, caption: str, png: Optional[bytes], reason: str) -> Chart:
    return Chart(file, caption, png, "" if png is not None else reason)


def build_charts(records: Union[Sequence[GameRecord], ReportData],
                 tables: Sequence[Standings]) -> list[Chart]:
    """Every chart of the report, in the order shown; a chart with nothing to draw has no PNG
    and says why in one line.  ``records``: the games, or what :func:`arena.report.data.collect`
    gathered of them."""
    from arena.report.data import ReportData, collect

    data = records if isinstance(records, ReportData) else collect(records, max_games=0)
    charts: list[Chart] = []
    for st in tables:
        name = "all" if st.variant is None else slug(st.variant)
        charts.append(_chart(f"elo-{name}.png", f"Elo with 95% intervals: {st.label}",
                             chart_elo(st),
                             f"No Elo chart for {st.label}: no bot could be rated yet (a bot "
                             "that won, lost or drew every game, or has played none of the "
                             "others, has no finite Elo; see the notes in the table)."))
    if sum(t.variant is not None for t in tables) > 1:
        charts.append(_chart("elo-by-variant.png", "Elo of each bot in each variant",
                             chart_variant_comparison(tables),
                             "No Elo-by-variant chart: no bot could be rated yet in any "
                             "variant."))
    main = tables[-1] if tables else None
    charts.append(_chart("score-over-rounds.png", "Points of each bot over the tournament "
                         "(all variants)", chart_score_over_rounds(data),
                         "No score chart: no game has been played yet."))
    charts.append(_chart("head-to-head.png", "Head-to-head score (all variants)",
                         chart_head_to_head(data.tallies,
                                            [r.bot for r in main.rows] if main else []),
                         "No head-to-head chart: no two bots have played each other yet."))
    charts.append(_chart("game-lengths.png", "Game length and terminations per variant",
                         chart_game_lengths(data),
                         "No game-length chart: no game has been played yet."))
    return charts
