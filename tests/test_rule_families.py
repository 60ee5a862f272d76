"""Rule families beyond the seed games (issue 15, Sanmill's rule sets): each new parameter on
hand-built positions, perft and random games checked against the independent reference in
tests/rules_reference.py, and random playouts of the new presets (every game ends, invariants
hold, text round-trips)."""

from __future__ import annotations

import dataclasses
import random
from typing import Optional

import pytest

from arena.board import get_topology
from arena.errors import IllegalMoveError, InvalidMoveError, PositionError
from arena.rules import BLACK, WHITE, Move, Position, Termination
from arena.variants import Variant, get_variant
from tests.rules_reference import RefState


def variant(base: str = "nine-mens-morris", **changes: object) -> Variant:
    """A preset with some parameters changed."""
    return dataclasses.replace(get_variant(base), name="test", **changes)  # type: ignore[arg-type]


def text(v: Variant, white: str = "", black: str = "", *, turn: str = "w",
         hands: tuple[int, int] = (0, 0), quiet: int = 0, used: Optional[tuple[str, str]] = None) -> str:
    """A hand-built position text: men given as space-separated point names."""
    points = get_topology(v.board).points
    w, b = set(white.split()), set(black.split())
    assert (w | b) <= set(points) and not w & b, "test position names a bad point"
    cells = "".join("W" if p in w else "B" if p in b else "." for p in points)
    out = f"{cells} {turn} {hands[0]} {hands[1]} {quiet} - - 0"
    return out if used is None else f"{out} used={used[0]};{used[1]}"


def make(v: Variant, *args: str, **kwargs: object) -> Position:
    return Position.from_text(v, text(v, *args, **kwargs))  # type: ignore[arg-type]


def moves_of(pos: Position) -> set[str]:
    return {str(m) for m in pos.legal_moves()}


def check_against_reference(v: Variant, position: str, depth: int) -> int:
    """perft by the engine and by the reference, which must agree; returns the count."""
    engine = Position.from_text(v, position)
    ref = RefState.from_text(v, position)
    assert {str(m) for m in engine.legal_moves()} == ref.legal_moves(), position
    count = engine.perft(depth)
    assert count == ref.perft(depth), (position, depth)
    assert engine.perft(depth, bulk=False) == count
    return count


# --- one_time_mill (Russian mill) -------------------------------------------------------------
# White a1 a4 d7 (+g4) slides d7-a7 to close a1-a4-a7; black has four men in no mill.

RUSSIAN = variant(one_time_mill=True)
DOOZ = variant("twelve-mens-morris", placement_mill="hand")
W_MEN, B_MEN = "a1 a4 d7 g4", "b2 b6 f2 f6"


def test_a_new_mill_captures_as_ever() -> None:
    pos = make(RUSSIAN, W_MEN, B_MEN)
    assert {"d7-a7xb2", "d7-a7xb6", "d7-a7xf2", "d7-a7xf6"} <= moves_of(pos)
    assert "d7-a7" not in moves_of(pos)


def test_a_used_line_captures_nothing() -> None:
    pos = make(RUSSIAN, W_MEN, B_MEN, used=("a1a4a7", "-"))
    assert "d7-a7" in moves_of(pos)
    assert not any(m.startswith("d7-a7x") for m in moves_of(pos))
    with pytest.raises(IllegalMoveError):
        pos.parse_move("d7-a7xb2")
    # without the rule, the same men owe a capture
    plain = make(variant(), W_MEN, B_MEN)
    assert "d7-a7" not in moves_of(plain) and "d7-a7xb2" in moves_of(plain)


def test_lines_are_used_per_player() -> None:
    pos = make(RUSSIAN, W_MEN, B_MEN, used=("-", "a1a4a7"))  # black's use does not count for white
    assert "d7-a7xb2" in moves_of(pos)


def test_forming_a_mill_uses_its_line_for_the_rest_of_the_game() -> None:
    pos = make(RUSSIAN, W_MEN, B_MEN)
    for move in ("d7-a7xb2", "b6-d6", "a7-d7"):
        pos.push_text(move)
    assert pos.to_text().endswith("used=a1a4a7;-")
    pos.push_text("d6-b6")
    assert "d7-a7" in moves_of(pos) and not any(m.startswith("d7-a7x") for m in moves_of(pos))
    # undo: the line is fresh again
    while pos.move_stack:
        pos.pop()
    assert pos.to_text() == text(RUSSIAN, W_MEN, B_MEN)
    assert "d7-a7xb2" in moves_of(pos)


def test_a_placement_uses_the_line_too() -> None:
    pos = make(RUSSIAN, "a1 a4", "b2 b6", hands=(3, 3))
    pos.push_text("a7xb2")
    assert pos.to_text().split()[-1] == "used=a1a4a7;-"


def test_a_double_mill_with_one_used_line_captures_one() -> None:
    v = variant(one_time_mill=True, multi_mill_captures=2)
    fresh = make(v, "a1 a4 d7 g7", "b2 b6 f2 f6", hands=(3, 3))
    assert "a7xb2xb6" in moves_of(fresh)
    half = make(v, "a1 a4 d7 g7", "b2 b6 f2 f6", hands=(3, 3), used=("a1a4a7", "-"))
    assert "a7xb2" in moves_of(half) and not any(len(m) > 5 for m in moves_of(half) if m[:2] == "a7")
    both = make(v, "a1 a4 d7 g7", "b2 b6 f2 f6", hands=(3, 3), used=("a1a4a7,a7d7g7", "-"))
    assert "a7" in moves_of(both)


def test_used_lines_are_part_of_the_position_and_its_text() -> None:
    t = text(RUSSIAN, W_MEN, B_MEN, used=("a1a4a7,a7d7g7", "b2b4b6"))
    pos = Position.from_text(RUSSIAN, t)
    assert pos.to_text() == t
    assert Position.from_text(RUSSIAN, text(RUSSIAN, W_MEN, B_MEN, used=("-", "-"))).to_text() == \
        text(RUSSIAN, W_MEN, B_MEN)  # nothing used: the token is left out
    with pytest.raises(PositionError):
        Position.from_text(RUSSIAN, text(RUSSIAN, W_MEN, B_MEN, used=("a1a4", "-")))
    with pytest.raises(PositionError):  # used lines need the rule
        Position.from_text(variant(), text(variant(), W_MEN, B_MEN, used=("a1a4a7", "-")))


def test_used_lines_count_for_repetition() -> None:
    # the same men, hands and side to move; one has a used line: not the same position
    fresh = make(RUSSIAN, W_MEN, B_MEN)
    used = make(RUSSIAN, W_MEN, B_MEN, used=("a1a4a7", "-"))
    assert fresh._key() != used._key()
    assert make(RUSSIAN, W_MEN, B_MEN, used=("a1a4a7", "-"))._key() == used._key()


#: (variant, position, depth, perft): the counts were computed by the reference and agree with
#: the engine; each used line cuts the count (2100 fresh, 538 with white's a1a4a7 used)
RUSSIAN_POSITIONS = [
    (RUSSIAN, text(RUSSIAN, W_MEN, B_MEN), 3, 2100),
    (RUSSIAN, text(RUSSIAN, W_MEN, B_MEN, used=("a1a4a7", "-")), 3, 538),
    (RUSSIAN, text(RUSSIAN, W_MEN, B_MEN, used=("a1a4a7", "b2b4b6")), 3, 538),
    (variant(one_time_mill=True, multi_mill_captures=2),
     text(RUSSIAN, "a1 a4 d7 g7", "b2 b6 f2 f6", hands=(3, 3), used=("a1a4a7", "-")), 2, 545),
    (variant("twelve-mens-morris", one_time_mill=True, mill_capture="always"),
     text(RUSSIAN, "a1 a4 c3 d7 g7 e3", "b2 b6 f2 f6 d1 d2", hands=(2, 2), used=("a1a4a7", "d1d2d3")),
     3, 11853),
]


@pytest.mark.parametrize("v,position,depth,count", RUSSIAN_POSITIONS)
def test_one_time_mill_perft_matches_the_reference(v: Variant, position: str, depth: int,
                                                   count: int) -> None:
    assert check_against_reference(v, position, depth) == count


# --- second_moves_first (Da San Qi) ------------------------------------------------------------

def test_black_moves_first_after_placing_the_last_man() -> None:
    v = variant(second_moves_first=True)
    pos = make(v, "a1 a4 d7 g4 b2 b4 c3 c5 e3", "g1 g7 f2 f4 f6 e5 e4 d6", turn="b", hands=(0, 1))
    pos.push_text("d1")
    assert pos.turn == BLACK and pos.to_text().split()[1] == "b"
    assert all(m.src is not None for m in pos.legal_moves())
    pos.pop()
    assert pos.turn == BLACK and pos.in_hand(BLACK) == 1
    plain = make(variant(), "a1 a4 d7 g4 b2 b4 c3 c5 e3", "g1 g7 f2 f4 f6 e5 e4 d6", turn="b",
                 hands=(0, 1))
    plain.push_text("d1")
    assert plain.turn == WHITE


def test_when_white_places_last_black_moves_next_anyway() -> None:
    v = variant("lasker-morris", second_moves_first=True)
    pos = make(v, "a1 a4 d7", "g1 g7 f2", hands=(1, 0))
    pos.push_text("b2")
    assert pos.turn == BLACK
    # and placements in the middle of the game alternate as ever
    early = make(v, "a1", "g1", hands=(3, 3))
    early.push_text("a4")
    assert early.turn == BLACK
    early.push_text("g4")
    assert early.turn == WHITE


def test_a_whole_game_with_second_moves_first() -> None:
    v = variant(second_moves_first=True)
    for seed in range(5):
        rng = random.Random(seed)
        pos = Position(v)
        while pos.hand[0] + pos.hand[1]:
            pos.push(rng.choice(pos.legal_moves()))
        if pos.outcome() is None:
            assert pos.turn == BLACK  # black placed the 18th man and moves again


#: (variant, position, depth, perft), each crossing the end of placement
SECOND_POSITIONS = [
    (variant(second_moves_first=True),
     text(RUSSIAN, "a1 a4 d7 g4 b2 b4 c3 c5", "g1 g7 f2 f4 f6 e5 d6 e4", hands=(1, 1)), 3, 2019),
    (variant("six-mens-morris", second_moves_first=True),
     text(get_variant("six-mens-morris"), "a1 a4 d7 g4 b2", "g1 g7 f2 f4 f6", hands=(1, 1)), 4, 798),
    (variant("lasker-morris", second_moves_first=True, one_time_mill=True),
     text(RUSSIAN, "a1 a4 d7 g4 b2 b4 c3 c5", "g1 g7 f2 f4 f6 e5 e4 d6", hands=(1, 2)), 3, 23529),
]


@pytest.mark.parametrize("v,position,depth,count", SECOND_POSITIONS)
def test_second_moves_first_perft_matches_the_reference(v: Variant, position: str, depth: int,
                                                        count: int) -> None:
    assert check_against_reference(v, position, depth) == count


# --- random games: engine against the reference, and playout invariants ---------------------

FAMILY_VARIANTS = [
    RUSSIAN,
    variant("twelve-mens-morris", one_time_mill=True, multi_mill_captures=2, mill_capture="always"),
    variant("lasker-morris", one_time_mill=True, no_immediate_reform=True),
    variant(second_moves_first=True),
    variant("six-mens-morris", second_moves_first=True, one_time_mill=True, repetition=2),
    variant("lasker-morris", second_moves_first=True),
    DOOZ,
    variant("twelve-mens-morris", placement_mill="hand", multi_mill_captures=2, optional_capture=True,
            no_capture_draw=40),
    variant(placement_mill="hand", second_moves_first=True, lose_below=8),
    variant(placement_mill="mark", flying=False),
    variant("twelve-mens-morris", placement_mill="mark", flying=False, second_moves_first=True,
            mill_capture="always", board_full="lose"),
    variant("lasker-morris", placement_mill="mark", multi_mill_captures=2, one_time_mill=True),
    # the presets of Sanmill's rule sets (docs/RULES.md, "Sanmill's rule sets")
    get_variant("russian-mill"),
    get_variant("dooz"),
    get_variant("cheng-san-qi"),
    get_variant("da-san-qi"),
    get_variant("zhi-qi"),
    get_variant("el-filja"),
    # the removal rules in other combinations
    variant("twelve-mens-morris", board_full="remove-both", placement_mill="hand"),
    variant(placement_mill="count", second_moves_first=True),
    variant("six-mens-morris", men=8, board_full="remove-both", blocked="remove-and-move"),
    variant("lasker-morris", placement_mill="count", mill_capture="never", optional_capture=True),
    # blocked players are rare in random games: this one meets some
    variant("six-mens-morris", men=7, blocked="remove-and-move", mill_capture="never",
            no_capture_draw=30),
]


@pytest.mark.parametrize("v", FAMILY_VARIANTS, ids=[str(i) for i in range(len(FAMILY_VARIANTS))])
def test_engine_matches_the_reference_in_random_games(v: Variant) -> None:
    for seed in range(3):
        rng = random.Random(seed)
        pos, ref = Position(v), RefState.start(v)
        while True:
            moves = {str(m) for m in pos.legal_moves()}
            assert moves == ref.legal_moves(), pos.to_text()
            o = pos.outcome()
            assert (None if o is None else (o.termination.value, o.winner)) == ref.outcome(), pos.to_text()
            parsed = RefState.from_text(v, pos.to_text())
            assert (parsed.men, parsed.hand, parsed.turn, parsed.used) == (ref.men, ref.hand, ref.turn, ref.used)
            if not moves:
                break
            move = rng.choice(sorted(moves))
            pos.push_text(move)
            ref = ref.play(move)


@pytest.mark.parametrize("v", FAMILY_VARIANTS, ids=[str(i) for i in range(len(FAMILY_VARIANTS))])
def test_random_playouts_end_and_keep_their_invariants(v: Variant) -> None:
    for seed in range(4):
        rng = random.Random(500 + seed)
        pos = Position(v)
        start = pos.to_text()
        while pos.outcome() is None:
            assert pos.ply < 5000, "game does not end"
            moves = pos.legal_moves()
            assert moves
            men_before = [pos.on_board(c) + pos.in_hand(c) for c in (WHITE, BLACK)]
            me = pos.turn
            owed = pos.pending[me]
            # removal-only turns are exactly the owed removals or a blocked player's one man
            assert all(m.dst is None for m in moves) == bool(owed or moves[0].dst is None)
            move = rng.choice(moves)
            if move.dst is None and owed:
                assert len(move.captures) <= abs(owed)
            elif move.dst is None:
                assert v.blocked == "remove-and-move" and len(move.captures) == 1
            victim = me if owed < 0 else 1 - me  # negative: the player's own men
            pos.push(move)
            men_after = [pos.on_board(c) + pos.in_hand(c) for c in (WHITE, BLACK)]
            assert men_after[victim] == men_before[victim] - len(move.captures)
            assert men_after[1 - victim] == men_before[1 - victim]
            if move.dst is None and not owed:
                assert pos.turn == me  # a blocked player moves on after its removal
            again = Position.from_text(v, pos.to_text())
            assert again.to_text() == pos.to_text()
            assert again.generate_raw() == pos.generate_raw()
        assert pos.legal_moves() == []
        while pos.move_stack:
            pos.pop()
        assert pos.to_text() == start


# --- placement_mill=hand (Dooz) ----------------------------------------------------------------
# White a1 a4 (+d7 g7) places a7 to close a1-a4-a7; black has men on the board and in hand.

def test_a_placed_mill_takes_a_man_from_the_hand_without_choice() -> None:
    pos = make(DOOZ, "a1 a4", "b2 b6", hands=(5, 5))
    assert {m for m in moves_of(pos) if m.startswith("a7")} == {"a7x*"}
    pos.push_text("a7x*")
    assert (pos.in_hand(BLACK), pos.on_board(BLACK), pos.in_hand(WHITE)) == (4, 2, 4)
    assert pos.to_text() == text(DOOZ, "a1 a4 a7", "b2 b6", turn="b", hands=(4, 4))[:-1] + "1"
    pos.pop()
    assert pos.in_hand(BLACK) == 5
    # without the rule the same placement captures a man on the board
    plain = make(variant("twelve-mens-morris"), "a1 a4", "b2 b6", hands=(5, 5))
    assert {m for m in moves_of(plain) if m.startswith("a7")} == {"a7xb2", "a7xb6"}


def test_an_empty_hand_gives_up_men_on_the_board() -> None:
    pos = make(DOOZ, "a1 a4", "b2 b6 f2", hands=(5, 0))
    assert {m for m in moves_of(pos) if m.startswith("a7")} == {"a7xb2", "a7xb6", "a7xf2"}


def test_a_double_mill_takes_from_the_hand_first_then_from_the_board() -> None:
    v = variant("twelve-mens-morris", placement_mill="hand", multi_mill_captures=2)
    two = make(v, "a1 a4 d7 g7", "b2 b6", hands=(3, 3))
    assert {m for m in moves_of(two) if m.startswith("a7")} == {"a7x*x*"}
    one = make(v, "a1 a4 d7 g7", "b2 b6 f2", hands=(3, 1))
    assert {m for m in moves_of(one) if m.startswith("a7")} == {"a7x*xb2", "a7x*xb6", "a7x*xf2"}
    one.push_text("a7xb6x*")
    assert (one.in_hand(BLACK), one.on_board(BLACK)) == (0, 2)


def test_a_mill_closed_by_moving_captures_from_the_board() -> None:
    # white has placed all its men and moves while black still places (phases are per player)
    pos = make(DOOZ, "a1 a4 d7 g4 b4 c4 d1 d2 e3 e5 f2 g1", "b2 b6 f6", hands=(0, 4))
    assert {m for m in moves_of(pos) if m.startswith("d7-a7")} == {"d7-a7xb2", "d7-a7xb6", "d7-a7xf6"}


def test_hand_captures_may_be_declined_with_optional_capture() -> None:
    v = variant("twelve-mens-morris", placement_mill="hand", optional_capture=True)
    pos = make(v, "a1 a4", "b2 b6", hands=(5, 5))
    assert {m for m in moves_of(pos) if m.startswith("a7")} == {"a7", "a7x*"}


def test_hand_capture_text_round_trips_and_explains_itself() -> None:
    from arena.rules import Move, explain_illegal

    assert Move.parse("d6x*").captures == ("*",)
    assert str(Move.parse("D6xG7X*")) == "d6x*xg7"
    assert str(Move.parse("d6x*x*")) == "d6x*x*"
    assert Move.parse(str(Move.parse("a1-a4x*xd1"))) == Move.parse("a1-a4x*xd1")
    pos = make(DOOZ, "a1 a4", "b2 b6", hands=(5, 5))
    assert "hand" in explain_illegal(pos, "a7xb2")
    assert "not 2 (e.g. a7x*)" in explain_illegal(pos, "a7x*x*")
    with pytest.raises(IllegalMoveError, match="hand"):
        make(variant("twelve-mens-morris"), "a1 a4", "b2 b6", hands=(5, 5)).parse_move("a7x*")


#: (variant, position, depth, perft): counts by the reference, which the engine must match
DOOZ_POSITIONS = [
    (DOOZ, text(DOOZ, "a1 a4 d7 g7", "b2 b6 f2 f6", hands=(2, 2)), 3, 3056),
    (DOOZ, text(DOOZ, "a1 a4 d7 g7 c3 c5", "b2 b6 f2 f6 e3", hands=(1, 1)), 3, 6363),
    (variant("twelve-mens-morris", placement_mill="hand", multi_mill_captures=2, optional_capture=True),
     text(DOOZ, "a1 a4 d7 g7", "b2 b6 f2 f6", hands=(2, 1)), 3, 11053),
    (variant(placement_mill="hand", second_moves_first=True, one_time_mill=True),
     text(RUSSIAN, "a1 a4 d7 g4 b2 b4 c3", "g1 g7 f2 f4 f6 e5 d6 e4", hands=(2, 1)), 3, 1173),
]


@pytest.mark.parametrize("v,position,depth,count", DOOZ_POSITIONS)
def test_hand_capture_perft_matches_the_reference(v: Variant, position: str, depth: int,
                                                  count: int) -> None:
    assert check_against_reference(v, position, depth) == count


# --- placement_mill=mark (Da San Qi, Cheng San Qi) ----------------------------------------------
# White a1 a4 places a7 to close a1-a4-a7 and captures b2: the man leaves, its point stays blocked.

MARK = variant(placement_mill="mark", flying=False)


def test_a_man_captured_while_placing_leaves_a_blocked_point() -> None:
    from arena.rules import explain_illegal

    pos = make(MARK, "a1 a4", "b2 b6", hands=(3, 3))
    pos.push_text("a7xb2")
    assert (pos.on_board(BLACK), pos.in_hand(BLACK), pos.occupant("b2")) == (1, 3, None)
    assert pos.to_text().split()[0][3] == "X"  # b2 is the fourth point
    assert "b2" not in moves_of(pos)
    assert "marked" in explain_illegal(pos, "b2")
    pos.pop()
    assert pos.to_text() == text(MARK, "a1 a4", "b2 b6", hands=(3, 3))
    # without the rule the point is free at once
    plain = make(variant(flying=False), "a1 a4", "b2 b6", hands=(3, 3))
    plain.push_text("a7xb2")
    assert "b2" in moves_of(plain)


def test_marks_are_cleared_when_placement_ends() -> None:
    marked = text(MARK, "a1 a4 a7 d7 g4 b4 c3 c5", "g1 g7 f2 f4 f6 e5 e4", turn="b", hands=(0, 1))
    marked = marked[:3] + "X" + marked[4:]  # b2 is marked
    pos = Position.from_text(MARK, marked)
    assert "b2" not in moves_of(pos)
    pos.push_text("d6")
    assert pos.to_text().split()[0][3] == "." and pos.turn == WHITE
    assert "a1-b2" not in moves_of(pos)  # a1 is not adjacent to b2 on the standard board
    assert "b4-b2" in moves_of(pos)


def test_a_marked_man_no_longer_counts() -> None:
    pos = make(MARK, "a1 a4", "b2 b4 b6", hands=(3, 0))
    assert {m for m in moves_of(pos) if m.startswith("a7")} == {"a7xb2", "a7xb4", "a7xb6"}
    pos.push_text("a7xb4")  # b4 marked: b2 and b6 stand in no mill any more
    assert pos.on_board(BLACK) == 2 and not pos.topology.men_in_mills(pos.men[BLACK])
    pos = make(MARK, "a1 a4", "b2", hands=(3, 2))
    pos.push_text("a7xb2")
    assert pos.outcome() is not None and pos.outcome().winner == WHITE  # type: ignore[union-attr]


def test_marks_only_while_placing_in_the_text() -> None:
    bad = text(MARK, "a1 a4", "b6")
    with pytest.raises(PositionError):
        Position.from_text(MARK, bad[:3] + "X" + bad[4:])  # hands empty: no marks
    good = text(MARK, "a1 a4", "b6", hands=(2, 2))
    with pytest.raises(PositionError):
        Position.from_text(variant(), good[:3] + "X" + good[4:])  # not a marking variant
    assert Position.from_text(MARK, good[:3] + "X" + good[4:]).to_text() == good[:3] + "X" + good[4:]


def _with_mark(position: str, index: int) -> str:
    return position[:index] + "X" + position[index + 1:]


#: (variant, position, depth, perft): counts by the reference, which the engine must match
MARK_POSITIONS = [
    (MARK, text(MARK, "a1 a4 d7 g7", "b2 b6 f2 f6", hands=(2, 2)), 3, 8890),
    (MARK, _with_mark(text(MARK, "a1 a4 a7 d7 g4 b4 c3 c5", "g1 g7 f2 f4 f6 e5 e4", turn="b",
                           hands=(0, 1)), 3), 3, 1101),
    (variant("twelve-mens-morris", placement_mill="mark", flying=False, second_moves_first=True,
             mill_capture="always", board_full="lose"),
     _with_mark(text(MARK, "a1 a4 d7 g7 c3 c5 e3 d1 d2 g4 f4", "b6 f2 f6 e5 e4 d5 d6 c4 b4 a7",
                     hands=(1, 1)), 3), 3, 143),
]


@pytest.mark.parametrize("v,position,depth,count", MARK_POSITIONS)
def test_mark_perft_matches_the_reference(v: Variant, position: str, depth: int, count: int) -> None:
    assert check_against_reference(v, position, depth) == count


# (real games of every preset between the example bots: tests/test_presets_play.py)


# --- removal-only turns (xg7): board_full=remove-both, placement_mill=count, blocked=remove-and-move

def test_a_removal_only_turn_has_no_head_and_round_trips() -> None:
    move = Move.parse("xg7xa1")
    assert (move.src, move.dst, move.captures) == (None, None, ("a1", "g7"))
    assert str(move) == "xa1xg7" and Move.parse(str(move)) == move
    for bad in ("x", "x*", "xg7x*", "xg7xg7", "-xg7"):
        with pytest.raises(InvalidMoveError):
            Move.parse(bad)


def men_of(pos: Position, color: int) -> set[str]:
    return {p for p in pos.topology.points if pos.occupant(p) == color}


ZHI = get_variant("zhi-qi")
#: black's last man (f6) fills the diagonal board; no mill anywhere
ZHI_FULL = "BWBWBWBWBBBWBWWBWWWW.WBB b 0 1 23 - - 23"


def test_a_full_board_makes_white_then_black_remove_a_man_then_white_moves() -> None:
    pos = Position.from_text(ZHI, ZHI_FULL)
    pos.push_text("f6")
    assert pos.outcome() is None and pos.turn == WHITE and pos.pending == [1, 1]
    assert pos.to_text().endswith(" remove=1,1")
    assert moves_of(pos) == {"x" + p for p in men_of(pos, BLACK)}
    with pytest.raises(IllegalMoveError, match="must first remove 1 black man"):
        pos.parse_move("a4-a7")
    pos.push_text("xa1")
    assert pos.turn == BLACK and moves_of(pos) == {"x" + p for p in men_of(pos, WHITE)}
    pos.push_text("xa4")
    assert pos.turn == WHITE and pos.pending == [0, 0]
    assert moves_of(pos) and all(m.dst is not None for m in pos.legal_moves())
    assert (pos.on_board(WHITE), pos.on_board(BLACK), pos.quiet) == (11, 11, 0)
    again = Position.from_text(ZHI, pos.to_text())
    assert again.generate_raw() == pos.generate_raw()


@pytest.mark.parametrize("rule, winner", [("draw", None), ("lose", BLACK)])
def test_without_remove_both_the_full_board_ends_the_game(rule: str, winner: Optional[int]) -> None:
    pos = Position.from_text(dataclasses.replace(ZHI, board_full=rule), ZHI_FULL)
    pos.push_text("f6")
    outcome = pos.outcome()
    assert outcome is not None and outcome.termination is Termination.BOARD_FULL
    assert outcome.winner == winner and pos.legal_moves() == []


def test_after_the_full_board_removals_black_moves_first_with_second_moves_first() -> None:
    pos = Position.from_text(dataclasses.replace(ZHI, second_moves_first=True), ZHI_FULL)
    pos.push_text("f6")
    assert pos.turn == WHITE  # the removals: white first, as ever
    pos.push_text("xa1")
    pos.push_text("xa4")
    assert pos.turn == BLACK


#: white (4 men, no flying) is blocked; black's a1 and c5 stand in mills
ZHI_BLOCKED = "BWWBBWBBBB..BBW...B....B w 0 0 0 - - 60"


def test_a_blocked_player_removes_a_man_next_to_its_own_and_moves_on() -> None:
    pos = Position.from_text(ZHI, ZHI_BLOCKED)
    assert pos.outcome() is None
    # next to a white man, whether in a mill (a1, c5) or not: mill protection does not apply
    assert moves_of(pos) == {"xa1", "xb4", "xc5", "xd6", "xg7"}
    with pytest.raises(IllegalMoveError, match="white is blocked and removes one black man next"):
        pos.parse_move("xb2")
    pos.push_text("xa1")
    assert pos.turn == WHITE and pos.quiet == 0
    assert "a4-a1" in moves_of(pos) and all(m.dst is not None for m in pos.legal_moves())
    pos.push_text("a4-a1")
    assert pos.turn == BLACK


def test_blocked_loses_without_remove_and_move() -> None:
    pos = Position.from_text(dataclasses.replace(ZHI, blocked="lose"), ZHI_BLOCKED)
    outcome = pos.outcome()
    assert outcome is not None and (outcome.termination, outcome.winner) == (Termination.BLOCKED, BLACK)


EL = get_variant("el-filja")
#: standard boards where black's last placement (the one empty point) fills the board, and what
#: white and black then remove by the mills each holds (Sanmill's removalBasedOnMillCounts)
EL_CASES = [
    ("WWBBBWWBBBWBWWBBBWWW.BWW", (0, 0), (-1, -1)),  # no mill: each removes one of its own men
    ("WBBWBBWWBWBBWBWBWBBWWW.W", (1, 0), (2, 1)),
    ("WWBBWBWBWBWWBWWBBBBBWWW.", (0, 1), (1, 2)),
    ("BWBBWWBWWBWBWBBBWBBWWWW.", (2, 2), (2, 2)),
    ("WWWWBWBBBWBBBBWWBWWBBW.W", (3, 2), (3, 2)),
    ("BWWWBWBWWBBBBWWWBWWBWBB.", (1, 4), (1, 2)),
]


@pytest.mark.parametrize("board, mills, owed", EL_CASES, ids=[str(c[1]) for c in EL_CASES])
def test_placement_ends_with_removals_by_mill_counts(board: str, mills: tuple[int, int],
                                                     owed: tuple[int, int]) -> None:
    pos = Position.from_text(EL, f"{board} b 0 1 23 - - 23")
    (last,) = pos.legal_moves()
    pos.push(last)
    lines = [sum(1 for m in pos.topology.mills if pos.men[c] & m == m) for c in (WHITE, BLACK)]
    assert tuple(lines) == mills
    assert pos.pending == list(owed) and pos.turn == WHITE and pos.outcome() is None
    for side in (WHITE, BLACK):
        assert pos.turn == side
        victims = men_of(pos, side if owed[side] < 0 else 1 - side)
        turns = pos.legal_moves()
        assert turns and all(m.dst is None and len(m.captures) == abs(owed[side]) for m in turns)
        assert set().union(*(m.captures for m in turns)) == victims  # mill_capture=always
        pos.push(turns[0])
    assert pos.turn == WHITE and pos.pending == [0, 0]
    assert all(m.dst is not None for m in pos.legal_moves())
    assert sum(pos.on_board(c) for c in (WHITE, BLACK)) == 24 - sum(abs(n) for n in owed)


def test_without_count_the_full_board_needs_no_removals() -> None:
    board = EL_CASES[1][0]
    pos = Position.from_text(dataclasses.replace(EL, placement_mill="capture", board_full="draw"),
                             f"{board} b 0 1 23 - - 23")
    pos.push(pos.legal_moves()[0])
    assert pos.pending == [0, 0] and pos.outcome() is not None  # the full board: a draw


def test_with_count_a_mill_formed_while_placing_captures_nothing() -> None:
    pos = make(EL, "a1 a4", "b2 b6", hands=(10, 10))
    assert "a7" in moves_of(pos) and not any(m.startswith("a7x") for m in moves_of(pos))
    with pytest.raises(IllegalMoveError, match="captures nothing here"):
        pos.parse_move("a7xb2")
    capture = make(dataclasses.replace(EL, placement_mill="capture"), "a1 a4", "b2 b6", hands=(10, 10))
    assert "a7xb2" in moves_of(capture)


def test_owed_removals_survive_the_position_text() -> None:
    pos = Position.from_text(EL, f"{EL_CASES[3][0]} b 0 1 23 - - 23")
    pos.push(pos.legal_moves()[0])
    text = pos.to_text()
    assert text.endswith(" remove=2,2")
    again = Position.from_text(EL, text)
    assert again.to_text() == text and again.generate_raw() == pos.generate_raw()
    assert RefState.from_text(EL, text).legal_moves() == moves_of(pos)
    with pytest.raises(PositionError, match="owed removals"):
        Position.from_text("nine-mens-morris", "........................ w 9 9 0 - - 0 remove=1,1")


NEW_RULE_POSITIONS = [
    (ZHI, ZHI_FULL, 3, 144),
    (ZHI, ZHI_BLOCKED, 3, 135),
    (EL, f"{EL_CASES[0][0]} b 0 1 23 - - 23", 3, 144),
    (EL, f"{EL_CASES[3][0]} b 0 1 23 - - 23", 3, 4356),
    (dataclasses.replace(EL, mill_capture="last-resort", second_moves_first=True),
     f"{EL_CASES[4][0]} b 0 1 23 - - 23", 3, None),
    (dataclasses.replace(ZHI, mill_capture="never", flying=False), ZHI_BLOCKED, 3, None),
]


@pytest.mark.parametrize("v, position, depth, count", NEW_RULE_POSITIONS,
                         ids=[str(i) for i in range(len(NEW_RULE_POSITIONS))])
def test_removal_rules_perft_matches_the_reference(v: Variant, position: str, depth: int,
                                                   count: Optional[int]) -> None:
    got = check_against_reference(v, position, depth)
    assert count is None or got == count


def test_a_removal_only_turn_out_of_place_is_explained() -> None:
    pos = Position("nine-mens-morris")
    pos.push_text("d6")
    with pytest.raises(IllegalMoveError, match="only removes men, which is a turn only when"):
        pos.parse_move("xd6")
    full = Position.from_text(ZHI, ZHI_FULL)
    full.push_text("f6")
    with pytest.raises(IllegalMoveError, match="white removes 1 black man here, not others"):
        full.parse_move("xa4")  # a4 is white's own man
    filja = Position.from_text(EL, f"{EL_CASES[0][0]} b 0 1 23 - - 23")
    filja.push_text("f6")
    with pytest.raises(IllegalMoveError, match="white removes 1 man of its own here, not others"):
        filja.parse_move("xa7")  # black's man: white removes one of its own
