"""The analysis commands over a results folder: ``arena rate`` (Elo tables) and
``arena report`` (charts and report.html), ``arena analyse`` (endgames against the tables)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal, Optional

import click

from arena.cli.common import Failure, is_competition, load_results, results_folder
from arena.protocol import SEED_MAX

if TYPE_CHECKING:
    from arena.tallies import GameTallies


def _tiebreaks_option(ctx: click.Context, param: click.Parameter,
                      value: Optional[str]) -> Optional[tuple[str, ...]]:
    """``--tiebreaks a,b`` as names of :data:`arena.standings.TIEBREAKS`; a one-line error."""
    if value is None:
        return None
    from arena.standings import TiebreakError, parse_tiebreaks

    try:
        return parse_tiebreaks(value, "--tiebreaks")
    except TiebreakError as e:
        raise Failure(str(e)) from None


def _staged(results: str, tiebreaks: Optional[tuple[str, ...]]
            ) -> tuple[tuple[str, ...], dict[str, float]]:
    """The tie-breaks to rank RESULTS by (``tiebreaks``, else a Swiss's or the default) and
    the points of its Swiss byes (none for other folders and for a competition)."""
    from arena.rounds import RoundsFileError, folder_ranking
    from arena.standings import DEFAULT_TIEBREAKS

    if is_competition(results):
        return tiebreaks or DEFAULT_TIEBREAKS, {}
    try:
        return folder_ranking(results_folder(results), tiebreaks)
    except RoundsFileError as e:
        raise Failure(str(e)) from None


def _tallies(results: str, keep_games: bool = False) -> GameTallies:
    """The tallies of RESULTS' games (:func:`arena.report.load_tallies`: one streaming pass
    over a results folder's games.jsonl; a competition folder's games as loaded);
    ``keep_games`` for the seeded bootstrap (a few numbers a game)."""
    from arena.tallies import tally_games

    if is_competition(results):
        return tally_games(load_results(results), keep_games=keep_games)
    from arena.report import load_tallies

    return load_tallies(results, keep_games=keep_games)


@click.command()
@click.argument("results", metavar="RESULTS")
@click.option("--variant", default=None, help="Only this variant (default: each, then pooled).")
@click.option("--anchor", default=None, metavar="BOT=ELO",
              help="Pin one bot's Elo (e.g. random=0) instead of centring on the mean.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True, help="Output format.")
@click.option("--interval", type=click.Choice(["sandwich", "bootstrap"]), default="sandwich",
              show_default=True, help="How the 95% intervals are estimated.")
@click.option("--seed", type=click.IntRange(0, SEED_MAX), default=0, show_default=True,
              help="Seed of the bootstrap.")
@click.option("--tiebreaks", default=None, callback=_tiebreaks_option,
              metavar="NAME,NAME...",
              help="How bots level on points are ordered, in turn: direct-encounter, "
                   "sonneborn-berger, buchholz, buchholz-cut1 (default: "
                   "direct-encounter,sonneborn-berger; a Swiss: "
                   "buchholz-cut1,buchholz,sonneborn-berger,direct-encounter).")
def rate(results: str, variant: str | None, anchor: str | None, fmt: str,
         interval: Literal["sandwich", "bootstrap"], seed: int,
         tiebreaks: Optional[tuple[str, ...]]) -> None:
    """Elo ratings from RESULTS (a results folder or its games.jsonl, or a competition
    folder: its final's games, else its ladder's).

    One table per variant and, with several variants, one pooled over all of them, each
    saying how it is ranked: rank, bot, points, W-D-L, games, score, then Elo, its 95%
    interval, draws, likelihood of superiority over the next bot, and forfeits; a few
    plain lines at the end say what the numbers mean.  A bot with no maximum-likelihood Elo
    (all won, all lost, no upset) gets one from a prior of one virtual draw, marked * with
    a note.  Bots level on points are told apart by --tiebreaks, in turn, and share a
    place (5=) where level on all of them.  See docs/RATINGS.md.
    """
    from arena.ratings import parse_anchor, rate as rate_games, rate_all
    from arena.report import format_standings, select_variant, standings_csv, standings_json

    pin = parse_anchor(anchor) if anchor else None
    records = _tallies(results, keep_games=interval == "bootstrap")
    chosen = select_variant(records, variant)
    if pin is not None and pin[0] not in records.players:
        raise Failure(f"--anchor: no bot named {pin[0]!r} in {results}")
    breaks, byes = _staged(results, tiebreaks)
    if chosen is not None:
        share = ({n: p / len(records.variant_names) for n, p in byes.items()}
                 if byes else None)
        tables = [rate_games(records, variant=chosen, anchor=pin, method=interval, seed=seed,
                             tiebreaks=breaks, byes=share)]
    else:
        tables = rate_all(records, anchor=pin, method=interval, seed=seed, tiebreaks=breaks,
                          byes=byes or None)
    if fmt == "csv":
        click.echo(standings_csv(tables), nl=False)
    elif fmt == "json":
        click.echo(standings_json(tables, records))
    else:
        click.echo(format_standings(tables, records), nl=False)


@click.command()
@click.argument("results", metavar="RESULTS")
@click.option("--anchor", default=None, metavar="BOT=ELO", help="Pin one bot's Elo (e.g. random=0).")
@click.option("--title", default=None, help="Page title (default: the folder's name).")
@click.option("--max-games", type=click.IntRange(min=0), default=10_000, show_default=True,
              help="List at most this many games, each with its viewer page (0: all).")
@click.option("-o", "--output", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write the report into DIR (made if missing) instead of RESULTS.")
@click.option("--tiebreaks", default=None, callback=_tiebreaks_option,
              metavar="NAME,NAME...",
              help="How bots level on points are ordered, in turn (as arena rate).")
def report(results: str, anchor: str | None, title: str | None, max_games: int,
           output: str | None, tiebreaks: Optional[tuple[str, ...]]) -> None:
    """Write charts and a self-contained report.html into the results folder RESULTS (or
    -o DIR; a competition folder needs -o).

    Standings (a points table first, every column explained in plain words), charts (Elo
    per variant, Elo by variant, score over rounds, head-to-head, game lengths and endings),
    crosstable, forfeit reasons and every game's moves; the page prints well too.
    """
    from arena.ratings import parse_anchor
    from arena.report import build_report

    pin = parse_anchor(anchor) if anchor else None
    if output is None and is_competition(results):
        raise Failure(f"{results} is a competition folder: nothing is written into it; "
                      f"give -o DIR for the report")
    folder = results_folder(results)
    records: Iterable[Any]
    if is_competition(results):
        records = load_results(results)
    else:  # read a line at a time while the report is made: the games are never all held
        from arena.report import stream_folder

        records = stream_folder(results)
    if output is not None:
        from pathlib import Path

        folder = Path(output)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise Failure(f"-o: cannot make {output}: {e.strerror}") from None
        if title is None:
            title = results_folder(results).name
    breaks, _ = _staged(results, tiebreaks)
    source = None if is_competition(results) else results_folder(results)
    click.echo(build_report(folder, records, title=title, anchor=pin,
                            max_games=max_games or None, rounds_from=source,
                            tiebreaks=breaks))


@click.command()
@click.argument("results", metavar="RESULTS")
@click.option("--tables", "tables_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR", help="The endgame tables' folder (default: the tablebase "
                                  "cache, as 'arena tablebase build' makes it).")
def analyse(results: str, tables_dir: str | None) -> None:
    """Mark every move the bots of RESULTS played in an endgame the tables cover: kept its
    value, or threw a won (or drawn) endgame away, and which moves would have kept it.

    Writes RESULTS/analysis.jsonl (the games untouched), which 'arena report' turns into
    an endgame table per bot and badges in the game viewer, and prints each bot's figures.
    """
    from arena.report import games_path, stream_folder
    from arena.report.endgames import EndgameSummary, GameAnalysis, analyse_game, write_analysis
    from arena.tablebase import TablebaseError, default_directory, open_tablebase

    folder = games_path(results).parent
    path = tables_dir or str(default_directory())
    summary = EndgameSummary()
    seen = 0

    def analysed(tables: Any) -> Iterator[GameAnalysis]:
        """The analysis of every game that reached a covered endgame, read and analysed a
        game at a time (the records are never held together)."""
        nonlocal seen
        for game in stream_folder(results, full=True):
            seen += 1
            marks = analyse_game(game.full(), tables)
            if marks.marks:
                summary.add(marks)
                yield marks

    try:
        with open_tablebase(path) as tables:
            written = write_analysis(folder, analysed(tables))
    except TablebaseError as e:
        raise Failure(f"{e} (arena tablebase build VARIANT --dir {path} makes them)") from None
    rows = summary.rows()
    click.echo(f"{summary.games} of {seen} games reached an endgame the tables cover; "
               f"written to {written}")
    for row in rows:
        accuracy = "-" if row.accuracy is None else f"{100 * row.accuracy:.1f}%"
        click.echo(f"  {row.bot}: {row.moves} moves in covered endgames, {accuracy} kept "
                   f"their value, {row.wins_thrown} won endgames thrown away")
        for game_id, ply, kind in row.thrown[:5]:
            click.echo(f"    {kind} at ply {ply} of {game_id}")
