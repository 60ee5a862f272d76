"""Games from a set-up position (issue 39): position books (``format: epd``), PGN books with a
``FEN`` tag, ``start_position:``, ``arena play --position``, the protocol's ``setup`` line,
the record's ``start_position`` and the PGN's ``SetUp``/``FEN`` tags.

Real games between real bot processes (``bots/``, ``tests/bots/setup-echo``), with time
limits that instant bots never reach: no assertion depends on how long anything takes.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena import protocol as P
from arena.botkit import Session, SeededBot
from arena.errors import ConfigError
from arena.export import format_game, game_tags
from arena.openings import (book_format, check_start, load_book, parse_book, parse_positions,
                            start_and_opening)
from arena.records import GameRecord, PlayerInfo, parse_record, read_records
from arena.rules import Position
from arena.variants import get_variant

ROOT = Path(__file__).resolve().parent.parent
ARENA = [str(Path(sys.executable).parent / "arena")]
NINE = get_variant("nine-mens-morris")
#: after d6 d2 a1 f4 g1 b4: white to move, 6 men each in hand
OPEN = "W...B.....B..W.....B.W.. w 6 6 6 - - 6"
#: a moving-phase position (docs/PROTOCOL.md's example)
MOVING = "WBWBWBW...B..B.BW.BBBW.. w 0 0 0 - - 18"
#: three men each, black to move (flying)
FLYING = ".W.B.W.B......B...W..... b 0 0 3 - - 40"

BOOK = f"""# a position book: comments, blank lines and EPD operations
{OPEN} id "open mill"; c0 "after d6 d2 a1 f4 g1 b4";

{MOVING}   id "moving";  # a comment after the operations
{FLYING}
"""


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The games' bots run at isolation level none (tests/hostile covers the sandbox)."""
    monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")


def _write(folder: Path, text: str, name: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _replays(record: GameRecord) -> Position:
    """The record's moves replayed from its start position: each must be legal."""
    pos = (Position.from_text(NINE, record.start_position) if record.start_position
           else Position(NINE))
    for move in record.moves:
        pos.push(pos.parse_move(move.move))  # raises if a move is not legal there
    return pos


# -- the book --------------------------------------------------------------------------------


def test_a_position_book_gives_one_start_a_line_with_its_id(tmp_path: Path) -> None:
    positions = parse_positions(BOOK, NINE, source="b.epd")
    assert [(p.line, p.position, p.id) for p in positions] == [
        (2, OPEN, "open mill"), (4, MOVING, "moving"), (5, FLYING, None)]
    assert positions[0].operations == (("c0", '"after d6 d2 a1 f4 g1 b4"'),)
    book = parse_book(BOOK, NINE, fmt="epd")
    assert book == ((f"setup {OPEN}",), (f"setup {MOVING}",), (f"setup {FLYING}",))
    # by its name: .epd and .fen are position books; plies does not apply to a position
    for name in ("b.epd", "b.FEN"):
        assert book_format(name) == "epd"
        assert load_book(_write(tmp_path, BOOK, name), NINE, plies=2) == book
    assert load_book(_write(tmp_path, BOOK, "b.txt"), NINE, fmt="epd") == book
    assert P.split_setup(book[0]) == (OPEN, [])


@pytest.mark.parametrize("line, message", [
    ("W...B.....B..W w 6 6", r"b\.epd:3: expected a position \(8 fields"),
    (f"{OPEN} id \"x\" oops", r"b\.epd:3: expected EPD operations"),
    ("WWWWWWWWWW..B.....B.W... w 6 6 6 - - 6", r"b\.epd:3: not a position of nine-mens-morris:"
                                               r" white has more men than the variant's 9"),
    ("W...B.... w 2 2 2 - - 2", r"b\.epd:3: not a position of nine-mens-morris: expected 24 "
                                r"characters"),
    ("WWW.....B...B........... w 0 0 6 - - 6", r"b\.epd:3: the game is already over in this "
                                               r"position \(1-0, too-few-men\)"),
    (f"{OPEN[:-2]} 6 used=a1a4a7;-", r"b\.epd:3: not a position of nine-mens-morris: used "
                                     r"mills in a variant without one_time_mill"),
    ("W...B.....B..W.....B.W.. x 6 6 6 - - 6", r"b\.epd:3: .*side to move must be w or b"),
])
def test_a_bad_line_is_refused_in_one_line_naming_file_and_line(tmp_path: Path, line: str,
                                                                message: str) -> None:
    path = _write(tmp_path, f"{OPEN}\n# fine so far\n{line}\n{MOVING}\n", "b.epd")
    with pytest.raises(ConfigError, match=message) as caught:
        load_book(path, NINE)
    assert "\n" not in str(caught.value)


def test_a_position_is_checked_in_the_books_variant() -> None:
    three = get_variant("three-mens-morris")
    assert check_start(three, ".W.B..... w 2 2 2 - - 2") == ".W.B..... w 2 2 2 - - 2"
    with pytest.raises(ConfigError, match="expected 9 characters"):
        check_start(three, OPEN)  # a nine men's morris position
    with pytest.raises(ConfigError, match="no position in the book"):
        parse_book("# nothing\n\n", NINE, fmt="epd")


def test_a_pgn_game_with_a_fen_tag_starts_from_it() -> None:
    pgn = (f'[Event "x"]\n[SetUp "1"]\n[FEN "{OPEN}"]\n\n1. d1xb4 {{a comment}} c5 *\n\n'
           f'[Event "y"]\n[SetUp "1"]\n[FEN "{FLYING}"]\n\n*\n\n'
           '[Event "z"]\n\n1. d6 d2 *\n')
    assert parse_book(pgn, NINE, fmt="pgn") == (
        (f"setup {OPEN}", "d1xb4", "c5"), (f"setup {FLYING}",), ("d6", "d2"))
    assert parse_book(pgn, NINE, fmt="pgn", plies=1)[0] == (f"setup {OPEN}", "d1xb4")
    with pytest.raises(ConfigError, match=r"book:4: turn 1 \('d6'\) is not legal"):
        parse_book(f'[SetUp "1"]\n[FEN "{OPEN}"]\n\n1. d6 *\n', NINE, fmt="pgn")  # d6: taken
    assert start_and_opening(NINE, (f"setup {OPEN}", "d1xb4")) == (OPEN, ["d1xb4"])


# -- the protocol and the kit ----------------------------------------------------------------


def test_the_setup_line_parses_and_the_kit_replays_history_from_it() -> None:
    assert P.parse_referee_line(f"setup {OPEN}") == P.Setup(OPEN)
    assert P.format_setup(OPEN) == f"setup {OPEN}"
    sent: list[str] = []
    warned: list[str] = []

    class Quiet(SeededBot):
        def choose(self, position: Position, clock: object) -> str:
            return str(position.legal_moves()[0])

    bot = Quiet()
    session = Session(bot, send=sent.append, warn=warned.append)
    after = Position.from_text(NINE, OPEN)
    after.push_text("d1xb4")
    newgame = "newgame nine-mens-morris " + " ".join(
        f"{k}={v}" for k, v in NINE.to_params().items())
    for line in ("morris 1", newgame, f"setup {OPEN}", f"position {after.to_text()} moves d1xb4",
                 "go movetime 500"):
        session.handle(line)
    assert bot.start_position == OPEN
    assert [str(m) for m in session.position.move_stack] == ["d1xb4"]  # the history, replayed
    assert warned == [] and sent[-1].startswith("bestmove ")
    session.handle(newgame)
    assert bot.start_position is None and session.start is None


# -- the record ------------------------------------------------------------------------------


def test_the_record_field_is_absent_for_the_normal_start_and_old_records_load() -> None:
    record = GameRecord("g", NINE.name, {}, PlayerInfo("a"), PlayerInfo("b"), "1-0", "mill")
    assert "start_position" not in record.to_dict()
    assert parse_record(record.to_json()).start_position is None
    record.start_position = OPEN
    assert parse_record(record.to_json()).start_position == OPEN
    # an opening that carries its start (a slot of a position book) is split when recorded
    carried = GameRecord("g", NINE.name, {}, PlayerInfo("a"), PlayerInfo("b"), "1-0", "mill",
                         opening=[f"setup {OPEN}", "d1xb4"])
    assert (carried.start_position, carried.opening) == (OPEN, ["d1xb4"])
    tags = dict(game_tags(carried))
    assert (tags["SetUp"], tags["FEN"]) == ("1", OPEN)
    assert "SetUp" not in dict(game_tags(GameRecord("g", NINE.name, {}, PlayerInfo("a"),
                                                    PlayerInfo("b"), "1-0", "mill")))


# -- real games ------------------------------------------------------------------------------


def _tournament(tmp_path: Path, openings: str, name: str = "positions") -> Path:
    echo = ROOT / "tests" / "bots" / "setup-echo"
    return _write(tmp_path, f"name: {name}\nbots: [{echo}, {ROOT}/bots/greedy]\n{openings}\n"
                            f"games_per_pairing: 4\ntime: {{movetime: 2000, handshake: 30000}}\n"
                            f"workers: 2\n"
                            f"report: false\noutput: {tmp_path / 'out'}\n", "t.yaml")


def _check_echo(record: GameRecord) -> None:
    """The setup-echo bot's stderr says it was told the record's start, and that the kit
    replayed the moves before its first turn from there (not from the variant's start)."""
    color = "white" if record.white.name == "setup-echo" else "black"
    said = record.stderr.get(color, "")
    assert "kit:" not in said, said  # no move list the kit could not replay
    mover = Position.from_text(NINE, record.start_position or "")
    before = 0
    for move in record.moves:  # the moves before setup-echo's first turn (not the book's)
        if mover.turn == (0 if color == "white" else 1) and not move.opening:
            break
        mover.push_text(move.move)
        before += 1
    if len(record.moves) > before:  # it moved: it said what it knew
        assert f"start={record.start_position} history={before} " in said, said


def test_a_position_book_starts_the_games_it_says(tmp_path: Path) -> None:
    from arena.config import load_config
    from arena.tournament import run_tournament

    _write(tmp_path, BOOK, "book.epd")
    config = load_config(_tournament(tmp_path, "openings: {file: book.epd, order: sequential}"))
    assert config.book is not None and config.book.to_dict()["format"] == "epd"
    assert run_tournament(config, console=io.StringIO()).complete
    records = read_records(tmp_path / "out" / "games.jsonl")
    starts: dict[str, set[str]] = {}
    for record in records:
        assert record.start_position in (OPEN, MOVING)  # two pairs: the first two lines
        assert record.opening == [] and not any(m.opening for m in record.moves)
        if not record.forfeit:
            _replays(record)  # every move legal from the start position
        _check_echo(record)
        starts.setdefault(record.start_position or "", set()).add(record.white.name)
    # each position played twice, each bot once with each colour
    assert starts == {OPEN: {"setup-echo", "greedy"}, MOVING: {"setup-echo", "greedy"}}
    pgn = "".join(format_game(record) for record in records)  # as arena export writes it
    assert pgn.count('[SetUp "1"]') == 4
    assert pgn.count(f'[FEN "{OPEN}"]') == 2 and pgn.count(f'[FEN "{MOVING}"]') == 2


def test_a_pgn_book_with_fen_tags_starts_the_games_it_says(tmp_path: Path) -> None:
    from arena.config import load_config
    from arena.tournament import run_tournament

    _write(tmp_path, f'[Event "a"]\n[SetUp "1"]\n[FEN "{OPEN}"]\n\n1. d1xb4 {{book}} *\n\n'
                     f'[Event "b"]\n[SetUp "1"]\n[FEN "{MOVING}"]\n\n*\n', "book.pgn")
    config = load_config(_tournament(tmp_path, "openings: {file: book.pgn}"))
    assert run_tournament(config, console=io.StringIO()).complete
    openings = {}
    for record in read_records(tmp_path / "out" / "games.jsonl"):
        openings.setdefault(record.start_position, set()).add(tuple(record.opening))
        assert [m.move for m in record.moves if m.opening] == record.opening
        if not record.forfeit:
            _replays(record)
        _check_echo(record)
    assert openings == {OPEN: {("d1xb4",)}, MOVING: {()}}


def test_start_position_in_a_tournament_file(tmp_path: Path) -> None:
    from arena.config import load_config
    from arena.tournament import run_tournament

    path = _tournament(tmp_path, f'start_position: "{FLYING}"')
    config = load_config(path)
    assert config.normalised()["openings"] == {"start_position": FLYING}
    assert run_tournament(config, console=io.StringIO()).complete
    for record in read_records(tmp_path / "out" / "games.jsonl"):
        assert record.start_position == FLYING
        if not record.forfeit:
            _replays(record)
        _check_echo(record)
    # a configuration without it is unchanged (its hash too): no key
    plain = load_config(_tournament(tmp_path, "", name="plain"))
    assert plain.normalised()["openings"] == {"random": 0}
    assert "start_position" not in plain.normalised()
    with pytest.raises(ConfigError, match="start_position: a start position or openings"):
        load_config(_tournament(tmp_path, f'start_position: "{FLYING}"\nopenings: {{random: 2}}'))
    with pytest.raises(ConfigError, match="start_position: not a position of nine-mens-morris"):
        load_config(_tournament(tmp_path, 'start_position: "W w 0 0 0 - - 0"'))


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MORRIS_ARENA_ISOLATION": "none"})


def test_arena_play_position_plays_from_it_and_show_and_pgn_replay_it(tmp_path: Path) -> None:
    record_path = tmp_path / "game.json"
    echo = ROOT / "tests" / "bots" / "setup-echo"
    done = _arena("play", str(ROOT / "bots" / "greedy"), str(echo),
                  "--position", FLYING, "--movetime", "2000", "--handshake", "30000", "--quiet",
                  "--seed", "3",
                  "--record", str(record_path), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    record = parse_record(record_path.read_text())
    assert record.start_position == FLYING
    if not record.forfeit:
        _replays(record)
    _check_echo(record)
    assert record.moves, record.detail  # black (setup-echo) moved first: it was its turn
    text = format_game(record)
    assert '[SetUp "1"]' in text and f'[FEN "{FLYING}"]' in text
    assert "\n1... " in text  # black moves first
    # the PGN reads back as a book from the same position
    book = parse_book(text, NINE, fmt="pgn", plies=1)
    assert book == ((f"setup {FLYING}", record.moves[0].move),)
    # arena show replays from the start position
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "games.jsonl").write_text(record.to_json() + "\n")
    shown = _arena("show", str(folder), record.game_id, "--ply", "0", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"Started from the position {FLYING}" in shown.stdout
    from arena.report.viewer import position_at, replay

    assert position_at(record, 0).to_text() == FLYING
    assert replay(record).plies[0].board == FLYING.split()[0]


@pytest.mark.parametrize("position, message", [
    ("W...B.....B..W w 6 6", "expected 8 fields"),
    ("WWWWWWWWWW..B.....B.W... w 6 6 6 - - 6", "white has more men than the variant's 9"),
    (".W.B..... w 2 2 2 - - 2", "expected 24 characters"),  # three men's morris' board
])
def test_arena_play_refuses_a_bad_position_in_one_line(tmp_path: Path, position: str,
                                                       message: str) -> None:
    done = _arena("play", str(ROOT / "bots" / "random"), str(ROOT / "bots" / "random"),
                  "--position", position, "--quiet", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: --position: "), done.stderr
    assert message in lines[0]
    assert done.stdout == ""  # refused before any bot started


def test_a_tournament_with_a_bad_position_book_is_refused_in_one_line(tmp_path: Path) -> None:
    _write(tmp_path, f"{OPEN}\n{FLYING} id nope\n", "book.epd")
    _tournament(tmp_path, "openings: {file: book.epd}")
    done = _arena("run", "t.yaml", cwd=tmp_path)
    assert done.returncode != 0
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "book.epd:2: expected EPD operations" in lines[0]
    assert not (tmp_path / "out" / "games.jsonl").exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="no node here for bots/js-greedy")
def test_a_bot_that_knows_no_setup_line_ignores_it_and_plays_from_the_position() -> None:
    """Backwards compatible: bots/js-greedy (written before ``setup``) ignores the line, as
    bots should ignore lines they do not know, and plays legal moves from each ``position``."""
    from arena.bot import load_bot
    from arena.clock import TimeControl
    from arena.referee import play_game

    tc = TimeControl(movetime_ms=2000, handshake_ms=30000, margin_ms=200)
    js = load_bot(ROOT / "bots" / "js-greedy")
    for start, sides in ((MOVING, (js, load_bot(ROOT / "bots" / "random"))),
                         (FLYING, (load_bot(ROOT / "bots" / "random"), js))):
        record = play_game(*sides, NINE, tc, start=start, seed=5)
        assert record.start_position == start
        assert record.termination not in ("illegal-move", "protocol-error", "crash"), record.detail
        if not record.forfeit:
            _replays(record)
        color = "white" if sides[0] is js else "black"
        assert f"ignored unknown command: setup {start}" in record.stderr.get(color, "")
