"""Cluster overhead: games per second on the local process pool and on a local Dask cluster
with the same number of workers (one thread each), same games, measured side by side and
printed as a ratio.

Run alone with ``python benchmarks/bench_cluster.py [--quick]`` (needs the cluster extra:
``pip install '.[cluster]'``).  Both runs include their start-up (the pool's fork, the
cluster's scheduler and worker processes) and every game saved; a second figure leaves the
cluster's start-up out (the cluster is opened first, then timed).  What is left is Dask's
cost per game: a round trip to the scheduler, pickled jobs and records, and one game per
worker thread at a time (no game queued on a worker, see ``docs/CLUSTER.md``).
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # runnable alone from a checkout

from benchmarks.bench_tournament import _config  # noqa: E402  (the same games)
from benchmarks.run import standalone  # noqa: E402

WORKERS = 2


def throughput(games: int, executor: str, *, warm: bool = False) -> float:
    """Games per second for ``games`` random-vs-random games on ``executor`` (``local`` or
    ``dask``, :data:`WORKERS` workers); ``warm``: the cluster is started before the clock."""
    from arena.cluster import cluster_executor
    from arena.config import with_executor
    from arena.tournament import run_tournament

    with tempfile.TemporaryDirectory() as tmp:
        config = with_executor(_config(Path(tmp), games, WORKERS), kind=executor)
        with cluster_executor(config) if warm else contextlib.nullcontext() as pool:
            t0 = time.perf_counter()
            result = run_tournament(config, executor=pool, console=io.StringIO())
            elapsed = time.perf_counter() - t0
    if not result.complete:
        raise RuntimeError(f"only {result.finished} of {result.total} games finished")
    return result.played / elapsed


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Local pool, local Dask cluster (started inside the timing, then outside), alternating,
    best of the repeats."""
    from arena.cluster import require_distributed

    require_distributed()
    games, repeat = (8, 1) if quick else (24, 2)
    local = cold = warm = 0.0
    for _ in range(repeat):
        local = max(local, throughput(games, "local"))
        cold = max(cold, throughput(games, "dask"))
        warm = max(warm, throughput(games, "dask", warm=True))
    echo(f"cluster benchmark ({'quick' if quick else 'full'}; {games} random-vs-random games "
         f"of nine men's morris on {WORKERS} workers, best of {repeat})")
    echo(f"  local process pool           {local:7.2f} games/s")
    echo(f"  local Dask cluster           {cold:7.2f} games/s   {cold / local:5.2f}x the pool "
         f"(cluster start-up included)")
    echo(f"  local Dask cluster, started  {warm:7.2f} games/s   {warm / local:5.2f}x the pool")
    return {"games_per_s_pool": local, "games_per_s_dask": cold, "games_per_s_dask_warm": warm,
            "ratio_dask_over_pool": cold / local, "ratio_dask_warm_over_pool": warm / local}


if __name__ == "__main__":
    sys.exit(standalone(bench, __doc__))
