"""``arena play`` and ``arena check`` through click's CliRunner, with real bot processes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.records import GameRecord
from tests.conftest import EXAMPLE_BOTS, TEST_BOTS

pytestmark = pytest.mark.usefixtures("no_leftover_children")

RANDOM = str(EXAMPLE_BOTS / "random")


def run(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.mark.parametrize("command", ["play", "check"])
def test_help(command: str) -> None:
    code, out = run(command, "--help")
    assert code == 0 and "--movetime" in out and "--clock" in out


def test_play_two_bots_and_save_the_record(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    code, out = run("play", RANDOM, RANDOM, "--variant", "6mm", "--movetime", "500", "--seed", "4",
                    "--option-a", "Seed=9", "--record", str(path))
    assert code == 0, out
    assert out.startswith("random (white) vs random (black): six-mens-morris, 500 ms/move")
    assert "white to move; in hand W 6 B 6" in out  # the board is shown
    record = GameRecord.from_dict(json.loads(path.read_text()))
    assert f"result: {record.result} ({record.termination}): {record.detail}" in out
    assert f"{record.plies}. " in out
    assert record.variant == "six-mens-morris" and record.seed == 4
    assert record.white.options == {"Seed": "9"} and record.black.options == {"Seed": "4"}
    assert record.time_control["movetime_ms"] == 500
    # an id of its own (it was ""): records of several plays gathered in one games.jsonl
    # stay apart
    assert record.game_id.startswith("play/six-mens-morris/")
    again = tmp_path / "again.json"
    code, out = run("play", RANDOM, RANDOM, "--variant", "6mm", "--movetime", "500",
                    "--seed", "4", "--quiet", "--record", str(again))
    assert code == 0, out
    assert GameRecord.from_dict(json.loads(again.read_text())).game_id not in ("",
                                                                              record.game_id)


def test_play_quiet_with_a_clock_and_an_opening() -> None:
    code, out = run("play", RANDOM, "random", "--quiet", "--clock", "3+0.1", "--opening", "d6 d2",
                    "--variant", "nine-mens-morris")
    assert code == 0, out
    assert "3+0.1 s" in out and "1. white d6 (opening)" in out and "2. black d2 (opening)" in out
    assert "in hand" not in out and "result: " in out


def test_play_reports_a_forfeit_with_the_offending_line() -> None:
    code, out = run("play", str(TEST_BOTS / "garbage"), RANDOM, "--quiet", "--margin", "400")
    assert code == 0
    assert "result: 0-1 (protocol-error): white (garbage) broke the protocol" in out
    assert "offending line: 'I think" in out


def test_play_as_a_human() -> None:
    code, out = run("play", "human", RANDOM, "--quiet", "--seed", "1", input="zz\nd6\n")
    assert code == 0, out
    assert "not a move: 'zz'" in out and "legal moves: a1 a4 a7" in out
    assert "1. white d6" in out
    assert "result: 0-1 (crash): white (human) crashed: the human player left" in out


@pytest.mark.parametrize("args,message", [
    (["play", "no/such/bot", RANDOM], "Error: bot folder not found: no/such/bot"),
    (["play", RANDOM, str(TEST_BOTS)], "Error: no bot.yaml in bot folder"),
    (["play", RANDOM, RANDOM, "--clock", "sixty"], "--clock expects BASE+INC"),
    (["play", RANDOM, RANDOM, "--option-a", "Depth"], "--option-a expects NAME=VALUE"),
    (["play", "human", RANDOM, "--option-a", "A=1"], "a human player takes no options"),
    (["play", RANDOM, RANDOM, "--variant", "chess"], "unknown variant 'chess'"),
    (["play", RANDOM, RANDOM, "--opening", "d6 d6"], "opening move 2"),
    (["check", "no/such/bot"], "Error: bot folder not found"),
])
def test_bad_input_is_a_one_line_error(args: list[str], message: str) -> None:
    code, out = run(*args)
    assert code == 2 and message in out, out
    assert len([line for line in out.splitlines() if line.startswith("Error")]) == 1


def test_check_passes_the_random_bot() -> None:
    code, out = run("check", RANDOM, "--games", "2")
    assert code == 0, out
    assert "handshake: " in out and "id name random" in out and "option name Seed type spin" in out
    for variant in ("nine-mens-morris", "twelve-mens-morris", "six-mens-morris"):
        assert f"game {variant}-1:" in out and f"game {variant}-2:" in out
    assert out.rstrip().splitlines()[-1].startswith("PASS")


@pytest.mark.parametrize("bot,kind,line", [
    ("sleepy", "timeout: nine-mens-morris game 1 as white, move 5", None),
    ("crash", "crash: nine-mens-morris game 1 as white", None),
    ("exit-at-start", "failed to start: exited during the handshake", None),
    ("bad-handshake", "failed to start: bad handshake", "'hello referee'"),
    ("silent-start", "slow start: handshake timeout", None),
    ("illegal", "illegal move: nine-mens-morris game 1", "'a1xg7'"),
    ("garbage", "protocol error: nine-mens-morris game 1", "'I think"),
    ("twice", "protocol error: nine-mens-morris game 1", "'bestmove "),
    ("huge-line", "protocol error: nine-mens-morris game 1", "'bestmove xxx"),
])
def test_check_fails_a_misbehaving_bot(bot: str, kind: str, line: str | None) -> None:
    code, out = run("check", str(TEST_BOTS / bot), "--games", "1", "--variant", "nmm",
                    "--movetime", "200", "--margin", "400", "--handshake", "1500")
    assert code == 1, out
    assert f"problem: {kind}" in out, out
    if line is not None:
        assert f"  offending line: {line}" in out
    assert out.rstrip().splitlines()[-1] == "FAIL: 1 problem(s)"


def test_check_warns_about_a_bot_that_ignores_quit() -> None:
    code, out = run("check", str(TEST_BOTS / "ignore-term"), "--games", "1", "--variant", "3mm",
                    "--margin", "400")
    assert code == 0, out
    assert "warning: did not exit by itself after 'quit'" in out


@pytest.mark.parametrize("bot", sorted(p.name for p in EXAMPLE_BOTS.iterdir()
                                       if (p / "bot.yaml").exists() and p.name != "random"))
def test_check_passes_the_other_example_bots(bot: str) -> None:
    code, out = run("check", str(EXAMPLE_BOTS / bot), "--games", "1", "--variant", "3mm",
                    "--movetime", "100", "--margin", "400")
    assert code == 0, out
    assert out.rstrip().splitlines()[-1].startswith("PASS")


def test_play_with_cpu_clock_and_isolation_records_both(tmp_path: Path) -> None:
    """`arena play --cpu-clock --isolation basic`: the record says how it was played."""
    out = tmp_path / "game.json"
    result = CliRunner().invoke(cli, ["play", str(EXAMPLE_BOTS / "random"), str(EXAMPLE_BOTS / "random"),
                                      "--variant", "three-mens-morris", "--quiet", "--movetime", "500",
                                      "--cpu-clock", "--isolation", "basic", "--seed", "1",
                                      "--record", str(out)])
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text())
    assert record["isolation"] == "basic" and record["time_control"]["clock"] == "cpu"
    assert all(m["cpu_ms"] is not None for m in record["moves"])


CONTROLS = "\x1b\x07\x00"


def test_bot_text_is_shown_without_control_characters() -> None:
    """What a bot sends (its name, its stderr) reaches the terminal escaped: `arena play` and
    `arena check` print no raw escape, bell or NUL."""
    code, out = run("play", str(TEST_BOTS / "controls"), RANDOM, "--quiet", "--isolation", "none")
    assert "stderr tail:" in out and "boom \\x1b[31mred\\x07\\x00" in out, out
    assert not any(c in out for c in CONTROLS), repr(out)
    code, out = run("check", str(TEST_BOTS / "controls"), "--isolation", "none", "--games", "1")
    assert code == 1 and "FAIL" in out
    assert "ctl\\x1b[2J\\x07bot" in out and "boom \\x1b[31mred" in out, out
    assert not any(c in out for c in CONTROLS), repr(out)


def _random_bot_folder(tmp_path: Path, extra: str) -> Path:
    folder = tmp_path / "listed"
    folder.mkdir()
    (folder / "bot.yaml").write_text(
        f'command: ["{{python}}", "{EXAMPLE_BOTS / "random" / "bot.py"}"]\n{extra}')
    return folder


def test_check_plays_only_the_variants_bot_yaml_lists(tmp_path: Path) -> None:
    folder = _random_bot_folder(tmp_path, "variants: [3mm, six-mens-morris]\n")
    code, out = run("check", str(folder), "--games", "1")
    assert code == 0, out
    assert set(re.findall(r"^game (\S+?)(?:-kept)?-\d+: ", out, re.M)) == {"three-mens-morris",
                                                                  "six-mens-morris"}


def test_check_refuses_a_variant_the_bot_does_not_list(tmp_path: Path) -> None:
    folder = _random_bot_folder(tmp_path, "variants: [three-mens-morris]\n")
    code, out = run("check", str(folder), "--variant", "3mm", "--variant", "nmm")
    assert code == 2
    assert out == (f"Error: --variant nine-mens-morris: the bot ({folder}) plays only "
                   f"three-mens-morris (its bot.yaml 'variants:')\n")
    code, out = run("check", RANDOM, "--opponent", str(folder), "--variant", "6mm")
    assert code == 2 and "the opponent" in out and "plays only three-mens-morris" in out


def test_check_refuses_an_option_bot_yaml_gives_that_the_bot_does_not_declare(
        tmp_path: Path) -> None:
    folder = _random_bot_folder(tmp_path, "options: {Depth: 3}\n")
    code, out = run("check", str(folder))
    assert code == 2
    assert out.endswith(f"Error: Depth: {folder} declares no such option (it declares Seed)\n")


def test_check_refuses_a_bad_option_of_a_bot_with_a_build_step(tmp_path: Path) -> None:
    """Built bots are checked after the check's own build and games, from its handshake."""
    folder = _random_bot_folder(tmp_path, "build: 'true'\noptions: {Seed: '-4'}\n")
    code, out = run("check", str(folder), "--games", "1", "--variant", "3mm")
    assert code == 2
    assert out.endswith(f"Error: Seed=-4: out of range for {folder} (spin 0..2147483647)\n")


def test_check_plays_games_in_a_row_with_one_process_and_fails_a_bot_that_breaks_there(
        tmp_path: Path) -> None:
    """A bot that plays well from a fresh process but fails once kept for a second game
    (here: it exits in its second game) fails the check's last step."""
    import shutil

    folder = tmp_path / "forgetful"
    folder.mkdir(mode=0o755)
    shutil.copy(TEST_BOTS / "counter" / "bot.py", folder)
    (folder / "bot.yaml").write_text('command: "{python} bot.py"\noptions: {CrashAtGame: 2}\n')
    code, out = run("check", str(folder), "--variant", "three-mens-morris", "--games", "2",
                    "--movetime", "100")
    assert code == 1, out
    assert "game three-mens-morris-kept-1:" in out and "game three-mens-morris-kept-2:" in out
    assert re.search(r"problem: crash: three-mens-morris game 2 of 2 played by one process "
                     r"\(newgame between games\) as black", out), out
    fresh = TEST_BOTS / "counter"  # the same bot without the option: it passes every step
    code, out = run("check", str(fresh), "--variant", "three-mens-morris", "--games", "2",
                    "--movetime", "100")
    assert code == 0 and "game three-mens-morris-kept-2:" in out, out


def test_a_clock_of_a_base_alone_and_a_clock_with_a_move_cap() -> None:
    """Issue 39: ``--clock 60`` is 60 s and no increment (as cutechess's tc=60), and
    ``--movetime`` with ``--clock`` caps each move under the clock (as a tournament file's
    ``time: {clock, movetime}``); both were refused."""
    from arena.cli.common import time_control

    tc = time_control(None, "60", 5000, 50, 1000)
    assert (tc.base_ms, tc.increment_ms, tc.movetime_ms) == (60_000, 0, None)
    tc = time_control(100, "60+1", 5000, 50, 1000)
    assert (tc.base_ms, tc.increment_ms, tc.movetime_ms) == (60_000, 1000, 100)
    code, out = run("play", RANDOM, RANDOM, "--clock", "2", "--movetime", "300", "--quiet",
                    "--variant", "three-mens-morris")
    assert code == 0, out
    assert "2+0 s, 300 ms/move" in out and "result: " in out


@pytest.mark.parametrize("args", [["-help"], ["run", "-help"], ["server", "run", "-help"],
                                  ["play", "-h"]])
def test_help_answers_cutechess_spelling_too(args: list[str]) -> None:
    """Issue 39: ``arena -help`` (cutechess's and fastchess's spelling) said "No such option
    '-e'"; -h, -help and --help now all print the help, everywhere."""
    result = CliRunner().invoke(cli, args, prog_name="arena")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: arena")
