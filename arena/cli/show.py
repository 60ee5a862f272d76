"""``arena show``: one game of a results folder in the terminal (the report's viewer in text)."""

from __future__ import annotations

from typing import Optional

import click

from arena.cli.common import Failure


@click.command()
@click.argument("results", metavar="RESULTS")
@click.argument("game", metavar="GAME")
@click.option("--ply", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show the board after N moves (default: the final position).")
def show(results: str, game: str, ply: Optional[int]) -> None:
    """Show GAME of RESULTS (a results folder or its games.jsonl): its title, the board,
    the moves with their times and how it ended.

    GAME is a game id (e.g. nine-mens-morris/r1/m1/p2/g0), the name of its viewer page
    (nine-mens-morris-r1-p2-g0) or a part of either that names one game.
    """
    from arena.report import clean_text, load_games
    from arena.report.viewer import ending_text, game_titles, page_names, position_at
    from arena.rules import COLOR_NAMES

    records = load_games(results)
    pages = page_names(records)
    exact = [r for r in records if game in (r.game_id, pages[r.game_id][6:-5])]
    found = exact or [r for r in records if game in r.game_id or game in pages[r.game_id]]
    if not found:
        raise Failure(f"no game {game!r} in {results} (e.g. {records[0].game_id})")
    if len(found) > 1:
        names = ", ".join(r.game_id for r in found[:5])
        raise Failure(f"{len(found)} games match {game!r}: {names}{', ...' if len(found) > 5 else ''}")
    r = found[0]
    if ply is not None and ply > r.plies:
        raise Failure(f"--ply: game {r.game_id} has {r.plies} moves")
    pos = position_at(r, ply)
    echo = click.echo
    echo(clean_text(game_titles(records)[r.game_id]))
    echo(clean_text(f"game {r.game_id}, {r.variant}: white {r.white.name}, black {r.black.name}"))
    ending = clean_text(ending_text(r))
    said = r.detail and r.detail.lower() not in ending.lower()
    echo(ending + (f" ({clean_text(r.detail)})" if said else ""))
    echo()
    at = "the final position" if ply is None else f"after {ply} move{'s' * (ply != 1)}"
    echo(f"Board, {at}:")
    echo(pos.board_text())
    echo()
    echo("Moves (ms used; o: the referee's opening):")
    for n, m in enumerate(r.moves, 1):
        mark = ">" if n == pos.ply else " "
        t = "o" if m.opening else f"{m.wall_ms:.0f}" + (
            "" if m.cpu_ms is None else f" (cpu {m.cpu_ms:.0f})")
        echo(f"{mark}{n:4d}. {COLOR_NAMES[(n - 1) % 2]:5s} {clean_text(m.move):14s} {t}")
    if r.forfeit:
        echo()
        echo(clean_text(f"Forfeit by {r.forfeit}: {r.termination}. {r.detail}"))
        if r.offending_line is not None:
            echo(f"It sent: {clean_text(r.offending_line)}")
        tail = r.stderr.get(r.forfeit, "")
        if tail:
            echo("The end of its stderr:")
            for line in tail[-2000:].splitlines()[-20:]:
                echo("  " + clean_text(line))
