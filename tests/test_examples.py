"""The documentation's examples: every folder under docs/examples/ is a complete bot that
passes ``arena check`` with its defaults, and docs/BOTS.md documents every bot.yaml key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bot import load_bot
from arena.cli import cli
from arena.manifest import _MANIFEST_KEYS
from tests.conftest import ROOT
from tests.test_toolchains import TOOLCHAIN_EXAMPLES

pytestmark = pytest.mark.usefixtures("no_leftover_children")

EXAMPLES = ROOT / "docs" / "examples"
#: the examples in Python (those in compiled languages and Node need their toolchain:
#: tests/test_toolchains.py builds and checks them, or says why it cannot here)
PYTHON_EXAMPLES = sorted(p.name for p in EXAMPLES.iterdir() if p.name not in TOOLCHAIN_EXAMPLES)
BOTS_DOC = ROOT / "docs" / "BOTS.md"


def test_every_example_is_a_bot_folder() -> None:
    entries = sorted(EXAMPLES.iterdir())
    assert {p.name for p in entries} >= {"minimal", "first", *TOOLCHAIN_EXAMPLES}
    for entry in entries:
        assert entry.is_dir(), f"{entry} is not a bot folder"
        program = load_bot(entry).command[0]
        if entry.name in TOOLCHAIN_EXAMPLES:  # a compiled program, node or java
            continue
        # not looked up on PATH (a python3 there may be a shim a sandbox cannot see): {python}
        # or a file in the folder
        assert Path(program).is_absolute() or (entry / program).exists(), program


@pytest.mark.parametrize("folder", PYTHON_EXAMPLES)
def test_every_example_passes_arena_check_with_its_defaults(folder: str) -> None:
    result = CliRunner().invoke(cli, ["check", str(EXAMPLES / folder)])
    assert result.exit_code == 0, result.output
    assert "PASS: " in result.output
    spec = load_bot(EXAMPLES / folder)
    played = set(re.findall(r"^game (\S+?)(?:-kept)?-\d+: ", result.output, re.M))
    assert played == set(spec.variants or ("nine-mens-morris", "twelve-mens-morris",
                                           "six-mens-morris"))


def test_the_first_move_example_asks_for_the_legal_moves() -> None:
    assert load_bot(EXAMPLES / "first").legal_moves


def _documented_keys(text: str) -> set[str]:
    """The keys BOTS.md documents: each has a heading ``### `key` ...``."""
    return set(re.findall(r"^### `([a-z_]+)`", text, re.M))


def test_bots_md_documents_every_bot_yaml_key() -> None:
    documented = _documented_keys(BOTS_DOC.read_text(encoding="utf-8"))
    assert documented == set(_MANIFEST_KEYS)


def test_bots_md_points_at_folders_that_exist() -> None:
    text = BOTS_DOC.read_text(encoding="utf-8")
    for path in set(re.findall(r"`(docs/examples/[a-z_-]+)/?`", text)):
        assert (ROOT / path).is_dir(), path
    assert "minimal_bot.py" not in text


def test_the_readme_points_at_the_example_folders() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/examples/" in text and "minimal_bot.py" not in text
    assert Path(ROOT / "docs" / "BOTS.md").name in text


def test_the_complete_bot_yaml_in_bots_md_loads(tmp_path: Path) -> None:
    text = BOTS_DOC.read_text(encoding="utf-8")
    block = re.search(r"A complete `bot.yaml`.*?```yaml\n(.*?)```", text, re.S)
    assert block is not None
    (tmp_path / "bot.yaml").write_text(block.group(1))
    spec = load_bot(tmp_path)
    assert spec.options == {"Depth": "3"} and spec.variants == ("nine-mens-morris",)
    assert spec.build == ("/bin/sh", "-c", "make") and spec.build_timeout_s == 120
