"""The standings as text, CSV and JSON (for ``arena rate`` and the runner's Elo table).

Bot names are untrusted: the text tables show them through :func:`arena.report.text.clean_text`
and the CSV guards text cells against spreadsheet formulas (:func:`csv_safe`).  pandas is
imported lazily (through :func:`arena.ratings.ratings_table`).
"""

from __future__ import annotations

import io
import math
import textwrap
from typing import TYPE_CHECKING, Any, Sequence

from arena.records import spreadsheet_safe
from arena.report.text import clean_text, format_number
from arena.report.words import elo_gap_sentence, ranking_rule

#: the prior's virtual draws (arena.ratings.PRIOR_DRAWS; numpy-free here, checked by a test)
PRIOR_DRAWS = 1.0

if TYPE_CHECKING:
    from arena.ratings import BotStanding, Match, ScoreEstimate, Standings
    from arena.standings import Source


def format_match(m: Match) -> str:
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


def format_estimate(e: ScoreEstimate, *, nelo: bool = True, los: bool = True) -> str:
    """``Elo +55.6 ± 27.7; nElo +57.9 ± 28.3; LOS 100.0%`` for a ``ScoreEstimate``.

    A perfect score (every game won or lost) gets its Elo from the prior's virtual draws,
    and says so.
    """
    out = f"Elo {e.elo:+.1f} ± {format_number(e.elo95, '.1f')}"
    if e.prior:
        out += (f" (with {PRIOR_DRAWS:g} virtual draw{'' if PRIOR_DRAWS == 1 else 's'}: no "
                f"{'loss' if e.elo > 0 else 'win'} yet)")
    if nelo and math.isfinite(e.nelo):
        out += f"; nElo {e.nelo:+.1f} ± {e.nelo95:.1f}"
    return out + (f"; LOS {100 * e.los:.1f}%" if los else "")


def format_standings(tables: Sequence[Standings], records: Source = ()) -> str:
    """Aligned text tables (one per variant, then pooled), flags as notes below each, and
    one short legend at the end saying what the columns mean (:mod:`arena.report.words`).

    The columns read as a sports table first (rank, bot, points, W-D-L, games, score; a
    shared place reads ``5=``; where bots are level on points, the tie-breaks h2h and SB),
    then the ratings (Elo, ±95%, draw, LOS>next), then forfeits.  With exactly two bots in a table,
    the match statistics (pentanomial, LOS) follow.
    """
    from arena.ratings import match_stats

    records = _rereadable(records)
    out = io.StringIO()
    for st in tables:
        ties = st.ties
        breaks = tuple(TIEBREAK_HEADS[t] for t in st.tiebreaks) if ties else ()
        head = ("rank", "bot", "points", "W-D-L", "games", "score") + breaks + (
            "Elo", "±95%", "draw", "LOS>next", "forfeits")
        left = {1, 3, len(head) - 1}
        where = (f"Elo anchored on {clean_text(st.anchor)}" if st.anchor
                 else "Elo centred on the mean")
        rule = ranking_rule(st, "ranked by points").rstrip(".")
        out.write(textwrap.fill(f"{st.label}: {st.games} games, {rule[:1].lower() + rule[1:]}; "
                                f"{where}", width=92, subsequent_indent="  ") + "\n")
        rows = [(r.place, clean_text(r.bot), f"{r.points:g}", r.wdl, str(r.games),
                 f"{100 * r.score:.1f}%") + (_tie_breaks(r, st.tiebreaks) if ties else ()) + (
                 format_number(r.rating, "+.1f", "-") + ("*" if r.prior else ""),
                 format_number(r.rating95, ".1f", "-"), f"{100 * r.draw_ratio:.1f}%",
                 format_number(None if r.los_next is None else 100 * r.los_next, ".1f", "-")
                 + ("%" if r.los_next is not None else ""),
                 r.forfeits_text() or "-") for r in st.rows]
        widths = [max(len(h), *(len(row[k]) for row in rows)) for k, h in enumerate(head)]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(c.ljust(w) if k in left else c.rjust(w)
                             for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

        out.write(line(head) + "\n")
        for row in rows:
            out.write(line(row) + "\n")
        if ties:
            out.write(textwrap.fill(
                "; ".join(TIEBREAK_WORDS[t] for t in st.tiebreaks), width=92,
                initial_indent="  ", subsequent_indent="    ") + "\n")
        if any(r.byes for r in st.rows):
            out.write(textwrap.fill(
                "points count the byes of the Swiss (a bye scores a won pairing; it is no "
                "game: not in W-D-L, score or Elo)", width=92, initial_indent="  ",
                subsequent_indent="    ") + "\n")
        for r in st.rows:
            if r.flag:
                out.write(f"  note: {clean_text(r.bot)}: {r.flag}\n")
        if any(r.prior for r in st.rows):
            out.write(textwrap.fill(
                f"* Elo from the prior, only a rough guess ({PRIOR_DRAWS:g} virtual draw "
                "against the centre of the scale; ±95% the wider side of its likelihood "
                "interval)", width=92, initial_indent="  ", subsequent_indent="    ") + "\n")
        if st.note:
            out.write(f"  note: {st.note}\n")
        if len(st.rows) == 2 and records:
            m = match_stats(records, st.rows[0].bot, st.rows[1].bot, st.variant)
            out.write("  " + format_match(m) + "\n")
        out.write("\n")
    if tables:
        out.write(legend() + "\n")
    return out.getvalue().rstrip("\n") + "\n"


def _rereadable(records: Source) -> Source:
    """``records`` as something read more than once: a sequence or tallies as they are,
    any other iterable tallied (:func:`arena.tallies.tally_games`), read once."""
    from collections.abc import Sequence as _Sequence

    from arena.tallies import GameTallies, VariantTally, tally_games

    if isinstance(records, (_Sequence, GameTallies, VariantTally)):
        return records
    return tally_games(records)


#: the column heads of the tie-breaks (:data:`arena.standings.TIEBREAKS`)
TIEBREAK_HEADS = {"direct-encounter": "h2h", "sonneborn-berger": "SB", "buchholz": "BH",
                  "buchholz-cut1": "BH-C1"}
#: what each tie-break column is, in words
TIEBREAK_WORDS = {
    "direct-encounter": "h2h: the points a bot took from the bots level with it (only those "
                        "have one)",
    "sonneborn-berger": "SB: Sonneborn-Berger, per opponent the points taken from it times its "
                        "total points, summed",
    "buchholz": "BH: Buchholz, the total points of the bot's opponents",
    "buchholz-cut1": "BH-C1: Buchholz cut-1, the same without the weakest opponent"}


def tie_break_cells(r: BotStanding, tiebreaks: Sequence[str]) -> tuple[str, ...]:
    """A row's tie-break values in the order of ``tiebreaks`` (``h2h`` None: ``-``)."""
    values = {"direct-encounter": r.h2h, "sonneborn-berger": r.sb, "buchholz": r.buchholz,
              "buchholz-cut1": r.buchholz_cut1}
    return tuple("-" if values[t] is None else f"{values[t]:g}" for t in tiebreaks)


def _tie_breaks(r: BotStanding, tiebreaks: Sequence[str]) -> tuple[str, ...]:
    """The tie-break cells of a row: shown for bots level with another (``-`` for the
    others, whose place the tie-breaks did not decide)."""
    return tie_break_cells(r, tiebreaks) if r.level else ("-",) * len(tiebreaks)


def legend(width: int = 92) -> str:
    """The few lines under the console's tables that say what the columns mean, in plain
    words (the same words as the report's glossary, :mod:`arena.report.words`)."""
    text = (f"points: a win 1, a draw ½. Elo: a strength number from all the games; only gaps "
            f"count: {elo_gap_sentence()}. ±95%: the real Elo is very likely within Elo ± "
            f"this. LOS>next: how likely the bot is stronger than the next one down. "
            f"docs/RATINGS.md explains every number.")
    return textwrap.fill(text, width=width)


def standings_json(tables: Sequence[Standings], records: Source = ()) -> str:
    """The tables as JSON: ``{"tables": [{"variant", "games", "anchor", "rows", ...}]}``."""
    import json

    from arena.ratings import match_stats, standings_rows

    records = _rereadable(records)

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


def csv_safe(df: Any) -> Any:
    """A copy of ``df`` whose text cells cannot run as spreadsheet formulas (``'`` prefix)."""
    df = df.copy()
    for col in ("bot", "flag", "forfeits", "variant"):
        if col in df.columns:
            df[col] = df[col].map(spreadsheet_safe)
    return df
