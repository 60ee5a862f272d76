"""Board topologies: their shape checked against facts about the boards, not against the code."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.board import FILES, TOPOLOGIES, Topology, get_topology, render


def _xy(point: str) -> tuple[int, int]:
    return FILES.index(point[0]), int(point[1])


# points, lines (mills), edges, and how many points have each number of neighbours
SHAPES = {
    "standard": (24, 16, 32, {2: 12, 3: 8, 4: 4}),
    "diagonals": (24, 20, 40, {3: 16, 4: 8}),
    "six": (16, 8, 20, {2: 8, 3: 8}),
    "three": (9, 8, 16, {3: 8, 8: 1}),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_board_shapes(name: str) -> None:
    t = get_topology(name)
    points, lines, edges, degrees = SHAPES[name]
    assert (t.size, len(t.lines), len(t.edges)) == (points, lines, edges)
    assert Counter(bin(mask).count("1") for mask in t.adjacent) == degrees
    assert len(t.mills) == lines and all(bin(m).count("1") == 3 for m in t.mills)


def test_every_board_is_known() -> None:
    assert set(TOPOLOGIES) == set(SHAPES)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_lines_are_straight_and_evenly_spaced(name: str) -> None:
    for a, b, c in get_topology(name).lines:
        (ax, ay), (bx, by), (cx, cy) = _xy(a), _xy(b), _xy(c)
        assert (bx * 2, by * 2) == (ax + cx, ay + cy), (a, b, c)
        assert len({a, b, c}) == 3


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_adjacency_is_symmetric_and_follows_lines_and_extra_edges(name: str) -> None:
    t = get_topology(name)
    steps = {frozenset(p) for a, b, c in t.lines for p in ((a, b), (b, c))}
    steps |= {frozenset(e) for e in t.extra_edges}
    for i, p in enumerate(t.points):
        neighbours = set(t.mask_points(t.adjacent[i]))
        assert p not in neighbours
        assert neighbours == {q for q in t.points if frozenset((p, q)) in steps}
        for q in neighbours:
            assert p in t.mask_points(t.adjacent[t.index[q]])


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_points_are_sorted_and_indexed(name: str) -> None:
    t = get_topology(name)
    assert list(t.points) == sorted(t.points)
    assert all(t.index[p] == i for i, p in enumerate(t.points))
    assert t.full_mask == (1 << t.size) - 1 and t.mask_points(t.full_mask) == list(t.points)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_mill_tables_agree_with_the_lines(name: str) -> None:
    t = get_topology(name)
    for i, p in enumerate(t.points):
        through = [line for line in t.lines if p in line]
        assert [set(t.mask_points(m)) for _, m in t.mills_at[i]] == [set(line) for line in through]
        rest = {frozenset(t.mask_points(pair)) for _, pair in t.mill_rest[i]}
        assert rest == {frozenset(set(line) - {p}) for line in through}


def test_standard_points_each_lie_on_two_mills() -> None:
    t = get_topology("standard")
    assert all(len(at) == 2 for at in t.mills_at)
    assert len(get_topology("diagonals").mills_at[t.index["a1"]]) == 3


def test_diagonal_board_is_the_standard_board_plus_four_diagonals() -> None:
    standard, diagonals = get_topology("standard"), get_topology("diagonals")
    extra = set(diagonals.lines) - set(standard.lines)
    assert set(standard.lines) < set(diagonals.lines) and len(extra) == 4
    assert {frozenset(line) for line in extra} == {
        frozenset({"a1", "b2", "c3"}), frozenset({"a7", "b6", "c5"}),
        frozenset({"e5", "f6", "g7"}), frozenset({"e3", "f2", "g1"})}


def test_six_mens_spokes_are_moves_but_not_mills() -> None:
    t = get_topology("six")
    assert t.adjacent[t.index["a4"]] >> t.index["b4"] & 1
    assert not any({"a4", "b4"} <= set(line) for line in t.lines)


def test_men_in_mills() -> None:
    t = get_topology("standard")

    def mask(*points: str) -> int:
        return sum(1 << t.index[p] for p in points)

    assert t.men_in_mills(mask("a1", "a4", "a7", "d1", "b2")) == mask("a1", "a4", "a7")
    assert t.men_in_mills(mask("a1", "a4", "a7", "d7", "g7")) == mask("a1", "a4", "a7", "d7", "g7")
    assert t.men_in_mills(mask("a1", "a4", "d1")) == 0


def test_render_draws_every_point_and_the_marks() -> None:
    t = get_topology("standard")
    art = render(t, {"a1": "W", "g7": "B"})
    rows = art.splitlines()
    assert len(rows) == 7 * 2 - 1 + 1
    assert rows[0].startswith("7 ") and rows[0].rstrip().endswith("B")
    assert rows[12].startswith("1 W")
    assert rows[-1].split() == list("abcdefg")
    assert art.count(".") == 22
    three = render(get_topology("three"), {})
    assert "\\" in three and "/" in three and three.count(".") == 9


def test_bad_topologies_are_refused() -> None:
    with pytest.raises(ValueError, match="h1"):
        Topology("bad", (("a1", "d1", "h1"),))
    with pytest.raises(KeyError, match="standard"):
        get_topology("hexagonal")
