"""``arena watch`` beside a run (issue 40): games per second of a 200-game tournament of
instant bots with the page open and a browser following it, against the same run without,
measured side by side, alternating (without, with, without, with: the machine's drift falls
on both), printed with their ratio (the target: at least 0.95).

Each run is a real ``arena run`` process (2 workers, random vs random on nine men's morris,
report off); "with" is ``arena run --watch`` and headless Chromium (Selenium) on its page,
which follows the run's event stream, or, where Chromium or its driver is missing, a plain
reader of the event stream (said in the output).  The rate is the run's games over its wall
time from its first game to its last (``games.jsonl``'s first and last ``finished``), so the
starts of the process, the page and the browser are not counted.

Run alone with ``python benchmarks/bench_watch.py [--quick]``.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable alone from a checkout

GAMES = 200
QUICK_GAMES = 40
TARGET = 0.95


def _config(folder: Path, name: str, games: int) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        f"name: {name}\nbots: [{ROOT}/bots/random, {{path: {ROOT}/bots/random, name: random-2}}]\n"
        f"variants: [nine-mens-morris]\nformat: match\ngames_per_pairing: {games}\n"
        f"time: {{movetime: 1000}}\nisolation: none\nworkers: 2\nreport: false\n"
        f"output: {folder / name}\n", encoding="utf-8")
    return path


def _rate(folder: Path) -> tuple[int, float]:
    """Games and games per second between the first game's end and the last's."""
    ends = []
    with open(folder / "games.jsonl", encoding="utf-8") as f:
        for line in f:
            ends.append(datetime.fromisoformat(json.loads(line)["finished"]).timestamp())
    span = max(ends) - min(ends)
    return len(ends), (len(ends) - 1) / span if span > 0 else float("nan")


def _browser(url: str) -> Optional[Any]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        return None
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1920,1080"):
        options.add_argument(flag)
    d = webdriver.Chrome(options=options, service=Service(driver))
    d.get(url)
    return d


def _stream_reader(url: str, stop: threading.Event) -> threading.Thread:
    m = re.match(r"http://([^:/]+):(\d+)/", url)
    assert m

    def read() -> None:
        with socket.create_connection((m.group(1), int(m.group(2))), timeout=30) as s:
            s.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{m.group(2)}\r\n\r\n".encode())
            while not stop.is_set() and s.recv(65536):
                pass

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def _run(folder: Path, name: str, games: int, watch: bool) -> tuple[float, str]:
    config = _config(folder, name, games)
    args = [sys.executable, "-m", "arena.cli", "run", str(config)] + (["--watch"] if watch else [])
    err = folder / f"{name}.err"
    with open(err, "wb") as stderr:
        run = subprocess.Popen(args, cwd=folder, stdout=subprocess.DEVNULL, stderr=stderr)
    how = "no page"
    browser = None
    stop = threading.Event()
    try:
        if watch:
            deadline = time.monotonic() + 60
            url = None
            while url is None and time.monotonic() < deadline and run.poll() is None:
                found = re.search(r"at (http://127\.0\.0\.1:\d+/)", err.read_text())
                url = found.group(1) if found else None
                time.sleep(0.05)
            if url is None:
                raise RuntimeError(f"arena run --watch printed no address: {err.read_text()}")
            browser = _browser(url)
            if browser is not None:
                how = "page open in headless Chromium"
            else:
                _stream_reader(url, stop)
                how = "page's event stream read (no Chromium here)"
        if run.wait(600) != 0:
            raise RuntimeError(f"arena run failed: {err.read_text()[-1000:]}")
    finally:
        stop.set()
        if browser is not None:
            browser.quit()
        if run.poll() is None:
            run.kill()
    played, rate = _rate(folder / name)
    if played != games:
        raise RuntimeError(f"{name}: {played} games of {games}")
    return rate, how


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    games = QUICK_GAMES if quick else GAMES
    without: list[float] = []
    with_page: list[float] = []
    how = ""
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp:
        for k in range(2):
            without.append(_run(Path(tmp), f"plain-{k}", games, watch=False)[0])
            rate, how = _run(Path(tmp), f"watched-{k}", games, watch=True)
            with_page.append(rate)
    plain, watched = sorted(without)[-1], sorted(with_page)[-1]  # each at its best
    ratio = watched / plain
    echo(f"arena watch beside a run: {games} games of instant bots, 2 workers, best of 2 "
         f"each, alternating ({how})")
    echo(f"  without the page {plain:6.1f} games/s ({', '.join(f'{r:.1f}' for r in without)})")
    echo(f"  with the page    {watched:6.1f} games/s ({', '.join(f'{r:.1f}' for r in with_page)})"
         f"  ratio {ratio:.3f} (target >= {TARGET})")
    return {"games_per_s_plain": plain, "games_per_s_watched": watched, "ratio": ratio}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import standalone

    sys.exit(standalone(bench, __doc__))
