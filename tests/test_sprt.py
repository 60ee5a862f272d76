"""``arena sprt`` (issue 13, item 7): the statistics of its summary and its two Elo models
checked against fishtest's and fastchess's formulas and reference values, and the command
with real bots: --clock, --book, the summary, the progress line, resuming after an
interruption."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import optimize, stats

from arena.cli import cli
from arena.ratings import SprtTest, normalized_llr, pentanomial_llr, sprt_llr
from arena.records import read_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).with_name("arena"))


def _penta(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> list[int]:
    """fastchess's six pair classes as our five ``[LL, LD, WL+DD, WD, WW]``."""
    return [ll, ld, wl + dd, wd, ww]


# -- the LLR: fastchess's test cases (app/tests/sprt_test.cpp), 2 decimals, 1 % --------------

@pytest.mark.parametrize("counts, elo0, elo1, expected", [
    (_penta(365, 16618, 36029, 200, 16974, 390), 0, 2, 2.25),
    (_penta(127, 4883, 10311, 401, 5150, 104), -1.75, 0.25, 3.01),
    (_penta(0, 0, 0, 0, 0, 5550), 0, 5, 111.82),
    ([36027, 68692, 36433], 0, 2, 0.92),          # trinomial [L, D, W]
    ([10650, 20431, 10871], -1.75, 0.25, 2.30),
    ([0, 0, 4250], 0, 10, 120.56),
])
def test_normalized_llr_matches_fastchess(counts: list[int], elo0: float, elo1: float,
                                          expected: float) -> None:
    assert normalized_llr(counts, elo0, elo1) == pytest.approx(expected, rel=0.01)
    assert sprt_llr(counts, elo0, elo1, "normalized") == normalized_llr(counts, elo0, elo1)


@pytest.mark.parametrize("counts, elo0, elo1, expected", [
    (_penta(223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, -3.07),
    (_penta(871, 26175, 55003, 980, 26678, 821), 0, 2, -4.98),
    ([57030, 106593, 57433], 0, 2, -2.59),
])
def test_logistic_llr_matches_fastchess(counts: list[int], elo0: float, elo1: float,
                                        expected: float) -> None:
    assert pentanomial_llr(counts, elo0, elo1) == pytest.approx(expected, rel=0.01)


def _normalized_llr_by_direct_optimisation(counts: list[float], nelo0: float,
                                           nelo1: float) -> float:
    """The normalised GLLR computed independently of the fixed-point iteration: for each
    hypothesis, the pentanomial distribution of largest likelihood whose pair t-value
    ``(mean - 1/2) / sd`` is ``sqrt 2 * nelo * ln 10 / 800``, by SLSQP."""
    c = np.where(np.asarray(counts, float) == 0, 1e-3, np.asarray(counts, float))
    n, phat = c.sum(), c / c.sum()
    a = np.array([0, 0.25, 0.5, 0.75, 1.0])

    def best(nelo: float) -> np.ndarray:
        t = math.sqrt(2) * nelo * math.log(10) / 800

        def t_gap(p: np.ndarray) -> float:
            mu = p @ a
            return float((mu - 0.5) - t * math.sqrt(p @ (a - mu) ** 2))

        res = optimize.minimize(lambda p: -float(phat @ np.log(p)), phat, method="SLSQP",
                                bounds=[(1e-12, 1)] * 5,
                                constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1},
                                             {"type": "eq", "fun": t_gap}],
                                options={"ftol": 1e-15, "maxiter": 1000})
        assert res.success, res.message
        return np.asarray(res.x)

    p0, p1 = best(nelo0), best(nelo1)
    return float(n * phat @ (np.log(p1) - np.log(p0)))


@pytest.mark.parametrize("counts, nelo0, nelo1", [
    ([3, 9, 20, 12, 6], 0, 10),
    ([10, 30, 50, 25, 8], -5, 5),
    ([0, 4, 10, 7, 1], 0, 20),
    ([0, 1, 0, 100, 1], 0, 5),      # the iteration ends in rounding noise: settled anyway
    ([3, 9, 20, 12, 6], -200, 200),  # the widest hypotheses allowed
])
def test_normalized_llr_matches_direct_constrained_mle(counts: list[float], nelo0: float,
                                                       nelo1: float) -> None:
    assert normalized_llr(counts, nelo0, nelo1) == pytest.approx(
        _normalized_llr_by_direct_optimisation(counts, nelo0, nelo1), abs=1e-4)


def test_sprt_test_reads_its_bounds_in_its_model() -> None:
    counts = [5, 20, 40, 25, 10]
    logistic = pentanomial_llr(counts, 0, 10)
    normalized = normalized_llr(counts, 0, 10)
    assert logistic != pytest.approx(normalized, rel=0.05)
    test = SprtTest(0, 10, model="normalized")
    for k, n in enumerate(counts):
        for _ in range(n):
            test.add_pair(k / 2)
    assert test.llr == pytest.approx(normalized)
    with pytest.raises(Exception, match="from -200 to 200"):
        SprtTest(0, 250, model="normalized")
    assert SprtTest(0, 250).elo1 == 250  # a logistic bound may be larger
    with pytest.raises(Exception, match="unknown SPRT model"):
        SprtTest(0, 10, model="bayesian")  # type: ignore[arg-type]


# -- the summary: fishtest's stat_util.get_elo and fastchess's EloPentanomial, written out ---

def _fishtest_get_elo(results: list[float]) -> tuple[float, float, float]:
    """fishtest ``server/fishtest/stats/stat_util.py`` ``get_elo`` on pentanomial counts,
    written out here from its formulas: per-game score and variance from pair counts, the
    normal 95 % interval of the score mapped to Elo, LOS = Phi(z)."""
    results = [r if r else 1e-3 for r in results]
    n = sum(results)
    games = n * (len(results) - 1) / 2.0
    mu = sum(r * (i / 2.0) for i, r in enumerate(results)) / games
    mu_ = (len(results) - 1) / 2.0 * mu
    var = sum(r * (i / 2.0 - mu_) ** 2 for i, r in enumerate(results)) / games

    def elo(x: float) -> float:
        x = min(max(x, 1e-3), 1 - 1e-3)
        return -400 * math.log10(1 / x - 1)

    sd = math.sqrt(var)
    lo = mu + stats.norm.ppf(0.025) * sd / math.sqrt(games)
    hi = mu + stats.norm.ppf(0.975) * sd / math.sqrt(games)
    return elo(mu), (elo(hi) - elo(lo)) / 2, float(stats.norm.cdf((mu - 0.5) / (sd / math.sqrt(games))))


def _fastchess_nelo(counts: list[int]) -> tuple[float, float]:
    """fastchess ``elo_pentanomial.cpp``: nElo = (score - 1/2) / sqrt(2 var) * 800 / ln 10,
    var the variance of a pair's average score; its error maps the score's interval."""
    pairs = sum(counts)
    p = [c / pairs for c in counts]
    score = sum(pi * v for pi, v in zip(p, (0, 0.25, 0.5, 0.75, 1)))
    var = sum(pi * (v - score) ** 2 for pi, v in zip(p, (0, 0.25, 0.5, 0.75, 1)))

    def nelo(s: float) -> float:
        return (s - 0.5) / math.sqrt(2 * var) * (800 / math.log(10))

    half = 1.959963984540054 * math.sqrt(var / pairs)
    return nelo(score), (nelo(score + half) - nelo(score - half)) / 2


@pytest.mark.parametrize("games", [
    [(1, 1), (1, 0.5), (0.5, 0.5), (1, 0), (0, 0.5), (1, 1), (0.5, 1), (0, 0), (1, 0.5),
     (0.5, 0.5), (1, 0)] * 3,
    [(1, 0), (0.5, 0.5), (0, 0.5), (0.5, 1), (0, 1), (0.5, 0.5), (0, 0), (1, 1)] * 5,
])
def test_summary_figures_match_fishtest_and_fastchess(games: list[tuple[float, float]]) -> None:
    """Every pair class occurs (fishtest adds 1e-3 pairs to an empty class; arena does not,
    docs/RATINGS.md)."""
    test = SprtTest(0, 5, alpha=0.05, beta=0.05)
    for first, second in games:
        test.add_games(first, second)
    s = test.summary()
    scores = [x for pair in games for x in pair]
    assert (s.wins, s.draws, s.losses) == (scores.count(1), scores.count(0.5), scores.count(0))
    assert s.games == 2 * len(games) and s.pairs == len(games)
    counts = [0] * 5
    for first, second in games:
        counts[int(2 * (first + second))] += 1
    assert list(s.counts) == counts
    elo, elo95, los = _fishtest_get_elo([float(c) for c in counts])
    assert s.estimate is not None
    assert s.estimate.elo == pytest.approx(elo, abs=1e-6)
    assert s.estimate.elo95 == pytest.approx(elo95, abs=1e-6)
    assert s.estimate.los == pytest.approx(los, abs=1e-9)
    nelo, nelo95 = _fastchess_nelo(counts)
    assert s.estimate.nelo == pytest.approx(nelo, abs=1e-9)
    assert s.estimate.nelo95 == pytest.approx(nelo95, abs=1e-9)
    assert s.bounds == pytest.approx((math.log(0.05 / 0.95), math.log(0.95 / 0.05)))
    assert s.llr == pytest.approx(pentanomial_llr(counts, 0, 5))
    assert s.verdict is None if s.bounds[0] < s.llr < s.bounds[1] else s.verdict is not None


def test_summary_before_any_pair_and_bad_scores() -> None:
    s = SprtTest().summary()
    assert s.estimate is None and s.llr == 0 and s.verdict is None and s.games == 0
    with pytest.raises(Exception, match="not a game score"):
        SprtTest().add_games(1, 0.25)


# -- the command, with real bots ------------------------------------------------------------

GREEDY, RANDOM = f"{ROOT}/bots/greedy", f"{ROOT}/bots/random"


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quick starts (the sandbox is tested elsewhere); the environment reaches subprocesses."""
    monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")


def _args(out: Path | None, *extra: str, **options: str) -> list[str]:
    """greedy vs random on three men's morris, fast; bounds of +-6.9 so that a few pairs
    decide nothing (a won pair moves the LLR by about 0.03)."""
    settings = {"--variant": "three-mens-morris", "--movetime": "50", "--alpha": "0.001",
                "--beta": "0.001", "--max-pairs": "3", "--seed": "5", **options}
    args = ["sprt", GREEDY, RANDOM]
    for key, value in settings.items():
        if value:
            args += [key, value]
    return args + (["--out", str(out)] if out is not None else []) + list(extra)


def _summary(output: str) -> dict[str, str]:
    """The summary's ``Key: value`` lines."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Results of "))
    return dict(line.split(": ", 1) for line in lines[start + 1:] if ": " in line)


def _a_scores(records: list) -> list[tuple[float, float]]:
    """A's (greedy's) score in each game of each pair, from the records alone."""
    by_id = {r.game_id: r for r in records}
    pairs = sorted({int(r.game_id.split("-")[-1][:-1]) for r in records})
    tag = records[0].game_id.rsplit("-", 1)[0]
    return [(by_id[f"{tag}-{k}a"].score("white"), by_id[f"{tag}-{k}b"].score("black"))
            for k in pairs]


def test_sprt_with_a_clock_and_a_book_prints_the_summary(tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    book.write_text("# two openings\na1 d4\n\nd1 a4  # the other\n", encoding="utf-8")
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, _args(out, "--book", str(book), **{"--movetime": "",
                                                                      "--clock": "5+0.05"}))
    assert res.exit_code == 1, res.output  # undecided after 3 pairs
    head = res.output.splitlines()[0]
    assert "5+0.05 s" in head and f"book {book} (2 openings, sequential order)" in head
    records = read_records(out / "games.jsonl")
    assert len(records) == 6
    for r in records:
        assert r.time_control["base_ms"] == 5000 and r.time_control["increment_ms"] == 50
        k = int(r.game_id.split("-")[-1][:-1])
        assert [m.move for m in r.moves if m.opening] == [["a1", "d4"], ["d1", "a4"]][(k - 1) % 2]
    scores = _a_scores(records)
    flat = [x for pair in scores for x in pair]
    wins, draws, losses = flat.count(1.0), flat.count(0.5), flat.count(0.0)
    counts = [0] * 5
    for first, second in scores:
        counts[int(2 * (first + second))] += 1
    s = _summary(res.output)
    assert s["Games"].startswith(f"6, Wins: {wins}, Draws: {draws}, Losses: {losses} "
                                 f"(W-D-L {wins}-{draws}-{losses})")
    assert s["Ptnml(0-2)"].startswith(f"[{', '.join(map(str, counts))}]")
    llr = pentanomial_llr(counts, 0, 10)
    assert s["LLR"] == f"{llr:+.2f} (-6.91, 6.91) [0.00, 10.00] (logistic Elo)"
    assert s["Verdict"] == "undecided"
    assert s["Elo"].startswith("+") and "(95%)" in s["Elo"] and "LOS" in s


def test_sprt_normalized_model(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, _args(out, "--model", "normalized", "--opening-turns", "2",
                                        **{"--elo1": "5"}))
    assert res.exit_code == 1, res.output
    assert "H0 nElo <= 0, H1 nElo >= 5" in res.output.splitlines()[0]
    counts = [0] * 5
    for first, second in _a_scores(read_records(out / "games.jsonl")):
        counts[int(2 * (first + second))] += 1
    llr = normalized_llr(counts, 0, 5)
    assert llr != pytest.approx(pentanomial_llr(counts, 0, 5), abs=0.01)
    assert f"LLR: {llr:+.2f} (-6.91, 6.91) [0.00, 5.00] (normalized nElo)" in res.output
    pair_lines = [line for line in res.output.splitlines() if line.startswith("pair")]
    assert pair_lines[-1].split("LLR ")[1].startswith(f"{llr:+.2f}")
    stored = json.loads((out / "sprt.json").read_text())["settings"]
    assert stored["model"] == "normalized" and stored["opening_turns"] == 2
    # the same folder with the other model is another test: refused, naming the key
    res = CliRunner().invoke(cli, _args(out, "--opening-turns", "2", **{"--elo1": "5"}))
    assert res.exit_code == 2 and "(changed: model)" in res.output, res.output


@pytest.mark.parametrize("extra, message", [
    (["--book", "{book}", "--opening-turns", "2"], "use --book or --opening-turns, not both"),
    (["--book", "{book}"], "{book}:2: turn 2 ('a1')"),
    (["--book", "{missing}"], "{missing}: no such opening book"),
    (["--clock", "5s"], "--clock expects BASE+INC"),
    (["--model", "bayes"], "--model"),
    (["--model", "normalized", "--elo1", "300"], "from -200 to 200 (got 0, 300)"),
])
def test_sprt_refuses_bad_openings_and_time_controls_in_one_line(
        tmp_path: Path, extra: list[str], message: str) -> None:
    book = tmp_path / "book.txt"
    book.write_text("a1\na1 a1\n", encoding="utf-8")
    names = {"book": str(book), "missing": str(tmp_path / "nope.txt")}
    args = [a.format(**names) for a in extra]
    res = CliRunner().invoke(cli, [a for a in _args(tmp_path / "run", **{"--movetime": ""})]
                             + args)
    assert res.exit_code == 2, res.output
    assert message.format(**names) in res.output
    assert len(res.output.strip().splitlines()) == 1 or "Usage" in res.output
    assert not (tmp_path / "run").exists()


def test_sprt_refuses_an_undeclared_bot_option_before_any_game(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["sprt", f"{GREEDY}:MobiltyWeight=3", RANDOM, "--out",
                                   str(tmp_path / "run"), "--variant", "three-mens-morris"])
    assert res.exit_code == 2, res.output
    assert "MobiltyWeight" in res.output and len(res.output.strip().splitlines()) == 1
    left = {p.name for p in (tmp_path / "run").iterdir()} if (tmp_path / "run").exists() else set()
    assert not left & {"sprt.json", "games.jsonl"}  # no run was set up


def test_sprt_progress_line_is_redrawn_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal (a real pseudo-terminal here) one line is redrawn in place instead of a
    line per pair; the verdict and the summary follow it."""
    import pty

    from arena.clock import TimeControl
    from arena.manifest import load_bot
    from arena.sprtrun import SprtRun, run_sprt
    from arena.variants import get_variant

    master, slave = pty.openpty()
    term = os.fdopen(slave, "w", encoding="utf-8")
    run = SprtRun(load_bot(GREEDY), load_bot(RANDOM), get_variant("three-mens-morris"),
                  TimeControl(movetime_ms=50), alpha=0.001, beta=0.001, opening_turns=1)
    outcome = run_sprt(run, max_pairs=2, seed=1, out=term, console=term)
    term.close()
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    shown = b"".join(chunks).decode()
    assert outcome.status == 1 and not outcome.interrupted
    assert shown.count("\r\x1b[K[pairs ") >= 4  # redrawn after each game and each pair
    assert "[pairs 2/2, games 4]" in shown and "LLR +" in shown
    assert "pair    1:" not in shown
    assert "no decision after 2 pairs" in shown and "Verdict: undecided" in shown


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([ARENA, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_sprt_resumes_after_an_interruption_without_duplicating_ids(
        tmp_path: Path, sig: signal.Signals) -> None:
    """A real run is interrupted mid-game by a signal; it exits 130 at once (the game in
    flight abandoned, not saved) and the same command run again plays on from there."""
    out = tmp_path / "run"
    games = out / "games.jsonl"
    command = _args(out, "-j", "2", **{"--max-pairs": "40"})
    proc = _start(command, tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not (games.exists() and games.read_bytes().count(b"\n") >= 3):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no games saved in 60 s"
            time.sleep(0.01)
        proc.send_signal(sig)
        output, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, output
    first = read_records(games)
    k = len([line for line in output.splitlines() if line.startswith("pair")])
    assert f"interrupted after {k} pairs: run the same command again to resume" in output
    assert _summary(output)["Verdict"] == "undecided"
    assert all(r.termination != "error" for r in first)  # nothing abandoned was saved
    assert 2 * k <= len(first) < 2 * 40
    saved = games.read_bytes()
    # the same command again, with room for two more pairs: it plays on from where it stopped
    pairs = len(first) // 2 + 2
    res = CliRunner().invoke(cli, _args(out, "-j", "2", **{"--max-pairs": str(pairs)}))
    assert res.exit_code == 1, res.output
    assert f"resuming: {len(first)} games already in {games}" in res.output
    pair_lines = [line for line in res.output.splitlines() if line.startswith("pair")]
    assert [int(line.split()[1].rstrip(":")) for line in pair_lines] == list(range(1, pairs + 1))
    ids = [r.game_id for r in read_records(games)]
    assert len(ids) == len(set(ids)), ids
    assert sorted(ids) == sorted(f"sprt-5-{p}{g}" for p in range(1, pairs + 1) for g in "ab")
    assert games.read_bytes().startswith(saved)  # the first run's games kept, byte for byte
    assert _summary(res.output)["Games"].startswith(f"{2 * pairs}, ")


def test_sprt_restart_bots_per_pairing_keeps_each_bots_process(tmp_path: Path) -> None:
    counter = f"{ROOT}/tests/bots/counter"
    res = CliRunner().invoke(cli, ["sprt", counter, RANDOM, "--variant", "three-mens-morris",
                                   "--movetime", "100", "--max-pairs", "3", "--seed", "4",
                                   "--restart-bots", "per-pairing", "--out",
                                   str(tmp_path / "run")])
    assert res.exit_code in (0, 1), res.output
    records = read_records(tmp_path / "run" / "games.jsonl")
    assert len(records) == 6 and {r.restart for r in records} == {"per-pairing"}
    assert len({r.game_id for r in records}) == 6
    mine = [r.white if r.white.name == "counter" else r.black for r in records]
    assert [p.games_before for p in mine] == [0, 1, 2, 3, 4, 5]  # one process, both colours
    last = records[-1].stderr["white" if records[-1].white.name == "counter" else "black"]
    assert last.splitlines()[-1] == "game 6"  # its state carried over six games


# -- several variants, the verdict's wording, engine strings (issue 27) ----------------------

def test_the_verdict_says_which_hypothesis_is_favoured_not_that_a_bound_is_proved() -> None:
    from arena.sprtrun import verdict_text

    test = SprtTest(0, 200, 0.05, 0.1)
    for _ in range(30):
        test.add_games(1.0, 1.0)
    assert verdict_text(test.summary()) == (
        "H1 accepted: Elo ≥ 200 is favoured over Elo ≤ 0 (α 0.05, β 0.1)")
    assert verdict_text(test.summary(), after=" after 30 pairs").startswith(
        "H1 accepted after 30 pairs: Elo ≥ 200")
    test = SprtTest(-2, 3, 0.01, 0.05, model="normalized")
    for i in range(300):
        test.add_games(*[(0.0, 0.0), (0.5, 0.5), (0.0, 1.0)][i % 3])
    assert verdict_text(test.summary()) == (
        "H0 accepted: nElo ≤ -2 is favoured over nElo ≥ 3 (α 0.01, β 0.05)")
    assert verdict_text(SprtTest().summary()) == "undecided"


def test_sprt_rotates_pairs_over_variants_and_reports_each(tmp_path: Path) -> None:
    """Two --variant: pair 1 plays the first, pair 2 the second, ...; the test pools them,
    the summary shows each; A is an engine string (no folder) and its command is part of
    the settings a resume compares."""
    out = tmp_path / "run"
    engine = f"cmd='{{python}} bot.py' dir={GREEDY} name=greedy"
    args = ["sprt", engine, RANDOM, "--variant", "three-mens-morris", "--variant",
            "six-mens-morris", "--movetime", "50", "--alpha", "0.001", "--beta", "0.001",
            "--max-pairs", "4", "--seed", "5", "--handshake", "60000", "--out", str(out)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1, res.output
    assert "variants three-mens-morris, six-mens-morris (pairs rotate)" in res.output
    records = read_records(out / "games.jsonl")
    assert len(records) == 8
    variants = ["three-mens-morris", "six-mens-morris"]
    for r in records:
        assert r.variant == variants[(r.pair - 1) % 2], (r.game_id, r.variant)
    pair_lines = [line for line in res.output.splitlines() if line.startswith("pair")]
    assert [line.split("(")[1].split(")")[0] for line in pair_lines] == variants * 2
    # each variant's own figures, from its records; the pooled ones are their sum
    lines = res.output.splitlines()
    at = lines.index("By variant (the lines above pool all 2):")
    total = [0] * 5
    for name, line in zip(variants, lines[at + 1:at + 3]):
        mine = [r for r in records if r.variant == name]
        counts = [0] * 5
        for first, second in _a_scores(mine):
            counts[int(2 * (first + second))] += 1
        total = [t + c for t, c in zip(total, counts)]
        flat = [x for pair in _a_scores(mine) for x in pair]
        wdl = f"{flat.count(1.0)}-{flat.count(0.5)}-{flat.count(0.0)}"
        assert line.startswith(f"  {name}: Games 4, W-D-L {wdl}, Ptnml "
                               f"[{', '.join(map(str, counts))}], Elo "), line
        assert line.endswith(f"LLR {pentanomial_llr(counts, 0, 10):+.2f}"), line
    assert _summary(res.output)["Ptnml(0-2)"].startswith(f"[{', '.join(map(str, total))}]")
    settings = json.loads((out / "sprt.json").read_text())["settings"]
    assert [v["name"] for v in settings["variants"]] == variants and "variant" not in settings
    assert settings["a"]["command"] == ["{python}", "bot.py"]
    # another order, or another command, is another test
    swapped = args[:3] + ["--variant", "six-mens-morris", "--variant", "three-mens-morris"] \
        + args[7:]
    res = CliRunner().invoke(cli, swapped)
    assert res.exit_code == 2 and "(changed: variants)" in res.output, res.output
    res = CliRunner().invoke(cli, [args[0], engine + " arg=--x", *args[2:]])
    assert res.exit_code == 2 and "(changed: a)" in res.output, res.output


def test_sprt_refuses_a_variant_twice_or_a_bad_one_for_any(tmp_path: Path) -> None:
    for extra, message in ((["--variant", "six-mens-morris", "--variant", "six-mens-morris"],
                            "--variant six-mens-morris is given twice"),
                           (["--variant", "three-mens-morris", "--variant", "nine-mens-morris",
                             "--opening-turns", "8"], "--opening-turns: at most 6 for "
                                                      "three-mens-morris")):
        res = CliRunner().invoke(cli, ["sprt", GREEDY, RANDOM, *extra,
                                       "--out", str(tmp_path / "run")])
        assert res.exit_code == 2 and message in res.output, res.output
        assert not (tmp_path / "run").exists()
