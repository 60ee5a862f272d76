"""A deliberately simple second implementation of the rules, to check the engine against.

No bitmasks, no caches, no undo: a state is plain sets of point names, the board is the
topology's list of lines (plus its extra edges), and every rule is written the most obvious
way, straight from docs/RULES.md.  It is slow, so tests use it for shallow perft and for
positions met in a few random games.  It shares nothing with ``arena.rules`` but the text
formats (move and position text) it is compared in.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Optional

from arena.board import get_topology
from arena.variants import Variant

Line = frozenset[str]


@dataclass(frozen=True)
class Board:
    """The points, lines and neighbours of a board, as plain sets of point names."""

    points: frozenset[str]
    lines: tuple[Line, ...]
    neighbours: dict[str, frozenset[str]]

    @classmethod
    def of(cls, variant: Variant) -> Board:
        """Read the board a variant is played on (only its line and edge lists)."""
        topo = get_topology(variant.board)
        pairs = [(a, b) for a, b, c in topo.lines] + [(b, c) for a, b, c in topo.lines]
        pairs += list(topo.extra_edges)
        points = frozenset(p for pair in pairs for p in pair)
        neighbours = {p: frozenset({y for x, y in pairs if x == p} | {x for x, y in pairs if y == p})
                      for p in points}
        return cls(points, tuple(frozenset(line) for line in topo.lines), neighbours)


@dataclass(frozen=True)
class RefState:
    """One position: men, hands, side to move, quiet turns, forbidden and used mills, and what
    was seen."""

    variant: Variant
    board: Board
    men: tuple[frozenset[str], frozenset[str]]
    hand: tuple[int, int]
    turn: int = 0
    quiet: int = 0
    forbidden: tuple[frozenset[Line], frozenset[Line]] = (frozenset(), frozenset())
    #: ``one_time_mill``: the lines each player has formed a mill on so far in the game
    used: tuple[frozenset[Line], frozenset[Line]] = (frozenset(), frozenset())
    #: ``placement_mill=mark``: points of men captured while placing, blocked until placement ends
    marks: frozenset[str] = frozenset()
    seen: Counter = field(default_factory=Counter, compare=False)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def start(cls, variant: Variant) -> RefState:
        """The empty board with every man in hand."""
        state = cls(variant, Board.of(variant), (frozenset(), frozenset()), (variant.men, variant.men))
        state.seen[state.key()] += 1
        return state

    @classmethod
    def from_text(cls, variant: Variant, text: str) -> RefState:
        """Read the documented position text (``<points> <w|b> <hands> <quiet> <forbidden> <ply>``
        and the optional ``used=<white's lines>;<black's lines>``)."""
        board = Board.of(variant)
        cells, turn, hw, hb, quiet, fw, fb, _ply, *extra = text.split()
        used_text = "-;-"
        for token in extra:
            key, value = token.split("=")
            assert key == "used", token
            used_text = value
        uw, ub = used_text.split(";")
        names = sorted(board.points)
        white = frozenset(p for p, c in zip(names, cells) if c == "W")
        black = frozenset(p for p, c in zip(names, cells) if c == "B")
        marks = frozenset(p for p, c in zip(names, cells) if c == "X")

        def mills(text: str) -> frozenset[Line]:
            if text == "-":
                return frozenset()
            out = set()
            for triple in text.split(","):
                line = frozenset(triple[i:i + 2] for i in (0, 2, 4))
                assert line in board.lines, triple
                out.add(line)
            return frozenset(out)

        state = cls(variant, board, (white, black), (int(hw), int(hb)), "wb".index(turn),
                    int(quiet), (mills(fw), mills(fb)), (mills(uw), mills(ub)), marks)
        state.seen[state.key()] += 1
        return state

    def key(self) -> tuple:
        """What the repetition rule compares."""
        return self.men, self.hand, self.turn, self.forbidden, self.used, self.marks

    # -- rules ----------------------------------------------------------------------------
    def empty(self) -> frozenset[str]:
        return self.board.points - self.men[0] - self.men[1] - self.marks

    def removable(self, men: frozenset[str]) -> frozenset[str]:
        """Which of ``men`` (a player's men on the board) the opponent may capture."""
        in_mills = {p for line in self.board.lines if line <= men for p in line}
        free = men - in_mills
        rule = self.variant.mill_capture
        if rule == "always":
            return men
        if rule == "never":
            return free
        return free if free else men

    def capture_sets(self, opp: frozenset[str], entitled: int) -> set[tuple[str, ...]]:
        """Every set of men a move entitled to ``entitled`` captures may take.

        Enumerate every ordered sequence of the opponent's men and keep those where each man
        was removable when it was taken (protection re-evaluated after every capture), and that
        stop early only when allowed (optional capture) or when nothing more is removable.
        """
        found: set[tuple[str, ...]] = set()
        for length in range(entitled + 1):
            for seq in itertools.permutations(sorted(opp), length):
                left = opp
                ok = True
                for p in seq:
                    if p not in self.removable(left):
                        ok = False
                        break
                    left = left - {p}
                if not ok:
                    continue
                if length < entitled and not self.variant.optional_capture and self.removable(left):
                    continue
                found.add(tuple(sorted(seq)))
        return found

    def steps(self) -> list[tuple[Optional[str], str]]:
        """(source or None for a placement, destination) for every move the movement rules allow."""
        v = self.variant
        me = self.turn
        own = self.men[me]
        empty = self.empty()
        out: list[tuple[Optional[str], str]] = []
        if self.hand[me] > 0:
            out += [(None, d) for d in empty]
        if self.hand[me] == 0 or v.move_in_placement:
            flying = self.hand[me] == 0 and v.flying and len(own) <= v.fly_at
            for s in own:
                for d in (empty if flying else self.board.neighbours[s] & empty):
                    out.append((s, d))
        return out

    def moves(self) -> set[str]:
        """The text of every move the rules allow, ignoring whether the game is over."""
        v = self.variant
        me = self.turn
        out: set[str] = set()
        for s, d in self.steps():
            after = (self.men[me] - {s}) | {d}
            formed = [line for line in self.board.lines if d in line and line <= after]
            if any(line in self.forbidden[me] for line in formed):
                continue
            head = d if s is None else f"{s}-{d}"
            if v.one_time_mill:  # only lines this player has never formed before earn captures
                formed = [line for line in formed if line not in self.used[me]]
            if not formed or v.mill_wins:
                out.add(head)
                continue
            entitled = min(len(formed), v.multi_mill_captures)
            from_hand = 0
            if s is None and v.placement_mill == "hand":
                # Dooz: captures come from the opponent's hand while it has men, without choice
                from_hand = min(entitled, self.hand[1 - me])
                if v.optional_capture:
                    out.update(head + "x*" * fewer for fewer in range(from_hand))
            for caps in self.capture_sets(self.men[1 - me], entitled - from_hand):
                out.add(head + "x*" * from_hand + "".join("x" + c for c in caps))
        return out

    def outcome(self, moves: Optional[set[str]] = None) -> Optional[tuple[str, Optional[int]]]:
        """(termination value, winner) or None; the order of the checks is the documented one.

        ``moves`` is :meth:`moves`, when the caller has it already."""
        v = self.variant
        me = self.turn
        if v.mill_wins:
            for side in (1 - me, me):
                if any(line <= self.men[side] for line in self.board.lines):
                    return "mill", side
        for side in (me, 1 - me):
            if len(self.men[side]) + self.hand[side] < v.lose_below:
                return "too-few-men", 1 - side
        if not self.empty():
            return "board-full", None if v.board_full == "draw" else 1 - me
        if not (self.moves() if moves is None else moves):
            return "blocked", None if v.blocked == "draw" else 1 - me
        if (v.three_three_draw and self.quiet >= v.three_three_draw and self.hand == (0, 0)
                and len(self.men[0]) == 3 == len(self.men[1])):
            return "three-vs-three", None
        if v.no_capture_draw and self.quiet >= v.no_capture_draw:
            return "no-capture", None
        if v.repetition and self.seen[self.key()] >= v.repetition:
            return "repetition", None
        return None

    def legal_moves(self) -> set[str]:
        """The moves allowed here, none once the game is over."""
        moves = self.moves()
        return set() if self.outcome(moves) is not None else moves

    def play(self, text: str) -> RefState:
        """The state after move ``text`` (trusted to be legal)."""
        head, *caps = text.split("x")
        src, dst = head.split("-") if "-" in head else (None, head)
        me = self.turn
        own = self.men[me]
        hand = list(self.hand)
        forbidden = list(self.forbidden)
        if src is None:
            hand[me] -= 1
            forbidden[me] = frozenset()
        else:
            if self.variant.no_immediate_reform:
                forbidden[me] = frozenset(line for line in self.board.lines if src in line and line <= own)
            own = own - {src}
        men = [self.men[0], self.men[1]]
        men[me] = own | {dst}
        men[1 - me] = men[1 - me] - set(caps)
        hand[1 - me] -= caps.count("*")
        marks = self.marks
        if src is None and self.variant.placement_mill == "mark":
            marks = marks | set(caps)  # the men are gone, their points stay blocked
        if sum(hand) == 0:
            marks = frozenset()
        used = list(self.used)
        if self.variant.one_time_mill:
            used[me] = used[me] | {line for line in self.board.lines if dst in line and line <= men[me]}
        turn = 1 - me
        if self.variant.second_moves_first and sum(self.hand) > 0 and sum(hand) == 0:
            turn = 1  # placement ended: black moves first
        if caps or (sum(self.hand) > 0 and sum(hand) == 0):
            quiet = 0
        else:
            quiet = self.quiet + 1
        after = replace(self, men=(men[0], men[1]), hand=(hand[0], hand[1]), turn=turn, quiet=quiet,
                        forbidden=(forbidden[0], forbidden[1]), used=(used[0], used[1]), marks=marks,
                        seen=Counter(self.seen))
        after.seen[after.key()] += 1
        return after

    def perft(self, depth: int) -> int:
        """Count the move sequences of ``depth`` turns (no undo: every move makes a new state)."""
        if depth == 0:
            return 1
        if depth == 1:
            return len(self.legal_moves())
        return sum(self.play(m).perft(depth - 1) for m in self.legal_moves())
