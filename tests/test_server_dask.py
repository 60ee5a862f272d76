"""The competition server's judge on Dask: a real ``arena server run`` process whose
settings name the scheduler of a Dask ``LocalCluster`` (two worker processes of one thread,
started here as ``arena.cluster`` starts one for tournaments), two uploads checked and their
ladder games played on the cluster's workers, the leaderboard and records as on the local
pool.  Skipped with a reason where the ``cluster`` or ``server`` extra is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("distributed", reason="the cluster extra is not installed "
                                          "(pip install -e '.[cluster]')")
pytest.importorskip("fastapi", reason="the server extra is not installed "
                                      "(pip install -e '.[server]')")

from tests.test_server import (SETTINGS, Server, _competition,  # noqa: E402
                               play_two_uploads)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """The address of a new local Dask cluster (closed, with its workers, at the end)."""
    from arena.cluster import start_local_cluster

    cluster = start_local_cluster(2)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def _played_on_the_cluster(address: str) -> dict[str, Any]:
    """How many tasks of each kind the scheduler has seen finish (by the task's name)."""
    from distributed import Client

    def counts(dask_scheduler: Any) -> dict[str, Any]:
        return {prefix: dict(tp.state_counts) for prefix, tp in
                dask_scheduler.task_prefixes.items()}

    with Client(address, timeout=30) as client:
        result: dict[str, Any] = client.run_on_scheduler(counts)
        return result


@pytest.mark.slow
def test_the_judge_plays_the_ladder_on_dask_workers(scheduler: str, tmp_path: Path) -> None:
    folder = tmp_path / "comp"
    tokens = _competition(folder, SETTINGS.replace("pairs: 2", "pairs: 1")
                          + f"executor: {{kind: dask, scheduler: '{scheduler}'}}\n")
    server = Server(folder)
    server.start()
    try:
        play_two_uploads(server, tokens, 2)
        games = server.get("/api/games")
        records = [server.get(f"/api/games/{g['id']}") for g in games]
        assert all(r["moves"] and r["result"] in ("1-0", "0-1", "1/2-1/2") for r in records)
    finally:
        server.stop()
    # the games went through the scheduler: its tasks of the judge's game function finished
    played = _played_on_the_cluster(scheduler)
    assert "play_live" in played, played
    assert sum(played["play_live"].get(state, 0)
               for state in ("memory", "released", "forgotten")) >= 2, played
