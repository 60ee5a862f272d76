"""The runner's side of executors whose workers come and go (issue 30), without Dask: an
executor written against the interface (tests/test_tournament.py's ScriptedExecutor) with
the optional ``stalled()`` and ``after_loss()``; ``cluster.wait``; the schedule walked
lazily.  The same behaviour with real Dask processes: tests/test_cluster_failures.py."""

from __future__ import annotations

import dataclasses
import io
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Optional, Union

import pytest

from arena.config import load_config, parse_config
from arena.errors import ConfigError
from arena.jobs import GameJob
from arena.records import GameRecord, PlayerInfo, read_records
from arena.schedule import Format, PendingSlots, build_schedule, iter_schedule
from arena.tournament import WorkerFailure, run_tournament
from arena.variants import get_variant
from tests.test_tournament import ScriptedExecutor, schedule_ids, write_config

ROOT = Path(__file__).resolve().parent.parent
BASE = {"name": "x", "bots": [f"{ROOT}/bots/random", f"{ROOT}/bots/greedy"]}


@pytest.mark.parametrize("value, seconds", [(None, 600.0), ({}, 600.0), ({"wait": 5}, 5.0),
                                            ({"wait": "30s"}, 30.0), ({"wait": "10m"}, 600.0),
                                            ({"wait": "1.5h"}, 5400.0)])
def test_cluster_wait_reads_seconds_or_a_unit(value: Any, seconds: float) -> None:
    data = dict(BASE) if value is None else {**BASE, "cluster": value}
    config = parse_config(data)
    assert config.cluster_wait == seconds
    assert config.digest() == parse_config(BASE).digest()  # not a change of the games


@pytest.mark.parametrize("value, message", [
    ({"wait": 0}, "cluster.wait: expected a duration from 1 s to 7 days"),
    ({"wait": "soon"}, "cluster.wait: expected a duration"),
    ({"wait": True}, "cluster.wait: expected a duration"),
    ({"wait": 8 * 86400}, "cluster.wait: expected a duration"),
    ({"wiat": 5}, "cluster.wiat: unknown key (did you mean wait?"),
    (5, "cluster: expected a mapping with keys wait"),
])
def test_a_bad_cluster_wait_is_one_error_naming_the_key(value: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({**BASE, "cluster": value})
    text = str(info.value)
    assert text.startswith(f"config: {message}") and "\n" not in text, text


class Stalling(ScriptedExecutor):
    """Plays ``plays`` games, then can play none (no worker, as a cluster would say)."""

    def __init__(self, plays: int) -> None:
        super().__init__()
        self.plays = plays
        self.since: Optional[float] = None

    def stalled(self) -> Optional[tuple[str, float]]:
        if len(self.submitted) < self.plays:
            return None
        if self.since is None:
            self.since = time.monotonic()
        return "waiting for workers: 0 connected since 10:00", self.since


def test_an_executor_that_stalls_stops_the_run_after_cluster_wait(workdir: Path) -> None:
    path = write_config(workdir)
    config = dataclasses.replace(load_config(path), cluster_wait=1.0)
    games = Stalling(plays=2)
    console = io.StringIO()
    started = time.monotonic()
    with pytest.raises(WorkerFailure) as info:
        run_tournament(config, executor=games, console=console)
    waited = time.monotonic() - started
    message = str(info.value)
    assert message.startswith("waiting for workers: 0 connected since 10:00, for longer than "
                              "1 s (cluster.wait): the run stops. 2/8 games are saved in ")
    assert message.endswith("then run the same command again to resume (docs/CLUSTER.md)")
    assert waited < 60 and games.submitted == schedule_ids(config)[:2]
    assert message in (config.output / "arena.log").read_text()
    games.close(cancel=True)
    final = run_tournament(config, console=io.StringIO())  # resumed on the local pool
    ids = [r.game_id for r in read_records(final.folder / "games.jsonl")]
    assert final.complete and final.played == 6 and sorted(ids) == sorted(schedule_ids(config))


class Losing(ScriptedExecutor):
    """Loses ``again`` once (then plays it again) and gives ``forfeit`` up as White's
    forfeit, as arena.cluster.DaskExecutor.after_loss does with dead workers."""

    def __init__(self, again: str, forfeit: str) -> None:
        super().__init__(lose={again, forfeit})
        self.again, self.forfeit = again, forfeit
        self.jobs: list[GameJob] = []

    def submit(self, job: GameJob) -> Future[GameRecord]:
        self.jobs.append(job)
        future = super().submit(job)
        if job.slot.game_id == self.again:
            self.lose.discard(self.again)  # lost the first time only
        return future

    def after_loss(self, job: GameJob, error: BaseException) -> Union[GameJob, GameRecord,
                                                                     None]:
        if job.slot.game_id == self.again:
            return dataclasses.replace(job, last=True)  # the job may change
        spec = job.white
        return GameRecord(game_id=job.slot.game_id, variant=job.slot.variant.name,
                          variant_params={}, white=PlayerInfo(job.white.name),
                          black=PlayerInfo(job.black.name), result="0-1", termination="crash",
                          forfeit="white", detail=f"white ({spec.name}) took its worker down")


def test_lost_games_are_played_again_or_saved_as_the_forfeit_given(workdir: Path) -> None:
    config = load_config(write_config(workdir))
    ids = schedule_ids(config)
    games = Losing(again=ids[1], forfeit=ids[2])
    result = run_tournament(config, executor=games, console=io.StringIO())
    games.close(cancel=False)
    assert result.complete and (result.lost, result.replayed) == (0, 1)
    assert [j.slot.game_id for j in games.jobs].count(ids[1]) == 2
    assert games.jobs[[j.slot.game_id for j in games.jobs].index(ids[1], 2)].last
    records = {r.game_id: r for r in read_records(result.folder / "games.jsonl")}
    assert sorted(records) == sorted(ids)
    assert (records[ids[2]].termination, records[ids[2]].forfeit) == ("crash", "white")
    log = (result.folder / "arena.log").read_text()
    assert f"game {ids[1]} was lost on the cluster (CancelledError" in log
    assert "it is played again" in log


def test_the_schedule_walked_lazily_is_the_listed_one() -> None:
    variants = [get_variant("three-mens-morris"), get_variant("six-mens-morris")]
    players = [f"b{i}" for i in range(5)]
    listed = build_schedule(players, variants, Format(rounds=2), games_per_pairing=4,
                            opening_turns=1, seed=9)
    done = {s.game_id for s in listed[::3]}
    order: dict[str, int] = {}
    pending = PendingSlots(iter_schedule(players, variants, Format(rounds=2),
                                         games_per_pairing=4, opening_turns=1, seed=9),
                           done, order, limit=10)
    taken = []
    while pending:
        taken.append(pending.popleft())
    expected = [s for s in listed if s.game_id not in done]
    assert [(s.game_id, s.index, s.opening, s.seed) for s in taken] == \
        [(s.game_id, s.index, s.opening, s.seed) for s in expected[:10]]
    assert not pending.exhausted
    pending.finish()
    assert pending.exhausted and order == {s.game_id: s.index for s in listed
                                           if s.game_id in done}
