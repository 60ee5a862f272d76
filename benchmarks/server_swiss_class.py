"""A class final of 40 as a Swiss of 7 rounds on a real server (issue 38, *Done when*):
``python benchmarks/server_swiss_class.py [--bots 40] [--rounds 7] [--pairs 1]
[--variant three-mens-morris] [--workers 2] [--movetime 50]``.

Not a speed benchmark (``make bench`` does not run it: it takes minutes): the run behind
docs/SERVER.md's figures for a Swiss final.  It builds a competition whose ``--bots``
participants each have one active bot, written straight into the database (copies of
bots/greedy, bots/random, tests/bots/drawer and tests/bots/striker, as many of each, in a
fixed shuffled order: their uploads' checks are not what is measured, and with no ladder
game the seeds are the entry order),
with the deadline in the past and ``final: {format: swiss, rounds: N, pairs: P}``; then it
runs ``arena server run`` until the final is done, watching ``GET /api/final`` meanwhile:

* every interim table counts complete rounds only: each entry has played as many games (a
  bye's round none) whenever it is looked at;
* at the end: every game stored once, no pair twice, the byes (an odd field's) to different
  bots, and ``arena server results`` with one row per participant, ranked by points, then
  Buchholz cut-1 and Buchholz (non-increasing), shared places where every tie-break is level.

It prints the games, the wall time, each round's time and the top of the results, and exits
1 when a check fails.  Every process it starts is ended by its id.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable alone from a checkout

ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
#: the bots of the field, in turn: (source folder, its bot.yaml name)
SOURCES = (("bots/greedy", "greedy"), ("bots/random", "random"),
           ("tests/bots/drawer", "drawer"), ("tests/bots/striker", "striker"))


def _settings(args: argparse.Namespace) -> str:
    return (f"name: swiss class\nvariants: [{args.variant}]\ntime: {{movetime: "
            f"{args.movetime}}}\nworkers: {args.workers}\nnice: 0\n"
            f"deadline: 2020-01-01T00:00:00+00:00\n"
            f"final: {{format: swiss, rounds: {args.rounds}, pairs: {args.pairs}}}\n")


def build(folder: Path, args: argparse.Namespace) -> None:
    """The competition: ``args.bots`` participants, each with an active bot."""
    from arena.server.config import parse_server_config
    from arena.server.models import Bot, User
    from arena.server.service import Competition, init_competition

    import yaml

    init_competition(folder, parse_server_config(yaml.safe_load(_settings(args))))
    comp = Competition(folder)
    try:
        for i in range(args.bots):
            comp.add_user(f"s{i + 1:02d}")
        kinds = [SOURCES[i % len(SOURCES)] for i in range(args.bots)]
        random.Random(38).shuffle(kinds)  # round 1 meets seed k and k + N/2: mixed kinds
        with comp.writing() as s:
            for i, user in enumerate(s.query(User).order_by(User.id).all()):
                source, name = kinds[i]
                bot = Bot(owner_id=user.id, name=f"{name}{i + 1:02d}", version=1,
                          status="active", verdict="PASS (written by the benchmark)")
                s.add(bot)
                s.flush()
                bot.folder = f"bots/{bot.id}/{name}"
                shutil.copytree(ROOT / source, folder / bot.folder,
                                ignore=shutil.ignore_patterns("__pycache__"))
    finally:
        comp.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as resp:
        return json.loads(resp.read())


def _round_times(folder: Path, rounds: list[dict[str, Any]]) -> list[tuple[int, float]]:
    """Per round, its games and the seconds from its first game queued to its last stored
    (from the database: the games of a round are those between its pairs)."""
    import sqlite3
    from datetime import datetime

    with sqlite3.connect(folder / "arena.db") as db:
        games = db.execute("SELECT white_id, black_id, created_at, finished_at FROM games "
                           "WHERE kind = 'final'").fetchall()
    out = []
    for r in rounds:
        pairs = {frozenset(p) for p in r["pairs"]}
        mine = [g for g in games if frozenset(g[:2]) in pairs]
        start = min(datetime.fromisoformat(g[2]) for g in mine)
        end = max(datetime.fromisoformat(g[3]) for g in mine)
        out.append((len(mine), (end - start).total_seconds()))
    return out


def place_problems(rows: list[dict[str, str]]) -> list[str]:
    """What is wrong with the ranking of ``arena server results``'s ``rows`` of a Swiss:
    they must go by points, then Buchholz cut-1, Buchholz, Sonneborn-Berger and the direct
    encounter, non-increasing, a rank 1 + the rows strictly better, shared (``5=``) exactly
    where another row is level on all of them."""
    def key(r: dict[str, str]) -> tuple[float, ...]:
        return (float(r["points"]), float(r["buchholz_cut1"]), float(r["buchholz"]),
                float(r["sb"]), float(r["h2h"] or 0))

    problems = []
    if [key(r) for r in rows] != sorted((key(r) for r in rows), reverse=True):
        problems.append("the results are not ranked by points, then the Buchholz tie-breaks")
    for r in rows:
        better = sum(1 for o in rows if key(o) > key(r))
        level = sum(1 for o in rows if key(o) == key(r)) > 1
        if (r["rank"], r["place"]) != (str(better + 1), f"{better + 1}{'=' if level else ''}"):
            problems.append(f"{r['participant']}: {r['place']}, expected {better + 1}"
                            f"{'=' if level else ''}")
    return problems


def play(args: argparse.Namespace) -> dict[str, Any]:
    """Build the class, serve it until its final is done; returns ``games``, ``seconds``,
    ``rounds`` (each ``(games, seconds)``), ``looks`` (interim tables checked), ``rows``
    (``arena server results``'s) and ``problems`` (empty when every check held)."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="swiss-class-") as tmp:
        folder = Path(tmp) / "class"
        build(folder, args)
        port = _free_port()
        log = open(Path(tmp) / "server.log", "wb")
        started = time.monotonic()
        proc = subprocess.Popen([*ARENA, "server", "run", str(folder), "--port", str(port)],
                                stdout=log, stderr=log, start_new_session=True, cwd=tmp)
        looks = 0
        try:
            while True:
                if proc.poll() is not None:
                    raise RuntimeError("the server exited:\n"
                                       + (Path(tmp) / "server.log").read_text()[-3000:])
                if time.monotonic() - started > args.timeout:
                    raise RuntimeError(f"the final was not done in {args.timeout} s")
                try:
                    final = _get(port, "/api/final")
                except OSError:
                    time.sleep(0.5)
                    continue
                if final["status"] == "running" and final["tables"]:
                    looks += 1  # every entry: 2 x pairs games a counted round but its byes
                    k = final["after_round"]
                    byes = [final["players"][str(r["bye"])]["participant"]
                            for r in final["rounds"][:k] if r["bye"] is not None]
                    wrong = [r["participant"] for r in final["tables"][0]["rows"]
                             if r["status"] == "entry" and r["games"] != 2 * args.pairs * (
                                 k - byes.count(r["participant"]))]
                    if wrong:
                        problems.append(f"after round {k}: {', '.join(wrong)} played more "
                                        f"or fewer games than the rounds counted")
                if final["status"] == "done":
                    break
                time.sleep(1.0)
            took = time.monotonic() - started
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.close()
        results = subprocess.run([*ARENA, "server", "results", str(folder)], cwd=tmp,
                                 capture_output=True, text=True, check=True)
        rounds = final["rounds"]
        times = _round_times(folder, rounds)
    rows = list(csv.DictReader(io.StringIO(results.stdout)))
    pairs = [frozenset(p) for r in rounds for p in r["pairs"]]
    if len(pairs) != len(set(pairs)):
        problems.append("a pair met twice")
    byes = [r["bye"] for r in rounds if r["bye"] is not None]
    if len(byes) != len(set(byes)):
        problems.append("a bot had two byes")
    if final["games_done"] != final["games_total"] or len(rows) != args.bots:
        problems.append(f"{final['games_done']} of {final['games_total']} games, "
                        f"{len(rows)} rows")
    if not results.stdout.startswith("variant,") or "buchholz_cut1" not in results.stdout:
        problems.append("arena server results has no Buchholz columns")
    problems += place_problems(rows)
    return {"games": final["games_done"], "seconds": took, "rounds": times, "looks": looks,
            "rows": rows, "problems": problems}


def run(args: argparse.Namespace) -> int:
    got = play(args)
    games, took = got["games"], got["seconds"]
    print(f"{args.bots} bots, a Swiss of {len(got['rounds'])} rounds, {args.pairs} pair(s) "
          f"per pairing, {args.variant}, {args.workers} workers, {args.movetime} ms a move")
    print(f"  {games} games in {took:.0f} s from the server's start ({games / took:.2f} "
          f"games/s), {got['looks']} interim tables checked")
    for n, (count, seconds) in enumerate(got["rounds"], 1):
        print(f"  round {n}: {count} games, {seconds:.1f} s from its first queued to its "
              f"last stored")
    rows = got["rows"]
    shared = [r for r in rows if r["place"].endswith("=")]
    print(f"  {len(shared)} bots share a place; the top of arena server results:")
    for r in rows[:8]:
        print(f"    {r['place']:>4} {r['participant']} {r['bot']:<10} points {r['points']:>4} "
              f"BH-C1 {r['buchholz_cut1']:>5} BH {r['buchholz']:>5} SB {r['sb']:>6}")
    for p in got["problems"]:
        print(f"  PROBLEM: {p}")
    return 1 if got["problems"] else 0


def options(argv: Optional[list[str]] = None) -> argparse.Namespace:
    """The command line's options (``argv`` None: the process's)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--variant", default="three-mens-morris")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--movetime", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="seconds the final may take (then it fails)")
    return parser.parse_args(argv)


def main() -> int:
    return run(options())


if __name__ == "__main__":
    sys.exit(main())
