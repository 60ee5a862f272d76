"""Reading a results folder: its ``games.jsonl`` and the variants in it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

from arena.errors import ArenaError
from arena.records import GameRecord, read_records
from arena.tallies import Game, GameTallies, stream_games, tally_file

GAMES_FILE = "games.jsonl"


def games_path(results: str | os.PathLike[str]) -> Path:
    """The ``games.jsonl`` of a results folder, or ``results`` itself if it is a file.

    :raises ArenaError: the path does not exist, or the folder has no ``games.jsonl``.
    """
    p = Path(results)
    if p.is_dir():
        p = p / GAMES_FILE
        if not p.is_file():
            raise ArenaError(f"no {GAMES_FILE} in {results}")
    elif not p.is_file():
        raise ArenaError(f"no such results folder or file: {results}")
    return p


def load_games(results: str | os.PathLike[str]) -> list[GameRecord]:
    """The records of a results folder or ``games.jsonl`` file; at least one.

    :raises ArenaError: missing, unreadable, corrupt or empty.
    """
    p = games_path(results)
    records = read_records(p)
    if not records:
        raise ArenaError(f"no games in {p}")
    return records


def stream_folder(results: str | os.PathLike[str], *, full: bool = False) -> Iterator[Game]:
    """The games of a results folder or ``games.jsonl`` file, read a line at a time
    (:func:`arena.tallies.stream_games`; ``full``: each with its whole record); at least one.

    :raises ArenaError: missing, unreadable, corrupt (raised when the reading reaches the
        broken line) or empty.
    """
    p = games_path(results)
    empty = True
    for game in stream_games(p, full=full):
        empty = False
        yield game
    if empty:
        raise ArenaError(f"no games in {p}")


def load_tallies(results: str | os.PathLike[str], *, keep_games: bool = False) -> GameTallies:
    """The :class:`arena.tallies.GameTallies` of a results folder or ``games.jsonl`` file,
    read in one streaming pass (memory: the bots and pairs, not the games; ``keep_games``:
    and a few numbers per game, for the seeded bootstrap).

    :raises ArenaError: missing, unreadable, corrupt or empty.
    """
    p = games_path(results)
    tallies = tally_file(p, keep_games=keep_games)
    if not tallies.count:
        raise ArenaError(f"no games in {p}")
    return tallies


def select_variant(records: Union[Iterable[GameRecord], GameTallies],
                   variant: Optional[str]) -> Optional[str]:
    """The canonical name of ``variant`` among the records' (or tallies') variants (aliases
    resolved).

    :raises ArenaError: no game of that variant.
    """
    if variant is None:
        return None
    present = (records.variant_names if isinstance(records, GameTallies)
               else list(dict.fromkeys(r.variant for r in records)))
    if variant in present:
        return variant
    from arena.variants import ALIASES

    canonical = ALIASES.get(variant, variant)
    if canonical in present:
        return canonical
    raise ArenaError(f"no games of variant {variant!r} (the results have: {', '.join(present)})")
