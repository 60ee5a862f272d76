"""Opening books (arena.openings): reading, checking every line, and which line a pair plays."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.openings import BOOK_CAP, book_opening, load_book, parse_book
from arena.referee import check_opening
from arena.rules import Position
from arena.variants import get_variant

NINE = get_variant("nine-mens-morris")


def _write(tmp_path: Path, text: str, name: str = "book.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_book_skips_blank_lines_and_comments_and_checks_each_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "# a small book\n\nd6 a1\n  a1 b2 a4 b4 a7xb2   # a mill\n\ng7\n")
    book = load_book(path, NINE)
    assert book == (("d6", "a1"), ("a1", "b2", "a4", "b4", "a7xb2"), ("g7",))
    for line in book:  # the referee accepts every opening the book gives
        assert check_opening(NINE, line) == list(line)


@pytest.mark.parametrize("line, turn, text", [
    ("a1 a1", 2, "a1"),              # occupied
    ("a1 b2 a4 b4 a7", 5, "a7"),     # closes a mill without its capture
    ("a1 z9", 2, "z9"),              # not a point
    ("a1-a4", 1, "a1-a4"),           # a slide in the placement phase
    ("hello", 1, "hello"),           # not a move at all
])
def test_a_bad_line_is_refused_naming_file_line_and_first_bad_turn(
        tmp_path: Path, line: str, turn: int, text: str) -> None:
    path = _write(tmp_path, f"d6\n# comment\n{line} d2\n")
    with pytest.raises(ConfigError) as info:
        load_book(path, NINE)
    message = str(info.value)
    assert message.startswith(f"{path}:3: turn {turn} ({text!r})")
    assert "\n" not in message


def test_an_opening_that_ends_the_game_is_refused(tmp_path: Path) -> None:
    three = get_variant("three-mens-morris")
    pos = Position(three)
    for t in "a1 d1 a4 d4 a7".split():
        pos.push_text(t)
    assert pos.outcome() is not None  # a1 a4 a7 is a line: White wins
    path = _write(tmp_path, "a1 d1\na1 d1 a4 d4 a7\n")
    with pytest.raises(ConfigError, match=r"book\.txt:2: turn 5 \('a7'\) ends the game"):
        load_book(path, three)
    assert load_book(_write(tmp_path, "a1 d1 a4 d4\n", "ok.txt"), three) == (
        ("a1", "d1", "a4", "d4"),)


def test_a_line_is_checked_in_the_books_variant(tmp_path: Path) -> None:
    path = _write(tmp_path, "a1 c3\n")
    assert load_book(path, NINE) == (("a1", "c3"),)
    with pytest.raises(ConfigError, match="book.txt:1: turn 2 \\('c3'\\)"):
        load_book(path, get_variant("six-mens-morris"))  # c3 is not on the six-men board


def test_missing_empty_binary_and_odd_files_are_refused_in_one_line(tmp_path: Path) -> None:
    cases: list[tuple[Path, str]] = [
        (tmp_path / "nope.txt", "no such opening book"),
        (_write(tmp_path, "", "empty.txt"), "no opening in the book"),
        (_write(tmp_path, "# only\n\n   # comments\n", "comments.txt"), "no opening in the book"),
        (tmp_path, "a folder, not an opening book"),
    ]
    binary = tmp_path / "book.bin"
    binary.write_bytes(b"a1 d6\n\x00\x01\x02")
    cases.append((binary, "not a text file"))
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"a1 \xe9\n")
    cases.append((latin, "not a UTF-8 text file"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # would block a plain open(): refused without waiting for a writer
    cases.append((fifo, "not a regular file"))
    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.truncate(BOOK_CAP + 1)
    cases.append((big, "larger than"))
    for path, expected in cases:
        with pytest.raises(ConfigError) as info:
            load_book(path, NINE)
        message = str(info.value)
        assert expected in message and message.startswith(str(path)), message
        assert "\n" not in message


def test_parse_book_names_its_source() -> None:
    with pytest.raises(ConfigError, match=r"^inline:2: turn 1"):
        parse_book("a1\nq1\n", NINE, source="inline")


def _book(n: int) -> tuple[tuple[str, ...], ...]:
    points = [str(m) for m in Position(NINE).legal_moves()]
    return tuple((points[i],) for i in range(n))


def test_sequential_order_takes_the_lines_in_order_and_wraps() -> None:
    book = _book(5)
    got = [book_opening(book, i, seed=7, order="sequential") for i in range(12)]
    assert got == [book[i % 5] for i in range(12)]


def test_random_order_uses_every_line_once_before_any_repeats() -> None:
    book = _book(20)
    first = [book_opening(book, i, seed=11, order="random") for i in range(20)]
    assert sorted(first) == sorted(book)      # a permutation: each line once
    assert first != list(book)                # shuffled (1 chance in 20! of this failing)
    second = [book_opening(book, i, seed=11, order="random") for i in range(20, 40)]
    assert second == first                    # then the same order again
    # the seed alone decides: the same seed gives the same order, another seed another one
    assert [book_opening(book, i, seed=11, order="random") for i in range(20)] == first
    other = [book_opening(book, i, seed=12, order="random") for i in range(20)]
    assert other != first and sorted(other) == sorted(book)
    # the order is random.Random(seed)'s shuffle, computed here independently
    order = list(range(20))
    random.Random(11).shuffle(order)
    assert first == [book[j] for j in order]


def test_book_opening_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        book_opening((), 0, seed=1, order="sequential")
    with pytest.raises(ValueError):
        book_opening(_book(2), -1, seed=1, order="sequential")
    with pytest.raises(ValueError):
        book_opening(_book(2), 0, seed=1, order="backwards")  # type: ignore[arg-type]


PGN_BOOK = """[Event "openings"]
[White "a"]
[Black "b"]
[Result "*"]

1. d6 {a comment} d2 $1 2. a1 (2. g7 d7) f4 ; the rest of the line
3. g1 *

[Event "openings"]
[Result "1/2-1/2"]

1. b6 {a comment
over two lines} f2 2. d3 1/2-1/2
"""


def test_a_pgn_book_gives_one_opening_a_game(tmp_path: Path) -> None:
    """Issue 39: a PGN book (cutechess's and fastchess's format=pgn) failed with "'[Event'
    is not legal"; tags, comments, variations, move numbers, NAGs and results are left out,
    each game is an opening, and plies=N cuts each to its first N turns."""
    path = _write(tmp_path, PGN_BOOK, "book.pgn")
    book = load_book(path, NINE)
    assert book == (("d6", "d2", "a1", "f4", "g1"), ("b6", "f2", "d3"))
    assert load_book(path, NINE, plies=2) == (("d6", "d2"), ("b6", "f2"))
    text_named = _write(tmp_path, PGN_BOOK, "book.txt")
    assert load_book(text_named, NINE, fmt="pgn") == book  # format=pgn whatever its name
    with pytest.raises(ConfigError, match="is not legal"):
        load_book(text_named, NINE)  # as a text book: '[Event' is a bad turn
    bad = _write(tmp_path, '[Event "x"]\n\n1. d6 d6 *\n', "bad.pgn")
    with pytest.raises(ConfigError, match=r"bad\.pgn:3: turn 2 \('d6'\)"):
        load_book(bad, NINE)


def test_a_tournament_plays_the_openings_of_a_pgn_book(tmp_path: Path) -> None:
    import io

    from arena.config import load_config
    from arena.records import read_records
    from arena.tournament import run_tournament

    _write(tmp_path, PGN_BOOK, "book.pgn")
    root = Path(__file__).resolve().parent.parent
    path = _write(tmp_path, f"name: pgnbook\nbots: [{root}/bots/random, {root}/bots/greedy]\n"
                            f"openings: {{file: book.pgn, plies: 4}}\ngames_per_pairing: 4\n"
                            f"time: {{movetime: 1000}}\nworkers: 2\nreport: false\n"
                            f"output: {tmp_path / 'out'}\n", "t.yaml")
    config = load_config(path)
    assert config.book is not None and config.book.to_dict()["format"] == "pgn"
    assert config.book.to_dict()["plies"] == 4
    assert run_tournament(config, console=io.StringIO()).complete
    openings = {("d6", "d2", "a1", "f4"), ("b6", "f2", "d3")}
    used = set()
    for record in read_records(tmp_path / "out" / "games.jsonl"):
        played = tuple(m.move for m in record.moves if m.opening)  # the book's turns
        assert played in openings, played
        assert tuple(m.move for m in record.moves[:len(played)]) == played
        used.add(played)
    assert used == openings  # two pairs, one opening each
