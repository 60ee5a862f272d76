"""The sandbox on its own, with real processes: what each level isolates, limits, CPU time,
whole-tree kill, cleanup.  Tests needing bubblewrap or cgroups skip with the reason."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.sandbox import (CGROUP_PARENT, Isolation, Level, Limits, Sandbox, best_level, checks,
                           parse_level)

from .conftest import (ISOLATING, LEVELS, alive, containment, needs_bwrap, processes_in, run_in,
                       start_in, wait_gone)

# -- configuration ------------------------------------------------------------------------


def test_levels_and_default() -> None:
    assert LEVELS[0] is Level.NONE
    assert best_level() is LEVELS[-1]
    assert parse_level("best") is best_level()
    assert parse_level(None) is best_level()
    assert parse_level("NONE") is Level.NONE
    with pytest.raises(ConfigError, match="unknown isolation level 'jail'"):
        parse_level("jail")


def test_limits_are_checked_at_the_edge() -> None:
    assert Limits.from_mapping({"memory_mb": 256}).memory_mb == 256
    with pytest.raises(ConfigError, match=r"^limits\.memory_mb: expected an integer in 16\.\."):
        Limits.from_mapping({"memory_mb": 0})
    with pytest.raises(ConfigError, match=r"^memory_mb: expected an integer in 16\.\.65536"):
        Limits(memory_mb=10**12)  # the same ranges for Python callers as for tournament files
    with pytest.raises(ConfigError, match=r"^limits\.memroy_mb: unknown key"):
        Limits.from_mapping({"memroy_mb": 256})
    with pytest.raises(ConfigError, match="pids: expected an integer"):
        Limits(pids=True)  # type: ignore[arg-type]


def test_isolation_from_config() -> None:
    iso = Isolation.parse({"level": "none", "limits": {"pids": 50}, "read_only": ["/opt"],
                           "cgroups": False})
    assert iso == Isolation(Level.NONE, Limits(pids=50), ("/opt",), False)
    assert Isolation.parse("none").level is Level.NONE
    assert Isolation.parse(None).level is best_level()
    assert iso.to_dict()["limits"]["pids"] == 50
    with pytest.raises(ConfigError, match=r"^iso\.read_only: expected a list of absolute"):
        Isolation.parse({"read_only": ["relative"]}, "iso")
    with pytest.raises(ConfigError, match=r"^iso\.levle: unknown key"):
        Isolation.parse({"levle": "none"}, "iso")


def test_doctor_checks_name_every_level_and_clock() -> None:
    lines = [c.line() for c in checks()]
    names = [line.split(":")[0] for line in lines]
    for name in ("levels", "none", "basic", "bwrap", "cpu clock", "wall clock"):
        assert name in names
    assert any(n.startswith("cgroup ") for n in names)
    assert lines[0].endswith(f"(default: {best_level().value})")


# -- what a bot sees ----------------------------------------------------------------------

PROBE = r"""
import json, os, resource, sys
print(json.dumps({"env": sorted(os.environ), "home": os.environ.get("HOME"),
                  "cwd": os.getcwd(), "uid": os.getuid(),
                  "core": resource.getrlimit(resource.RLIMIT_CORE),
                  "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)}))
"""


@pytest.mark.parametrize("level", ISOLATING, ids=lambda lv: lv.value)
def test_environment_is_cleared_and_limits_set(level: Level, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MORRIS_SECRET_TOKEN", "do-not-leak")
    sb = Sandbox(level, tmp_path, limits=Limits(open_files=77))
    seen = run_in(sb, PROBE).json()
    assert "MORRIS_SECRET_TOKEN" not in seen["env"]
    assert "PATH" in seen["env"]
    assert seen["home"] != os.environ.get("HOME")
    assert seen["cwd"] == str(tmp_path.resolve())
    assert seen["core"] == [0, 0]
    assert seen["nofile"] == [77, 77]
    if os.geteuid() == 0:
        assert seen["uid"] != 0, f"a {level.value} bot must not run as root"
        assert seen["home"] == "/tmp"  # its private tmpfs


@pytest.mark.parametrize("level", ISOLATING, ids=lambda lv: lv.value)
def test_a_tight_open_files_limit_whatever_the_referee_holds_open(level: Level,
                                                                   tmp_path: Path) -> None:
    """The referee holds 200 files open when it starts a bot limited to 20: the bot starts
    (its confinement, which opens a file per folder it shows, runs before the limits) and
    has its 20.  (The limits came first, and a referee with many files open, as a test
    worker or a busy server is, saw 'cannot confine the bot: Too many open files'.)"""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(200)]
    try:
        sb = Sandbox(level, tmp_path, limits=Limits(open_files=20))
        run = run_in(sb, PROBE)
    finally:
        for fd in held:
            os.close(fd)
    assert run.returncode == 0, run.stderr
    assert run.json()["nofile"] == [20, 20]


def test_level_none_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MORRIS_SECRET_TOKEN", "visible")
    sb = Sandbox(Level.NONE, tmp_path)
    assert sb.wrap(["x", "y"]) == ["x", "y"] and sb.preexec is None
    seen = run_in(sb, PROBE).json()
    assert "MORRIS_SECRET_TOKEN" in seen["env"]
    assert seen["core"] == list(resource.getrlimit(resource.RLIMIT_CORE))


FILES = r"""
import json, os, socket, sys
port, other, results = int(sys.argv[1]), sys.argv[2], sys.argv[3]
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "ok"
    except OSError as e:
        out[name] = type(e).__name__
attempt("read_other", lambda: open(os.path.join(other, "secret.txt")).read())
attempt("write_other", lambda: open(os.path.join(other, "planted.txt"), "w").write("x"))
attempt("write_results", lambda: open(os.path.join(results, "games.jsonl"), "a").write("{}\n"))
attempt("write_own", lambda: open("planted.txt", "w").write("x"))
attempt("write_tmp", lambda: open(sys.argv[4], "w").write("x"))
attempt("connect", lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close())
out["pids_seen"] = len([p for p in os.listdir("/proc") if p.isdigit()])
print(json.dumps(out))
"""


#: a file the attack writes in /tmp: the bot's own at bwrap and at basic as root
SCRATCH = f"/tmp/morris-arena-scratch-{os.getpid()}"


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    me, other, results = tmp_path / "bots" / "me", tmp_path / "bots" / "other", tmp_path / "results"
    for d in (me, other, results):
        d.mkdir(parents=True)
    (other / "secret.txt").write_text("secret")
    (results / "games.jsonl").write_text("")
    return me, other, results


def _attack(level: Level, tmp_path: Path) -> tuple[dict[str, object], int]:
    me, other, results = _layout(tmp_path)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0)
        port = listener.getsockname()[1]
        sb = Sandbox(level, me)
        code = FILES.replace("sys.argv[1]", repr(str(port))).replace(
            "sys.argv[2]", repr(str(other))).replace("sys.argv[3]", repr(str(results))).replace(
            "sys.argv[4]", repr(SCRATCH))
        seen = run_in(sb, code).json()
        accepted = 0
        try:
            while True:
                listener.accept()[0].close()
                accepted += 1
        except BlockingIOError:
            pass
    return seen, accepted


@needs_bwrap
def test_bwrap_confines_files_network_and_processes(tmp_path: Path) -> None:
    seen, accepted = _attack(Level.BWRAP, tmp_path)
    assert seen["read_other"] == "FileNotFoundError"
    assert seen["write_other"] == "FileNotFoundError"
    assert seen["write_results"] == "FileNotFoundError"
    assert seen["write_own"] in ("OSError", "PermissionError")  # read-only file system
    assert seen["write_tmp"] == "ok"
    assert seen["connect"] != "ok" and accepted == 0
    assert int(seen["pids_seen"]) <= 4  # bwrap's init, the bot, nothing of the host  # type: ignore[call-overload]
    assert (tmp_path / "results" / "games.jsonl").read_text() == ""
    assert not (tmp_path / "bots" / "other" / "planted.txt").exists()
    assert not (tmp_path / "bots" / "me" / "planted.txt").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="basic confines files only when run as root")
@pytest.mark.skipif(Level.BASIC not in LEVELS, reason="basic is not available here")
def test_basic_as_root_confines_files_but_not_network(tmp_path: Path) -> None:
    """As root, basic runs the bot as a unique uid with read-only mounts and a private /tmp:
    the files of other bots (here under /tmp) and the results are out of reach."""
    seen, accepted = _attack(Level.BASIC, tmp_path)
    assert seen["read_other"] == "FileNotFoundError"  # /tmp is the bot's own
    assert seen["write_other"] == "FileNotFoundError"
    assert seen["write_results"] == "FileNotFoundError"
    assert seen["write_own"] in ("OSError", "PermissionError")
    assert seen["write_tmp"] == "ok"
    assert seen["connect"] == "ok" and accepted == 1  # basic is no network boundary
    assert (tmp_path / "results" / "games.jsonl").read_text() == ""
    assert not (tmp_path / "bots" / "other" / "planted.txt").exists()
    assert not (tmp_path / "bots" / "me" / "planted.txt").exists()
    assert not Path(SCRATCH).exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="as root, basic confines files (tested above)")
def test_basic_as_a_normal_user_does_not_confine_files_or_network(tmp_path: Path) -> None:
    """The same attack succeeds at basic run by a normal user: the tests above can fail."""
    seen, accepted = _attack(Level.BASIC, tmp_path)
    Path(SCRATCH).unlink(missing_ok=True)
    assert seen["read_other"] == "ok" and seen["connect"] == "ok" and accepted == 1


# -- limits -------------------------------------------------------------------------------

MEMORY = r"""
block = b"\x01" * (400 << 20)
print("survived", flush=True)
"""


@pytest.mark.parametrize("level", ISOLATING, ids=lambda lv: lv.value)
def test_memory_limit_kills_a_hog(level: Level, tmp_path: Path) -> None:
    sb = Sandbox(level, tmp_path, limits=Limits(memory_mb=96))
    if "memory" not in sb.cgroups:
        sb.close()
        pytest.skip("no writable memory cgroup here")
    result = run_in(sb, MEMORY, close=False)
    notes = sb.notes()
    sb.close()
    assert "survived" not in result.stdout
    assert result.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL)
    assert any("memory limit" in n for n in notes)


@pytest.mark.parametrize("level", ISOLATING, ids=lambda lv: lv.value)
def test_process_limit_refuses_forks(level: Level, tmp_path: Path) -> None:
    reason = containment(level)
    if reason:
        pytest.skip(reason)
    from .conftest import FORK_COUNT

    sb = Sandbox(level, tmp_path, limits=Limits(pids=20))
    result = run_in(sb, FORK_COUNT.format(n=50), close=False)
    notes = sb.notes()
    sb.close()
    assert result.json()["made"] < 20
    if sb.uid is None:  # a unique uid's RLIMIT_NPROC refuses forks before the cgroup
        assert "process limit reached: forks refused" in notes
    assert wait_gone(result.pids) == []


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC per unique uid needs root")
def test_bwrap_as_root_limits_processes_without_cgroups(tmp_path: Path) -> None:
    from .conftest import FORK_COUNT

    sb = Sandbox(Level.BWRAP, tmp_path, limits=Limits(pids=20), cgroups=False)
    assert sb.cgroups == [] and sb.uid is not None
    result = run_in(sb, FORK_COUNT.format(n=50))
    assert result.json()["made"] < 20
    assert wait_gone(result.pids) == []


# -- CPU time -----------------------------------------------------------------------------

BURN = r"""
import os, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        burn(0.15)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print("done", flush=True)
"""


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.value)
@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroups", "no-cgroups"])
def test_cpu_time_counts_the_whole_tree(level: Level, cgroups: bool, tmp_path: Path) -> None:
    """Counted from :meth:`Sandbox.attach` on: the children burn only once the test has
    attached the process (a file it makes says so; before, a loaded machine could let them
    burn before the attach took its base reading: 0.0 s and 0.2 s were counted)."""
    sb = Sandbox(level, tmp_path, cgroups=cgroups)
    wait = "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\n"
    proc = start_in(sb, wait + BURN + "\ntime.sleep(30)")
    (tmp_path / "go").touch()
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
        readings = [sb.cpu_time() for _ in range(3)]
        assert sb.exact_cpu == (cgroups and level is not Level.NONE and "cpu" in sb.cgroups)
    finally:
        sb.close()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert readings == sorted(readings), "CPU time went backwards"
    assert readings[0] >= 0.28, f"{readings[0]:.3f} s counted for two children burning 0.15 s each"
    assert readings[-1] < 3.0



def test_cpu_times_read_what_psutil_reads_and_nothing_once_a_process_ended(
        tmp_path: Path) -> None:
    import psutil

    from arena.sandbox.procs import KEEP_OPEN, CpuTimes

    proc = subprocess.Popen([sys.executable, "-c", BURN + "\ntime.sleep(30)"],
                            stdout=subprocess.PIPE, text=True)
    reader = CpuTimes()
    fds = len(os.listdir("/proc/self/fd"))
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
        seconds = reader.seconds([proc.pid, 2**22 + 1])  # the second pid does not exist
        times = psutil.Process(proc.pid).cpu_times()
        assert abs(seconds - (times.user + times.system + times.children_user
                              + times.children_system)) <= 0.02
        assert seconds >= 0.28, f"{seconds:.3f} s counted for two children burning 0.15 s each"
        assert len(os.listdir("/proc/self/fd")) == fds + 1  # kept open, for the next reading
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
    assert reader.seconds([proc.pid]) == 0.0  # its file now reads nothing, whoever gets the pid
    fds = len(os.listdir("/proc/self/fd"))
    reader.forget(proc.pid)
    assert len(os.listdir("/proc/self/fd")) == fds - 1
    # a crowd of processes (a bot that forks) is read, but keeps only KEEP_OPEN files open
    crowd = [subprocess.Popen(["sleep", "30"]) for _ in range(KEEP_OPEN + 4)]
    try:
        fds = len(os.listdir("/proc/self/fd"))
        reader.seconds(p.pid for p in crowd)
        assert len(os.listdir("/proc/self/fd")) == fds + KEEP_OPEN
    finally:
        for p in crowd:
            p.kill()
            p.wait()
    reader.close()
    assert len(os.listdir("/proc/self/fd")) == fds


# -- whole-tree kill ----------------------------------------------------------------------

ESCAPE = r"""
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def quiet():
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
if os.fork() == 0:                       # a setsid double-fork daemon
    os.setsid()
    if os.fork() == 0:
        quiet()
        time.sleep(60)
    os._exit(0)
if os.fork() == 0:                       # a plain child in the group
    quiet()
    time.sleep(60)
    os._exit(0)
time.sleep(0.2)
print("spawned", flush=True)
time.sleep(60)
"""


def _spawn_escapers(sb: Sandbox, folder: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """Start ESCAPE in ``sb``; its processes (found by working directory) once all exist."""
    proc = start_in(sb, ESCAPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "spawned"
    return proc, processes_in(folder)


def _finish(proc: subprocess.Popen[str]) -> None:
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@pytest.mark.parametrize("level", ISOLATING, ids=lambda lv: lv.value)
@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroups", "no-cgroups"])
def test_kill_all_reaches_setsid_daemons(level: Level, cgroups: bool, tmp_path: Path) -> None:
    sb = Sandbox(level, tmp_path, cgroups=cgroups)
    proc, pids = _spawn_escapers(sb, tmp_path)
    try:
        assert len(pids) >= 3, f"expected the bot, its daemon and its child: {pids}"
        assert set(pids) <= set(sb.processes())
    finally:
        sb.close()
        _finish(proc)
    assert wait_gone(pids) == []
    assert processes_in(tmp_path) == []


def test_level_none_loses_a_setsid_daemon(tmp_path: Path) -> None:
    """What ``none`` does not promise (and why basic exists): the daemon escapes the tree."""
    sb = Sandbox(Level.NONE, tmp_path)
    proc, pids = _spawn_escapers(sb, tmp_path)
    try:
        escaped = set(pids) - set(sb.processes())
        sb.close()
        _finish(proc)
        assert len(escaped) == 1 and alive(list(escaped)) == list(escaped)
    finally:
        for pid in processes_in(tmp_path):  # the daemon this test started
            os.kill(pid, signal.SIGKILL)


#: a bot that exits on SIGTERM, with a child that ignores it
TERM_AWARE = r"""
import os, signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: (os.write(1, b"term\n"), os._exit(0)))
if os.fork() == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.write(1, b"child\n")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    time.sleep(60)
    os._exit(0)
os.write(1, b"ready\n")
time.sleep(60)
"""


@pytest.mark.parametrize("level", [lv for lv in LEVELS if lv is not Level.BWRAP],
                         ids=lambda lv: lv.value)
def test_terminate_sends_sigterm_waits_the_grace_then_kills(level: Level, tmp_path: Path) -> None:
    """The one shutdown path (``BotProcess`` calls it after ``quit``): SIGTERM to every process
    of the bot, up to the grace for them to exit, then SIGKILL for the rest.  (Under bwrap the
    PID namespace dies with bwrap, so the bot may never see its SIGTERM: not tested there.)"""
    sb = Sandbox(level, tmp_path)
    proc = start_in(sb, TERM_AWARE)
    try:
        assert proc.stdout is not None
        assert {proc.stdout.readline().strip() for _ in range(2)} == {"ready", "child"}
        pids = sb.processes()
        assert len(pids) == 2, pids
        t0 = time.monotonic()
        killed = sb.terminate(0.5)
        elapsed = time.monotonic() - t0
        assert proc.stdout.readline().strip() == "term", "the bot was sent SIGTERM"
        assert 0.5 <= elapsed < 3.0, f"{elapsed:.2f} s: the grace is for the child ignoring it"
        assert set(killed) == set(pids) - {proc.pid}
        assert wait_gone(pids) == []
    finally:
        sb.close()
        _finish(proc)


def test_terminate_waits_for_nothing_when_the_bot_is_gone(tmp_path: Path) -> None:
    """A bot that exited (on ``quit``) costs no grace."""
    sb = Sandbox(Level.NONE, tmp_path)
    proc = start_in(sb, "print('bye')")
    proc.communicate()
    t0 = time.monotonic()
    assert sb.terminate(5.0) == []
    assert time.monotonic() - t0 < 0.5
    sb.close()
    _finish(proc)


PARENT = r"""
import subprocess, sys, time
from arena.sandbox import Sandbox
sb = Sandbox(sys.argv[1], sys.argv[2])
proc = subprocess.Popen(sb.wrap([sys.executable, "-c", "import time; time.sleep(60)"]),
                        env=sb.env(), preexec_fn=sb.preexec, start_new_session=True)
sb.attach(proc.pid)
time.sleep(0.2)
print(sb.tmp, " ".join(map(str, sb.processes())), flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("level", ISOLATING, ids=lambda lv: lv.value)
def test_nothing_outlives_a_killed_referee(level: Level, tmp_path: Path) -> None:
    referee = subprocess.Popen([sys.executable, "-c", PARENT, level.value, str(tmp_path)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert referee.stdout is not None
        tmp, *pid_texts = referee.stdout.readline().split()
        pids = [int(x) for x in pid_texts]
        assert pids and alive(pids) == pids
    finally:
        referee.kill()
        referee.wait()
        referee.stdout.close()  # type: ignore[union-attr]
    assert wait_gone(pids) == []
    end = time.monotonic() + 3.0  # its watchdog removes the bot's temporary folder
    while tmp != "None" and Path(tmp).exists() and time.monotonic() < end:
        time.sleep(0.02)
    assert tmp == "None" or not Path(tmp).exists(), f"{tmp} outlived its referee"
    Sandbox(level, tmp_path).close()  # sweeps the dead referee's cgroups
    leftovers = [p for p in Path("/sys/fs/cgroup").glob(f"*/**/{CGROUP_PARENT}/{referee.pid}-*")]
    assert leftovers == []


ORPHAN_MAKER = r"""
import sys, time
from arena.sandbox import Sandbox
sb = Sandbox("basic", sys.argv[1])
code = ("import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    time.sleep(60)\n"
        "print(pid, flush=True)\ntime.sleep(60)\n")
proc = sb.popen([sys.executable, "-c", code])
print(proc.stdout.readline().decode().strip(), sb.token, flush=True)
time.sleep(60)
"""


def _watchdog_of(referee: int) -> list[int]:
    """Pids of the sandbox watchdog of the process ``referee`` (``-m arena.sandbox --watch``)."""
    import psutil

    found = []
    for p in psutil.process_iter():
        try:
            if p.cmdline()[-3:] == ["arena.sandbox", "--watch", str(referee)]:
                found.append(p.pid)
        except psutil.Error:
            continue
    return found


def test_a_sweep_finds_a_sandbox_removed_under_some_controllers_only(tmp_path: Path) -> None:
    """A dead referee's sandbox whose folder is gone under one controller (an earlier sweep
    removed it there while a member was still exiting elsewhere) is still found by the next
    sweep, and its other folders removed (L6: the watchdog's sweep left one behind)."""
    from arena.sandbox.cgroups import Cgroups, remove_cgroups

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid names the dead referee
    name = f"{gone.pid}-partial-{os.getpid()}"
    try:
        made = Cgroups(name, Limits())
    except OSError as e:
        pytest.skip(f"no writable cgroups here: {e}")
    dirs = sorted(set(made.dirs.values()), key=str)
    if len(dirs) < 2:
        made.remove()
        pytest.skip("one cgroup hierarchy here: a sandbox cannot be half removed")
    dirs[0].rmdir()
    try:
        assert remove_cgroups(lambda n: n == name) == 1
        assert not any(d.exists() for d in dirs), [d for d in dirs if d.exists()]
    finally:
        made.remove()


@pytest.mark.parametrize("watchdog", [True, False], ids=["watchdog", "watchdog-killed"])
def test_a_killed_referees_orphans_are_swept(tmp_path: Path, watchdog: bool) -> None:
    """At basic, the parent-death signal kills the bot itself; a grandchild outlives the
    referee's death, in the dead referee's cgroups.  The referee's watchdog kills it within
    a second or so; if the watchdog was killed too, the next sandbox sweeps it."""
    with Sandbox(Level.BASIC, tmp_path) as probe:
        if not probe.cgroups:
            pytest.skip("no writable cgroups here")
    referee = subprocess.Popen([sys.executable, "-c", ORPHAN_MAKER, str(tmp_path)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert referee.stdout is not None
        pid_text, token = referee.stdout.readline().split()
        grandchild = int(pid_text)
        watchdogs = _watchdog_of(referee.pid)
        assert len(watchdogs) == 1, watchdogs
        if not watchdog:
            os.kill(watchdogs[0], signal.SIGKILL)
            assert wait_gone(watchdogs) == []
    finally:
        referee.kill()
        referee.wait()
        referee.stdout.close()  # type: ignore[union-attr]
    try:
        leftovers = list(Path("/sys/fs/cgroup").glob(f"*/**/{CGROUP_PARENT}/{token}"))
        if watchdog:
            assert wait_gone([grandchild], 3.0) == []
            assert wait_gone(watchdogs, 3.0) == [], "the watchdog should exit after its sweep"
            assert not any(p.exists() for p in leftovers)
            return
        time.sleep(0.2)
        assert leftovers
        if alive([grandchild]):  # it outlived the referee and its watchdog: the next sandbox
            Sandbox(Level.BASIC, tmp_path).close()  # sweeps
        # else a sandbox made meanwhile by another test (the suite runs in parallel, and
        # every new sandbox sweeps the dead referees' cgroups) swept it already
        assert wait_gone([grandchild]) == []
        assert not any(p.exists() for p in leftovers)
    finally:
        if alive([grandchild]):
            os.kill(grandchild, signal.SIGKILL)


@pytest.mark.parametrize("level", ISOLATING, ids=lambda lv: lv.value)
def test_close_removes_cgroups_and_temporary_folder(level: Level, tmp_path: Path) -> None:
    sb = Sandbox(level, tmp_path)
    if not sb.cgroups:
        sb.close()
        pytest.skip("no writable cgroups here")
    dirs = list(sb._cgroups.dirs.values())  # type: ignore[union-attr]
    assert all(d.is_dir() for d in dirs)
    run_in(sb, "print('hi')")
    assert not any(d.exists() for d in dirs)
    assert sb.tmp is None or not Path(sb.tmp).exists()


def test_a_dead_referees_temporary_folders_are_removed() -> None:
    """The watchdog (``sweep_referee``) and the next referee remove the sandbox temporary
    folders of a referee that is gone, and only those."""
    import tempfile

    from arena.sandbox.watchdog import TEMP_PREFIX, sweep_referee

    gone = subprocess.Popen(["true"])
    gone.wait()
    base = Path(tempfile.gettempdir())
    dead = base / f"{TEMP_PREFIX}{gone.pid}-1-cafe-x"
    mine = base / f"{TEMP_PREFIX}{os.getpid()}-999-cafe-x"
    for folder in (dead, mine):
        folder.mkdir()
        (folder / "left.txt").write_text("x")
    try:
        # 1: found and removed here (0 only if another process's first sandbox swept the
        # stale folder in between: the suite runs in parallel)
        assert sweep_referee(gone.pid) in (0, 1)
        assert not dead.exists() and mine.exists()
    finally:
        for folder in (dead, mine):
            if folder.exists():
                (folder / "left.txt").unlink()
                folder.rmdir()


def test_sandboxes_made_and_closed_at_once_never_fail_on_the_shared_cgroup_parent(
        tmp_path: Path) -> None:
    """The bots' cgroups share a parent that the last closing sandbox removes: made and
    closed from four threads at once (as a Dask worker's games are), none may fail because
    the parent vanished between its creation and use (it did, about 1 in 20, before)."""
    import threading

    from arena.sandbox import SandboxError

    with Sandbox(Level.BASIC, tmp_path) as probe:
        if not probe.cgroups:
            pytest.skip("no writable cgroups here")
    errors: list[str] = []

    def churn() -> None:
        for _ in range(100):
            try:
                Sandbox(Level.BASIC, tmp_path).close()
            except SandboxError as e:
                errors.append(str(e))

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
