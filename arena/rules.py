"""The rules engine: moves, positions, legal move generation, game outcomes, and why a move
is illegal (:func:`explain_illegal`).

Pure: no I/O, no clocks, no processes, no printing.  The API follows python-chess:

>>> from arena.rules import Position
>>> pos = Position("nine-mens-morris")
>>> len(pos.legal_moves())
24
>>> move = pos.parse_move("d6")      # raises InvalidMoveError / IllegalMoveError
>>> pos.push(move)
>>> pos.pop() == move
True

One turn is one atomic move: a placement ``d6`` or a slide/fly ``a1-a4``, followed by the
men it captures, ``d6xg7`` or ``a1-a4xg7xd1`` (a double capture).  Captures are a set: they are
always printed in point order and parsed in any order.  A few rule families add turns that only
remove men, written without a head: ``xg7``, ``xa1xd1`` (``board_full=remove-both``,
``placement_mill=count``, ``blocked=remove-and-move``).

Men, empty points and mills are bitmasks over the topology's points (bit ``i`` is
``topology.points[i]``), with adjacency and mills precomputed per topology.
"""

# This module is longer than the house's ~600 lines, on purpose: explain_illegal (at the
# end) reads the same private state as move generation (mill masks, capture rules, mills
# that may not be re-formed) and parse_move's error uses it, so it cannot move to a module
# above this one; the engine stays one module, as python-chess keeps its board in one.

from __future__ import annotations

import enum
import itertools
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from arena.board import Topology, render
from arena.errors import IllegalMoveError, InvalidMoveError, MoveError, PositionError
from arena.variants import Variant, get_variant

WHITE = 0
BLACK = 1
COLOR_NAMES = ("white", "black")

#: a move inside the engine: (source index or -1 for a placement, destination index, capture
#: mask); men taken from the opponent's hand (``placement_mill=hand``) are counted in the mask's
#: bits from :data:`HAND_SHIFT` up; a turn that only removes men is ``(-1, -1, mask)``
RawMove = tuple[int, int, int]
HAND_SHIFT = 32
#: the point name of a capture from the opponent's hand in move text (``d6x*``)
FROM_HAND = "*"
_BOARD_BITS = (1 << HAND_SHIFT) - 1


def capture_count(raw: RawMove) -> int:
    """How many men a :data:`RawMove` takes: men on the board plus men from the hand."""
    caps = raw[2]
    return (caps & _BOARD_BITS).bit_count() + (caps >> HAND_SHIFT)


class Termination(enum.Enum):
    """Why a game ended.  The first group is decided by the rules, the second by the referee."""

    TOO_FEW_MEN = "too-few-men"
    BLOCKED = "blocked"
    MILL = "mill"
    BOARD_FULL = "board-full"
    THREE_VS_THREE = "three-vs-three"
    NO_CAPTURE = "no-capture"
    REPETITION = "repetition"
    # referee endings: set by the referee, never by the rules engine
    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal-move"
    PROTOCOL_ERROR = "protocol-error"
    CRASH = "crash"
    START_FAILURE = "start-failure"
    ERROR = "error"
    # the referee's early endings (arena.adjudication): not forfeits
    ADJUDICATION = "adjudication"
    TABLEBASE = "tablebase"

    @property
    def is_forfeit(self) -> bool:
        """True for the referee's endings (a bot failed), False for endings by the rules."""
        return self in _FORFEITS


_FORFEITS = frozenset({Termination.TIMEOUT, Termination.ILLEGAL_MOVE, Termination.PROTOCOL_ERROR,
                       Termination.CRASH, Termination.START_FAILURE, Termination.ERROR})


@dataclass(frozen=True)
class Outcome:
    """How a game ended: the termination and the winner (``WHITE``, ``BLACK`` or ``None``)."""

    termination: Termination
    winner: Optional[int]

    @property
    def result(self) -> str:
        """``1-0``, ``0-1`` or ``1/2-1/2``."""
        return {WHITE: "1-0", BLACK: "0-1", None: "1/2-1/2"}[self.winner]


_MOVE_RE = re.compile(r"^(?:([a-g][1-7])(?:-([a-g][1-7]))?)?((?:x(?:[a-g][1-7]|\*))*)$")


@dataclass(frozen=True, slots=True)
class Move:
    """One turn: an optional source point, a destination, and the captured points (sorted;
    ``*`` for each man taken from the opponent's hand, which sorts first).  A turn that only
    removes men (``xg7``) has neither source nor destination."""

    src: Optional[str]
    dst: Optional[str]
    captures: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # captures are a set: keep them sorted so equal moves compare equal and print alike
        caps = self.captures
        if len(caps) > 1 or not isinstance(caps, tuple):
            object.__setattr__(self, "captures", tuple(sorted(caps)))

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse move text (``d6``, ``a1-a4``, ``d6xg7xa1``, ``d6x*``, ``xg7``); raises
        :class:`InvalidMoveError`."""
        if cls is Move:  # moves are immutable values: one per text (the referee parses every move)
            known = _PARSED.get(text)
            if known is None:
                known = cls._parse(text)
                if len(_PARSED) < _MOVE_CACHE_SIZE:
                    _PARSED[text] = known
            return known
        return cls._parse(text)

    @classmethod
    def _parse(cls, text: str) -> Move:
        m = _MOVE_RE.match(text.strip().lower())
        if not m:
            raise InvalidMoveError(f"not a move: {text!r} (expected e.g. d6, a1-a4, d6xg7)")
        first: Optional[str] = m.group(1)
        second: Optional[str] = m.group(2)
        caps: str = m.group(3)
        src, dst = (None, first) if second is None else (first, second)
        captures = tuple(sorted(caps.replace("x*", "").split("x")[1:]
                                + [FROM_HAND] * caps.count("*")))
        points = [c for c in captures if c != FROM_HAND]
        if len(set(points)) != len(points):
            raise InvalidMoveError(f"not a move: {text!r} (a point is captured twice)")
        if dst is None and (not points or len(points) != len(captures)):
            raise InvalidMoveError(f"not a move: {text!r} (expected e.g. d6, a1-a4, d6xg7, or "
                                   "xg7 for a turn that only removes men)")
        if src == dst and dst is not None:
            raise InvalidMoveError(f"not a move: {text!r} (source and destination are the same)")
        return cls(src, dst, captures)

    def __str__(self) -> str:
        head = ("" if self.dst is None else self.dst if self.src is None
                else f"{self.src}-{self.dst}")
        return head + "".join(f"x{c}" for c in self.captures)

    text = property(__str__, doc="The move as text; ``Move.parse(m.text) == m``.")


#: :meth:`Move.parse`'s moves by the text parsed (only texts that are moves)
_PARSED: dict[str, Move] = {}
#: Moves are immutable values, so one per raw move and board is shared by every position
_MOVE_CACHE: dict[str, dict[RawMove, Move]] = {}
_MOVE_CACHE_SIZE = 1 << 16


#: the board text of 8 points (``W``, ``B`` or ``.``, lowest point first) by their white
#: and black men as ``white | black << 8``; filled as met (at most 6561 entries)
_BOARD_CHUNKS: dict[int, str] = {}


def _board_text(white: int, black: int, size: int) -> str:
    """One character per point (``W``, ``B`` or ``.``) in point order, 8 points at a time."""
    chunks = []
    for shift in range(0, size, 8):
        key = (white >> shift & 255) | (black >> shift & 255) << 8
        text = _BOARD_CHUNKS.get(key)
        if text is None:
            text = _BOARD_CHUNKS[key] = "".join(
                "W" if key >> i & 1 else "B" if key >> (i + 8) & 1 else "." for i in range(8))
        chunks.append(text)
    return "".join(chunks)[:size]


def bits(mask: int) -> Iterator[int]:
    """The indices of the set bits of ``mask``, lowest first (points of a bitmask)."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class Position:
    """A game in progress: men on the board, men in hand, side to move, and the move stack.

    ``push`` trusts its caller (use :meth:`parse_move` or :meth:`legal_moves` first);
    ``pop`` undoes the last push.  Positions created from text have no history before it.
    """

    def __init__(self, variant: Variant | str = "nine-mens-morris") -> None:
        self.variant: Variant = get_variant(variant) if isinstance(variant, str) else variant
        v = self.variant
        self.topology: Topology = v.topology
        t = self.topology
        self._full = t.full_mask
        self._adj = t.adjacent
        self._mills = t.mills
        self._mills_at = t.mills_at
        self._mill_rest = t.mill_rest
        self._names = t.points
        self._index = t.index
        # state
        self.men = [0, 0]
        self.hand = [v.men, v.men]
        self.turn = WHITE
        self.quiet = 0  # turns since the last capture or the end of placement
        self.forbidden = [0, 0]  # per player: mill numbers that may not be re-formed this turn
        self.used = [0, 0]  # per player: mill numbers formed so far (``one_time_mill`` only)
        self.marks = 0  # points blocked until placement ends (``placement_mill=mark``)
        #: per player: men to remove in a removal-only turn before play goes on (negative: the
        #: player's own men); ``board_full=remove-both`` and ``placement_mill=count``
        self.pending = [0, 0]
        self.ply = 0
        # per push: (state before, move, repetition key before)
        self._stack: list[tuple[tuple[int, ...], RawMove, tuple[int, ...]]] = []
        self._cur_key = self._key()  # the repetition key of the current state, kept up to date
        self._reps: dict[tuple[int, ...], int] = {self._cur_key: 1}
        self._capture_cache: dict[tuple[int, int], list[int]] = {}
        #: the last :meth:`generate_raw` answer and the key of the state it was for (shared by
        #: copies: a bot kit's copy of the position it just generated for asks again)
        self._last_gen: tuple[tuple[int, ...], tuple[RawMove, ...]] = ((), ())
        #: the last :meth:`_ended_by_rule` answer and what it was found for
        self._last_end: tuple[tuple[object, ...], Optional[Outcome]] = ((), None)
        self._moves = _MOVE_CACHE.setdefault(t.name, {})

    # -- state helpers -------------------------------------------------------------------
    def _state(self) -> tuple[int, ...]:
        return (self.men[0], self.men[1], self.hand[0], self.hand[1], self.turn, self.quiet,
                self.forbidden[0], self.forbidden[1], self.ply, self.used[0], self.used[1],
                self.marks, self.pending[0], self.pending[1])

    def _set_state(self, s: tuple[int, ...]) -> None:
        self.men[0], self.men[1], self.hand[0], self.hand[1] = s[0], s[1], s[2], s[3]
        self.turn, self.quiet = s[4], s[5]
        self.forbidden[0], self.forbidden[1], self.ply = s[6], s[7], s[8]
        self.used[0], self.used[1], self.marks = s[9], s[10], s[11]
        self.pending[0], self.pending[1] = s[12], s[13]

    def _key(self) -> tuple[int, ...]:
        """What makes two positions the same for the repetition rule."""
        return (self.men[0], self.men[1], self.hand[0], self.hand[1], self.turn,
                self.forbidden[0], self.forbidden[1], self.used[0], self.used[1], self.marks,
                self.pending[0], self.pending[1])

    def copy(self) -> Position:
        """An independent copy, with the move stack."""
        other = Position.__new__(Position)
        other.__dict__.update(self.__dict__)
        other.men, other.hand, other.forbidden = list(self.men), list(self.hand), list(self.forbidden)
        other.used, other.pending = list(self.used), list(self.pending)
        other._stack = list(self._stack)
        other._reps = dict(self._reps)
        other._capture_cache = {}
        return other

    # -- queries -------------------------------------------------------------------------
    def on_board(self, color: int) -> int:
        """How many men ``color`` has on the board."""
        return self.men[color].bit_count()

    def in_hand(self, color: int) -> int:
        """How many men ``color`` still has to place."""
        return self.hand[color]

    def phase(self, color: int) -> str:
        """``placing``, ``moving`` or ``flying`` for ``color``."""
        if self.hand[color]:
            return "placing"
        v = self.variant
        if v.flying and self.men[color].bit_count() <= v.fly_at:
            return "flying"
        return "moving"

    def occupant(self, point: str) -> Optional[int]:
        """``WHITE``, ``BLACK`` or ``None`` for an empty point."""
        bit = 1 << self._index[point]
        return WHITE if self.men[0] & bit else BLACK if self.men[1] & bit else None

    @property
    def move_stack(self) -> list[Move]:
        """The moves pushed since the start (or since the position was parsed)."""
        return [self._to_move(entry[1]) for entry in self._stack]

    def peek(self) -> Move:
        """The last move pushed; raises ``IndexError`` if there is none."""
        return self._to_move(self._stack[-1][1])

    # -- capture rules -------------------------------------------------------------------
    def _removable(self, opp: int) -> int:
        rule = self.variant.mill_capture
        if rule == "always":
            return opp
        free = opp & ~self.topology.men_in_mills(opp)
        if rule == "never":
            return free
        return free or opp

    def _capture_sets(self, opp: int, k: int, optional: Optional[bool] = None) -> list[int]:
        """Every set (mask) of men a move entitled to ``k`` captures may take (``optional``:
        may it take fewer; by default the variant's ``optional_capture``)."""
        if optional is None:
            optional = self.variant.optional_capture
        cache_key = (opp, k if optional == self.variant.optional_capture else -k)
        cached = self._capture_cache.get(cache_key)
        if cached is not None:
            return cached
        found: set[int] = set()

        def walk(left: int, k: int, taken: int) -> None:
            removable = self._removable(left) if k else 0
            if optional or not removable:
                found.add(taken)
            for i in bits(removable):
                b = 1 << i
                walk(left & ~b, k - 1, taken | b)

        walk(opp, k, 0)
        result = sorted(found)
        if len(self._capture_cache) > 4096:
            self._capture_cache.clear()
        self._capture_cache[cache_key] = result
        return result

    # -- move generation -----------------------------------------------------------------
    def _pairs(self) -> Iterator[tuple[int, int]]:
        """(source or -1, destination) for every move the movement rules allow."""
        t = self.turn
        own = self.men[t]
        empty = self._full & ~(own | self.men[1 - t] | self.marks)
        v = self.variant
        if self.hand[t]:
            for d in bits(empty):
                yield -1, d
            if not v.move_in_placement:
                return
        if self.hand[t] == 0 and v.flying and own.bit_count() <= v.fly_at:
            for s in bits(own):
                for d in bits(empty):
                    yield s, d
        else:
            adj = self._adj
            for s in bits(own):
                for d in bits(adj[s] & empty):
                    yield s, d

    def _formed(self, own_after: int, dst: int) -> tuple[int, int]:
        """(number of mills, mask of mill numbers) that ``own_after`` completes through ``dst``."""
        count = nums = 0
        for n, m in self._mills_at[dst]:
            if own_after & m == m:
                count += 1
                nums |= 1 << n
        return count, nums

    def generate_raw(self) -> list[RawMove]:
        """Every move the rules allow as :data:`RawMove` tuples, ignoring game end (for searches)."""
        key = self._cur_key
        last = self._last_gen
        if last[0] == key:  # the state is the whole input of move generation
            return list(last[1])
        pending = self.pending[self.turn]
        if pending:
            out = self._removal_turns(pending)
        else:
            out = self._generate(-2, -1)
            if not out and self.variant.blocked == "remove-and-move":
                out = self._blocked_removals()
        self._last_gen = (key, tuple(out))
        return out

    def _removal_turns(self, k: int) -> list[RawMove]:
        """The removal-only turns of a player owing ``k`` removals: ``k`` of the opponent's men
        by the capture rules (fewer only when no more may be taken), or ``-k`` of its own men,
        any of them."""
        t = self.turn
        if k < 0:
            own = list(bits(self.men[t]))
            return [(-1, -1, sum(1 << i for i in chosen))
                    for chosen in itertools.combinations(own, min(-k, len(own))) if chosen]
        return [(-1, -1, caps) for caps in self._capture_sets(self.men[1 - t], k, optional=False)
                if caps]

    def _blocked_removals(self) -> list[RawMove]:
        """``blocked=remove-and-move``: a player with no move removes one opponent man next to
        one of its own men (men in mills too), then moves."""
        t = self.turn
        near = 0
        for s in bits(self.men[t]):
            near |= self._adj[s]
        return [(-1, -1, 1 << i) for i in bits(self.men[1 - t] & near)]

    def _generate(self, src: int, dst_mask: int) -> list[RawMove]:
        """:meth:`generate_raw` restricted to the moves from ``src`` (-1: placing, -2: any
        source) to a point of ``dst_mask`` (-1: any): the same code, so a legality check
        (one source, one destination) costs a fraction of generating every move."""
        t = self.turn
        own = self.men[t]
        opp = self.men[1 - t]
        v = self.variant
        forbidden = self.forbidden[t]
        used = self.used[t] if v.one_time_mill else 0
        opp_hand = self.hand[1 - t]
        empty = self._full & ~(own | opp | self.marks)
        hand = self.hand[t]
        # (source or -1, the mover's men other than the moving one, destinations)
        groups: list[tuple[int, int, int]] = ([(-1, own, empty & dst_mask)]
                                              if hand and src < 0 else [])
        if (not hand or v.move_in_placement) and src != -1:
            flying = not hand and v.flying and own.bit_count() <= v.fly_at
            adj = self._adj
            rest = own if src == -2 else own & (1 << src)
            while rest:
                low = rest & -rest
                rest ^= low
                s = low.bit_length() - 1
                dests = (empty if flying else adj[s] & empty) & dst_mask
                if dests:
                    groups.append((s, own ^ low, dests))
        # points where a man arriving completes a mill: the last empty point of a mill whose
        # other two points the mover holds (moving a man away only removes candidates)
        closers = 0
        for m in self._mills:
            gap = m & ~own
            if gap & empty == gap and gap & (gap - 1) == 0:
                closers |= gap
        mill_rest = self._mill_rest
        mill_wins = v.mill_wins
        most = v.multi_mill_captures
        out: list[RawMove] = []
        append = out.append
        for s, others, dests in groups:
            plain = dests & ~closers
            while plain:
                low = plain & -plain
                plain ^= low
                append((s, low.bit_length() - 1, 0))
            dests &= closers
            while dests:
                low = dests & -dests
                dests ^= low
                d = low.bit_length() - 1
                count = nums = 0
                for bit, pair in mill_rest[d]:
                    if others & pair == pair:
                        count += 1
                        nums |= bit
                if nums & forbidden:
                    continue
                if nums & used:  # one_time_mill: only lines never formed before capture
                    count = (nums & ~used).bit_count()
                if not count or mill_wins or (s < 0 and v.placement_mill == "count"):
                    append((s, d, 0))
                elif s < 0 and opp_hand and v.placement_mill == "hand":
                    out += self._hand_captures(d, min(count, most), opp, opp_hand)
                else:
                    for caps in self._capture_sets(opp, min(count, most)):
                        append((s, d, caps))
        return out

    def _hand_captures(self, d: int, k: int, opp: int, opp_hand: int) -> list[RawMove]:
        """``placement_mill=hand``: a placement on ``d`` entitled to ``k`` captures takes them
        from the opponent's hand while it holds men (no choice), the rest from the board;
        with ``optional_capture`` any smaller number."""
        taken = min(k, opp_hand)
        out = [(-1, d, taken << HAND_SHIFT | caps) for caps in self._capture_sets(opp, k - taken)]
        if self.variant.optional_capture:
            out += [(-1, d, fewer << HAND_SHIFT) for fewer in range(taken)]
        return out

    def _has_move(self) -> bool:
        if self.pending[self.turn] or self.variant.blocked == "remove-and-move":
            return bool(self.generate_raw())
        forbidden = self.forbidden[self.turn]
        if not forbidden:
            return next(self._pairs(), None) is not None
        own = self.men[self.turn]
        for s, d in self._pairs():
            after = (own & ~(1 << s) if s >= 0 else own) | (1 << d)
            if not self._formed(after, d)[1] & forbidden:
                return True
        return False

    def legal_moves(self) -> list[Move]:
        """Every legal move, or none once the game is over."""
        if self._ended_by_rule() is not None:
            return []
        return [self._to_move(raw) for raw in self.generate_raw()]

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` is legal here."""
        try:
            raw = self._to_raw(move)
        except MoveError:
            return False
        return self._is_legal_raw(raw)

    def _is_legal_raw(self, raw: RawMove) -> bool:
        if self._ended_by_rule() is not None:
            return False
        last = self._last_gen
        if last[0] == self._cur_key:  # generated already (the referee does, while a bot thinks)
            return raw in last[1]
        if raw[1] < 0 or self.pending[self.turn]:
            return raw in self.generate_raw()
        return raw in self._generate(raw[0], 1 << raw[1])

    def parse_move(self, text: str) -> Move:
        """Parse ``text`` as a move legal here.

        :raises InvalidMoveError: the text is not a move, or names a point not on this board.
        :raises IllegalMoveError: the move is not legal in this position.
        """
        return self._parse_legal(text)[0]

    def _parse_legal(self, text: str) -> tuple[Move, RawMove]:
        move = Move.parse(text)
        raw = self._to_raw(move)  # raises InvalidMoveError for a point this board does not have
        if not self._is_legal_raw(raw):
            raise IllegalMoveError(f"illegal move {move}: {explain_illegal(self, text)} "
                                   f"(position {self.to_text()})")
        return move, raw

    # -- making moves --------------------------------------------------------------------
    def push(self, move: Move) -> None:
        """Play ``move``, which must be legal (this is not checked)."""
        self.push_raw(self._to_raw(move))

    def push_text(self, text: str) -> Move:
        """Parse ``text`` as a legal move and play it; returns the move.

        :raises InvalidMoveError: the text is not a move, or names a point not on this board.
        :raises IllegalMoveError: the move is not legal in this position (nothing is played).
        """
        move, raw = self._parse_legal(text)
        self.push_raw(raw)
        return move

    def push_raw(self, raw: RawMove) -> None:
        """Play a :data:`RawMove` from :meth:`generate_raw` (for searches)."""
        s, d, caps = raw
        self._stack.append((self._state(), raw, self._cur_key))
        t = self.turn
        if d < 0:
            self._push_removal(t, caps)
            return
        v = self.variant
        own = self.men[t]
        hands_before = self.hand[0] + self.hand[1]
        if s >= 0:
            if v.no_immediate_reform:
                broken = 0
                for n, m in self._mills_at[s]:
                    if own & m == m:
                        broken |= 1 << n
                self.forbidden[t] = broken
            own &= ~(1 << s)
        else:
            self.hand[t] -= 1
            if v.no_immediate_reform:
                self.forbidden[t] = 0
        self.men[t] = own = own | (1 << d)
        if v.one_time_mill:
            for n, m in self._mills_at[d]:
                if own & m == m:
                    self.used[t] |= 1 << n
        if caps:
            self.men[1 - t] &= ~caps
            if s < 0 and v.placement_mill == "mark":
                self.marks |= caps
            if caps >> HAND_SHIFT:
                self.hand[1 - t] -= caps >> HAND_SHIFT
        placed_last = hands_before and not self.hand[0] + self.hand[1]
        if caps or placed_last:
            self.quiet = 0
        else:
            self.quiet += 1
        self.turn = 1 - t
        if placed_last:
            self.marks = 0  # placement is over: marked points are free again
            if v.second_moves_first:
                self.turn = BLACK  # black moves first
        if placed_last and v.placement_mill == "count":
            self._owe(*self._removals_by_mill_count())
        elif (v.board_full == "remove-both"
              and not self._full & ~(self.men[0] | self.men[1] | self.marks)):
            self._owe(1, 1)  # the board is full: white, then black, removes a man
        self.ply += 1
        key = self._cur_key = self._key()
        self._reps[key] = self._reps.get(key, 0) + 1

    def _removals_by_mill_count(self) -> tuple[int, int]:
        """``placement_mill=count`` (El Filja, Sanmill's removalBasedOnMillCounts): the men
        white and black remove when placement ends, from the mills each has on the board then
        (negative: one of its own men)."""
        w, b = (sum(1 for m in self._mills if self.men[c] & m == m) for c in (WHITE, BLACK))
        if not w and not b:
            return -1, -1
        if not b:
            return 2, 1
        if not w:
            return 1, 2
        if w == b:
            return w, b
        return (b + 1, b) if w > b else (w, w + 1)

    def _owe(self, white: int, black: int) -> None:
        """White, then black, must first play a removal-only turn (if they owe one)."""
        self.pending = [white, black]
        self.turn = WHITE if white else BLACK if black else self._resume()
        self._settle()

    def _resume(self) -> int:
        """Who moves once the owed removals are made: the side that moves first after placement."""
        over = not self.hand[0] + self.hand[1]
        return BLACK if self.variant.second_moves_first and over else WHITE

    def _settle(self) -> None:
        """Skip owed removals that cannot be made (nothing the capture rules allow to take)."""
        for _ in range(2):
            t = self.turn
            if not self.pending[t] or self._removal_turns(self.pending[t]):
                return
            self._removed(t)

    def _removed(self, t: int) -> None:
        """``t`` owes no removal any more: the other side's owed removal is next, or play
        resumes."""
        self.pending[t] = 0
        self.turn = 1 - t if self.pending[1 - t] else self._resume()

    def _push_removal(self, t: int, caps: int) -> None:
        """A removal-only turn: owed removals (then the other side's, or play resumes) or a
        blocked player's removal (then the same player moves)."""
        owed = self.pending[t]
        if owed < 0:
            self.men[t] &= ~caps
        else:
            self.men[1 - t] &= ~caps
        self.quiet = 0
        if owed:
            self._removed(t)
            self._settle()
        self.ply += 1
        key = self._cur_key = self._key()
        self._reps[key] = self._reps.get(key, 0) + 1

    def pop(self) -> Move:
        """Undo the last move and return it; raises ``IndexError`` if there is none."""
        raw = self._stack[-1][1]
        self.pop_raw()
        return self._to_move(raw)

    # -- outcome -------------------------------------------------------------------------
    def _ended_by_rule(self) -> Optional[Outcome]:
        """Every ending but a blocked player (which needs move generation).  Kept for the
        state it was found for (:meth:`outcome` after a move, then the next move's legality
        check, ask about the same state); the repetition key, the quiet turns and the
        repetition count are the whole of its input."""
        key = (self._cur_key, self.quiet, self._reps.get(self._cur_key, 0))
        last = self._last_end
        if last[0] == key:
            return last[1]
        found = self._find_end()
        self._last_end = (key, found)
        return found

    def _find_end(self) -> Optional[Outcome]:
        v = self.variant
        t = self.turn
        if v.mill_wins:
            for side in (1 - t, t):
                men = self.men[side]
                if any(men & m == m for m in self._mills):
                    return Outcome(Termination.MILL, side)
        for side in (t, 1 - t):
            if self.men[side].bit_count() + self.hand[side] < v.lose_below:
                return Outcome(Termination.TOO_FEW_MEN, 1 - side)
        if not self._full & ~(self.men[0] | self.men[1] | self.marks) and not self.pending[t]:
            return Outcome(Termination.BOARD_FULL, 1 - t if v.board_full == "lose" else None)
        return self._drawn()

    def _drawn(self) -> Optional[Outcome]:
        v = self.variant
        if (v.three_three_draw and self.quiet >= v.three_three_draw and not self.hand[0]
                and not self.hand[1] and self.men[0].bit_count() == 3 == self.men[1].bit_count()):
            return Outcome(Termination.THREE_VS_THREE, None)
        if v.no_capture_draw and self.quiet >= v.no_capture_draw:
            return Outcome(Termination.NO_CAPTURE, None)
        if v.repetition and self._reps.get(self._cur_key, 0) >= v.repetition:
            return Outcome(Termination.REPETITION, None)
        return None

    def outcome(self) -> Optional[Outcome]:
        """How the game ended, or ``None`` while it goes on.

        A blocked player loses (or draws, by the variant) before any draw rule is applied.
        """
        decided = self._ended_by_rule()
        if decided is not None and decided.termination not in _DRAW_RULES:
            return decided
        if not self._has_move():
            v = self.variant
            return Outcome(Termination.BLOCKED, None if v.blocked == "draw" else 1 - self.turn)
        return decided

    def is_game_over(self) -> bool:
        return self.outcome() is not None

    # -- conversions ---------------------------------------------------------------------
    def _to_move(self, raw: RawMove) -> Move:
        move = self._moves.get(raw)
        if move is None:
            s, d, caps = raw
            names = self._names
            move = Move(None if s < 0 else names[s], None if d < 0 else names[d],
                        (FROM_HAND,) * (caps >> HAND_SHIFT)
                        + tuple(names[i] for i in bits(caps & self._full)))
            if len(self._moves) < _MOVE_CACHE_SIZE:
                self._moves[raw] = move
        return move

    def _to_raw(self, move: Move) -> RawMove:
        idx = self._index
        try:
            s = -1 if move.src is None else idx[move.src]
            d = -1 if move.dst is None else idx[move.dst]
            caps = 0
            for c in move.captures:
                if c == FROM_HAND:
                    caps += 1 << HAND_SHIFT
                else:
                    caps |= 1 << idx[c]
        except KeyError as e:
            raise InvalidMoveError(f"not a move here: {move} (point {e.args[0]} is not on the "
                                   f"{self.topology.name} board)") from None
        return s, d, caps

    def to_text(self) -> str:
        """Compact text: ``<points> <w|b> <white in hand> <black in hand> <quiet turns>
        <white's forbidden mills> <black's forbidden mills> <ply>``, then
        ``used=<white's>;<black's>`` when a player has used a mill (``one_time_mill``) and
        ``remove=<white's>,<black's>`` when a player owes a removal-only turn (the number of men,
        negative for its own men).

        ``<points>`` has one character per point in name order (:meth:`points_text`);
        forbidden and used mills are ``-`` or comma-separated point triples such as ``a1a4a7``.
        """
        hand, forbidden, mills = self.hand, self.forbidden, self._mills_text
        text = (f"{self.points_text()} {'wb'[self.turn]} {hand[0]} {hand[1]} {self.quiet} "
                f"{mills(forbidden[0]) if forbidden[0] else '-'} "
                f"{mills(forbidden[1]) if forbidden[1] else '-'} {self.ply}")
        if self.used[0] | self.used[1]:
            text += f" used={mills(self.used[0])};{mills(self.used[1])}"
        if self.pending[0] or self.pending[1]:
            text += f" remove={self.pending[0]},{self.pending[1]}"
        return text

    def points_text(self) -> str:
        """The board as one character per point in name order: ``W``, ``B``, ``X`` (a point
        marked by ``placement_mill=mark``) or ``.``; the first field of :meth:`to_text`."""
        board = _board_text(self.men[0], self.men[1], self.topology.size)
        if self.marks:
            board = "".join("X" if self.marks >> i & 1 else ch for i, ch in enumerate(board))
        return board

    def _mills_text(self, nums: int) -> str:
        """The mills numbered in the mask ``nums`` as text: ``-``, or ``a1a4a7,d1d2d3``."""
        if not nums:
            return "-"
        return ",".join("".join(self.topology.mask_points(self._mills[n])) for n in bits(nums))

    @classmethod
    def from_text(cls, variant: Variant | str, text: str) -> Position:
        """Parse :meth:`to_text` output for ``variant``; raises :class:`PositionError`."""
        pos = cls(variant)
        t = pos.topology
        fields = text.split()
        if len(fields) < 8:
            raise PositionError(f"expected 8 fields in position text, got {len(fields)}: {text!r}")
        board, turn, hw, hb, quiet, fw, fb, ply = fields[:8]
        used = ["-", "-"]
        v = pos.variant
        for extra in fields[8:]:
            key, _, value = extra.partition("=")
            if key == "used" and value.count(";") == 1:
                if not v.one_time_mill:
                    raise PositionError(f"used mills in a variant without one_time_mill: {extra!r}")
                used = value.split(";")
            elif key == "remove" and re.fullmatch(r"-?\d+,-?\d+", value):
                if v.placement_mill != "count" and v.board_full != "remove-both":
                    raise PositionError("owed removals in a variant without placement_mill=count "
                                        f"or board_full=remove-both: {extra!r}")
                owed = [int(x) for x in value.split(",")]
                if max(abs(x) for x in owed) > v.men:
                    raise PositionError(f"more removals owed than the variant has men: {extra!r}")
                pos.pending = owed
            else:
                raise PositionError(f"unknown field after the 8 fields of position text (known: "
                                    f"used=<white's mills>;<black's mills>, "
                                    f"remove=<white's>,<black's>): {extra!r}")
        if len(board) != t.size or set(board) - set("WBX."):
            raise PositionError(f"expected {t.size} characters of W, B or . for the "
                                f"{t.name} board, got {board!r}")
        if turn not in ("w", "b"):
            raise PositionError(f"side to move must be w or b, got {turn!r}")
        try:
            numbers = [int(x) for x in (hw, hb, quiet, ply)]
        except ValueError:
            raise PositionError(f"hands, quiet turns and ply must be integers: {text!r}") from None
        if min(numbers) < 0:
            raise PositionError(f"negative count in position text: {text!r}")
        if "X" in board and (pos.variant.placement_mill != "mark" or not numbers[0] + numbers[1]):
            raise PositionError("marked points (X) exist only while placing with "
                                f"placement_mill=mark: {text!r}")
        men = [0, 0]
        for i, ch in enumerate(board):
            if ch == "X":
                pos.marks |= 1 << i
            elif ch != ".":
                men[ch == "B"] |= 1 << i
        for side in (0, 1):
            if men[side].bit_count() + numbers[side] > pos.variant.men:
                raise PositionError(f"{COLOR_NAMES[side]} has more men than the variant's "
                                    f"{pos.variant.men}: {text!r}")
        def parse_mills(field: str) -> int:
            if field == "-":
                return 0
            mill_number = {frozenset(t.mask_points(m)): n for n, m in enumerate(t.mills)}
            nums = 0
            for triple in field.split(","):
                pts = frozenset(triple[i:i + 2] for i in range(0, len(triple), 2))
                if len(triple) != 6 or pts not in mill_number:
                    raise PositionError(f"not a mill of the {t.name} board: {triple!r}")
                nums |= 1 << mill_number[pts]
            return nums

        pos.men = men
        pos.hand = [numbers[0], numbers[1]]
        pos.turn = WHITE if turn == "w" else BLACK
        pos.quiet = numbers[2]
        pos.forbidden = [parse_mills(fw), parse_mills(fb)]
        pos.used = [parse_mills(used[0]), parse_mills(used[1])]
        pos.ply = numbers[3]
        pos._cur_key = pos._key()
        pos._reps = {pos._cur_key: 1}
        return pos

    def board_text(self) -> str:
        """A readable ASCII board with ``W``/``B`` men (``X``: a marked point), plus hands and
        side to move."""
        shown = self.men[0] | self.men[1] | self.marks
        occ = {p: "W" if self.men[0] >> i & 1 else "B" if self.men[1] >> i & 1 else "X"
               for i, p in enumerate(self._names) if shown >> i & 1}
        info = (f"{COLOR_NAMES[self.turn]} to move; in hand W {self.hand[0]} B {self.hand[1]}; "
                f"on board W {self.on_board(WHITE)} B {self.on_board(BLACK)}")
        return render(self.topology, occ) + "\n" + info

    def __str__(self) -> str:
        return self.board_text()

    def __repr__(self) -> str:
        return f"Position({self.variant.name!r}, {self.to_text()!r})"

    # -- perft ---------------------------------------------------------------------------
    def perft(self, depth: int, bulk: bool = True) -> int:
        """How many legal move sequences of ``depth`` turns there are from here.

        With ``bulk`` the last turn is counted from the move list instead of being played.
        """
        if depth == 0:
            return 1
        if self._ended_by_rule() is not None:
            return 0
        moves = self.generate_raw()
        if depth == 1 and bulk:
            return len(moves)
        total = 0
        for raw in moves:
            self.push_raw(raw)
            total += self.perft(depth - 1, bulk)
            self.pop_raw()
        return total

    def pop_raw(self) -> None:
        """Undo the last move without building a :class:`Move` (for searches)."""
        key = self._cur_key
        state, _, self._cur_key = self._stack.pop()
        n = self._reps[key] - 1
        if n:
            self._reps[key] = n
        else:
            del self._reps[key]
        self._set_state(state)


_DRAW_RULES = frozenset({Termination.THREE_VS_THREE, Termination.NO_CAPTURE, Termination.REPETITION})


# --------------------------------------------------------------------------------------
# Why a move is illegal
# --------------------------------------------------------------------------------------

#: move-like text with any letters and digits, to name a point a board does not have
_LOOSE_MOVE_RE = re.compile(r"^([a-z]+\d+)(?:-([a-z]+\d+))?((?:x[a-z]+\d+)*)$")


def _men(n: int) -> str:
    return "1 man" if n == 1 else f"{n} men"


def explain_illegal(position: Position, text: str) -> str:
    """Why ``text`` is not a legal move in ``position``: one short sentence naming the rule
    it breaks (``"b6 is occupied"``, ``"b6 closes a mill: add a capture (e.g. b6xd7)"``),
    with a legal example where one helps; ``""`` if the move is legal.

    Every rule of the variant has its sentence: the move's shape for the phase (placing,
    moving, Lasker's place-or-move), occupied and empty points, adjacency and flying, mills
    that may not be re-formed, mills that win (three men's morris), and captures (missing,
    too many, none owed, the mover's own man, an empty point, a man standing in a mill).
    Text that is not a move gets the :class:`InvalidMoveError` sentence (``"not a move:
    ..."``), naming a point the board does not have.
    """
    pos = position
    try:
        move = Move.parse(text)
        src, dst, caps = pos._to_raw(move)
    except InvalidMoveError as e:
        return _explain_unparsable(pos, text, str(e))
    if pos._is_legal_raw((src, dst, caps)):
        return ""
    outcome = pos.outcome()
    if outcome is not None:
        return f"the game is over ({outcome.termination.value}, {outcome.result})"
    legal = pos.legal_moves()

    def example(keep: Callable[[Move], bool]) -> str:
        found = next((m for m in legal if keep(m)), None)
        return f" (e.g. {found})" if found is not None else ""

    if move.dst is None or pos.pending[pos.turn] or any(m.dst is None for m in legal):
        return (_explain_removal(pos, move, caps, example)
                or f"{move} is not legal here{example(lambda m: True)}")
    return (_explain_shape(pos, move, src, dst, example)
            or _explain_mills(pos, move, src, dst, caps, example)
            or f"{move} is not legal here{example(lambda m: True)}")


def _explain_removal(pos: Position, move: Move, caps: int,
                     example: Callable[[Callable[[Move], bool]], str]) -> str:
    """Removal-only turns (``xg7``): when they are played, and which men they may take."""
    t = pos.turn
    me, them = COLOR_NAMES[t], COLOR_NAMES[1 - t]
    owed = pos.pending[t]
    v = pos.variant
    removal = example(lambda m: m.dst is None)
    if owed:
        whose = (f"{_men(-owed)} of its own" if owed < 0
                 else f"{owed} {them} {'man' if owed == 1 else 'men'}")
        why = ("placement ended (placement_mill=count: removals by the mills on the board)"
               if v.placement_mill == "count" else "the board filled up (board_full=remove-both)")
        if move.dst is not None:
            return f"{me} must first remove {whose} ({why}){removal}"
        victims = pos.men[t] if owed < 0 else pos.men[1 - t]
        if caps & ~victims:
            return f"{me} removes {whose} here, not others{removal}"
        return f"{me} removes {whose} here, as the capture rules allow{removal}"
    if removal:  # a legal removal-only turn without owed removals: the player is blocked
        if move.dst is not None:
            return f"{me} is blocked: it first removes a {them} man next to one of its own{removal}"
        return f"{me} is blocked and removes one {them} man next to one of its own men{removal}"
    return (f"{move} only removes men, which is a turn only when a player owes removals "
            "(board_full=remove-both, placement_mill=count) or is blocked "
            f"(blocked=remove-and-move){example(lambda m: True)}")


_POINT_RE = re.compile(r"[a-z]+\d+")


def suggest_moves(position: Position, text: str, limit: int = 4) -> list[Move]:
    """Legal moves that ``text`` (not legal as written) probably meant: the points it names,
    in order, read case-insensitively and with any separators (``c4b4``, ``C4 B4``,
    ``c4_b4`` → ``c4-b4``), as the start of a legal move (``d6-f6x`` → ``d6-f6xa1``...);
    at most ``limit`` (none when more would match: too vague to help)."""
    points = _POINT_RE.findall(text.strip().lower())
    if not points or len(points) > 3:
        return []

    def named(m: Move) -> list[str]:
        return [p for p in (m.src, m.dst, *m.captures) if p is not None]

    found = [m for m in position.legal_moves() if named(m)[:len(points)] == points]
    if not found:  # a removal turn written without its x (``g7`` for ``xg7``)
        found = [m for m in position.legal_moves() if m.dst is None and named(m) == points]
    return found if len(found) <= limit else []


def _explain_unparsable(pos: Position, text: str, error: str) -> str:
    """The sentence for text that is not a move on this board."""
    m = _LOOSE_MOVE_RE.match(text.strip().lower())
    if m:
        names = [m.group(1), m.group(2)] + m.group(3).split("x")[1:]
        unknown = next((p for p in names if p and p not in pos._index), None)
        if unknown is not None:
            return (f"not a move: {text!r} ({unknown} is not a point of the "
                    f"{pos.topology.name} board)")
    return error


def _explain_shape(pos: Position, move: Move, src: int, dst: int,
                   example: Callable[[Callable[[Move], bool]], str]) -> str:
    """A placement or a move that the phase, the points or adjacency rule out; else ``""``."""
    t = pos.turn
    me, them = COLOR_NAMES[t], COLOR_NAMES[1 - t]
    v = pos.variant
    hand = pos.hand[t]
    assert move.dst is not None  # removal-only turns are explained by _explain_removal
    if src < 0:
        if not hand:
            return (f"{me} has no men left to place: move a man"
                    f"{example(lambda m: m.src is not None)}")
        if pos.occupant(move.dst) is not None:
            return f"{move.dst} is occupied"
        if pos.marks >> dst & 1:
            return (f"{move.dst} is marked (a man was captured there while placing): it stays "
                    "blocked until placement ends")
        return ""
    if hand and not v.move_in_placement:
        return (f"{me} still has {_men(hand)} to place: place a man before moving one"
                f"{example(lambda m: m.src is None)}")
    assert move.src is not None
    holder = pos.occupant(move.src)
    if holder is None:
        return f"{move.src} is empty: there is no man of {me}'s to move"
    if holder != t:
        return f"{move.src} holds a {them} man: {me} moves only its own men"
    if pos.occupant(move.dst) is not None:
        return f"{move.dst} is occupied"
    if pos.marks >> dst & 1:
        return f"{move.dst} is marked: it stays blocked until placement ends"
    own = pos.men[t].bit_count()
    flying = not hand and v.flying and own <= v.fly_at
    if not flying and not pos._adj[src] >> dst & 1:
        if not v.flying:
            why = "this variant has no flying"
        elif hand:
            why = "no flying while men remain to place"
        else:
            why = f"flying needs {_men(v.fly_at)}; {me} has {own}"
        return f"{move.src}-{move.dst} is not adjacent ({why})"
    return ""


def _explain_mills(pos: Position, move: Move, src: int, dst: int, caps: int,
                   example: Callable[[Callable[[Move], bool]], str]) -> str:
    """Mills and captures: re-formed mills, winning mills, and every capture rule; else ``""``."""
    t = pos.turn
    me, them = COLOR_NAMES[t], COLOR_NAMES[1 - t]
    v = pos.variant
    topo = pos.topology
    own, opp = pos.men[t], pos.men[1 - t]
    head = str(Move(move.src, move.dst))
    after = (own & ~(1 << src) if src >= 0 else own) | (1 << dst)
    count, nums = pos._formed(after, dst)
    spent = nums & pos.used[t] if v.one_time_mill else 0
    count -= spent.bit_count()
    again = nums & pos.forbidden[t]
    if again:
        mill = " ".join(topo.mask_points(pos._mills[next(bits(again))]))
        return (f"{head} re-forms the mill {mill} that {me} broke on its previous move, which "
                "this variant forbids")
    # a legal turn with the same men moving, with captures if the text had some
    same = (caps != 0 and example(lambda m: m.src == move.src and m.dst == move.dst
                                  and bool(m.captures))) or \
        example(lambda m: m.src == move.src and m.dst == move.dst)
    if not count and spent:
        return (f"{head} closes only mills {me} has formed before, and a mill captures only the "
                f"first time here (one_time_mill){same}") if caps else ""
    if not count:
        return f"{head} closes no mill, so it captures nothing{same}" if caps else ""
    if v.mill_wins:
        return f"{head} closes a mill, which wins the game here: no capture{same}" if caps else ""
    if src < 0 and v.placement_mill == "count":
        return (f"{head} closes {'a mill' if count == 1 else f'{count} mills'} while placing, "
                "which captures nothing here (placement_mill=count: removals by the mills on "
                f"the board when placement ends){same}") if caps else ""
    most = min(count, v.multi_mill_captures)
    mills = "a mill" if count == 1 else f"{count} mills"
    from_hand = move.captures.count(FROM_HAND)
    opp_hand = pos.hand[1 - t]
    by_hand = src < 0 and v.placement_mill == "hand"
    if from_hand and not by_hand:
        return (f"x{FROM_HAND} takes a man from {them}'s hand, which only a placement closing a "
                f"mill does, and only with placement_mill=hand{same}")
    if by_hand and from_hand > opp_hand:
        return f"{them} has only {_men(opp_hand)} in hand{same}"
    if by_hand and from_hand < min(most, opp_hand) and len(move.captures) > from_hand:
        return (f"{head} closes {mills} while placing: captures come from {them}'s hand "
                f"(x{FROM_HAND}) while it holds men{same}")
    in_mills = topo.men_in_mills(opp)
    for c in move.captures:
        if c == FROM_HAND:
            continue
        bit = 1 << pos._index[c]
        if own & bit:
            return f"{c} is {me}'s own man: capture a {them} man{same}"
        if not opp & bit:
            return f"{c} is empty: capture a {them} man{same}"
        if in_mills & bit and v.mill_capture == "never":
            return f"{c} stands in a mill, and men in mills are never captured here{same}"
        if in_mills & bit and v.mill_capture == "last-resort" and opp & ~in_mills & ~caps:
            return f"{c} stands in a mill while other {them} men do not{same}"
    n = len(move.captures)
    if n > most:
        allowed = "one man" if most == 1 else f"at most {_men(most)}"
        return f"{head} closes {mills}: it captures {allowed}, not {n}{same}"
    if not v.optional_capture and n < most:
        more = example(lambda m: m.src == move.src and m.dst == move.dst
                       and len(m.captures) > n)
        if more:
            what = "add a capture" if n == 0 and most == 1 else f"capture {_men(most)}"
            return f"{head} closes {mills}: {what}{more}"
    return ""
