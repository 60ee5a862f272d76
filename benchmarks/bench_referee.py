"""Referee speed next to its physical floor, measured side by side in one run.

* the floor: a bare pipe round trip (write a line, read a line) to an echo process of the
  same interpreter, the same kind of process a Python bot is (the median of :data:`ROUNDS`
  runs, alternating with the next figures);
* :meth:`BotProcess.go` against an instant bot (it answers every ``go`` with a fixed move,
  computing nothing): the referee's I/O layer per move.  Pipe and go are measured with the
  same placement of processes on CPUs (:data:`PLACEMENTS`): the target compares them with the
  peer processes on a CPU other than the referee's, where the scheduler puts a woken bot on
  an otherwise idle machine.  Left to the scheduler, either may land on the referee's CPU
  now and then, and a whole round then runs in the other mode (on one CPU, everything is
  serial: a round trip is the two sides' CPU time added up), which made the ratio swing
  between runs; both other placements are printed too, with the referee's CPU time per go,
  which decides the one-CPU case;
* whole games between two ``bots/random`` processes through :func:`play_game`: games/s,
  moves/s, the wall time per move (go -> bestmove, which includes the bot's own work) and the
  referee's own time per move (from ``bestmove`` to the next ``go``: legality, outcome, clock,
  record), and the CPU time of the referee's thread per move (everything it does, I/O included);
* the start floor: the two bots of a game (``bots/random``) started one after the other
  without a sandbox or :class:`BotProcess`: spawn, ``morris`` -> ``morrisok``, ``quit``, exit;
  against the referee's time per game (spawn in the default sandbox, handshake, play,
  shutdown).  Floor and games are measured in turns, so load from elsewhere hits both alike.

Run alone with ``python benchmarks/bench_referee.py [--quick]``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.bot import BotProcess, load_bot  # noqa: E402
from arena.clock import TimeControl  # noqa: E402
from arena.protocol import Go  # noqa: E402
from arena.records import MoveInfo  # noqa: E402
from arena.referee import play_game  # noqa: E402
from arena.rules import Position  # noqa: E402
from arena.sandbox import Isolation  # noqa: E402
from arena.variants import get_variant  # noqa: E402

#: rounds of the pipe and go measurements (each figure is their median)
ROUNDS = 7
#: where the pipe and go measurements run (see :func:`placed`); the first is the target's
PLACEMENTS = ("apart", "free", "one CPU")

ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
INSTANT_BOT = '''\
import sys
out = sys.stdout
for line in sys.stdin:
    word = line.split(" ", 1)[0].strip()
    if word == "morris":
        out.write("id name instant\\nmorrisok\\n")
    elif word == "isready":
        out.write("readyok\\n")
    elif word == "go":
        out.write("bestmove d6\\n")
    elif word == "quit":
        break
    else:
        continue
    out.flush()
'''


def can_place() -> bool:
    """Whether :func:`placed` can pin processes apart: this process may use two CPUs."""
    return len(os.sched_getaffinity(0)) >= 2


@contextlib.contextmanager
def placed(placement: str, peers: Iterable[int]) -> Iterator[None]:
    """Run the block with this thread and the processes ``peers`` placed on CPUs:
    ``apart`` (this thread on one CPU, the peers on another), ``one CPU`` (all on one) or
    ``free`` (where the scheduler puts them; also the others where :func:`can_place` is
    False).  The affinities are restored after.

    :raises OSError: a peer cannot be moved (the figure would be mislabelled)."""
    mine = os.sched_getaffinity(0)
    cpus = sorted(mine)
    pids = list(peers)
    if placement == "free" or not can_place():
        yield
        return
    them = {cpus[1]} if placement == "apart" else {cpus[0]}
    try:
        os.sched_setaffinity(0, {cpus[0]})
        for pid in pids:
            os.sched_setaffinity(pid, them)
        yield
    finally:
        os.sched_setaffinity(0, mine)
        for pid in pids:
            with contextlib.suppress(OSError):  # it may have ended
                os.sched_setaffinity(pid, mine)


def pipe_round_trip_us(n: int, placement: str = "free") -> tuple[float, float]:
    """Mean µs to write a protocol-sized line to an echo process and read it back: wall
    time and this thread's CPU time."""
    proc = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin and proc.stdout
    wfd, rfd = proc.stdin.fileno(), proc.stdout.fileno()
    line = b"position " + b"." * 24 + b" w 9 9 0 - - 0 moves d6 d2\n"
    try:
        with placed(placement, [proc.pid]):
            for _ in range(50):  # warm up
                os.write(wfd, line)
                _read_exact(rfd, len(line))
            c0, t0 = time.thread_time(), time.perf_counter()
            for _ in range(n):
                os.write(wfd, line)
                _read_exact(rfd, len(line))
            return ((time.perf_counter() - t0) / n * 1e6, (time.thread_time() - c0) / n * 1e6)
    finally:
        proc.stdin.close()
        proc.wait()
        proc.stdout.close()


def _read_exact(fd: int, size: int) -> None:
    got = 0
    while got < size:
        chunk = os.read(fd, size - got)
        if not chunk:
            raise EOFError
        got += len(chunk)


def botprocess_go_us(n: int, folder: Path, *, as_referee: bool = True,
                     placement: str = "free",
                     isolation: Optional[Isolation] = None) -> tuple[float, float]:
    """Mean µs of :meth:`BotProcess.go` (position + go -> bestmove) to an instant bot: wall
    time and this thread's CPU time.

    ``as_referee``: as a game calls it, two bots in turn, each move's CPU reading taken
    while the other bot thinks (``cpu_now=False``, ``after_send``, as the referee's
    ``_while_waiting`` does); else one bot, its CPU read at once, on the path from reply
    to request.  ``isolation``: the bots' (default: :meth:`Isolation.default`)."""
    variant = get_variant("nine-mens-morris")
    spec = load_bot(folder)
    with BotProcess(spec, isolation=isolation) as a, BotProcess(spec, isolation=isolation) as b:
        bots = (a, b) if as_referee else (a,)
        for bp in bots:
            bp.start()
        for bp in bots:
            bp.read_handshake(10.0)
            bp.new_game(variant.name, variant.to_params(), {}, 10.0)
        text = Position(variant).to_text()
        go = Go(movetime=1000)
        if as_referee:
            def turn() -> None:
                a.go(text, ["d6", "d2"], go, 5.0, cpu_now=False, after_send=b.take_cpu)
                b.go(text, ["d6", "d2"], go, 5.0, cpu_now=False, after_send=a.take_cpu)
        else:
            def turn() -> None:
                a.go(text, ["d6", "d2"], go, 5.0)
                a.go(text, ["d6", "d2"], go, 5.0)
        peers = [pid for bp in bots if bp.sandbox is not None for pid in bp.sandbox.processes()]
        with placed(placement, peers):
            for _ in range(25):
                turn()
            c0, t0 = time.thread_time(), time.perf_counter()
            for _ in range(n // 2):
                turn()
            moves = n // 2 * 2
            return ((time.perf_counter() - t0) / moves * 1e6,
                    (time.thread_time() - c0) / moves * 1e6)


def referee_hot_us(games: int = 100, seed: int = 1) -> float:
    """Mean µs of the referee's per-move work replayed without bots, in a tight loop: the
    same calls as :class:`arena.referee._Game` makes between two ``bestmove``\ s (clock,
    position text, ``position`` line, legality and push, outcome, the move's record), on
    random games.  In a real game the same code runs about 3x slower: between two of its
    moves the bots run, and the referee's code and data leave the CPU's caches."""
    import random

    from arena.clock import GameClock
    from arena.protocol import format_position

    variant = get_variant("nine-mens-morris")
    rng = random.Random(seed)
    played = []
    for _ in range(games):
        pos = Position(variant)
        texts: list[str] = []
        while pos.outcome() is None and len(texts) < 400:
            move = rng.choice(pos.legal_moves())
            texts.append(str(move))
            pos.push(move)
        played.append(texts)
    tc = TimeControl(movetime_ms=1000)
    n = 0
    t0 = time.perf_counter()
    for texts in played:
        pos, clock, moves = Position(variant), GameClock(tc), list[str]()
        for text in texts:
            if pos.outcome() is not None:
                break
            color = pos.turn
            clock.deadline_ms(color)
            clock.wall_deadline_ms(color)
            format_position(pos.to_text(), moves)
            clock.go()
            clock.charge(color, 1.0)
            move = pos.push_text(text)
            moves.append(str(move))
            MoveInfo(str(move), 1.0, 1.0)
            n += 1
    return (time.perf_counter() - t0) / n * 1e6


def _bot_start_exit(folder: Path) -> None:
    """Spawn the bot in ``folder`` bare (no sandbox), read its handshake, ``quit``, reap it."""
    proc = subprocess.Popen([sys.executable, "bot.py"], cwd=folder, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin and proc.stdout
    proc.stdin.write(b"morris 1\n")
    got = b""
    while b"morrisok" not in got:
        chunk = proc.stdout.read(4096)
        if not chunk:
            raise RuntimeError(f"{folder} exited during the handshake")
        got += chunk
    proc.stdin.write(b"quit\n")
    proc.stdin.close()
    proc.wait()
    proc.stdout.close()


def start_floor_ms(folder: Path) -> float:
    """ms to start the two bots of a game one after the other (spawn, handshake, exit)."""
    t0 = time.perf_counter()
    for _ in range(2):
        _bot_start_exit(folder)
    return (time.perf_counter() - t0) * 1000


def games(n: int, variant: str) -> dict[str, float]:
    """Play ``n`` games of random vs random (default isolation), each after one measurement
    of the start floor; speeds, per-move costs and the floor."""
    folder = ROOT / "bots" / "random"
    spec = load_bot(folder)
    tc = TimeControl(movetime_ms=1000)
    plies = 0
    go_ms = 0.0
    loop_s = 0.0
    total = 0.0
    floor_ms = 0.0
    cpu_s = 0.0
    stamps: list[float] = []
    cpu_stamps: list[float] = []

    def on_move(pos: Position, info: MoveInfo) -> None:
        stamps.append(time.perf_counter())
        cpu_stamps.append(time.thread_time())

    _bot_start_exit(folder)  # warm the file cache: the first start is not representative
    for seed in range(n):
        floor_ms += start_floor_ms(folder)
        stamps.clear()
        cpu_stamps.clear()
        t0 = time.perf_counter()
        record = play_game(spec, spec, variant, tc, seed=seed, on_move=on_move)
        total += time.perf_counter() - t0
        plies += len(record.moves)
        if len(stamps) > 1:
            loop_s += stamps[-1] - stamps[0]
            cpu_s += cpu_stamps[-1] - cpu_stamps[0]
            go_ms += sum(m.wall_ms for m in record.moves[1:])
    loop_moves = plies - n
    return {
        "games_per_s": n / total,
        "moves_per_s": plies / total,
        "ms_per_game": total / n * 1000,
        "start_floor_ms": floor_ms / n,
        "plies_per_game": plies / n,
        "go_us": go_ms / loop_moves * 1000,
        "referee_us": (loop_s * 1000 - go_ms) / loop_moves * 1000,
        "in_game_moves_per_s": loop_moves / loop_s,
        "referee_cpu_us": cpu_s / loop_moves * 1e6,
    }


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Run every measurement, print the table and return the figures."""
    n_trips, n_games = (500, 4) if quick else (5000, 30)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "instant"
        folder.mkdir()
        (folder / "bot.py").write_text(INSTANT_BOT)
        (folder / "bot.yaml").write_text('command: "{python} bot.py"\n')
        # alternate the measurements, the median of ROUNDS rounds each: load from elsewhere
        # hits all alike, and neither a slow round nor a lucky one decides
        rounds: dict[str, list[tuple[float, float]]] = {}
        no_cgroups = dataclasses.replace(Isolation.default(), cgroups=False)
        m = n_trips // ROUNDS
        for _ in range(ROUNDS):
            for where in PLACEMENTS:
                rounds.setdefault(f"pipe {where}", []).append(pipe_round_trip_us(m, where))
                rounds.setdefault(f"go {where}", []).append(botprocess_go_us(m, folder,
                                                                             placement=where))
            rounds.setdefault("go on path", []).append(
                botprocess_go_us(m, folder, as_referee=False, placement=PLACEMENTS[0]))
            rounds.setdefault("go no cgroups", []).append(
                botprocess_go_us(m, folder, placement=PLACEMENTS[0], isolation=no_cgroups))
        wall = {k: statistics.median(x[0] for x in v) for k, v in rounds.items()}
        cpu = {k: statistics.median(x[1] for x in v) for k, v in rounds.items()}
        pipe, go, go_on_path = wall["pipe apart"], wall["go apart"], wall["go on path"]
    g = games(n_games, "nine-mens-morris")
    hot = min(referee_hot_us(20 if quick else 100) for _ in range(3))
    floor = g["start_floor_ms"]
    figures = {"pipe_round_trip_us": pipe, "botprocess_go_us": go,
               "botprocess_go_cpu_on_path_us": go_on_path,
               "pipe_free_us": wall["pipe free"], "botprocess_go_free_us": wall["go free"],
               "pipe_one_cpu_us": wall["pipe one CPU"],
               "botprocess_go_one_cpu_us": wall["go one CPU"],
               "botprocess_go_no_cgroups_us": wall["go no cgroups"],
               "pipe_cpu_us": cpu["pipe apart"], "botprocess_go_cpu_us": cpu["go apart"], **g,
               "referee_hot_us": hot,
               "go_over_pipe": go / pipe, "referee_over_pipe": g["referee_us"] / pipe,
               "game_over_floor": g["ms_per_game"] / floor}
    echo(f"referee benchmark ({'quick' if quick else 'full'}; median of {ROUNDS} x "
         f"{n_trips // ROUNDS} round trips, "
         f"{n_games} games of nine-mens-morris, random vs random)")
    where = ("the echo or bots on a CPU other than the referee's" if can_place() else
             "placed by the scheduler: this machine cannot pin them to two CPUs")
    echo(f"  bare pipe round trip (echo process)      {pipe:9.1f} µs   ({where})")
    echo(f"  BotProcess.go to an instant bot          {go:9.1f} µs   {go / pipe:5.2f}x the pipe "
         f"(target <= 2x; as games call it: two bots in turn, each reply's CPU read while "
         f"the other thinks)")
    echo(f"    the same with the CPU read on the path {go_on_path:9.1f} µs   "
         f"{go_on_path / pipe:5.2f}x the pipe (one bot: the cgroup read between reply and "
         f"request)")
    for label, key in (("placed by the scheduler", "free"), ("all on one CPU", "one CPU")):
        p, gw = wall[f"pipe {key}"], wall[f"go {key}"]
        echo(f"    {label:39s}{gw:9.1f} µs   {gw / p:5.2f}x the pipe's {p:.1f} µs there")
    own_cpu = "the referee's CPU time per go"
    echo(f"    {own_cpu:39s}{cpu['go apart']:9.1f} µs   "
         f"{cpu['go apart'] / cpu['pipe apart']:5.2f}x the pipe's {cpu['pipe apart']:.1f} µs "
         f"(on one CPU, a round trip is both sides' CPU time added up)")
    nocg, label = wall["go no cgroups"], f"without cgroups ({no_cgroups.level.value})"
    echo(f"    {label:39s}{nocg:9.1f} µs   "
         f"{nocg / pipe:5.2f}x the pipe (where cgroups are not writable: each move's CPU "
         f"time read from /proc)")
    echo(f"  move in a game: go -> bestmove (random)  {g['go_us']:9.1f} µs   "
         f"{g['go_us'] / pipe:5.2f}x the pipe (includes the bot's move generation)")
    echo(f"  move in a game: referee's own work       {g['referee_us']:9.1f} µs   "
         f"{g['referee_us'] / pipe:5.2f}x the pipe (target <= 4x)")
    echo(f"  the same work replayed without bots      {hot:9.1f} µs   {hot / pipe:5.2f}x the pipe "
         f"(hot caches, as the pipe's loop; a game runs it cold, between the bots' turns)")
    echo(f"  move in a game: referee's CPU (thread)   {g['referee_cpu_us']:9.1f} µs   "
         f"(all of it, BotProcess.go's included; load from elsewhere barely moves it)")
    echo(f"  moves/s inside games                     {g['in_game_moves_per_s']:9.0f}")
    echo(f"  games/s (spawn to shutdown)              {g['games_per_s']:9.2f}     "
         f"{g['ms_per_game']:.0f} ms/game, {g['plies_per_game']:.0f} plies/game")
    echo(f"  moves/s overall                          {g['moves_per_s']:9.0f}")
    echo(f"  start floor: two bots one after the other{floor:9.1f} ms   (spawn, handshake, exit; "
         f"bare, no sandbox)")
    echo(f"  time per game (fresh processes)          {g['ms_per_game']:9.1f} ms   "
         f"{g['ms_per_game'] / floor:5.2f}x the floor (target <= 1.2x)")
    return figures


if __name__ == "__main__":
    from run import standalone  # benchmarks/run.py, next to this file

    sys.exit(standalone(bench, __doc__))
