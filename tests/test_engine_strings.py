"""Engines named on the command line (issue 27): a string of cutechess-style ``key=value`` words
names an engine without a bot folder wherever a folder is accepted (``arena play``, ``check``,
``sprt``, a tournament's ``bots:``), and the sandbox applies to it as to any bot."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.config import parse_config
from arena.errors import ConfigError
from arena.manifest import is_engine_string, parse_engine
from arena.sandbox import Isolation

ROOT = Path(__file__).resolve().parent.parent
RANDOM = ROOT / "bots" / "random"
#: times no instant bot misses on a loaded machine (a bot's start included)
SLACK = ("--movetime", "2000", "--handshake", "60000")


def test_an_engine_string_becomes_a_bot_spec(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "engines").mkdir()
    spec = parse_engine("cmd='./mybot --fast' arg=--threads=1 name=fast option.Depth=3 "
                        "option.Book=\"my book.txt\" legal_moves=true "
                        "variants=nmm,six-mens-morris dir=engines")
    assert spec.command == ("./mybot", "--fast", "--threads=1")
    assert spec.name == "fast" and spec.options == {"Depth": "3", "Book": "my book.txt"}
    assert spec.path == spec.cwd == str((tmp_path / "engines").resolve())
    assert spec.legal_moves and spec.variants == ("nine-mens-morris", "six-mens-morris")
    assert spec.engine.startswith("cmd='./mybot --fast'") and not spec.build
    # defaults: the current folder, the command's base name; {python} and {dir} as in bot.yaml
    spec = parse_engine("cmd='{python} bots/x.py {dir}/book'")
    assert spec.path == str(tmp_path.resolve()) and spec.name == "x"
    assert spec.command == (sys.executable, "bots/x.py", f"{tmp_path.resolve()}/book")
    assert parse_engine("cmd=/usr/local/bin/sf").name == "sf"
    assert parse_engine("cmd=/usr/local/bin/sf proto=morris").name == "sf"  # cutechess's key
    # a relative dir is looked up from the current folder, then from the given bases
    other = tmp_path / "elsewhere"
    (other / "deep").mkdir(parents=True)
    assert parse_engine("cmd=./e dir=deep", bases=[other]).path == str((other / "deep").resolve())


def test_what_is_an_engine_string() -> None:
    for text in ("cmd=./sf", " name=x cmd=./sf", "option.Hash=64 cmd=./sf",
                 "dir=engines cmd='./a b'"):
        assert is_engine_string(text), text
    for text in ("bots/random", "random", "bots/alphabeta:Depth=3", "human", "./cmd=x",
                 "commander=1"):
        assert not is_engine_string(text), text


@pytest.mark.parametrize("text, message", [
    ("name=x", "cmd is required"),
    ("cmd=", "cmd is required"),
    ("cmd=./a proto=uci", "proto=uci: the referee speaks one protocol, the Morris protocol"),
    ("cmd=./a proto=xboard", "a xboard engine needs a port that answers it"),
    ("cmd=./a optoin.Depth=3", "did you mean option.Depth?"),
    ("cmd=./a isolation=none", "the isolation is the run's"),
    ("cmd='./a", "cannot split it as a shell would"),
    ("cmd=./a ./b", "expected KEY=VALUE words, got './b'"),
    ("cmd=./a legal_moves=yes", "legal_moves: expected true or false"),
    ("cmd=./a dir=/no/such/folder", "dir: no such folder"),
    ("cmd=./a name=x name=y", "name is given twice"),
    ("cmd=./a variants=chess", "variants: 'chess' is not a variant"),
    ("cmd=./a option.=3", "expected option.NAME=VALUE"),
])
def test_a_bad_engine_string_is_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        parse_engine(text)
    assert "\n" not in str(info.value) and str(info.value).startswith("engine ")


def _random_engine(name: str = "x", seed: int = 3) -> str:
    return f"cmd='{{python}} bot.py' dir={RANDOM} name={name} option.Seed={seed}"


def test_arena_play_with_an_engine_string_plays_sandboxed(tmp_path: Path) -> None:
    """The issue's example: ``arena play "cmd='...' name=x option.Seed=3" bots/random``, at
    the default (best) isolation level."""
    record = tmp_path / "game.json"
    res = CliRunner().invoke(cli, ["play", _random_engine(), str(RANDOM), "--quiet",
                                   "--variant", "three-mens-morris", *SLACK,
                                   "--record", str(record)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("x (white) vs random (black): three-mens-morris")
    data = json.loads(record.read_text())
    assert data["termination"] not in ("crash", "start-failure", "protocol-error"), data
    assert data["white"]["name"] == "x" and data["white"]["options"] == {"Seed": "3"}
    assert data["isolation"] == Isolation.default().level.value


#: an engine that tries to write into its own folder before its handshake, says on stderr
#: what happened, then plays the first legal move it is given
WRITER = '''\
import os, sys
try:
    with open(os.path.join(os.getcwd(), "written.txt"), "w") as f:
        f.write("escaped")
    print("wrote", file=sys.stderr, flush=True)
except OSError as e:
    print("refused:", e.strerror, file=sys.stderr, flush=True)
legal = []
for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    if w[0] == "morris":
        print("id name writer")
        print("morrisok", flush=True)
    elif w[0] == "isready":
        print("readyok", flush=True)
    elif w[0] == "legalmoves":
        legal = w[1:]
    elif w[0] == "go":
        print("bestmove " + legal[0], flush=True)
    elif w[0] == "quit":
        break
'''


def test_an_engine_folder_is_read_only_to_it(tmp_path: Path) -> None:
    level = Isolation.default().level.value
    if level == "none":
        pytest.skip("no sandbox on this machine")
    folder = tmp_path / "writer"
    folder.mkdir()
    folder.chmod(0o755)
    tmp_path.chmod(0o755)
    (folder / "writer.py").write_text(WRITER, encoding="utf-8")
    record = tmp_path / "game.json"
    engine = f"cmd='{{python}} writer.py' dir={folder} legal_moves=true"
    res = CliRunner().invoke(cli, ["play", engine, str(RANDOM), "--quiet", "--variant",
                                   "three-mens-morris", *SLACK, "--record", str(record)])
    assert res.exit_code == 0, res.output
    assert "writer (white)" in res.output
    data = json.loads(record.read_text())
    assert not (folder / "written.txt").exists()
    assert data["stderr"]["white"].startswith("refused"), data["stderr"]


def test_bad_engine_strings_and_options_exit_2_in_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    for args, message in (
            (["play", "cmd=./a proto=uci", str(RANDOM)], "the referee speaks one protocol"),
            (["play", _random_engine().replace("Seed", "Sed"), str(RANDOM), "--quiet",
              *SLACK],
             "Sed: engine x declares no such option (did you mean Seed?"),
            (["check", "cmd=./a dir=/no/such"], "dir: no such folder"),
            (["sprt", "name=a", str(RANDOM), "--out", str(tmp_path / "s")], "cmd is required")):
        res = runner.invoke(cli, args)
        assert res.exit_code == 2, (args, res.output)
        assert message in res.output and len(res.output.strip().splitlines()) == 1, res.output


def test_arena_check_takes_engine_strings_for_the_bot_and_the_opponent() -> None:
    res = CliRunner().invoke(cli, ["check", _random_engine("mine"), "--opponent",
                                   _random_engine("opp", 4), "--variant",
                                   "three-mens-morris", "--games", "2", *SLACK])
    assert res.exit_code == 0, res.output
    assert "opponent opp" in res.output and "PASS" in res.output


def test_a_tournament_lists_engines_beside_folders(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tour").mkdir()
    (tmp_path / "tour" / "engines").mkdir()
    source = tmp_path / "tour" / "t.yaml"
    config = parse_config({"name": "t", "workers": 1, "bots": [
        str(RANDOM),
        _random_engine("a"),                                            # the string alone
        {"engine": _random_engine("b"), "options": {"Seed": 9}},        # a mapping
        {"engine": "cmd=./e dir=engines", "name": "c"},                 # dir: from the file's
    ]}, source=source)
    a, b, c = config.bots[1:]
    assert (a.name, a.options, a.engine) == ("a", {"Seed": "3"}, _random_engine("a"))
    assert (b.name, b.options) == ("b", {"Seed": "9"})
    assert c.name == "c" and c.path == str((tmp_path / "tour" / "engines").resolve())
    normalised = config.normalised()["bots"]
    assert normalised[1]["command"] == ["{python}", "bot.py"]
    for bots, where, message in (
            ([_random_engine("a"), _random_engine("a")], "bots[1].engine", "already used"),
            ([{"engine": "cmd=./a", "path": str(RANDOM)}, str(RANDOM)], "bots[0]",
             "not both"),
            ([{"engine": "cmd=./a nme=x"}, str(RANDOM)], "bots[0].engine",
             "unknown key 'nme'"),
            ([{"engine": 3}, str(RANDOM)], "bots[0].engine", "expected an engine string")):
        with pytest.raises(ConfigError, match=re.escape(where)) as info:
            parse_config({"name": "t", "workers": 1, "bots": bots}, source=source)
        assert message in str(info.value)
