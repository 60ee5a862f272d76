"""``arena doctor``: one line per level, cgroup controller and clock, with the reason."""

from __future__ import annotations

import os
import subprocess
import sys

from click.testing import CliRunner

from arena.cli import cli
from arena.sandbox import best_level, bwrap_status


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
