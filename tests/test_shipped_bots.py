"""Every shipped bot passes the submission check at every isolation level this machine offers
(issue 35: a verdict does not depend on the machine, its load or its sandbox).

Each folder of ``bots/`` and of ``docs/examples/`` is checked as ``arena check`` checks it
(:func:`arena.check.check_bot`, its report through :func:`arena.check.format_report`): the
build if there is one, the handshake, games against ``bots/random`` taking both colours,
then games in a row by one process, at ``none``, ``basic`` and ``bwrap``.  To stay cheap it
plays one variant (six men's morris, a short game, or the first the bot lists), the fewest
games of ``arena check --games`` and a short move time.  A bot whose build writes files is checked
in a copy (nothing is built in the checkout); the others are checked where they are, which
is what shows a bot needing something outside its folder (``bots/perfect-endgame`` once
imported ``bots/alphabeta`` from next to it, which the ``bwrap`` sandbox does not show).

A level this machine does not offer, and a bot whose toolchain is not installed, is skipped
with the reason.  Nothing here depends on wall times: the check charges the bot's own time
and never holds a game the machine starved against the bot; a check left without a verdict
by such games (``NOT JUDGED``, where the check reports it) is run again, and skipped with
its report if the machine stays too busy to judge it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from arena.build import STAMP
from arena.check import (DEFAULT_OPPONENT, DEFAULT_VARIANTS, KEPT_GAMES, check_bot,
                         format_report)
from arena.clock import TimeControl
from arena.manifest import BotSpec, load_bot
from arena.sandbox import Isolation, Level, available_levels, checks, default_charge
from arena.variants import load_variant
from tests.conftest import ROOT
from tests.test_toolchains import TOOLCHAIN_EXAMPLES

pytestmark = pytest.mark.usefixtures("no_leftover_children")

LEVELS = available_levels()
#: every shipped bot folder, as a path relative to the checkout
FOLDERS = sorted(str(p.relative_to(ROOT)) for parent in ("bots", "docs/examples")
                 for p in (ROOT / parent).iterdir() if p.is_dir())
#: the folders that need programs besides Python (a compiler, a runtime), and those programs
NEEDS: dict[str, tuple[str, ...]] = {
    "bots/c-first": ("cc",), "bots/js-greedy": ("node",),
    **{f"docs/examples/{name}": tools for name, tools in TOOLCHAIN_EXAMPLES.items()}}
#: what a build leaves in a folder (not copied: every check builds afresh)
BUILT = ("target", "bot", "bot.jar", "classes", STAMP)
#: the fewest games ``arena check --games`` allows, per variant (colours alternating)
GAMES = 2
#: short moves: a check tests legality, not strength (``arena check`` plays 200 ms)
MOVETIME_MS = 50
#: the variant checked, where the bot plays it: a short game
VARIANT = "six-mens-morris"
#: checks run before giving up on a machine too busy to judge one
TRIES = 3


def _unavailable(level: Level) -> str:
    """Why ``level`` is not offered here (as ``arena doctor`` says it), "" when it is."""
    if level in LEVELS:
        return ""
    said = next((c.detail for c in checks() if c.name == level.value), "not available")
    return f"isolation level {level.value} is not available here: {said}"


def _missing(folder: str) -> str:
    """The programs ``folder`` needs that are not installed here ("" when none is)."""
    absent = [p for p in NEEDS.get(folder, ()) if shutil.which(p) is None]
    return ", ".join(absent)


def _params() -> list[object]:
    return [pytest.param(folder, marks=pytest.mark.slow) if folder in NEEDS else folder
            for folder in FOLDERS]


def _prepared(folder: str, tmp_path: Path) -> BotSpec:
    """The bot of ``folder``: in place, or, if it has a build, a fresh copy readable by the
    unprivileged uid a bot runs as under root."""
    spec = load_bot(ROOT / folder)
    if not spec.build:
        return spec
    tmp_path.chmod(0o755)
    copy = tmp_path / Path(folder).name
    shutil.copytree(ROOT / folder, copy, ignore=shutil.ignore_patterns(*BUILT))
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return load_bot(copy)


@pytest.mark.parametrize("folder", _params())
@pytest.mark.parametrize("level", list(Level), ids=lambda lv: lv.value)
def test_every_shipped_bot_passes_arena_check_at_every_level(level: Level, folder: str,
                                                             tmp_path: Path) -> None:
    why = _unavailable(level)
    if why:
        pytest.skip(why)
    absent = _missing(folder)
    if absent:
        pytest.skip(f"{folder} needs {absent}, not installed here")
    spec = _prepared(folder, tmp_path)
    offered = spec.variants or DEFAULT_VARIANTS
    variant = load_variant(VARIANT if VARIANT in offered else offered[0])
    tc = TimeControl(movetime_ms=MOVETIME_MS, clock=default_charge())
    for _ in range(TRIES):
        report = check_bot(spec, variants=[variant], games=GAMES, time_control=tc,
                           opponent=load_bot(DEFAULT_OPPONENT), isolation=Isolation(level),
                           retry_build=True)  # as arena check: build again after a failure
        lines = format_report(report)
        shown = "\n".join(lines)
        if report.verdict != "NOT JUDGED":
            break
    else:
        pytest.skip(f"the machine was too busy to judge {folder} at {level.value} "
                    f"({TRIES} checks):\n{shown}")
    assert report.passed, f"arena check {folder} --isolation {level.value}:\n{shown}"
    assert lines[-1].startswith(f"PASS: {spec.name} "), shown
    assert report.handshake is not None and report.handshake.id.get("name"), shown
    assert len(report.games) == GAMES + KEPT_GAMES, shown
    assert {r.variant for r in report.games} == {variant.name}, shown


def test_the_matrix_covers_every_shipped_bot_and_names_what_each_needs() -> None:
    """Every folder is checked, and a bot needing more than Python (a build, a command other
    than ``{python}``) says what, so that a missing tool is a skip with its name, not a
    failure (and a new such bot cannot be added without saying it)."""
    assert {"bots/alphabeta", "bots/perfect-endgame", "bots/random",
            "docs/examples/first", "docs/examples/minimal"} <= set(FOLDERS)
    assert set(NEEDS) <= set(FOLDERS), set(NEEDS) - set(FOLDERS)
    for folder in FOLDERS:
        spec = load_bot(ROOT / folder)
        python = not spec.build and spec.command[0] == sys.executable
        assert python or folder in NEEDS, f"{folder}: add the programs it needs to NEEDS"
