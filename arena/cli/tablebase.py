"""``arena tablebase``: build endgame tables (``build``) and probe positions (``probe``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import click

from arena.cli.common import Failure

_DIR_HELP = ("The tables folder (default: $MORRIS_ARENA_TABLEBASES, else "
             "$XDG_CACHE_HOME/morris-arena/tablebases or ~/.cache/morris-arena/tablebases).")


@click.group()
def tablebase() -> None:
    """Endgame tablebases: build them by retrograde analysis, probe positions with them.

    The tables hold the moving and flying phases (no man in hand): for every position, the
    value for the side to move (win, draw, loss) and the distance in plies to the next
    capture or the end of the game under optimal play.  See docs/TABLEBASES.md.
    """


class _Bars:
    """One progress bar per table being computed (moves, then solving), on stderr."""

    def __init__(self) -> None:
        self.name = ""
        self.bar: Any = None
        self.shown = 0

    def __call__(self, name: str, stage: str, done: int, total: int) -> None:
        if name != self.name:
            self.close()
            self.name = name
            self.bar = click.progressbar(length=2 * total, label=f"{name} table",
                                         file=sys.stderr, show_eta=True)
            self.bar.__enter__()
            self.shown = 0
        at = done if stage == "moves" else total + done if stage == "solve" else 2 * total
        if at > self.shown:
            self.bar.update(at - self.shown)
            self.shown = at
        if stage == "done":
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


@tablebase.command()
@click.argument("variant")
@click.option("--men", default="4-4", show_default=True, metavar="A-B",
              help="The largest table: every table of A men or fewer against B or fewer.")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              help=_DIR_HELP)
def build(variant: str, men: str, directory: Optional[Path]) -> None:
    """Build the tables of VARIANT up to --men, smaller tables first.

    VARIANT is a preset name or a variant YAML file.  A table already in the folder (whole,
    for the same rules) is kept, so an interrupted build goes on where it stopped; a table
    is written to a temporary file and renamed when complete.
    """
    from arena.tablebase import build_tables, default_directory, parse_men
    from arena.tablebase.fileformat import read_header
    from arena.variants import load_variant

    v = load_variant(variant)
    try:
        top = parse_men(men)
    except ValueError as e:
        raise Failure(f"--men: {e}") from None
    folder = directory if directory is not None else default_directory()
    bars = _Bars()

    def done(result: Any) -> None:
        bars.close()
        header = read_header(result.path)
        counts = []
        for o in header.data["orientations"]:
            s = o["stats"]
            counts.append(f"{o['mover']} to move: {s['won']['positions']:,} won, "
                          f"{s['drawn']['positions']:,} drawn, {s['lost']['positions']:,} lost")
        a, b = result.men
        click.echo(f"{a}-{b}: {result.status} in {result.seconds:.1f} s, longest "
                   f"{header.data['max_distance']} plies ({'; '.join(counts)})")

    try:
        results = build_tables(v, top, folder, progress=bars, on_table=done)
    finally:
        bars.close()
    click.echo(f"{len(results)} tables of {v.name} in {folder}")


@tablebase.command()
@click.argument("variant")
@click.argument("position")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              help=_DIR_HELP)
@click.option("--json", "as_json", is_flag=True,
              help='One JSON object: {"value", "distance", "moves": [{"move", "value", '
                   '"distance"}]}.')
@click.pass_context
def probe(ctx: click.Context, variant: str, position: str, directory: Optional[Path],
          as_json: bool) -> None:
    """Probe POSITION of VARIANT: its value for the side to move, its distance, and every
    legal move with the value it leads to.

    POSITION is position text as `arena show` and the protocol write it (quote it), e.g.
    "WW.W....B.B..........B.. w 0 0 0 - - 40".  Values are for the side to move, moves'
    values too (what playing the move gives that side); distances are plies to the next
    capture or the end of the game.  A position the tables do not cover exits with status 1
    and the reason.
    """
    from arena.rules import Position
    from arena.tablebase import NotCovered, default_directory, open_tablebase
    from arena.variants import load_variant

    v = load_variant(variant)
    pos = Position.from_text(v, position)
    folder = directory if directory is not None else default_directory()
    try:
        with open_tablebase(folder) as tb:
            result = tb.probe(pos)
            moves = tb.probe_moves(pos)
    except NotCovered as e:
        click.echo(f"not covered: {e}", err=True)
        ctx.exit(1)
    if as_json:
        click.echo(json.dumps({"value": result.value, "distance": result.distance,
                               "moves": [{"move": str(m.move), "value": m.value,
                                          "distance": m.distance} for m in moves]}))
        return
    side = ("white", "black")[pos.turn]
    if result.value == "draw":
        click.echo(f"{side} to move: draw")
    else:
        plies = "ply" if result.distance == 1 else "plies"
        click.echo(f"{side} to move: {result.value} in {result.distance} {plies} "
                   "(to the next capture or the end)")
    for m in moves:
        tail = f" in {m.distance}" if m.value != "draw" else ""
        click.echo(f"  {str(m.move):<14} {m.value}{tail}")
