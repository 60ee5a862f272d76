"""``arena run``: play or resume the tournament a YAML file describes, or the one a
cutechess-cli / fastchess command line describes (``-engine ... -each tc=... -rounds 50``,
translated by :mod:`arena.compat` into the file's mapping and checked as a file is)."""

from __future__ import annotations

from typing import Any

import click

from arena import ranges as R
from arena.cli.common import (Failure, fresh_option, pgn_out_option, verbose_option,
                              warn_isolation)
from arena.cli.watch import watch_option


#: ``ctx.meta`` key of the cutechess options picked out of the arguments
_CUTECHESS = "arena.run.cutechess"


class _RunCommand(click.Command):
    """``arena run`` takes cutechess's single-dash options beside its own: they are picked
    out (:func:`arena.compat.split_command_line`) before click parses the rest."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from arena.compat import split_command_line

        groups, rest = split_command_line(args)
        ctx.meta[_CUTECHESS] = groups
        return super().parse_args(ctx, rest)


def _epilog() -> str:
    from arena.compat import OPTIONS

    rows = "\n".join(f"  {name:<13} {what}" for name, what in OPTIONS.items())
    return ("Without TOURNAMENT.yaml, from cutechess-cli's and fastchess's options (single "
            "dash, key=value words; docs/TOURNAMENTS.md, For engine authors):\n\n\b\n"
            "  arena run -engine cmd=./a name=a -engine cmd=./b name=b \\\n"
            "    -each tc=10+0.1 proto=morris -games 2 -rounds 50 -repeat -concurrency 2 "
            "\\\n    -openings file=book.pgn format=pgn order=random \\\n"
            "    -draw movenumber=20 movecount=4 score=10 -pgnout out.pgn\n\n"
            "The results go to results/<-event, else 'cutechess'>; the same command line "
            "again resumes.  Each option and the setting it becomes:\n\n\b\n" + rows +
            "\n\nAn option without a Morris meaning (-ponder, -pgnin, -noswap, proto=uci, "
            "book=...) is refused in one line saying why.  --as-yaml prints the tournament "
            "file the options make.")


@click.command(cls=_RunCommand, epilog=_epilog())
@click.argument("config_file", metavar="[TOURNAMENT.yaml]", required=False)
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
@watch_option("RESULTS")
@click.option("--as-yaml", is_flag=True,
              help="With cutechess options: print the tournament file they make (checked; "
                   "with -sprt, the arena sprt command) and exit.")
@verbose_option
def run(config_file: str | None, fresh: bool, restart_alias: bool, workers: int | None,
        output: str | None, executor: str | None, scheduler: str | None,
        ship_bots: bool | None, format_: str | None, rounds: int | None,
        pgn_out: str | None, watch: bool, as_yaml: bool, verbose: int) -> None:
    """Run the tournament described by TOURNAMENT.yaml, or resume it; or the one given by
    cutechess-cli's options (below).

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

    from arena.cli.watch import start_beside, stop_beside
    from arena.config import load_config, with_executor
    from arena.tournament import (INTERRUPTED_STATUS, LOG_FILE, format_standings,
                                   run_tournament)

    groups = click.get_current_context().meta.get(_CUTECHESS) or []
    if groups:
        if config_file is not None:
            raise Failure(f"a tournament file ({config_file}) or cutechess options "
                          f"({groups[0][0]} ...), not both")
        config, verbose = _from_cutechess(groups, workers=workers, format_type=format_,
                                          rounds=rounds, verbose=verbose, as_yaml=as_yaml)
    elif config_file is None:
        raise Failure("expected TOURNAMENT.yaml, or cutechess-cli's options (-engine "
                      "cmd=./a -engine cmd=./b -each tc=10+0.1 ...; see arena run --help)")
    elif as_yaml:
        raise Failure("--as-yaml prints what cutechess options make: give -engine ... "
                      "instead of a tournament file")
    else:
        config = load_config(config_file, workers=workers, format_type=format_,
                             rounds=rounds)
    if output is not None:
        config = dataclasses.replace(config, output=Path(output))
    if pgn_out is not None:
        config = dataclasses.replace(config, pgn_out=Path(pgn_out))
    if executor is not None or scheduler is not None or ship_bots is not None:
        config = with_executor(config, kind=executor, scheduler=scheduler, ship_bots=ship_bots)
    warn_isolation(config.isolation)
    from arena.errors import ArenaError

    page = start_beside(config.output) if watch else None
    try:
        result = run_tournament(config, restart=fresh or restart_alias,
                                log_level=(logging.DEBUG if verbose >= 2 else
                                           logging.INFO if verbose else logging.WARNING))
    except ArenaError as e:
        if groups and "new name" in str(e):  # a changed command line: its name is -event's
            raise Failure(f"{e} (-event NAME; or --fresh)") from None
        raise
    finally:
        if page is not None:
            stop_beside(page)
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


def _from_cutechess(groups: list[tuple[str, list[str]]], *, workers: int | None,
                    format_type: str | None, rounds: int | None, verbose: int,
                    as_yaml: bool) -> tuple[Any, int]:
    """The configuration cutechess's options make (:func:`arena.compat.tournament_mapping`),
    checked by :func:`arena.config.parse_config` as a tournament file's mapping is, with a
    message naming the option; with ``as_yaml`` the file is printed and the command ends."""
    from arena.compat import explain, tournament_mapping
    from arena.config import parse_config
    from arena.errors import ConfigError

    translation = tournament_mapping(groups)
    data = translation.data
    if translation.sprt is not None:  # a test, not a tournament: arena sprt
        _sprt(translation, workers=workers, verbose=verbose, as_yaml=as_yaml)
    if format_type is not None or rounds is not None:  # --format / --rounds, as for a file
        fm = dict(data.get("format", {"type": "round-robin"}))
        if format_type is not None and format_type != fm.get("type"):
            fm = {"type": format_type}
        if rounds is not None:
            fm["rounds"] = rounds
        data["format"] = fm
    try:
        config = parse_config(data, workers=workers)
    except ConfigError as e:
        raise Failure(explain(str(e), translation.labels)) from None
    if as_yaml:
        import yaml

        click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True,
                                  default_flow_style=None, width=100), nl=False)
        raise SystemExit(0)
    return config, max(verbose, translation.verbose)


def _sprt(translation: Any, *, workers: int | None, verbose: int, as_yaml: bool) -> None:
    """cutechess's ``-sprt``: ``arena sprt`` with the same settings
    (:func:`arena.compat.sprt_arguments`; with ``as_yaml``, its command line is printed)."""
    import shlex

    from arena.cli.sprt import sprt
    from arena.compat import sprt_arguments

    ctx = click.get_current_context()
    args = sprt_arguments(translation)
    for name, flag in (("output", "--output"), ("pgn_out", "--pgn-out")):
        if ctx.params.get(name) is not None:  # arena run's own -o / --pgn-out win
            args += [flag, str(ctx.params[name])]
    if workers is not None:
        args += ["-j", str(workers)]
    if ctx.params.get("fresh"):
        args.append("--fresh")
    verbose = max(verbose, translation.verbose)
    args += ["-" + "v" * verbose] if verbose else []
    if as_yaml:
        click.echo("arena sprt " + " ".join(shlex.quote(a) for a in args))
        raise SystemExit(0)
    # its own context, with arena's help options: click keeps a command's help option once
    # made, so a context without them would take -h/-help from arena sprt in this process
    code = sprt.main(args=args, prog_name="arena sprt", standalone_mode=False,
                     help_option_names=ctx.help_option_names)
    raise SystemExit(code if isinstance(code, int) else 0)
