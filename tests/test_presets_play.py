"""Every preset is played by the example bots (issue 15): each example bot passes ``arena check``
on every preset, and one small tournament between two example bots covers every preset, its
records replaying through the rules engine and the report.

Real bot processes throughout (bots/random, bots/greedy, bots/js-greedy), tiny move times.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.records import read_records
from arena.report.viewer import replay
from arena.rules import Position
from arena.variants import PRESETS

ROOT = Path(__file__).resolve().parent.parent
HAS_NODE = shutil.which("node") is not None


@pytest.mark.slow
@pytest.mark.parametrize("bot", ["random", "greedy", "js-greedy"])
def test_example_bot_passes_arena_check_on_every_preset(bot: str) -> None:
    """``arena check`` against bots/random, one game per preset (the bot white), then the
    check's two games in a row by one process."""
    if bot.startswith("js") and not HAS_NODE:
        pytest.skip("node is not installed")
    args = ["check", str(ROOT / "bots" / bot), "--games", "1", "--movetime", "50",
            "--isolation", "none"]
    for name in PRESETS:
        args += ["--variant", name]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output[-3000:]
    assert "PASS" in result.output
    for name in PRESETS:
        assert f"{name} game 1" in result.output or name in result.output


@pytest.mark.slow
def test_every_preset_plays_a_tournament_between_example_bots(tmp_path: Path) -> None:
    """js-greedy against random (greedy without node; greedy itself plays every preset in
    its check), two games per preset (each colour): every game ends by the rules (no forfeit)
    and replays move by move through the engine and the report's viewer."""
    first = "js-greedy" if HAS_NODE else "greedy"
    config = tmp_path / "presets.yaml"
    config.write_text(
        "name: presets\n"
        f"bots: [{ROOT}/bots/{first}, {ROOT}/bots/random]\n"
        f"variants: [{', '.join(PRESETS)}]\n"
        "games_per_pairing: 2\n"
        "time: {movetime: 50, margin: 1000}\n"  # a stall of a loaded CI machine: no loss
        "workers: 2\nseed: 15\nreport: false\nisolation: none\n"
        f"output: {tmp_path / 'out'}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(config)])
    assert result.exit_code == 0, result.output[-3000:]
    records = read_records(tmp_path / "out" / "games.jsonl")
    assert sorted(r.variant for r in records) == sorted(list(PRESETS) * 2)
    for r in records:
        assert r.forfeit is None and r.termination, (r.variant, r.termination, r.detail)
        rep = replay(r)
        assert not rep.error and len(rep.plies) == len(r.moves) + 1, (r.variant, rep.error)
        pos = Position(rep.variant)
        for info in r.moves:
            pos.push_text(info.move)
        outcome = pos.outcome()
        assert outcome is not None and outcome.termination.value == r.termination, r.variant
    # the new move shapes went through the protocol and the referee (El Filja's removals
    # always come when placement ends; Dooz's hand captures with a random player almost surely)
    moves = {r.variant: [m.move for r2 in records if r2.variant == r.variant for m in r2.moves]
             for r in records}
    assert any(m.startswith("x") for m in moves["el-filja"])
    assert any("x*" in m for m in moves["dooz"])


def test_arena_variants_lists_every_preset_with_its_source() -> None:
    result = CliRunner().invoke(cli, ["variants"])
    assert result.exit_code == 0, result.output
    for name, v in PRESETS.items():
        assert name in result.output and v.source[:60] in result.output, name
    for name in ("russian-mill", "dooz", "cheng-san-qi", "da-san-qi", "zhi-qi", "el-filja"):
        assert "Sanmill" in PRESETS[name].source
