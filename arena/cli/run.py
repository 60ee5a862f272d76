"""``arena run``: play or resume the tournament a YAML file describes."""

from __future__ import annotations

import click

from arena import ranges as R
from arena.cli.common import (Failure, fresh_option, pgn_out_option, verbose_option,
                              warn_isolation)


@click.command()
@click.argument("config_file", metavar="TOURNAMENT.yaml")
@fresh_option("the games already in the results folder")
@click.option("-j", "--workers", type=click.IntRange(1, R.workers_range().high), default=None,
              help="Games played at once (default: the file's 'workers', else auto: a core "
                   "per game, less one, less the load; at most "
                   f"{R.WORKERS_PER_CPU} per CPU core).")
@click.option("-o", "--output", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="The results folder (default: the file's 'output', else results/<name>).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default=None,
              help="Where games run: this machine's process pool (local, the default) or a "
                   "Dask cluster (dask; needs the cluster extra, see docs/CLUSTER.md).")
@click.option("--scheduler", default=None, metavar="ADDR",
              help="With dask: 'local' (a local cluster of --workers processes, the default) "
                   "or a scheduler address such as tcp://HOST:8786.")
@click.option("--ship-bots/--shared-bots", "ship_bots", default=None,
              help="With dask: send the bot folders to the workers, or expect them at the same "
                   "path on every worker (the default).")
@click.option("--format", "format_", metavar="TYPE", default=None,
              type=click.Choice(["round-robin", "gauntlet", "match", "swiss", "knockout"]),
              help="The format instead of the file's (round-robin, gauntlet, match, swiss, "
                   "knockout; see docs/TOURNAMENTS.md).")
@click.option("--rounds", type=click.IntRange(1, R.ROUNDS.high), default=None,
              help="format.rounds instead of the file's (a Swiss's rounds; default for a "
                   "Swiss: ceil(log2 N) + 2).")
@pgn_out_option("(as the file's pgn_out; the earlier games it lacks first)")
@verbose_option
def run(config_file: str, fresh: bool, restart_alias: bool, workers: int | None,
        output: str | None, executor: str | None, scheduler: str | None,
        ship_bots: bool | None, format_: str | None, rounds: int | None,
        pgn_out: str | None, verbose: int) -> None:
    """Run the tournament described by TOURNAMENT.yaml, or resume it.

    Games already in results/<name>/games.jsonl are not played again; a changed file is
    refused for an existing results folder unless --fresh is given.  Ctrl-C stops cleanly
    (the games in flight are abandoned; run the same command again to finish).  At the end
    the standings are printed and written to standings.csv, with games.csv and the report.
    The file format is in docs/TOURNAMENTS.md.
    """
    import dataclasses
    import logging
    import sys
    from pathlib import Path

    from arena.config import load_config, with_executor
    from arena.tournament import (INTERRUPTED_STATUS, LOG_FILE, format_standings,
                                   run_tournament)

    config = load_config(config_file, workers=workers, format_type=format_, rounds=rounds)
    if output is not None:
        config = dataclasses.replace(config, output=Path(output))
    if pgn_out is not None:
        config = dataclasses.replace(config, pgn_out=Path(pgn_out))
    if executor is not None or scheduler is not None or ship_bots is not None:
        config = with_executor(config, kind=executor, scheduler=scheduler, ship_bots=ship_bots)
    warn_isolation(config.isolation)
    result = run_tournament(config, restart=fresh or restart_alias,
                            log_level=(logging.DEBUG if verbose >= 2 else
                                       logging.INFO if verbose else logging.WARNING))
    if result.interrupted:
        click.echo(f"interrupted: {result.finished}/{result.total} games saved in "
                   f"{result.folder}; run the same command again to resume", err=True)
        sys.exit(INTERRUPTED_STATUS)
    click.echo(f"{config.name}: {result.finished}/{result.total} games "
               f"({result.played} played now) in {result.folder}")
    # the standings once: the ratings table (points, W-D-L and Elo, with a legend) when the
    # report made it, else the runner's points table
    click.echo("\n" + result.elo if result.elo else format_standings(result.standings))
    if result.report is not None:
        click.echo(f"report: {result.report}")
    if result.failed or result.lost or result.void:
        what = [f"{result.failed} games failed in the referee"] if result.failed else []
        what += [f"{result.lost} games were lost on the cluster"] if result.lost else []
        what += ([f"{result.void} games could not be judged (the machine was too busy to tell "
                  f"whether their bots' moves were in time, twice: fewer workers, or a quieter "
                  f"machine)"] if result.void else [])
        raise Failure(f"{' and '.join(what)} (see {result.folder / LOG_FILE}); run the same "
                      f"command again to play them")
