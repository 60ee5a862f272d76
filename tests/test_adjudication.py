"""Adjudication (docs/TOURNAMENTS.md, arena/adjudication.py): cutechess's draw, resign and
length rules, checked against hand-built score sequences (its counting corner cases: a
turn without a score resets, an irreversible turn resets the draw count, both players'
turns count towards the draw, the two-sided resign), then in a real tournament between bots
that send scores."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Optional

import pytest

from arena.adjudication import (Adjudication, Adjudicator, parse_adjudication,
                                parse_tokens)
from arena.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def _run(rules: Adjudication, turns: list[tuple[Optional[float], bool]],
         start_ply: int = 0) -> Optional[tuple[int, str, str]]:
    """Feed ``(score, irreversible)`` turns, white first; (ply, result, rule) of the
    verdict, or None."""
    judge = Adjudicator(rules)
    for n, (score, irreversible) in enumerate(turns):
        ply = start_ply + n + 1
        verdict = judge.add(ply, (start_ply + n) % 2, score, irreversible)
        if verdict is not None:
            return ply, verdict.result, verdict.rule
    return None


DRAW = parse_adjudication({"draw": {"after_turn": 5, "turns": 2, "score": 10}})


def test_draw_needs_both_players_turns_within_the_score_after_the_move_number() -> None:
    quiet = [(3.0, False)] * 20
    # 2 turns each = 4 consecutive turns; and plies // 2 >= 5: ply 10 is the first chance
    assert _run(DRAW, quiet) == (10, "1/2-1/2", "draw")
    # later in the game the count decides: 4 quiet turns from ply 20 on
    assert _run(DRAW, [(50.0, False)] * 19 + quiet) == (23, "1/2-1/2", "draw")


def test_draw_count_resets_on_a_big_score_a_missing_score_and_an_irreversible_turn() -> None:
    base = [(0.0, False)] * 20
    # ply 10 would have decided; a big score or none restarts the count after it (four more
    # quiet turns: ply 14); an irreversible quiet turn restarts it at itself (ply 13)
    for breaker, decided in (((11.0, False), 14), ((None, False), 14), ((0.0, True), 13)):
        turns = list(base)
        turns[9] = breaker
        assert _run(DRAW, turns) == (decided, "1/2-1/2", "draw"), breaker


RESIGN = parse_adjudication({"resign": {"turns": 3, "score": 600}})
TWO = parse_adjudication({"resign": {"turns": 3, "score": 600, "twosided": True}})


def test_resign_counts_the_losers_own_consecutive_turns() -> None:
    # black (odd plies) scores -700 on its 1st, 2nd, 3rd turns: it loses at ply 6
    turns = [(0.0, False), (-700.0, False)] * 5
    assert _run(RESIGN, turns) == (6, "1-0", "resign")
    # a turn above the threshold resets black's count
    turns = [(0.0, False), (-700.0, False), (0.0, False), (-500.0, False)] + \
        [(0.0, False), (-700.0, False)] * 3
    assert _run(RESIGN, turns) == (10, "1-0", "resign")
    # white resigns too, at its own third turn
    turns = [(-601.0, False), (0.0, False)] * 4
    assert _run(RESIGN, turns) == (5, "0-1", "resign")


def test_two_sided_resign_needs_the_winner_to_agree() -> None:
    disagree = [(0.0, False), (-700.0, False)] * 6
    assert _run(TWO, disagree) is None
    agree = [(650.0, False), (-700.0, False)] * 6
    assert _run(TWO, agree) == (6, "1-0", "resign")
    # a missing score of the winner resets its count: the verdict waits
    late = [(650.0, False), (-700.0, False), (None, False), (-700.0, False)] + \
        [(650.0, False), (-700.0, False)] * 3
    assert _run(TWO, late) == (10, "1-0", "resign")


def test_max_turns_draws_and_forced_scores_count_as_large() -> None:
    rules = parse_adjudication({"max_turns": 3})
    assert _run(rules, [(None, True)] * 10) == (6, "1/2-1/2", "max_turns")
    from arena.protocol import score_value

    assert _run(RESIGN, [(0.0, False), (score_value({"loss": 5}), False)] * 3) == \
        (6, "1-0", "resign")


def test_no_score_never_adjudicates_by_score() -> None:
    rules = parse_adjudication({"draw": {"after_turn": 0, "turns": 1, "score": 1000},
                                "resign": {"turns": 1, "score": 1}})
    assert _run(rules, [(None, False)] * 50) is None


def test_bad_settings_are_one_line_errors_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="adjudicate.draw.turns"):
        parse_adjudication({"draw": {"after_turn": 1, "turns": 0, "score": 5}})
    with pytest.raises(ConfigError, match="did you mean resign"):
        parse_adjudication({"resing": {}})
    with pytest.raises(ConfigError, match="missing: score"):
        parse_adjudication({"resign": {"turns": 3}})
    assert parse_tokens("after_turn=40 turns=8 score=10", "--draw") == {
        "after_turn": 40, "turns": 8, "score": 10}
    rules = parse_adjudication({"draw": parse_tokens("after_turn=40,turns=8,score=10", "x"),
                                "max_turns": 400})
    assert parse_adjudication(rules.to_dict()) == rules


SCORER = """
import sys
from arena.botkit import run, send_info, spin, OptionValue, Bot

class Scorer(Bot):
    name = "scorer"
    option_decls = [spin("Score", 0, -100000, 100000)]

    def choose(self, position, clock):
        send_info(depth=1, score=int(self.options["Score"]))
        return position.legal_moves()[0]

run(Scorer())
"""


def test_a_tournament_adjudicates_by_the_bots_scores(tmp_path: Path) -> None:
    from arena.config import parse_config
    from arena.tournament import run_tournament

    folder = tmp_path / "scorer"
    folder.mkdir()
    (folder / "bot.yaml").write_text('name: scorer\ncommand: "{python} bot.py"\n')
    (folder / "bot.py").write_text(textwrap.dedent(SCORER))
    config = parse_config({
        "name": "adj", "output": str(tmp_path / "out"), "workers": 1, "report": False,
        "bots": [{"path": str(folder), "name": "calm", "options": {"Score": 0}},
                 {"path": str(folder), "name": "lost", "options": {"Score": -900}}],
        "time": {"movetime": 100, "charge": "wall"}, "isolation": "none",
        "adjudicate": {"draw": {"after_turn": 0, "turns": 3, "score": 10},
                       "resign": {"turns": 2, "score": 600}}})
    import io

    result = run_tournament(config, console=io.StringIO())
    assert result.complete
    from arena.records import read_records

    records = read_records(tmp_path / "out" / "games.jsonl")
    assert len(records) == 2
    for r in records:
        assert r.termination == "adjudication" and r.adjudication is not None
        loser = "white" if r.white.name == "lost" else "black"
        assert r.adjudication["rule"] == "resign" and r.forfeit is None
        assert r.result == ("0-1" if loser == "white" else "1-0"), r.detail
        # lost's second turn: ply 3 as white, ply 4 as black
        assert len(r.moves) == (3 if loser == "white" else 4), r.moves
        assert "scored -600 or less for 2 turns" in r.detail


@pytest.mark.slow
def test_a_tournament_adjudicates_covered_endgames_by_the_tables(tmp_path: Path) -> None:
    """Nine men's morris with three men each: its moving phase starts at 3-3, which the
    tables cover; every game that reaches it ends there with the tables' value."""
    import io

    from arena.config import parse_config
    from arena.records import read_records
    from arena.rules import Position
    from arena.tablebase import build_tables, open_tablebase
    from arena.tournament import run_tournament
    from arena.variants import get_variant

    tables = tmp_path / "tables"
    build_tables(get_variant("nine-mens-morris"), (3, 3), tables)
    config = parse_config({
        "name": "tb", "output": str(tmp_path / "out"), "workers": 1, "report": False,
        "bots": [str(ROOT / "bots" / "random"), str(ROOT / "bots" / "greedy")],
        "variants": [{"base": "nine-mens-morris", "name": "three-each", "men": 3}],
        "games_per_pairing": 4, "time": {"movetime": 100},  # the own clock: load-proof
        "isolation": "none", "adjudicate": {"tablebase": str(tables)}})
    assert run_tournament(config, console=io.StringIO()).complete
    records = read_records(tmp_path / "out" / "games.jsonl")
    variant = config.variants[0]
    with open_tablebase(tables) as tb:
        adjudicated = [r for r in records if r.termination == "tablebase"]
        assert adjudicated, [r.termination for r in records]
        for r in adjudicated:
            pos = Position(variant)
            for m in r.moves:
                pos.push_text(m.move)
            probe = tb.probe(pos)  # the final position's value decided the result
            mover_wins = {"win": True, "loss": False}.get(probe.value)
            expected = ("1/2-1/2" if mover_wins is None else
                        ("1-0" if (pos.turn == 0) == mover_wins else "0-1"))
            assert r.result == expected, r.detail
            assert r.adjudication is not None and r.adjudication["rule"] == "tablebase"
        for r in records:  # the others ended by the rules before reaching the tables
            assert r.termination in ("tablebase", "too-few-men", "blocked", "mill"), r.detail


def test_arena_play_and_sprt_take_the_rules_as_options(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import cli

    folder = tmp_path / "scorer"
    folder.mkdir()
    (folder / "bot.yaml").write_text('name: scorer\ncommand: "{python} bot.py"\n')
    (folder / "bot.py").write_text(textwrap.dedent(SCORER))
    result = CliRunner().invoke(cli, [
        "play", str(folder), str(folder), "--option-b", "Score=-900", "--quiet",
        "--movetime", "100", "--isolation", "none", "--resign", "turns=2 score=600"])
    assert result.exit_code == 0, result.output
    assert "result: 1-0 (adjudication): adjudicated (resign)" in result.output
    bad = CliRunner().invoke(cli, ["play", str(folder), str(folder), "--draw", "turns=2"])
    assert bad.exit_code == 2 and "missing: after_turn, score" in bad.output
    out = tmp_path / "sprt"
    result = CliRunner().invoke(cli, [
        "sprt", f"{folder}:Score=0", f"{folder}:Score=-900", "--max-pairs", "2",
        "--movetime", "100", "--isolation", "none", "-o", str(out),
        "--resign", "turns=2 score=600", "--seed", "1"])
    assert result.exit_code in (0, 1), result.output
    from arena.records import read_records

    records = read_records(out / "games.jsonl")
    assert records and all(r.termination == "adjudication" for r in records)
    import json

    assert json.loads((out / "sprt.json").read_text())["settings"]["adjudicate"] == {
        "resign": {"turns": 2, "score": 600, "twosided": False}}


def test_tablebase_adjudication_says_once_when_no_table_covers_the_variant(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 39: tables asked for from a folder that exists but holds none for the variant
    (empty here) used to turn adjudication off silently; it is said once per variant."""
    import logging

    from arena import verdicts
    from arena.rules import Position
    from arena.tablebase import open_tablebase
    from arena.variants import get_variant

    folder = tmp_path / "empty-tables"
    folder.mkdir()
    with open_tablebase(folder) as tb:
        assert tb.preload("nine-mens-morris") == []  # a name as well as a variant
        assert not tb.covers("nine-mens-morris")
    position = Position(get_variant("nine-mens-morris"))
    with caplog.at_level(logging.WARNING, logger=verdicts.log.name):
        for _ in range(3):
            assert verdicts.tablebase_verdict(position, str(folder)) is None
    said = [r.getMessage() for r in caplog.records if "no tablebase adjudication" in
            r.getMessage()]
    assert len(said) == 1 and "nine-mens-morris" in said[0] and str(folder) in said[0], said


def test_cutechess_spellings_of_draw_and_resign_mean_the_same_rules() -> None:
    """Issue 39: ``--draw "movenumber=40 movecount=8 score=10"`` and ``--resign "movecount=3
    score=600"`` (cutechess's and fastchess's keys) were refused; they are the same rules as
    this project's spelling (:mod:`arena.compat`), and an unknown key is still named."""
    from arena.cli.common import parse_adjudication_options
    from arena.errors import ConfigError

    theirs = parse_adjudication_options("movenumber=40 movecount=8 score=10",
                                        "movecount=3 score=600 twosided=true", None, None)
    ours = parse_adjudication_options("after_turn=40 turns=8 score=10",
                                      "turns=3 score=600 twosided=true", None, None)
    assert theirs == ours and theirs is not None
    assert (theirs.draw_after, theirs.draw_turns) == (40, 8)
    with pytest.raises(ConfigError, match="movenumbr"):
        parse_adjudication_options("movenumbr=40 movecount=8 score=10", None, None, None)
