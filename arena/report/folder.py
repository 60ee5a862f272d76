"""The report's files in a results folder: the charts, ``ratings.csv`` and ``report.html``.

:func:`build_report` reads nothing but the records it is given (or ``games.jsonl``), computes
the standings with :mod:`arena.ratings`, and writes every file to a temporary name moved into
place with ``os.replace`` (:func:`arena.records.atomic_write`), so an interrupted report
never leaves a half-written file behind.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

from arena.errors import ArenaError
from arena.records import GameRecord, atomic_write
from arena.tallies import Game
from arena.report.botpages import bot_page_names, write_bot_pages
from arena.report.charts import build_charts
from arena.report.html import MAX_GAMES_LISTED, page_context, render_html
from arena.report.results import stream_folder
from arena.report.rounds import load_rounds
from arena.report.tables import standings_csv
from arena.report.viewer import page_names, write_game_pages

REPORT_FILE = "report.html"
RATINGS_FILE = "ratings.csv"


def build_report(folder: str | os.PathLike[str],
                 records: Optional[Iterable[Union[GameRecord, Game]]] = None,
                 *, title: Optional[str] = None, anchor: Optional[tuple[str, float]] = None,
                 max_games: Optional[int] = MAX_GAMES_LISTED,
                 rounds_from: Optional[str | os.PathLike[str]] = None,
                 tiebreaks: Optional[Sequence[str]] = None) -> Path:
    """Write the charts, ``ratings.csv``, ``report.html``, a viewer page per listed game
    (``games/*.html``, :mod:`arena.report.viewer`) and a page per bot (``bots/*.html``,
    :mod:`arena.report.botpages`) into ``folder``; returns the HTML path.  A Swiss's or a
    knockout's folder (its ``rounds.jsonl``, read from ``rounds_from``, by default
    ``folder``) gets the rounds or the bracket too (:mod:`arena.report.rounds`).

    ``records`` default to the folder's ``games.jsonl``, read a line at a time; any
    iterable of records is read once.  The games are never held together
    (:func:`arena.report.data.collect`): every number uses every game, from their tallies;
    the records kept are those of the first ``max_games`` games (None: all), whose moves
    are listed, each with its viewer page.  ``anchor=(bot, elo)`` pins one bot's Elo (the
    tables stay centred on 0 where it is not rated).  ``tiebreaks`` order bots level on
    points (default: a Swiss's Buchholz cut-1, Buchholz, Sonneborn-Berger and direct
    encounter, else direct encounter and Sonneborn-Berger); a Swiss's byes count in its
    points as they did in the run.

    :raises ArenaError: no games, or a missing/corrupt ``games.jsonl`` or ``rounds.jsonl``.
    """
    from arena.ratings import rate_all
    from arena.report.data import collect
    from arena.report.endgames import read_analysis
    from arena.rounds import folder_ranking

    out = Path(folder)
    games: Iterable[Any] = stream_folder(out) if records is None else records
    where = Path(rounds_from) if rounds_from is not None else out
    rounds = load_rounds(where)
    analysed = read_analysis(out)
    data = collect(games, max_games=max_games, analysed=analysed, staged=rounds is not None)
    if not data.total:
        raise ArenaError(f"no games to report in {out}")
    if not out.is_dir():
        raise ArenaError(f"no such results folder: {out}")
    tiebreaks, byes = folder_ranking(where, tiebreaks)
    tables = rate_all(data.tallies, anchor=anchor, tiebreaks=tiebreaks, byes=byes or None)
    charts = build_charts(data, tables)
    for chart in charts:
        if chart.png is not None:
            atomic_write(out / chart.file, chart.png)
        else:  # nothing to draw: no image (and none left from an earlier report)
            (out / chart.file).unlink(missing_ok=True)
    atomic_write(out / RATINGS_FILE, standings_csv(tables).encode("utf-8"))
    listed = data.listed
    pages = page_names(listed)
    titles = data.titles
    write_game_pages(out, listed, pages, titles, analysed)
    name = title or out.resolve().name
    bot_pages = bot_page_names(data)
    forfeits = data.forfeits
    write_bot_pages(out, data, tables, name, bot_pages, pages, titles, forfeits)
    context = page_context(data, tables, charts, name,
                           "pair-clustered sandwich", max_games, pages, bot_pages, titles,
                           forfeits, data.endgames, rounds)
    html_path = out / REPORT_FILE
    atomic_write(html_path, render_html(context).encode("utf-8"))
    return html_path


def write_report(config: Any, folder: str | os.PathLike[str],
                 records: Optional[Iterable[Union[GameRecord, Game]]] = None) -> Path:
    """The tournament runner's entry point: :func:`build_report` titled with ``config.name``.

    ``config`` is the tournament's configuration (anything with a ``name``) or None;
    ``records`` a list, any iterable of records (read once), or None for the folder's
    ``games.jsonl`` (read a line at a time).
    """
    title = getattr(config, "name", None) if config is not None else None
    return build_report(folder, records, title=title,
                        tiebreaks=getattr(config, "chosen_tiebreaks", None))
