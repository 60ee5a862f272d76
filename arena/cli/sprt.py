"""``arena sprt``: a sequential test of A against B over colour-swapped pairs, with the pairs'
runner and the resumable ``--out`` folder (its settings in ``sprt.json``, held under a lock)."""

from __future__ import annotations

import typing

import click

from arena import ranges as R
from arena.cli.common import Failure
from arena.protocol import SEED_MAX
from arena.clock import SPRT_MOVETIME_MS

if typing.TYPE_CHECKING:
    from pathlib import Path

    from arena.bot import BotSpec
    from arena.clock import TimeControl
    from arena.ratings import SprtTest
    from arena.records import GameRecord
    from arena.variants import Variant


def _bot_arg(text: str) -> BotSpec:
    """``FOLDER`` or ``FOLDER:K=V,K=V`` as a bot spec (options named in the display name)."""
    from arena.bot import load_bot

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


def _sprt_game_id(tag: str, pair: int, game: int) -> str:
    """``<tag>-<pair>a`` (A has white) or ``<tag>-<pair>b`` (B has white)."""
    return f"{tag}-{pair}{'ab'[game]}"


def _sprt_pairs(a: BotSpec, b: BotSpec, variant: Variant, tc: TimeControl, *, seed: int,
                opening_turns: int, max_pairs: int, workers: int, games_file: Path | None,
                tag: str, done: typing.Mapping[str, GameRecord] | None = None,
                ) -> typing.Generator[tuple[int, float], None, None]:
    """Play colour-swapped pairs (``workers`` games at once) and yield ``(pair, A's points)``
    in order; each game is appended to ``games_file`` (if any) as it finishes.

    A game whose id is in ``done`` (the records of an earlier run of the same test, by game
    id) is not played again: its recorded result is counted in its place.  Closing the
    generator abandons the games not yet started and waits for the running ones.
    """
    import functools
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    from arena.records import GameRecord, append_record
    from arena.referee import play_game
    from arena.schedule import derive_seed, random_opening

    known = done or {}

    @functools.lru_cache(maxsize=1)  # jobs come pair by pair: both games share one opening
    def opening_of(k: int) -> tuple[str, ...]:
        return random_opening(variant, opening_turns, derive_seed(seed, "opening", k))

    def play(k: int, game: int, opening: tuple[str, ...]) -> GameRecord:
        white, black = (a, b) if game == 0 else (b, a)
        rec = play_game(white, black, variant, tc, opening=opening,
                        game_id=_sprt_game_id(tag, k, game),
                        seed=derive_seed(seed, "game", k, game))
        rec.tournament, rec.round, rec.pair = tag, k, k
        return rec

    jobs = ((k, g) for k in range(1, max_pairs + 1) for g in (0, 1))
    # (pair, game, its record to come, whether it is played now rather than recorded before)
    in_flight: deque[tuple[int, int, Future[GameRecord], bool]] = deque()
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        points = 0.0
        while True:
            while len(in_flight) < workers:
                job = next(jobs, None)
                if job is None:
                    break
                k, g = job
                recorded = known.get(_sprt_game_id(tag, k, g))
                if recorded is not None:
                    future: Future[GameRecord] = Future()
                    future.set_result(recorded)
                    in_flight.append((k, g, future, False))
                    continue
                in_flight.append((k, g, pool.submit(play, k, g, opening_of(k)), True))
            if not in_flight:
                return
            k, g, future, fresh = in_flight.popleft()
            rec = future.result()
            if fresh and games_file is not None:
                append_record(games_file, rec)
            points += rec.score("white" if g == 0 else "black")
            if g == 1:
                yield k, points
                points = 0.0
    finally:
        for _, _, future, _ in in_flight:
            future.cancel()
        pool.shutdown(wait=True)


#: in ``sprt --out DIR``: the settings of the run whose games ``DIR/games.jsonl`` holds
SPRT_FILE = "sprt.json"


def _sprt_settings(a: BotSpec, b: BotSpec, rules: Variant, *, movetime: int, elo0: float,
                   elo1: float, alpha: float, beta: float, opening_turns: int,
                   seed: int) -> dict[str, typing.Any]:
    """Everything that decides an SPRT run's games and statistics, as stored in
    ``sprt.json`` (JSON values, so that a stored copy compares equal).  ``--max-pairs`` and
    ``--workers`` are not in it: a run may be resumed with others."""
    import json

    def bot(spec: BotSpec) -> dict[str, typing.Any]:
        return {"name": spec.name, "path": spec.path, "options": dict(spec.options)}

    settings = {"a": bot(a), "b": bot(b), "variant": {"name": rules.name, **rules.to_params()},
                "movetime": movetime, "elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta,
                "opening_turns": opening_turns, "seed": seed}
    loaded: dict[str, typing.Any] = json.loads(json.dumps(settings))
    return loaded


def _sprt_resume(folder: Path, shown: str,
                 make_settings: typing.Callable[[int], dict[str, typing.Any]],
                 seed: int | None, restart: bool) -> tuple[int, dict[str, GameRecord]]:
    """For ``sprt --out``, holding the folder's lock: the seed to use and the records of the
    games already played (by id), after checking that ``sprt.json`` (written here for a new
    run) holds the same settings (``make_settings(seed)``).  Without ``--seed`` a resumed
    run takes the stored one.  ``restart`` discards the files an earlier run wrote.

    :raises Failure: the folder holds another run's games (or a tournament's).
    """
    import json
    import random
    from datetime import datetime, timezone

    from arena.records import atomic_write
    from arena.tournament import CONFIG_FILE, GAMES_FILE, REJECTED_FILE, read_repaired_games

    if (folder / CONFIG_FILE).is_file():
        raise Failure(f"{shown} is a tournament's results folder: choose another --out")
    stored_path, games, side = folder / SPRT_FILE, folder / GAMES_FILE, folder / REJECTED_FILE
    if restart:
        for path in (games, side, stored_path):
            path.unlink(missing_ok=True)
    stored: dict[str, typing.Any] | None = None
    if stored_path.exists():
        try:
            data = json.loads(stored_path.read_text(encoding="utf-8"))
            stored = data["settings"] if isinstance(data, dict) else None
        except (OSError, ValueError, KeyError):
            stored = None
        if not isinstance(stored, dict) or not isinstance(stored.get("seed"), int):
            raise Failure(f"{stored_path} is unreadable; use --restart to start over")
    elif games.exists() and games.stat().st_size:
        raise Failure(f"{games} holds games of no 'arena sprt' run (no {SPRT_FILE}); use "
                      f"--restart to discard them, or another --out")
    if seed is None:
        seed = stored["seed"] if stored is not None else random.SystemRandom().randrange(
            SEED_MAX + 1)
    settings = make_settings(seed)
    if stored is None:
        text = json.dumps({"settings": settings, "created": datetime.now(timezone.utc)
                           .isoformat(timespec="seconds")}, indent=2) + "\n"
        atomic_write(stored_path, text.encode("utf-8"))
        return seed, {}
    changed = [k for k in sorted(set(stored) | set(settings)) if stored.get(k) != settings.get(k)]
    if changed:
        raise Failure(f"{shown} holds an SPRT run with other settings (changed: "
                      f"{', '.join(changed)}); use --restart to discard its games, or another "
                      f"--out")
    moved, kept = read_repaired_games(folder)
    if moved:
        click.echo(f"warning: {games}: moved {moved} unreadable line{'s' if moved > 1 else ''} "
                   f"to {side}; any game they held is played again", err=True)
    done: dict[str, GameRecord] = {}
    for rec in kept:
        done.setdefault(rec.game_id, rec)
    return seed, done


@click.command()
@click.argument("bot_a", metavar="A")
@click.argument("bot_b", metavar="B")
@click.option("--elo0", type=click.FloatRange(-R.ELO_BOUND, R.ELO_BOUND), default=0.0,
              show_default=True, help="Elo of H0 (A - B).")
@click.option("--elo1", type=click.FloatRange(-R.ELO_BOUND, R.ELO_BOUND), default=10.0,
              show_default=True, help="Elo of H1 (A - B).")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Chance of accepting H1 when H0 holds.")
@click.option("--beta", type=float, default=0.05, show_default=True,
              help="Chance of accepting H0 when H1 holds.")
@click.option("--variant", default="nine-mens-morris", show_default=True,
              help="Variant preset name or YAML file.")
@click.option("--movetime", type=click.IntRange(R.MOVETIME_MS.low, R.MOVETIME_MS.high),
              default=SPRT_MOVETIME_MS, show_default=True,
              help="Milliseconds per move (fast, as a test takes hundreds to thousands of "
                   "games; tournament files and 'arena play' default to 1000).")
@click.option("--max-pairs", type=click.IntRange(R.SPRT_PAIRS.low, R.SPRT_PAIRS.high),
              default=2000, show_default=True, help="Stop undecided after this many pairs.")
@click.option("--opening-turns", type=click.IntRange(R.OPENING_TURNS.low, R.OPENING_TURNS.high),
              default=4, show_default=True,
              help="Random legal turns played before the bots, shared by both games of a pair.")
@click.option("--seed", type=click.IntRange(0, SEED_MAX), default=None,
              help="Seed of the openings (default: random).")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Also append every game to OUT/games.jsonl (for 'arena rate' / 'arena report').")
@click.option("--restart", is_flag=True,
              help="With --out: discard the games of an earlier run in OUT instead of resuming it.")
@click.option("-j", "--workers", type=click.IntRange(1, R.workers_range().high), default=1,
              show_default=True,
              help="Games played at once (2 plays both games of a pair together; at most "
                   f"{R.WORKERS_PER_CPU} per CPU core).")
def sprt(bot_a: str, bot_b: str, elo0: float, elo1: float, alpha: float, beta: float,
         variant: str, movetime: int, max_pairs: int, opening_turns: int, seed: int | None,
         out: str | None, workers: int, restart: bool) -> None:
    """Is A better than B?  Play colour-swapped pairs until a sequential test decides.

    A and B are bot folders, optionally with options: bots/alphabeta:Depth=3.  After each
    pair the generalized SPRT's log-likelihood ratio (pentanomial, logistic Elo) is printed
    with its bounds; H1 (A is elo1 better) or H0 (A is at most elo0 better) is accepted when
    the LLR leaves them.  Exit status 0 with a verdict, 1 if --max-pairs ran out first.

    With --out, OUT belongs to one run at a time, and running the same command again resumes
    it: the games already in OUT/games.jsonl are counted, not played again (other settings
    are refused unless --restart).
    """
    import contextlib
    import dataclasses
    import random
    from pathlib import Path

    from arena.clock import TimeControl
    from arena.ratings import SprtTest
    from arena.variants import load_variant

    test = SprtTest(elo0, elo1, alpha, beta)
    rules = load_variant(variant)
    if opening_turns > rules.placement_turns:
        raise Failure(f"--opening-turns: at most {rules.placement_turns} for {rules.name} (its "
                      f"placement phase: 2 x {rules.men} men), got {opening_turns}")
    a, b = _bot_arg(bot_a), _bot_arg(bot_b)
    if a.name == b.name:
        b = dataclasses.replace(b, name=f"{b.name} (B)")
    tc = TimeControl(movetime_ms=movetime)
    with contextlib.ExitStack() as owned:
        games_file: Path | None = None
        done: dict[str, GameRecord] = {}
        if out is not None:
            from arena.lock import FolderLock
            from arena.tournament import GAMES_FILE

            folder = Path(out)
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise Failure(f"cannot create {out}: {e.strerror}") from None
            owned.enter_context(FolderLock(folder, shown=out))  # held until the command ends
            seed, done = _sprt_resume(folder, out, lambda s: _sprt_settings(
                a, b, rules, movetime=movetime, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta,
                opening_turns=opening_turns, seed=s), seed, restart)
            games_file = folder / GAMES_FILE
        elif seed is None:
            seed = random.SystemRandom().randrange(SEED_MAX + 1)
        _sprt_run(test, a, b, rules, tc, seed=seed, movetime=movetime, max_pairs=max_pairs,
                  opening_turns=opening_turns, workers=workers, games_file=games_file,
                  done=done)


def _sprt_run(test: SprtTest, a: BotSpec, b: BotSpec, rules: Variant, tc: TimeControl, *,
              seed: int, movetime: int, max_pairs: int, opening_turns: int, workers: int,
              games_file: Path | None, done: dict[str, GameRecord]) -> None:
    """The body of ``arena sprt`` once its seed and ``--out`` folder are settled: print the
    test, feed it pairs until it decides, exit 1 when ``max_pairs`` run out first."""
    import contextlib
    import sys

    from arena.ratings import pentanomial_estimate
    from arena.report import format_estimate

    elo0, elo1, alpha, beta = test.elo0, test.elo1, test.alpha, test.beta
    tag = f"sprt-{seed}"
    lower, upper = test.bounds
    click.echo(f"SPRT {a.name} vs {b.name}: H0 Elo <= {elo0:g}, H1 Elo >= {elo1:g}, "
               f"alpha {alpha:g}, beta {beta:g}, bounds [{lower:.2f}, {upper:.2f}]; "
               f"{rules.name}, {movetime} ms/move, seed {seed}")
    resumed = sum(1 for game_id in done if game_id.startswith(f"{tag}-"))
    if resumed:
        click.echo(f"resuming: {resumed} games already in {games_file} are not played "
                   f"again (their results are counted)")
    pairs = _sprt_pairs(a, b, rules, tc, seed=seed, opening_turns=opening_turns,
                        max_pairs=max_pairs, workers=workers, games_file=games_file,
                        tag=tag, done=done)
    with contextlib.closing(pairs):
        for k, points in pairs:
            test.add_pair(points)
            est = format_estimate(pentanomial_estimate(test.counts), nelo=False, los=False)
            click.echo(f"pair {k:>4}: {points:g}/2  pairs {'-'.join(map(str, test.counts))}  "
                       f"{est}  LLR {test.llr:+.2f} [{lower:.2f}, {upper:.2f}]")
            if test.verdict == "H1":
                click.echo(f"H1 accepted after {k} pairs: {a.name} is stronger than {b.name} "
                           f"(Elo >= {elo1:g} favoured)")
                return
            if test.verdict == "H0":
                click.echo(f"H0 accepted after {k} pairs: {a.name} is not {elo1:g} Elo "
                           f"stronger than {b.name} (Elo <= {elo0:g} favoured)")
                return
    click.echo(f"no decision after {max_pairs} pairs (LLR {test.llr:+.2f})")
    sys.exit(1)
