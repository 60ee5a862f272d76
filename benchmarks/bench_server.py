"""The competition server (issue 16) under load: a real ``arena server run`` process on a local
port with its SQLite file.  Two participants upload bots (bots/random and bots/greedy, zipped);
the time until both are judged and their ladder games are played gives submissions judged per
minute.  Then 50 clients request each page at once: requests per second and the p50 / p95
latency of each, printed beside ``/api/status`` (a page that reads almost nothing) under the
same load, as the reference.

Run alone with ``python benchmarks/bench_server.py [--quick]`` (needs the ``server`` extra).
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable alone from a checkout
ARENA = [str(Path(sys.executable).with_name("arena"))]

SETTINGS = ("name: bench\ntime: {movetime: 50}\npairs: 2\ncheck_games: 1\nworkers: 2\n"
            # 50 clients from one address: the rate limit is not what is measured
            "rate_limit: {participant: 10000000/minute, anonymous: 10000000/minute}\n")
CLIENTS = 50


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _arena(*args: str) -> str:
    out = subprocess.run([*ARENA, *args], capture_output=True, text=True, check=True)
    return out.stdout


def _archive(bot: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in ("bot.py", "bot.yaml"):
            zf.writestr(f"{bot}/{name}", (ROOT / "bots" / bot / name).read_bytes())
    return buf.getvalue()


def _request(url: str, token: Optional[str] = None, body: Optional[bytes] = None,
             ctype: Optional[str] = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method="POST" if body else "GET")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if ctype:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _upload(base: str, token: str, bot: str) -> int:
    boundary = "benchboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{bot}.zip\"\r\nContent-Type: application/zip\r\n\r\n").encode()
    body += _archive(bot) + f"\r\n--{boundary}--\r\n".encode()
    status, out = _request(f"{base}/api/bots", token, body,
                           f"multipart/form-data; boundary={boundary}")
    if status != 201:
        raise RuntimeError(f"upload of {bot}: {status} {out[:200]!r}")
    return int(json.loads(out)["id"])


def _wait(predicate: Callable[[], Any], timeout: float = 180) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise RuntimeError("timed out")


def _load(url: str, per_client: int) -> tuple[float, float, float]:
    """``CLIENTS`` threads, ``per_client`` requests each: (requests/s, p50 ms, p95 ms)."""
    times: list[float] = []
    lock = threading.Lock()
    errors: list[int] = []

    def client() -> None:
        for _ in range(per_client):
            t0 = time.perf_counter()
            status, _ = _request(url)
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                times.append(ms)
                if status != 200:
                    errors.append(status)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise RuntimeError(f"{url}: {len(errors)} requests failed ({errors[:3]})")
    q = statistics.quantiles(times, n=100)
    return len(times) / elapsed, q[49], q[94]


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Judge two uploads, then load every page with 50 clients."""
    per_client = 2 if quick else 6
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "comp"
        (Path(tmp) / "bench.yaml").write_text(SETTINGS)
        _arena("server", "init", str(folder), "--config", str(Path(tmp) / "bench.yaml"))
        tokens = [_arena("server", "user", str(folder), who).strip().splitlines()[-1]
                  for who in ("alice", "bob")]
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        with open(Path(tmp) / "server.log", "wb") as log:
            proc = subprocess.Popen([*ARENA, "server", "run", str(folder), "--port", str(port)],
                                    stdout=log, stderr=log, start_new_session=True)
        try:
            def up() -> bool:
                if proc.poll() is not None:
                    raise RuntimeError("the server exited: see its log")
                try:
                    return _request(f"{base}/api/status")[0] == 200
                except OSError:
                    return False

            _wait(up, 30)
            t0 = time.perf_counter()
            ids = [_upload(base, tokens[0], "random"), _upload(base, tokens[1], "greedy")]

            def judged() -> bool:
                return all(json.loads(_request(f"{base}/api/bots/{i}", tokens[k])[1])["status"]
                           != "checking" for k, i in enumerate(ids))

            _wait(judged)
            judging = time.perf_counter() - t0

            def settled() -> bool:
                games = json.loads(_request(f"{base}/api/status")[1])["games"]
                return games.get("done", 0) > 0 and not games.get("queued") \
                    and not games.get("running")

            _wait(settled)
            played = time.perf_counter() - t0
            game_id = json.loads(_request(f"{base}/api/games")[1])[0]["id"]
            pages = {"/api/status": "reference", "/": "leaderboard page",
                     "/api/leaderboard": "leaderboard JSON", f"/bots/{ids[0]}": "a bot's page",
                     f"/games/{game_id}": "a game in the viewer",
                     f"/api/games/{game_id}/live": "a live board's JSON"}
            figures: dict[str, float] = {"submissions_per_min": 2 / judging * 60,
                                         "ladder_s": played}
            rows = {path: _load(base + path, per_client) for path in pages}
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    ref = rows["/api/status"]
    echo(f"server benchmark ({'quick' if quick else 'full'}; a real server process, SQLite, "
         f"{CLIENTS} clients x {per_client} requests per page)")
    echo(f"  2 uploads judged in {judging:.1f} s: {2 / judging * 60:.1f} submissions/min; "
         f"their ladder games played {played:.1f} s after the first upload")
    for path, (rps, p50, p95) in rows.items():
        echo(f"  {pages[path]:<22} {rps:7.1f} req/s  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms"
             + ("" if path == "/api/status" else f"   p50 {p50 / ref[1]:5.2f}x the reference"))
        key = pages[path].replace(" ", "_").replace("'", "")
        figures[f"{key}_p50_ms"], figures[f"{key}_p95_ms"] = p50, p95
    return figures


if __name__ == "__main__":
    from benchmarks.run import standalone

    sys.exit(standalone(bench, __doc__))
