"""Every verdict a beginner meets says how to fix it (docs/BOTS.md, "What the referee says
and what to do"): debug text on stdout, a late reply (with the limit's parts and what the
bot used), a move written wrong (did you mean ...), an illegal move from a bot that does
not ask for the legal moves, a bot.yaml or tournament key mistyped, a crash (the line that
states the error, not a runtime's hint), a bot that cannot start in ``arena play``.  The
games are real: small bots written here, played by the referee."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.clock import TimeControl
from arena.errors import ConfigError
from arena.hints import LEGAL_MOVES_HINT, STDOUT_HINT, crash_line
from arena.manifest import load_bot
from arena.referee import illegal_move_text, play_game
from arena.rules import Position
from arena.variants import get_variant

ROOT = Path(__file__).resolve().parent.parent
FAST = TimeControl(movetime_ms=100, handshake_ms=10000, margin_ms=50, clock="wall")


def _bot(folder: Path, code: str, *, legal_moves: bool = False) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.yaml").write_text(f'name: {folder.name}\ncommand: "{{python}} bot.py"\n'
                                     + ("legal_moves: true\n" if legal_moves else ""))
    (folder / "bot.py").write_text(textwrap.dedent(code))
    return folder


def _play(bot: Path, **kwargs: object) -> tuple[str, str]:
    record = play_game(load_bot(bot), load_bot(ROOT / "bots" / "random"), "nine-mens-morris",
                       FAST, seed=1, quit_grace_s=0.1, term_grace_s=0.1, isolation=None,
                       **kwargs)  # type: ignore[arg-type]
    return record.termination, record.detail


PRINTS_DEBUG = """
import sys

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "morris":
        print("id name chatty\\nmorrisok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "legalmoves":
        legal = words[1:]
    elif words[0] == "go":
        print("thinking about", legal[0], flush=True)   # debug text on stdout
        print("bestmove", legal[0], flush=True)
    elif words[0] == "quit":
        break
"""

TOO_SLOW = """
import random, time
from arena.botkit import run

def choose(position, clock):
    time.sleep(0.4)
    return random.choice(position.legal_moves())

run(choose, name="slow")
"""

def test_debug_text_on_stdout_says_where_it_belongs(tmp_path: Path) -> None:
    term, detail = _play(_bot(tmp_path / "chatty", PRINTS_DEBUG, legal_moves=True))
    assert term == "protocol-error"
    assert "'thinking about" in detail and STDOUT_HINT in detail


def test_a_late_reply_names_the_limit_its_parts_what_it_used_and_the_fix(
        tmp_path: Path) -> None:
    term, detail = _play(_bot(tmp_path / "slow", TOO_SLOW))
    assert term == "timeout"
    assert "no bestmove within 150 ms" in detail
    assert "the limit: its movetime, 100 ms, + 50 ms margin" in detail
    assert "meanwhile it used" in detail and "Fix: read the time from the 'go' line" in detail


def test_a_move_written_wrong_gets_a_did_you_mean() -> None:
    import random

    pos = Position(get_variant("nine-mens-morris"))
    rng = random.Random(5)
    while pos.hand[0] or pos.hand[1] or not any(m.src and not m.captures
                                                for m in pos.legal_moves()):
        pos.push(rng.choice(pos.legal_moves()))  # to the moving phase
    move = next(m for m in pos.legal_moves() if m.src and not m.captures)
    shown = illegal_move_text(pos, f"{move.src}{move.dst}")
    assert shown.startswith(f"not a move: '{move.src}{move.dst}'"), shown
    assert f"did you mean {move}?" in shown
    assert f"did you mean {move}?" in illegal_move_text(pos, f"{move.src} - {move.dst}".upper())
    assert "did you mean" not in illegal_move_text(pos, "z9")


def test_an_illegal_move_of_a_bot_that_does_not_ask_for_the_legal_moves_says_it_could(
        tmp_path: Path) -> None:
    bad = """
    from arena.botkit import run

    def choose(position, clock):
        return "a1-a4"      # a move in the placement phase: never legal there

    run(choose, name="bad")
    """
    term, detail = _play(_bot(tmp_path / "bad", bad))
    assert term == "illegal-move" and LEGAL_MOVES_HINT in detail
    term, detail = _play(_bot(tmp_path / "bad-asks", bad, legal_moves=True))
    assert term == "illegal-move" and LEGAL_MOVES_HINT not in detail


def test_mistyped_keys_get_a_did_you_mean(tmp_path: Path) -> None:
    folder = tmp_path / "typo"
    folder.mkdir()
    (folder / "bot.yaml").write_text('name: typo\ncommand: "{python} bot.py"\nlegal_move: true\n')
    with pytest.raises(ConfigError, match="did you mean legal_moves?"):
        load_bot(folder)
    from arena.config import parse_config
    from arena.server.config import parse_server_config

    bots = [str(ROOT / "bots" / "random"), str(ROOT / "bots" / "greedy")]
    with pytest.raises(ConfigError, match="did you mean workers?"):
        parse_config({"name": "t", "bots": bots, "wrokers": 2})
    with pytest.raises(ConfigError, match="did you mean check_timeout?"):
        parse_server_config({"check_timout": 5})


@pytest.mark.parametrize("stderr,expected", [
    ("Traceback (most recent call last):\n  File \"bot.py\", line 3, in <module>\n"
     "    x = [][0]\nIndexError: list index out of range\n",
     "IndexError: list index out of range"),
    ("thread 'main' panicked at src/main.rs:5:5:\nindex out of bounds: the len is 0\n"
     "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
     "thread 'main' panicked at src/main.rs:5:5: index out of bounds: the len is 0"),
    ("Exception in thread \"main\" java.lang.NullPointerException\n"
     "\tat Bot.main(Bot.java:3)\n", "Exception in thread \"main\" java.lang.NullPointerException"),
    ("/bot/bot.js:2\n  x.y.z\n    ^\n\nTypeError: Cannot read properties of undefined\n"
     "    at Object.<anonymous> (/bot/bot.js:2:5)\n\nNode.js v20.20.2\n",
     "TypeError: Cannot read properties of undefined"),
    ("terminate called after throwing an instance of 'std::out_of_range'\n"
     "  what():  vector::_M_range_check\n",
     "terminate called after throwing an instance of 'std::out_of_range'"),
    ("my own last words\n", "my own last words"),
    ("", ""),
])
def test_a_crash_headline_quotes_the_line_that_states_the_error(stderr: str,
                                                                expected: str) -> None:
    assert crash_line(stderr) == expected


def test_a_crash_verdict_quotes_the_exception_not_the_last_line(tmp_path: Path) -> None:
    crash = """
    import sys
    from arena.botkit import run

    def choose(position, clock):
        try:
            return [][0]
        finally:
            sys.stderr.write("cleaning up\\n")

    run(choose, name="crash")
    """
    term, detail = _play(_bot(tmp_path / "crash", crash))
    assert term == "crash" and "(stderr: IndexError: list index out of range)" in detail


def test_arena_play_exits_non_zero_when_a_bot_cannot_start(tmp_path: Path) -> None:
    folder = tmp_path / "nothing"
    folder.mkdir()
    (folder / "bot.yaml").write_text("name: nothing\ncommand: ./not-there\n")
    result = CliRunner().invoke(cli, ["play", str(folder), str(ROOT / "bots" / "random"),
                                      "--quiet", "--isolation", "none"])
    assert result.exit_code == 1, result.output
    assert "start-failure" in result.output and "arena check" in result.output


def test_each_game_of_a_kept_bot_holds_its_own_stderr(tmp_path: Path) -> None:
    """One process plays three games in a row (restart: per-pairing): each record's stderr
    is that game's, not the whole process's so far."""
    from arena.referee import KeptBotPlayer

    counting = """
    import sys
    from arena.botkit import run

    games = 0

    def choose(position, clock):
        global games
        if len(position.move_stack) <= 1:
            games += 1
        sys.stderr.write(f"in game {games}\\n")
        return position.legal_moves()[0]

    run(choose, name="counting")
    """
    player = KeptBotPlayer(load_bot(_bot(tmp_path / "counting", counting)), label="kept")
    try:
        seen = []
        for n in range(3):
            record = play_game(player, load_bot(ROOT / "bots" / "random"), "nine-mens-morris",
                               FAST, seed=n + 1, quit_grace_s=0.1, term_grace_s=0.1)
            assert record.forfeit is None, record.detail
            seen.append(set(record.stderr.get("white", "").split("\n")) - {""})
        assert seen == [{"in game 1"}, {"in game 2"}, {"in game 3"}], seen
    finally:
        player.close()


def test_the_sandbox_advice_names_what_is_really_missing() -> None:
    from arena.sandbox import Level, available_levels, level_warning

    advice = level_warning(Level.NONE)
    assert advice is not None
    if Level.BWRAP in available_levels():
        assert "bubblewrap works on this machine" in advice and "apt-get" not in advice
    else:
        assert "bubblewrap" in advice


def test_read_only_lets_a_bot_use_an_interpreter_outside_its_folder(tmp_path: Path) -> None:
    """A bot run by a virtual environment's python elsewhere cannot start in the bwrap
    sandbox (the environment is not mounted) until --read-only names it."""
    import subprocess
    import sys

    from arena.sandbox import Level, available_levels

    if Level.BWRAP not in available_levels():
        pytest.skip("bubblewrap is not usable here: the default sandbox shows the host")
    tmp_path.chmod(0o755)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    subprocess.run(["chmod", "-R", "a+rX", str(venv)], check=True)
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.yaml").write_text(f"name: venvbot\ncommand: {venv}/bin/python bot.py\n"
                                  "legal_moves: true\n")
    (bot / "bot.py").write_text(textwrap.dedent(PRINTS_DEBUG).replace(
        'print("thinking about", legal[0], flush=True)', "pass"))
    bot.chmod(0o755)
    args = ["check", str(bot), "--games", "1", "--variant", "nine-mens-morris",
            "--isolation", "bwrap"]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 1, refused.output
    passed = CliRunner().invoke(cli, [*args, "--read-only", str(venv)])
    assert passed.exit_code == 0, passed.output
