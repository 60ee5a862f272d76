"""The ``build:`` step (:mod:`arena.build`) with real builds in real sandboxes: built once,
skipped while nothing changed, built again after an edit; failures as one line and as a
``build-failure`` verdict of ``arena check``; the timeout, the disk cap, the output cap;
containment (no write outside the scratch folder, none through a planted link); and the
compiled example bot ``bots/c-first`` passing ``arena check`` after its build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import psutil
import pytest
import yaml
from click.testing import CliRunner

from arena import build as B
from arena.build import STAMP, BuildError, build_failure, ensure_built
from arena.cli import cli
from arena.clock import TimeControl
from arena.manifest import load_bot
from arena.referee import play_game
from arena.sandbox import Isolation, Level, Limits, available_levels, bwrap_status
from arena.sandbox.procs import is_root
from arena.variants import get_variant

ROOT = Path(__file__).resolve().parent.parent
C_FIRST = ROOT / "bots" / "c-first"
LEVELS = available_levels()
CC = shutil.which("cc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on this machine")


def _confining(level: Level) -> str:
    """Why ``level`` does not confine a build's writes here ("" when it does)."""
    if level not in LEVELS:
        return (f"bubblewrap is not usable here: {bwrap_status().detail}" if level is Level.BWRAP
                else f"level {level.value} is not available here")
    if level is Level.BASIC and not is_root():
        return "basic confines the file system only when the referee runs as root"
    return ""


def _iso(level: Level = Level.BASIC) -> Isolation:
    if level not in LEVELS:
        pytest.skip(f"level {level.value} is not available here")
    return Isolation(level)


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's ``tmp_path``, readable by other users (as root a build runs as another uid)."""
    tmp_path.chmod(0o755)
    return tmp_path


@pytest.fixture
def outside() -> Iterator[Path]:
    """A world-writable folder outside the temporary folder (which a confined build does not
    see at all): only the sandbox's read-only mounts can keep a build from writing it."""
    base = ROOT / "build"  # ignored by git
    base.mkdir(exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="test-build-", dir=base))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def make_bot(folder: Path, build: str, *, timeout: float | None = None,
             files: dict[str, str] | None = None) -> Path:
    """A bot folder (its command: a Python bot that plays random moves) whose build is
    ``build`` (run by ``/bin/sh -c``)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    manifest: dict[str, object] = {"name": folder.name, "command": "{python} bot.py",
                                   "build": build}
    if timeout is not None:
        manifest["build_timeout"] = timeout
    (folder / "bot.yaml").write_text(yaml.safe_dump(manifest))
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


def copy_c_first(tmp_path: Path) -> Path:
    dst = tmp_path / "c-first"
    shutil.copytree(C_FIRST, dst, ignore=shutil.ignore_patterns("bot", STAMP))
    dst.chmod(0o755)
    return dst


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", *args])
    return result.exit_code, result.output


# -- when a build runs -------------------------------------------------------------------
def test_a_build_runs_once_is_skipped_while_nothing_changes_and_runs_after_an_edit(
        tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "counter", "cat src.txt > out.txt; echo built",
                      files={"src.txt": "one\n"})
    spec = load_bot(folder)
    first = ensure_built(spec, isolation=_iso())
    assert first.ran and "built" in first.log
    assert (folder / "out.txt").read_text() == "one\n"  # copied back into the bot folder
    assert (folder / STAMP).is_file()
    again = ensure_built(spec, isolation=_iso())
    assert not again.ran and again.describe().startswith("up to date")
    (folder / "src.txt").write_text("two\n")  # an edit: another size and mtime
    third = ensure_built(spec, isolation=_iso())
    assert third.ran
    assert (folder / "out.txt").read_text() == "two\n"


def test_no_build_step_is_not_built(tmp_path: Path) -> None:
    spec = load_bot(ROOT / "bots" / "random")
    assert ensure_built(spec).describe() == "no build step"
    assert build_failure(spec) is None
    assert not (ROOT / "bots" / "random" / STAMP).exists()


def test_a_failure_is_one_line_with_the_reason_and_remembered_until_the_folder_changes(
        tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "broken",
                      "echo compiling; echo 'main.x:3: error: no such thing' >&2; exit 2")
    spec = load_bot(folder)
    with pytest.raises(BuildError) as caught:
        ensure_built(spec, isolation=_iso())
    message = str(caught.value)
    assert message.startswith("build failed (exit 2) after ")
    assert message.endswith("s: main.x:3: error: no such thing")
    assert "\n" not in message and "compiling" in caught.value.log
    assert caught.value.exit == 2
    assert build_failure(spec) == message  # from the stamp, without building
    stamped = (folder / STAMP).stat().st_mtime_ns
    with pytest.raises(BuildError, match="exit 2"):  # remembered: not built again
        ensure_built(spec, isolation=_iso())
    assert (folder / STAMP).stat().st_mtime_ns == stamped  # no new build wrote it
    record = play_game(spec, load_bot(ROOT / "bots" / "random"), get_variant("nine-mens-morris"),
                       TimeControl(movetime_ms=100), isolation=_iso())
    assert record.termination == "start-failure" and record.forfeit == "white"
    assert message in record.detail  # the game says why: the build, not a missing program
    (folder / "bot.yaml").write_text((folder / "bot.yaml").read_text().replace("exit 2", "true"))
    spec = load_bot(folder)
    assert build_failure(spec) is None  # the folder changed
    assert ensure_built(spec, isolation=_iso()).ran


def test_the_build_timeout_is_enforced_and_nothing_of_the_build_survives(tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "slow", "sleep 31.4159 & sleep 31.4158", timeout=0.5)
    started = time.monotonic()
    with pytest.raises(BuildError, match=r"^build timed out after 0\.5 s"):
        ensure_built(load_bot(folder), isolation=_iso())
    assert time.monotonic() - started < 5
    left = [p.pid for p in psutil.process_iter(["cmdline"])
            if any(a.startswith("31.415") for a in (p.info["cmdline"] or []))]
    assert left == []


def test_the_output_is_capped_keeping_its_head_and_tail(tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "loud", "echo first-line; head -c 3000000 /dev/zero | tr '\\0' x;"
                                         " echo; echo last-line")
    result = ensure_built(load_bot(folder), isolation=_iso())
    assert len(result.log) < B.HEAD_CAP + B.TAIL_CAP + 200
    assert result.log.startswith("first-line") and "last-line" in result.log
    assert "bytes of output left out" in result.log


def test_a_build_that_fills_the_disk_is_stopped(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(B, "SPACE_MB", 1)
    folder = make_bot(tmp_path / "filler", "for i in 1 2 3 4 5 6 7 8; do head -c 1000000 /dev/zero"
                                           " > f$i; sleep 0.1; done; sleep 20", timeout=30)
    started = time.monotonic()
    with pytest.raises(BuildError, match="it wrote more than 1 MiB"):
        ensure_built(load_bot(folder), isolation=_iso())
    assert time.monotonic() - started < 10
    assert not (folder / "f1").exists()  # nothing copied back


#: a build that writes 1000 MiB in five files (each under the 256 MiB file size limit) and
#: deletes them while holding them open: nothing of it is left in its folder, and the disk
#: space is taken until the files are closed
HIDDEN_FILLER = """
import os, time
held = []
for i in range(5):
    name = "hidden-%d" % i
    fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o600)
    os.posix_fallocate(fd, 0, 200 << 20)
    os.unlink(name)
    held.append(fd)
print("holding 1000 MiB in deleted files", flush=True)
time.sleep(40)
"""


def _free_bytes(path: str) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


@pytest.mark.parametrize("level", [Level.BASIC, Level.BWRAP], ids=lambda lv: lv.value)
def test_deleted_files_a_build_keeps_open_count_against_its_disk_cap(
        level: Level, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Looks count deleted files a build holds open (a referee that may not mount a file
    system of the build's own has only looks: tests/test_build_disk.py tests that one)."""
    monkeypatch.setattr(B, "OWN_FILESYSTEM", False)
    if level not in LEVELS:
        pytest.skip(_confining(level))
    scratch_base = tempfile.gettempdir()
    if _free_bytes(scratch_base) < (3 << 30):
        pytest.skip(f"less than 3 GiB free in {scratch_base}: the test writes 1000 MiB there")
    folder = make_bot(tmp_path / "hider", f"{sys.executable} fill.py", timeout=60,
                      files={"fill.py": HIDDEN_FILLER})
    free_before = _free_bytes(scratch_base)
    started = time.monotonic()
    with pytest.raises(BuildError) as caught:
        ensure_built(load_bot(folder), isolation=Isolation(level))
    took = time.monotonic() - started
    message = str(caught.value)
    assert message.startswith("build stopped after "), message
    assert f"it wrote more than {B.SPACE_MB} MiB" in message
    assert "MiB in deleted files it kept open" in message
    assert took < 30, f"stopped only after {took:.1f} s (build_timeout 60 s): {message}"
    leftovers = list(Path(scratch_base).glob(f"morris-arena-{os.getpid()}-build-*"))
    assert leftovers == []
    # the space comes back once the build's processes are gone (a journal commits the
    # release within seconds); the margin allows for other writers on a shared machine
    deadline = time.monotonic() + 30
    while _free_bytes(scratch_base) < free_before - (300 << 20) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _free_bytes(scratch_base) >= free_before - (300 << 20), "the space was not released"


@pytest.mark.parametrize("level", [Level.BASIC, Level.BWRAP], ids=lambda lv: lv.value)
def test_the_private_tmp_of_a_build_is_bounded(level: Level, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A build's ``$TMPDIR`` is a tmpfs of ``tmp_mb`` where the level confines files (bwrap,
    basic as root); at basic as a normal user it is a host folder, counted by the cap."""
    if level not in LEVELS:
        pytest.skip(_confining(level))
    monkeypatch.setattr(B, "SPACE_MB", 8)
    folder = make_bot(tmp_path / "tmpfill", 'head -c 40000000 /dev/zero > "$TMPDIR/big" || '
                      '{ echo "the write failed"; exit 7; }; sleep 30', timeout=60)
    started = time.monotonic()
    with pytest.raises(BuildError) as caught:
        ensure_built(load_bot(folder), isolation=Isolation(level, Limits(tmp_mb=16)))
    assert time.monotonic() - started < 30
    if _confining(level):  # basic as a normal user: a host folder, counted
        assert "it wrote more than 8 MiB" in str(caught.value)
    else:  # a tmpfs of 16 MiB: full before 40 MB
        assert "No space left on device" in caught.value.log, caught.value.log
        assert str(caught.value).startswith("build failed (exit 7)")


@pytest.mark.parametrize("level", [Level.BASIC, Level.BWRAP], ids=lambda lv: lv.value)
def test_a_build_reads_only_what_the_bots_games_could_read(level: Level, tmp_path: Path) -> None:
    """As root the referee copies the bot folder for the build: what the build's uid could
    not read in place (a root-only file hard-linked into the folder, a closed folder) is
    left out and named, and never reaches the output, the stamp or a copied-back file."""
    if not is_root():
        pytest.skip("only a root referee can read what the build's uid may not (as another "
                    "user, the build runs as that user)")
    if level not in LEVELS:
        pytest.skip(_confining(level))
    secret = f"SECRET-{os.urandom(8).hex()}"
    source = tmp_path / "shadow-like"  # root's, 0600, outside the bot folder
    source.write_text(secret + "\n")
    source.chmod(0o600)
    folder = make_bot(tmp_path / "reader", "cat linked.txt; cp linked.txt copied.txt; "
                      "cat private/inner.txt; cat private/inner.txt > inner-copy.txt; "
                      "cat linked.txt private/* */* > all.txt; echo replaced > linked.txt; "
                      "echo built", files={"main.txt": "public\n"})
    os.link(source, folder / "linked.txt")
    (folder / "private").mkdir(mode=0o700)
    (folder / "private" / "inner.txt").write_text(secret + "\n")
    (folder / "private" / "inner.txt").chmod(0o644)  # readable, in a folder others cannot enter
    result = ensure_built(load_bot(folder), isolation=Isolation(level))
    assert "built" in result.log
    assert "left out of the build: linked.txt (not readable by the sandbox user)" in result.log
    assert ("left out of the build: private/ (a folder the sandbox user may not enter)"
            in result.log)
    assert "not copied back: linked.txt (left out of the build)" in result.log
    assert secret not in result.log
    assert secret not in (folder / STAMP).read_text()
    originals = {folder / "linked.txt", folder / "private" / "inner.txt"}
    for path in folder.rglob("*"):
        if path.is_file() and path not in originals:
            assert secret not in path.read_text(errors="replace"), path
    assert not (folder / "copied.txt").exists()
    assert (folder / "linked.txt").read_text() == secret + "\n"  # not replaced by the build
    assert os.path.samefile(folder / "linked.txt", source)


# -- containment ---------------------------------------------------------------------------
@pytest.mark.parametrize("level", [Level.BASIC, Level.BWRAP], ids=lambda lv: lv.value)
def test_a_build_cannot_write_outside_its_scratch_folder(level: Level, outside: Path) -> None:
    why = _confining(level)
    if why:
        pytest.skip(why)
    folder = make_bot(outside / "bot", "echo x > {out}/escaped; echo y > {real}/direct.txt; "
                      "echo z > ../sibling; echo ok > inside.txt; true".format(
                          out=outside, real=outside / "bot"))
    (outside / "bot").chmod(0o777)  # only the sandbox may keep the build out of it
    result = ensure_built(load_bot(folder), isolation=Isolation(level))
    assert (folder / "inside.txt").read_text() == "ok\n"
    assert not (outside / "escaped").exists()
    assert not (folder / "direct.txt").exists()
    assert not (outside / "sibling").exists()
    assert "Read-only file system" in result.log or "Permission denied" in result.log


@pytest.mark.parametrize("level", [Level.BASIC, Level.BWRAP], ids=lambda lv: lv.value)
def test_a_fork_bomb_build_is_contained_and_ended(level: Level, tmp_path: Path) -> None:
    from tests.hostile.conftest import containment

    why = _confining(level) or containment(level)
    if why:
        pytest.skip(why)
    # the build's own shell forks exactly once, first, while nothing else runs: one subshell
    # for the bomb, then it waits in an exec'd sleep. Any later fork of its own could meet the
    # pids limit and end the build with "Cannot fork" before the timeout this test is about;
    # a bare `b | b &` at the top is two forks of this shell (one per side of the pipe), and the
    # second one lost that race now and then in CI
    folder = make_bot(tmp_path / "bomb", "sh bomb-31415.sh", timeout=1.5,
                      files={"bomb-31415.sh": "b() { b | b & }\n(b) &\nexec sleep 30\n"})
    iso = Isolation(level, Limits(pids=24, memory_mb=96))
    zombies = _bot_zombies()
    started = time.monotonic()
    with pytest.raises(BuildError, match=r"^build timed out after 1\.5 s"):
        ensure_built(load_bot(folder), isolation=iso)
    assert time.monotonic() - started < 8
    left = [p.pid for p in psutil.process_iter(["cmdline"])
            if "bomb-31415.sh" in " ".join(p.info["cmdline"] or [])]
    assert left == []
    # at basic the bomb's orphans are ours (the child subreaper): the dead ones are collected,
    # not left as zombies of a bot's uid (which a later bot given that uid would inherit)
    assert _bot_zombies() - zombies == set()


def _bot_zombies() -> set[int]:
    """Zombie children of this process that ran as a bot's unique uid (as root)."""
    from arena.sandbox.procs import UID_BASE

    found = set()
    for child in psutil.Process().children():
        try:
            if child.status() == psutil.STATUS_ZOMBIE and child.uids().real >= UID_BASE:
                found.add(child.pid)
        except psutil.Error:
            continue
    return found


def test_a_link_planted_in_the_bot_folder_cannot_redirect_the_copy_back(
        tmp_path: Path, outside: Path) -> None:
    target = outside / "victim"
    target.mkdir()
    folder = make_bot(tmp_path / "planted", "rm out; mkdir out; echo pwned > out/file; "
                      "ln -s /etc/passwd link", files={"main.txt": "x\n"})
    (folder / "out").symlink_to(target)
    with pytest.raises(BuildError, match="could not be copied into the bot folder"):
        ensure_built(load_bot(folder), isolation=_iso(Level.NONE))
    assert not (target / "file").exists()
    assert (folder / "out").is_symlink()


def test_links_made_by_the_build_are_not_copied_back_and_the_stamp_replaces_a_planted_link(
        tmp_path: Path, outside: Path) -> None:
    victim = outside / "victim.txt"
    victim.write_text("keep\n")
    folder = make_bot(tmp_path / "links", "ln -s /etc/passwd link; echo made > made.txt")
    (folder / STAMP).symlink_to(victim)
    result = ensure_built(load_bot(folder), isolation=_iso())
    assert "not copied back: link (a symbolic link)" in result.log
    assert result.not_copied == ("link (a symbolic link)",)
    assert not (folder / "link").exists() and (folder / "made.txt").is_file()
    assert victim.read_text() == "keep\n"
    assert (folder / STAMP).is_file() and not (folder / STAMP).is_symlink()


#: a build that makes what cargo makes (a program hard-linked to its copy in deps/), a hard
#: link with three names, a symbolic link and a FIFO
LINKS_BUILD = ("mkdir -p target/release/deps "
               "&& printf 'program\\n' > target/release/deps/prog-1a2b "
               "&& ln target/release/deps/prog-1a2b target/release/prog && printf 'three\\n' > a "
               "&& ln a b && ln a c && ln -s a symlink && mkfifo pipe")


@pytest.mark.parametrize("level", [Level.BASIC, Level.BWRAP], ids=lambda lv: lv.value)
def test_hard_links_are_copied_back_as_files_and_what_is_not_copied_is_named(
        level: Level, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A hard link is a file: each of its names comes back with the content (cargo's
    ``target/release/<bin>``; before, it was skipped and the program vanished); a symbolic
    link and a FIFO the build made are named in the output and in a console warning, the
    bot folder's own link is not."""
    if level not in LEVELS:
        pytest.skip(_confining(level) or f"level {level.value} is not available here")
    folder = make_bot(tmp_path / "links", LINKS_BUILD)
    (folder / "own-link").symlink_to("bot.yaml")
    with caplog.at_level("WARNING", logger="arena.build"):
        result = ensure_built(load_bot(folder), isolation=Isolation(level))
    assert (folder / "target/release/prog").read_text() == "program\n"
    assert (folder / "target/release/deps/prog-1a2b").read_text() == "program\n"
    for name in "abc":
        assert (folder / name).read_text() == "three\n"
        assert (folder / name).stat().st_nlink == 1  # a file of its own in the bot folder
    assert "hard link" not in result.log
    assert result.not_copied == ("pipe (a FIFO)", "symlink (a symbolic link)")
    assert "not copied back: symlink (a symbolic link)" in result.log
    assert not (folder / "pipe").exists() and not (folder / "symlink").exists()
    assert os.readlink(folder / "own-link") == "bot.yaml"  # the folder's own: left alone
    warned = [r.getMessage() for r in caplog.records if r.name == "arena.build"]
    assert len(warned) == 1, warned
    assert warned[0].startswith("links: build output not copied back into ")
    assert "pipe (a FIFO); symlink (a symbolic link)" in warned[0]
    # up to date: said again (the files are still missing), nothing built
    caplog.clear()
    with caplog.at_level("WARNING", logger="arena.build"):
        again = ensure_built(load_bot(folder), isolation=Isolation(level))
    assert not again.ran and again.not_copied == result.not_copied
    assert [r for r in caplog.records if "symlink (a symbolic link)" in r.getMessage()]


def test_what_is_not_copied_back_is_named_on_the_console_of_arena_check(
        tmp_path: Path) -> None:
    """The real command line (no test logging in the way): the build's warning reaches
    the console, then the check passes."""
    folder = make_bot(tmp_path / "console", "ln -s bot.py link-made && cp bot.py copy.py",
                      files={"bot.py": (ROOT / "docs/examples/first/bot.py").read_text()})
    manifest = yaml.safe_load((folder / "bot.yaml").read_text())
    (folder / "bot.yaml").write_text(yaml.safe_dump({**manifest, "legal_moves": True}))
    done = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", "check", str(folder),
         "--games", "1", "--variant", "nine-mens-morris"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("console: build output not copied back into " in done.stderr
            and "link-made (a symbolic link)" in done.stderr), done.stderr
    assert "PASS: console" in done.stdout


# -- arena check and the C example -------------------------------------------------------
@needs_cc
def test_a_compile_error_is_a_build_failure_verdict_with_the_compiler_message(
        tmp_path: Path) -> None:
    folder = copy_c_first(tmp_path)
    source = (folder / "bot.c").read_text()
    (folder / "bot.c").write_text(source.replace("return 0;", "return 0"))
    code, out = check(str(folder), "--games", "1", "--variant", "nine-mens-morris")
    assert code == 1, out
    assert "problem: build-failure: build failed (exit 1) after " in out
    assert "bot.c:" in out and "error:" in out  # the compiler's own message
    assert "build output (last lines):" in out
    assert "handshake:" not in out and "game " not in out  # no game played
    assert out.rstrip().endswith("FAIL: 1 problem(s)")


@needs_cc
def test_the_c_bot_passes_arena_check_after_its_build(tmp_path: Path) -> None:
    folder = copy_c_first(tmp_path)
    code, out = check(str(folder), "--games", "2", "--variant", "nine-mens-morris",
                      "--variant", "six-mens-morris", "--movetime", "100")
    assert code == 0, out
    assert "build: built in " in out and "cc -O2" in out
    assert (folder / "bot").is_file()
    assert "PASS: c-first" in out
    code, out = check(str(folder), "--games", "1", "--variant", "nine-mens-morris")
    assert code == 0 and "build: up to date" in out, out
