"""Tournament files: what a good file becomes, and one clear error (exit 2, nothing written)
for each kind of mistake."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.config import load_config
from arena.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch directory with the example bots at ``bots/`` (a link) and a copy of two of
    them under ``class/`` for globs; the current directory for the test."""
    (tmp_path / "bots").symlink_to(ROOT / "bots")
    for name in ("random", "greedy"):
        shutil.copytree(ROOT / "bots" / name, tmp_path / "class" / f"student-{name}")
        manifest = tmp_path / "class" / f"student-{name}" / "bot.yaml"
        manifest.write_text(manifest.read_text().replace(f"name: {name}", f"name: s-{name}"))
    (tmp_path / "class" / "not-a-bot").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """\
name: good
seed: 7
bots:
  - bots/random
  - path: bots/alphabeta
    name: ab-fast
    options: {Depth: 2, MillWeight: 20}
  - path: bots/alphabeta
    name: ab-deep
    options: {Depth: 4}
  - class/*
variants:
  - nine-mens-morris
  - lasker
  - {base: six-mens-morris, name: six-short, no_capture_draw: 30}
format: {type: round-robin, rounds: 2}
games_per_pairing: 4
openings: {random: 3}
time: {movetime: 50, handshake: 3000, margin: 25}
workers: 3
"""


def test_a_good_file_becomes_frozen_dataclasses(workdir: Path) -> None:
    cfg = load_config(write(workdir / "good.yaml", GOOD))
    assert cfg.name == "good" and cfg.seed == 7 and cfg.workers == 3
    assert cfg.players == ("random", "ab-fast", "ab-deep", "s-greedy", "s-random")
    assert cfg.bots[1].options["Depth"] == "2" and cfg.bots[1].options["MillWeight"] == "20"
    assert cfg.bots[2].options["Depth"] == "4"
    assert Path(cfg.bots[1].path) == Path(cfg.bots[2].path) == (ROOT / "bots/alphabeta")
    assert [v.name for v in cfg.variants] == ["nine-mens-morris", "lasker-morris", "six-short"]
    assert cfg.variants[2].no_capture_draw == 30 and cfg.variants[2].men == 6
    assert (cfg.format.kind, cfg.format.rounds) == ("round-robin", 2)
    assert cfg.games_per_pairing == 4 and cfg.opening_turns == 3
    tc = cfg.time_control
    assert (tc.movetime_ms, tc.base_ms, tc.handshake_ms, tc.margin_ms) == (50, None, 3000, 25)
    assert cfg.output == Path("results/good")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.name = "other"  # type: ignore[misc]


def test_shorthands_and_defaults(workdir: Path) -> None:
    cfg = load_config(write(workdir / "short.yaml", "bots: [bots/random, bots/greedy]\n"
                            "format: match\ntime: '2+0.1'\nvariants: 3mm\n"))
    assert cfg.name == "short" and cfg.format.kind == "match"
    assert cfg.time_control.base_ms == 2000 and cfg.time_control.increment_ms == 100
    assert [v.name for v in cfg.variants] == ["three-mens-morris"]
    assert cfg.games_per_pairing == 2 and cfg.opening_turns == 0 and cfg.workers >= 1
    gauntlet = load_config(write(workdir / "g.yaml", "bots: [bots/random, bots/greedy, "
                                 "bots/alphabeta]\nformat: {type: gauntlet, seeds: alphabeta}\n"
                                 "time: 100\n"))
    assert gauntlet.format.seeds == ("alphabeta",) and gauntlet.time_control.movetime_ms == 100


def test_digest_ignores_workers_but_not_games(workdir: Path) -> None:
    base = load_config(write(workdir / "good.yaml", GOOD))
    assert load_config(workdir / "good.yaml", workers=1).digest() == base.digest()
    changed = load_config(write(workdir / "good.yaml", GOOD.replace("seed: 7", "seed: 8")))
    assert changed.digest() != base.digest()
    normalised = base.normalised()
    assert normalised["bots"][1]["command"][0] == "{python}"  # no venv path in the hash
    assert normalised["bots"][3]["path"] == "class/student-greedy"  # relative to the cwd


# file text -> the error message expected after "<file>: "
ERRORS = {
    "unknown key": ("bots: [bots/random, bots/greedy]\ncolour: red\n",
                    "colour: unknown key"),
    "unknown bot key": ("bots: [bots/random, {path: bots/greedy, depth: 3}]\n",
                        "bots[1].depth: unknown key"),
    "missing bots": ("name: x\n", "bots: missing"),
    "missing bot": ("bots: [bots/random, bots/greedy, bots/nope]\n",
                    "bots[2].path: no bot folder at bots/nope (no bot.yaml)"),
    "empty glob": ("bots: [bots/random, 'nowhere/*']\n",
                   "bots[1].path: no bot folder (a folder with a bot.yaml) matches nowhere/*"),
    "bots not a list": ("bots: bots/random\n", "bots: expected a non-empty list"),
    "wrong type": ("bots: [bots/random, bots/greedy]\ngames_per_pairing: two\n",
                   "games_per_pairing: expected an integer >= 2, got 'two'"),
    "odd games": ("bots: [bots/random, bots/greedy]\ngames_per_pairing: 3\n",
                  "games_per_pairing: expected an even number"),
    "bool is not an int": ("bots: [bots/random, bots/greedy]\nseed: true\n",
                           "seed: expected an integer"),
    "unknown variant": ("bots: [bots/random, bots/greedy]\nvariants: [standard, nope]\n",
                        "variants[1]: unknown variant 'nope'"),
    "bad variant parameter": ("bots: [bots/random, bots/greedy]\nvariants: "
                              "[{base: standard, men: many}]\n",
                              "variants[0].men: expected an integer"),
    "duplicate variant": ("bots: [bots/random, bots/greedy]\nvariants: [standard, nmm]\n",
                          "variants[1]: the variant name 'nine-mens-morris' is already used"),
    "unknown format": ("bots: [bots/random, bots/greedy]\nformat: swiss\n",
                       "format: expected one of round-robin, gauntlet, match, got 'swiss'"),
    "match of three": ("bots: [bots/random, bots/greedy, bots/alphabeta]\nformat: match\n",
                       "bots: a match needs exactly two players"),
    "unknown seed": ("bots: [bots/random, bots/greedy]\nformat: {type: gauntlet, seeds: [x]}\n",
                     "format.seeds[0]: no bot named 'x'"),
    "bad rounds": ("bots: [bots/random, bots/greedy]\nformat: {type: round-robin, rounds: 0}\n",
                   "format.rounds: expected an integer >= 1, got 0"),
    "bad openings": ("bots: [bots/random, bots/greedy]\nopenings: {random: -1}\n",
                     "openings.random: expected an integer >= 0"),
    "bad time": ("bots: [bots/random, bots/greedy]\ntime: {clock: soon}\n",
                 "time.clock: not a time control: 'soon'"),
    "no time": ("bots: [bots/random, bots/greedy]\ntime: {margin: 5}\n",
                "time: expected 'movetime'"),
    "same display name": ("bots: [bots/alphabeta, {path: bots/alphabeta, options: {Depth: 2}}]\n",
                          "bots[1].name: the display name 'alphabeta' (from bots/alphabeta) is "
                          "already used by bots[0]"),
    "bad option": ("bots: [bots/random, {path: bots/greedy, options: {Depth: [1, 2]}}]\n",
                   "bots[1].options.Depth: expected a number"),
    "bad name": ("name: a b\nbots: [bots/random, bots/greedy]\n", "name: expected a name"),
    "duplicate key": ("bots: [bots/random, bots/greedy]\nseed: 1\nseed: 2\n",
                      "duplicate key 'seed' at line 3"),
    "broken yaml": ("bots: [bots/random, bots/greedy\nseed: 1\n", "broken YAML:"),
    "empty file": ("", "the file is empty"),
}


@pytest.mark.parametrize("kind", list(ERRORS))
def test_each_mistake_is_one_clear_error_exit_2_nothing_written(workdir: Path, kind: str) -> None:
    text, expected = ERRORS[kind]
    path = write(workdir / "t.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"t.yaml: {expected}"), str(info.value)
    before = sorted(os.listdir(workdir))
    result = CliRunner().invoke(cli, ["run", "t.yaml"])
    assert result.exit_code == 2, result.output
    assert f"Error: t.yaml: {expected}" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert sorted(os.listdir(workdir)) == before  # no results folder, nothing else


def test_missing_file_is_an_error(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "absent.yaml"])
    assert result.exit_code == 2
    assert "absent.yaml: cannot read tournament file" in result.output


def test_paths_fall_back_to_the_tournament_files_folder(workdir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    sub = workdir / "elsewhere"
    sub.mkdir()
    monkeypatch.chdir(sub)
    cfg = load_config(write(workdir / "t.yaml", "bots: [bots/random, class/*]\n"))
    assert cfg.players == ("random", "s-greedy", "s-random")
    assert cfg.output == Path("results/t")
