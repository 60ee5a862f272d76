"""Swiss and knockout rounds (:mod:`arena.rounds`, issue 38), at the data layer: the
bracket's order, a knockout match decided by points, by further pairs and by seed, Swiss
rounds paired from the scores before them with byes, the rounds file (recorded before a
round's games, read back as recorded, a torn last line paired again the same way), and the
configuration's checks.  Results are made-up records with the games' real ids; the real
games are in tests/test_staged_run.py."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from arena.config import ConfigError, load_config
from arena.records import GameRecord
from arena.rounds import (ROUNDS_FILE, Planner, Round, RoundsFileError, bracket_lines,
                          bye_points, read_rounds)
from arena.schedule import Format, Slot
from arena.variants import get_variant
from tests.synth_records import make_record

VARIANT = get_variant("three-mens-morris")


def _config(players: list[str], kind: str, *, rounds: int = 1, seeds: tuple[str, ...] = (),
            gpp: int = 2, tiebreak_pairs: int = 2) -> Any:
    """The attributes of a TournamentConfig a Planner reads."""
    return SimpleNamespace(players=tuple(players), variants=(VARIANT,), seed=3,
                           games_per_pairing=gpp, opening_turns=0, book=None,
                           format=Format(kind=kind, rounds=rounds,  # type: ignore[arg-type]
                                         seeds=seeds or tuple(players),
                                         tiebreak_pairs=tiebreak_pairs))


def _play(slots: list[Slot], done: dict[str, GameRecord], players: tuple[str, ...],
          white_score: Any) -> None:
    """Record a result for every slot: ``white_score(white, black)`` is White's score."""
    for s in slots:
        w, b = players[s.white], players[s.black]
        done[s.game_id] = make_record(w, b, white_score(w, b), game_id=s.game_id,
                                      variant=VARIANT.name)


def _stronger(order: list[str]) -> Any:
    """White's score when the player earlier in ``order`` always wins."""
    return lambda w, b: 1.0 if order.index(w) < order.index(b) else 0.0


def test_the_bracket_puts_seeds_1_and_2_in_opposite_halves() -> None:
    assert bracket_lines(2) == [1, 2]
    assert bracket_lines(4) == [1, 4, 2, 3]
    assert bracket_lines(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    lines = bracket_lines(16)
    assert sorted(lines) == list(range(1, 17))
    # each first-round match sums to 17; seeds 1 and 2 in different halves
    assert all(a + b == 17 for a, b in zip(lines[::2], lines[1::2]))
    assert (lines.index(1) < 8) != (lines.index(2) < 8)


def test_a_knockout_of_six_gives_the_top_seeds_byes_and_ends_with_a_champion(
        tmp_path: Path) -> None:
    players = ["a", "b", "c", "d", "e", "f"]
    planner = Planner(_config(players, "knockout"), tmp_path)
    done: dict[str, GameRecord] = {}
    first = planner.next_slots(done)
    entry = planner.rounds[0]
    assert entry.lines == ("a", None, "d", "e", "b", None, "c", "f")
    assert entry.matches() == [("d", "e"), ("c", "f")]
    assert len(first) == 4  # two matches of one pair
    strength = ["f", "e", "d", "c", "b", "a"]  # the last seed is the strongest
    rounds = 0
    while True:
        slots = planner.next_slots(done)
        if not slots and not first:
            break
        _play(first or slots, done, planner.config.players, _stronger(strength))
        first = []
        rounds += 1
        assert rounds < 10
    assert planner.finished(done)
    assert [r.lines for r in planner.rounds[1:]] == [("a", "e", "b", "f"), ("e", "f")]
    through = planner.through(planner.rounds[-1], done)
    assert through == ["f"]
    # recorded as played, one line per round
    assert [Round.from_json(json.loads(line)) for line in
            (tmp_path / ROUNDS_FILE).read_text().splitlines()] == planner.rounds


def test_a_tied_match_plays_further_pairs_then_the_better_seed_goes_through(
        tmp_path: Path) -> None:
    players = ["top", "low"]
    planner = Planner(_config(players, "knockout", tiebreak_pairs=2), tmp_path)
    done: dict[str, GameRecord] = {}
    slots = planner.next_slots(done)
    ids = [s.game_id for s in slots]
    assert ids == [f"{VARIANT.name}/r1/m1/p1/g0", f"{VARIANT.name}/r1/m1/p1/g1"]
    _play(slots, done, planner.config.players, lambda w, b: 1.0)  # White wins: 1-1
    extra = planner.next_slots(done)
    assert [s.pair_in_meeting for s in extra] == [2, 2]  # one further pair
    _play(extra, done, planner.config.players, lambda w, b: 0.5)  # drawn: still level
    extra = planner.next_slots(done)
    assert [s.pair_in_meeting for s in extra] == [3, 3]
    _play(extra, done, planner.config.players, lambda w, b: 1.0)  # level after 2 further
    assert planner.next_slots(done) == []  # no more: decided by seed
    state = planner.match(planner.rounds[0], 0, "top", "low", done)
    assert state.winner == "top" and state.by_seed
    assert state.points == {"top": 3.0, "low": 3.0}
    assert len(planner.records(done)) == 6


def test_a_further_pair_that_breaks_the_tie_decides(tmp_path: Path) -> None:
    players = ["top", "low"]
    planner = Planner(_config(players, "knockout"), tmp_path)
    done: dict[str, GameRecord] = {}
    _play(planner.next_slots(done), done, planner.config.players, lambda w, b: 1.0)
    _play(planner.next_slots(done), done, planner.config.players,
          lambda w, b: 1.0 if w == "low" else 0.5)  # low: 1 + 0.5
    assert planner.next_slots(done) == []
    state = planner.match(planner.rounds[0], 0, "top", "low", done)
    assert state.winner == "low" and not state.by_seed and state.pairs_played == 2


def test_swiss_rounds_pair_by_score_and_rotate_the_bye(tmp_path: Path) -> None:
    players = ["p1", "p2", "p3", "p4", "p5"]
    config = _config(players, "swiss", rounds=3)
    planner = Planner(config, tmp_path)
    done: dict[str, GameRecord] = {}
    strength = ["p5", "p4", "p3", "p2", "p1"]
    for _ in range(3):
        _play(planner.next_slots(done), done, config.players, _stronger(strength))
    assert planner.next_slots(done) == []
    assert planner.finished(done)
    byes = [r.bye for r in planner.rounds]
    assert all(len(b) == 1 for b in byes) and len({b[0] for b in byes}) == 3  # never twice
    met = [frozenset(p) for r in planner.rounds for p in r.pairs]
    assert len(met) == len(set(met)) == 6  # never the same two twice
    # round 2 pairs players level on points where it can: compute the scores by hand
    after1 = {p: 0.0 for p in players}
    after1[byes[0][0]] += bye_points(config)
    for a, b in planner.rounds[0].pairs:
        winner = a if strength.index(a) < strength.index(b) else b
        after1[winner] += 2.0
    # the fewest (squared) score differences of any pairing without a rematch: by brute force
    left = [p for p in players if p not in planner.rounds[1].bye]
    met1 = {frozenset(p) for p in planner.rounds[0].pairs}

    def matchings(xs: list[str]) -> list[list[tuple[str, str]]]:
        if not xs:
            return [[]]
        return [[(xs[0], y)] + rest for y in xs[1:] if frozenset((xs[0], y)) not in met1
                for rest in matchings([z for z in xs[1:] if z != y])]

    def cost(pairs: Any) -> float:
        return sum((after1[a] - after1[b]) ** 2 for a, b in pairs)

    best = min(cost(m) for m in matchings(left))
    assert cost(planner.rounds[1].pairs) == best, (after1, planner.rounds[1])
    assert planner.rounds[1].bye[0] != byes[0][0]
    assert after1[planner.rounds[1].bye[0]] == min(after1.values())  # the lowest score
    scores = planner.scores(done)
    assert sum(scores.values()) == 6 * 2 + 3 * bye_points(config)
    assert planner.byes() == {b[0]: bye_points(config) for b in byes}


def test_a_resumed_swiss_reads_its_rounds_and_a_torn_last_line_is_paired_again(
        tmp_path: Path) -> None:
    players = ["p1", "p2", "p3", "p4", "p5", "p6"]
    config = _config(players, "swiss", rounds=3)
    planner = Planner(config, tmp_path)
    done: dict[str, GameRecord] = {}
    _play(planner.next_slots(done), done, config.players, _stronger(players))
    second = planner.next_slots(done)
    recorded = (tmp_path / ROUNDS_FILE).read_text()
    # a new planner (a resumed run) plays the recorded round, not a new pairing
    again = Planner(config, tmp_path)
    assert [s.game_id for s in again.next_slots(done)] == [s.game_id for s in second]
    assert (tmp_path / ROUNDS_FILE).read_text() == recorded
    # killed while writing round 2's line: it is paired again, the same way
    lines = recorded.splitlines()
    (tmp_path / ROUNDS_FILE).write_text(lines[0] + "\n" + lines[1][:15])
    torn = Planner(config, tmp_path)
    assert len(torn.rounds) == 1
    assert [s.game_id for s in torn.next_slots(done)] == [s.game_id for s in second]
    assert (tmp_path / ROUNDS_FILE).read_text().splitlines()[-1] == lines[1]
    # a broken line before the last is an error, not a silent re-pairing
    (tmp_path / ROUNDS_FILE).write_text("{oops\n" + recorded)
    with pytest.raises(RoundsFileError, match="line 1 cannot be read"):
        read_rounds(tmp_path)


def _yaml(tmp_path: Path, fmt: str, bots: int = 5) -> Path:
    path = tmp_path / "t.yaml"
    entries = "\n".join(f"  - {{engine: \"cmd=true name=b{k}\"}}" for k in range(1, bots + 1))
    path.write_text(f"name: t\nbots:\n{entries}\nformat: {fmt}\noutput: {tmp_path}/out\n")
    return path


def test_the_configuration_checks_swiss_and_knockout_keys(tmp_path: Path) -> None:
    config = load_config(_yaml(tmp_path, "swiss"))
    assert config.format.rounds == 5  # ceil(log2 5) + 2
    assert config.format.seeds == ("b1", "b2", "b3", "b4", "b5")
    with pytest.raises(ConfigError, match="at most 5 Swiss rounds"):
        load_config(_yaml(tmp_path, "{type: swiss, rounds: 6}"))
    with pytest.raises(ConfigError, match="leave 'rounds' out"):
        load_config(_yaml(tmp_path, "{type: knockout, rounds: 2}"))
    with pytest.raises(ConfigError, match="only a knockout has tiebreak_pairs"):
        load_config(_yaml(tmp_path, "{type: swiss, tiebreak_pairs: 1}"))
    config = load_config(_yaml(tmp_path, "{type: knockout, seeds: [b4, b2]}"))
    assert config.format.seeds == ("b4", "b2", "b1", "b3", "b5")
    assert config.format.rounds == 3
    (tmp_path / "ratings.csv").write_text("rank,name,elo\n1,b3,120.5\n2,zz,99\n3,b5,-40\n")
    config = load_config(_yaml(tmp_path, "{type: knockout, seeds: ratings.csv}"))
    assert config.format.seeds == ("b3", "b5", "b1", "b2", "b4")
    assert config.normalised()["format"]["seeds"] == list(config.format.seeds)
    with pytest.raises(ConfigError, match="no 'name' or 'bot' column"):
        (tmp_path / "bad.csv").write_text("x,y\n1,2\n")
        load_config(_yaml(tmp_path, "{type: swiss, seeds: bad.csv}"))
    with pytest.raises(ConfigError, match="a bot is named twice"):
        load_config(_yaml(tmp_path, "{type: swiss, seeds: [b1, b1]}"))
