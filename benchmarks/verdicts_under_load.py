"""Verdicts on a busy machine: ``python benchmarks/verdicts_under_load.py [--quiet]``.

Not a speed benchmark (``make bench`` does not run it: it takes several minutes): the
measurement behind docs/TOURNAMENTS.md *Fair on a busy machine*.  Five bots from
``tests/bots/timed`` at 100 ms a move, everything else the defaults:

* ``cpu50``: uses 50 ms of CPU a move; ``sleep50``: sleeps 50 ms a move (both correct);
* ``burn10x``: uses 10 times its movetime of CPU; ``spin10x``: loops on the wall clock
  (``while time.time() < stop``) for 10 times its movetime; ``sleep3.5x``: sleeps 3.5 times
  its movetime (all three overrun).

Unless ``--quiet``, the machine is loaded first as the issue that asked for this measured
it: four busy loops per core at niceness -5 (each in a session of its own, its autogroup at
-5 too, as another user's jobs at high priority), and another tournament with six workers
(``bots/alphabeta`` against ``bots/greedy``).  Then, with that load running:

1. ``arena check`` of each bot (its verdict and exit status);
2. a round robin of the five (``--games`` per pairing, one variant): the time losses of each
   bot, the games voided;
3. unless ``--no-server``, a competition's judge (the server's defaults, ``nice: 10``) checks
   the five as uploads: which become active.

Every process it starts is ended by its id at the end.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
ARENA = [str(Path(sys.executable).parent / "arena")]  # the venv's command
BOTS = {"cpu50": ("burn", 0.5), "sleep50": ("sleep", 0.5), "burn10x": ("burn", 10),
        "spin10x": ("spin", 10), "sleep3.5x": ("sleep", 3.5)}
CORRECT = ("cpu50", "sleep50")


def make_bots(where: Path) -> dict[str, Path]:
    """A folder per bot: tests/bots/timed's bot.py with its arguments."""
    folders = {}
    for name, (how, factor) in BOTS.items():
        folder = where / name
        folder.mkdir(parents=True)
        shutil.copy(ROOT / "tests" / "bots" / "timed" / "bot.py", folder / "bot.py")
        (folder / "bot.yaml").write_text(
            f'name: {name}\ncommand: ["{{python}}", "bot.py", "{how}", "{factor}"]\n')
        folder.chmod(0o755)
        folders[name] = folder
    return folders


def start_load(where: Path) -> list[subprocess.Popen[bytes]]:
    """Four busy loops per core at niceness -5 (their autogroups too), and a 6-worker
    tournament of alphabeta against greedy."""
    loop = ("import os\ntry:\n    open('/proc/self/autogroup', 'w').write('-5')\n"
            "except OSError:\n    pass\nos.nice(-5)\nwhile True: pass\n")
    procs = [subprocess.Popen([sys.executable, "-c", loop], start_new_session=True)
             for _ in range(4 * (os.cpu_count() or 1))]
    yaml = where / "other.yaml"
    yaml.write_text(f"name: other\nbots: [{ROOT / 'bots/alphabeta'}, {ROOT / 'bots/greedy'}]\n"
                    f"games_per_pairing: 2000\ntime: {{movetime: 100}}\nworkers: 6\n"
                    f"report: false\noutput: {where / 'other'}\n")
    procs.append(subprocess.Popen([*ARENA, "run", str(yaml)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True, cwd=ROOT))
    return procs


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, 15)  # each leads its own session: its workers too
            except OSError:
                p.terminate()
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()


def checks(folders: dict[str, Path]) -> dict[str, tuple[int, str]]:
    out = {}
    for name, folder in folders.items():
        done = subprocess.run([*ARENA, "check", str(folder), "--movetime", "100"],
                              capture_output=True, text=True, cwd=ROOT)
        last = (done.stdout.strip().splitlines() or ["?"])[-1]
        out[name] = (done.returncode, last[:110])
        print(f"  check {name:<10} exit {done.returncode}  {last[:100]}  "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
    return out


def round_robin(folders: dict[str, Path], where: Path, games: int) -> dict[str, object]:
    yaml = where / "rr.yaml"
    bots = ", ".join(str(f) for f in folders.values())
    yaml.write_text(f"name: rr\nbots: [{bots}]\nvariants: [nine-mens-morris]\n"
                    f"games_per_pairing: {games}\ntime: {{movetime: 100}}\nreport: false\n"
                    f"output: {where / 'rr'}\n")
    started = time.monotonic()
    done = subprocess.run([*ARENA, "run", str(yaml)], capture_output=True, text=True, cwd=ROOT)
    took = time.monotonic() - started
    records = [json.loads(line) for line in (where / "rr" / "games.jsonl").read_text().splitlines()
               if line.strip()]
    per = {name: {"games": 0, "time losses": 0, "not lost on time": 0} for name in folders}
    for r in records:
        loser = r[r["forfeit"]]["name"] if r.get("forfeit") in ("white", "black") else None
        on_time = r["termination"] == "timeout"
        for color in ("white", "black"):
            name = r[color]["name"]
            per[name]["games"] += 1
            if loser == name and on_time:
                per[name]["time losses"] += 1
            # a game with an overrunning bot must end with an overrunner's time loss
            if name not in CORRECT and not (on_time and loser not in CORRECT):
                per[name]["not lost on time"] += 1
    replays = sum(len(r.get("replays") or []) for r in records)
    tail = [ln for ln in (done.stdout + done.stderr).splitlines() if "fairly" in ln]
    for name, row in per.items():
        print(f"  round robin {name:<10} {row['time losses']:>3} time losses in {row['games']} "
              f"games" + ("" if name in CORRECT else
                          f"; {row['not lost on time']} games not ended by an overrunner's "
                          f"time loss"), flush=True)
    print(f"  round robin: {len(records)} games saved in {took:.0f} s, exit {done.returncode}, "
          f"{replays} plays replayed; {tail[-1] if tail else 'no game voided'}", flush=True)
    return {"per": per, "saved": len(records), "exit": done.returncode, "replays": replays,
            "void": tail}


def server(folders: dict[str, Path], where: Path) -> dict[str, str]:
    from arena.clock import TimeControl
    from arena.sandbox import default_charge
    from arena.server.config import ServerConfig
    from arena.server.judge import Judge
    from arena.server.models import Bot
    from arena.server.service import Competition, init_competition

    cfg = ServerConfig(time_control=TimeControl(movetime_ms=100, clock=default_charge()),
                       check_workers=2)
    init_competition(where / "comp", cfg)
    comp = Competition(where / "comp")
    judge = Judge(comp)
    ids = {}
    try:
        for name, folder in folders.items():
            viewer = comp.authenticate(comp.add_user(name.replace(".", "")))
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as zf:
                for f in ("bot.py", "bot.yaml"):
                    zf.write(folder / f, f)
            ids[name] = comp.submit(viewer, f"{name}.zip", buf.getvalue())["id"]
        judge.start()
        end = time.monotonic() + 1800
        out: dict[str, str] = {}
        while time.monotonic() < end:
            with comp.sessions() as s:
                rows = {name: s.get(Bot, i) for name, i in ids.items()}
                out = {name: f"{b.status}: {b.verdict[:90]}" for name, b in rows.items() if b}
                if all(b is not None and b.status != "checking" for b in rows.values()):
                    break
            time.sleep(2)
    finally:
        judge.stop()
        comp.close()
    for name, text in out.items():
        print(f"  server {name:<10} {text}", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quiet", action="store_true", help="no load of ours")
    parser.add_argument("--games", type=int, default=8, help="games per pairing (default 8)")
    parser.add_argument("--no-server", action="store_true", help="skip the server's judge")
    args = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="verdicts-"))
    where.chmod(0o755)
    folders = make_bots(where / "bots")
    load: list[subprocess.Popen[bytes]] = []
    try:
        if not args.quiet:
            load = start_load(where)
            time.sleep(30)
        print(f"{'quiet' if args.quiet else 'loaded'} machine: load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        checked = checks(folders)
        rr = round_robin(folders, where, args.games)
        judged = {} if args.no_server else server(folders, where)
        print(f"end: load average {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        stop(load)
        shutil.rmtree(where, ignore_errors=True)
    wrong = [n for n, (code, _) in checked.items() if (code == 0) != (n in CORRECT)]
    wrong += [f"{n} (round robin)" for n, row in rr["per"].items()  # type: ignore[attr-defined]
              if (n in CORRECT and row["time losses"]) or row["not lost on time"]]
    if rr["void"]:
        wrong.append("games voided")
    wrong += [f"{n} (server)" for n, text in judged.items()
              if text.startswith("active") != (n in CORRECT)]
    print("every verdict as it should be" if not wrong else f"WRONG: {', '.join(wrong)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
