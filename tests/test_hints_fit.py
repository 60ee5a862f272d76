"""Hints that fit the mistake (issue 36): each wrong hint a student met, with a real bot that
makes the mistake, checked by ``arena check``'s library (:func:`arena.check.check_bot`, the
competition server's judge runs the same) or the upload unpacker.

* a bot written for another protocol (a UCI engine template) is told that the referee sends
  ``morris`` and waits for ``morrisok``, and what it sent, not to flush its output;
* a bot that never answers (an endless loop in the moving phase) is told so, with how long
  it ran without answering, not "used 203 ms, the limit was 200 ms"; a bot that answered a
  little late keeps the late wording;
* a macOS Finder zip (``__MACOSX/``, ``._*``) is accepted; a nested ``bot.yaml`` is named;
* a crash is placed at the bot's own move (its 5th, not the game's 9th);
* the stderr shown with a crash holds the traceback's last frame and its line number.
"""

from __future__ import annotations

import io
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

from arena.check import (DEFAULT_OPPONENT, CheckReport, Problem, check_bot, check_handshake,
                         format_report)
from arena.clock import TimeControl
from arena.hints import stderr_excerpt
from arena.manifest import load_bot
from arena.server.unpack import UnpackError, safe_unpack
from arena.variants import get_variant

NMM = get_variant("nine-mens-morris")
FAST = TimeControl(movetime_ms=100, handshake_ms=5000, margin_ms=50, clock="wall")
SHORT_START = TimeControl(movetime_ms=100, handshake_ms=1000, margin_ms=50, clock="wall")
BOT_YAML = 'name: {name}\ncommand: "{{python}} bot.py"\n'


def _bot(folder: Path, code: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.yaml").write_text(BOT_YAML.format(name=folder.name))
    (folder / "bot.py").write_text(textwrap.dedent(code))
    return folder


def _check(folder: Path, tc: TimeControl = FAST, games: int = 1) -> CheckReport:
    return check_bot(load_bot(folder), variants=[NMM], games=games, time_control=tc,
                     opponent=load_bot(DEFAULT_OPPONENT), isolation=None, kept_games=0)


def _handshake(folder: Path) -> Problem:
    report = CheckReport(load_bot(folder))
    assert not check_handshake(report.bot, SHORT_START, NMM, report, isolation=None)
    [problem] = report.problems
    return problem


# -- 1. the handshake word ---------------------------------------------------------------

UCI_TEMPLATE = """
import sys

for line in sys.stdin:              # a UCI engine: waits for 'uci', ignores what it does not know
    words = line.split()
    if words and words[0] == "uci":
        print("id name template\\nuciok", flush=True)
    elif words and words[0] == "isready":
        print("readyok", flush=True)
"""

SAYS_UCIOK = """
import sys

print("id name template", flush=True)
print("uciok", flush=True)          # the UCI handshake, unasked
for line in sys.stdin:
    pass
"""

NO_FLUSH = """
import sys

for line in sys.stdin:
    if line.split()[:1] == ["morris"]:
        print("id name buffered")   # no flush: the lines wait in stdout's buffer
        print("morrisok")
"""


def test_a_bot_of_another_protocol_is_told_the_referee_sends_morris(tmp_path: Path) -> None:
    silent = _handshake(_bot(tmp_path / "uci", UCI_TEMPLATE))
    assert silent.kind == "failed to start"  # not a slow start: it ended at once
    assert "the referee sends 'morris' and waits for 'morrisok'" in silent.text
    assert "it read 'morris', said nothing, and ended without a word" in silent.text
    assert "does the bot flush stdout" not in silent.text, silent.text

    told = _handshake(_bot(tmp_path / "uciok", SAYS_UCIOK))
    assert told.line == "uciok"
    assert told.text.startswith("bad handshake: sent 'uciok' before 'morrisok': the referee "
                                "sends 'morris' and waits for 'morrisok'"), told.text
    assert "'uciok' is a word of UCI" in told.text
    assert "stdout is for protocol lines only" not in told.text  # not debug text


def test_a_bot_that_does_not_flush_is_still_told_to_flush(tmp_path: Path) -> None:
    problem = _handshake(_bot(tmp_path / "buffered", NO_FLUSH))
    assert ("its output came only when its input was closed ('id name buffered', 'morrisok'): "
            "it waited in a buffer: flush stdout after each line") in problem.text
    assert "the referee sends 'morris'" not in problem.text


# -- 2. never answered vs slightly late --------------------------------------------------

LOOPS_WHEN_MOVING = """
import random
from arena.botkit import run

def choose(position, clock):
    if not position.hand[position.turn]:   # the moving phase: an endless loop
        while True:
            pass
    return random.choice(position.legal_moves())

run(choose, name="loops")
"""

LATE_ONCE = """
import random, time
from arena.botkit import run

moves = 0

def choose(position, clock):
    global moves
    moves += 1
    if moves == 3:
        time.sleep(0.35)                    # 100 ms a move: late, but it answers
    return random.choice(position.legal_moves())

run(choose, name="late")
"""


@pytest.mark.parametrize("clock", ["cpu", "wall"])
def test_a_bot_that_never_answers_is_told_it_never_answered(tmp_path: Path,
                                                             clock: str) -> None:
    tc = TimeControl(movetime_ms=100, handshake_ms=5000, margin_ms=50, clock=clock)
    report = _check(_bot(tmp_path / "loops", LOOPS_WHEN_MOVING), tc)
    [problem] = report.problems
    assert problem.kind == "timeout"
    said = problem.text.split("ran out of time: ", 1)[1]
    assert said.startswith("did not answer: still thinking after "), said
    ran = said.removeprefix("did not answer: still thinking after ").split(" of a 100 ms move")[0]
    assert ran.endswith(" ms") and float(ran[:-3]) >= 500  # watched well past its 150 ms
    assert "a bot that never answers (an endless loop" in said


def test_a_bot_that_answered_a_little_late_keeps_the_late_wording(tmp_path: Path) -> None:
    report = _check(_bot(tmp_path / "late", LATE_ONCE))
    [problem] = report.problems
    said = problem.text.split("ran out of time: ", 1)[1]
    assert said.startswith("no bestmove within 150 ms (the limit: its movetime, 100 ms"), said
    assert "its bestmove came late, " in said and "did not answer" not in said


# -- 3. a macOS Finder zip, and a nested folder -------------------------------------------

PLAYS = """
from arena.botkit import run
import random
run(lambda position, clock: random.choice(position.legal_moves()), name="mac")
"""


def _zip(path: Path, entries: list[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o40755 if name.endswith("/") else 0o100644) << 16
            zf.writestr(info, data)
    return path


APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + bytes(64)


def test_a_macos_finder_zip_is_accepted(tmp_path: Path) -> None:
    """Finder's Compress of a folder: the folder, and __MACOSX/ with an AppleDouble file
    (``._name``) for each file, the folder's own and a .DS_Store."""
    yaml = BOT_YAML.format(name="mac").encode()
    folder_zip = _zip(tmp_path / "mac.zip", [
        ("mac/", b""), ("mac/bot.yaml", yaml), ("mac/bot.py", PLAYS.encode()),
        ("mac/.DS_Store", bytes(16)), ("__MACOSX/", b""), ("__MACOSX/._mac", APPLE_DOUBLE),
        ("__MACOSX/mac/", b""), ("__MACOSX/mac/._bot.py", APPLE_DOUBLE),
        ("__MACOSX/mac/._bot.yaml", APPLE_DOUBLE)])
    root = safe_unpack(folder_zip, tmp_path / "one", max_bytes=1 << 20, max_files=50)
    assert root == tmp_path / "one" / "mac"
    assert sorted(p.name for p in (tmp_path / "one").rglob("*")) == ["bot.py", "bot.yaml", "mac"]
    report = CheckReport(load_bot(root))  # accepted: it loads and starts
    assert check_handshake(report.bot, FAST, NMM, report, isolation=None), report.problems

    # its files selected (no folder), and a macOS tar with AppleDouble files
    flat = _zip(tmp_path / "flat.zip", [("bot.yaml", yaml), ("bot.py", PLAYS.encode()),
                                         ("__MACOSX/._bot.py", APPLE_DOUBLE)])
    assert safe_unpack(flat, tmp_path / "two", max_bytes=1 << 20, max_files=50) \
        == tmp_path / "two"
    tgz = tmp_path / "mac.tar.gz"
    with tarfile.open(tgz, "w:gz") as tf:
        for name, data in [("mac/._bot.py", APPLE_DOUBLE), ("mac/bot.py", PLAYS.encode()),
                           ("._mac", APPLE_DOUBLE), ("mac/bot.yaml", yaml)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    root = safe_unpack(tgz, tmp_path / "three", max_bytes=1 << 20, max_files=50)
    assert root == tmp_path / "three" / "mac" and not (root / "._bot.py").exists()


def test_a_nested_bot_yaml_is_named_in_the_refusal(tmp_path: Path) -> None:
    yaml = BOT_YAML.format(name="deep").encode()
    nested = _zip(tmp_path / "nested.zip", [("a/b/bot.yaml", yaml), ("a/b/bot.py", b""),
                                             ("a/readme.txt", b"hi")])
    with pytest.raises(UnpackError) as refused:
        safe_unpack(nested, tmp_path / "d", max_bytes=1 << 20, max_files=50)
    assert "found at 'a/b/bot.yaml'" in str(refused.value)
    assert str(refused.value).startswith("refused: no bot.yaml at the top")
    assert not (tmp_path / "d").exists()
    none = _zip(tmp_path / "none.zip", [("readme.txt", b"hi")])
    with pytest.raises(UnpackError, match="no bot.yaml in the archive") as refused:
        safe_unpack(none, tmp_path / "e", max_bytes=1 << 20, max_files=50)
    assert "found at" not in str(refused.value)


# -- 4 and 5. a crash on the bot's own 5th move, with the traceback's line -----------------

CRASHES_ON_ITS_5TH = """
import random
from arena.botkit import run

moves = 0

def choose(position, clock):
    global moves
    moves += 1
    if moves == 5:
        return pick(position.legal_moves())
    return random.choice(position.legal_moves())

def pick(legal):
    return legal[len(legal) + 40]  # the bug

run(choose, name="crashes")
"""


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Problem], int]:
    """Two games (white, then black) of a bot that crashes on its 5th move; the line of
    its bug."""
    folder = _bot(tmp_path_factory.mktemp("crash") / "crashes", CRASHES_ON_ITS_5TH)
    # a generous wall clock: on a loaded machine a 100 ms move could end a game before the
    # crash (a fresh-clone run beside four busy loops saw one crash of two)
    report = _check(folder, TimeControl(movetime_ms=2000, handshake_ms=10000,
                                        margin_ms=1000, clock="wall"), games=2)
    bug = next(n for n, line in enumerate((folder / "bot.py").read_text().splitlines(), 1)
               if "# the bug" in line)
    return report.problems, bug


def test_a_crash_is_placed_at_the_bots_own_move(crashed: tuple[list[Problem], int]) -> None:
    problems, _ = crashed
    assert [p.kind for p in problems] == ["crash", "crash"]
    white, black = (p.text.split(": ", 1)[0] for p in problems)
    assert white == "nine-mens-morris game 1 as white, move 9 of the game (your 5th move)"
    assert black == "nine-mens-morris game 2 as black, move 10 of the game (your 5th move)"


def test_a_crash_excerpt_holds_the_tracebacks_last_frame(
        crashed: tuple[list[Problem], int]) -> None:
    problems, bug = crashed
    excerpt = problems[0].stderr.splitlines()
    assert excerpt[0].strip().startswith('File "') and excerpt[0].endswith(
        f'bot.py", line {bug}, in pick'), excerpt
    assert excerpt[1].strip() == "return legal[len(legal) + 40]  # the bug"
    assert excerpt[-1] == "IndexError: list index out of range"
    assert not any(set(line.strip()) <= {"~", "^"} for line in excerpt)  # no markers
    shown = format_report(CheckReport(load_bot(DEFAULT_OPPONENT), problems=problems[:1]))
    assert any(f"line {bug}, in pick" in line for line in shown)


def test_an_excerpt_keeps_the_bots_frame_when_a_library_raised() -> None:
    stderr = ('Traceback (most recent call last):\n'
              '  File "/bots/me/bot.py", line 30, in <module>\n    run(choose)\n'
              '  File "/bots/me/bot.py", line 8, in choose\n    return random.choice(moves)\n'
              '  File "/usr/lib/python3.11/random.py", line 373, in choice\n'
              "    raise IndexError('Cannot choose from an empty sequence')\n"
              'IndexError: Cannot choose from an empty sequence\n')
    assert stderr_excerpt(stderr).splitlines() == [
        '  File "/bots/me/bot.py", line 8, in choose', "    return random.choice(moves)",
        '  File "/usr/lib/python3.11/random.py", line 373, in choice',
        "    raise IndexError('Cannot choose from an empty sequence')",
        "IndexError: Cannot choose from an empty sequence"]
    java = ('Exception in thread "main" java.lang.NullPointerException\n'
            "\tat Bot.pick(Bot.java:3)\n\tat Bot.choose(Bot.java:9)\n\tat Bot.main(Bot.java:20)\n")
    assert stderr_excerpt(java).splitlines() == [
        'Exception in thread "main" java.lang.NullPointerException', "\tat Bot.pick(Bot.java:3)"]


def test_an_engine_file_the_sandbox_cannot_reach_is_named_with_the_fix() -> None:
    """Issue 39: ``cmd='python3 /x/bot.py'`` where the sandbox cannot reach /x (outside the
    bot's folder: not shown; as root, a folder only its owner may enter) said only
    "Permission denied" or "No such file"; the hint names the file, why, and the fix."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp())  # in /tmp, opened to all (pytest's tmp_path is not)
    try:
        base.chmod(0o755)
        _unreachable(base)
    finally:
        shutil.rmtree(base)


def _unreachable(tmp_path: Path) -> None:
    from arena.hints import unreachable_hint

    hidden = tmp_path / "mine"
    hidden.mkdir(mode=0o700)
    hidden.chmod(0o700)
    script = hidden / "bot.py"
    script.write_text("print('hi')\n")
    home = tmp_path / "home"
    home.mkdir()
    command = ["/usr/bin/python3", str(script)]
    denied = f"/usr/bin/python3: can't open file '{script}': [Errno 13] Permission denied"
    said = unreachable_hint(denied, command, str(home), "bwrap", other_uid=True)
    assert said.startswith(f"{script} exists here, but the bot cannot reach it: the sandbox "
                           f"(isolation bwrap) shows the bot only its folder ({home})")
    assert f"who may not read {hidden}" in said and f"dir={hidden}" in said
    assert f"chmod a+rX {hidden}" in said and "--isolation none" in said
    # inside its folder, readable by all: nothing to say; at none, never
    hidden.chmod(0o755)
    assert unreachable_hint(denied, command, str(hidden), "bwrap", other_uid=True) == ""
    assert unreachable_hint(denied, command, str(home), "none", other_uid=False) == ""
    assert unreachable_hint("Traceback: KeyError", command, str(home), "bwrap", True) == ""
