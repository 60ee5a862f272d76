"""``arena run`` from a cutechess-cli / fastchess command line (issue 39), through the real
command line: the manual's command line plays a tournament of real engine processes (the
tiny engine of tests/bots/tiny-uci, which sends ``bestmove M ponder P``), writes the PGN and
resumes; every row of docs/TOURNAMENTS.md's mapping table becomes the setting it claims
(``arena run --as-yaml``); options without a Morris meaning, and bad values, are one line
and exit status 2.  No wall-clock assertion: the games use a clock no instant engine runs
out of, on a loaded machine too."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from arena.cli import cli
from arena.compat import OPTIONS, split_command_line, tournament_mapping

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "bots" / "tiny-uci"
DOCS = ROOT / "docs" / "TOURNAMENTS.md"
#: two engines for the rows that name none (as the table says)
ENGINES = ["-engine", "cmd=./a", "name=a", "-engine", "cmd=./b", "name=b"]
#: a PGN book of three openings (tags, move numbers and results are not turns)
BOOK = ('[Event "one"]\n\n1. a1 d7 2. g1 *\n\n[Event "two"]\n\n1. d2 d6 *\n\n'
        '[Event "three"]\n[Round "3"]\n\n1. b4 f4 {a comment} *\n')
#: a position book of one line (docs/TOURNAMENTS.md, *openings*)
EPD = 'W...B.....B..W.....B.W.. w 6 6 6 - - 6 id "open mill";\n'
OPENINGS = [("a1", "d7", "g1"), ("d2", "d6"), ("b4", "f4")]


def arena(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="arena")
    return result.exit_code, result.stdout, result.stderr


def manual_line(*, rounds: int = 2) -> list[str]:
    """cutechess's manual's command line with the tiny engine (two seeds of it), a tiny
    clock and few rounds."""
    engine = ["cmd={python} engine.py", f"dir={TINY}"]
    return ["run", "-engine", *engine, "arg=1", "name=tiny-1",
            "-engine", *engine, "arg=2", "name=tiny-2",
            "-each", "tc=10+0.1", "proto=morris",
            "-games", "2", "-rounds", str(rounds), "-repeat", "-concurrency", "2",
            "-openings", "file=book.pgn", "format=pgn", "order=random",
            "-draw", "movenumber=20", "movecount=4", "score=10", "-pgnout", "out.pgn"]


def pgn_games(path: Path) -> int:
    return len(re.findall(r"^\[Event ", path.read_text(), flags=re.M))


def test_the_manuals_command_line_plays_the_tournament_and_resumes(workdir: Path) -> None:
    (workdir / "book.pgn").write_text(BOOK)
    code, out, err = arena(*manual_line())
    assert code == 0, out + err
    assert "cutechess: 4/4 games (4 played now) in results/cutechess" in out
    folder = workdir / "results" / "cutechess"
    records = [json.loads(line) for line in (folder / "games.jsonl").read_text().splitlines()]
    assert len(records) == 4
    # bestmove M ponder P is a move, not a forfeit
    assert all(r.get("forfeit") is None for r in records), [r.get("detail") for r in records]
    assert {r["white"]["name"] for r in records} == {"tiny-1", "tiny-2"}
    # every game starts from a book opening, both games of a pair from the same one
    starts: dict[str, set[tuple[str, ...]]] = {}
    for r in records:
        opening = tuple(r["opening"])
        assert opening in OPENINGS, opening
        assert [m["move"] for m in r["moves"][:len(opening)]] == list(opening)
        starts.setdefault(r["game_id"].rsplit("/", 1)[0], set()).add(opening)
    assert len(starts) == 2 and all(len(s) == 1 for s in starts.values()), starts
    # the -draw rule ends the games of two engines that always say "score 0"
    assert any(r["termination"] == "adjudication" for r in records), \
        [(r["termination"], r["detail"]) for r in records]
    stored = json.loads((folder / "config.json").read_text())
    config = stored.get("config", stored)
    assert config["adjudicate"]["draw"] == {"after_turn": 20, "turns": 4, "score": 10}
    assert config["openings"]["order"] == "random" and config["games_per_pairing"] == 2
    assert pgn_games(workdir / "out.pgn") == 4
    # the same command line again resumes: nothing is played twice, the PGN keeps 4 games
    code, out, err = arena(*manual_line())
    assert code == 0, out + err
    assert "cutechess: 4/4 games (0 played now)" in out
    assert len((folder / "games.jsonl").read_text().splitlines()) == 4
    assert pgn_games(workdir / "out.pgn") == 4
    # another command line would play other games: refused, naming -event and --fresh
    code, out, err = arena(*manual_line(), "-srand", "5")
    assert code == 2 and "(changed: seed)" in err and "(-event NAME; or --fresh)" in err, err


def test_sprt_runs_arena_sprt_with_the_same_settings(workdir: Path) -> None:
    (workdir / "book.pgn").write_text(BOOK)
    line = manual_line(rounds=1)
    line += ["-event", "tiny-sprt", "-sprt", "elo0=0", "elo1=5", "alpha=0.05", "beta=0.05"]
    code, out, err = arena(*line, "--as-yaml")
    assert code == 0, out + err
    assert out.startswith("arena sprt ") and "--max-pairs 1 " in out
    assert "--book book.pgn --book-order random" in out and "--output results/tiny-sprt" in out
    code, out, err = arena(*line)
    # arena sprt's exit status: 0 a verdict, 1 undecided after the most games (here 2)
    assert code in (0, 1) and "Ptnml(0-2)" in out, out + err
    folder = workdir / "results" / "tiny-sprt"
    assert len((folder / "games.jsonl").read_text().splitlines()) == 2
    assert (folder / "sprt.json").exists() and pgn_games(workdir / "out.pgn") == 2
    # arena sprt, run from arena run, keeps arena's help options in this process too
    code, out, err = arena("sprt", "-h")
    assert code == 0 and "-h, -help, --help" in out, err


# -- the mapping table of docs/TOURNAMENTS.md ----------------------------------------------


def _table(marker: str) -> list[list[str]]:
    """The rows of the docs table between ``<!-- marker -->`` and ``<!-- /marker -->``, as
    their cells' code (the text between backticks, or the cell)."""
    text = DOCS.read_text()
    body = text.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]
    rows = []
    for line in body.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append([c[1:-1] if c.startswith("`") and c.endswith("`") else c
                     for c in cells])
    return rows


MAPPING = _table("cutechess-mapping")
REFUSED = _table("cutechess-refused")


def _contains(actual: Any, claim: Any) -> bool:
    """``claim`` is part of ``actual``: its keys with values contained, lists item by item."""
    if isinstance(claim, dict):
        return isinstance(actual, dict) and all(k in actual and _contains(actual[k], v)
                                                for k, v in claim.items())
    if isinstance(claim, list):
        return (isinstance(actual, list) and len(actual) == len(claim)
                and all(_contains(a, c) for a, c in zip(actual, claim)))
    return bool(actual == claim)


@pytest.fixture
def books(workdir: Path) -> Path:
    (workdir / "book.pgn").write_text(BOOK)
    (workdir / "book.txt").write_text("a1 d7 g1\nd2 d6\n")
    (workdir / "starts.epd").write_text(EPD)
    return workdir


@pytest.mark.parametrize("row", MAPPING, ids=[r[0][:50] for r in MAPPING])
def test_each_documented_option_becomes_the_setting_it_claims(books: Path,
                                                              row: list[str]) -> None:
    options, claim = shlex.split(row[0]), row[1]
    args = ["run", *([] if "-engine" in options else ENGINES), *options, "--as-yaml"]
    code, out, err = arena(*args)
    assert code == 0, (row, err)
    if claim.startswith("arena sprt"):
        expected = claim.replace("arena sprt A B ", "")
        assert out.startswith("arena sprt ") and expected in out, out
    elif claim != "—":
        made = yaml.safe_load(out)
        assert _contains(made, yaml.safe_load("{" + claim + "}")), (claim, made)


@pytest.mark.parametrize("row", REFUSED, ids=[r[0][:50] for r in REFUSED])
def test_an_option_without_a_morris_meaning_says_so_in_one_line(books: Path,
                                                                row: list[str]) -> None:
    options = shlex.split(row[0])
    code, out, err = arena("run", *([] if "-engine" in options else ENGINES), *options)
    assert code == 2, (row, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    words = {w.partition("=")[0] for w in options} - {"-engine", "-each", "cmd"}
    assert any(w in lines[0] for w in words), (words, lines[0])
    assert re.search(r"no Morris meaning|protocol|limit", lines[0]), lines[0]


def test_the_table_the_help_and_the_module_list_the_same_options() -> None:
    documented = {w for row in MAPPING for w in shlex.split(row[0])
                  if re.match(r"^-[a-z]", w) and w in OPTIONS}
    assert documented == set(OPTIONS), set(OPTIONS) ^ documented
    code, out, _ = arena("run", "--help")
    assert code == 0
    for option, what in OPTIONS.items():
        assert option in out, option
    assert "-rounds 50" in out and "results/<-event" in " ".join(out.split())
    code, out, _ = arena("run", "-help")
    assert code == 0 and "Usage: arena run [OPTIONS] [TOURNAMENT.yaml]" in out
    docs = DOCS.read_text()
    assert "-games 2 -rounds 50 -repeat -concurrency 2" in docs  # the manual's line


def test_an_epd_position_book_maps_to_the_book_format_epd(books: Path) -> None:
    """``format=epd`` is the position-book format ``epd`` (added to the checker by another
    piece of work: skipped, not failed, where the checker has no such format)."""
    made = tournament_mapping(split_command_line(
        [*ENGINES, "-openings", "file=starts.txt", "format=epd"])[0]).data
    assert made["openings"] == {"file": "starts.txt", "format": "epd"}
    from arena.openings import BOOK_FORMATS

    if "epd" not in BOOK_FORMATS:
        pytest.skip("the checker has no 'epd' book format yet (arena/openings.py)")
    (books / "starts.txt").write_text(EPD)
    code, out, err = arena("run", *ENGINES, "-openings", "file=starts.txt", "format=epd",
                           "--as-yaml")
    assert code == 0, err
    assert yaml.safe_load(out)["openings"] == {"file": "starts.txt", "format": "epd"}


@pytest.mark.parametrize("args,message", [
    (["-rounds", "abc"], "-rounds: expected a whole number, got 'abc'"),
    (["-games", "3"], "-games (games_per_pairing): expected an even number"),
    (["-concurrency", "0"], "-concurrency (workers): "),
    (["-rounds", "1", "2"], "-rounds: expected one value, got 2"),
    (["-draw", "movenumber=x", "movecount=2", "score=3"], "-draw movenumber: expected a "
                                                          "whole number"),
    (["-draw", "movenumber=20", "movecount=4"], "-draw (adjudicate.draw): missing: score"),
    (["-resign", "movecount=3", "scroe=600"], "did you mean score?"),
    (["-openings", "file=nope.pgn"], "nope.pgn: no such opening book"),
    (["-enigne", "cmd=./c"], "-enigne: unknown option (did you mean -engine?"),
    (["-tournament", "gauntlett"], "-tournament (format.type): expected one of"),
    (["-each", "tc=1+1", "-engine", "cmd=./c", "tc=2+1"],
     "-engine #3: its time control (clock=2+1) is not the first engine's (clock=1+1)"),
    (["-event", "my event"], "-event (name): expected a name of letters"),
    (["-each", "tc=fast"], "(time.clock): not a time control"),
    (["-each", "tcc=10"], "-each: unknown key 'tcc' (did you mean tc?"),
    (["-srand", "1", "-srand", "2"], "-srand: given twice"),
])
def test_a_bad_option_or_value_is_one_line_naming_the_option(books: Path, args: list[str],
                                                             message: str) -> None:
    code, out, err = arena("run", *ENGINES, *args)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err


def test_a_file_and_cutechess_options_together_or_neither_are_refused(books: Path) -> None:
    (books / "t.yaml").write_text("bots: [bots/random, bots/greedy]\n")
    code, _, err = arena("run", "t.yaml", *ENGINES)
    assert code == 2 and "a tournament file (t.yaml) or cutechess options" in err
    code, _, err = arena("run")
    assert code == 2 and "expected TOURNAMENT.yaml, or cutechess-cli's options" in err


def test_the_commands_own_options_mix_with_cutechess_ones(books: Path) -> None:
    """-j overrides -concurrency, -o the results folder; -vv and -help stay the command's."""
    groups, rest = split_command_line(["-engine", "cmd=./a", "-j", "3", "-vv", "-each",
                                       "tc=1+1", "-o", "out", "-draw", "score=-5"])
    assert groups == [("-engine", ["cmd=./a"]), ("-each", ["tc=1+1"]),
                      ("-draw", ["score=-5"])]
    assert rest == ["-j", "3", "-vv", "-o", "out"]
    code, out, err = arena("run", *ENGINES, "-concurrency", "4", "-j", "1", "--as-yaml")
    assert code == 0 and yaml.safe_load(out)["workers"] == 4, err  # the file's key; -j wins


def test_a_folder_of_syzygy_tables_is_refused_as_chess_tables(books: Path) -> None:
    (books / "syzygy").mkdir()
    (books / "syzygy" / "KQvK.rtbw").write_bytes(b"")
    code, _, err = arena("run", *ENGINES, "-tb", "syzygy")
    assert code == 2 and "-tb: no Morris meaning: syzygy holds Syzygy tables" in err, err
    code, out, err = arena("run", *ENGINES, "-tb", "tables", "--as-yaml")
    assert code == 0 and yaml.safe_load(out)["adjudicate"] == {"tablebase": "tables"}, err
