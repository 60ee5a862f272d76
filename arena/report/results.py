"""Reading a results folder: its ``games.jsonl`` and the variants in it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

from arena.errors import ArenaError
from arena.records import GameRecord, read_records

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


def select_variant(records: Sequence[GameRecord], variant: Optional[str]) -> Optional[str]:
    """The canonical name of ``variant`` among the records' variants (aliases resolved).

    :raises ArenaError: no game of that variant.
    """
    if variant is None:
        return None
    present = list(dict.fromkeys(r.variant for r in records))
    if variant in present:
        return variant
    from arena.variants import ALIASES

    canonical = ALIASES.get(variant, variant)
    if canonical in present:
        return canonical
    raise ArenaError(f"no games of variant {variant!r} (the results have: {', '.join(present)})")
