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
    #: removals each player owes before play goes on (negative: its own men); white's come first
    owed: tuple[int, int] = (0, 0)
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
        owed = (0, 0)
        for token in extra:
            key, value = token.split("=")
            assert key in ("used", "remove"), token
            if key == "used":
                used_text = value
            else:
                ow, ob = value.split(",")
                owed = (int(ow), int(ob))
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
                    int(quiet), (mills(fw), mills(fb)), (mills(uw), mills(ub)), marks, owed)
        state.seen[state.key()] += 1
        return state

    def key(self) -> tuple:
        """What the repetition rule compares."""
        return self.men, self.hand, self.turn, self.forbidden, self.used, self.marks, self.owed

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

    def removals(self) -> set[str]:
        """The removal-only turns of a player who owes removals: that many opponent men as
        the capture rules allow (fewer only if no more may be taken, none is no turn), or that
        many of its own men, any of them."""
        me = self.turn
        owed = self.owed[me]
        if owed < 0:
            own = sorted(self.men[me])
            return {"".join("x" + p for p in chosen)
                    for chosen in itertools.combinations(own, min(-owed, len(own))) if chosen}
        with_all = replace(self, variant=replace(self.variant, optional_capture=False))
        return {"".join("x" + p for p in caps)
                for caps in with_all.capture_sets(self.men[1 - me], owed) if caps}

    def moves(self) -> set[str]:
        """The text of every move the rules allow, ignoring whether the game is over."""
        if self.owed[self.turn]:
            return self.removals()
        out = self.ordinary_moves()
        if not out and self.variant.blocked == "remove-and-move":
            # blocked: remove an opponent man standing next to one of the player's own men
            me = self.turn
            out = {"x" + p for p in self.men[1 - me]
                   if any(q in self.men[me] for q in self.board.neighbours[p])}
        return out

    def ordinary_moves(self) -> set[str]:
        """Placements and moves with their captures."""
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
            if not formed or v.mill_wins or (s is None and v.placement_mill == "count"):
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
        if not self.empty() and not self.owed[me]:
            return "board-full", 1 - me if v.board_full == "lose" else None
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

    def first_mover(self, hand: tuple[int, int]) -> int:
        """Who moves when owed removals are done: black with second_moves_first once placement
        is over, else white."""
        return 1 if self.variant.second_moves_first and sum(hand) == 0 else 0

    def owing(self, owed: tuple[int, int], resume: int) -> RefState:
        """This state with removals owed (white first); a side that cannot remove is skipped."""
        state = self
        turn = 0 if owed[0] else 1 if owed[1] else resume
        state = replace(state, owed=owed, turn=turn)
        while state.owed[state.turn] and not state.removals():
            left = list(state.owed)
            left[state.turn] = 0
            nxt = 1 - state.turn if left[1 - state.turn] else resume
            state = replace(state, owed=(left[0], left[1]), turn=nxt)
        return state

    def play(self, text: str) -> RefState:
        """The state after move ``text`` (trusted to be legal)."""
        if text.startswith("x"):
            return self.play_removal(text)
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
        v = self.variant
        if v.placement_mill == "count" and sum(self.hand) > 0 and sum(hand) == 0:
            # El Filja: the mills on the board when placement ends decide the removals
            w, b = (sum(1 for line in self.board.lines if line <= men[c]) for c in (0, 1))
            if w == 0 and b == 0:
                owed = (-1, -1)
            elif b == 0:
                owed = (2, 1)
            elif w == 0:
                owed = (1, 2)
            elif w == b:
                owed = (w, b)
            elif w > b:
                owed = (b + 1, b)
            else:
                owed = (w, w + 1)
            after = after.owing(owed, after.first_mover(after.hand))
        elif v.board_full == "remove-both" and not after.empty():
            after = after.owing((1, 1), after.first_mover(after.hand))
        after.seen[after.key()] += 1
        return after

    def play_removal(self, text: str) -> RefState:
        """A removal-only turn: owed (then the other side's owed removals or play resumes) or
        a blocked player's (then the same player moves)."""
        me = self.turn
        gone = set(text.split("x")[1:])
        men = [self.men[0], self.men[1]]
        victim = me if self.owed[me] < 0 else 1 - me
        men[victim] = men[victim] - gone
        after = replace(self, men=(men[0], men[1]), quiet=0, seen=Counter(self.seen))
        if self.owed[me]:
            left = list(self.owed)
            left[me] = 0
            resume = self.first_mover(self.hand)
            after = replace(after, owed=(0, 0)).owing((left[0], left[1]), resume) if any(left) \
                else replace(after, owed=(0, 0), turn=resume)
        after.seen[after.key()] += 1
        return after

    def perft(self, depth: int) -> int:
        """Count the move sequences of ``depth`` turns (no undo: every move makes a new state)."""
        if depth == 0:
            return 1
        if depth == 1:
            return len(self.legal_moves())
        return sum(self.play(m).perft(depth - 1) for m in self.legal_moves())
