"""Why a move is illegal: :func:`arena.rules.explain_illegal` names the rule for every reason
(a hand-built position each), never calls a legal move illegal, never answers with nothing,
and gives only legal examples (a property test over random positions of every preset).
Pure: no processes (the referee's verdict with a real bot is in test_referee.py)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.errors import IllegalMoveError, InvalidMoveError
from arena.rules import Move, Position, explain_illegal
from arena.variants import PRESETS, Variant, get_variant


def board(variant: Variant | str, white: str = "", black: str = "", turn: str = "w",
          hands: tuple[int, int] = (0, 0), forbidden: tuple[str, str] = ("-", "-")) -> Position:
    """A position with ``white``/``black`` men on the points named (space-separated)."""
    v = get_variant(variant) if isinstance(variant, str) else variant
    w, b = set(white.split()), set(black.split())
    points = "".join("W" if p in w else "B" if p in b else "." for p in v.topology.points)
    return Position.from_text(v, f"{points} {turn} {hands[0]} {hands[1]} 0 "
                                 f"{forbidden[0]} {forbidden[1]} 20")


def played(variant: str, *moves: str) -> Position:
    pos = Position(variant)
    for m in moves:
        pos.push_text(m)
    return pos


NMM = "nine-mens-morris"
#: white to place d1, closing a1 d1 g1; black's d5 d6 d7 is a mill, b4 is free
MILL_TO_CLOSE: dict[str, Any] = dict(white="a1 g1 c3", black="d5 d6 d7 b4", hands=(5, 5))
#: white to place a1, closing a1 a4 a7 and a1 d1 g1 at once; black's men are all free
DOUBLE: dict[str, Any] = dict(white="a4 a7 d1 g1", black="b2 d2 f4 g4", hands=(3, 3))

CASES = [
    # (reason, position, text, the sentence)
    ("occupied", played(NMM, "d6"), "d6", "d6 is occupied"),
    ("occupied destination", board(NMM, "a1 a4 b4 c3 e5", "a7 d7 g7 g1"), "a4-a7",
     "a7 is occupied"),
    ("missing capture", board(NMM, **MILL_TO_CLOSE), "d1",
     "d1 closes a mill: add a capture (e.g. d1xb4)"),
    ("capture in a mill", board(NMM, **MILL_TO_CLOSE), "d1xd6",
     "d6 stands in a mill while other black men do not (e.g. d1xb4)"),
    ("capture in a mill, never", board(dataclasses.replace(get_variant(NMM), mill_capture="never"),
                                       **MILL_TO_CLOSE), "d1xd6",
     "d6 stands in a mill, and men in mills are never captured here (e.g. d1xb4)"),
    ("own man", board(NMM, **MILL_TO_CLOSE), "d1xa1",
     "a1 is white's own man: capture a black man (e.g. d1xb4)"),
    ("empty point", board(NMM, **MILL_TO_CLOSE), "d1xe4",
     "e4 is empty: capture a black man (e.g. d1xb4)"),
    ("two captures for one mill", board(NMM, **MILL_TO_CLOSE), "d1xb4xd6",
     "d1 closes a mill: it captures one man, not 2 (e.g. d1xb4)"),
    ("capture without a mill", Position(NMM), "d6xa1", "d6 closes no mill, so it captures nothing (e.g. d6)"),
    ("double mill, one capture allowed", board(NMM, **DOUBLE), "a1xb2xd2",
     "a1 closes 2 mills: it captures one man, not 2 (e.g. a1xb2)"),
    ("double mill, two captures owed", board(dataclasses.replace(get_variant(NMM), multi_mill_captures=2),
                                             **DOUBLE), "a1xb2",
     "a1 closes 2 mills: capture 2 men (e.g. a1xb2xd2)"),
    ("not adjacent, too many men to fly", board(NMM, "a1 a4 b4 c3 e5", "a7 d7 g7 g1"), "a1-d3",
     "a1-d3 is not adjacent (flying needs 3 men; white has 5)"),
    ("not adjacent, no flying", board("nine-mens-morris-no-flying", "a1 a4 b4", "a7 d7 g7 g1"),
     "a1-d3", "a1-d3 is not adjacent (this variant has no flying)"),
    ("moving while men remain to place", Position(NMM), "a1-a4",
     "white still has 9 men to place: place a man before moving one (e.g. a1)"),
    ("placing with none in hand", board(NMM, "a1 a4 b4 c3 e5", "a7 d7 g7 g1"), "d3",
     "white has no men left to place: move a man (e.g. a1-d1)"),
    ("moving from an empty point", board(NMM, "a1 a4 b4 c3 e5", "a7 d7 g7 g1"), "d1-d2",
     "d1 is empty: there is no man of white's to move"),
    ("moving the opponent's man", board(NMM, "a1 a4 b4 c3 e5", "a7 d7 g7 g1"), "g1-d1",
     "g1 holds a black man: white moves only its own men"),
    ("lasker: no flying while men remain", board("lasker-morris", "a1 a4 b4", "a7 d7", hands=(4, 5)),
     "a1-d3", "a1-d3 is not adjacent (no flying while men remain to place)"),
    ("re-formed mill", board("nine-mens-morris-options", "a4 a7 d1 c3 e5", "b2 d7 g7 g1",
                             forbidden=("a1a4a7", "-")), "d1-a1",
     "d1-a1 re-forms the mill a1 a4 a7 that white broke on its previous move, which this "
     "variant forbids"),
    ("mill wins, no capture", board("three-mens-morris", "a1 d1", "a7 d7", hands=(1, 1)), "g1xa7",
     "g1 closes a mill, which wins the game here: no capture (e.g. g1)"),
    ("game over", board(NMM, "a1 a4 b4", "a7 d7"), "a1-d1", "the game is over (too-few-men, 1-0)"),
    ("unknown point", Position(NMM), "z9", "not a move: 'z9' (z9 is not a point of the standard board)"),
    ("point of another board", Position("six-mens-morris"), "d3",
     "not a move: 'd3' (d3 is not a point of the six board)"),
    ("unknown capture point", Position(NMM), "d6xh8",
     "not a move: 'd6xh8' (h8 is not a point of the standard board)"),
    ("not a move at all", Position(NMM), "hello",
     "not a move: 'hello' (expected e.g. d6, a1-a4, d6xg7)"),
    ("same source and destination", board(NMM, "a1 a4 b4 c3 e5", "a7 d7 g7 g1"), "a1-a1",
     "not a move: 'a1-a1' (source and destination are the same)"),
]


@pytest.mark.parametrize("reason,position,text,sentence", CASES, ids=[c[0] for c in CASES])
def test_each_reason_has_its_sentence(reason: str, position: Position, text: str,
                                      sentence: str) -> None:
    assert explain_illegal(position, text) == sentence
    error = IllegalMoveError if not sentence.startswith("not a move") else InvalidMoveError
    with pytest.raises(error) as info:
        position.parse_move(text)
    if error is IllegalMoveError:  # parse_move's message carries the reason and the position
        assert f": {sentence} (position {position.to_text()})" in str(info.value)


@pytest.mark.parametrize("variant,white,black,hands,text", [
    (NMM, "a1 g1 c3", "d5 d6 d7 b4", (5, 5), "d1xb4"),
    ("lasker-morris", "a1 a4 b4", "a7 d7", (4, 5), "b4-c4"),  # Lasker: moving while placing
    ("nine-mens-morris-options", "a1 g1 c3", "d5 d6 d7 b4", (5, 5), "d1"),  # capture optional
])
def test_a_legal_move_has_no_explanation(variant: str, white: str, black: str,
                                         hands: tuple[int, int], text: str) -> None:
    pos = board(variant, white, black, hands=hands)
    assert pos.is_legal(Move.parse(text))
    assert explain_illegal(pos, text) == ""


# -- every position, every text --------------------------------------------------------

_EXAMPLE_RE = re.compile(r"e\.g\. ([a-g][1-7][^)\s]*)\)")


@st.composite
def positions_and_texts(draw: st.DrawFn) -> tuple[Position, str]:
    """A position reached by random legal turns in a random preset, and a random move text
    made of that board's points (sometimes with a point the board lacks)."""
    pos = Position(PRESETS[draw(st.sampled_from(sorted(PRESETS)))])
    for _ in range(draw(st.integers(0, 60))):
        legal = pos.legal_moves()
        if not legal:
            break
        pos.push(draw(st.sampled_from(legal)))
    points = st.sampled_from(list(pos.topology.points) + ["h8", "a2"])
    src = draw(st.one_of(st.none(), points))
    dst = draw(points)
    caps = draw(st.lists(points, max_size=3))
    text = (dst if src is None else f"{src}-{dst}") + "".join(f"x{c}" for c in caps)
    if draw(st.booleans()) and pos.legal_moves():  # a near miss of a legal move, often
        near = draw(st.sampled_from(pos.legal_moves()))
        text = draw(st.sampled_from([str(near), f"{near}x{draw(points)}",
                                     str(Move(near.src, near.dst)), str(near).replace("-", "")]))
    return pos, text


@settings(max_examples=300, deadline=None)
@given(positions_and_texts())
def test_explanations_are_never_empty_and_never_wrong_about_legality(
        case: tuple[Position, str]) -> None:
    pos, text = case
    try:
        legal = pos.is_legal(Move.parse(text))
    except InvalidMoveError:
        legal = False
    sentence = explain_illegal(pos, text)
    if legal:
        assert sentence == ""
        return
    assert sentence and "is not legal here" not in sentence, (pos, text, sentence)
    for example in _EXAMPLE_RE.findall(sentence):  # every example given is a legal move
        assert pos.is_legal(Move.parse(example)), (pos, text, sentence)
