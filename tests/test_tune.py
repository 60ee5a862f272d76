"""``arena tune`` (issue 29): fishtest's SPSA formulas and conventions, the seeded
perturbations and rounding, the checks of --param against the bot's declarations, and real
runs of tests/tune_bots/target (greedy, with random moves growing with the distance of its
options from a hidden target): tuned to the target within a stated tolerance in a stated
number of games, from a fixed start, from a random (noisy) start, and with two parameters of
different scales; resumed exactly after SIGKILL; changed settings refused; the report."""

from __future__ import annotations

import json
import math
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from arena.cli import cli
from arena.errors import ConfigError
from arena.records import read_records
from arena.tuning.spsa import ALPHA, GAMMA, Param, Spsa, parse_param, stochastic_round

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).with_name("arena"))
TARGET = f"{ROOT}/tests/tune_bots/target"
#: the target bot's hidden optimum and its scales (tests/tune_bots/target/bot.py)
BEST_X, BEST_Y = 60, 700
#: how close a tuned value must come: a sixth of the distance at which every move is random
#: (60 for X, 600 for Y), i.e. at most one move in six random
TOLERANCE_X, TOLERANCE_Y = 10, 100


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quick starts (the sandbox is tested elsewhere; the target bot loads bots/greedy from
    outside its folder); the environment reaches subprocesses."""
    monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")


# -- the formulas, pure ---------------------------------------------------------------------


def test_parse_param_reads_fishtests_fields_with_its_default_r_end() -> None:
    assert parse_param("MenWeight=100,0,400,20") == Param("MenWeight", 100, 0, 400, 20, 0.002)
    assert parse_param(" X = 20.5 , 0, 100, 8, 0.15") == Param("X", 20.5, 0, 100, 8, 0.15)
    assert parse_param("Use Book=1,0,1,1,0").r_end == 0.0  # names may hold spaces


@pytest.mark.parametrize("text, message", [
    ("X", "expected NAME=START,MIN,MAX,C_END[,R_END]"),
    ("X=1,2,3", "expected NAME=START,MIN,MAX,C_END[,R_END]"),
    ("X=1,2,3,4,5,6", "expected NAME=START,MIN,MAX,C_END[,R_END]"),
    ("=1,0,10,1", "expected NAME"),
    ("X=1,,10,1", "expected NAME"),
    ("X=one,0,10,1", "--param X: START is not a number: 'one'"),
    ("X=nan,0,10,1", "START must be a finite number"),
    ("X=1,0,inf,1", "MAX must be a finite number"),
    ("X=1,0,1e300,1", "MAX must be a finite number within +-1e+09"),
    ("X=1,0.5,10,1", "MIN must be a whole number"),
    ("X=1,10,10,1", "MIN must be below MAX"),
    ("X=11,0,10,1", "START 11 is outside MIN..MAX (0..10)"),
    ("X=1,0,10,0", "C_END must be above 0 and at most MAX - MIN (10)"),
    ("X=1,0,10,11", "C_END must be above 0"),
    ("X=1,0,10,1,-0.1", "R_END must be from 0 to 1e+06"),
    ("X=1,0,10,1,1e7", "R_END must be from 0 to 1e+06"),
])
def test_parse_param_refuses_bad_text_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_param(text)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_schedule_is_fishtests() -> None:
    """c = c_end N^gamma, a = r_end c_end^2 (A + N)^alpha, A = floor(0.1 N); c_k and
    R_k = a_k / c_k^2 reach c_end and r_end at the last pair."""
    p = Param("X", 50, 0, 100, 4, 0.002)
    spsa = Spsa((p,), iterations=250)
    n = 250
    assert (spsa.alpha, spsa.gamma, spsa.big_a) == (ALPHA, GAMMA, 25) == (0.602, 0.101, 25)
    assert spsa.c0(p) == pytest.approx(4 * n ** 0.101)
    assert spsa.a0(p) == pytest.approx(0.002 * 16 * (25 + n) ** 0.602)
    (c, ), (a, ) = spsa.gains(n - 1)
    assert c == pytest.approx(4) and a / c ** 2 == pytest.approx(0.002)
    (c, ), (a, ) = spsa.gains(0)  # fishtest's first iteration: iter_local 1
    assert c == pytest.approx(spsa.c0(p)) and a == pytest.approx(spsa.a0(p) / 26 ** 0.602)
    # a batch of pairs: one perturbation per iteration, the schedule counted in pairs
    batched = Spsa((p,), iterations=50, pairs=5)
    assert (batched.total_pairs, batched.big_a, batched.c0(p)) == (n, 25, spsa.c0(p))
    step = batched.plan((50.0,), 3, seed=1)
    assert step.k == 10 and step.c == spsa.gains(10)[0] and step.a == spsa.gains(10)[1]


def test_plan_and_update() -> None:
    p, q = Param("X", 50, 0, 100, 4, 0.5), Param("Y", 999.5, 0, 1000, 10, 0.5)
    spsa = Spsa((p, q), iterations=20)
    step = spsa.plan(spsa.start(), 1, seed=7)
    assert step == spsa.plan(spsa.start(), 1, seed=7)  # a function of the seed and iteration
    assert step.iteration == 1 and step.k == 0 and set(step.flips) <= {-1, 1}
    for t, c, f, plus, minus, param in zip(spsa.start(), step.c, step.flips, step.plus,
                                           step.minus, spsa.params):
        assert plus == param.clip(t + c * f) and minus == param.clip(t - c * f)
    assert 1000 in (step.plus[1], step.minus[1])  # Y + c is clipped to its MAX
    for value, played in zip(step.plus + step.minus, step.plus_values + step.minus_values):
        assert played in (math.floor(value), math.ceil(value))
    moved = spsa.update(spsa.start(), step, 3)
    assert moved[0] == pytest.approx(50 + step.a[0] / step.c[0] * 3 * step.flips[0])
    assert spsa.update(spsa.start(), step, 0) == spsa.start()
    far = spsa.update(spsa.start(), step, 10 ** 6)  # clipped to the bounds
    assert all(param.min <= t <= param.max for t, param in zip(far, spsa.params))
    # the trajectory is a pure function of the seed and the results
    results = [2, -1, 0, 1]
    theta, manual = spsa.start(), [spsa.start()]
    for i, r in enumerate(results, start=1):
        theta = spsa.update(theta, spsa.plan(theta, i, 7), r)
        manual.append(theta)
    assert spsa.trajectory(7, results) == manual
    assert spsa.trajectory(8, results) != manual  # other flips


def test_flips_and_rounding_are_fair() -> None:
    """Each flip is +1 half the time, independently per parameter, and the stochastic
    rounding plays a value ``v`` on average (fishtest's ``floor(v + U[0, 1))``)."""
    spsa = Spsa((Param("X", 50.3, 0, 100, 0.001, 0), Param("Y", 50, 0, 100, 1, 0)), 4000)
    steps = [spsa.plan(spsa.start(), i, seed=3) for i in range(1, 4001)]
    ups = [sum(s.flips[j] == 1 for s in steps) for j in (0, 1)]
    assert all(1850 < u < 2150 for u in ups)
    same = sum(s.flips[0] == s.flips[1] for s in steps)
    assert 1850 < same < 2150
    played = [s.plus_values[0] for s in steps] + [s.minus_values[0] for s in steps]
    assert set(played) == {50, 51}
    assert sum(played) / len(played) == pytest.approx(50.3, abs=0.03)
    rng = random.Random(1)
    assert sum(stochastic_round(-2.75, rng.random()) for _ in range(20000)) / 20000 \
        == pytest.approx(-2.75, abs=0.02)


def test_spsa_finds_the_top_of_a_noisy_hill_without_games() -> None:
    """The schedule's own check, in a second: two parameters of scales 1:10 from bad
    starts, where a pair's result is +-1 per game with the chance of a logistic model of the
    distance; 19 of 20 seeds end within the tolerance after 150 pairs."""
    spsa = Spsa((Param("X", 15, 0, 100, 8, 0.15), Param("Y", 150, 0, 1000, 80, 0.15)), 150)

    def strength(x: float, y: float) -> float:
        return -math.hypot((x - BEST_X) / 60, (y - BEST_Y) / 600)

    good = 0
    for seed in range(20):
        rng = random.Random(seed)
        theta = spsa.start()
        for i in range(1, spsa.iterations + 1):
            step = spsa.plan(theta, i, seed)
            diff = strength(*step.plus_values) - strength(*step.minus_values)
            win = 1 / (1 + math.exp(-4 * diff))
            result = sum(1 if rng.random() < win else -1 for _ in range(2))
            theta = spsa.update(theta, step, result)
        good += abs(theta[0] - BEST_X) <= TOLERANCE_X and abs(theta[1] - BEST_Y) <= TOLERANCE_Y
    assert good >= 19


# -- real runs against the known optimum ----------------------------------------------------


def _tune(out: Path, *params: str, bot: str = f"{TARGET}:Y={BEST_Y}", iterations: int = 50,
          extra: tuple[str, ...] = ()) -> tuple[object, dict[str, float]]:
    """``arena tune`` of the target bot on three men's morris (games of a few turns; the bot
    answers at once, the generous movetime only guards a loaded machine); the CLI result and
    the last ``theta`` of the trajectory."""
    args = ["tune", bot, *[a for p in params for a in ("--param", p)], "--iterations",
            str(iterations), "--variant", "three-mens-morris", "--movetime", "2000",
            "--opening-turns", "2", "--seed", "1", "-j", "2", "--out", str(out), *extra]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    lines = (out / "trajectory.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    assert last["iteration"] == iterations and len(lines) == iterations + 1
    return res, last["theta"]


def test_tunes_one_parameter_to_the_known_optimum(tmp_path: Path) -> None:
    """X from 20 (two moves in three random) to 60 +- 10 in 30 iterations: 60 games."""
    out = tmp_path / "run"
    res, theta = _tune(out, "X=20,0,100,10,0.15", iterations=30, extra=("--pairs", "1"))
    assert abs(theta["X"] - BEST_X) <= TOLERANCE_X, theta
    records = read_records(out / "games.jsonl")
    assert len(records) == 60 and len({r.game_id for r in records}) == 60
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert [(p["iteration"], p["pair"]) for p in pairs] == [(i, 1) for i in range(1, 31)]
    # the records hold the values each side played, and the pair lines say so
    by_id = {r.game_id: r for r in records}
    for p in pairs:
        a, b = (by_id[g] for g in p["games"])
        assert a.white.name.endswith("+") and a.white.options["X"] == str(p["plus"]["X"])
        assert a.black.options["X"] == str(p["minus"]["X"]) == b.white.options["X"]
        scores = [a.score("white"), b.score("black")]
        assert p["plus_wdl"] == [scores.count(1.0), scores.count(0.5), scores.count(0.0)]
        assert p["result"] == scores.count(1.0) - scores.count(0.0)
    assert "done: 30 iterations, 60 games" in res.output  # type: ignore[attr-defined]
    assert f"X {theta['X']:.2f} -> {round(theta['X'])} (start 20)" in res.output  # type: ignore[attr-defined]
    # the report: a PNG and a bots entry a tournament file takes as it is
    assert (out / "tune.png").read_bytes().startswith(b"\x89PNG")
    values = yaml.safe_load((out / "tuned.yaml").read_text())
    entry = values["bots"][0]
    assert entry["options"] == {"Y": BEST_Y, "X": round(theta["X"])}
    # absolute: the file is read from wherever it is used (issue 39: relative to the folder
    # the tuning ran in, it named nothing from another)
    assert entry["path"] == os.path.abspath(TARGET)
    assert entry["name"] == "target-tuned"
    tournament = tmp_path / "t.yaml"
    tournament.write_text(yaml.safe_dump({"name": "t", "variants": ["three-mens-morris"],
                                          "bots": values["bots"] + [f"{ROOT}/bots/random"]}))
    from arena.config import load_config

    elsewhere = os.getcwd()
    os.chdir(tmp_path)  # another folder than the one the tuning ran in
    try:
        config = load_config(tournament)
    finally:
        os.chdir(elsewhere)
    assert config.bots[0].options == {"Y": str(BEST_Y), "X": str(round(theta["X"]))}
    res = CliRunner().invoke(cli, ["rate", str(out)])  # the games rate like any others
    assert res.exit_code == 0 and "target-tuned" not in res.output and "+" in res.output


@pytest.mark.slow
def test_tunes_from_a_noisy_start(tmp_path: Path) -> None:
    """X from a start drawn at random (not a round number, from the other side of the
    target than above) to 60 +- 10 in 40 iterations of 1 pair: 80 games."""
    start = round(random.Random(2039).uniform(0, 100), 2)
    assert abs(start - BEST_X) >= 25 and start > BEST_X
    _, theta = _tune(tmp_path / "run", f"X={start},0,100,10,0.15", iterations=40)
    assert abs(theta["X"] - BEST_X) <= TOLERANCE_X, (start, theta)


@pytest.mark.slow
def test_tunes_two_parameters_of_different_scales(tmp_path: Path) -> None:
    """X (0..100) from 25 and Y (0..1000, ten times the scale) from 300, c_end in
    proportion, one r_end: both within their tolerance (10 and 100) in 60 iterations of 1
    pair: 120 games."""
    _, theta = _tune(tmp_path / "run", "X=25,0,100,8,0.15", "Y=300,0,1000,80,0.15",
                     bot=TARGET, iterations=60)
    assert abs(theta["X"] - BEST_X) <= TOLERANCE_X, theta
    assert abs(theta["Y"] - BEST_Y) <= TOLERANCE_Y, theta


# -- the folder: resume after SIGKILL, changed settings, the files ---------------------------


def _command(out: Path, *extra: str, seed: str = "3", iterations: str = "6",
             pairs: str = "2", param: str = "X=20,0,100,10,0.15") -> list[str]:
    return ["tune", f"{TARGET}:Y={BEST_Y}", "--param", param, "--iterations", iterations,
            "--pairs", pairs, "--variant", "three-mens-morris", "--movetime", "2000",
            "--opening-turns", "2", "--seed", seed, "-j", "2", "--out", str(out), *extra]


def _pair_keys(out: Path) -> list[tuple[int, int]]:
    return [(p["iteration"], p["pair"]) for p in
            map(json.loads, (out / "pairs.jsonl").read_text().splitlines())]


def test_resumes_exactly_after_sigkill(tmp_path: Path) -> None:
    """A real ``arena tune`` killed by its pid (SIGKILL: no handler runs) mid-iteration,
    then run again: every pair is in pairs.jsonl once, in order, and the run's files are
    those of a run never interrupted (the games are a function of their seeds)."""
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    proc = subprocess.Popen([ARENA, *_command(killed)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        pairs = killed / "pairs.jsonl"
        while not (pairs.exists() and pairs.read_bytes().count(b"\n") >= 3):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no pairs saved in 120 s"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    counted = len(_pair_keys(killed))
    assert 3 <= counted < 12
    res = CliRunner().invoke(cli, _command(killed))
    assert res.exit_code == 0, res.output
    assert f"resuming: {counted} pairs ({counted // 2} iterations) already in" in res.output
    expected = [(i, p) for i in range(1, 7) for p in (1, 2)]
    assert _pair_keys(killed) == expected  # none lost, none twice, in order
    ids = [r.game_id for r in read_records(killed / "games.jsonl")]
    assert sorted(ids) == sorted({f"tune-3-{i}-{p}{g}" for i, p in expected for g in "ab"})
    res = CliRunner().invoke(cli, _command(whole))
    assert res.exit_code == 0, res.output
    for name in ("pairs.jsonl", "trajectory.jsonl"):
        assert (killed / name).read_text() == (whole / name).read_text(), name


def test_sigint_stops_at_once_and_saves_no_abandoned_game(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen([ARENA, *_command(out, iterations="40")], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not ((out / "pairs.jsonl").exists()
                   and (out / "pairs.jsonl").read_bytes().count(b"\n") >= 2):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no pairs saved in 120 s"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, output
    done = json.loads((out / "trajectory.jsonl").read_text().splitlines()[-1])["iteration"]
    assert f"interrupted after {done} iterations: run the same command again to resume" \
        in output
    assert all(r.termination != "error" for r in read_records(out / "games.jsonl"))
    assert not (out / "tune.png").exists()


def test_refuses_changed_settings_and_resumes_the_same_ones(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, _command(out, iterations="2", pairs="1"))
    assert res.exit_code == 0, res.output
    files = {name: (out / name).read_bytes() for name in
             ("tune.json", "games.jsonl", "pairs.jsonl", "trajectory.jsonl", "tuned.yaml")}
    # the same command again: nothing to play, the same result
    res = CliRunner().invoke(cli, _command(out, iterations="2", pairs="1"))
    assert res.exit_code == 0 and "resuming: 2 pairs (2 iterations)" in res.output, res.output
    assert all((out / n).read_bytes() == data for n, data in files.items())
    # a torn last pair line (a crash in the middle of its write) and a lost trajectory:
    # the pair is counted again from its saved games, nothing is played, the files come back
    pairs = out / "pairs.jsonl"
    pairs.write_bytes(files["pairs.jsonl"][:-20])
    (out / "trajectory.jsonl").unlink()
    res = CliRunner().invoke(cli, _command(out, iterations="2", pairs="1"))
    assert res.exit_code == 0, res.output
    assert "pairs.jsonl: removed 1 unreadable line at its end" in res.output
    assert "resuming: 1 pairs (1 iterations)" in res.output
    assert all((out / n).read_bytes() == data for n, data in files.items())
    for extra, changed in [({"iterations": "3", "pairs": "1"}, "iterations"),
                           ({"iterations": "2", "pairs": "2"}, "pairs"),
                           ({"iterations": "2", "pairs": "1", "seed": "4"}, "seed"),
                           ({"iterations": "2", "pairs": "1", "param": "X=21,0,100,10,0.15"},
                            "params")]:
        res = CliRunner().invoke(cli, _command(out, **extra))
        assert res.exit_code == 2, res.output
        assert (f"holds a tuning run with other settings (changed: {changed}); use --fresh"
                in res.output), res.output
        assert len(res.output.strip().splitlines()) == 1
    res = CliRunner().invoke(cli, _command(out, "--movetime", "1999", iterations="2",
                                           pairs="1"))  # the later --movetime counts
    assert res.exit_code == 2 and "changed: time_control" in res.output, res.output
    assert all((out / n).read_bytes() == data for n, data in files.items())
    res = CliRunner().invoke(cli, _command(out, "--fresh", iterations="1", pairs="1"))
    assert res.exit_code == 0 and "resuming" not in res.output, res.output
    assert _pair_keys(out) == [(1, 1)]
    res = CliRunner().invoke(cli, _command(out, "--restart", iterations="2", pairs="1"))
    assert res.exit_code == 0 and "resuming" not in res.output, res.output  # the old name
    assert "warning: --restart is now called --fresh" in res.output
    assert _pair_keys(out) == [(1, 1), (2, 1)]


def test_against_a_fixed_opponent(tmp_path: Path) -> None:
    """Each side plays a colour-swapped pair against the opponent (four games, one
    opening); the result is + 's wins - losses less - 's."""
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, _command(out, "--opponent", f"{ROOT}/bots/random",
                                           iterations="3", pairs="1"))
    assert res.exit_code == 0, res.output
    assert "each against random" in res.output.splitlines()[0]
    by_id = {r.game_id: r for r in read_records(out / "games.jsonl")}
    lines = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert len(by_id) == 12 and len(lines) == 3
    for p in lines:
        a, b, c, d = (by_id[g] for g in p["games"])
        assert [g[-1] for g in p["games"]] == list("abcd")
        assert a.white.name.endswith("+") and b.black.name.endswith("+")
        assert c.white.name.endswith("-") and d.black.name.endswith("-")
        assert {a.black.name, b.white.name, c.black.name, d.white.name} == {"random"}
        assert len({tuple(r.opening) for r in (a, b, c, d)}) == 1
        assert (a.pair, b.pair, c.pair, d.pair) == (1, 1, 2, 2)
        plus = [a.score("white"), b.score("black")]
        minus = [c.score("white"), d.score("black")]
        assert p["plus_wdl"] == [plus.count(1.0), plus.count(0.5), plus.count(0.0)]
        assert p["minus_wdl"] == [minus.count(1.0), minus.count(0.5), minus.count(0.0)]
        assert p["result"] == (plus.count(1.0) - plus.count(0.0)) - (
            minus.count(1.0) - minus.count(0.0))


def test_progress_line_and_iteration_lines(tmp_path: Path) -> None:
    import io

    from arena.clock import TimeControl
    from arena.manifest import load_bot
    from arena.tuning import TuneRun, run_tune
    from arena.variants import get_variant

    run = TuneRun(load_bot(TARGET), Spsa((parse_param("X=20,0,100,10,0.15"),), 2),
                  get_variant("three-mens-morris"), TimeControl(movetime_ms=2000),
                  opening_turns=2)
    out, console = io.StringIO(), io.StringIO()
    outcome = run_tune(run, tmp_path / "run", workers=2, seed=1, out=out, console=console,
                       live=True, report=False)
    assert outcome.status == 0 and outcome.iterations == 2 and not outcome.report
    shown = console.getvalue()
    assert shown.count("\r\x1b[K[iteration ") >= 6  # after each game and each iteration
    assert "[iteration 2/2, games 4/4]" in shown and f"X {outcome.theta[0]:.2f}" in shown
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("SPSA tune-target: 2 iterations of 1 pair (4 games)")
    assert lines[1].startswith("  X: start 20 in 0..100, c ")
    steps = [line for line in lines if line.startswith("iteration")]
    assert len(steps) == 2 and steps[1].endswith(f"X {outcome.theta[0]:.2f}")
    assert not (tmp_path / "run" / "tune.png").exists()


# -- bad input: one line, exit status 2, nothing written -------------------------------------


@pytest.mark.parametrize("args, message", [
    (["--param", "Quite=1,0,1,1"], "Quite: tests/tune_bots/target declares no such option "
                                   "(did you mean Quiet?"),
    (["--param", "Quiet=1,0,1,1"], "only spin options can be tuned; "
                                   "tests/tune_bots/target declares it check true/false"),
    (["--param", "X=20,0,200,8"], "MAX 200 is out of range for tests/tune_bots/target "
                                  "(spin 0..100)"),
    (["--param", "Y=20,-5,200,8"], "MIN -5 is out of range"),
    (["--param", "X=20,0,100"], "expected NAME=START,MIN,MAX,C_END[,R_END]"),
    (["--param", "X=1e400,0,100,8"], "START must be a finite number"),
    (["--param", "X=20,0,100,8", "--param", "x=20,0,100,8"], "--param: X is tuned twice (also as x)"),
    (["--param", "X=20,0,100,8", "--iterations", "1000000", "--pairs", "1000"],
     "at most 10,000,000 games in a run"),
    (["--param", "X=20,0,100,8", "--opening-turns", "7"], "--opening-turns: at most 6"),
    ([], "give at least one --param"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          args: list[str], message: str) -> None:
    monkeypatch.chdir(ROOT)  # the messages name the bot relative to the current directory
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["tune", "tests/tune_bots/target", "--variant",
                                   "three-mens-morris", "--out", str(out), *args])
    assert res.exit_code == 2, res.output
    assert message in res.output and len(res.output.strip().splitlines()) == 1, res.output
    assert not out.exists()


def test_bad_input_about_bots_and_folders(tmp_path: Path) -> None:
    def run(*args: str) -> str:
        res = CliRunner().invoke(cli, ["tune", *args])
        assert res.exit_code == 2, res.output
        assert len(res.output.strip().splitlines()) == 1, res.output
        return res.output

    assert "tuned and given a fixed value" in run(f"{TARGET}:X=5", "--param", "X=20,0,100,8",
                                                  "--out", str(tmp_path / "a"))
    assert "give a BOT to tune (or --report DIR)" in run("--param", "X=20,0,100,8")
    assert "--report DIR takes no BOT" in run(TARGET, "--report", str(tmp_path))
    assert "holds no tuning run (no tune.json)" in run("--report", str(tmp_path))
    assert "--iterations" in CliRunner().invoke(cli, ["tune", TARGET, "--param", "X=1,0,9,1",
                                                      "--iterations", "0"]).output
    sprt = tmp_path / "sprt"
    sprt.mkdir()
    (sprt / "sprt.json").write_text("{}")
    assert "holds an SPRT run: choose another --output" in run(TARGET, "--param", "X=20,0,100,8",
                                                           "--out", str(sprt))
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "games.jsonl").write_text("{}\n")
    assert "holds games of no 'arena tune' run" in run(TARGET, "--param", "X=20,0,100,8",
                                                       "--out", str(stray))
