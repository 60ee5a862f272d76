"""Engine output, recorded and shown (issue 27): the ``info`` fields a bot sends
(:func:`arena.protocol.parse_info`), written after each move of the PGN as cutechess writes
them (``{+120/5 0.183s}``), a PGN file appended game by game during a run (``pgn_out:``,
``--pgn-out`` on ``run`` and ``sprt``) that is valid after every game and gets no copy on a
resume, and ``arena show``'s line for the move shown.  Real games: bots/alphabeta (which sends
depth, score, nodes, time and pv) against bots/random (which sends nothing)."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.config import load_config
from arena.errors import ConfigError
from arena.export import eval_text, format_game, move_comment, score_text
from arena.pgn import append_game, catch_up, games_in
from arena.protocol import parse_info, score_value
from arena.records import GameRecord, MoveInfo, read_records
from arena.tournament import run_tournament
from tests.test_export import read_pgn

ROOT = Path(__file__).resolve().parent.parent

#: alphabeta against random, fast: three men's morris games last a few plies, so three
#: runs of the same file stay quick; a generous margin for a loaded machine
LIVE = f"""\
name: live
bots: [{ROOT}/bots/alphabeta, {ROOT}/bots/random]
variants: [six-mens-morris]
games_per_pairing: 2
openings: {{random: 1}}
time: {{movetime: 40, margin: 1000}}
workers: 2
seed: 3
report: false
"""

#: a comment after a bot's move: score/depth and time, or the time alone
_WITH_SCORE = re.compile(r"^([+-]M\d+|[+-]\d+|0)/\d+ \d+\.\d{3}s$")
_TIME_ONLY = re.compile(r"^\d+\.\d{3}s$")


# ---------------------------------------------------------------------------------------
# parse_info: what a bot may send, read without ever failing
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("depth 5 seldepth 8 score 120 nodes 24000 nps 130000 time 180 pv a1-a4 d7-d6",
     {"depth": 5, "seldepth": 8, "score": 120, "nodes": 24000, "nps": 130000, "time": 180,
      "pv": ["a1-a4", "d7-d6"]}),
    ("score cp -35 depth 2", {"score": -35, "depth": 2}),
    ("score win 7", {"score": {"win": 7}}),
    ("score loss 4", {"score": {"loss": 4}}),
    ("score mate 3", {"score": {"win": 5}}),            # UCI's mate: in moves; a win in 5 plies
    ("score mate 1", {"score": {"win": 1}}),            # wins with this very move
    ("score mate -2", {"score": {"loss": 4}}),           # mated after 2 moves of each side
    ("score mate 0", {"score": {"loss": 0}}),            # mated now: the side to move lost
    ("score +15", {"score": 15}),
    ("DEPTH 3 Score 9 PV d6", {"depth": 3, "score": 9, "pv": ["d6"]}),  # any case
    ("score cp 35 lowerbound", {"score": 35, "other": "lowerbound"}),
    ("pv a1 d7 depth 4 nodes 10", {"pv": ["a1", "d7"], "depth": 4, "nodes": 10}),
    ("depth 4 pv", {"depth": 4, "pv": []}),
    ("depth 3 string thinking: depth 9 score 100", {"depth": 3,
                                                    "string": "thinking: depth 9 score 100"}),
    ("string", {"string": ""}),
    ("depth 1 depth 2", {"depth": 2}),                   # the later one counts
    ("currmove a1 hashfull 500 multipv 1 tbhits 3",
     {"other": "currmove a1 tbhits 3", "hashfull": 500, "multipv": 1}),
    ("depth", {"other": "depth"}),                       # a field without its value
    ("depth five score", {"other": "depth five score"}),
    ("score cp", {"other": "score cp"}),
    ("score win x nodes 3", {"other": "score win x", "nodes": 3}),
    ("score 1.5e3 depth 2", {"other": "score 1.5e3", "depth": 2}),
    ("nodes " + "9" * 25, {"other": "nodes " + "9" * 25}),  # not a number a record keeps
    ("", {}),
    ("   ", {}),
    ("hello world", {"other": "hello world"}),
])
def test_parse_info_reads_the_conventional_fields_and_keeps_the_rest(
        text: str, expected: dict[str, Any]) -> None:
    assert parse_info(text) == expected


def test_parse_info_never_fails_on_digits_int_refuses() -> None:
    assert parse_info("depth \u00b2 score 3") == {"other": "depth \u00b2", "score": 3}


def test_score_value_and_the_score_as_text() -> None:
    assert score_value(120) == 120.0 and score_value(None) is None
    assert score_value({"win": 7}) > score_value(5000) > score_value({"loss": 7})
    assert score_value({"win": 3}) > score_value({"win": 7})  # sooner is better
    assert [score_text(s) for s in (120, -35, 0, {"win": 7}, {"loss": 4}, True, "x", None,
                                    {"win": 1, "loss": 2}, float("nan"))] == \
        ["+120", "-35", "0", "+M7", "-M4", None, None, None, None, None]
    assert eval_text({"score": 120, "depth": 5}) == "+120/5"
    assert eval_text({"score": {"loss": 4}}) == "-M4"
    assert eval_text({"depth": 5}) == eval_text(None) == ""
    assert move_comment(MoveInfo("d6", 183.4, info={"score": 12, "depth": 3})) == "+12/3 0.183s"
    assert move_comment(MoveInfo("d6", 5.0)) == "0.005s"
    assert move_comment(MoveInfo("d6", 0.0, opening=True, info={"score": 1})) == ""


# ---------------------------------------------------------------------------------------
# A real run with pgn_out: the file after each game, a resume, a grown tournament
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """alphabeta vs random with ``pgn_out:``: one game, then a resume that plays the other,
    then a resume with twice the games; the PGN file as it was after every game."""
    import arena.tournament as tournament

    work = tmp_path_factory.mktemp("pgnout")
    pgn = work / "out" / "live.pgn"
    path = work / "live.yaml"
    path.write_text(LIVE + f"output: {work / 'results'}\npgn_out: {pgn}\n", encoding="utf-8")
    seen: list[str] = []
    real = tournament.add_game

    def add_game(target: Any, record: GameRecord) -> None:
        real(target, record)
        seen.append(Path(target).read_text(encoding="utf-8"))

    mp = pytest.MonkeyPatch()
    mp.setattr(tournament, "add_game", add_game)
    try:
        first = run_tournament(load_config(path), console=io.StringIO(), max_games=1)
        after_first = pgn.read_text(encoding="utf-8")
        second = run_tournament(load_config(path), console=io.StringIO())
        after_second = pgn.read_text(encoding="utf-8")
        path.write_text(path.read_text().replace("games_per_pairing: 2", "games_per_pairing: 4"))
        third = run_tournament(load_config(path), console=io.StringIO())
    finally:
        mp.undo()
    assert (first.played, second.played, third.played) == (1, 1, 2)
    return {"folder": third.folder, "pgn": pgn, "seen": seen, "config": path,
            "after": [after_first, after_second, pgn.read_text(encoding="utf-8")]}


def test_the_pgn_file_is_valid_after_every_game_and_a_resume_adds_no_copy(
        live: dict[str, Any]) -> None:
    seen, after = live["seen"], live["after"]
    assert len(seen) == 4  # one append per game played, over three runs
    for k, text in enumerate(seen, 1):
        games = read_pgn(text)  # strict: whole games only, each with its result
        assert len(games) == k
        assert all(tags["Result"] == token for tags, _, _, token in games)
    ids = [tags["GameId"] for tags, *_ in read_pgn(after[-1])]
    records = read_records(live["folder"] / "games.jsonl")
    assert len(ids) == len(set(ids)) == len(records) == 4
    assert set(ids) == {r.game_id for r in records}
    # each run appended: what was there stays as it was
    assert after[1].startswith(after[0]) and after[2].startswith(after[1])
    # the same run again plays nothing and writes nothing
    before = live["pgn"].read_bytes()
    again = run_tournament(load_config(live["config"]), console=io.StringIO())
    assert again.played == 0 and live["pgn"].read_bytes() == before


def test_each_move_has_its_score_depth_and_time(live: dict[str, Any]) -> None:
    from arena.report.viewer import replay

    records = {r.game_id: r for r in read_records(live["folder"] / "games.jsonl")}
    for tags, moves, comments, _ in read_pgn(live["pgn"].read_text(encoding="utf-8")):
        record = records[tags["GameId"]]
        assert moves == [m.move for m in record.moves]
        movers = [p.by for p in replay(record).plies[1:]]
        played = [(m, by) for m, by in zip(record.moves, movers) if not m.opening]
        annotations = [c for c in comments if not c.startswith("opening:")][:len(played)]
        assert len(annotations) == len(played)
        for (move, by), text in zip(played, annotations):
            bot = (record.white if by == 0 else record.black).name
            if bot == "alphabeta":  # depth, score, nodes, time and pv with every move
                assert move.info is not None and _WITH_SCORE.match(text), text
                assert {"depth", "score", "nodes", "pv"} <= set(move.info)
                assert text == move_comment(move)
                assert text.split()[0] == eval_text(move.info)
            else:  # random says nothing: the time alone
                assert move.info is None and _TIME_ONLY.match(text), text
            assert float(text.split()[-1][:-1]) == pytest.approx(move.wall_ms / 1000, abs=6e-4)
    # arena export writes the same annotated games
    exported = CliRunner().invoke(cli, ["export", str(live["folder"])])
    assert exported.exit_code == 0
    assert sorted(exported.output.split("\n\n[")) == sorted(
        live["pgn"].read_text(encoding="utf-8").split("\n\n["))


def test_run_pgn_out_catches_up_with_the_finished_games(live: dict[str, Any],
                                                        tmp_path: Path) -> None:
    """``--pgn-out`` on a finished tournament: nothing to play, its games written once."""
    fresh = tmp_path / "later.pgn"
    for _ in range(2):
        res = CliRunner().invoke(cli, ["run", str(live["config"]), "--pgn-out", str(fresh)])
        assert res.exit_code == 0, res.output
        assert "(0 played now)" in res.output
    assert len(read_pgn(fresh.read_text(encoding="utf-8"))) == 4


def test_append_and_catch_up_leave_other_games_alone(live: dict[str, Any],
                                                     tmp_path: Path) -> None:
    records = read_records(live["folder"] / "games.jsonl")
    other = dataclasses.replace(records[0], tournament="another event")
    path = tmp_path / "mixed.pgn"
    path.write_text(format_game(other).rstrip("\n"), encoding="utf-8")  # no final newline
    append_game(path, records[0])
    assert len(read_pgn(path.read_text(encoding="utf-8"))) == 2
    assert catch_up(path, records) == len(records) - 1
    assert catch_up(path, records) == 0
    assert games_in(path) == {("another event", records[0].game_id)} | {
        ("live", r.game_id) for r in records}


def _games_in_whole_file(path: Path) -> set[tuple[str, str]]:
    """The reference: games_in as it was, the whole file read and split into games."""
    import re

    from arena.pgn import _EVENT, _GAME_ID, _unescape

    text = path.read_text(encoding="utf-8", errors="replace")
    out = set()
    for block in re.split(r"\n\s*\n(?=\[)", text):
        event, game = _EVENT.search(block), _GAME_ID.search(block)
        if event and game:
            out.add((_unescape(event.group(1)), _unescape(game.group(1))))
    return out


def test_games_in_reads_a_line_at_a_time_as_the_whole_file_was_read(tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    pieces = ['[Event "e{k}"]', '[GameId "g{k}"]', '[Event "q\\"uote{k}"]', '[GameId "a\\\\b"]',
              '[Site "?"]', ' [Event "indented{k}"]', '[GameId "g{k}"] x', "1. d6 f4 {{[x]}} 1-0",
              "[not a tag", "", "", " ", "\t", "\u2028", "\r", "\xff"]
    seen = 0
    for k in range(400):
        lines = [rng.choice(pieces).format(k=rng.randrange(5)) for _ in range(rng.randrange(1, 30))]
        end = rng.choice(["\n", "\r\n", ""])
        path = tmp_path / f"{k}.pgn"
        path.write_bytes((end or "\n").join(lines).encode("utf-8", "surrogateescape") + end.encode())
        want = _games_in_whole_file(path)
        assert games_in(path) == want, path.read_bytes()
        seen += len(want)
    assert seen > 200  # the files hold games, not only noise


@pytest.mark.parametrize("value, message", [
    ("[1]", "pgn_out: expected a file path for the PGN file, got [1]"),
    ('""', "pgn_out: expected a file path for the PGN file"),
    ("{folder}", "is a folder"),
    ("{file}/x.pgn", "is a file"),
])
def test_a_bad_pgn_out_is_one_line_naming_the_key(tmp_path: Path, value: str,
                                                  message: str) -> None:
    (tmp_path / "plain").write_text("x")
    value = value.format(folder=tmp_path, file=tmp_path / "plain")
    path = tmp_path / "bad.yaml"
    path.write_text(LIVE + f"output: {tmp_path / 'results'}\npgn_out: {value}\n")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert str(e.value).startswith("bad.yaml: pgn_out: ")


def test_sprt_pgn_out_writes_every_game(tmp_path: Path) -> None:
    out = tmp_path / "sprt.pgn"
    res = CliRunner().invoke(cli, ["sprt", str(ROOT / "bots/alphabeta"), str(ROOT / "bots/random"),
                                   "--variant", "three-mens-morris", "--movetime", "40",
                                   "--margin", "1000", "--max-pairs", "1", "--seed", "2",
                                   "--pgn-out", str(out)])
    assert res.exit_code in (0, 1), res.output  # a verdict or none after one pair
    games = read_pgn(out.read_text(encoding="utf-8"))
    assert sorted(tags["GameId"] for tags, *_ in games) == ["sprt-2-1a", "sprt-2-1b"]
    assert any(_WITH_SCORE.match(c) for _, _, comments, _ in games for c in comments)


# ---------------------------------------------------------------------------------------
# arena show: the search of the move shown
# ---------------------------------------------------------------------------------------

def test_arena_show_prints_the_search_of_the_move_shown(live: dict[str, Any]) -> None:
    records = read_records(live["folder"] / "games.jsonl")
    record = next(r for r in records if r.white.name == "alphabeta")
    ply = next(n for n, m in enumerate(record.moves, 1) if m.info and n % 2)
    info = record.moves[ply - 1].info
    assert info is not None
    res = CliRunner().invoke(cli, ["show", str(live["folder"]), record.game_id,
                                   "--ply", str(ply)])
    assert res.exit_code == 0, res.output
    line = next(s for s in res.output.splitlines() if s.startswith(f"Move {ply}, white "))
    assert f"score {score_text(info['score'])}" in line and f"depth {info['depth']}" in line
    assert f"{info['nodes']:,} nodes" in line and f"pv {' '.join(info['pv'])}" in line
    assert "White's view" not in line  # white's score is White's view already
    listed = next(s for s in res.output.splitlines() if s.startswith(f">{ply:4d}. white"))
    assert listed.endswith(eval_text(info))
    # a black move gives White's view too; random's moves say there was nothing
    black = next(n for n, m in enumerate(record.moves, 1) if n % 2 == 0 and not m.opening)
    res = CliRunner().invoke(cli, ["show", str(live["folder"]), record.game_id,
                                   "--ply", str(black)])
    assert f"Move {black}, black " in res.output and "no engine output" in res.output
    stripped = dataclasses.replace(record, moves=[dataclasses.replace(m, info=None)
                                                 for m in record.moves])
    assert "score/depth" not in _show(stripped, live["folder"].parent / "stripped")


def _show(record: GameRecord, folder: Path) -> str:
    from arena.records import append_record

    folder.mkdir(exist_ok=True)
    append_record(folder / "games.jsonl", record)
    res = CliRunner().invoke(cli, ["show", str(folder), record.game_id])
    assert res.exit_code == 0, res.output
    return str(res.output)


# ---------------------------------------------------------------------------------------
# What UCI engines send: bestmove ... ponder ..., score mate N (issue 39)
# ---------------------------------------------------------------------------------------

#: docs/examples/first as a UCI port would write it: ``info score mate 3`` and ``bestmove M
#: ponder P`` (P: another legal move of the list, as a stand-in for its expected reply)
PONDERING = '''
import sys
moves = []
for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "morris":
        print("id name ponderer\\nmorrisok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "legalmoves":
        moves = words[1:]
    elif words[0] == "go":
        print("info depth 4 score mate 3", flush=True)
        print("bestmove %s ponder %s" % (moves[0], moves[-1]), flush=True)
    elif words[0] == "quit":
        break
'''


def test_a_uci_style_bestmove_with_ponder_and_a_mate_score_play_a_whole_game(
        tmp_path: Path) -> None:
    """``bestmove M ponder P`` used to forfeit every game as a protocol error; it is a move
    now, and ``score mate 3`` is kept as a win in 5 plies (UCI counts moves)."""
    from arena.manifest import load_bot
    from arena.referee import play_game
    from arena.clock import TimeControl

    folder = tmp_path / "ponderer"
    folder.mkdir()
    (folder / "bot.py").write_text(PONDERING)
    (folder / "bot.yaml").write_text("name: ponderer\ncommand: \"{python} bot.py\"\n"
                                     "legal_moves: true\n")
    random_bot = load_bot(Path(__file__).resolve().parent.parent / "bots" / "random")
    record = play_game(load_bot(folder), random_bot, "three-mens-morris",
                       TimeControl(movetime_ms=2000, handshake_ms=10000, margin_ms=1000),
                       seed=3)
    assert record.forfeit is None, record.detail
    mine = [m for k, m in enumerate(record.moves) if k % 2 == 0]
    assert mine and all(m.info == {"depth": 4, "score": {"win": 5}} for m in mine), mine[0]
    assert eval_text(mine[0].info) == "+M5/4"
