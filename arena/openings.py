"""Opening books: one opening a line, read once and checked, handed out by pair number.

A book is a UTF-8 text file.  Each line is one opening: turns in the protocol's move notation
(``d6 a1 d2xa1``), separated by spaces, played from the variant's start position.  Blank lines
and ``#`` comments (whole lines or the rest of a line) are skipped.  Every opening is checked
when the book is read: each turn must be legal where it is played and the opening must leave
the game unfinished, or the book is refused with one line naming ``file:line`` and the first
bad turn.

An opening is shared by both games of a colour-swapped pair; which opening pair ``k`` plays is
fixed by :func:`book_opening`, as cutechess and fastchess do it: ``sequential`` takes the lines
in order, ``random`` takes them in an order shuffled once by the seed; either way every line
is used once before any line repeats.

Pure: it reads one file and imports only the rules.
"""

from __future__ import annotations

import functools
import os
import random
import re
import stat
from typing import Literal, Optional, Sequence

from arena.errors import ConfigError, MoveError
from arena.rules import Position
from arena.variants import Variant

BookOrder = Literal["sequential", "random"]
BOOK_ORDERS: tuple[BookOrder, ...] = ("sequential", "random")

#: the largest book read (bytes): ample for Morris books, small enough to keep in memory
BOOK_CAP = 16 * 1024 * 1024

Book = tuple[tuple[str, ...], ...]


BookFormat = Literal["text", "pgn"]
BOOK_FORMATS: tuple[BookFormat, ...] = ("text", "pgn")
#: a PGN tag pair, a comment, a variation, a move number, a NAG, a result: not turns
_PGN_NOISE = re.compile(r"\{[^}]*\}|;[^\n]*|\$\d+|\b\d+\.(?:\.\.)?|\b(?:1-0|0-1|1/2-1/2)(?!\S)"
                        r"|(?<!\S)\*(?!\S)")


def book_format(path: str | os.PathLike[str], given: Optional[str] = None) -> BookFormat:
    """The format of the book at ``path``: ``given``, else ``pgn`` for a ``.pgn`` file, else
    ``text`` (one opening a line)."""
    if given in BOOK_FORMATS:
        return given
    return "pgn" if os.fspath(path).lower().endswith(".pgn") else "text"


def pgn_openings(text: str) -> list[tuple[int, list[str]]]:
    """The games of a PGN text as ``(line number of its movetext, turns)``: tag pairs,
    comments (``{...}``, ``; ...``), variations (``(...)``), move numbers, NAGs and results
    left out, as cutechess and fastchess read a PGN book."""
    games: list[tuple[int, list[str]]] = []
    turns: list[str] = []
    start = 0
    depth = 0
    # a comment over several lines keeps its line breaks: the line numbers stay right
    clean = _PGN_NOISE.sub(" ", re.sub(r"\{[^}]*\}", lambda m: "\n" * m.group(0).count("\n"),
                                       text))
    for number, raw in enumerate(clean.splitlines(), 1):
        line = raw.strip()
        if line.startswith("[") and line.endswith("]") and depth == 0:
            if turns:
                games.append((start, turns))
                turns = []
            continue
        for word in line.replace("(", " ( ").replace(")", " ) ").split():
            if word == "(":
                depth += 1
            elif word == ")":
                depth = max(0, depth - 1)
            elif depth == 0:
                if not turns:
                    start = number
                turns.append(word)
    if turns:
        games.append((start, turns))
    return games


def parse_book(text: str, variant: Variant, *, source: str = "book",
               fmt: BookFormat = "text", plies: Optional[int] = None) -> Book:
    """The openings of a book's text, each turn in canonical notation: one a line
    (``text``), or one a game (``pgn``); with ``plies``, each cut to its first ``plies``
    turns (fastchess's ``plies=N``).

    ``source`` names the book in errors (``source:line``).

    :raises ConfigError: a turn is not a move, is not legal where it is played, or ends the
        game; or the book holds no opening.
    """
    book: list[tuple[str, ...]] = []
    lines = (pgn_openings(text) if fmt == "pgn" else
             [(number, raw.split("#", 1)[0].split())
              for number, raw in enumerate(text.splitlines(), 1)])
    for number, turns in lines:
        if plies is not None:
            turns = turns[:plies]
        if turns:
            book.append(_check_line(turns, variant, f"{source}:{number}"))
    if not book:
        raise ConfigError("no opening in the book (every line is blank or a # comment)", source)
    return tuple(book)


def _check_line(turns: Sequence[str], variant: Variant, where: str) -> tuple[str, ...]:
    """One line's turns, played from the start of ``variant``, as canonical text."""
    pos = Position(variant)
    out: list[str] = []
    for n, text in enumerate(turns, 1):
        try:
            move = pos.parse_move(text)
        except MoveError as e:
            raise ConfigError(f"turn {n} ({text!r}) is not legal in {variant.name}: {e}",
                              where) from None
        pos.push(move)
        if pos.outcome() is not None:
            raise ConfigError(f"turn {n} ({text!r}) ends the game: an opening must leave it "
                              f"to the bots (a book of whole games: take its first turns, "
                              f"plies: N)", where)
        out.append(str(move))
    return tuple(out)


def read_book_text(path: str | os.PathLike[str]) -> str:
    """The text of the book at ``path``: a regular file of at most :data:`BOOK_CAP` bytes,
    UTF-8, with no NUL byte.

    :raises ConfigError: the file is missing, unreadable, not a regular file, too large, or
        binary.
    """
    shown = os.fspath(path)
    try:  # non-blocking, so that a FIFO is refused rather than waited on
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as f:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise ConfigError("a folder, not an opening book", shown)
            if not stat.S_ISREG(mode):
                raise ConfigError("not a regular file", shown)
            data = f.read(BOOK_CAP + 1)
    except FileNotFoundError:
        raise ConfigError("no such opening book", shown) from None
    except IsADirectoryError:
        raise ConfigError("a folder, not an opening book", shown) from None
    except OSError as e:
        raise ConfigError(f"cannot read the opening book: {e.strerror}", shown) from None
    if len(data) > BOOK_CAP:
        raise ConfigError(f"the opening book is larger than {BOOK_CAP // (1024 * 1024)} MiB",
                          shown)
    if b"\0" in data:
        raise ConfigError("not a text file (it holds NUL bytes)", shown)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"not a UTF-8 text file (byte {e.start})", shown) from None


def load_book(path: str | os.PathLike[str], variant: Variant, *,
              fmt: Optional[str] = None, plies: Optional[int] = None) -> Book:
    """The openings of the book at ``path`` for ``variant`` (see the module's docstring; a
    ``.pgn`` file, or ``fmt`` ``pgn``, is read as PGN).

    :raises ConfigError: the file cannot be used (:func:`read_book_text`), holds no opening,
        or a line is not a legal opening (naming ``file:line`` and the first bad turn).
    """
    return parse_book(read_book_text(path), variant, source=os.fspath(path),
                      fmt=book_format(path, fmt), plies=plies)


@functools.lru_cache(maxsize=8)
def _shuffled(size: int, seed: int) -> tuple[int, ...]:
    """The line numbers ``0 .. size-1`` in the order ``seed`` shuffles them (computed once)."""
    order = list(range(size))
    random.Random(seed).shuffle(order)
    return tuple(order)


def book_opening(book: Book, index: int, *, seed: int, order: BookOrder) -> tuple[str, ...]:
    """The opening of the ``index``-th pair (from 0) of a run using ``book``.

    ``sequential``: line ``index mod len(book)``.  ``random``: the book is shuffled once by
    ``seed`` and read in that order, so every line is used before any repeats; the same seed
    always gives the same openings.

    :raises ValueError: an empty book, a negative index or an unknown order.
    """
    if not book:
        raise ValueError("an empty book has no opening")
    if index < 0:
        raise ValueError(f"index must be at least 0, got {index}")
    at = index % len(book)
    if order == "sequential":
        return book[at]
    if order == "random":
        return book[_shuffled(len(book), seed)[at]]
    raise ValueError(f"order must be one of {', '.join(BOOK_ORDERS)}, got {order!r}")


__all__ = ["Book", "BookOrder", "BOOK_ORDERS", "BOOK_CAP", "book_opening", "load_book",
           "parse_book", "read_book_text"]
