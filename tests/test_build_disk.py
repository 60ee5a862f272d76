"""A build's disk as the file system counts it (:mod:`arena.build`, issue 37): blocks that
``fallocate(FALLOC_FL_KEEP_SIZE)`` reserves past the end of a file (its size unchanged, so
neither a sum of sizes nor ``file_size_mb`` sees them), in a file kept in the folder or in
one deleted and held open, count against the build's cap; so do empty files against its
cap on entries; and a build that exits between two looks is judged by a last look.  Real
builds in real sandboxes, with small caps (a few MiB, a few hundred entries) so that they
stay cheap."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from arena import build as B
from arena.build import BuildError, disk_usage, ensure_built
from arena.manifest import load_bot
from arena.sandbox import Isolation, Level, Limits, available_levels, bwrap_status
from tests.test_build import make_bot

LEVELS = available_levels()
CONFINING = [Level.BASIC, Level.BWRAP]

#: reserves MiB (argv 2) past the end of the file ``big`` (its size stays 0), deletes the
#: file but keeps it open when argv 1 is ``unlinked``, says what it holds, then sleeps
#: argv 3 seconds
FALLOCATE = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
how, mib, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
fd = os.open("big", os.O_RDWR | os.O_CREAT, 0o600)
if libc.fallocate(fd, 1, 0, mib << 20) != 0:  # 1: FALLOC_FL_KEEP_SIZE
    print("fallocate failed:", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(3)
st = os.fstat(fd)
if how == "unlinked":
    os.unlink("big")
print("holding %d MiB in a file of %d bytes" % (st.st_blocks * 512 >> 20, st.st_size),
      flush=True)
time.sleep(hold)
"""

#: makes argv 1 empty files, then sleeps argv 2 seconds
EMPTY_FILES = """
import os, sys, time
os.mkdir("many")
for i in range(int(sys.argv[1])):
    os.close(os.open("many/%d" % i, os.O_WRONLY | os.O_CREAT, 0o644))
print("made", sys.argv[1], "empty files", flush=True)
time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's ``tmp_path``, readable by other users (as root a build runs as another uid)."""
    tmp_path.chmod(0o755)
    return tmp_path


def _level(level: Level) -> Isolation:
    """A build's isolation at ``level`` with ``file_size_mb`` 1 (far below what the builds
    here reserve: it does not stop them)."""
    if level not in LEVELS:
        pytest.skip(f"bubblewrap is not usable here: {bwrap_status().detail}"
                    if level is Level.BWRAP else f"level {level.value} is not available here")
    return Isolation(level, Limits(file_size_mb=1))


def _build(folder: Path, level: Level) -> tuple[BuildError, float]:
    started = time.monotonic()
    with pytest.raises(BuildError) as caught:
        ensure_built(load_bot(folder), isolation=_level(level))
    return caught.value, time.monotonic() - started


def _fallocating_bot(tmp_path: Path, how: str, mib: int, hold: float) -> Path:
    return make_bot(tmp_path / f"falloc-{how}",
                    f"{sys.executable} falloc.py {how} {mib} {hold:g}", timeout=60,
                    files={"falloc.py": FALLOCATE})


def test_disk_usage_counts_blocks_sparse_sizes_links_and_empty_files(tmp_path: Path) -> None:
    """The measure itself: reserved blocks past the end, a sparse file's size (what the
    copy-back writes), a hard link's size again, and every empty file as an entry."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    folder = tmp_path / "d"
    folder.mkdir()
    fd = os.open(folder / "reserved", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if libc.fallocate(fd, 1, 0, 8 << 20) != 0:
            pytest.skip(f"fallocate: {os.strerror(ctypes.get_errno())} on {tmp_path}")
    finally:
        os.close(fd)
    assert (folder / "reserved").stat().st_size == 0
    with open(folder / "sparse", "wb") as f:
        f.truncate(3 << 20)
    for i in range(50):
        (folder / f"empty{i}").touch()
    (folder / "one").write_bytes(b"x" * 100_000)
    os.link(folder / "one", folder / "two")

    size, count = B._usage(str(folder))
    assert count == 50 + 4
    assert size >= (8 << 20) + (3 << 20) + 2 * 100_000, size
    # before: sizes only (what the cap summed), 3.2 MB for 11 MiB held or to be written
    apparent = sum(p.lstat().st_size for p in folder.iterdir())
    assert apparent < (3 << 20) + 300_000
    assert disk_usage([]) == (0, 0)


@pytest.mark.parametrize("level", CONFINING, ids=lambda lv: lv.value)
@pytest.mark.parametrize("how", ["kept", "unlinked"])
def test_blocks_fallocated_past_the_end_of_a_file_stop_the_build_at_its_cap(
        level: Level, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """64 MiB reserved with KEEP_SIZE (the file's size stays 0, past ``file_size_mb`` 1)
    against a cap of 4 MiB: the build is stopped at a look while it holds them, whether the
    file stays in its folder or is deleted and held open."""
    monkeypatch.setattr(B, "SPACE_MB", 4)
    folder = _fallocating_bot(tmp_path, how, 64, 40)
    error, took = _build(folder, level)
    message = str(error)
    assert message.startswith("build stopped after "), (message, error.log)
    assert "it wrote more than 4 MiB" in message
    if how == "kept":
        assert "64 MiB on disk in" in message, message
    else:
        assert "64 MiB in deleted files it kept open" in message, message
    assert took < 30, f"stopped only after {took:.1f} s (it sleeps 40 s): {message}"
    assert not (folder / "big").exists()  # nothing copied back


@pytest.mark.parametrize("level", CONFINING, ids=lambda lv: lv.value)
def test_a_build_that_reserves_blocks_and_exits_before_a_look_fails(
        level: Level, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same build ending at once, between two looks (made 30 s apart: none is taken
    while it runs): the last look, its processes gone, fails it, and nothing of it comes
    back into the bot folder."""
    monkeypatch.setattr(B, "SPACE_MB", 4)
    monkeypatch.setattr(B, "POLL_S", 30.0)
    folder = _fallocating_bot(tmp_path, "kept", 64, 0)
    error, _ = _build(folder, level)
    message = str(error)
    assert message.startswith("build failed after "), (message, error.log)
    assert "it wrote more than 4 MiB" in message and "64 MiB on disk" in message, message
    # it ran to its end: KEEP_SIZE left the size at 0, and file_size_mb (1) did not stop it
    assert "holding 64 MiB in a file of 0 bytes" in error.log, error.log
    assert not (folder / "big").exists()


@pytest.mark.parametrize("level", CONFINING, ids=lambda lv: lv.value)
@pytest.mark.parametrize("hold", [0.0, 40.0], ids=["exits", "stays"])
def test_empty_files_past_the_cap_on_entries_fail_the_build(
        level: Level, hold: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2000 empty files (no bytes, no blocks) against a cap of 300 entries: stopped at a
    look while the build sleeps, failed by the last look when it exits before any other
    (looks 30 s apart)."""
    monkeypatch.setattr(B, "FILES_CAP", 300)
    if hold == 0:
        monkeypatch.setattr(B, "POLL_S", 30.0)
    folder = make_bot(tmp_path / "empties", f"{sys.executable} many.py 2000 {hold:g}",
                      timeout=60, files={"many.py": EMPTY_FILES})
    error, took = _build(folder, level)
    message = str(error)
    start = "build failed after " if hold == 0 else "build stopped after "
    assert message.startswith(start), (message, error.log)
    assert "or 300 entries" in message
    entries = int(message.split(" entries of its folders")[0].rsplit(" ", 1)[1])
    assert entries > 300, message
    assert took < 30, message
    assert not (folder / "many").exists()
