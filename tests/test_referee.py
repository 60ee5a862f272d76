"""The referee: clocks (pure), real games between real bot processes, and misbehaving bots
that must lose with the right termination and leave no process behind."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable

import pytest

from arena.bot import STDERR_CAP, BotSpec
from arena.clock import GameClock, TimeControl
from arena.errors import ConfigError
from arena.hints import LEGAL_MOVES_HINT
from arena.records import GameRecord, MoveInfo
from arena.referee import BotPlayer, HumanPlayer, play_game
from arena.rules import Position, Termination, explain_illegal, suggest_moves
from arena.variants import get_variant
from tests.conftest import read_pids, test_bot

pytestmark = pytest.mark.usefixtures("no_leftover_children")

RULES_ENDINGS = {t.value for t in Termination if not t.is_forfeit}


# --------------------------------------------------------------------------------------
# Time controls and clocks (pure)
# --------------------------------------------------------------------------------------


def test_time_control_parse() -> None:
    assert TimeControl.parse("250").movetime_ms == 250
    assert TimeControl.parse("250").base_ms is None
    tc = TimeControl.parse("60+1", handshake_ms=700, margin_ms=20)
    assert (tc.movetime_ms, tc.base_ms, tc.increment_ms, tc.handshake_ms, tc.margin_ms) == (
        None, 60000, 1000, 700, 20)
    assert TimeControl.parse("0.5+0.05").base_ms == 500
    assert TimeControl.parse("0.5+0.05").increment_ms == 50
    assert tc.describe() == "60+1 s"


@pytest.mark.parametrize("text", ["", "fast", "1+", "+1", "-5", "1.5", "60+1+1"])
def test_time_control_rejects(text: str) -> None:
    with pytest.raises(ConfigError, match="not a time control"):
        TimeControl.parse(text)


def test_time_control_needs_a_limit() -> None:
    with pytest.raises(ConfigError):
        TimeControl(movetime_ms=None)
    with pytest.raises(ConfigError, match="movetime_ms"):
        TimeControl(movetime_ms=0)


def test_clock_charges_and_adds_increment() -> None:
    clock = GameClock(TimeControl(movetime_ms=None, base_ms=1000, increment_ms=100, margin_ms=50))
    assert clock.allowed_ms(0) == 1000
    assert clock.deadline_ms(0) == 1050
    assert clock.charge(0, 300)
    assert clock.remaining == [800, 1000]
    go = clock.go()
    assert (go.wtime, go.btime, go.winc, go.binc, go.movetime) == (800, 1000, 100, 100, None)
    assert clock.charge(1, 1040)  # within the margin: clock emptied, not lost
    assert clock.remaining == [800, 100]
    assert not clock.charge(1, 151)  # 100 left + 50 margin


def test_clock_with_movetime_only() -> None:
    clock = GameClock(TimeControl(movetime_ms=200, margin_ms=10))
    assert clock.go().movetime == 200 and clock.go().wtime is None
    assert clock.deadline_ms(1) == 210
    assert clock.charge(1, 209)
    assert not clock.charge(1, 211)


def test_clock_with_both_limits_takes_the_smaller() -> None:
    clock = GameClock(TimeControl(movetime_ms=500, base_ms=300, margin_ms=0))
    assert clock.allowed_ms(0) == 300
    clock.charge(0, 100)
    assert clock.allowed_ms(0) == 200 and clock.allowed_ms(1) == 300


# --------------------------------------------------------------------------------------
# Real games between real bots
# --------------------------------------------------------------------------------------


def replay(record: GameRecord) -> Position:
    """The record's moves replayed from the variant's start (each must be legal)."""
    pos = Position(get_variant(record.variant))
    for info in record.moves:
        pos.push(pos.parse_move(info.move))
    return pos


def check_rules_ending(record: GameRecord) -> None:
    """A game that ended by the rules: its record agrees with a replay of its moves."""
    assert record.forfeit is None and record.offending_line is None
    assert record.termination in RULES_ENDINGS, record.detail
    pos = replay(record)
    outcome = pos.outcome()
    assert outcome is not None
    assert (outcome.result, outcome.termination.value) == (record.result, record.termination)
    assert pos.to_text() == record.final_position


@pytest.mark.parametrize("variant", ["nine-mens-morris", "twelve-mens-morris", "lasker-morris",
                                     "six-mens-morris", "three-mens-morris",
                                     "nine-mens-morris-options"])
def test_real_game_on_preset(variant: str, random_bot: BotSpec, fast_tc: TimeControl) -> None:
    record = play_game(random_bot, test_bot("good"), get_variant(variant), fast_tc, seed=11,
                       game_id="g1")
    check_rules_ending(record)
    assert record.game_id == "g1" and record.variant == variant
    assert record.variant_params == get_variant(variant).to_dict()
    assert record.white.name == "random" and record.black.name == "good"
    assert record.white.options == {"Seed": "11"} and record.black.options == {"Seed": "11"}
    assert record.seed == 11 and record.host
    assert record.started < record.finished
    assert record.time_control == fast_tc.to_dict()
    assert all(0 < m.wall_ms < 2200 and not m.opening for m in record.moves)
    again = GameRecord.from_dict(json.loads(record.to_json()))
    assert again.to_dict() == record.to_dict()


def test_same_seed_same_game(random_bot: BotSpec, fast_tc: TimeControl) -> None:
    games = [play_game(random_bot, random_bot, "nine-mens-morris", fast_tc, seed=s)
             for s in (5, 5, 6)]
    moves = [[m.move for m in g.moves] for g in games]
    assert moves[0] == moves[1]
    assert moves[0] != moves[2]


def test_seed_is_chosen_and_recorded(random_bot: BotSpec, fast_tc: TimeControl) -> None:
    record = play_game(random_bot, random_bot, "three-mens-morris", fast_tc)
    assert isinstance(record.seed, int)
    assert record.white.options == {"Seed": str(record.seed)}


def test_user_seed_option_is_not_overridden(fast_tc: TimeControl, random_bot: BotSpec) -> None:
    from dataclasses import replace

    mine = replace(random_bot, options={"seed": "42"})
    record = play_game(mine, random_bot, "three-mens-morris", fast_tc, seed=1)
    assert record.white.options == {"seed": "42"}
    assert record.black.options == {"Seed": "1"}


def test_clock_game(random_bot: BotSpec) -> None:
    tc = TimeControl.parse("5+0.1", margin_ms=200)
    record = play_game(random_bot, random_bot, "nine-mens-morris", tc, seed=3)
    check_rules_ending(record)
    assert record.time_control["base_ms"] == 5000
    assert record.time_control["increment_ms"] == 100


def test_opening_is_played_by_the_referee(random_bot: BotSpec, fast_tc: TimeControl) -> None:
    seen: list[tuple[str, MoveInfo]] = []
    record = play_game(random_bot, random_bot, "nine-mens-morris", fast_tc, seed=2,
                       opening=["d6", "D2"], on_move=lambda pos, info: seen.append(
                           (pos.to_text(), info)))
    check_rules_ending(record)
    assert record.opening == ["d6", "d2"]
    assert [(m.move, m.opening) for m in record.moves[:3]] == [
        ("d6", True), ("d2", True), (record.moves[2].move, False)]
    assert len(seen) == len(record.moves)
    assert [info for _, info in seen] == record.moves
    assert seen[-1][0] == record.final_position
    # each move is reported (after the next request is written) with the position it made
    replay = Position(get_variant("nine-mens-morris"))
    for text, info in seen:
        replay.push_text(info.move)
        assert text == replay.to_text()
    assert all(m.cpu_ms is not None for m in record.moves[2:])


def test_illegal_opening_is_a_config_error(random_bot: BotSpec, fast_tc: TimeControl) -> None:
    with pytest.raises(ConfigError, match="opening move 2"):
        play_game(random_bot, random_bot, "nine-mens-morris", fast_tc, opening=["d6", "d6"])


def test_game_over_after_the_opening(random_bot: BotSpec, fast_tc: TimeControl) -> None:
    # three men's morris: white completes the bottom row before any bot moves
    record = play_game(random_bot, random_bot, "three-mens-morris", fast_tc,
                       opening=["a1", "a4", "d1", "d4", "g1"])
    assert (record.result, record.termination) == ("1-0", "mill")
    assert all(m.opening for m in record.moves)


def test_human_player_against_a_bot(random_bot: BotSpec, fast_tc: TimeControl) -> None:
    typed = iter(["", "zz", "d6", "d6"])
    shown: list[str] = []

    def read(prompt: str) -> str:
        shown.append(prompt)
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    human = HumanPlayer("me", read=read, write=shown.append)
    record = play_game(human, random_bot, "nine-mens-morris", fast_tc, seed=1)
    assert record.moves[0].move == "d6"
    assert any("legal moves: a1 a4" in s for s in shown)
    assert any(s.startswith("illegal move d6: d6 is occupied\nlegal moves: ") for s in shown)
    assert (record.result, record.termination, record.forfeit) == ("0-1", "crash", "white")
    assert "end of input" in record.detail
    assert record.white.name == "me" and record.white.bot == "human"


# --------------------------------------------------------------------------------------
# The legalmoves line (opt-in: legal_moves: true in bot.yaml)
# --------------------------------------------------------------------------------------


def _echoes(player: BotPlayer) -> list[tuple[str, str, str]]:
    """(position text, the legalmoves line sent or "", what the bot echoed) per move."""
    out, position, sent = [], "", ""
    for direction, line in player.process.transcript:
        if direction == "<<" and line.startswith("position "):
            position, sent = line.split(" moves")[0][len("position "):], ""
        elif direction == "<<" and line.startswith("legalmoves"):
            sent = line
        elif direction == ">>" and line.startswith("info "):
            out.append((position, sent, line[len("info "):]))
    return out


@pytest.mark.parametrize("variant", ["nine-mens-morris", "lasker-morris"])
def test_a_bot_that_asks_receives_every_legal_move(variant: str, random_bot: BotSpec,
                                                  fast_tc: TimeControl) -> None:
    echo = BotPlayer(test_bot("legal-echo"))
    assert echo.spec.legal_moves
    record = play_game(echo, random_bot, variant, fast_tc, seed=3)
    check_rules_ending(record)
    echoes = _echoes(echo)
    assert len(echoes) >= 10
    captures = 0
    for position, sent, echoed in echoes:
        legal = [str(m) for m in Position.from_text(variant, position).legal_moves()]
        assert echoed == sent == "legalmoves " + " ".join(legal)
        captures += any("x" in m for m in legal)
    assert captures, "some turn offered a capture"


def test_a_bot_that_does_not_ask_receives_no_legal_moves(random_bot: BotSpec,
                                                         fast_tc: TimeControl) -> None:
    spec = dataclasses.replace(test_bot("legal-echo"), legal_moves=False)
    echo = BotPlayer(spec)
    record = play_game(random_bot, echo, "nine-mens-morris", fast_tc, seed=3)
    check_rules_ending(record)
    echoes = _echoes(echo)
    assert echoes and all(e == "no legalmoves" and not sent for _, sent, e in echoes)
    assert not any(line.startswith("legalmoves") for _, line in echo.process.transcript)


# --------------------------------------------------------------------------------------
# Misbehaving bots
# --------------------------------------------------------------------------------------

# the random opponent and the bots' first moves are fast even on a loaded machine; the sleepy
# bot times out after 200 + 400 ms
SHORT = TimeControl(movetime_ms=200, handshake_ms=3000, margin_ms=400)
FORFEITS = [
    # bot, termination, words in the detail, words in the offending line (None: no line)
    ("sleepy", "timeout", "no bestmove within 600 ms", None),
    ("crash", "crash", "exited with code 1 (stderr: RuntimeError", None),
    ("exit-at-start", "start-failure", "exited during the handshake: exited with code 3", None),
    ("missing-command", "start-failure", "cannot run './no-such-program --flag'", None),
    ("bad-handshake", "start-failure", "bad handshake", "hello referee"),
    ("illegal", "illegal-move", "illegal move a1xg7", "a1xg7"),
    ("malformed", "illegal-move", "not a move: 'z9'", "z9"),
    ("garbage", "protocol-error", "unexpected line", "I think"),
    ("twice", "protocol-error", "a second reply", "bestmove"),
    ("huge-line", "protocol-error", "a line longer than 65536 bytes", "bestmove xxxx"),
]


BOTH_COLOURS = ("sleepy", "crash", "twice", "exit-at-start")
CASES = [(color, *case) for case in FORFEITS for color in ("white", "black")
         if color == "white" or case[0] in BOTH_COLOURS]


@pytest.mark.parametrize("color,bot,termination,detail,line", CASES,
                         ids=[f"{c[1]}-{c[0]}" for c in CASES])
def test_misbehaving_bot_forfeits(color: str, bot: str, termination: str, detail: str,
                                  line: str | None, random_bot: BotSpec, pidfile: Path,
                                  assert_all_gone: Callable[[list[int]], None]) -> None:
    bad = test_bot(bot)
    white, black = (bad, random_bot) if color == "white" else (random_bot, bad)
    record = play_game(white, black, "nine-mens-morris", SHORT, seed=4, quit_grace_s=0.2,
                       term_grace_s=0.2)
    assert record.termination == termination
    assert record.forfeit == color
    assert record.result == ("0-1" if color == "white" else "1-0")
    assert f"{color} ({bad.name})" in record.detail and detail in record.detail, record.detail
    if line is None:
        assert record.offending_line is None
    else:
        assert record.offending_line is not None and line in record.offending_line
        assert len(record.offending_line) <= 300
    if termination not in ("start-failure",):
        assert record.moves, "the bot played legally before misbehaving"
    assert_all_gone(read_pids(pidfile))


def test_an_illegal_move_verdict_says_why(random_bot: BotSpec) -> None:
    record = play_game(test_bot("illegal"), random_bot, "nine-mens-morris", SHORT, seed=4,
                       quit_grace_s=0.2, term_grace_s=0.2)
    assert (record.termination, record.offending_line) == ("illegal-move", "a1xg7")
    reason = explain_illegal(replay(record), "a1xg7")
    suggestions = suggest_moves(replay(record), "a1xg7")
    close = (f" (did you mean {' or '.join(map(str, suggestions))}?)" if suggestions else "")
    assert reason and record.detail == (f"white ({record.white.name}) played an illegal move: "
                                        f"illegal move a1xg7: {reason}{close}; {LEGAL_MOVES_HINT}")


def test_handshake_timeout(random_bot: BotSpec, pidfile: Path,
                           assert_all_gone: Callable[[list[int]], None]) -> None:
    tc = TimeControl(movetime_ms=1000, handshake_ms=800, margin_ms=50)
    record = play_game(test_bot("silent-start"), random_bot, "nine-mens-morris", tc,
                       quit_grace_s=0.1, term_grace_s=0.1)
    assert (record.result, record.termination, record.forfeit) == ("0-1", "start-failure", "white")
    assert "handshake timeout: no 'morrisok' within 800 ms" in record.detail
    assert record.detail.endswith(
        "of the start; no output at all: does the bot flush stdout after each line? "
        "(print(..., flush=True), fflush(stdout), System.out.flush())"), record.detail
    assert not record.moves
    assert_all_gone(read_pids(pidfile))


def test_handshake_timeout_with_a_line_left_without_its_newline(
        random_bot: BotSpec, pidfile: Path, assert_all_gone: Callable[[list[int]], None]) -> None:
    tc = TimeControl(movetime_ms=1000, handshake_ms=800, margin_ms=50)
    record = play_game(random_bot, test_bot("no-newline"), "nine-mens-morris", tc,
                       quit_grace_s=0.1, term_grace_s=0.1)
    assert (record.result, record.termination, record.forfeit) == ("1-0", "start-failure", "black")
    assert record.detail.endswith(
        "handshake timeout: no 'morrisok' within 800 ms of the start; received 'morrisok' "
        "without a newline: does the bot end each line with \\n and flush stdout after it?"
    ), record.detail
    assert_all_gone(read_pids(pidfile))


@pytest.mark.parametrize("bot,expected_pids", [("fork-child", 2), ("setsid-grandchild", 3),
                                               ("ignore-term", 1)])
def test_leftover_processes_are_killed(bot: str, expected_pids: int, random_bot: BotSpec,
                                       fast_tc: TimeControl, pidfile: Path,
                                       assert_all_gone: Callable[[list[int]], None]) -> None:
    record = play_game(test_bot(bot), random_bot, "nine-mens-morris", fast_tc, seed=8,
                       quit_grace_s=0.2, term_grace_s=0.2)
    check_rules_ending(record)
    pids = read_pids(pidfile)
    assert len(pids) == expected_pids
    assert_all_gone(pids)


def test_stderr_flood_never_blocks(random_bot: BotSpec, fast_tc: TimeControl, pidfile: Path,
                                   assert_all_gone: Callable[[list[int]], None]) -> None:
    record = play_game(random_bot, test_bot("stderr-flood"), "nine-mens-morris", fast_tc, seed=9)
    check_rules_ending(record)
    assert len(record.moves) > 10
    tail = record.stderr["black"]
    assert 0 < len(tail.encode()) <= STDERR_CAP and "flood" in tail
    assert "white" not in record.stderr
    assert_all_gone(read_pids(pidfile))


@pytest.mark.parametrize("level", ["basic", "bwrap"])
def test_game_in_a_sandbox(level: str, random_bot: BotSpec, fast_tc: TimeControl) -> None:
    from arena.sandbox import Isolation, Level, available_levels, bwrap_status

    if Level(level) not in available_levels():
        why = bwrap_status().detail if level == "bwrap" else "see `arena doctor`"
        pytest.skip(f"isolation level {level} is not available here: {why}")
    isolation = Isolation.parse(level)
    record = play_game(random_bot, random_bot, "six-mens-morris", fast_tc, seed=5,
                       isolation=isolation)
    check_rules_ending(record)
    with isolation.sandbox(random_bot.path) as probe:
        exact_cpu = probe.exact_cpu
    if exact_cpu:
        assert all(m.cpu_ms is not None and m.cpu_ms >= 0 for m in record.moves)
        assert sum(m.cpu_ms or 0 for m in record.moves) > 0
