"""``arena doctor``: one line per level, cgroup controller and clock, with the reason."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena import sandbox
from arena.sandbox import levels, procs
from arena.cli import cli
from arena.sandbox import Level, best_level, bwrap_status


def test_doctor_reports_levels_cgroups_and_clocks() -> None:
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("levels: none, basic")
    assert lines[0].endswith(f"(default: {best_level().value})")
    assert f"bwrap: {bwrap_status().detail}" in lines
    assert any(line.startswith("cgroup memory: ") for line in lines)
    assert any(line.startswith("cpu clock: ") for line in lines)
    assert "wall clock: available (time.monotonic)" in lines


def test_doctor_without_bubblewrap_says_how_to_install_it() -> None:
    """With bwrap off the PATH the default falls back to basic, and the reason is shown."""
    env = dict(os.environ, PATH="/nonexistent")
    done = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()", "doctor",
                           "--strict"], capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 1, done.stderr
    assert "levels: none, basic (default: basic)" in done.stdout
    assert "bwrap: unavailable (bubblewrap is not installed: apt-get install -y bubblewrap)" \
        in done.stdout


def test_doctor_has_help() -> None:
    result = CliRunner().invoke(cli, ["doctor", "--help"])
    assert result.exit_code == 0 and "isolation levels" in result.output


# -- what the level in use does not protect, said once -----------------------------------

GOOD = Path(__file__).resolve().parents[1] / "bots" / "good"


def _as_normal_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the sandbox believe the referee is not root (messages only: no bot runs with
    this belief in the tests below that start bots at level none).  Every module of the
    sandbox asks ``procs.is_root()``, so this one patch reaches every use."""
    monkeypatch.setattr(procs, "is_root", lambda: False)


def test_doctor_warns_a_normal_user_that_basic_runs_bots_as_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _as_normal_user(monkeypatch)
    for where in (sandbox, levels):  # the CLI looks it up on the package, doctor's checks in levels
        monkeypatch.setattr(where, "best_level", lambda: Level.BASIC)
    # a machine without bubblewrap: the advice is to install it (with bwrap installed and
    # working, it says to choose it; installed and not working, why)
    monkeypatch.setattr(levels, "available_levels", lambda: [Level.NONE, Level.BASIC])
    import shutil

    real_which = shutil.which
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: None if name == "bwrap" else real_which(name, *a, **k))
    result = CliRunner().invoke(cli, ["doctor"])
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: isolation basic: bots run as you: they can read and write "
                        "your files, signal your processes and reach the network; install "
                        "bubblewrap for a file system boundary (apt-get install -y bubblewrap), "
                        "see `arena doctor`"]


def test_doctor_gives_no_warning_when_the_best_level_confines() -> None:
    result = CliRunner().invoke(cli, ["doctor"])
    confining = best_level() is Level.BWRAP or (best_level() is Level.BASIC and os.geteuid() == 0)
    assert ("warning:" in result.output) is not confining


def test_check_and_run_say_it_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`arena check` and `arena run` at an unconfining level print the warning exactly once
    (on stderr), however many games they play."""
    runner = CliRunner()
    result = runner.invoke(cli, ["check", str(GOOD), "--isolation", "none", "--games", "2",
                                 "--movetime", "100", "--opponent", str(GOOD)])
    assert result.stderr.count("warning: isolation none: bots run unconfined") == 1, result.stderr
    config = tmp_path / "t.yaml"
    config.write_text(f"name: t\nbots: [{GOOD}, {{path: {GOOD}, name: good2}}]\n"
                      f"variants: [three-mens-morris]\n"
                      f"games_per_pairing: 2\ntime: {{movetime: 100}}\nisolation: none\n"
                      f"workers: 1\noutput: {tmp_path / 'out'}\n")
    result = runner.invoke(cli, ["run", str(config)])
    assert result.stderr.count("warning: isolation none") == 1, (result.stdout, result.stderr)
