"""The layers of docs/ARCHITECTURE.md hold: import-linter's contracts (``pyproject.toml``) are
kept, every module of ``arena`` is in the layers contract (so a new module cannot slip past it
and there is no import cycle), and no module outgrows what a reader can hold."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import arena

ROOT = Path(__file__).resolve().parent.parent
#: a module longer than this must say why at its top (docs/ARCHITECTURE.md)
MAX_LINES = 700


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).parent / "lint-imports"
    if not lint.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return subprocess.run([str(lint), "--no-cache"], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_every_import_contract_is_kept() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout


def test_every_module_is_in_a_layer() -> None:
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    assert isinstance(layers, list)
    listed = {name.strip() for layer in layers for name in str(layer).split("|")}
    modules = {f"arena.{m.name}" for m in pkgutil.iter_modules(arena.__path__)}
    assert modules - listed == set(), "add the new module to a layer in pyproject.toml"
    assert listed - modules == set(), "the layers name a module that does not exist"


def test_a_module_that_imports_upwards_breaks_the_contract(tmp_path: Path) -> None:
    """The check can fail: a copy of the package in which the rules engine imports the
    runner is refused."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "arena", copy / "arena",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    rules = copy / "arena" / "rules.py"
    rules.write_text(rules.read_text() + "\nimport arena.tournament  # an upward import\n")
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                          cwd=copy, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"})
    if "No module named" in done.stderr and "importlinter" in done.stderr:
        pytest.skip("import-linter is not installed")
    assert done.returncode != 0
    assert "arena.rules -> arena.tournament" in done.stdout


def test_no_module_is_too_long_without_saying_why() -> None:
    long = []
    for path in sorted((ROOT / "arena").rglob("*.py")):
        lines = path.read_text().splitlines()
        if len(lines) > MAX_LINES and "longer than" not in "\n".join(lines[:40]):
            long.append(f"{path.relative_to(ROOT)}: {len(lines)} lines")
    assert long == []
