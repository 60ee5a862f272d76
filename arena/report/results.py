"""Reading a results folder: its ``games.jsonl`` and the variants in it."""

from __future__ import annotations

import os
from pathlib import Path
from dataclasses import dataclass, field
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


#: the matching games a :class:`GameSearch` keeps (it counts the rest)
SEARCH_KEPT = 5


@dataclass
class GameSearch:
    """The games of a results folder that a text names (:func:`find_games`): ``found`` the
    first :data:`SEARCH_KEPT` of them (those named exactly, when any is), ``count`` how many
    there are, ``first_id`` the folder's first game (an example for a message)."""

    found: list[Game] = field(default_factory=list)
    count: int = 0
    first_id: str = ""


def find_games(results: str | os.PathLike[str], text: str) -> GameSearch:
    """The games of ``results`` that ``text`` names, read a line at a time (memory: each
    game's page name, not its record): a game id or the name of its viewer page
    (:func:`arena.report.viewer.page_names`, ``nine-mens-morris-r1-p2-g0``) names a game
    exactly; else every game whose id or page path contains ``text`` matches.

    :raises ArenaError: the folder or file is missing, unreadable, corrupt or empty.
    """
    from arena.report.text import slug
    from arena.report.viewer import GAMES_FOLDER

    used: set[str] = set()
    exact, partial = GameSearch(), GameSearch()
    first_id = None
    for g in stream_folder(results):
        gid = g.game_id
        if first_id is None:
            first_id = gid
        base = name = slug(gid)  # as arena.report.text.page_paths names the pages, in order
        k = 1
        while name.lower() in used:
            k += 1
            name = f"{base}-{k}"
        used.add(name.lower())
        if text in (gid, name):
            into = exact
        elif text in gid or text in f"{GAMES_FOLDER}/{name}.html":
            into = partial
        else:
            continue
        into.count += 1
        if len(into.found) < SEARCH_KEPT:
            into.found.append(g)
    out = exact if exact.count else partial
    out.first_id = first_id or ""
    return out


def game_number(results: str | os.PathLike[str], game: Union[Game, GameRecord]) -> int:
    """``game``'s number in its variant and round, as the report's titles give it
    (:func:`arena.report.viewer.game_titles`: by pair, then id), read a line at a time."""
    key = (game.pair is None, game.pair or 0, game.game_id)
    before = 0
    for g in stream_folder(results):
        if g.variant == game.variant and g.round == game.round and (
                (g.pair is None, g.pair or 0, g.game_id) < key):
            before += 1
    return before + 1


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
