"""The report's words for a class: what each column means, in short plain sentences.

One place for the column names and their explanations, shown on hover (``title``) and in the
glossary of ``report.html``, on the bot pages and under the console's table, so they always
say the same thing.  The figures in the sentences (a 100-point gap means about 64 %) are
computed from the Elo formula (:func:`expected_score`), not typed in.  Pure: no imports
beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["Column", "COLUMNS", "DEFAULT_RULE", "GLOSSARY", "elo_gap_sentence", "expected_score",
           "gap_percent", "plain_note", "ranking_caption", "ranking_rule"]


def expected_score(gap: float) -> float:
    """The expected score (0..1) of a bot ``gap`` Elo points stronger than its opponent:
    ``1 / (1 + 10^(-gap/400))`` (the formula of :func:`arena.ratings.score_from_elo`)."""
    return 1.0 / (1.0 + 10.0 ** (-gap / 400.0))


def gap_percent(gap: float) -> int:
    """:func:`expected_score` of ``gap`` in whole percent (100 -> 64)."""
    return round(100 * expected_score(gap))


def elo_gap_sentence() -> str:
    """``a 100-point gap means the stronger bot scores about 64 % …``, from the formula."""
    return (f"a 100-point gap means the stronger bot scores about {gap_percent(100)} % of the "
            f"points against the weaker one ({gap_percent(200)} % for 200 points, "
            f"{gap_percent(400)} % for 400)")


@dataclass(frozen=True)
class Column:
    """A column of the standings: its header and what it means, in one or two sentences."""

    header: str
    meaning: str


#: the standings' columns, keyed as in :func:`arena.report.html.page_context`'s rows
COLUMNS: dict[str, Column] = {
    "rank": Column("#", "The bot's place in the table (how the table is ordered is said "
                        "just above it). 5= means a shared 5th place: those bots are level "
                        "on points, on the points they took from each other and on "
                        "Sonneborn–Berger; the next bot down is then 5th plus the number "
                        "sharing."),
    "bot": Column("bot", "The bot's name. Click it to see the bot's own page: every game it "
                         "played and its results against each opponent."),
    "points": Column("points", "A win gives 1 point, a draw ½, a loss 0."),
    "wdl": Column("W-D-L", "Games won, drawn and lost."),
    "games": Column("games", "How many games the bot played."),
    "h2h": Column("h2h", "Head to head, the first tie-break: the points the bot took from the "
                         "bots level with it on points (shown only for those bots)."),
    "sb": Column("SB", "Sonneborn–Berger, the second tie-break: for each opponent, the points "
                       "the bot took from it times that opponent's points, added up (beating "
                       "strong bots counts more). Shown for bots level on points."),
    "bh": Column("BH", "Buchholz, a Swiss tie-break: the points of all the bot's opponents "
                       "added up (a bot that met strong opponents ranks higher). Shown for "
                       "bots level on points."),
    "bh1": Column("BH-C1", "Buchholz cut-1: Buchholz without the weakest opponent (one "
                           "unlucky pairing counts less). Shown for bots level on points."),
    "score": Column("score %", "Its points out of the games it played, in percent: 100 % "
                               "means it won every game, 50 % that it scored as much as it "
                               "gave away."),
    "elo": Column("Elo", "A strength number worked out from all the games. Only the gap "
                         "between two bots means something: " + elo_gap_sentence() + "."),
    "elo95": Column("±", "How sure the Elo is: the bot's real strength is very likely (95 times "
                         "in 100) between Elo minus this and Elo plus this. More games make it "
                         "smaller."),
    "prior": Column("guess", "A * means the bot's Elo is only a rough guess: the games alone "
                             "cannot pin it down (for example, it won every game), so it is "
                             "worked out as if the bot had also played one draw against an "
                             "average bot. The note says why."),
    "forfeits": Column("forfeits", "Games the bot lost by breaking the referee's rules, by kind: "
                                   "too slow (timeout), an illegal move, a broken message "
                                   "(protocol-error), a crash, or no start at all."),
    "note": Column("note", "Why the bot's Elo is only a rough guess, when it is."),
    "draw": Column("draw %", "The share of its games that ended in a draw."),
    "los": Column("stronger than next %",
                  "How likely it is that this bot is really stronger than the next one down "
                  "the table: 50 % is a coin toss, 99 % is nearly sure."),
    "range": Column("Elo range", "Elo minus ± to Elo plus ±: where the real strength very "
                                 "likely is."),
}

#: the other words of the page that a reader may not know
GLOSSARY: list[tuple[str, str]] = [
    ("crosstable", "The points each bot (a row) took from each other bot (a column), out of "
                   "the games they played against each other: 1.5/2 means 1.5 points from "
                   "2 games."),
    ("forfeit", "A game lost because the bot broke a rule of the referee, not because of a "
                "move on the board."),
    ("variant", "A set of rules (nine men's morris, Lasker, …). Each variant has its own table; "
                "\"all variants\" adds them together."),
]

#: the ranking rule said above a table when the standings do not give one
DEFAULT_RULE = ("Ranked by points. Bots on equal points: first the points they took from each "
                "other, then who beat the stronger bots (Sonneborn–Berger); bots level on all "
                "of these share a place (5=).")


def ranking_rule(standings: object, default: str = DEFAULT_RULE) -> str:
    """The sentence above a standings table that says how it is ordered: the standings' own
    ``caption`` (or ``rule``) when :class:`arena.ratings.Standings` has one, else ``default``.

    This is the one place that reads it: the report's tables, the bot pages and the console
    all show what it returns."""
    for name in ("caption", "rule"):
        text = getattr(standings, name, None)
        if isinstance(text, str) and text.strip():
            return text.strip()
    return default


def ranking_caption(standings: object) -> str:
    """:func:`ranking_rule` as a sentence for a table's caption (a capital, a full stop)."""
    text = ranking_rule(standings)
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


_SUFFIXES = (": no finite maximum-likelihood Elo", "; Elo only through the prior")
_PLAIN = {
    "no finite maximum-likelihood Elo: the results order the bots without any upset":
        "every game went the expected way (no upset), so there is nothing to measure the gaps by",
}


def plain_note(flag: str) -> Optional[str]:
    """A bot's ``flag`` (why it has no maximum-likelihood Elo) in plain words, without the
    statistics' name for it (None for no flag): ``won every game (100%)``."""
    if not flag:
        return None
    if flag in _PLAIN:
        return _PLAIN[flag]
    text = flag
    for suffix in _SUFFIXES:
        text = text.replace(suffix, "")
    if "no finite maximum-likelihood Elo" in text:  # a reason worded otherwise: keep it whole
        return flag
    return text
