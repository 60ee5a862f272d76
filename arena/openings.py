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

A book may also give **positions** (``format: epd``, or a ``.epd`` / ``.fen`` file): one
position a line in the protocol's position text (``Position.to_text``, docs/PROTOCOL.md,
*Position text*), optionally followed, as in an EPD file, by operations ``opcode operand...;``
(``id "open mill"; c0 "from Sanmill";``): ``id`` is kept (:class:`BookPosition`), the others
are read and ignored.  Each position is checked for each variant (the board's size, men on the
board and in hand, fields the variant has, a game not already over); its games start from it
(the opening is ``("setup <text>",)``: :func:`arena.protocol.split_setup`).  ``plies`` does
not apply to a position (it has no moves to cut).  A PGN game with a ``[FEN "..."]`` tag
starts from that position too (its moves are played from it).

Pure: it reads one file and imports only the rules.
"""

from __future__ import annotations

import functools
import os
import random
import re
import stat
from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from arena.errors import ConfigError, MoveError, PositionError
from arena.protocol import format_setup, split_setup
from arena.rules import Position
from arena.variants import Variant

BookOrder = Literal["sequential", "random"]
BOOK_ORDERS: tuple[BookOrder, ...] = ("sequential", "random")

#: the largest book read (bytes): ample for Morris books, small enough to keep in memory
BOOK_CAP = 16 * 1024 * 1024

Book = tuple[tuple[str, ...], ...]


BookFormat = Literal["text", "pgn", "epd"]
BOOK_FORMATS: tuple[BookFormat, ...] = ("text", "pgn", "epd")
#: the file name endings read as a position book without ``format: epd``
POSITION_SUFFIXES = (".epd", ".fen")
#: a PGN tag pair, a comment, a variation, a move number, a NAG, a result: not turns
_PGN_NOISE = re.compile(r"\{[^}]*\}|;[^\n]*|\$\d+|\b\d+\.(?:\.\.)?|\b(?:1-0|0-1|1/2-1/2)(?!\S)"
                        r"|(?<!\S)\*(?!\S)")


def book_format(path: str | os.PathLike[str], given: Optional[str] = None) -> BookFormat:
    """The format of the book at ``path``: ``given``, else ``pgn`` for a ``.pgn`` file,
    ``epd`` for a ``.epd`` or ``.fen`` file (one position a line), else ``text`` (one
    opening a line)."""
    if given in BOOK_FORMATS:
        return given
    name = os.fspath(path).lower()
    return ("pgn" if name.endswith(".pgn") else "epd" if name.endswith(POSITION_SUFFIXES)
            else "text")


#: a PGN tag pair alone on its line: ``[Name "value"]`` (``\\`` and ``\"`` escaped)
_TAG = re.compile(r'^\s*\[([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')


def pgn_games(text: str) -> list[tuple[int, list[str], dict[str, str]]]:
    """The games of a PGN text as ``(line number, turns, tags)``: the line of its first turn
    (of its ``FEN`` tag for a game without moves); its turns with tag pairs, comments
    (``{...}``, ``; ...``), variations (``(...)``), move numbers, NAGs and results left out,
    as cutechess and fastchess read a PGN book; its tags by name (unescaped)."""
    games: list[tuple[int, list[str], dict[str, str]]] = []
    turns: list[str] = []
    tags: dict[str, str] = {}
    tag_lines: dict[int, tuple[str, str]] = {}
    start = 0
    depth = 0
    body = False  # a line of movetext was seen (a game of tags and "*" only has no turn)
    raw_lines = text.splitlines()
    for number, raw in enumerate(raw_lines, 1):  # tags first: a value may hold ; or {
        m = _TAG.match(raw)
        if m:
            tag_lines[number] = (m.group(1), re.sub(r"\\(.)", r"\1", m.group(2)))
            raw_lines[number - 1] = ""
    # a comment over several lines keeps its line breaks: the line numbers stay right
    clean = _PGN_NOISE.sub(" ", re.sub(r"\{[^}]*\}", lambda m: "\n" * m.group(0).count("\n"),
                                       "\n".join(raw_lines)))
    for number, raw in enumerate(clean.splitlines(), 1):
        if number in tag_lines and depth == 0:
            if body:
                games.append((start, turns, tags))
                turns, tags, start, body = [], {}, 0, False
            name, value = tag_lines[number]
            tags[name] = value
            if name == "FEN" and not start:
                start = number
            continue
        if raw_lines[number - 1].strip():
            body = True
        for word in raw.replace("(", " ( ").replace(")", " ) ").split():
            if word == "(":
                depth += 1
            elif word == ")":
                depth = max(0, depth - 1)
            elif depth == 0:
                if not turns:
                    start = number
                turns.append(word)
    if body or turns:
        games.append((start, turns, tags))
    return [g for g in games if g[1] or "FEN" in g[2]]


def pgn_openings(text: str) -> list[tuple[int, list[str]]]:
    """The games of a PGN text as ``(line number of its movetext, turns)`` (:func:`pgn_games`
    without the tags)."""
    return [(number, turns) for number, turns, _ in pgn_games(text) if turns]


@dataclass(frozen=True)
class BookPosition:
    """One line of a position book: its line number, the position (canonical text), the
    ``id`` operation's value (None without one) and the other operations, by opcode (their
    operands as written; read, not used)."""

    line: int
    position: str
    id: Optional[str] = None
    operations: tuple[tuple[str, str], ...] = ()


#: an EPD operation: an opcode, operands (words or quoted strings), a semicolon
_OPERATION = re.compile(r'\s*([A-Za-z][A-Za-z0-9_]*)((?:\s+(?:"(?:[^"\\]|\\.)*"|[^\s;"]+))*)'
                        r'\s*;')
#: the fields after the first 8 of the position text (``used=...;...``, ``remove=...``)
_EXTRA_FIELD = re.compile(r"(?:used|remove)=\S*")


def _strip_comment(line: str) -> str:
    """``line`` up to a ``#`` outside a quoted operand."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i]
    return line


def parse_position_line(line: str, variant: Variant, where: str) -> BookPosition:
    """One line of a position book (without its comment): the position text, then EPD
    operations.  The position is checked as a start for ``variant`` (:func:`check_start`).

    :raises ConfigError: fewer than 8 fields, an operation that is not ``opcode
        operands;``, or a position that cannot start a game of ``variant``.
    """
    fields = line.split()
    if len(fields) < 8:
        raise ConfigError(f"expected a position (8 fields: points, side to move, white's and "
                          f"black's men in hand, quiet turns, white's and black's forbidden "
                          f"mills, ply), got {len(fields)} field{'s' * (len(fields) != 1)}: "
                          f"{line.strip()[:80]!r}", where)
    # the position: 8 fields and the extra fields of the position text; then operations
    words = 8
    while words < len(fields) and _EXTRA_FIELD.fullmatch(fields[words]):
        words += 1
    rest = line
    for field in fields[:words]:
        rest = rest[rest.index(field) + len(field):]
    text = check_start(variant, " ".join(fields[:words]), where)
    ident: Optional[str] = None
    operations: list[tuple[str, str]] = []
    at = 0
    rest = rest.rstrip()
    while at < len(rest):
        m = _OPERATION.match(rest, at)
        if m is None:
            raise ConfigError(f"expected EPD operations (opcode operands;) after the "
                              f"position, got {rest[at:].strip()[:60]!r}", where)
        opcode, operands = m.group(1), m.group(2).strip()
        if opcode == "id":
            ident = re.sub(r'\\(.)', r"\1", operands[1:-1]) if operands.startswith('"') \
                and operands.endswith('"') and len(operands) > 1 else operands
        else:
            operations.append((opcode, operands))
        at = m.end()
        while at < len(rest) and rest[at].isspace():
            at += 1
    return BookPosition(0, text, ident, tuple(operations))


def parse_positions(text: str, variant: Variant, *, source: str = "book") -> list[BookPosition]:
    """The positions of a position book's text (see the module's docstring), each checked for
    ``variant``; ``source`` names the book in errors (``source:line``).

    :raises ConfigError: a line is not a position (naming ``source:line``), or the book holds
        none.
    """
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw)
        if line.strip():
            pos = parse_position_line(line, variant, f"{source}:{number}")
            out.append(BookPosition(number, pos.position, pos.id, pos.operations))
    if not out:
        raise ConfigError("no position in the book (every line is blank or a # comment)",
                          source)
    return out


def check_start(variant: Variant, text: str, where: str = "position") -> str:
    """``text`` as the canonical position text of a start position of ``variant``.

    :raises ConfigError: it is not position text for ``variant`` (another board's size, more
        men than the variant has, a field the variant does not have...), or the game is
        already over there (naming how), naming ``where``.
    """
    try:
        pos = Position.from_text(variant, text)
    except PositionError as e:
        raise ConfigError(f"not a position of {variant.name}: {e}", where) from None
    ended = pos.outcome()
    if ended is not None:
        raise ConfigError(f"the game is already over in this position ({ended.result}, "
                          f"{ended.termination.value}): a start must leave it to the bots",
                          where)
    return pos.to_text()


def parse_book(text: str, variant: Variant, *, source: str = "book",
               fmt: BookFormat = "text", plies: Optional[int] = None) -> Book:
    """The openings of a book's text, each turn in canonical notation: one a line
    (``text``), one a game (``pgn``; a game with a ``FEN`` tag starts from that position),
    or one position a line (``epd``: each opening is ``("setup <position>",)``); with
    ``plies``, each cut to its first ``plies`` turns (fastchess's ``plies=N``; a position
    has no turns to cut).

    ``source`` names the book in errors (``source:line``).

    :raises ConfigError: a turn is not a move, is not legal where it is played, or ends the
        game; a position is not one of ``variant`` or the game is over there; or the book
        holds no opening.
    """
    if fmt == "epd":
        return tuple((format_setup(p.position),)
                     for p in parse_positions(text, variant, source=source))
    book: list[tuple[str, ...]] = []
    lines = ([(number, turns, tags.get("FEN")) for number, turns, tags in pgn_games(text)]
             if fmt == "pgn" else
             [(number, raw.split("#", 1)[0].split(), None)
              for number, raw in enumerate(text.splitlines(), 1)])
    for number, turns, fen in lines:
        if plies is not None:
            turns = turns[:plies]
        where = f"{source}:{number}"
        if fen is not None:
            start = check_start(variant, fen, where)
            book.append((format_setup(start), *_check_line(turns, variant, where, start)))
        elif turns:
            book.append(_check_line(turns, variant, where))
    if not book:
        raise ConfigError("no opening in the book (every line is blank or a # comment)", source)
    return tuple(book)


def check_opening(variant: Variant, opening: Sequence[str]) -> list[str]:
    """The opening's moves as canonical text (:func:`start_and_opening` without the start).

    :raises ConfigError: a move is illegal."""
    return start_and_opening(variant, opening)[1]


def start_and_opening(variant: Variant, opening: Sequence[str], start: Optional[str] = None
                      ) -> tuple[Optional[str], list[str]]:
    """An opening's start position (None: the variant's) and moves, as canonical text:
    ``start``, or the opening's ``setup`` item (:func:`arena.protocol.split_setup`), then
    its moves played from there.

    :raises ConfigError: the position cannot start a game of ``variant``, or a move is not
        legal (or ends the game).
    """
    given, moves = split_setup(opening)
    start = start or given
    if start is not None:
        start = check_start(variant, start, "the start position")
    pos = Position(variant) if start is None else Position.from_text(variant, start)
    out = []
    for n, text in enumerate(moves, 1):
        try:
            move = pos.parse_move(text)
        except MoveError as e:
            raise ConfigError(f"opening move {n} ({text!r}) for {variant.name}: {e}") from None
        pos.push(move)
        out.append(str(move))
    return start, out


def _check_line(turns: Sequence[str], variant: Variant, where: str,
                start: Optional[str] = None) -> tuple[str, ...]:
    """One line's turns, played from the start of ``variant`` (or from ``start``), as
    canonical text."""
    pos = Position(variant) if start is None else Position.from_text(variant, start)
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


__all__ = ["Book", "BookOrder", "BookPosition", "BOOK_FORMATS", "BOOK_ORDERS", "BOOK_CAP",
           "POSITION_SUFFIXES", "book_format", "book_opening", "check_opening", "check_start",
           "load_book", "parse_book", "parse_position_line", "parse_positions", "pgn_games",
           "read_book_text", "start_and_opening"]
