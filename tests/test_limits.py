"""Node, depth and moves-per-period limits (issue 27, *Limits*): ``time: {nodes: N}`` reaches
the bot as ``go nodes N`` (capped in time by the referee, which cannot count nodes), a
``40/60+0.6`` clock refills after its period and says ``movestogo``, cutechess's ``tc``
strings, and all of it recorded, exported and shown."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena import protocol as P
from arena.bot import load_bot
from arena.botkit import Clock, compute_budget
from arena.cli import cli
from arena.clock import GameClock, TimeControl, pgn_time_control
from arena.config import parse_config
from arena.errors import ConfigError
from arena.referee import play_game
from arena.sandbox import Isolation

ROOT = Path(__file__).resolve().parent.parent

#: a bot without the kit: it writes every ``go`` line it receives to the file named by its
#: first argument (and to stderr), and plays the first move of the referee's legalmoves
ECHO_BOT = '''\
import sys
log = open(sys.argv[1], "a", encoding="utf-8") if len(sys.argv) > 1 else None
legal = []
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "morris":
        print("id name echo-go")
        print("option name Seed type spin default 0 min 0 max 2147483647")
        print("morrisok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "legalmoves":
        legal = words[1:]
    elif words[0] == "go":
        sys.stderr.write(line)
        sys.stderr.flush()
        if log is not None:
            log.write(line)
            log.flush()
        print("bestmove " + legal[0], flush=True)
    elif words[0] == "quit":
        break
'''


def echo_bot(folder: Path, log: Path | None = None) -> Path:
    """A bot folder holding :data:`ECHO_BOT` (logging its go lines to ``log``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "echo.py").write_text(ECHO_BOT, encoding="utf-8")
    command = ["{python}", "echo.py"] + ([str(log)] if log is not None else [])
    (folder / "bot.yaml").write_text(f"name: echo-go\ncommand: {command!r}\n"
                                     "legal_moves: true\n", encoding="utf-8")
    return folder


# -- the go line ----------------------------------------------------------------------------

def test_go_carries_nodes_depth_and_movestogo_both_ways() -> None:
    assert P.format_go(nodes=1000) == "go nodes 1000"
    assert P.format_go(depth=6) == "go depth 6"
    assert P.Go(movetime=500, nodes=1000).line() == "go movetime 500 nodes 1000"
    line = P.Go(wtime=1, btime=2, winc=3, binc=4, movetime=5, movestogo=6, nodes=7,
                depth=8).line()
    assert line == "go wtime 1 btime 2 winc 3 binc 4 movestogo 6 movetime 5 nodes 7 depth 8"
    assert P.parse_referee_line(line) == P.Go(1, 2, 3, 4, 5, movestogo=6, nodes=7, depth=8)
    assert P.parse_referee_line("go depth 3 nodes 99") == P.Go(nodes=99, depth=3)


def test_a_nodes_or_depth_move_is_capped_in_time_and_says_so() -> None:
    tc = TimeControl(movetime_ms=None, nodes=1000)
    clock = GameClock(tc)
    assert clock.go() == P.Go(nodes=1000)           # no time sent: the bot searches its nodes
    assert clock.allowed_ms(0) == P.LIMIT_CAP_MS     # ... but the referee still ends it
    assert tc.describe() == f"1000 nodes/move (capped at {P.LIMIT_CAP_MS} ms/move)"
    capped = TimeControl(movetime_ms=300, depth=4)   # a movetime given: sent, and the cap
    assert GameClock(capped).go().line() == "go movetime 300 depth 4"
    assert GameClock(capped).allowed_ms(1) == 300
    assert capped.describe() == "300 ms/move, depth 4/move"
    assert tc.to_dict()["nodes"] == 1000 and "depth" not in tc.to_dict()
    # the time controls of before keep their form (and so a results folder's hash)
    assert set(TimeControl(movetime_ms=200).to_dict()) == {
        "movetime_ms", "base_ms", "increment_ms", "handshake_ms", "margin_ms"}
    assert TimeControl.from_dict(tc.to_dict()) == tc
    with pytest.raises(ConfigError, match="nodes, or depth|nodes or depth"):
        TimeControl(movetime_ms=None)
    with pytest.raises(ConfigError, match="nodes"):
        TimeControl(movetime_ms=None, nodes=0)


# -- cutechess's tc strings -----------------------------------------------------------------

@pytest.mark.parametrize("text, period, base, inc", [
    ("40/60+0.6", 40, 60_000, 600),
    ("40/60", 40, 60_000, 0),
    ("60+0.6", None, 60_000, 600),
    ("1:30+1", None, 90_000, 1000),
    ("1:30", None, 90_000, 0),
    ("20/1:00.5", 20, 60_500, 0),
    (" 4 / 1 + 0.1 ", 4, 1000, 100),
])
def test_cutechess_tc_strings(text: str, period: int | None, base: int, inc: int) -> None:
    tc = TimeControl.parse(text)
    assert (tc.period_moves, tc.base_ms, tc.increment_ms, tc.movetime_ms) == (
        period, base, inc, None)


@pytest.mark.parametrize("text, message", [
    ("inf", "no time limit is not accepted"),
    ("0/60+1", "period_moves: expected moves per period of 1..10000, got 0"),
    ("40/0+1", "base_ms"),
    ("40/", "not a time control"),
    ("0.5", "not a time control"),       # bare numbers are ms per move: no decimals
])
def test_bad_tc_strings_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        TimeControl.parse(text)


def test_a_period_clock_is_described_recorded_and_exported() -> None:
    tc = TimeControl.parse("40/60+0.6")
    assert tc.describe() == "40/60+0.6 s (40 moves per period)"
    assert tc.to_dict()["period_moves"] == 40
    assert pgn_time_control(tc.to_dict()) == "40/60+0.6"
    assert pgn_time_control(TimeControl.parse("40/60").to_dict()) == "40/60"
    assert pgn_time_control(TimeControl.parse("60+1").to_dict()) == "60+1"
    assert pgn_time_control(TimeControl(movetime_ms=200).to_dict()) == "0.2/move"
    assert pgn_time_control(TimeControl(movetime_ms=None, depth=5).to_dict()) == "depth=5"
    assert pgn_time_control({}) == "?"


def test_the_period_clock_refills_and_counts_down_movestogo() -> None:
    clock = GameClock(TimeControl.parse("3/1+0.1", margin_ms=0))
    assert clock.allowed_ms(0) == 1000 and clock.go().movestogo == 3
    spent = [400.0, 300.0, 200.0]
    for k, ms in enumerate(spent):
        clock.allowed_ms(0)
        assert clock.go().movestogo == 3 - k
        assert clock.charge(0, ms)
        clock.allowed_ms(1)
        assert clock.go().movestogo == 3 - k  # black's own count
        assert clock.charge(1, 10.0)
    # white: 1000 - 900 + 3 x 100, then the period's 1000 again after its third move
    assert clock.remaining is not None
    assert clock.remaining[0] == pytest.approx(1000 - 900 + 300 + 1000)
    assert clock.remaining[1] == pytest.approx(1000 - 30 + 300 + 1000)
    assert clock.go(0).movestogo == 3 and clock.go(1).movestogo == 3
    # a move over the time left is lost, refill or not
    assert not clock.charge(0, 1500.0)


def test_the_kit_reads_the_limits() -> None:
    go = P.parse_referee_line("go nodes 5000 depth 7")
    assert isinstance(go, P.Go)
    clock = Clock(go, 0.0, compute_budget(go, True))
    assert (clock.nodes, clock.depth, clock.movestogo) == (5000, 7, None)
    # without a time the budget is the referee's cap, less the kit's reserve
    assert clock.budget_s == pytest.approx((P.LIMIT_CAP_MS - 50) / 1000)
    # movestogo: the time left shared over the moves to the refill (at most half of it)
    assert compute_budget(P.Go(wtime=10_000, btime=1, movestogo=10), True) == pytest.approx(1.0)
    assert compute_budget(P.Go(wtime=10_000, btime=1), True) == pytest.approx(0.4)
    assert compute_budget(P.Go(wtime=10_000, btime=1, movestogo=1), True) == pytest.approx(
        (5000 - 50) / 1000)


# -- tournament files and the command line ----------------------------------------------------

def _time(value: object, workdir: Path) -> TimeControl:
    bot = echo_bot(workdir / "echo")
    return parse_config({"name": "t", "bots": [str(bot), {"path": str(bot), "name": "b"}],
                         "time": value, "workers": 1}).time_control


def test_tournament_time_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    tc = _time({"nodes": 1000, "charge": "wall"}, tmp_path)
    assert (tc.nodes, tc.movetime_ms, tc.base_ms) == (1000, None, None)
    tc = _time({"depth": 3, "movetime": 500, "charge": "wall"}, tmp_path)
    assert (tc.depth, tc.movetime_ms) == (3, 500)
    tc = _time({"clock": "40/60+0.6", "nodes": 10}, tmp_path)
    assert (tc.period_moves, tc.base_ms, tc.increment_ms, tc.nodes) == (40, 60_000, 600, 10)
    assert _time("40/60+0.6", tmp_path).period_moves == 40
    for value, where in (({"nodes": 0}, "time.nodes"), ({"depth": "deep"}, "time.depth"),
                         ({"clock": "0/60"}, "time.clock"), ({"clock": "inf"}, "time.clock"),
                         ({"handshake": 100}, "time")):
        with pytest.raises(ConfigError, match=re.escape(where)):
            _time(value, tmp_path)


def test_arena_play_options(tmp_path: Path) -> None:
    bot = str(echo_bot(tmp_path / "echo"))
    runner = CliRunner()
    res = runner.invoke(cli, ["play", bot, bot, "--quiet", "--nodes", "1000", "--depth", "2",
                              "--variant", "three-mens-morris", "--isolation", "none",
                              "--charge", "wall", "--handshake", "60000"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0].endswith(
        f"1000 nodes/move, depth 2/move (capped at {P.LIMIT_CAP_MS} ms/move)")
    res = runner.invoke(cli, ["play", bot, bot, "--clock", "inf"])
    assert res.exit_code == 2 and "no time limit is not accepted" in res.output
    res = runner.invoke(cli, ["play", bot, bot, "--clock", "forty"])
    assert res.exit_code == 2 and "MOVES/BASE+INC" in res.output
    res = runner.invoke(cli, ["play", bot, bot, "--nodes", "0"])
    assert res.exit_code == 2 and "--nodes" in res.output


# -- real games -------------------------------------------------------------------------------

NONE = Isolation.parse("none", "isolation")


def _go_lines(log: Path) -> list[P.Go]:
    lines = [P.parse_referee_line(line) for line in log.read_text().splitlines()]
    assert all(isinstance(go, P.Go) for go in lines)
    return lines  # type: ignore[return-value]


def test_nodes_reach_the_bot_as_go_nodes(tmp_path: Path) -> None:
    spec = load_bot(echo_bot(tmp_path / "echo"))
    tc = TimeControl(movetime_ms=None, nodes=1000, margin_ms=500, handshake_ms=60_000)
    record = play_game(spec, spec, "three-mens-morris", tc, seed=1, isolation=NONE)
    assert record.termination not in ("timeout", "crash", "protocol-error"), record.detail
    assert record.time_control["nodes"] == 1000 and record.time_control["movetime_ms"] is None
    stderr = record.stderr["white"].splitlines()
    assert stderr and set(stderr) == {"go nodes 1000"}


def test_a_moves_per_period_clock_in_a_real_game(tmp_path: Path) -> None:
    """4/10+0.1 (cutechess's 40/60+0.6 with shorter periods): each bot's clock gets 10 s
    again after every 4th move, the increment after each, and the go lines say so."""
    logs = tmp_path / "white.log", tmp_path / "black.log"
    white = load_bot(echo_bot(tmp_path / "w", logs[0]))
    black = load_bot(echo_bot(tmp_path / "b", logs[1]))
    tc = TimeControl.parse("4/10+0.1", margin_ms=500, clock="wall", handshake_ms=60_000)
    record = play_game(white, black, "nine-mens-morris", tc, seed=1, isolation=NONE)
    assert record.termination not in ("timeout", "crash", "protocol-error"), record.detail
    assert record.time_control["period_moves"] == 4
    moves = [m for m in record.moves if not m.opening]
    for color, log in enumerate(logs):
        gos = _go_lines(log)
        mine = moves[color::2]
        assert len(gos) == len(mine) >= 9  # past two refills
        left = 10_000.0
        for k, (go, move) in enumerate(zip(gos, mine)):
            assert go.movestogo == 4 - k % 4
            assert go.winc == go.binc == 100 and go.movetime is None
            sent = go.wtime if color == 0 else go.btime
            # the referee's clock, as the record's times (rounded to µs) charge it
            assert abs(sent - int(left)) <= 1, (sent, left)
            left = max(0.0, left - move.wall_ms) + 100 + (10_000 if (k + 1) % 4 == 0 else 0)
        assert int(left) > 10_000  # refilled: never run down to the bare increments


def test_a_tournament_with_time_nodes_sends_go_nodes(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's check, end to end: ``time: {nodes: 1000}`` in a tournament file reaches
    the bot as ``go nodes 1000``; the records, the PGN and the log say so."""
    import io

    from arena.config import load_config
    from arena.export import time_control
    from arena.records import read_records
    from arena.tournament import run_tournament

    monkeypatch.chdir(tmp_path)
    echo_bot(tmp_path / "echo")
    (tmp_path / "t.yaml").write_text(
        "name: nodes\nbots: [echo, {path: echo, name: echo-2}]\n"
        "variants: [three-mens-morris]\ngames_per_pairing: 2\nworkers: 1\nreport: false\n"
        "time: {nodes: 1000, charge: wall, handshake: 60000}\n", encoding="utf-8")
    config = load_config(tmp_path / "t.yaml")
    assert config.time_control.describe().startswith("1000 nodes/move (capped at")
    console = io.StringIO()
    assert run_tournament(config, console=console).complete
    records = read_records(tmp_path / "results" / "nodes" / "games.jsonl")
    assert len(records) == 2
    for r in records:
        assert r.forfeit is None, r.detail
        assert r.time_control["nodes"] == 1000 and time_control(r.time_control) == "nodes=1000"
        for side in ("white", "black"):
            assert set(r.stderr[side].splitlines()) == {"go nodes 1000"}
    log = (tmp_path / "results" / "nodes" / "arena.log").read_text()
    assert "time control: 1000 nodes/move (capped at 10000 ms/move)" in log


def test_alphabeta_keeps_go_depth(tmp_path: Path) -> None:
    """The example bot searches exactly the depth it is sent (its info says so)."""
    spec = load_bot(ROOT / "bots" / "alphabeta")
    tc = TimeControl(movetime_ms=None, depth=2, margin_ms=500, handshake_ms=60_000)
    record = play_game(spec, spec, "three-mens-morris", tc, seed=3, isolation=NONE)
    depths = {m.info.get("depth") for m in record.moves if m.info and not m.opening}
    assert depths and depths <= {0, 1, 2} and 2 in depths, depths


if __name__ == "__main__":  # pragma: no cover
    sys.exit(__import__("pytest").main([__file__, "-q"]))
