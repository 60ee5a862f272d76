"""The ``build:`` step of a bot folder: run once before the bot's first game, in its sandbox,
and again only when the folder's files change.

``bot.yaml``::

    build: cc -O2 -o bot bot.c     # a string runs through /bin/sh -c; a list of words as is
    build_timeout: 120             # seconds the build may take (default 300, at most 3600)
    command: ./bot

:func:`ensure_built` runs the step (tournaments, ``arena play`` and ``arena sprt`` call it
through :func:`arena.preflight.preflight` before the first game; ``arena check`` first of
all); :func:`build_failure` tells, without running anything, whether the last build failed
for the folder as it is now (``BotProcess.start`` reports that as a start failure).

When a build runs
-----------------
After each build the referee writes a *stamp*, ``.arena-build.json`` in the bot folder: a
digest of the folder, whether the build succeeded, its exit status, time and the capped
output.  The digest (SHA-256) covers the build command and, for every entry below the
folder (links not followed; the stamp itself left out), its relative path, type, mode,
size and modification time in nanoseconds, and a link's target: metadata only, so
deciding costs one ``lstat`` per file, not a read.  It is taken *after* the build (its
output included), so the next call finds it equal and skips the build ("up to date")
until a file is added, removed, edited or touched.  A failed build is remembered the same
way: :func:`ensure_built` raises the remembered :class:`BuildError` without building
again unless the folder changed (``retry_failed=True``, as ``arena check`` does, tries
anyway).  A bot that writes into its own folder during games (possible only at level
``none``, or ``basic`` when not root) changes the digest and is rebuilt next time.  The
compiler's version is not in the digest: touch a file to force a build.

Where a build runs, and why it is safe
--------------------------------------
Games see the bot folder read-only, but a build must write its output there, and at
``basic`` as root the build runs as a unique unprivileged uid that cannot write a
root-owned folder.  So a build never writes the bot folder itself, at any level:

1. the referee copies the folder (:mod:`arena.sandbox.scratch` both ways) into a fresh
   scratch folder under the temporary folder (``morris-arena-<pid>-build-...``, removed by
   the sandbox watchdog if the referee dies, else by the next referee's first sandbox or
   build): regular files (each made afresh, never a hard link), folders and links as
   links, each opened without following links; FIFOs, sockets and devices are left out.
   As root the copy is handed to the sandbox's uid, and what that uid could not read in
   place (a file other users may not read, a folder they may not enter) is left out and
   named in the output: a build reads only what the bot's games could;
2. the build runs there in a :class:`~arena.sandbox.Sandbox` of the games' own isolation
   level and limits (memory, processes, open files, file size, CPU; see
   ``docs/SECURITY.md``) with that one folder writable (bwrap: a writable bind; ``basic``
   as root: the one writable mount of its read-only mount namespace), the cleared
   environment and private ``/tmp`` of a game, and its own wall-clock limit,
   ``build_timeout``.  Every :data:`POLL_S` the referee adds up what the build holds on
   disk, by allocated blocks as the file system counts them (:func:`disk_usage`: blocks
   ``fallocate`` reserved past a file's end count, and so does a sparse file's size): the
   scratch folder (and, at ``basic`` as a normal user, its private ``/tmp`` folder), plus
   the deleted files its processes keep open or mapped there; more than :data:`SPACE_MB`
   MiB or :data:`FILES_CAP` entries (an empty file is one) stops the build.  At the end
   every process of the build is killed (a daemon it left included), and one last look,
   nothing running any more, fails a build that went past either cap since the one before;
3. the referee copies back, into the bot folder, the *regular* files the build made or
   changed, whatever their link count, never ``bot.yaml`` or the stamp.  A hard link is a
   file (cargo hard-links ``target/release/<bin>`` to its copy in ``deps/``): each name is
   written as a file of its own with the content.  Symbolic links, FIFOs, sockets and
   devices the build made are skipped, and so is a file over what the copy-in left
   out; each is named in the output (``not copied back: target/x (a symbolic link)``) and
   on the console (a warning of the ``arena.build`` logger, :attr:`BuildResult.not_copied`;
   a server check's output gets the lines too).  Each file is written through descriptors
   opened without following links at every step (a link planted in the bot folder cannot
   redirect the write), to a temporary name then renamed over the old file, with mode 0755
   (anything executable) or 0644; nothing else in the folder changes (files the build
   deleted, or was not given, stay).

   Why a hard link is safe to copy: the copy-back reads with the referee's rights, which
   as root are more than the build's, so what matters is which files a name in the scratch
   folder can reach.  The copy-in made every file there afresh (it never makes a hard link,
   and leaves out what the build's uid could not read), so a hard link in it was made by the
   build, with ``link(2)``, which cannot cross mounts (``EXDEV``, even on one file system):
   under bwrap, and at ``basic`` as root, the scratch folder is a bind mount of its own, the
   one writable mount the build has, so a hard link there names a file of that mount, i.e.
   a file of the scratch folder: the build's own (as its unique uid it also owns every file
   there, and ``fs.protected_hardlinks`` would refuse a link to another's).  At ``none``,
   and at ``basic`` by a normal user, the build runs as the referee's user, unconfined: it
   could hard-link any file of that user into the folder, but it could as well copy it, so
   copying the link's content gives it nothing more.  Every process of the build is killed
   before the copy-back starts, so nothing in the scratch folder changes while it is read.

So a hostile build (a fork bomb, an endless loop, a flood of output, a disk filler,
writes outside its folder) meets a game's limits plus the timeout, writes nothing but
its scratch folder and its private ``/tmp``, and can touch neither other bots nor results.
At level ``none`` the build runs as you, unconfined, like a game at ``none``.  Build
outputs must be relocatable regular files (a compiled program, ``.class`` files, a
``target/`` folder); a Python virtual environment (links, absolute paths) is not.

The output (stdout and stderr together) is kept capped: the first 16 KiB and the last
48 KiB.  A failure is a :class:`BuildError` (a :class:`~arena.errors.BotStartError`, so a
tournament counts it as a failed start) whose message is one line, e.g.
``build failed (exit 1) after 0.3 s: bot.c:3:1: error: expected ';' before '}' token``,
and which carries the whole capped output.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence

from arena.errors import BotStartError
from arena.manifest import MANIFEST, BotSpec

if TYPE_CHECKING:
    from arena.sandbox import Isolation

log = logging.getLogger("arena.build")

#: the stamp the referee writes in the bot folder after each build
STAMP = ".arena-build.json"
#: the largest stamp read back (bytes)
STAMP_CAP = 1 << 20
#: the output kept: its first HEAD_CAP and last TAIL_CAP bytes
HEAD_CAP = 16 * 1024
TAIL_CAP = 48 * 1024
#: the most disk space the scratch folder of a build may use (MiB; allocated blocks, or a
#: file's size where larger: :func:`disk_usage`)
SPACE_MB = 512
#: the most entries (files, folders, links) the scratch folder of a build may hold
FILES_CAP = 20_000
#: whether a build's scratch folder is a tmpfs of its own, of SPACE_MB and FILES_CAP, where
#: the machine allows a mount (:mod:`arena.sandbox.scratchfs`): the kernel then bounds what
#: no look sees (a file whose descriptor is in flight in a Unix socket); elsewhere, looks only
OWN_FILESYSTEM = True
#: seconds between two looks at a running build's scratch folder
POLL_S = 0.25
#: the longest failure line (characters)
LINE_CAP = 300
_STAMP_VERSION = 1
_ERROR_RE = re.compile(r"\berror\b", re.IGNORECASE)


class BuildError(BotStartError):
    """A bot's ``build:`` step failed (exit status, timeout, too much disk, or its output
    could not be copied back).  The message is one line; :attr:`log` is the capped output."""

    def __init__(self, message: str, log: str = "", seconds: float = 0.0,
                 exit: Optional[int] = None) -> None:
        super().__init__(message)
        self.log = log
        self.seconds = seconds
        self.exit = exit


@dataclass(frozen=True)
class BuildResult:
    """A successful (or unnecessary) build: what ran, whether it ran now, how long it took."""

    #: the build command (empty: the bot has no ``build:`` step)
    command: tuple[str, ...]
    #: True when the build ran in this call; False when there is none or it was up to date
    ran: bool
    #: seconds the build took (when up to date: the build that made the current state)
    seconds: float = 0.0
    #: its capped output
    log: str = ""

    @property
    def not_copied(self) -> tuple[str, ...]:
        """What the build made but the referee did not copy back into the bot folder, one
        phrase each (``target/x (a symbolic link)``), read from the output's notes."""
        from arena.sandbox.scratch import NOT_COPIED

        return tuple(line[len(NOT_COPIED):] for line in self.log.splitlines()
                     if line.startswith(NOT_COPIED))

    def describe(self) -> str:
        """One phrase: ``built in 1.3 s``, ``up to date (built in 1.3 s)`` or ``no build step``."""
        if not self.command:
            return "no build step"
        if self.ran:
            return f"built in {self.seconds:.1f} s"
        return f"up to date (built in {self.seconds:.1f} s)"


# -- the folder's digest and the stamp ------------------------------------------------------
def _entries(folder: str) -> list[tuple[str, os.stat_result]]:
    """Every entry below ``folder`` (links not followed), sorted by relative path, without
    the stamp (:func:`arena.sandbox.scratch.walk`)."""
    from arena.sandbox.scratch import walk

    return walk(folder, skip=(STAMP,))


def folder_digest(spec: BotSpec) -> str:
    """The digest of the bot folder as it is now, with its build command (see the module's
    docstring): SHA-256 of paths, types, modes, sizes, modification times, link targets."""
    h = hashlib.sha256(json.dumps(list(spec.build)).encode())
    for name, st in _entries(spec.path):
        extra = ""
        if stat.S_ISLNK(st.st_mode):
            try:
                extra = os.readlink(os.path.join(spec.path, name))
            except OSError:
                pass
        h.update(f"\0{name}\0{st.st_mode:o}\0{st.st_size}\0{st.st_mtime_ns}\0{extra}".encode(
            "utf-8", "surrogateescape"))
    return h.hexdigest()


def _read_stamp(folder: str) -> Optional[dict[str, Any]]:
    """The stamp's content, or None when there is none or it cannot be trusted (not a
    regular file, a link, too large, not the JSON the referee writes)."""
    path = os.path.join(folder, STAMP)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > STAMP_CAP:
            return None
        raw = os.read(fd, STAMP_CAP + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if (not isinstance(data, dict) or data.get("version") != _STAMP_VERSION
            or not isinstance(data.get("digest"), str) or not isinstance(data.get("ok"), bool)):
        return None
    return data


def _write_stamp(folder: str, data: dict[str, Any]) -> None:
    """Write the stamp atomically (a new file renamed over the old one: a link planted in
    its place is replaced, never followed).  A folder the referee cannot write only loses
    the stamp (the next call builds again): logged, not raised."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".arena-build.", suffix=".tmp", dir=folder)
    except OSError as e:
        log.warning("cannot write %s in %s: %s", STAMP, folder, e.strerror)
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o644)
            json.dump(data, f, indent=1)
            f.write("\n")
        os.replace(tmp, os.path.join(folder, STAMP))
    except OSError as e:
        log.warning("cannot write %s in %s: %s", STAMP, folder, e.strerror)
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _stamp_error(stamp: dict[str, Any]) -> BuildError:
    seconds = stamp.get("seconds")
    code = stamp.get("exit")
    return BuildError(str(stamp.get("message") or "build failed"), str(stamp.get("log") or ""),
                      float(seconds) if isinstance(seconds, (int, float)) else 0.0,
                      code if isinstance(code, int) else None)


def build_failure(spec: BotSpec) -> Optional[str]:
    """The one-line failure of the bot's last build if it failed for the folder as it is
    now; None when there is no build step, no stamp, the folder changed since, or the build
    succeeded.  Runs nothing: reads the stamp and ``lstat``\\ s the folder's files."""
    if not spec.build:
        return None
    stamp = _read_stamp(spec.path)
    if stamp is None or stamp["ok"] or stamp["digest"] != folder_digest(spec):
        return None
    return _stamp_error(stamp).args[0]


# -- running a build -------------------------------------------------------------------------
class _Output:
    """The capped output of a build, read from a pipe by a thread: the first HEAD_CAP and
    the last TAIL_CAP bytes."""

    def __init__(self, fd: int, on_output: Optional[Callable[[bytes], None]] = None,
                 first: bytes = b"") -> None:
        self.fd = fd
        self.on_output = on_output
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        if first:  # the referee's own notes (files left out of the copy), before the build's
            self._take(first)
        self.thread = threading.Thread(target=self._run, name="build-output", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        if self.on_output is not None:
            self.on_output(chunk)
        self.total += len(chunk)
        room = HEAD_CAP - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > TAIL_CAP:
            del self.tail[:len(self.tail) - TAIL_CAP]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {cut} bytes of output left out ...]\n" if cut > 0 else ""
        return (bytes(self.head).decode("utf-8", "replace") + middle
                + bytes(self.tail).decode("utf-8", "replace"))


def _usage(folder: str) -> tuple[int, int]:
    """Bytes and entries below ``folder`` (:func:`disk_usage` of its entries)."""
    return disk_usage(st for _, st in _entries(folder))


def disk_usage(stats: Iterable[os.stat_result]) -> tuple[int, int]:
    """What the entries ``stats`` (``lstat`` results) hold on disk: (bytes, entries).

    Bytes as the file system counts them, and then some: each inode once, by its allocated
    blocks (``st_blocks`` * 512: blocks ``fallocate`` reserved past the end of a file with
    ``FALLOC_FL_KEEP_SIZE`` count, though its size does not change), or a regular file's
    apparent size where that is larger (a sparse file's holes are written out when a build's
    output is copied back); each further name of a hard-linked file adds its size again
    (the copy-back writes each name as a file).  Folders count their blocks too.  Entries:
    every name (files, folders, links), an empty file as much as a large one."""
    seen: set[tuple[int, int]] = set()
    total = count = 0
    for st in stats:
        count += 1
        size = st.st_size if stat.S_ISREG(st.st_mode) else 0
        if (st.st_dev, st.st_ino) in seen:
            total += size
            continue
        seen.add((st.st_dev, st.st_ino))
        total += max(st.st_blocks * 512, size)
    return total, count


def _one_line(text: str) -> str:
    from arena.protocol import escape_controls

    line = escape_controls(" ".join(text.split()))
    return line if len(line) <= LINE_CAP else line[:LINE_CAP - 3] + "..."


def _reason(output: str) -> str:
    """The line of the output that says most: the first one naming an error, else the last."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:
        if _ERROR_RE.search(ln):
            return ln
    return lines[-1] if lines else "no output"


def _exit_phrase(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit {code}"


def _run_build(spec: BotSpec, iso: Isolation, on_output: Optional[Callable[[bytes], None]] = None
               ) -> tuple[Optional[BuildError], float, str]:
    """Build in a scratch copy in the sandbox and copy the output back: (the failure or
    None, seconds, capped output with the copy-back notes)."""
    from arena.sandbox import Sandbox
    from arena.sandbox.scratch import copy_back, copy_in, hand_over, left_out_notes, snapshot
    from arena.sandbox.watchdog import (TEMP_PREFIX, ensure_watchdog, remove_tree,
                                        sweep_stale_temp_once)

    size, count = _usage(spec.path)
    if size > SPACE_MB << 20 or count > FILES_CAP:
        return BuildError(f"build not run: the bot folder holds more than {SPACE_MB} MiB or "
                          f"{FILES_CAP} entries"), 0.0, ""
    ensure_watchdog()  # before the scratch folder exists: removed if we are killed, at any level
    sweep_stale_temp_once()  # and those of dead referees whose watchdog died too
    from arena.sandbox.scratchfs import mount_bounded

    scratch = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-build-")
    work = os.path.join(scratch, "bot")
    started = time.monotonic()
    try:
        # its own file system where the machine allows (the scratch folder itself and ``bot``
        # are two of its entries); its files are then memory, so the build's memory limit
        # grows by the space it may fill: compilers keep what they had
        bounded = OWN_FILESYSTEM and mount_bounded(scratch, SPACE_MB << 20, FILES_CAP + 2)
        limits = (replace(iso.limits, memory_mb=iso.limits.memory_mb + SPACE_MB) if bounded
                  else iso.limits)
        os.mkdir(work, 0o755)  # a confined uid must be able to enter it
        os.chmod(work, 0o755)
        sb = Sandbox(iso.level, work, cwd=work, limits=limits, label=f"build:{spec.name}",
                     read_only=iso.read_only, cgroups=iso.cgroups, writable=True)
        try:
            if sb.uid is not None and not os.stat(spec.path).st_mode & 0o001:
                return BuildError(_one_line(
                    f"build not run: the bot folder {spec.path} may not be entered by other "
                    f"users (as root, builds and bots run as an unprivileged uid): chmod -R "
                    f"a+rX {spec.path}")), 0.0, ""
            left = copy_in(spec.path, work, as_other=sb.uid is not None, skip=(STAMP,))
            before = snapshot(work)
            if sb.uid is not None:
                hand_over(work, sb.uid)
            notes = "".join(f"{line}\n" for line in left_out_notes(left))
            failure, output, seconds = _supervise(spec, sb, work, on_output, notes.encode(),
                                                  bounded)
        finally:
            sb.close()
        if failure is None:
            try:
                back = copy_back(work, spec.path, before, left, keep=(MANIFEST, STAMP))
            except OSError as e:
                failure = BuildError(_one_line(f"build output could not be copied into the bot "
                                               f"folder: {e.strerror or e}"), output, seconds)
                back = []
            if back and on_output is not None:
                on_output("".join(f"{line}\n" for line in back).encode())
            output = "\n".join([output.rstrip(), *back]).strip() + "\n"
        return failure, seconds, output
    except OSError as e:  # the scratch copy could not be made: the referee's side
        return BuildError(_one_line(f"build not run: cannot copy the bot folder: "
                                    f"{e.strerror or e}")), time.monotonic() - started, ""
    finally:
        remove_tree(scratch)


def _supervise(spec: BotSpec, sb: Any, work: str,
               on_output: Optional[Callable[[bytes], None]] = None, notes: bytes = b"",
               bounded: bool = False) -> tuple[Optional[BuildError], str, float]:
    """Start the build in ``sb``, wait for it within its time limit while watching its
    disk use (:func:`_disk_use`; and, when ``work`` is on a file system of its own
    (``bounded``), whether that is full), kill what is left: (the failure or None, output
    (after ``notes``), seconds)."""
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(sb.wrap(spec.build), cwd=work, env=sb.env(),
                                stdin=subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
                                preexec_fn=sb.preexec, start_new_session=True, close_fds=True)
    except OSError as e:
        os.close(read_fd)
        os.close(write_fd)
        return (BuildError(_one_line(f"build could not start: {e.strerror or e}")), "", 0.0)
    os.close(write_fd)
    sb.attach(proc.pid)
    output = _Output(read_fd, on_output, notes)
    stopped = ""
    code: Optional[int] = None
    deadline = started + spec.build_timeout_s
    folders = [work] + ([sb.tmp] if sb.tmp else [])  # basic, not root: its /tmp is on ours
    devices = {os.stat(f).st_dev for f in folders}
    try:
        while code is None:
            try:
                code = proc.wait(timeout=max(0.0, min(POLL_S, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() >= deadline:
                stopped = f"build timed out after {spec.build_timeout_s:g} s"
                break
            stopped = (_filled(work, bounded)
                       or _over_cap(*_disk_use(folders, sb.processes(), devices)))
            if stopped:
                stopped = f"build stopped after {time.monotonic() - started:.1f} s: {stopped}"
                break
    finally:
        sb.kill_all()  # what the build left running (a daemon too), or the whole build
        if code is None:
            proc.wait()
        seconds = time.monotonic() - started
        output.thread.join(2.0)
        os.close(read_fd)
    if not stopped:  # a last look, all its processes gone: what it wrote between two looks
        left = _filled(work, bounded) or _over_cap(*_disk_use(folders, [], devices))
        stopped = f"build failed after {seconds:.1f} s: {left}" if left else ""
    text = output.text()
    if stopped:
        return BuildError(_one_line(f"{stopped}: {_reason(text)}"), text, seconds), text, seconds
    assert code is not None
    code = sb.exit_status(code)
    if code != 0:
        return (BuildError(_one_line(f"build failed ({_exit_phrase(code)}) after {seconds:.1f} s: "
                                     f"{_reason(text)}"), text, seconds, code), text, seconds)
    return None, text, seconds


def _disk_use(folders: list[str], pids: list[int], devices: set[int]) -> tuple[int, int, int]:
    """What a running build holds on disk: bytes (:func:`disk_usage`: blocks, not only
    sizes) and entries below ``folders``, and the allocated bytes of deleted files its
    processes ``pids`` keep open or mapped on the file systems ``devices``
    (:func:`arena.sandbox.procs.held_deleted_bytes`)."""
    from arena.sandbox.procs import held_deleted_bytes

    usage = [_usage(folder) for folder in folders]
    held = held_deleted_bytes(pids, devices) if pids else 0
    return sum(u[0] for u in usage), sum(u[1] for u in usage), held


def _filled(work: str, bounded: bool) -> str:
    """Why a build whose scratch folder ``work`` is on a file system of its own
    (``bounded``) is past its cap: that file system is full ("" when it is not)."""
    from arena.sandbox.scratchfs import full

    if not bounded or not full(work):
        return ""
    return (f"it wrote more than {SPACE_MB} MiB or {FILES_CAP} entries (the file system "
            f"of its own that holds its folder is full)")


def _over_cap(size: int, count: int, held: int) -> str:
    """Why a build holding ``size`` bytes in ``count`` entries of its folders and ``held``
    bytes in deleted files is past :data:`SPACE_MB` or :data:`FILES_CAP` ("" when it is not)."""
    if size + held <= SPACE_MB << 20 and count <= FILES_CAP:
        return ""
    return (f"it wrote more than {SPACE_MB} MiB or {FILES_CAP} entries ({size >> 20} MiB "
            f"on disk in {count} entries of its folders, {held >> 20} MiB in deleted files "
            f"it kept open)")


def ensure_built(spec: BotSpec, *, isolation: Optional[Isolation] = None,
                 retry_failed: bool = False,
                 on_output: Optional[Callable[[bytes], None]] = None) -> BuildResult:
    """Run the bot's ``build:`` step if the folder changed since its last build (see the
    module's docstring), in a sandbox of ``isolation`` (default:
    :meth:`~arena.sandbox.Isolation.default`, as games), within ``spec.build_timeout_s``.

    One build at a time per folder (an OS lock on the folder); a caller that waited finds
    the folder up to date.  ``retry_failed``: build again even if the last build failed
    for this very folder state (default: raise that failure again at once).
    ``on_output`` receives the build's output (stdout and stderr) as it comes, uncapped
    (a check's progress keeps it for a build that is stopped before it ends).

    :returns: what ran (``ran`` False: no build step, or up to date).
    :raises BuildError: the build failed, now or last time for the same folder.
    :raises ConfigError: the isolation level is unknown or not available here.
    :raises SandboxError: the sandbox could not be set up.
    """
    if not spec.build:
        return BuildResult((), False)
    if isolation is None:
        from arena.sandbox import Isolation

        isolation = Isolation.default()
    lock_fd = os.open(spec.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        stamp = _read_stamp(spec.path)
        if stamp is not None and stamp["digest"] == folder_digest(spec):
            if stamp["ok"]:
                seconds = stamp.get("seconds")
                return _warn_not_copied(spec, BuildResult(
                    spec.build, False, float(seconds) if isinstance(seconds, (int, float))
                    else 0.0, str(stamp.get("log") or "")))
            if not retry_failed:
                raise _stamp_error(stamp)
        log.info("%s: building: %s", spec.name, " ".join(spec.build))
        failure, seconds, output = _run_build(spec, isolation, on_output)
        _write_stamp(spec.path, {
            "version": _STAMP_VERSION, "digest": folder_digest(spec), "ok": failure is None,
            "exit": failure.exit if failure is not None else 0, "seconds": round(seconds, 3),
            "message": str(failure) if failure is not None else "", "log": output,
            "command": list(spec.build), "level": isolation.level.value,
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        if failure is not None:
            failure.log = failure.log or output
            raise failure
        return _warn_not_copied(spec, BuildResult(spec.build, True, seconds, output))
    finally:
        os.close(lock_fd)  # releases the lock


#: the files named in the console's warning about what was not copied back
WARN_NAMES = 5


def _warn_not_copied(spec: BotSpec, result: BuildResult) -> BuildResult:
    """Say on the console (a warning of this module's logger, which ``arena check``,
    ``arena play`` and tournaments show) what the build made but the bot folder did not get
    (:attr:`BuildResult.not_copied`); returns ``result``."""
    skipped = result.not_copied
    if skipped:
        more = f" and {len(skipped) - WARN_NAMES} more (see {STAMP})" if (
            len(skipped) > WARN_NAMES) else ""
        log.warning("%s: build output not copied back into %s: %s%s (only regular files "
                    "are)", spec.name, spec.path, "; ".join(skipped[:WARN_NAMES]), more)
    return result


__all__ = ["BuildError", "BuildResult", "ensure_built", "build_failure", "folder_digest",
           "disk_usage", "STAMP", "SPACE_MB", "FILES_CAP"]
