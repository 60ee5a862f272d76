"""Tournament files: what a good file becomes, and one clear error (exit 2, nothing written)
for each kind of mistake."""

from __future__ import annotations

import dataclasses
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

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
    "restart mode": ("bots: [bots/random, bots/greedy]\nrestart: per-round\n",
                     "restart: expected per-game (a fresh bot process for every game) or "
                     "per-pairing"),
    "wrong type": ("bots: [bots/random, bots/greedy]\ngames_per_pairing: two\n",
                   "games_per_pairing: expected an integer in 2..1000000 games, got 'two'"),
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
    "unknown format": ("bots: [bots/random, bots/greedy]\nformat: ladder\n",
                       "format: expected one of round-robin, gauntlet, match, swiss, knockout, "
                       "got 'ladder'"),
    "too many swiss rounds": ("bots: [bots/random, bots/greedy]\n"
                              "format: {type: swiss, rounds: 2}\n",
                              "format.rounds: 2 players can play at most 1 Swiss rounds"),
    "unknown tie-break": ("bots: [bots/random, bots/greedy]\ntiebreaks: [buchholz, coin]\n",
                          "tiebreaks: unknown tie-break 'coin'"),
    "match of three": ("bots: [bots/random, bots/greedy, bots/alphabeta]\nformat: match\n",
                       "bots: a match needs exactly two players"),
    "unknown seed": ("bots: [bots/random, bots/greedy]\nformat: {type: gauntlet, seeds: [x]}\n",
                     "format.seeds[0]: no bot named 'x'"),
    "bad rounds": ("bots: [bots/random, bots/greedy]\nformat: {type: round-robin, rounds: 0}\n",
                   "format.rounds: expected an integer in 1..100000 rounds, got 0"),
    "bad openings": ("bots: [bots/random, bots/greedy]\nopenings: {random: -1}\n",
                     "openings.random: expected an integer in 0..40 turns, got -1"),
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


# --------------------------------------------------------------------------------------
# Absurd numbers (issue 10, point 5): every number has a range, checked before anything
# is built or started
# --------------------------------------------------------------------------------------

TWO_BOTS = "bots: [bots/random, bots/greedy]\n"
#: a later mistake in every absurd file: code that let the absurd value through stops here,
#: at configuration time, instead of starting 500 processes or building a 10**12-game list
TRIPWIRE = "executor: nowhere\n"
CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

# file text -> the message expected after "t.yaml: "
ABSURD = {
    "workers": ("workers: 100000000\n",
                f"workers: expected an integer in 1..{4 * CPUS} (at most 4 per CPU core), "
                f"got 100000000"),
    "games_per_pairing": ("games_per_pairing: 1000000000000\n",
                          "games_per_pairing: expected an integer in 2..1000000 games, "
                          "got 1000000000000"),
    "rounds": ("format: {type: round-robin, rounds: 1000000000}\n",
               "format.rounds: expected an integer in 1..100000 rounds, got 1000000000"),
    "total games": ("format: {type: round-robin, rounds: 100000}\ngames_per_pairing: 1000000\n",
                    "the tournament has 100,000,000,000 games (pairings x format.rounds x "
                    "games_per_pairing x variants), over the cap of 10,000,000"),
    "movetime": ("time: {movetime: 100000000000000000000000}\n",
                 "time.movetime: expected an integer in 1..3600000 ms, "
                 "got 100000000000000000000000"),
    "movetime float": ("time: {movetime: 1.0e+23}\n",
                       "time.movetime: expected an integer in 1..3600000 ms, got 1e+23"),
    "clock": ("time: {clock: '100000000000000+0'}\n",
              "time.clock: expected a base of 0.001..86400 s, got 100000000000000"),
    "clock increment": ("time: '60+100000'\n",
                        "time: expected an increment of 0..3600 s, got 100000"),
    "clock digits": (f"time: {{clock: '{'9' * 5000}+1'}}\n",
                     "time.clock: expected a base of 0.001..86400 s, got 9999999999... "
                     "(5000 digits)"),
    "handshake": ("time: {movetime: 100, handshake: 100000000000}\n",
                  "time.handshake: expected an integer in 1..600000 ms, got 100000000000"),
    "margin": ("time: {movetime: 100, margin: 100000000000}\n",
               "time.margin: expected an integer in 0..60000 ms, got 100000000000"),
    "wall_factor": ("time: {movetime: 100, charge: cpu, wall_factor: .inf}\n",
                    "time.wall_factor: expected a number from 1 to 100, got inf"),
    "seed": ("seed: 100000000000000000000000000000\n",
             "seed: expected an integer in 0..2147483647, got 100000000000000000000000000000"),
    "seed float": ("seed: 1.0e+29\n", "seed: expected an integer in 0..2147483647, got 1e+29"),
    "openings": ("openings: {random: 1000000000}\n",
                 "openings.random: expected an integer in 0..40 turns, got 1000000000"),
    "openings past placement": ("variants: [nine-mens-morris, six-mens-morris]\n"
                                "openings: {random: 13}\n",
                                "openings.random: expected at most 12 turns for six-mens-morris "
                                "(its placement phase: 2 x 6 men), got 13"),
    "variant draw rule": ("variants: [{base: nine-mens-morris, repetition: 0, "
                          "no_capture_draw: 1000000000000}]\n",
                          "variants[0].no_capture_draw: expected 0 (off) or a positive number "
                          "of turns up to 10000, got 1000000000000"),
    "name": (f"name: {'n' * 101}\n", "name: expected a name of letters, digits, '.', '_' or "
             "'-', at most 100 characters"),
}


@pytest.mark.parametrize("kind", list(ABSURD))
def test_absurd_numbers_are_one_line_errors_exit_2_nothing_written(workdir: Path,
                                                                   kind: str) -> None:
    text, expected = ABSURD[kind]
    write(workdir / "t.yaml", TWO_BOTS + text + TRIPWIRE)
    before = sorted(os.listdir(workdir))
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["run", "t.yaml"])
    assert time.perf_counter() - started < 1.0  # counted, never built
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: t.yaml: {expected}"), result.output
    assert len(result.output.strip().splitlines()) == 1
    assert sorted(os.listdir(workdir)) == before


# isolation limits: parsed after the executor, so no tripwire (the runner would start)
LIMITS = {"memory_mb": (1000000000000, "16..65536 MiB"), "pids": (100000000, "1..4096"),
          "open_files": (10**9, "16..65536"), "file_size_mb": (10**12, "1..65536 MiB"),
          "cpu_s": (10**12, "1..86400 s"), "tmp_mb": (10**12, "1..16384 MiB")}


@pytest.mark.parametrize("key", list(LIMITS))
def test_absurd_isolation_limits_are_refused(workdir: Path, key: str) -> None:
    value, allowed = LIMITS[key]
    write(workdir / "t.yaml",
          TWO_BOTS + f"isolation: {{level: none, limits: {{{key}: {value}}}}}\n")
    before = sorted(os.listdir(workdir))
    result = CliRunner().invoke(cli, ["run", "t.yaml"])
    assert result.exit_code == 2, result.output
    assert result.output == (f"Error: t.yaml: isolation.limits.{key}: expected an integer in "
                             f"{allowed}, got {value}\n")
    assert sorted(os.listdir(workdir)) == before


def test_workers_override_is_checked_as_an_option(workdir: Path) -> None:
    write(workdir / "t.yaml", TWO_BOTS + TRIPWIRE)
    for args in (["-j", "100000000"], ["--workers", str(4 * CPUS + 1)]):
        result = CliRunner().invoke(cli, ["run", "t.yaml", *args])
        assert result.exit_code == 2
        assert "--workers" in result.output and "range" in result.output, result.output
    with pytest.raises(ConfigError, match=r"^--workers: expected an integer in 1\.\."):
        load_config(workdir / "t.yaml", workers=100_000_000)


LARGEST = {"format": "{type: match, rounds: 5}", "games_per_pairing": "1000000",
           "seed": "2147483647", "openings": "{random: 18}",
           "time": "{movetime: 3600000, clock: '86400+3600', handshake: 600000, margin: 60000}",
           "workers": str(4 * CPUS)}
#: one step past the largest value of each key, and the key path named
ONE_MORE = [("format", "{type: match, rounds: 100001}", "format.rounds"),
            ("games_per_pairing", "1000002", "games_per_pairing"),
            ("seed", "2147483648", "seed"), ("openings", "{random: 19}", "openings.random"),
            ("time", "{movetime: 3600001}", "time.movetime"),
            ("time", "{clock: '86400.001+0'}", "time.clock"),
            ("time", "{clock: '60+3600.001'}", "time.clock"),
            ("time", "{movetime: 1, handshake: 600001}", "time.handshake"),
            ("time", "{movetime: 1, margin: 60001}", "time.margin"),
            ("workers", str(4 * CPUS + 1), "workers")]


def test_the_largest_values_are_accepted_and_one_more_is_refused(workdir: Path) -> None:
    text = TWO_BOTS + "".join(f"{k}: {v}\n" for k, v in LARGEST.items())
    cfg = load_config(write(workdir / "t.yaml", text))
    assert cfg.games_per_pairing == 1_000_000 and cfg.format.rounds == 5  # 5,000,000 games
    assert cfg.seed == 2**31 - 1 and cfg.opening_turns == 18 and cfg.workers == 4 * CPUS
    tc = cfg.time_control
    assert (tc.movetime_ms, tc.base_ms, tc.increment_ms) == (3_600_000, 86_400_000, 3_600_000)
    assert (tc.handshake_ms, tc.margin_ms) == (600_000, 60_000)
    for key, value, where in ONE_MORE:
        changed = {**LARGEST, key: value}
        if key == "format":
            changed["games_per_pairing"] = "2"
        path = write(workdir / "t.yaml",
                     TWO_BOTS + "".join(f"{k}: {v}\n" for k, v in changed.items()))
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert str(info.value).startswith(f"t.yaml: {where}: expected "), str(info.value)


def test_output_naming_a_file_names_the_tournament_file(workdir: Path) -> None:
    write(workdir / "taken", "not a folder")
    for output, expected in (("taken", "taken cannot be a results folder: it is a file"),
                             ("taken/sub", "taken/sub cannot be a results folder: "
                                           "taken is a file")):
        write(workdir / "t.yaml", TWO_BOTS + f"output: {output}\n")
        before = sorted(os.listdir(workdir))
        result = CliRunner().invoke(cli, ["run", "t.yaml"])
        assert result.exit_code == 2
        assert result.output == f"Error: t.yaml: output: {expected}\n"
        assert sorted(os.listdir(workdir)) == before


@pytest.mark.parametrize("text,expected", [
    ("seed: !!int nine\n", "broken YAML: a value that cannot be read"),
    ("seed: 2024-13-45\n", "broken YAML: a value that cannot be read"),
    ("bots: " + "[" * 5000 + "\n", "broken YAML"),
])
def test_values_yaml_cannot_build_are_one_line_errors(workdir: Path, text: str,
                                                      expected: str) -> None:
    write(workdir / "t.yaml", text)
    result = CliRunner().invoke(cli, ["run", "t.yaml"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: t.yaml: {expected}")


def test_a_tournament_file_that_is_not_a_regular_file_is_refused(workdir: Path) -> None:
    os.mkfifo(workdir / "t.yaml")
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(
        CliRunner().invoke(cli, ["run", "t.yaml"])), daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():  # unblock the reader before failing
        os.close(os.open(workdir / "t.yaml", os.O_WRONLY | os.O_NONBLOCK))
        thread.join(5)
        pytest.fail("arena run blocked on a FIFO")
    assert results[0].exit_code == 2
    assert results[0].output == "Error: t.yaml: not a regular file\n"


# --------------------------------------------------------------------------------------
# The same ranges on the command line
# --------------------------------------------------------------------------------------

#: each command also names an unknown variant, checked after the options: code that let the
#: absurd option through fails there (without the option's name) instead of playing
CLI_ABSURD = [
    (["play", "bots/random", "bots/random"], ["--movetime", "100000000000000000000000"],
     "--movetime"),
    (["play", "bots/random", "bots/random"], ["--handshake", "10000000000"], "--handshake"),
    (["play", "bots/random", "bots/random"], ["--margin", "10000000000"], "--margin"),
    (["play", "bots/random", "bots/random"], ["--clock", "100000000000000+0"], "--clock"),
    (["check", "bots/random"], ["--movetime", "100000000000000000000000"], "--movetime"),
    (["check", "bots/random"], ["--clock", "60+100000"], "--clock"),
    (["sprt", "bots/random", "bots/greedy"], ["--movetime", "10000000000"], "--movetime"),
    (["sprt", "bots/random", "bots/greedy"], ["--seed", "100000000000000000000000000000"],
     "--seed"),
    (["sprt", "bots/random", "bots/greedy"], ["--max-pairs", "1000000000000"], "--max-pairs"),
    (["sprt", "bots/random", "bots/greedy"], ["--opening-turns", "1000000000"],
     "--opening-turns"),
    (["sprt", "bots/random", "bots/greedy"], ["-j", "100000000"], "--workers"),
    (["sprt", "bots/random", "bots/greedy"], ["--elo1", "1e300"], "--elo1"),
]


@pytest.mark.parametrize("command,option,name", CLI_ABSURD,
                         ids=[f"{c[0]} {o[0]}" for c, o, _ in CLI_ABSURD])
def test_absurd_command_line_numbers_exit_2_naming_the_option(
        workdir: Path, command: list[str], option: list[str], name: str) -> None:
    before = sorted(os.listdir(workdir))
    result = CliRunner().invoke(cli, [*command, *option, "--variant", "nope"])
    assert result.exit_code == 2, result.output
    assert name in result.output, result.output
    assert "unknown variant" not in result.output
    assert sorted(os.listdir(workdir)) == before


def test_time_controls_refuse_out_of_range_values_without_overflowing() -> None:
    from arena.clock import TimeControl

    for text, key in (("9" * 5000, "movetime_ms"), ("9" * 400 + "+1", "base_ms"),
                      ("1+" + "9" * 400, "increment_ms"), ("3600001", "movetime_ms"),
                      ("0.0001+0", "base_ms")):
        with pytest.raises(ConfigError) as info:
            TimeControl.parse(text)
        assert info.value.path == key and len(str(info.value)) < 100
    for fields in ({"movetime_ms": 10**23}, {"movetime_ms": 1.5}, {"margin_ms": 10**9},
                   {"handshake_ms": True}, {"base_ms": 10**17, "movetime_ms": None},
                   {"wall_factor": float("nan")}):
        with pytest.raises(ConfigError):
            TimeControl(**fields)


def test_sprt_opening_turns_stay_within_the_variants_placement(workdir: Path) -> None:
    """Three men's morris places 6 men: more random opening turns would play its game."""
    result = CliRunner().invoke(cli, ["sprt", "bots/random", "bots/greedy", "--variant",
                                      "three-mens-morris", "--opening-turns", "7"])
    assert result.exit_code == 2, result.output
    assert "--opening-turns: at most 6 for three-mens-morris" in result.output


# -- opening books ------------------------------------------------------------------------

BOOKED = """\
name: booked
bots: [bots/random, bots/greedy]
variants: [nine-mens-morris, six-mens-morris]
games_per_pairing: 6
openings: {file: book.txt, order: sequential}
"""


def test_an_opening_book_is_read_from_beside_the_tournament_file(workdir: Path) -> None:
    (workdir / "t").mkdir()
    write(workdir / "t" / "book.txt", "# three openings\na1 d7\nd1 g7  # a comment\n\nb2\n")
    config = load_config(write(workdir / "t" / "booked.yaml", BOOKED))
    assert config.book is not None and config.opening_turns == 0
    assert config.book.path == "t/book.txt" and config.book.order == "sequential"
    assert config.book.books["six-mens-morris"] == (("a1", "d7"), ("d1", "g7"), ("b2",))
    slots = config.schedule()
    firsts = [s.opening for s in slots if s.game == 0 and s.variant.name == "six-mens-morris"]
    assert firsts == [("a1", "d7"), ("d1", "g7"), ("b2",)]  # the meeting's pairs, in order
    assert all(a.opening == b.opening for a, b in zip(slots[::2], slots[1::2]))
    # random order: the same lines, shuffled by the tournament's seed
    shuffled = load_config(write(workdir / "t" / "booked.yaml",
                                 BOOKED.replace("sequential", "random") + "seed: 4\n"))
    got = [s.opening for s in shuffled.schedule() if s.game == 0][::2]
    assert sorted(got) == sorted(firsts)
    assert shuffled.normalised()["openings"] == {
        "file": "t/book.txt", "order": "random", "sha256": config.book.sha256}


@pytest.mark.parametrize("book,openings,message", [
    ("a1\nc3 d7\n", "{file: book.txt}",
     r"booked.yaml: book.txt:2: turn 1 \('c3'\) is not legal in six-mens-morris"),
    ("a1\n", "{file: missing.txt}", r"missing.txt: no such opening book"),
    ("a1\n", "{file: book.txt, order: shuffled}",
     r"openings.order: expected one of sequential, random, got 'shuffled'"),
    ("a1\n", "{file: book.txt, random: 2}", r"openings: random openings or a book, not both"),
    ("a1\n", "{random: 2, order: random}", r"openings.order: only a book has an order"),
    ("# nothing\n", "{file: book.txt}", r"no opening in the book"),
])
def test_a_bad_opening_book_is_one_line(workdir: Path, book: str, openings: str,
                                        message: str) -> None:
    write(workdir / "book.txt", book)
    path = write(workdir / "booked.yaml", BOOKED.replace(
        "{file: book.txt, order: sequential}", openings))
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert "\n" not in str(info.value)


def test_a_changed_book_is_a_change_a_moved_one_is_not(workdir: Path) -> None:
    from arena.tournament import compare_configs

    write(workdir / "book.txt", "a1 d7\nd1\n")
    path = write(workdir / "booked.yaml", BOOKED)
    stored = load_config(path).normalised()
    (workdir / "elsewhere").mkdir()
    write(workdir / "elsewhere" / "book.txt", "a1 d7\nd1\n")
    moved = load_config(write(workdir / "booked.yaml",
                              BOOKED.replace("book.txt", "elsewhere/book.txt")))
    assert compare_configs(stored, moved).refused == ()
    write(workdir / "book.txt", "a1 d7\nd1 a4\n")
    assert compare_configs(stored, load_config(write(workdir / "booked.yaml", BOOKED))
                           ).refused == ("openings",)


def test_a_bot_is_not_scheduled_in_a_variant_its_bot_yaml_does_not_list(workdir: Path) -> None:
    shutil.copytree(ROOT / "bots" / "random", workdir / "picky")
    manifest = workdir / "picky" / "bot.yaml"
    manifest.write_text(manifest.read_text().replace("name: random", "name: picky")
                        + "variants: [nine-mens-morris, lasker-morris]\n")
    text = "bots: [picky, bots/greedy]\nvariants: [nine-mens-morris, six-mens-morris]\n"
    with pytest.raises(ConfigError, match=r"t.yaml: variants: picky plays only "
                                          r"nine-mens-morris, lasker-morris \(its bot.yaml "
                                          r"'variants:'\), not six-mens-morris"):
        load_config(write(workdir / "t.yaml", text))
    assert load_config(write(workdir / "t.yaml", text.replace("six-mens-morris", "lasker"))
                       ).players == ("picky", "greedy")
