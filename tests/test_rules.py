"""The rules engine: every rule parameter on hand-built positions, perft data checked against an
independent reference, random-playout invariants, and round-trips of the text formats."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.board import get_topology
from arena.errors import IllegalMoveError, InvalidMoveError, MoveError, PositionError
from arena.rules import BLACK, FROM_HAND, WHITE, Move, Outcome, Position, Termination
from arena.variants import PRESETS, Variant, get_variant
from tests.rules_reference import RefState

STANDARD = get_variant("nine-mens-morris")
DATA = Path(__file__).parent / "data" / "perft.txt"


def variant(base: str = "nine-mens-morris", **changes: object) -> Variant:
    """A preset with some parameters changed."""
    return dataclasses.replace(get_variant(base), name="test", **changes)  # type: ignore[arg-type]


def make(v: Variant, white: str = "", black: str = "", *, turn: str = "w", hands: tuple[int, int] = (0, 0),
         quiet: int = 0, forbidden: tuple[str, str] = ("-", "-")) -> Position:
    """A hand-built position: men given as space-separated point names."""
    points = get_topology(v.board).points
    w, b = set(white.split()), set(black.split())
    assert (w | b) <= set(points) and not w & b, "test position names a bad point"
    cells = "".join("W" if p in w else "B" if p in b else "." for p in points)
    text = f"{cells} {turn} {hands[0]} {hands[1]} {quiet} {forbidden[0]} {forbidden[1]} 0"
    return Position.from_text(v, text)


def captures_of(pos: Position, src: Optional[str], dst: str) -> set[tuple[str, ...]]:
    """The capture sets of the legal moves from ``src`` to ``dst``."""
    return {m.captures for m in pos.legal_moves() if (m.src, m.dst) == (src, dst)}


def outcome_of(pos: Position) -> Optional[tuple[Termination, Optional[int]]]:
    o = pos.outcome()
    return None if o is None else (o.termination, o.winner)


def play(pos: Position, *moves: str) -> Position:
    for text in moves:
        pos.push_text(text)
    return pos


# --- men in mills: last-resort / never / always -------------------------------------------
# White a1 d1 g4 e4 slides g4-g1 to close a1-d1-g1; black holds the top mill a7-d7-g7.

def test_last_resort_protects_men_in_mills_while_others_remain() -> None:
    pos = make(STANDARD, "a1 d1 g4 e4", "a7 d7 g7 c4")
    assert captures_of(pos, "g4", "g1") == {("c4",)}


def test_last_resort_allows_any_man_when_all_are_in_mills() -> None:
    pos = make(STANDARD, "a1 d1 g4 e4", "a7 d7 g7")
    assert captures_of(pos, "g4", "g1") == {("a7",), ("d7",), ("g7",)}


def test_never_loses_the_capture_when_all_men_are_in_mills() -> None:
    v = variant(mill_capture="never")
    assert captures_of(make(v, "a1 d1 g4 e4", "a7 d7 g7 c4"), "g4", "g1") == {("c4",)}
    assert captures_of(make(v, "a1 d1 g4 e4", "a7 d7 g7"), "g4", "g1") == {()}


def test_always_allows_men_in_mills() -> None:
    v = variant(mill_capture="always")
    assert captures_of(make(v, "a1 d1 g4 e4", "a7 d7 g7 c4"), "g4", "g1") == {
        ("a7",), ("d7",), ("g7",), ("c4",)}


def test_a_move_that_forms_no_mill_captures_nothing() -> None:
    pos = make(STANDARD, "a1 d1 g4 e4", "a7 d7 g7 c4")
    assert captures_of(pos, "e4", "e3") == {()}
    with pytest.raises(IllegalMoveError):
        pos.parse_move("e4-e3xc4")


# --- double mills --------------------------------------------------------------------------
# White a1 g1 d2 d3 places d1, closing a1-d1-g1 and d1-d2-d3 at once.

DOUBLE_WHITE = "a1 g1 d2 d3"


def test_double_mill_captures_one_man_by_default() -> None:
    pos = make(STANDARD, DOUBLE_WHITE, "a7 d7 g7 c4", hands=(1, 2))
    assert captures_of(pos, None, "d1") == {("c4",)}


def test_double_mill_captures_two_with_protection_re_evaluated_after_the_first() -> None:
    v = variant(multi_mill_captures=2)
    # the first capture must take the only free man; then every man left is in a mill,
    # so the last-resort rule lets the second capture take any of them
    pos = make(v, DOUBLE_WHITE, "a7 d7 g7 c4", hands=(1, 2))
    assert captures_of(pos, None, "d1") == {("a7", "c4"), ("c4", "d7"), ("c4", "g7")}
    # taking a man out of the mill breaks it: its other two men are free for the second capture
    pos = make(v, DOUBLE_WHITE, "a7 d7 g7", hands=(1, 2))
    assert captures_of(pos, None, "d1") == {("a7", "d7"), ("a7", "g7"), ("d7", "g7")}


def test_double_mill_never_and_always() -> None:
    never = make(variant(multi_mill_captures=2, mill_capture="never"), DOUBLE_WHITE, "a7 d7 g7 c4",
                 hands=(1, 2))
    assert captures_of(never, None, "d1") == {("c4",)}
    always = make(variant(multi_mill_captures=2, mill_capture="always"), DOUBLE_WHITE, "a7 d7 g7 c4",
                  hands=(1, 2))
    assert captures_of(always, None, "d1") == {
        tuple(sorted(pair)) for pair in [("a7", "d7"), ("a7", "g7"), ("d7", "g7"),
                                         ("a7", "c4"), ("c4", "d7"), ("c4", "g7")]}


def test_double_mill_takes_what_is_there_and_a_single_mill_takes_one() -> None:
    v = variant(multi_mill_captures=2)
    lonely = make(v, DOUBLE_WHITE, "c4", hands=(1, 5))
    assert captures_of(lonely, None, "d1") == {("c4",)}
    single = make(v, "a1 a7 e4", "c5 e5 f6", hands=(1, 2))
    assert captures_of(single, None, "a4") == {("c5",), ("e5",), ("f6",)}


def test_triple_mill_on_the_diagonal_board() -> None:
    v = variant("nine-mens-morris-diagonals", multi_mill_captures=3)
    pos = make(v, "a4 a7 d1 g1 b2 c3", "c5 e5 f4 g7", hands=(1, 1))
    assert captures_of(pos, None, "a1") == {
        ("c5", "e5", "f4"), ("c5", "e5", "g7"), ("c5", "f4", "g7"), ("e5", "f4", "g7")}


# --- optional capture ---------------------------------------------------------------------

def test_optional_capture_allows_the_move_without_a_capture() -> None:
    v = variant(optional_capture=True)
    assert captures_of(make(v, "a1 d1 g4 e4", "a7 d7 g7 c4"), "g4", "g1") == {(), ("c4",)}


def test_optional_capture_with_two_captures_takes_zero_one_or_two() -> None:
    v = variant(optional_capture=True, multi_mill_captures=2)
    pos = make(v, DOUBLE_WHITE, "a7 d7 g7 c4", hands=(1, 2))
    assert captures_of(pos, None, "d1") == {(), ("c4",), ("a7", "c4"), ("c4", "d7"), ("c4", "g7")}
    pos.push_text("d1")
    assert pos.on_board(BLACK) == 4 and pos.outcome() is None


# --- blocked players and flying -----------------------------------------------------------
# Black's four corner men are boxed in by white men on a4 d1 d7 g4.

BOXED_WHITE, BOXED_BLACK = "a4 d1 d7 g4", "a1 a7 g1 g7"


def test_a_blocked_player_loses() -> None:
    pos = make(STANDARD, BOXED_WHITE, BOXED_BLACK, turn="b")
    assert pos.legal_moves() == []
    assert outcome_of(pos) == (Termination.BLOCKED, WHITE)
    assert pos.outcome() == Outcome(Termination.BLOCKED, WHITE) and pos.outcome().result == "1-0"


def test_blocked_can_be_a_draw() -> None:
    pos = make(variant(blocked="draw"), BOXED_WHITE, BOXED_BLACK, turn="b")
    assert outcome_of(pos) == (Termination.BLOCKED, None) and pos.outcome().result == "1/2-1/2"


def test_blocked_is_decided_before_the_draw_rules() -> None:
    pos = make(STANDARD, BOXED_WHITE, BOXED_BLACK, turn="b", quiet=150)
    assert outcome_of(pos) == (Termination.BLOCKED, WHITE)


def test_flying_at_fly_at_men() -> None:
    empty = 24 - 7
    # three black men fly to any empty point (none of these flights closes a mill)
    pos = make(STANDARD, BOXED_WHITE, "a1 a7 g1", turn="b")
    moves = pos.legal_moves()
    assert {(m.src, m.dst) for m in moves} == {
        (s, d) for s in ("a1", "a7", "g1") for d in get_topology("standard").points
        if pos.occupant(d) is None}
    assert len(moves) == 3 * empty and pos.phase(BLACK) == "flying"
    # white with four men still slides to adjacent points only
    white = make(STANDARD, BOXED_WHITE, "a1 a7 g1")
    adjacent = get_topology("standard").adjacent
    index = get_topology("standard").index
    assert all(adjacent[index[m.src]] >> index[m.dst] & 1 for m in white.legal_moves())
    assert white.phase(WHITE) == "moving"


def test_flying_threshold_is_a_parameter() -> None:
    pos = make(variant(fly_at=4), BOXED_WHITE, BOXED_BLACK, turn="b")
    assert len(pos.legal_moves()) == 4 * 16 and pos.outcome() is None


def test_no_flying_blocks_three_men() -> None:
    pos = make(get_variant("nine-mens-morris-no-flying"), BOXED_WHITE, "a1 a7 g1", turn="b")
    assert pos.phase(BLACK) == "moving"
    assert outcome_of(pos) == (Termination.BLOCKED, WHITE)


# --- board full during placement (twelve men's morris) ------------------------------------
# A full diagonal board without a mill of either colour; white places the last man on g1.

FULL_WHITE = "a4 b2 b6 c4 d3 d6 d7 e4 e5 f2 f4"
FULL_BLACK = "a1 a7 b4 c3 c5 d1 d2 d5 e3 f6 g4 g7"


def test_board_full_is_a_draw_in_twelve_mens_morris() -> None:
    pos = make(get_variant("twelve-mens-morris"), FULL_WHITE, FULL_BLACK, hands=(1, 0))
    assert [str(m) for m in pos.legal_moves()] == ["g1"]
    pos.push_text("g1")
    assert outcome_of(pos) == (Termination.BOARD_FULL, None)
    assert pos.legal_moves() == []


def test_board_full_can_lose_for_the_player_to_move() -> None:
    pos = make(variant("twelve-mens-morris", board_full="lose"), FULL_WHITE, FULL_BLACK, hands=(1, 0))
    pos.push_text("g1")
    assert outcome_of(pos) == (Termination.BOARD_FULL, WHITE)


# --- no immediate re-forming --------------------------------------------------------------
# White breaks a1-a4-a7 with a7-d7; black shuffles b2-b4 and back.

def test_a_broken_mill_may_not_be_re_formed_on_the_next_turn() -> None:
    v = variant(no_immediate_reform=True)
    pos = play(make(v, "a1 a4 a7 g4", "b2 b6 f2 f6"), "a7-d7")
    assert pos.to_text().split()[5] == "a1a4a7"  # white's forbidden mills
    pos.push_text("b2-b4")
    assert ("d7", "a7") not in {(m.src, m.dst) for m in pos.legal_moves()}
    assert "a4-a7" in {str(m) for m in pos.legal_moves()}  # moving into a7 without re-forming is fine
    with pytest.raises(IllegalMoveError):
        pos.parse_move("d7-a7xb4")
    # one turn later it is legal again
    play(pos, "g4-g1", "b4-b2")
    assert captures_of(pos, "d7", "a7") == {("b2",), ("b6",), ("f2",), ("f6",)}


def test_without_the_option_a_mill_is_re_formed_at_once() -> None:
    pos = play(make(STANDARD, "a1 a4 a7 g4", "b2 b6 f2 f6"), "a7-d7", "b2-b4")
    assert captures_of(pos, "d7", "a7") == {("b4",), ("b6",), ("f2",), ("f6",)}
    assert pos.to_text().split()[5] == "-"


def test_forbidden_mills_survive_the_position_text() -> None:
    v = variant(no_immediate_reform=True)
    pos = play(make(v, "a1 a4 a7 g4", "b2 b6 f2 f6"), "a7-d7", "b2-b4")
    again = Position.from_text(v, pos.to_text())
    assert again.to_text() == pos.to_text()
    assert sorted(map(str, again.legal_moves())) == sorted(map(str, pos.legal_moves()))


# --- draws: three against three, no capture, repetition -----------------------------------

def _three_three(v: Variant, quiet: int) -> Position:
    return make(v, "a1 d1 b4", "a7 d7 f4", quiet=quiet)


def test_three_against_three_draws_after_the_set_number_of_turns() -> None:
    v = variant("nine-mens-morris-options", repetition=0)  # repetition off: the shuffle repeats
    pos = _three_three(v, 0)
    shuffle = ["b4-c5", "f4-e3", "c5-b4", "e3-f4"] * 3
    for turn, text in enumerate(shuffle[:10], start=1):
        assert pos.outcome() is None
        pos.push_text(text)
        assert pos.quiet == turn
    assert outcome_of(pos) == (Termination.THREE_VS_THREE, None) and pos.legal_moves() == []
    assert v.three_three_draw == 10


def test_three_against_three_needs_three_men_each() -> None:
    v = get_variant("nine-mens-morris-options")
    pos = play(make(v, "a1 d1 b4 e4", "a7 d7 f6", quiet=9), "e4-e3")
    assert pos.quiet == 10 and pos.outcome() is None
    assert outcome_of(play(_three_three(v, 9), "b4-c5")) == (Termination.THREE_VS_THREE, None)
    assert play(_three_three(v, 8), "b4-c5").outcome() is None


def test_no_capture_draw_after_the_set_number_of_turns() -> None:
    assert STANDARD.no_capture_draw == 100
    pos = play(make(STANDARD, "a1 d1 g4 e4", "a7 d7 g7 c4 e5", quiet=99), "e4-e3")
    assert outcome_of(pos) == (Termination.NO_CAPTURE, None)
    assert play(make(STANDARD, "a1 d1 g4 e4", "a7 d7 g7 c4 e5", quiet=98), "e4-e3").outcome() is None


def test_a_capture_resets_the_no_capture_count() -> None:
    pos = play(make(STANDARD, "a1 d1 g4 e4", "a7 d7 g7 c4 e5", quiet=99), "g4-g1xc4")
    assert pos.quiet == 0 and pos.outcome() is None


def test_no_capture_turns_count_from_the_end_of_placement() -> None:
    pos = play(make(STANDARD, "a1 d2 g4 e4 b6 c5 f6 d7 a7", "b2 d1 g1 e3 f4 c4 e5 b4",
                    turn="b", hands=(0, 1), quiet=17), "d6")
    assert pos.hand == [0, 0] and pos.quiet == 0 and pos.to_text().split()[4] == "0"


def test_no_capture_draw_can_be_off() -> None:
    pos = play(make(variant(no_capture_draw=0), "a1 d1 g4 e4", "a7 d7 g7 c4 e5", quiet=500), "e4-e3")
    assert pos.outcome() is None


SHUFFLE = ["g1-d1", "g7-d7", "d1-g1", "d7-g7"]


def _shuffle_position(v: Variant) -> Position:
    return make(v, "a4 b6 e3 g1", "c4 d5 f2 g7")


def test_threefold_repetition_is_a_draw() -> None:
    pos = _shuffle_position(STANDARD)
    play(pos, *SHUFFLE, *SHUFFLE[:3])
    assert pos.outcome() is None  # the start position occurred twice so far
    pos.push_text(SHUFFLE[3])
    assert outcome_of(pos) == (Termination.REPETITION, None) and pos.legal_moves() == []
    pos.pop()
    assert pos.outcome() is None


def test_repetition_count_and_off() -> None:
    twice = play(_shuffle_position(variant(repetition=2)), *SHUFFLE)
    assert outcome_of(twice) == (Termination.REPETITION, None)
    off = play(_shuffle_position(variant(repetition=0)), *SHUFFLE * 3)
    assert off.outcome() is None


# --- too few men (counting men in hand) ---------------------------------------------------

def test_lose_below_counts_men_in_hand() -> None:
    pos = make(STANDARD, "a1 d1", "c4 e4", hands=(1, 1))
    assert pos.outcome() is None  # two on the board and one in hand make three
    pos.push_text("g1xc4")
    assert outcome_of(pos) == (Termination.TOO_FEW_MEN, WHITE)
    assert outcome_of(make(STANDARD, "a1 d1 g4", "c4 e4", turn="b")) == (Termination.TOO_FEW_MEN, WHITE)


def test_lose_below_is_a_parameter() -> None:
    four = variant(lose_below=4)
    assert outcome_of(make(four, "a1 d1 g4 e4", "c4 e5 f6", turn="b")) == (Termination.TOO_FEW_MEN, WHITE)
    zero = variant(lose_below=0)
    assert outcome_of(make(zero, "a1 d1 g4 e4", "", turn="b")) == (Termination.BLOCKED, WHITE)
    assert outcome_of(make(zero, "a1 d1 g4 e4", "b6", turn="b")) is None


# --- Lasker: moving while men are in hand --------------------------------------------------

def test_move_in_placement_allows_slides_while_men_are_in_hand() -> None:
    lasker = make(get_variant("lasker-morris"), "b4", "d2", hands=(5, 5))
    slides = {str(m) for m in lasker.legal_moves() if m.src}
    assert slides == {"b4-a4", "b4-b2", "b4-b6", "b4-c4"}
    assert len(lasker.legal_moves()) == 22 + 4
    assert lasker.phase(WHITE) == "placing"
    plain = make(STANDARD, "b4", "d2", hands=(5, 5))
    assert all(m.src is None for m in plain.legal_moves()) and len(plain.legal_moves()) == 22


def test_lasker_placement_ends_only_when_both_hands_are_empty() -> None:
    pos = make(get_variant("lasker-morris"), "b4 a1", "d2 g7", hands=(1, 1), quiet=3)
    pos.push_text("b4-c4")
    assert pos.hand == [1, 1] and pos.quiet == 4


# --- three men's morris: a mill wins ------------------------------------------------------

def test_mill_wins_in_three_mens_morris() -> None:
    three = get_variant("three-mens-morris")
    pos = make(three, "a1 d4", "a7 d1", hands=(1, 1))
    assert pos.outcome() is None
    assert all(not m.captures for m in pos.legal_moves())
    pos.push_text("g7")
    assert outcome_of(pos) == (Termination.MILL, WHITE) and pos.legal_moves() == []


def test_mill_wins_in_the_moving_phase() -> None:
    three = get_variant("three-mens-morris")
    pos = make(three, "a1 g4 d7", "a7 d4 d1", turn="b")
    assert pos.outcome() is None
    with pytest.raises(IllegalMoveError):
        pos.parse_move("d1-g7")  # not adjacent, and three men's morris has no flying
    pos.push_text("d1-g1")  # the diagonal a7-d4-g1
    assert outcome_of(pos) == (Termination.MILL, BLACK)
    assert outcome_of(make(three, "a1 d7 g4", "a7 d4 g1")) == (Termination.MILL, BLACK)


# --- men, outcomes ---------------------------------------------------------------------------

def test_men_sets_the_hands_and_the_placing_phase() -> None:
    lasker = Position("lasker-morris")
    assert lasker.hand == [10, 10] and lasker.phase(WHITE) == lasker.phase(BLACK) == "placing"
    twelve = Position("twelve-mens-morris")
    assert twelve.in_hand(BLACK) == 12
    with pytest.raises(PositionError, match="more men"):
        Position.from_text("six-mens-morris", "WWWWWWW......... w 0 6 0 - - 0")


def test_rules_endings_are_not_forfeits() -> None:
    rules = {Termination.TOO_FEW_MEN, Termination.BLOCKED, Termination.MILL, Termination.BOARD_FULL,
             Termination.THREE_VS_THREE, Termination.NO_CAPTURE, Termination.REPETITION}
    early = {Termination.ADJUDICATION, Termination.TABLEBASE}  # the referee's, not forfeits
    assert all(not t.is_forfeit for t in rules | early)
    assert all(t.is_forfeit for t in set(Termination) - rules - early)
    assert [Outcome(Termination.MILL, w).result for w in (WHITE, BLACK, None)] == ["1-0", "0-1", "1/2-1/2"]


# --- parse errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "d8", "h1", "a1-", "a1a4", "a1-a1", "d6xg7xg7", "d6x",
                                  "d6 g7", "x", "-a1"])
def test_malformed_move_text_is_an_invalid_move_error(text: str) -> None:
    with pytest.raises(InvalidMoveError) as info:
        Position().parse_move(text)
    assert isinstance(info.value, ValueError) and isinstance(info.value, MoveError)


def test_a_point_not_on_the_board_is_an_invalid_move() -> None:
    with pytest.raises(InvalidMoveError, match="b1"):
        Position().parse_move("b1")
    with pytest.raises(InvalidMoveError):
        Position("six-mens-morris").parse_move("c3")
    assert not Position().is_legal(Move(None, "b1"))


@pytest.mark.parametrize("text", ["a1-a4", "d6xg7"])
def test_moves_not_legal_here_are_illegal_move_errors(text: str) -> None:
    with pytest.raises(IllegalMoveError) as info:
        Position().parse_move(text)
    assert isinstance(info.value, ValueError)
    assert Position().to_text() in str(info.value)


def test_an_occupied_point_is_illegal() -> None:
    pos = play(Position(), "d6")
    with pytest.raises(IllegalMoveError):
        pos.parse_move("d6")
    assert pos.is_legal(Move(None, "d5")) and not pos.is_legal(Move(None, "d6"))


@pytest.mark.parametrize("text", [
    "", "........................ w 9 9 0 - - 0 extra", "....................... w 9 9 0 - - 0",
    "X....................... w 9 9 0 - - 0", "........................ x 9 9 0 - - 0",
    "........................ w 9 -1 0 - - 0", "........................ w nine 9 0 - - 0",
    "W....................... w 9 9 0 - - 0", "........................ w 9 9 0 a1a4 - 0",
    "........................ w 9 9 0 a1a4b2 - 0"])
def test_bad_position_text_is_a_position_error(text: str) -> None:
    with pytest.raises(PositionError):
        Position.from_text(STANDARD, text)


# --- push, pop, copy ----------------------------------------------------------------------

def test_push_pop_peek_and_copy() -> None:
    pos = Position()
    start = pos.to_text()
    play(pos, "d6", "d5", "b6")
    assert [str(m) for m in pos.move_stack] == ["d6", "d5", "b6"] and str(pos.peek()) == "b6"
    other = pos.copy()
    other.push_text("b4")
    assert len(pos.move_stack) == 3 and len(other.move_stack) == 4
    assert str(pos.pop()) == "b6" and str(pos.pop()) == "d5" and str(pos.pop()) == "d6"
    assert pos.to_text() == start
    with pytest.raises(IndexError):
        pos.pop()


@pytest.mark.parametrize("seed", [7, 8])
def test_the_kept_outcome_follows_pushes_pops_and_copies(seed: int) -> None:
    """The position keeps its last outcome check (and move list) for the state they were
    for: after any mix of pushes, pops and copies, outcome(), legal_moves() and is_legal()
    answer as a position replayed from the start does.  Checks come after a random number
    of steps (a state met again after several moves must not get an answer kept from
    before), and short repetition and no-capture counts make the draw rules, which hang on
    the history, come up."""
    v = variant("nine-mens-morris", repetition=2, no_capture_draw=6)
    rng = random.Random(seed)
    pos = Position(v)
    ended = set()
    for _ in range(4000):
        # the walk asks nothing that looks at the game's end (generate_raw ignores it), so
        # the states between two checks are never looked at
        raws = pos.generate_raw()
        if raws and (not pos.move_stack or rng.random() < (0.75 if len(pos.move_stack) < 60
                                                           else 0.3)):
            stack = pos.move_stack
            back = [r for r in raws if len(stack) > 1 and str(stack[-2]) == "-".join(
                reversed(str(pos._to_move(r)).split("-")))]  # the last slide undone: repeats
            pos.push_raw(rng.choice(back if back and rng.random() < 0.7 else raws))
        else:
            pos.pop()
        if rng.random() < 0.05:
            pos = pos.copy()
        if rng.random() < 0.75:
            continue
        fresh = Position(v)
        for move in pos.move_stack:
            fresh.push(move)
        # legality: asked of a position that has its moves generated (as the referee's is,
        # while the bot thinks) and of one that has not, for legal and illegal moves alike
        earlier = Position(v)
        for move in pos.move_stack[:-1]:
            earlier.push(move)
        candidates = earlier.legal_moves() + fresh.legal_moves()
        unseen = Position(v)  # nothing generated: each check generates its own move only
        for move in pos.move_stack:
            unseen.push(move)
        expected = [unseen.is_legal(m) for m in candidates]
        pos.generate_raw()
        assert [pos.is_legal(m) for m in candidates] == expected, pos.to_text()
        outcome = _key(pos.outcome())
        assert outcome == _key(fresh.outcome()), pos.to_text()
        assert pos.legal_moves() == fresh.legal_moves(), pos.to_text()
        for move in fresh.legal_moves()[:3]:
            assert pos.is_legal(move)
        ended.add(outcome and outcome[0])
    assert {"repetition", "no-capture"} <= ended  # the history-bound endings were met


# --- perft ----------------------------------------------------------------------------------

def _perft_lines() -> list[tuple[str, int, int, str]]:
    out = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, depth, count, position = line.split(maxsplit=3)
            out.append((name, int(depth), int(count), position))
    return out


PERFT = _perft_lines()


def _start(name: str, position: str) -> Position:
    return Position(name) if position == "start" else Position.from_text(name, position)


def test_perft_data_covers_every_preset() -> None:
    assert {name for name, *_ in PERFT} == set(PRESETS)
    standard = {depth: count for name, depth, count, pos in PERFT
                if name == "nine-mens-morris" and pos == "start"}
    assert standard == {1: 24, 2: 552, 3: 12144, 4: 255024, 5: 5140800}


@pytest.mark.parametrize("name,depth,count,position", PERFT,
                         ids=[f"{n}-{d}-{i}" for i, (n, d, _, _) in enumerate(PERFT)])
def test_perft_engine(name: str, depth: int, count: int, position: str) -> None:
    assert _start(name, position).perft(depth) == count


@pytest.mark.parametrize("name,depth,count,position", [line for line in PERFT if line[1] <= 3],
                         ids=[f"{n}-{d}-{i}" for i, (n, d, _, _) in enumerate(PERFT) if d <= 3])
def test_perft_reference(name: str, depth: int, count: int, position: str) -> None:
    v = get_variant(name)
    ref = RefState.start(v) if position == "start" else RefState.from_text(v, position)
    assert ref.perft(depth) == count


def test_perft_without_bulk_counting_agrees() -> None:
    for name, depth, count, position in PERFT:
        if depth <= 3:
            assert _start(name, position).perft(depth, bulk=False) == count


# --- random games: the engine against the reference, and invariants ------------------------

#: parameter combinations no preset has, for the cross-check against the reference
EXTRA_VARIANTS = [
    variant(mill_capture="never", optional_capture=True, no_capture_draw=12, repetition=2),
    variant(mill_capture="always", multi_mill_captures=2, fly_at=4, blocked="draw"),
    variant("nine-mens-morris-diagonals", multi_mill_captures=3, flying=True, lose_below=2),
    variant("twelve-mens-morris", board_full="lose", no_immediate_reform=True),
    variant("lasker-morris", no_immediate_reform=True, optional_capture=True, no_capture_draw=30),
    variant("six-mens-morris", flying=True, three_three_draw=4, lose_below=0, no_capture_draw=20),
    variant("three-mens-morris", mill_wins=False, lose_below=0, no_capture_draw=15),
    # built to meet rare cases often: losing during placement, double mills, early repetitions
    variant("twelve-mens-morris", lose_below=10, multi_mill_captures=2),
    variant("six-mens-morris", men=5, repetition=2, blocked="draw"),
    variant("three-mens-morris", repetition=2),
]
ALL_VARIANTS = list(PRESETS.values()) + EXTRA_VARIANTS


def _key(outcome: Optional[Outcome]) -> Optional[tuple[str, Optional[int]]]:
    return None if outcome is None else (outcome.termination.value, outcome.winner)


@pytest.mark.parametrize("v", ALL_VARIANTS, ids=[f"{v.name}-{i}" for i, v in enumerate(ALL_VARIANTS)])
def test_engine_matches_the_reference_in_random_games(v: Variant) -> None:
    for seed in range(4):
        rng = random.Random(seed)
        pos, ref = Position(v), RefState.start(v)
        while True:
            moves = {str(m) for m in pos.legal_moves()}
            assert moves == ref.legal_moves(), pos.to_text()
            assert _key(pos.outcome()) == ref.outcome(), pos.to_text()
            parsed = RefState.from_text(v, pos.to_text())
            assert (parsed.men, parsed.hand, parsed.turn, parsed.quiet, parsed.forbidden) == (
                ref.men, ref.hand, ref.turn, ref.quiet, ref.forbidden)
            if not moves:
                break
            text = rng.choice(sorted(moves))
            pos.push_text(text)
            ref = ref.play(text)


def game_length_bound(v: Variant) -> int:
    """The most turns a game can last (docs/RULES.md): the no-capture count is reset only by a
    capture or by the end of placement, so with C captures at most there are C + 2 stretches of
    at most ``no_capture_draw`` quiet turns each, plus the C + 1 resetting turns."""
    captures = 0 if v.mill_wins else 2 * (v.men - v.lose_below) + 1
    return (captures + 2) * v.no_capture_draw + captures + 1


@pytest.mark.parametrize("v", ALL_VARIANTS, ids=[f"{v.name}-{i}" for i, v in enumerate(ALL_VARIANTS)])
def test_random_playout_invariants(v: Variant) -> None:
    topo = v.topology
    for seed in range(6):
        rng = random.Random(1000 + seed)
        pos = Position(v)
        start = pos.to_text()
        bound = game_length_bound(v)
        while pos.ply <= bound:
            outcome = pos.outcome()
            moves = pos.legal_moves()
            assert (outcome is None) == bool(moves)
            if outcome is not None:
                break
            me, them = pos.turn, 1 - pos.turn
            before = [(pos.on_board(c), pos.in_hand(c)) for c in (WHITE, BLACK)]
            move = rng.choice(moves)
            if move.dst is None:  # a removal-only turn: owed, or a blocked player's
                owed = pos.pending[me]
                assert owed or v.blocked == "remove-and-move"
                victim = me if owed < 0 else them
                assert 1 <= len(move.captures) <= max(1, abs(owed))
                assert all(pos.occupant(c) == victim for c in move.captures)
                pos.push(move)
                after = [(pos.on_board(c), pos.in_hand(c)) for c in (WHITE, BLACK)]
                assert after[victim][0] == before[victim][0] - len(move.captures)
                assert after[1 - victim] == before[1 - victim] and pos.quiet == 0
                continue
            if move.src is None:
                assert before[me][1] > 0
            else:
                assert before[me][1] == 0 or v.move_in_placement
                assert pos.occupant(move.src) == me
                if not topo.adjacent[topo.index[move.src]] >> topo.index[move.dst] & 1:
                    assert v.flying and before[me][1] == 0 and before[me][0] <= v.fly_at
                    assert pos.phase(me) == "flying"
            assert pos.occupant(move.dst) is None
            assert not pos.marks >> topo.index[move.dst] & 1  # a marked point stays blocked
            assert len(move.captures) <= (0 if v.mill_wins else v.multi_mill_captures)
            from_hand = move.captures.count(FROM_HAND)  # x*: a man from the opponent's hand
            assert not from_hand or (v.placement_mill == "hand" and move.src is None)
            assert all(pos.occupant(c) == them for c in move.captures if c != FROM_HAND)
            marks_before = pos.marks
            pos.push(move)
            after = [(pos.on_board(c), pos.in_hand(c)) for c in (WHITE, BLACK)]
            assert after[me][1] == before[me][1] - (move.src is None)  # hands only shrink
            assert sum(after[me]) == sum(before[me])
            assert sum(after[them]) == sum(before[them]) - len(move.captures)  # men never grow
            assert after[them][1] == before[them][1] - from_hand
            if v.placement_mill == "mark" and move.src is None and (after[0][1] or after[1][1]):
                # men captured while placing leave their points blocked until placement ends
                captured = {topo.index[c] for c in move.captures}
                assert pos.marks == marks_before | sum(1 << i for i in captured)
            if not after[0][1] and not after[1][1]:
                assert pos.marks == 0
            assert (pos.phase(me) == "placing") == (after[me][1] > 0)
        outcome = pos.outcome()
        assert outcome is not None, f"game longer than the bound {bound}"
        assert not outcome.termination.is_forfeit
        assert pos.legal_moves() == []
        if outcome.termination in (Termination.BLOCKED, Termination.BOARD_FULL):
            assert pos.generate_raw() == []
        if outcome.winner is not None:
            loser = 1 - outcome.winner
            if outcome.termination is Termination.TOO_FEW_MEN:
                assert pos.on_board(loser) + pos.in_hand(loser) < v.lose_below
            if outcome.termination is Termination.BLOCKED:
                assert pos.turn == loser
        while pos.move_stack:
            pos.pop()
        assert pos.to_text() == start


def test_the_game_length_bound_of_nine_mens_morris() -> None:
    assert game_length_bound(STANDARD) == 15 * 100 + 14


# --- round-trips of the text formats --------------------------------------------------------

POINTS = sorted({p for v in PRESETS.values() for p in v.topology.points})


@st.composite
def moves(draw: st.DrawFn) -> Move:
    if draw(st.integers(0, 4)) == 0:  # a removal-only turn (xg7)
        return Move(None, None, tuple(draw(st.lists(st.sampled_from(POINTS), min_size=1, max_size=3,
                                                    unique=True))))
    src = draw(st.none() | st.sampled_from(POINTS))
    dst = draw(st.sampled_from([p for p in POINTS if p != src]))
    caps = draw(st.lists(st.sampled_from(POINTS), max_size=3, unique=True))
    return Move(src, dst, tuple(caps))


@given(moves())
def test_move_text_round_trips(move: Move) -> None:
    assert Move.parse(str(move)) == move
    assert Move.parse(str(move).upper()) == move
    assert move.text == str(move)


@given(st.text(alphabet="abcdefgh01234578x- ", max_size=14))
def test_move_parse_never_fails_untyped(text: str) -> None:
    try:
        move = Move.parse(text)
    except InvalidMoveError:
        return
    assert Move.parse(str(move)) == move


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(PRESETS)), st.integers(0, 2**32 - 1), st.integers(0, 120))
def test_positions_reached_by_random_play_round_trip(name: str, seed: int, plies: int) -> None:
    rng = random.Random(seed)
    pos = Position(name)
    for _ in range(plies):
        legal = pos.legal_moves()
        if not legal:
            break
        pos.push(rng.choice(legal))
    text = pos.to_text()
    again = Position.from_text(name, text)
    assert again.to_text() == text
    assert again.generate_raw() == pos.generate_raw()  # (the text drops the repetition history)
    legal = pos.legal_moves()
    for move in legal:
        assert Move.parse(str(move)) == move
        assert pos.parse_move(str(move)) == move
