"""The competition server under a class's load (issues 16 and 26): a real ``arena server run``
process on a local port with its SQLite file holding 40 active bots and 5,000 finished games
(built directly in the database: bots that are copies of bots/random, records of real legal
games), while its judge plays games throughout (1,500 ladder games queued between the 40,
and two uploads checked meanwhile).  Every route a visitor uses is measured beside ``/api/status`` (a route
that reads almost nothing) in the same run:

* **a class's load**: open-loop Poisson arrivals at 50 requests/s in all, spread evenly over
  the routes (40 participants browsing and watching live games), each request's latency
  counted from its scheduled arrival: p50 and p95 per route (the target: p95 <= 100 ms);
* **a stress**: 50 closed-loop clients (keep-alive connections) on one route at a time, the
  routes taken in turn in short slices over several rounds (so that the judge's work and
  the machine's other load fall on all alike): requests/s, its ratio to ``/api/status``'s
  (the target: >= 0.8), p50, p95, and the server process's own CPU per request.

``--before REV`` first runs the same measurement on the server of a git revision (its tree
extracted with ``git archive``; routes it does not have are skipped), then on this checkout,
and prints both side by side.  Run alone with ``python benchmarks/bench_server.py [--quick]
[--before REV]`` (needs the ``server`` extra and ``psutil``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable alone from a checkout

SETTINGS = ("name: bench\ntime: {movetime: 50}\npairs: 1\ncheck_games: 1\nworkers: 2\n"
            "upload: {per_hour: 1000}\n"
            # 50 clients from one address: the rate limit is not what is measured
            "rate_limit: {participant: 10000000/minute, anonymous: 10000000/minute}\n")
BOTS = 40
GAMES = 5000
#: ladder games queued at the start: the judge plays throughout the run
QUEUED = 1500
CLIENTS = 50
RATE = 50.0  # requests per second in all, the class's load
TARGET_P95_MS = 100.0
TARGET_RATIO = 0.8
#: seconds after which a request of the class's load counts as failed (a server that
#: cannot keep up: its queue only grows)
GIVE_UP_S = 10.0

#: builds the competition in the database with the code under test (run with its
#: PYTHONPATH): 40 participants, 40 active bots (copies of bots/random), 5,000 finished
#: games in colour-swapped pairs with records of real legal games; prints what it made
SEED = r'''
import json, random, shutil, sqlite3, sys
from pathlib import Path
from arena.records import GameRecord, MoveInfo, PlayerInfo
from arena.rules import Position
from arena.server.service import Competition
from arena.variants import get_variant

folder, source, bots, games = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
queued = int(sys.argv[5])
rng = random.Random(26)
comp = Competition(folder)
tokens = [comp.add_user(f"p{i:02d}") for i in range(bots)]
comp.close()
variant = get_variant("nine-mens-morris")
plays = []
for _ in range(24):  # real games (random playouts), reused by the records
    pos, moves = Position(variant), []
    while not pos.is_game_over() and len(moves) < 200:
        move = rng.choice(pos.legal_moves())
        pos.push(move)
        moves.append(str(move))
    plays.append(moves)
db = sqlite3.connect(folder / "arena.db")
columns = {row[1] for row in db.execute("PRAGMA table_info(games)")}
owners = [r[0] for r in db.execute("SELECT id FROM users ORDER BY id")]
strength = [rng.gauss(0, 200) for _ in range(bots)]
for i in range(bots):
    target = folder / "bots" / str(i + 1) / "random"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    db.execute("INSERT INTO bots (id, owner_id, name, version, status, verdict, check_log, "
               "folder, sha256, created_at, judged_at) VALUES (?, ?, ?, 1, 'active', 'PASS', "
               "'', ?, '', '2026-01-01', '2026-01-01')",
               (i + 1, owners[i], f"bot{i:02d}", f"bots/{i + 1}/random"))
rows = []
pair = 0
while len(rows) < games:
    a, b = rng.sample(range(bots), 2)
    pair += 1
    seed = rng.randrange(1 << 30)
    for game, (w, k) in enumerate(((a, b), (b, a))):
        expect = 1 / (1 + 10 ** ((strength[k] - strength[w]) / 400))
        u = rng.random()
        result = "1-0" if u < expect - 0.1 else "0-1" if u > expect + 0.1 else "1/2-1/2"
        forfeit = None
        if rng.random() < 0.02 and result != "1/2-1/2":
            forfeit = "black" if result == "1-0" else "white"
        moves = rng.choice(plays)
        record = GameRecord(
            game_id=f"g{len(rows) + 1}", variant=variant.name, variant_params={},
            white=PlayerInfo(f"bot{w:02d}#{w + 1}", bot="random",
                             path=f"<competition>/bots/{w + 1}/random"),
            black=PlayerInfo(f"bot{k:02d}#{k + 1}", bot="random",
                             path=f"<competition>/bots/{k + 1}/random"),
            result=result, termination="timeout" if forfeit else "too-few-men",
            forfeit=forfeit, moves=[MoveInfo(m, wall_ms=3.0) for m in moves],
            tournament="bench", round=1, pair=pair, seed=seed,
            stderr={"white": "thinking...\n" * 5} if rng.random() < 0.3 else {})
        row = {"id": len(rows) + 1, "white_id": w + 1, "black_id": k + 1,
               "variant": variant.name, "pair": pair, "game": game, "seed": seed,
               "status": "done", "attempts": 1, "result": result, "record": record.to_json(),
               "created_at": "2026-01-01", "finished_at": "2026-01-01"}
        if "forfeit" in columns:
            row["forfeit"] = forfeit or ""
        if "kind" in columns:
            row["kind"] = "ladder"
        rows.append(row)
for n in range(queued):  # the judge's work for the whole run: ladder games between the 40
    a, b = rng.sample(range(bots), 2)
    pair += 1
    row = {"id": len(rows) + 1, "white_id": a + 1, "black_id": b + 1,
           "variant": variant.name, "pair": pair, "game": 0, "seed": rng.randrange(1 << 30),
           "status": "queued", "attempts": 0, "result": "", "record": "",
           "created_at": "2026-01-01", "finished_at": None}
    if "forfeit" in columns:
        row["forfeit"] = ""
    if "kind" in columns:
        row["kind"] = "ladder"
    rows.append(row)
if "record" not in columns:  # the records in a table of their own
    db.executemany("INSERT INTO records (game_id, record) VALUES (?, ?)",
                   [(r["id"], r["record"]) for r in rows if r["status"] == "done"])
    for r in rows:
        del r["record"]
names = list(rows[0])
db.executemany(f"INSERT INTO games ({', '.join(names)}) VALUES "
               f"({', '.join('?' for _ in names)})", [tuple(r[n] for n in names) for r in rows])
db.commit()
busiest = db.execute("SELECT white_id, count(*) FROM games WHERE status = 'done' GROUP BY white_id "
                     "ORDER BY 2 DESC LIMIT 1").fetchone()[0]
db.close()
print(json.dumps({"tokens": tokens, "bot": busiest, "game": games // 2}))
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _archive(bot: str, name: str) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in ("bot.py", "bot.yaml"):
            text = (ROOT / "bots" / bot / f).read_text()
            if f == "bot.yaml":
                text = text.replace(f"name: {bot}", f"name: {name}")
            zf.writestr(f"{name}/{f}", text)
    return buf.getvalue()


class Client:
    """One keep-alive connection (reconnected when the server drops it)."""

    def __init__(self, port: int, timeout: float = 60.0) -> None:
        self.port = port
        self.timeout = timeout
        self.conn: Optional[http.client.HTTPConnection] = None

    def request(self, method: str, path: str, body: Optional[bytes] = None,
                headers: Optional[dict[str, str]] = None) -> tuple[int, bytes]:
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=self.timeout)
            try:
                self.conn.request(method, path, body=body, headers=headers or {})
                resp = self.conn.getresponse()
                data = resp.read()
                if resp.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return resp.status, data
            except (http.client.HTTPException, OSError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def get_json(self, path: str, token: Optional[str] = None) -> Any:
        status, data = self.request("GET", path, headers={"Authorization": f"Bearer {token}"}
                                    if token else None)
        if status != 200:
            raise RuntimeError(f"{path}: {status} {data[:200]!r}")
        return json.loads(data)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def _wait(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise RuntimeError(f"timed out waiting for {what}")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def open_loop(port: int, routes: list[str], seconds: float, rate: float = RATE,
              seed: int = 1) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Poisson arrivals at ``rate`` per second for ``seconds``, each on a route chosen
    uniformly; each latency (ms) from its scheduled arrival to its answer's end.  A request
    that fails, times out or is still waiting :data:`GIVE_UP_S` after its arrival (a
    server that cannot keep up) is counted as failed, with that wait as its latency."""
    rng = random.Random(seed)
    arrivals: list[tuple[float, str]] = []
    t = 0.0
    while True:
        t += rng.expovariate(rate)
        if t >= seconds:
            break
        arrivals.append((t, rng.choice(routes)))
    latencies: dict[str, list[float]] = {r: [] for r in routes}
    failed: dict[str, int] = {r: 0 for r in routes}
    lock = threading.Lock()
    queue: list[tuple[float, str]] = []
    cond = threading.Condition(lock)
    done = threading.Event()
    start = time.perf_counter() + 0.2

    def worker() -> None:
        client = Client(port, timeout=GIVE_UP_S)
        try:
            while True:
                with cond:
                    while not queue and not done.is_set():
                        cond.wait(0.05)
                    if not queue:
                        return
                    at, path = queue.pop(0)
                ok = time.perf_counter() - at < GIVE_UP_S
                if ok:
                    try:
                        ok = client.request("GET", path)[0] == 200
                    except (OSError, http.client.HTTPException):
                        ok = False
                ms = (time.perf_counter() - at) * 1000
                with lock:
                    latencies[path].append(ms)
                    failed[path] += not ok
        finally:
            client.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(64)]
    for th in threads:
        th.start()
    for at, path in arrivals:
        delay = start + at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        with cond:
            queue.append((start + at, path))
            cond.notify()
    done.set()
    for th in threads:
        th.join(2 * GIVE_UP_S + 10)
    return latencies, failed


def closed_loop(port: int, path: str, seconds: float, server_pid: int) -> dict[str, float]:
    """``CLIENTS`` keep-alive clients requesting ``path`` back to back for ``seconds``:
    requests/s (answered with 200 within the window), p50, p95 (ms), the server process's
    CPU per request (ms) and the requests that failed."""
    import psutil

    times: list[tuple[float, float]] = []  # (when answered, ms)
    failed = [0]
    lock = threading.Lock()
    stop = threading.Event()
    go = threading.Barrier(CLIENTS + 1)

    def client() -> None:
        c = Client(port, timeout=GIVE_UP_S)
        try:
            c.request("GET", path)  # connected and warm
        except (OSError, http.client.HTTPException):
            pass
        go.wait()
        mine, bad = [], 0
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                ok = c.request("GET", path)[0] == 200
            except (OSError, http.client.HTTPException):
                ok = False
            if ok:
                now = time.perf_counter()
                mine.append((now, (now - t0) * 1000))
            else:
                bad += 1
        c.close()
        with lock:
            times.extend(mine)
            failed[0] += bad

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for th in threads:
        th.start()
    proc = psutil.Process(server_pid)
    go.wait()
    cpu0, t0 = sum(proc.cpu_times()[:2]), time.perf_counter()
    time.sleep(seconds)
    stop.set()
    cpu1, t1 = sum(proc.cpu_times()[:2]), time.perf_counter()
    for th in threads:
        th.join()
    inside = [ms for at, ms in times if at <= t1]  # not the answers that came after the window
    n = len(inside)
    return {"rps": n / (t1 - t0), "p50": _quantile(inside, 0.5), "p95": _quantile(inside, 0.95),
            "cpu_ms": 1000 * (cpu1 - cpu0) / max(1, n), "failed": float(failed[0]),
            "n": float(n), "seconds": t1 - t0, "cpu_s": cpu1 - cpu0}


def _drain(port: int, timeout: float = 90.0) -> None:
    """Wait until the server answers ``/api/status`` within a second again (a server that
    fell behind works through its backlog before the next measurement)."""
    deadline = time.monotonic() + timeout
    client = Client(port, timeout=GIVE_UP_S)
    try:
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            try:
                if client.request("GET", "/api/status")[0] == 200 and \
                        time.monotonic() - t0 < 1.0:
                    return
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.5)
    finally:
        client.close()


def _code_of(rev: str, tmp: Path) -> Path:
    """The tree of git revision ``rev`` in a folder of ``tmp`` (read-only for the repo)."""
    out = tmp / f"code-{rev.replace('/', '_')}"
    out.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "arena"],
                             capture_output=True, check=True).stdout
    import io

    with tarfile.open(fileobj=io.BytesIO(archive)) as tf:
        tf.extractall(out, filter="data")
    return out


def measure(code: Path, tmp: Path, quick: bool, echo: Callable[[str], Any]) -> dict[str, Any]:
    """Build the competition with ``code``, serve it, load it; the figures by route."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    arena = [sys.executable, "-c", "from arena.cli import main; main()"]
    folder = tmp / f"comp-{code.name}"
    (tmp / "bench.yaml").write_text(SETTINGS)
    # run from tmp: ``python -c`` puts the working directory first on sys.path
    subprocess.run([*arena, "server", "init", str(folder), "--config", str(tmp / "bench.yaml")],
                   env=env, check=True, capture_output=True, cwd=tmp)
    t0 = time.perf_counter()
    seeded = json.loads(subprocess.run(
        [sys.executable, "-c", SEED, str(folder), str(ROOT / "bots" / "random"), str(BOTS),
         str(GAMES), str(QUEUED)], env=env, check=True, capture_output=True, text=True,
        cwd=tmp).stdout)
    seeding = time.perf_counter() - t0
    port = _free_port()
    log = open(tmp / f"server-{code.name}.log", "wb")
    proc = subprocess.Popen([*arena, "server", "run", str(folder), "--port", str(port)],
                            env=env, stdout=log, stderr=log, start_new_session=True, cwd=tmp)
    client = Client(port)
    try:
        def up() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited: see {log.name}")
            try:
                return client.request("GET", "/api/status")[0] == 200
            except OSError:
                return False

        _wait(up, 60, "the server")
        # two uploads: checked, then their ladder games against the 40 keep the judge busy
        t0 = time.perf_counter()
        for k, bot in enumerate(("random", "greedy")):
            body, ctype = _multipart(_archive(bot, f"up-{bot}"))
            answer, out = client.request("POST", "/api/bots", body, {
                "Authorization": f"Bearer {seeded['tokens'][k]}", "Content-Type": ctype})
            if answer != 201:
                raise RuntimeError(f"upload: {answer} {out[:200]!r}")
        _wait(lambda: client.get_json("/api/status")["games"].get("running"), 180,
              "the judge to play")
        judging = time.perf_counter() - t0
        import sqlite3

        with sqlite3.connect(folder / "arena.db") as db:  # a game being played now
            running = db.execute("SELECT id FROM games WHERE status = 'running' "
                                 "ORDER BY id LIMIT 1").fetchone()
        bot, game = seeded["bot"], seeded["game"]
        routes = {"/api/status": "/api/status (reference)", "/": "leaderboard page",
                  "/api/leaderboard": "leaderboard JSON", f"/bots/{bot}": "a bot's page",
                  f"/games/{game}": "a game in the viewer", "/games": "games, page 1",
                  f"/games?bot={bot}&page=2": "games of a bot, page 2",
                  "/games?participant=p07&variant=nine-mens-morris":
                      "games of a participant",
                  f"/api/games/{running[0] if running else 0}/live": "a live board's JSON",
                  "/final": "the final page"}
        routes = {p: name for p, name in routes.items() if client.request("GET", p)[0] == 200}
        for path in routes:  # warm: each page once
            client.request("GET", path)
        seconds = 8.0 if quick else 30.0
        latencies, failed = open_loop(port, list(routes), seconds)
        # the stress: every route in turn, in short slices, several rounds (the judge's
        # work and the machine's load fall on every route alike)
        rounds, per_slice = (6, 0.3) if quick else (16, 0.4)
        slices: dict[str, list[dict[str, float]]] = {p: [] for p in routes}
        for _ in range(rounds):
            for path in routes:
                _drain(port)
                slices[path].append(closed_loop(port, path, per_slice, proc.pid))
        stress = {p: _merge(s) for p, s in slices.items()}
        for p, s in slices.items():  # each slice beside the reference's of the same round
            stress[p]["round_ratio"] = statistics.median(
                a["rps"] / max(1e-9, b["rps"]) for a, b in zip(s, slices["/api/status"]))
        _drain(port)
        try:
            status: Any = client.get_json("/api/status")
        except (OSError, http.client.HTTPException, RuntimeError):
            status = {"games": "(no answer)"}
    finally:
        client.close()
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    spread = [r["rps"] for r in slices["/api/status"]]
    return {"routes": routes, "latencies": latencies, "failed": failed, "stress": stress,
            "seeding": seeding, "judging": judging, "status": status, "seconds": seconds,
            "reference_spread": (min(spread), max(spread)), "rounds": rounds,
            "per_slice": per_slice}


def _merge(slices: list[dict[str, float]]) -> dict[str, float]:
    """The slices of one route as one measurement (requests/s and CPU per request over all
    of them; the latencies' quantiles as the median of the slices')."""
    seconds = sum(s["seconds"] for s in slices)
    n = sum(s["n"] for s in slices)
    return {"rps": n / seconds, "p50": statistics.median(s["p50"] for s in slices),
            "p95": statistics.median(s["p95"] for s in slices),
            "cpu_ms": 1000 * sum(s["cpu_s"] for s in slices) / max(1, n),
            "failed": sum(s["failed"] for s in slices)}


def _multipart(data: bytes) -> tuple[bytes, str]:
    boundary = "benchboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"bot.zip\"\r\nContent-Type: application/zip\r\n\r\n").encode()
    return body + data + f"\r\n--{boundary}--\r\n".encode(), \
        f"multipart/form-data; boundary={boundary}"


def _report(label: str, m: dict[str, Any], echo: Callable[[str], Any]) -> dict[str, float]:
    ref = m["stress"]["/api/status"]["rps"]
    lo, hi = m["reference_spread"]
    echo(f"  {label}: {GAMES:,} games seeded in {m['seeding']:.1f} s; games at the end: "
         f"{m['status']['games']}")
    echo(f"  class load: {RATE:.0f} req/s open-loop for {m['seconds']:.0f} s | stress: "
         f"{CLIENTS} clients, each route in {m['rounds']} slices of {m['per_slice']:g} s "
         f"taken in turn (/api/status's slices: {lo:.0f} to {hi:.0f} req/s)")
    echo(f"    {'route':<30} {'n':>4} {'p50':>6} {'p95':>6} {'fail':>4} | {'req/s':>6} "
         f"{'ratio':>5} {'rnd':>5} {'p50':>6} {'p95':>6} {'cpu/req':>8}")
    figures = {}
    for path, name in m["routes"].items():
        lat = m["latencies"][path]
        s = m["stress"][path]
        p50, p95 = _quantile(lat, 0.5), _quantile(lat, 0.95)
        ratio = s["rps"] / ref
        flags = ("" if p95 <= TARGET_P95_MS else " p95!") + (
            "" if ratio >= TARGET_RATIO else " ratio!")
        fails = m["failed"][path] + int(s["failed"])
        echo(f"    {name:<30} {len(lat):>4} {p50:6.0f} {p95:6.0f} {m['failed'][path]:>4} | "
             f"{s['rps']:6.0f} {ratio:5.2f} {s['round_ratio']:5.2f} {s['p50']:6.0f} "
             f"{s['p95']:6.0f} "
             f"{s['cpu_ms']:6.2f}ms{flags}{f' ({fails} failed)' if fails else ''}")
        key = name.split(" (")[0].replace(" ", "_").replace("'", "").replace(",", "")
        figures.update({f"{label}_{key}_p95_ms": p95, f"{label}_{key}_ratio": ratio,
                        f"{label}_{key}_round_ratio": s["round_ratio"],
                        f"{label}_{key}_cpu_ms": s["cpu_ms"]})
    echo("    (n, p50, p95, fail: the class's load, ms from the scheduled arrival, requests "
         f"failed or unanswered after {GIVE_UP_S:.0f} s; then the stress: req/s, its ratio to "
         "/api/status's, the median of that ratio within each round (rnd), p50, p95 ms, the "
         "server's CPU per request)")
    return figures


def bench(quick: bool = False, echo: Callable[[str], Any] = print,
          before: Optional[str] = None) -> dict[str, float]:
    """Measure this checkout's server (and, with ``before``, a git revision's first)."""
    load = os.getloadavg()[0]
    echo(f"server benchmark ({'quick' if quick else 'full'}; a real server process, SQLite, "
         f"{BOTS} bots, {GAMES:,} games, the judge playing; load average {load:.1f} on "
         f"{os.cpu_count()} CPUs)")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        runs = []
        if before:
            runs.append((f"before ({before})", _code_of(before, tmp)))
        runs.append(("now", ROOT))
        for label, code in runs:
            m = measure(code, tmp, quick, echo)
            figures.update(_report(label, m, echo))
            shutil.rmtree(tmp / f"comp-{code.name}", ignore_errors=True)
    return figures


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run")
    parser.add_argument("--before", metavar="REV", default=None,
                        help="also measure the server of this git revision, first")
    args = parser.parse_args(argv)
    bench(quick=args.quick, before=args.before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
