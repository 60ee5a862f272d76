"""``arena sprt``: a sequential test of A against B over colour-swapped pairs.  Option parsing
only: the run, its resumable ``--out`` folder and its summary are :mod:`arena.sprtrun`."""

from __future__ import annotations

import typing

import click

from arena import ranges as R
from arena.cli.common import (Failure, adjudication_options, enable_verbose, engine_arg,
                              fresh_option, limit_options, parse_adjudication_options,
                              parse_isolation, pgn_out_option, read_only_option, time_control,
                              verbose_option, with_time_options)
from arena.cli.watch import watch_option
from arena.clock import SPRT_MOVETIME_MS
from arena.protocol import SEED_MAX

if typing.TYPE_CHECKING:
    from arena.bot import BotSpec
    from arena.openings import BookOrder
    from arena.ratings import SprtModel


def _bot_arg(text: str) -> BotSpec:
    """``FOLDER``, ``FOLDER:K=V,K=V`` (options named in the display name) or an engine
    string (``"cmd=./mybot name=mine option.Depth=3"``) as a bot spec."""
    from arena.bot import load_bot

    engine = engine_arg(text)
    if engine is not None:
        return engine
    folder, sep, opts = text.rpartition(":")
    if not sep or "=" not in opts:
        return load_bot(text)
    options: dict[str, str] = {}
    for item in opts.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise Failure(f"bad bot options in {text!r}: expected FOLDER:KEY=VALUE,KEY=VALUE")
        options[key.strip()] = value.strip()
    import dataclasses

    spec = load_bot(folder, options=options)
    shown = ",".join(f"{k}={v}" for k, v in options.items())
    return dataclasses.replace(spec, name=f"{spec.name}({shown})")


@click.command()
@click.argument("bot_a", metavar="A")
@click.argument("bot_b", metavar="B")
@click.option("--elo0", type=click.FloatRange(-R.ELO_BOUND, R.ELO_BOUND), default=0.0,
              show_default=True, help="Elo of H0 (A - B), in the --model's Elo.")
@click.option("--elo1", type=click.FloatRange(-R.ELO_BOUND, R.ELO_BOUND), default=10.0,
              show_default=True, help="Elo of H1 (A - B), in the --model's Elo.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Chance of accepting H1 when H0 holds.")
@click.option("--beta", type=float, default=0.05, show_default=True,
              help="Chance of accepting H0 when H1 holds.")
@click.option("--model", type=click.Choice(["logistic", "normalized"]), default="logistic",
              show_default=True,
              help="How --elo0/--elo1 are read: logistic Elo (expected score) or normalised "
                   "Elo (nElo: score over its spread, measured on the pairs), as in fishtest.")
@click.option("--variant", "variants", multiple=True, metavar="V",
              help="Variant preset name or YAML file (default nine-mens-morris). Repeatable: "
                   "pairs rotate over the variants (pair 1 the first, pair 2 the second, "
                   "...); the test pools them, and the summary shows each one too.")
@with_time_options(SPRT_MOVETIME_MS, "fast, as a test takes hundreds to thousands of games; "
                                     "tournament files and 'arena play' use 1000")
@limit_options
@click.option("--max-pairs", type=click.IntRange(R.SPRT_PAIRS.low, R.SPRT_PAIRS.high),
              default=2000, show_default=True, help="Stop undecided after this many pairs.")
@click.option("--opening-turns", type=click.IntRange(R.OPENING_TURNS.low, R.OPENING_TURNS.high),
              default=None,
              help="Random legal turns played before the bots, shared by both games of a pair "
                   "(default 4; not with --book).")
@click.option("--book", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Openings from FILE instead: one opening a line (turns in the protocol's "
                   "notation, '#' comments), shared by both games of a pair.")
@click.option("--book-order", type=click.Choice(["sequential", "random"]),
              default="sequential", show_default=True,
              help="Book lines in file order, or shuffled by the seed; every line is used "
                   "before any repeats.")
@click.option("--seed", type=click.IntRange(0, SEED_MAX), default=None,
              help="Seed of the openings and games (default: random; a resumed run keeps its own).")
@click.option("-o", "--output", "--out", "out", type=click.Path(file_okay=False), default=None,
              metavar="DIR",
              help="Also append every game to DIR/games.jsonl (for 'arena rate' / 'arena "
                   "report'); a rerun resumes it.")
@fresh_option("(with --output) the games of an earlier run in DIR, instead of resuming it,")
@pgn_out_option("(as cutechess's -pgnout)")
@click.option("--restart-bots", type=click.Choice(["per-game", "per-pairing"]),
              default="per-game", show_default=True,
              help="A fresh process for every game, or each bot's process kept for the next "
                   "game (much faster for quick bots; state a bot keeps carries over).")
@click.option("-j", "--workers", type=click.IntRange(1, R.workers_range().high), default=1,
              show_default=True,
              help="Games played at once (2 plays both games of a pair together; at most "
                   f"{R.WORKERS_PER_CPU} per CPU core).")
@read_only_option
@adjudication_options
@watch_option("OUT; needs --out")
@verbose_option
def sprt(bot_a: str, bot_b: str, elo0: float, elo1: float, alpha: float, beta: float,
         model: str, variants: tuple[str, ...], movetime: int | None, clock: str | None,
         handshake: int, margin: int, cpu_clock: bool, charge: str, isolation: str | None,
         nodes: int | None, depth: int | None, max_pairs: int,
         opening_turns: int | None, book: str | None, book_order: str, seed: int | None,
         out: str | None, pgn_out: str | None, workers: int, fresh: bool,
         restart_alias: bool,
         restart_bots: str, read_only: tuple[str, ...], adj_draw: str | None,
         adj_resign: str | None, adj_max_turns: int | None, adj_tablebase: str | None,
         watch: bool, verbose: int) -> None:
    """Is A better than B?  Play colour-swapped pairs until a sequential test decides.

    A and B are bot folders, optionally with options: bots/alphabeta:Depth=3 (checked
    against the options the bot declares before the first game), or engine strings as
    cutechess names engines: "cmd='./mybot --fast' name=fast option.Depth=3".  After each
    pair the generalized SPRT's log-likelihood ratio (pentanomial; logistic or normalised
    Elo, see --model) is printed with its bounds (on a terminal: one progress line,
    redrawn); when the LLR leaves them, H1 (Elo >= elo1) is favoured over H0 (Elo <= elo0),
    or H0 over H1, at the error rates alpha and beta: a verdict, not a proof of the bound.
    A summary ends the run: games and W-D-L, the pentanomial counts, Elo and nElo with 95%
    intervals, LOS, LLR with its bounds, each variant's figures when several rotate, and
    the verdict.  Exit status 0 with a verdict, 1 if --max-pairs ran out first, 130 when
    interrupted (Ctrl-C or SIGTERM).

    With --out, OUT belongs to one run at a time, and running the same command again resumes
    it: the games already in OUT/games.jsonl are counted, not played again (other settings
    are refused, naming them, unless --fresh).
    """
    import dataclasses
    import sys
    from pathlib import Path

    from arena.cli.watch import start_beside, stop_beside
    from arena.openings import load_book
    from arena.sprtrun import SprtRun, run_sprt
    from arena.variants import load_variant

    tc = time_control(movetime, clock, handshake, margin, default_movetime=SPRT_MOVETIME_MS,
                      cpu_clock=cpu_clock, charge=charge, nodes=nodes, depth=depth)
    sandbox = parse_isolation(isolation, read_only)
    rotation = tuple(load_variant(v) for v in variants or ("nine-mens-morris",))
    names = [v.name for v in rotation]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise Failure(f"--variant {twice} is given twice (pairs rotate over distinct variants)")
    if book is not None and opening_turns is not None:
        raise Failure("use --book or --opening-turns, not both")
    turns = 4 if opening_turns is None else opening_turns
    for rules in rotation:
        if book is None and turns > rules.placement_turns:
            raise Failure(f"--opening-turns: at most {rules.placement_turns} for {rules.name} "
                          f"(its placement phase: 2 x {rules.men} men), got {turns}")
    # a book is checked in every variant (each line legal in each); its openings are the same
    openings = [load_book(book, rules) for rules in rotation][0] if book is not None else None
    a, b = _bot_arg(bot_a), _bot_arg(bot_b)
    if a.name == b.name:
        b = dataclasses.replace(b, name=f"{b.name} (B)")
    for spec in (a, b):
        refused = [n for n in names if spec.variants and n not in spec.variants]
        if refused:
            raise Failure(f"--variant {refused[0]}: {spec.name} plays only "
                          f"{', '.join(spec.variants)}")
    run = SprtRun(a, b, rotation[0], tc, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta,
                  model=typing.cast("SprtModel", model),
                  opening_turns=0 if openings is not None else turns, book=openings,
                  book_order=typing.cast("BookOrder", book_order),
                  book_name=book or "", isolation=sandbox, restart=restart_bots,
                  variants=rotation if len(rotation) > 1 else (),
                  adjudicate=parse_adjudication_options(adj_draw, adj_resign, adj_max_turns,
                                                        adj_tablebase))
    run.new_test()  # bad hypotheses are refused before any bot starts
    if watch and out is None:
        raise Failure("--watch follows the folder of --out DIR: give --out too")
    enable_verbose(verbose)
    page = start_beside(Path(out)) if watch and out is not None else None
    try:
        outcome = run_sprt(run, max_pairs=max_pairs, workers=workers, seed=seed,
                           folder=None if out is None else Path(out), shown=out or "",
                           restart=fresh or restart_alias, out=sys.stdout, console=sys.stderr,
                           pgn_out=None if pgn_out is None else Path(pgn_out))
    finally:
        if page is not None:
            stop_beside(page)
    sys.exit(outcome.status)
