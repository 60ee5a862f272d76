"""``arena export``: the games of a results folder as a PGN-style text file."""

from __future__ import annotations

from typing import Optional

import click


@click.command()
@click.argument("results", metavar="RESULTS")
@click.option("-o", "--output", "output", default=None, metavar="FILE",
              help="Write to FILE (replaced atomically) instead of standard output.")
def export(results: str, output: Optional[str]) -> None:
    """Write the games of RESULTS (a results folder or its games.jsonl, or a competition
    folder: its final's games, else its ladder's) as PGN-style text.

    One game per record, in the order they were played: the tags Event, Site, Date, Round,
    White, Black, Result, Variant, Termination, TimeControl, PlyCount and GameId, then the
    moves in the protocol's notation numbered by full move, the opening and the ending in
    comments, and the result (1-0, 0-1, 1/2-1/2).  See docs/TOURNAMENTS.md.
    """
    from arena.cli.common import load_results
    from arena.export import format_games
    from arena.records import atomic_write

    records = load_results(results)
    text = "".join(format_games(records))
    if output is None:
        click.echo(text, nl=False)
    else:
        from arena.cli.common import Failure

        try:
            atomic_write(output, text.encode("utf-8"))
        except OSError as e:
            raise Failure(f"cannot write {output}: {e.strerror}") from None
        click.echo(f"wrote {len(records)} games to {output}", err=True)
