"""``arena export``: the games of a results folder as a PGN-style text file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

import click

if TYPE_CHECKING:
    from arena.records import GameRecord


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
    import os
    import tempfile

    from arena.cli.common import Failure, is_competition, load_results
    from arena.export import format_games

    if is_competition(results):
        records: Iterable[GameRecord] = load_results(results)
    else:  # a game at a time: the records are never held together
        from arena.report import stream_folder

        records = (game.full() for game in stream_folder(results, full=True))
    if output is None:
        for text in format_games(records):
            click.echo(text, nl=False)
        return
    # written a game at a time into a temporary file beside FILE, fsynced and renamed over
    # it (arena.records.atomic_write for a file that is not held whole)
    target = os.path.abspath(output)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp",
                                   dir=os.path.dirname(target))
    except OSError as e:
        raise Failure(f"cannot write {output}: {e.strerror}") from None
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for text in format_games(records):
                f.write(text)
                count += 1
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as e:
        _remove(tmp)
        raise Failure(f"cannot write {output}: {e.strerror}") from None
    except BaseException:
        _remove(tmp)
        raise
    click.echo(f"wrote {count} games to {output}", err=True)


def _remove(path: str) -> None:
    import os

    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
