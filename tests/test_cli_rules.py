"""The rules commands of the CLI (`arena variants`, `arena perft`) through click's CliRunner,
and the `arena` group itself: every command on it, with help, and a cheap import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.rules import Position
from arena.variants import ALIASES, PRESETS


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_variants_lists_every_preset_with_its_rules_and_source() -> None:
    code, out, _ = run("variants")
    assert code == 0
    for name, v in PRESETS.items():
        assert f"\n{name}" in f"\n{out}"
        assert v.source in out
    assert "twelve-mens-morris  (aliases: 12mm)" in out
    assert "board=three men=3" in out and "mill_wins=true" in out
    assert set(ALIASES) <= set(out.replace(",", " ").replace(")", " ").split())


def test_perft_counts() -> None:
    assert run("perft", "nine-mens-morris", "3") == (0, "12144\n", "")
    assert run("perft", "3mm", "4")[1] == f"{Position('three-mens-morris').perft(4)}\n"
    assert run("perft", "nmm", "0")[1] == "1\n"


def test_perft_depth_five_of_nine_mens_morris() -> None:
    code, out, _ = run("perft", "nine-mens-morris", "5")
    assert (code, out) == (0, "5140800\n")


def test_perft_divide_sums_to_the_total() -> None:
    code, out, _ = run("perft", "six-mens-morris", "3", "--divide")
    lines = out.splitlines()
    assert code == 0 and lines[-1] == "total: 3360"
    counts = dict(line.split(": ") for line in lines[:-1])
    assert len(counts) == 16 and sum(map(int, counts.values())) == 3360
    assert counts["a1"] == str(15 * 14)


def test_perft_of_a_variant_file(tmp_path: Path) -> None:
    f = tmp_path / "lasker.yaml"
    f.write_text("base: nine-mens-morris\nmove_in_placement: true\nmen: 10\n")
    assert run("perft", str(f), "3") == (0, "13552\n", "")


@pytest.mark.parametrize("args,message", [
    (("perft", "chess", "2"), "unknown variant 'chess'"),
    (("perft", "missing.yaml", "2"), "cannot read variant file"),
])
def test_a_bad_variant_is_a_one_line_error_with_status_2(args: tuple[str, ...], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("Error: ") and message in err


def test_a_bad_variant_file_names_the_key(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("base: nine-mens-morris\nfly_at: 12\n")
    code, _, err = run("perft", str(f), "1")
    assert code == 2 and err.count("\n") == 1 and "bad.yaml.fly_at: expected 0..men" in err


def test_rules_commands_have_help() -> None:
    for command in ("variants", "perft"):
        code, out, _ = run(command, "--help")
        assert code == 0 and "Usage:" in out
    assert "DEPTH" in run("perft", "--help")[1]


def test_every_command_is_on_the_group_with_help() -> None:
    assert set(cli.commands) >= {"variants", "perft", "play", "check", "doctor", "run", "rate",
                                 "report", "show", "sprt", "export", "server", "tune",
                                 "tablebase"}
    for name, command in cli.commands.items():
        code, out, _ = run(name, "--help")
        assert command.help, f"{name} has no docstring"
        first_words = " ".join(command.help.split()[:4])
        assert code == 0 and "Usage:" in out and first_words in " ".join(out.split())


def test_the_command_line_imports_no_heavy_library() -> None:
    heavy = ("pandas", "matplotlib", "numpy", "scipy")
    code = f"import sys; import arena.cli; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and subcommand of ``group`` as argument paths."""
    found = []
    for name, command in group.commands.items():
        found.append((*path, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
    return found


def test_every_command_and_subcommand_takes_dash_h() -> None:
    paths = _commands(cli)
    assert ("server", "run") in paths and ("run",) in paths
    for path in [(), *paths]:
        code, out, err = run(*path, "-h")
        assert code == 0 and "Usage:" in out, (path, err)
        assert "-h, -help, --help" in out, path  # cutechess's -help too (issue 39)


def test_one_meaning_per_option_name() -> None:
    """--fresh discards results (--restart is its hidden, warning alias); -v is a count
    everywhere (-v the log, -vv the protocol lines); -o is the output."""
    for name in ("run", "sprt"):
        command = cli.commands[name]
        names = {opt: p for p in command.params for opt in getattr(p, "opts", [])}
        assert "--fresh" in names and names["--restart"].hidden, name
        assert "-o" in names, name
    for name in ("run", "sprt", "play", "check"):
        verbose = next(p for p in cli.commands[name].params if "-v" in getattr(p, "opts", []))
        assert getattr(verbose, "count", False), name
    for name in ("play", "check", "sprt", "rate"):
        assert any("--seed" in getattr(p, "opts", []) for p in cli.commands[name].params), name
    for name in ("run", "sprt", "report", "export"):
        assert any("-o" in getattr(p, "opts", []) for p in cli.commands[name].params), name
