"""A Swiss of 9 bots and a knockout of 8 (of bots/, docs/examples/ and test bots), real
games between real bot processes (issue 38): the runner plays them round by round, records each round's pairings before its games, and
after a SIGKILL of ``arena run`` mid-round a second run finishes them exactly as an
uninterrupted run does: the same rounds, the same games with the same results.  The bots
are deterministic (the random bot is seeded by each game's seed) and the time limit is far
above their needs, so results do not depend on the machine's load."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.config import load_config
from arena.rounds import ROUNDS_FILE, read_rounds
from arena.tournament import run_tournament

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).with_name("arena"))

#: bots/, docs/examples/ and two test bots (one that takes men, one that plays for draws)
BOTS = [("random", "r1"), ("random", "r2"), ("first", "f1"), ("greedy", "g1"),
        ("greedy", "g2"), ("striker", "s1"), ("first", "f2"), ("drawer", "d1"),
        ("random", "r3")]


def _folder(kind: str) -> Path:
    return ROOT / ("bots" if kind in ("random", "greedy") else
                   "docs/examples" if kind == "first" else "tests/bots") / kind


def _write(folder: Path, name: str, fmt: str, bots: int) -> Path:
    entries = "\n".join(f"  - {{path: {_folder(kind)}, name: {name_}}}"
                        for kind, name_ in BOTS[:bots])
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: 11\nbots:\n{entries}\n"
                    f"variants: [three-mens-morris]\nformat: {fmt}\n"
                    f"time: {{movetime: 2000, margin: 2000}}\nworkers: 2\nreport: false\n"
                    f"output: {folder / name}\n")
    return path


def _games(folder: Path) -> dict[str, tuple[str, str, str]]:
    out = {}
    for line in (folder / "games.jsonl").read_text().splitlines():
        r = json.loads(line)
        out[r["game_id"]] = (r["white"]["name"], r["black"]["name"], r["result"])
    return out


def _kill_mid_run(path: Path, games: Path, after: int) -> int:
    """Start ``arena run path``, SIGKILL it once ``games`` has ``after`` lines; the number of
    lines saved when it died."""
    proc = subprocess.Popen([ARENA, "run", str(path)], cwd=path.parent, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if games.exists() and games.read_bytes().count(b"\n") >= after:
                break
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.02)
        else:
            raise AssertionError(f"fewer than {after} games saved in 120 s")
        os.kill(proc.pid, signal.SIGKILL)  # the runner only: its workers follow it
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    return games.read_bytes().count(b"\n")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("staged")


@pytest.mark.parametrize("kind,bots,after,rounds_expected", [
    ("{type: swiss, rounds: 3}", 9, 6, 3),  # 4 pairings a round: killed in round 2
    ("knockout", 8, 9, 3),  # 4 + 2 + 1 matches: killed in round 2
], ids=["swiss-9", "knockout-8"])
def test_a_killed_run_resumes_to_what_an_uninterrupted_run_plays(
        workdir: Path, kind: str, bots: int, after: int, rounds_expected: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workdir)  # every run from the same folder, as a user would
    label = "swiss" if "swiss" in kind else "knockout"
    whole = _write(workdir, f"{label}-whole", kind, bots)
    result = run_tournament(load_config(whole), console=open(os.devnull, "w"))
    assert result.complete and not result.interrupted
    reference = workdir / f"{label}-whole"
    rounds = read_rounds(reference)
    assert len(rounds) == rounds_expected
    games = _games(reference)

    killed = _write(workdir, f"{label}-killed", kind, bots)
    folder = workdir / f"{label}-killed"
    saved = _kill_mid_run(killed, folder / "games.jsonl", after)
    assert saved < len(games), "the run ended before it could be killed"
    recorded = read_rounds(folder)
    assert 1 <= len(recorded) < rounds_expected + 1
    assert recorded == rounds[:len(recorded)]  # what it recorded so far is the same
    out = CliRunner().invoke(cli, ["run", str(killed)])
    assert out.exit_code == 0, out.output
    assert read_rounds(folder) == rounds
    assert (folder / ROUNDS_FILE).read_text() == (reference / ROUNDS_FILE).read_text()
    assert _games(folder) == games  # the same games, each once, with the same results

    # each round is paired before its games and from the rounds before it
    ids_by_round: dict[int, set[str]] = {}
    for gid in games:
        ids_by_round.setdefault(int(gid.split("/")[1][1:]), set()).add(gid)
    assert sorted(ids_by_round) == list(range(1, rounds_expected + 1))
    if label == "swiss":
        met = [frozenset(p) for r in rounds for p in r.pairs]
        assert len(met) == len(set(met)) == 3 * 4  # 4 pairs a round, never twice
        assert len({r.bye[0] for r in rounds}) == 3  # a bye each round, never twice
        standings = (folder / "standings.csv").read_text()
        assert all(name in standings for _, name in BOTS)
    else:
        final = rounds[-1]
        assert len(final.lines) == 2
        # the champion won the final's games (or, level, is the better seed)
        config = load_config(killed)
        points = {p: 0.0 for p in final.lines if p}
        for gid, (w, b, res) in games.items():
            if gid.split("/")[1] == f"r{len(rounds)}":
                score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[res]
                points[w] += score
                points[b] += 1 - score
        a, b = final.lines
        assert a is not None and b is not None
        text = (folder / "standings.csv").read_text()
        first = text.splitlines()[1].split(",")
        champion = (a if points[a] > points[b] else b if points[b] > points[a] else
                    min((a, b), key=config.format.seeds.index))
        assert champion in first, (text, points)


def test_arena_run_format_swiss_rounds_from_the_command_line(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workdir)
    path = _write(workdir, "cli", "round-robin", 5)
    out = CliRunner().invoke(cli, ["run", str(path), "--format", "swiss", "--rounds", "2"])
    assert out.exit_code == 0, out.output
    rounds = read_rounds(workdir / "cli")
    assert len(rounds) == 2 and all(len(r.pairs) == 2 and len(r.bye) == 1 for r in rounds)
    assert len(_games(workdir / "cli")) == 2 * 2 * 2
    out = CliRunner().invoke(cli, ["run", str(path), "--format", "swiss", "--rounds", "9"])
    assert out.exit_code != 0 and "at most 5 Swiss rounds" in out.output
    assert len(_games(workdir / "cli")) == 8  # nothing lost
