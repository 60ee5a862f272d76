"""Shared fixtures for the referee tests: bot folders, fast time controls, pid checks."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from arena.bot import BotSpec, is_gone, load_bot
from arena.clock import TimeControl

ROOT = Path(__file__).resolve().parent.parent
TEST_BOTS = Path(__file__).resolve().parent / "bots"
EXAMPLE_BOTS = ROOT / "bots"
PIDFILE_ENV = "MORRIS_TEST_PIDFILE"
#: modules whose bots (tests/bots: one shared misbehave.py outside the bot folders, pids
#: reported through PIDFILE_ENV) cannot run sandboxed; tests/hostile covers the sandbox
UNSANDBOXED_MODULES = ("test_bot_process", "test_referee", "test_cli_play", "test_tournament")


@pytest.fixture(autouse=True)
def _test_bots_run_unsandboxed(request: pytest.FixtureRequest,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots started by :data:`UNSANDBOXED_MODULES` default to isolation level ``none``."""
    if request.module.__name__.rsplit(".", 1)[-1] in UNSANDBOXED_MODULES:
        monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")


def test_bot(name: str) -> BotSpec:
    """A bot from ``tests/bots/<name>``."""
    return load_bot(TEST_BOTS / name)


test_bot.__test__ = False  # type: ignore[attr-defined]  # not a test, despite the name


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh current directory (tournaments write ``results/`` below it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def random_bot() -> BotSpec:
    """The example random bot (``bots/random``)."""
    return load_bot(EXAMPLE_BOTS / "random")


@pytest.fixture
def fast_tc() -> TimeControl:
    """A per-move time that instant bots never exceed, even on a loaded machine."""
    return TimeControl(movetime_ms=2000, handshake_ms=5000, margin_ms=200)


@pytest.fixture
def pidfile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file where test bots write their pid and the pids of everything they spawn."""
    path = tmp_path / "pids.txt"
    monkeypatch.setenv(PIDFILE_ENV, str(path))
    return path


def read_pids(path: Path) -> list[int]:
    """The pids a test bot wrote (none if it wrote none)."""
    return [int(x) for x in path.read_text().split()] if path.exists() else []


@pytest.fixture
def assert_all_gone() -> Callable[[list[int]], None]:
    """Fails if any of the given pids still runs (zombies count as gone)."""

    def check(pids: list[int]) -> None:
        alive = [p for p in pids if not is_gone(p)]
        assert not alive, f"processes left behind: {alive}"

    return check


def assert_gone_within(pids: list[int], within: float) -> None:
    """Wait up to ``within`` seconds for ``pids`` (processes this test started) to be gone
    (zombies count as gone); fails naming those left (state, parent, command line), after
    killing them."""
    import psutil

    deadline = time.monotonic() + within
    while time.monotonic() < deadline and not all(is_gone(p) for p in pids):
        time.sleep(0.05)
    left = [p for p in pids if not is_gone(p)]
    seen = []
    for p in left:  # ours: started by this test; cleaned up before failing
        try:
            proc = psutil.Process(p)
            seen.append(f"{p} ({proc.status()}, parent {proc.ppid()}: "
                        f"{' '.join(proc.cmdline())[:120]})")
        except psutil.Error:
            seen.append(str(p))
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"left behind: {'; '.join(seen)}"


@pytest.fixture
def no_leftover_children() -> Iterator[None]:
    """Fails the test if it leaves a child process of the test runner behind (use it with
    ``pytest.mark.usefixtures``)."""
    import psutil

    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    yield

    def extra() -> list[int]:
        from arena.sandbox import watchdog_pid  # lives as long as the test runner, by design

        return [p.pid for p in me.children(recursive=True)
                if p.pid not in before and p.pid != watchdog_pid() and not is_gone(p.pid)]

    deadline = time.monotonic() + 1.0
    while extra() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not extra(), f"child processes left behind: {extra()}"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium through Selenium, one per test module (the report's viewer and the
    server's pages); skipped with the reason where either is missing."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("no chromium or chromedriver (apt-get install chromium chromium-driver; "
                    ".ci/run installs them as root)")
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--window-size=1200,900",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    d = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield d
    finally:
        d.quit()
