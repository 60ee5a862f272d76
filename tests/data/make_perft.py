"""Write tests/data/perft.txt: perft counts computed once by the engine.

Run ``.venv/bin/python tests/data/make_perft.py`` after a deliberate rules change, then read
the diff: ``tests/test_rules.py`` checks every line against the engine and, for depths up to
3, against the independent reference in ``tests/rules_reference.py``.

Each line is ``<variant> <depth> <count> <position>`` where ``<position>`` is ``start`` or a
position text (``Position.to_text``).  Besides the start of every preset, the file holds
positions met in seeded random games, chosen for what they exercise: a capture available in
the placing phase and in the moving phase, a late position (few men, flying), and for the options preset a position
with a forbidden mill and one with a double capture.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable, Iterator

from arena.rules import Position
from arena.variants import PRESETS, Variant

OUT = Path(__file__).with_name("perft.txt")
START_DEPTH = {"nine-mens-morris": 5, "six-mens-morris": 5, "three-mens-morris": 6}
MIDGAME_DEPTH = 3
#: keep the file quick to check: drop a depth whose count exceeds this
MAX_COUNT = 150_000


def _positions(variant: Variant, seeds: range) -> Iterator[Position]:
    """Every position of seeded random games (copies, without history)."""
    for seed in seeds:
        rng = random.Random(seed)
        pos = Position(variant)
        while True:
            yield Position.from_text(variant, pos.to_text())
            moves = pos.legal_moves()
            if not moves:
                break
            pos.push(rng.choice(moves))


def _has_capture(pos: Position) -> bool:
    return not pos.hand[0] and not pos.hand[1] and any(m.captures for m in pos.legal_moves())


def _placing_capture(pos: Position) -> bool:
    return bool(pos.hand[pos.turn]) and any(m.captures for m in pos.legal_moves())


def _double_capture(pos: Position) -> bool:
    return any(len(m.captures) > 1 for m in pos.legal_moves())


def _is_late(pos: Position) -> bool:
    v = pos.variant
    return (not pos.hand[0] and not pos.hand[1] and pos.outcome() is None
            and min(pos.on_board(0), pos.on_board(1)) <= max(v.fly_at, 3) and bool(pos.legal_moves()))


def _has_forbidden(pos: Position) -> bool:
    return bool(pos.forbidden[pos.turn]) and pos.outcome() is None


def _removal_next(pos: Position) -> bool:
    """A turn from here leads to a removal-only turn (owed removals, a blocked player)."""
    for move in pos.legal_moves():
        pos.push(move)
        found = any(m.dst is None for m in pos.legal_moves())
        pos.pop()
        if found:
            return True
    return False


CRITERIA: dict[str, Callable[[Position], bool]] = {
    "capture": _has_capture, "placing-capture": _placing_capture, "late": _is_late,
    "forbidden": _has_forbidden, "double": _double_capture, "removal": _removal_next,
}

#: positions random games hardly meet, built by hand: the last placement on a board that then
#: is full (no mill: zhi-qi's removals by both; el-filja's removals by mill counts: none, white's
#: only, both, black's more) and a blocked player who removes and moves on
HAND_BUILT = {
    "zhi-qi": ["BWBWBWBWBBBWBWWBWWWW.WBB b 0 1 23 - - 23",
               "BWWBBWBBBB..BBW...B....B w 0 0 0 - - 60"],
    "el-filja": ["WWBBBWWBBBWBWWBBBWWW.BWW b 0 1 23 - - 23",
                 "WBBWBBWWBWBBWBWBWBBWWW.W b 0 1 23 - - 23",
                 "BWBBWWBWWBWBWBBBWBBWWWW. b 0 1 23 - - 23",
                 "BWWWBWBWWBBBBWWWBWWBWBB. b 0 1 23 - - 23"],
}


def main() -> None:
    """Compute every count and write the file."""
    lines = ["# perft counts computed by arena.rules (tests/data/make_perft.py); checked by",
             "# tests/test_rules.py, depths <= 3 also against tests/rules_reference.py",
             "# <variant> <depth> <count> <position: start or Position.to_text()>"]
    for name, variant in PRESETS.items():
        pos = Position(variant)
        for depth in range(1, START_DEPTH.get(name, 4) + 1):
            lines.append(f"{name} {depth} {pos.perft(depth)} start")
        wanted = ["placing-capture", "capture", "late"]
        wanted += ["forbidden"] if variant.no_immediate_reform else []
        wanted += ["double"] if variant.multi_mill_captures > 1 else []
        wanted += ["removal"] if "remove" in variant.board_full + variant.blocked else []
        for what in wanted:
            found = next((p for p in _positions(variant, range(200)) if CRITERIA[what](p)), None)
            if found is None:
                continue
            for depth in range(1, MIDGAME_DEPTH + 1):
                count = found.perft(depth)
                if count > MAX_COUNT:
                    break
                lines.append(f"{name} {depth} {count} {found.to_text()}")
        for text in HAND_BUILT.get(name, []):
            built = Position.from_text(variant, text)
            for depth in range(1, MIDGAME_DEPTH + 1):
                lines.append(f"{name} {depth} {built.perft(depth)} {text}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines) - 3} counts to {OUT}")


if __name__ == "__main__":
    main()
