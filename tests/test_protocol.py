"""Protocol lines: every format_/parse_ pair round-trips; malformed lines raise ProtocolError
carrying the line; CRLF and trailing white space are tolerated.  Pure: no processes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena import protocol as P
from arena.errors import ProtocolError
from arena.rules import Position
from arena.variants import PRESETS

# -- referee -> bot -----------------------------------------------------------------------

REFEREE_CASES: list[tuple[str, P.RefereeMessage]] = [
    (P.format_hello(), P.Hello(P.VERSION)),
    (P.format_hello(7), P.Hello(7)),
    (P.format_setoption("Seed", 42), P.SetOption("Seed", "42")),
    (P.format_setoption("Move Overhead", "10"), P.SetOption("Move Overhead", "10")),
    (P.format_setoption("Ponder", True), P.SetOption("Ponder", "true")),
    (P.format_setoption("Ponder", False), P.SetOption("Ponder", "false")),
    (P.format_setoption("Book File", "my book.txt"), P.SetOption("Book File", "my book.txt")),
    (P.format_isready(), P.IsReady()),
    (P.format_legalmoves(["d6"]), P.LegalMoves(("d6",))),
    (P.format_legalmoves(["a1-a4", "d6xa1xg7", "g7"]), P.LegalMoves(("a1-a4", "d6xa1xg7", "g7"))),
    (P.format_go(), P.Go()),
    (P.format_go(movetime=100), P.Go(movetime=100)),
    (P.format_go(wtime=60000, btime=59000, winc=1000, binc=1000),
     P.Go(wtime=60000, btime=59000, winc=1000, binc=1000)),
    (P.format_go(1, 2, 3, 4, 5), P.Go(1, 2, 3, 4, 5)),
    (P.format_gameover("1-0", "too-few-men"), P.GameOver("1-0", "too-few-men")),
    (P.format_gameover("1/2-1/2", "repetition"), P.GameOver("1/2-1/2", "repetition")),
    (P.format_gameover("1-0", "mill", "a1-a4", "WW.. b 0 0 3 - - 12"),
     P.GameOver("1-0", "mill", "a1-a4", "WW.. b 0 0 3 - - 12")),
    (P.format_gameover("0-1", "start-failure", None, "........ w 9 9 0 - - 0"),
     P.GameOver("0-1", "start-failure", None, "........ w 9 9 0 - - 0")),
    (P.format_quit(), P.Quit()),
]


@pytest.mark.parametrize("line,message", REFEREE_CASES, ids=[c[0] for c in REFEREE_CASES])
def test_referee_lines_round_trip(line: str, message: P.RefereeMessage) -> None:
    assert P.parse_referee_line(line) == message
    assert P.parse_referee_line(line + "\n") == message


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_newgame_round_trips_every_preset(name: str) -> None:
    variant = PRESETS[name]
    line = P.format_newgame(variant.name, variant.to_params())
    msg = P.parse_referee_line(line)
    assert msg == P.NewGame(variant.name, variant.to_params())
    assert isinstance(msg, P.NewGame)
    assert type(variant).from_params(msg.variant, msg.params) == variant


def test_position_round_trips_with_and_without_moves() -> None:
    pos = Position("nine-mens-morris")
    moves = []
    for text in ("d6", "d2", "f6", "b6"):
        pos.push_text(text)
        moves.append(text)
    line = P.format_position(pos.to_text(), moves)
    assert P.parse_referee_line(line) == P.PositionCmd(pos.to_text(), tuple(moves))
    empty = P.format_position(pos.to_text())
    assert empty.endswith(" moves")
    assert P.parse_referee_line(empty) == P.PositionCmd(pos.to_text(), ())
    # ``moves`` may be left out altogether
    assert P.parse_referee_line(f"position {pos.to_text()}") == P.PositionCmd(pos.to_text(), ())


def test_legalmoves_round_trips_every_legal_list_of_a_game() -> None:
    pos = Position("nine-mens-morris")
    rng = random.Random(5)
    while (legal := pos.legal_moves()):
        line = P.format_legalmoves(legal)
        assert P.parse_referee_line(line) == P.LegalMoves(tuple(str(m) for m in legal))
        pos.push(rng.choice(legal))


@given(st.one_of(st.none(), st.integers(0, 10**9)), st.one_of(st.none(), st.integers(0, 10**9)),
       st.one_of(st.none(), st.integers(0, 10**6)), st.one_of(st.none(), st.integers(0, 10**6)),
       st.one_of(st.none(), st.integers(0, 10**9)))
def test_go_round_trips(wtime: int | None, btime: int | None, winc: int | None,
                        binc: int | None, movetime: int | None) -> None:
    line = P.format_go(wtime, btime, winc, binc, movetime)
    assert P.parse_referee_line(line) == P.Go(wtime, btime, winc, binc, movetime)


_WORD = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8)


@given(st.lists(_WORD.filter(lambda w: w not in ("name", "value")), min_size=1, max_size=3),
       st.lists(_WORD, min_size=1, max_size=3))
def test_setoption_round_trips_names_and_values_with_spaces(name: list[str], value: list[str]) -> None:
    line = P.format_setoption(" ".join(name), " ".join(value))
    assert P.parse_referee_line(line) == P.SetOption(" ".join(name), " ".join(value))


MALFORMED_REFEREE = [
    "", "   ", "morris", "morris one", "morris 1 2", "newgame", "newgame nmm men9",
    "newgame nmm =9", "isready now", "go wtime", "go wtime x", "go speed 5", "go movetime 1 2",
    "gameover 1-0", "legalmoves", "quit now", "position", "setoption", "setoption Seed 5",
    "frobnicate",
    "bestmove d6",
]


@pytest.mark.parametrize("line", MALFORMED_REFEREE)
def test_malformed_referee_lines_raise_with_the_line(line: str) -> None:
    with pytest.raises(ProtocolError) as info:
        P.parse_referee_line(line + "\r\n")
    assert info.value.line == line.rstrip()


# -- bot -> referee ----------------------------------------------------------------------

OPTION_DECLS = [
    P.OptionDecl("Seed", "spin", "0", 0, 2147483647),
    P.OptionDecl("Depth", "spin", "-3", -10, 10),
    P.OptionDecl("Use Book", "check", "true"),
    P.OptionDecl("Style", "combo", "Normal", vars=("Solid", "Normal", "Very Risky")),
    P.OptionDecl("Book File", "string", "<empty>"),
    P.OptionDecl("Clear Hash", "button"),
]


@pytest.mark.parametrize("decl", OPTION_DECLS, ids=[d.name for d in OPTION_DECLS])
def test_option_declarations_round_trip(decl: P.OptionDecl) -> None:
    assert P.parse_bot_line(P.format_option(decl)) == decl


BOT_CASES: list[tuple[str, P.BotMessage]] = [
    (P.format_id("name", "Alpha Beta 2"), P.Id("name", "Alpha Beta 2")),
    (P.format_id("author", "A. Student"), P.Id("author", "A. Student")),
    (P.format_morrisok(), P.MorrisOk()),
    (P.format_readyok(), P.ReadyOk()),
    (P.format_info("depth 3 score 12"), P.Info("depth 3 score 12")),
    (P.format_info(""), P.Info("")),
    (P.format_bestmove("d6"), P.BestMove("d6")),
    (P.format_bestmove("a1-a4xg7xd1"), P.BestMove("a1-a4xg7xd1")),
]


@pytest.mark.parametrize("line,message", BOT_CASES, ids=[c[0] for c in BOT_CASES])
def test_bot_lines_round_trip(line: str, message: P.BotMessage) -> None:
    assert P.parse_bot_line(line) == message


def test_bestmove_formats_a_move_object() -> None:
    pos = Position("nine-mens-morris")
    move = pos.legal_moves()[5]
    msg = P.parse_bot_line(P.format_bestmove(move))
    assert isinstance(msg, P.BestMove)
    assert pos.parse_move(msg.move) == move


MALFORMED_BOT = [
    "", "hello", "id", "id name", "id colour red", "option", "option name X",
    "option type spin name X", "option name X type weird", "option name X type spin min a",
    "option name X type spin max 1.5", "morrisok now", "readyok 1", "bestmove",
    "bestmove d6 d7", "Bestmove d6", "position x", "quit",
]


@pytest.mark.parametrize("line", MALFORMED_BOT)
def test_malformed_bot_lines_raise_with_the_line(line: str) -> None:
    with pytest.raises(ProtocolError) as info:
        P.parse_bot_line(line)
    assert info.value.line == line


# -- line endings --------------------------------------------------------------------------

@pytest.mark.parametrize("ending", ["\n", "\r\n", "  \r\n", "\t\n", " "])
def test_crlf_and_trailing_spaces_are_tolerated(ending: str) -> None:
    assert P.parse_bot_line("bestmove a1-a4xg7" + ending) == P.BestMove("a1-a4xg7")
    assert P.parse_bot_line("morrisok" + ending) == P.MorrisOk()
    assert P.parse_bot_line(P.format_option(OPTION_DECLS[3]) + ending) == OPTION_DECLS[3]
    assert P.parse_referee_line("go movetime 50" + ending) == P.Go(movetime=50)
    assert P.parse_referee_line("setoption name Seed value 3" + ending) == P.SetOption("Seed", "3")
    assert P.parse_referee_line("quit" + ending) == P.Quit()
