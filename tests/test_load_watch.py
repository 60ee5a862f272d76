"""The run's overload watch (:class:`arena.progress.LoadWatch`): the share of the bots'
thinking time spent waiting for a CPU is a share, never above 100 % (issue 39 saw "107 % of
their thinking time waiting": a move's run-queue delay can read more than its wall time)."""

from __future__ import annotations

import dataclasses

from arena.progress import OVERLOADED, LoadWatch
from arena.records import GameRecord, MoveInfo
from tests.synth_records import make_record


def _game(*moves: tuple[float, float]) -> GameRecord:
    record = make_record("a", "b", 1.0, moves=[f"m{k}" for k in range(len(moves))])
    record.moves = [dataclasses.replace(m, wall_ms=wall, wait_ms=wait)
                    for m, (wall, wait) in zip(record.moves, moves)]
    return record


def test_the_share_waited_is_at_most_the_thinking_time() -> None:
    watch = LoadWatch()
    watch.add(_game((100.0, 150.0), (100.0, 50.0)))  # 150 ms read for a 100 ms move
    share = watch.share()
    assert share is not None and share == (100.0 + 50.0) / 200.0
    assert watch.note().startswith("overloaded") == (share >= OVERLOADED)
    watch.add(_game((10.0, 500.0)))
    later = watch.share()
    assert later is not None and later <= 1.0


def test_moves_without_a_measure_or_from_the_opening_do_not_count() -> None:
    watch = LoadWatch()
    record = _game((100.0, 20.0), (100.0, 90.0))
    record.moves[1] = dataclasses.replace(record.moves[1], opening=True)
    watch.add(record)
    assert watch.share() == 0.2
    empty = LoadWatch()
    empty.add(_game((100.0, 0.0)))
    assert empty.share() == 0.0
    assert MoveInfo("d6", 1.0).wait_ms is None
