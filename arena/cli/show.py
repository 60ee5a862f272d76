"""``arena show``: one game of a results folder in the terminal (the report's viewer in text)."""

from __future__ import annotations

from typing import Any, Optional

import click

from arena.cli.common import Failure


@click.command()
@click.argument("results", metavar="RESULTS")
@click.argument("game", metavar="GAME")
@click.option("--ply", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show the board after N moves (default: the final position).")
def show(results: str, game: str, ply: Optional[int]) -> None:
    """Show GAME of RESULTS (a results folder or its games.jsonl): its title, the board,
    what the bot said of its search for the move shown (score, depth, nodes, pv), the moves
    with their times (and scores, as the PGN writes them: +120/5) and how it ended.

    GAME is a game id (e.g. nine-mens-morris/r1/m1/p2/g0), the name of its viewer page
    (nine-mens-morris-r1-p2-g0) or a part of either that names one game.
    """
    from arena.export import eval_text
    from arena.report import clean_text
    from arena.report.results import find_games, game_number
    from arena.report.viewer import ending_text, game_title, position_at, replay
    from arena.rules import COLOR_NAMES

    search = find_games(results, game)  # a line at a time: any size of folder
    if not search.count:
        raise Failure(f"no game {game!r} in {results} (e.g. {search.first_id})")
    if search.count > 1:
        names = ", ".join(g.game_id for g in search.found)
        more = ", ..." if search.count > len(search.found) else ""
        raise Failure(f"{search.count} games match {game!r}: {names}{more}")
    r = search.found[0].full()
    if ply is not None and ply > r.plies:
        raise Failure(f"--ply: game {r.game_id} has {r.plies} moves")
    pos = position_at(r, ply)
    echo = click.echo
    echo(clean_text(game_title(r, game_number(results, r))))
    echo(clean_text(f"game {r.game_id}, {r.variant}: white {r.white.name}, black {r.black.name}"))
    ending = clean_text(ending_text(r))
    said = r.detail and r.detail.lower() not in ending.lower()
    echo(ending + (f" ({clean_text(r.detail)})" if said else ""))
    if r.start_position:
        echo(clean_text(f"Started from the position {r.start_position}"))
    echo()
    at = "the final position" if ply is None else f"after {ply} move{'s' * (ply != 1)}"
    echo(f"Board, {at}:")
    echo(pos.board_text())
    plies = replay(r).plies  # who played each move (a side may move twice running)

    def color_of(n: int) -> str:
        mover = plies[n].by if n < len(plies) else None
        return COLOR_NAMES[mover if mover is not None else (n - 1) % 2]

    shown = len(pos.move_stack)  # (not pos.ply: a set-up position's ply need not be 0)
    if shown:
        played = r.moves[shown - 1]
        color = color_of(shown)
        echo(clean_text(f"Move {shown}, {color} {played.move}: "
                        f"{search_text(played.info, color) or 'no engine output'}"))
    echo()
    scores = any(m.info for m in r.moves)
    echo("Moves (ms used" + ("; the bot's score/depth" if scores else "") +
         "; o: the referee's opening):")
    for n, m in enumerate(r.moves, 1):
        mark = ">" if n == shown else " "
        t = "o" if m.opening else f"{m.wall_ms:.0f}" + (
            "" if m.cpu_ms is None else f" (cpu {m.cpu_ms:.0f})")
        if scores:
            t = f"{t:16s} {eval_text(m.info)}".rstrip()
        echo(f"{mark}{n:4d}. {color_of(n):5s} {clean_text(m.move):14s} {t}")
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


def search_text(info: Any, color: str) -> str:
    """What a bot said of its search for a move, in one line: ``score -120 (White's view
    +120), depth 5 (seldepth 8), 24,000 nodes, 130,000 nodes/s, searched 180 ms; pv a1-a4
    d7-d6; <its string>`` (the score as it sent it, from the mover's view, and for black
    from White's too); "" for none."""
    from arena.export import score_text
    from arena.report.viewer import engine_data

    e = engine_data(info)
    if e is None:
        return ""
    parts = []
    if "s" in e or "w" in e or "l" in e:
        mine, white = ((e["s"], -e["s"]) if "s" in e else
                       ({"win": e["w"]}, {"loss": e["w"]}) if "w" in e else
                       ({"loss": e["l"]}, {"win": e["l"]}))
        parts.append(f"score {score_text(mine)}" +
                     ("" if color == "white" else f" (White's view {score_text(white)})"))
    if "d" in e:
        parts.append(f"depth {e['d']}" + (f" (seldepth {e['sd']})" if "sd" in e else ""))
    if "n" in e:
        parts.append(f"{e['n']:,} nodes")
    if "nps" in e:
        parts.append(f"{e['nps']:,} nodes/s")
    if "t" in e:
        parts.append(f"searched {e['t']} ms")
    text = ", ".join(parts)
    for extra in (f"pv {e['pv']}" if "pv" in e else "", e.get("str", "")):
        if extra:
            text = f"{text}; {extra}" if text else extra
    return text
