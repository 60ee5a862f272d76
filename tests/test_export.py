"""``arena export``: a real tiny tournament's games as PGN-style text, read back by a small
PGN reader written here (python-chess is not a dependency) and checked against
``games.jsonl``; hostile names cannot break the file; a missing or broken results folder is
one line and exit status 2."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.config import load_config
from arena.export import format_game
from arena.records import read_records
from arena.tournament import run_tournament

ROOT = Path(__file__).resolve().parent.parent

TINY = f"""\
name: tiny
bots: [{ROOT}/bots/random, {ROOT}/bots/greedy]
variants: [three-mens-morris, six-mens-morris]
games_per_pairing: 2
openings: {{random: 2}}
time: {{movetime: 50, margin: 300}}
workers: 2
seed: 1
report: false
"""

_TAG = re.compile(r'^\[([A-Za-z0-9_]+) "((?:[^"\\]|\\.)*)"\]$')


def read_pgn(text: str) -> list[tuple[dict[str, str], list[str], list[str], str]]:
    """Each game's tags, moves, comments and result token.  Strict: every line of a tag
    section must be one whole tag, every game must end with its result."""
    games = []
    for block in re.split(r"\n\n(?=\[)", text.strip("\n")):
        head, _, body = block.partition("\n\n")
        tags: dict[str, str] = {}
        for line in head.split("\n"):
            match = _TAG.match(line)
            assert match, f"not a tag line: {line!r}"
            assert match.group(1) not in tags, f"tag {match.group(1)} twice"
            tags[match.group(1)] = re.sub(r"\\(.)", r"\1", match.group(2))
        comments = re.findall(r"\{([^}]*)\}", body)
        tokens = re.sub(r"\{[^}]*\}", " ", body).split()
        result = tokens.pop()
        moves = [t for t in tokens if not re.fullmatch(r"\d+\.", t)]
        numbers = [int(t[:-1]) for t in tokens if re.fullmatch(r"\d+\.", t)]
        assert numbers == list(range(1, (len(moves) + 1) // 2 + 1))
        games.append((tags, moves, comments, result))
    return games


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A played tiny tournament's results folder (4 real games)."""
    work = tmp_path_factory.mktemp("export")
    path = work / "tiny.yaml"
    path.write_text(TINY.replace("name: tiny", f"name: tiny\noutput: {work}/results/tiny"))
    result = run_tournament(load_config(path), console=io.StringIO())
    assert result.complete and result.finished == 4
    return result.folder


def test_every_game_reads_back_with_its_tags_and_moves(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "games.pgn"
    result = CliRunner().invoke(cli, ["export", str(tiny), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 4 games" in result.output
    records = read_records(tiny / "games.jsonl")
    games = read_pgn(out.read_text(encoding="utf-8"))
    assert len(games) == len(records) == 4
    for record, (tags, moves, comments, token) in zip(records, games):
        assert list(tags)[:7] == ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
        assert tags["Event"] == "tiny" and tags["Round"] == "1"
        assert tags["White"] == record.white.name and tags["Black"] == record.black.name
        assert tags["Result"] == token == record.result
        assert tags["Variant"] == record.variant
        assert tags["GameId"] == record.game_id
        assert tags["PlyCount"] == str(len(record.moves))
        assert tags["TimeControl"] == "0.05/move"
        assert re.fullmatch(r"\d{4}\.\d\d\.\d\d", tags["Date"])
        assert tags["Termination"] == ("normal" if record.forfeit is None else tags["Termination"])
        assert moves == [m.move for m in record.moves]
        assert moves[:2] == record.opening and comments[0] == "opening: 2 turns"
        assert comments[-1].startswith(record.termination)
    # standard output gives the same text
    again = CliRunner().invoke(cli, ["export", str(tiny / "games.jsonl")])
    assert again.exit_code == 0 and again.output == out.read_text(encoding="utf-8")


def test_a_forfeit_is_named_in_termination_and_a_comment(tiny: Path) -> None:
    record = read_records(tiny / "games.jsonl")[0]
    lost = dataclasses.replace(record, result="0-1", termination="timeout", forfeit="white",
                               detail="no move within 50 ms")
    [(tags, moves, comments, token)] = read_pgn(format_game(lost))
    assert tags["Termination"] == "time forfeit" and tags["Forfeit"] == "white"
    assert comments[-1] == "white forfeits: timeout: no move within 50 ms" and token == "0-1"


def test_every_move_shape_of_the_rule_families_is_written_as_played(tiny: Path) -> None:
    """Captures from the hand (Dooz), several captures and removal-only turns (El Filja)
    are moves like any other, not 'unreadable'."""
    from arena.records import MoveInfo

    record = read_records(tiny / "games.jsonl")[0]
    shapes = ["d6x*", "a1x*x*", "d2x*xg7", "a1-a4xd1xg7", "xg7", "xa1xd1"]
    shaped = dataclasses.replace(record, opening=[], moves=[MoveInfo(m, 1.0) for m in shapes])
    [(tags, moves, comments, token)] = read_pgn(format_game(shaped))
    assert moves == shapes and not any("unreadable" in c for c in comments)


@pytest.mark.parametrize("name", [
    'evil"] [Result "1-0"]',
    'back\\slash\\',
    "two\nlines\n\n[Event \"x\"]\n",
    "esc\x1b[2J\x00nul\u2028sep",
    "brace} {comment",
])
def test_a_hostile_name_cannot_break_the_structure(tiny: Path, name: str) -> None:
    record = read_records(tiny / "games.jsonl")[0]
    hostile = dataclasses.replace(record, white=dataclasses.replace(record.white, name=name),
                                  detail=name, forfeit="black", termination="crash")
    text = format_game(hostile) + format_game(record)
    games = read_pgn(text)
    assert len(games) == 2
    (tags, moves, comments, token), second = games
    expected = "".join("\ufffd" if (c < " " or c == "\u2028") else c for c in name)
    assert tags["White"] == expected and tags["Result"] == record.result == token
    assert moves == [m.move for m in record.moves]
    assert second[0]["GameId"] == record.game_id
    assert all(ord(c) >= 32 for line in text.splitlines() for c in line)


def test_a_missing_or_broken_results_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    empty = tmp_path / "empty"
    empty.mkdir()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "games.jsonl").write_text('{"game_id": "x"}\nnot json at all\n{}\n')
    for target in (tmp_path / "nope", empty, broken):
        result = runner.invoke(cli, ["export", str(target), "-o", str(tmp_path / "out.pgn")])
        assert result.exit_code == 2, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
        assert result.output.startswith("Error: ") and str(target) in result.output
    assert not (tmp_path / "out.pgn").exists()


def test_export_has_help() -> None:
    result = CliRunner().invoke(cli, ["export", "--help"])
    assert result.exit_code == 0 and "PGN" in result.output


