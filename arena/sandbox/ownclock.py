"""The own clock: what one move of a bot cost the bot itself, on a machine that may be busy.

A move's **own time** is its wall time (from the request to the reply, as the referee
measures it) less the time the bot was ready to run but waited for a CPU, and less the time
the referee's own thread waited for one, or for the GIL, while the bot could not go on
without it (writing the request, being woken by the reply: a referee that gets no CPU reads
a reply late; the caller measures that, :meth:`arena.bot.BotProcess.go` with
:func:`arena.sandbox.procs.lateness`).
Thinking, sleeping and waiting for its own input or disk are the bot's; waiting on the run
queue is the machine's.  The waits are the kernel's per-task counters
(``/proc/<pid>/task/<tid>/schedstat``: nanoseconds on a CPU, nanoseconds runnable but
waiting), read when the request is written, while the bot thinks, and at its reply.

On a virtual machine whose host steals CPU time (``/proc/stat``'s ``steal``), a bot woken
on a stolen CPU is not on any run queue until that CPU runs again: the most any one CPU had
stolen during the move counts as waited too, where it is longer than the bot's own wait.

A bot of several threads or processes is charged as one line of thought:

* the wait it is excused is that of its **thinker**, the task that ran longest during the
  move (for a single-threaded bot: exactly its wait).  Waits of its other tasks are not
  excused, so a bot cannot buy time by starting threads that queue for a CPU;
* it is charged **at least the CPU time of all its tasks** together (its cgroup's exact
  accounting where it has one): threads do not multiply the time a bot gets.

``share`` is the thinker's time on a CPU over its time ready to run (on a CPU or waiting for
one): 1.0 on a quiet machine, lower the more the machine made it wait.  The verdicts
(:func:`arena.verdicts.judge_own`) use it to decide whether a move's own time can be
trusted as what the move would have cost on a quiet machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from arena.sandbox.procs import stolen

#: a task's reading: (ns on a CPU, ns runnable but waiting for one)
Tasks = Mapping[int, tuple[int, int]]


@dataclass(frozen=True)
class OwnTime:
    """One move's times, in milliseconds (see the module docstring)."""

    #: from the request to the reply (or to now, or to the referee giving up)
    wall_ms: float
    #: what the move is charged: ``wall_ms`` less the waits, at least ``cpu_ms``
    own_ms: float
    #: the bot's thinker's wait for a CPU
    bot_wait_ms: float
    #: the referee thread's wait for a CPU or the GIL
    referee_wait_ms: float
    #: the CPU time of all the bot's tasks
    cpu_ms: float
    #: the thinker's time on a CPU over its time ready to run (1.0: it never waited)
    share: float

    @property
    def waited_ms(self) -> float:
        """What the move was not charged: wall time less own time."""
        return max(0.0, self.wall_ms - self.own_ms)

    @property
    def bot_wall_ms(self) -> float:
        """The wall time the bot took, as the bot saw it: without the referee's lateness."""
        return max(0.0, self.wall_ms - self.referee_wait_ms)


class OwnClock:
    """Measures one move at a time: :meth:`start` before the request is written (the bot is
    idle), :meth:`now` while the bot thinks and at its reply.  ``read_tasks(fresh)`` reads
    the bot's tasks (:meth:`arena.sandbox.Sandbox.task_times`; ``fresh`` at the start only:
    a costly look for new processes is no reading's business while the bot may be
    answering), ``read_cpu`` the CPU seconds of its whole tree where they are exact (cgroup
    accounting: :meth:`arena.sandbox.Sandbox.cpu_time`; None: its tasks' own, summed)."""

    def __init__(self, read_tasks: Callable[[bool], Tasks],
                 read_cpu: Optional[Callable[[], float]],
                 read_state: Callable[[int], str] = lambda tid: "") -> None:
        self._read_tasks = read_tasks
        self._read_cpu = read_cpu
        self._read_state = read_state
        self._tasks: Tasks = {}
        self._cpu = 0.0
        #: per task, (its CPU ns, the move's wall s) at the previous reading of this move,
        #: and the wall s after which it was last seen to run (see :meth:`now`)
        self._seen: dict[int, tuple[int, float]] = {}
        self._ran_after: dict[int, float] = {}
        self._stolen: tuple[float, ...] = ()

    def start(self) -> None:
        """The move is about to start (the bot waits for its request): the marks every
        later reading is counted from."""
        self._tasks = self._read_tasks(True)
        self._cpu = self._read_cpu() if self._read_cpu is not None else 0.0
        self._seen, self._ran_after = {}, {}
        self._stolen = stolen()

    def now(self, wall: float, referee: float, *, settled: bool = True) -> OwnTime:
        """The move's times so far: ``wall`` seconds since it started, of which ``referee``
        the referee's thread waited for a CPU while the bot needed it.

        ``settled`` False: a reading while the bot may still think.  The kernel adds a
        task's wait for a CPU to its counter only when the task gets one, so a thinker
        waiting on the run queue right now has a wait not counted yet.  Its length is at
        most the time since the task was last seen to run (between two readings of this
        move; the move's start before the second), so the reading then takes that as
        waited too: an own time and a share no greater than the bot's (a bot is never
        stopped for a wait the kernel has not counted yet).  At the reply the bot has run
        to write it: nothing is pending."""
        tasks = self._read_tasks(False)
        referee = max(0.0, referee)
        marks = self._tasks
        ran = waited = total = 0
        thinker = -1
        wall_ns = wall * 1e9
        for tid, (run, wait) in tasks.items():
            run0, wait0 = marks.get(tid, (0, 0))
            if tid not in marks and run + wait > wall_ns:  # not seen at the start, yet older
                continue                                   # than the move: unknown, not guessed
            d_run, d_wait = max(0, run - run0), max(0, wait - wait0)
            total += d_run
            if d_run > ran or (d_run == ran and d_wait > waited):
                ran, waited, thinker = d_run, d_wait, tid
            if not settled:
                seen = self._seen.get(tid)
                if seen is None or run > seen[0]:  # it ran since the previous reading
                    self._ran_after[tid] = seen[1] if seen is not None else 0.0
                self._seen[tid] = (run, wall)
        if not settled and thinker >= 0 and self._read_state(thinker) == "R":
            pending = wall - self._ran_after.get(thinker, 0.0)
            waited = min(int(wall_ns) - ran, waited + int(pending * 1e9))
        # a virtual machine whose host stole a CPU: the bot may have waited in a wake-up the
        # stolen CPU had not processed yet (on no run queue), counted as waited if longer
        steal = max((b - a for a, b in zip(self._stolen, stolen())), default=0.0)
        waited = max(waited, min(int(steal * 1e9), int(wall_ns) - ran))
        cpu = total / 1e9
        if self._read_cpu is not None:
            cpu = max(cpu, self._read_cpu() - self._cpu)
        own = max(wall - waited / 1e9 - referee, cpu, 0.0)
        share = ran / (ran + waited) if ran + waited > 0 else 1.0
        return OwnTime(wall_ms=wall * 1000.0, own_ms=own * 1000.0,
                       bot_wait_ms=waited / 1e6, referee_wait_ms=referee * 1000.0,
                       cpu_ms=cpu * 1000.0, share=share)


class TreeClock:
    """The own time of a process tree over a longer span (a submission check: a build, then
    games): wall time less, for each span between two :meth:`read`\\ s, the longest wait for a
    CPU of any one of its tasks (a check does one thing at a time: a build step, a referee,
    a bot; what several tasks of it waited at once is counted once).  A task that ends
    between two readings loses its last span; read often enough (every half second)."""

    def __init__(self, pid: int) -> None:
        from arena.sandbox.procs import TaskTimes

        self.pid = pid
        self._tasks = TaskTimes()
        self._start = time.monotonic()
        #: seconds the tree was not charged so far (its waits for a CPU)
        self.waited_s = 0.0
        self._last = self._read_tasks()  # what the tree waited before is not counted

    def _read_tasks(self) -> dict[int, tuple[int, int]]:
        from arena.sandbox.procs import tree

        pids = [p.pid for p in tree(self.pid)]
        return self._tasks.read(pids) if pids else {}

    def read(self) -> tuple[float, float]:
        """``(wall seconds, own seconds)`` since the clock was made."""
        now = self._read_tasks()
        last = self._last
        longest = max((wait - last.get(tid, (0, 0))[1] for tid, (_, wait) in now.items()),
                      default=0)
        self._last = now
        self.waited_s += longest / 1e9
        wall = time.monotonic() - self._start
        return wall, max(0.0, wall - self.waited_s)

    def close(self) -> None:
        self._tasks.close()


__all__ = ["OwnClock", "OwnTime", "TreeClock"]
