"""``arena tune``: SPSA tuning of a bot's spin options.  Option parsing only: the run, its
resumable ``--out`` folder and its report are :mod:`arena.tuning`."""

from __future__ import annotations

import click

from arena import ranges as R
from arena.cli.common import (Failure, enable_verbose, fresh_option, parse_isolation,
                              time_control, verbose_option, with_time_options)
from arena.cli.watch import watch_option
from arena.clock import SPRT_MOVETIME_MS
from arena.protocol import SEED_MAX

#: ``--iterations`` and ``--pairs`` (pairs per iteration); a run has at most
#: ``arena.ranges.GAMES_MAX`` games
ITERATIONS = R.Range(1, 1_000_000, "iterations")
PAIRS = R.Range(1, 1000, "pairs")


@click.command()
@click.argument("bot", required=False)
@click.option("--param", "params", multiple=True, metavar="NAME=START,MIN,MAX,C_END[,R_END]",
              help="A spin option to tune (repeatable): its start, bounds, fishtest's c_end "
                   "(the perturbation at the end) and r_end (the learning rate at the end, "
                   "default 0.002).")
@click.option("--iterations", type=click.IntRange(ITERATIONS.low, ITERATIONS.high),
              default=200, show_default=True,
              help="SPSA iterations (each one perturbation and one update).")
@click.option("--pairs", type=click.IntRange(PAIRS.low, PAIRS.high), default=1,
              show_default=True,
              help="Colour-swapped pairs per iteration (a fishtest batch: the schedule "
                   "counts pairs, so c_end and r_end mean the same whatever this is).")
@click.option("--opponent", default=None, metavar="BOT",
              help="Play each perturbed setting against this bot (a colour-swapped pair "
                   "each) instead of against each other.")
@click.option("--variant", default="nine-mens-morris", show_default=True,
              help="Variant preset name or YAML file.")
@with_time_options(SPRT_MOVETIME_MS, "fast, as a tuning run takes thousands of games")
@click.option("--opening-turns", type=click.IntRange(R.OPENING_TURNS.low, R.OPENING_TURNS.high),
              default=4, show_default=True,
              help="Random legal turns played before the bots, shared by a pair's games.")
@click.option("--seed", type=click.IntRange(0, SEED_MAX), default=None,
              help="Seed of the perturbations, rounding, openings and games (default: "
                   "random; a resumed run keeps its own).")
@click.option("-o", "--output", "--out", "out", type=click.Path(file_okay=False), default=None,
              metavar="DIR",
              help="The run's folder (default: tune-<bot folder name>): settings, games, "
                   "pair results and trajectory; the same command again resumes it.")
@fresh_option("the run already in DIR, instead of resuming it,")
@click.option("-j", "--workers", type=click.IntRange(1, R.workers_range().high), default=1,
              show_default=True,
              help="Games played at once (an iteration's games: 2 per pair, 4 with "
                   f"--opponent; at most {R.WORKERS_PER_CPU} per CPU core).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR",
              help="Instead of tuning: write DIR/tune.png (each parameter over the "
                   "iterations) and DIR/tuned.yaml (the values, for a tournament's bots).")
@watch_option("OUT")
@verbose_option
def tune(bot: str | None, params: tuple[str, ...], iterations: int, pairs: int,
         opponent: str | None, variant: str, movetime: int | None, clock: str | None,
         handshake: int, margin: int, cpu_clock: bool, charge: str, isolation: str | None,
         opening_turns: int, seed: int | None, out: str | None, fresh: bool,
         restart_alias: bool, workers: int, report_dir: str | None, watch: bool,
         verbose: int) -> None:
    """Tune BOT's spin options by SPSA, as fishtest and OpenBench do.

    BOT is a bot folder, optionally with fixed options: bots/alphabeta:Depth=3.  Each
    --param names a spin option the bot declares (checked against its handshake before
    any game).  Each iteration plays colour-swapped pairs between theta+c*flip and
    theta-c*flip (or each against --opponent) and moves theta along the result; fishtest's
    schedule (A = 10% of the pairs, alpha 0.602, gamma 0.101) and stochastic rounding of
    the values played.  Off a terminal a line per iteration; on one, a progress line.

    The run lives in --output DIR: tune.json (the settings), games.jsonl (every game, for 'arena
    rate'), pairs.jsonl (every pair's result, appended in order) and trajectory.jsonl
    (theta after each iteration).  The same command again resumes it exactly, even after
    kill -9; other settings are refused, naming them, unless --fresh.  At the end (and
    with 'arena tune --report DIR' at any time) tune.png and tuned.yaml are written.
    Exit status 0 when done, 130 when interrupted (Ctrl-C or SIGTERM).  See docs/TUNING.md.
    """
    import sys
    from pathlib import Path

    if report_dir is not None:
        if bot is not None or params:
            raise Failure("--report DIR takes no BOT nor --param")
        from arena.tuning.report import write_report

        for path in write_report(Path(report_dir)):
            click.echo(f"wrote {path}")
        return
    if bot is None:
        raise Failure("give a BOT to tune (or --report DIR)")
    if not params:
        raise Failure("give at least one --param NAME=START,MIN,MAX,C_END[,R_END]")
    if iterations * pairs * (2 if opponent is None else 4) > R.GAMES_MAX:
        raise Failure(f"--iterations x --pairs: at most {R.GAMES_MAX:,} games in a run, got "
                      f"{iterations * pairs * (2 if opponent is None else 4):,}")
    from arena.cli.sprt import _bot_arg
    from arena.tuning import Spsa, TuneRun, parse_param, run_tune
    from arena.variants import load_variant

    spsa = Spsa(tuple(parse_param(p) for p in params), iterations, pairs)
    tc = time_control(movetime, clock, handshake, margin, default_movetime=SPRT_MOVETIME_MS,
                      cpu_clock=cpu_clock, charge=charge)
    rules = load_variant(variant)
    if opening_turns > rules.placement_turns:
        raise Failure(f"--opening-turns: at most {rules.placement_turns} for {rules.name} (its "
                      f"placement phase: 2 x {rules.men} men), got {opening_turns}")
    spec = _bot_arg(bot)
    run = TuneRun(spec, spsa, rules, tc, opponent=None if opponent is None else _bot_arg(opponent),
                  opening_turns=opening_turns, isolation=parse_isolation(isolation))
    folder = out if out is not None else f"tune-{Path(spec.path).name}"
    enable_verbose(verbose)
    from arena.cli.watch import start_beside, stop_beside

    page = start_beside(Path(folder)) if watch else None
    try:
        outcome = run_tune(run, Path(folder), workers=workers, seed=seed, shown=folder,
                           restart=fresh or restart_alias, out=sys.stdout, console=sys.stderr)
    finally:
        if page is not None:
            stop_beside(page)
    sys.exit(outcome.status)
