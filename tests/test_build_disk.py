"""A build's disk as the file system counts it (:mod:`arena.build`, issue 37): blocks that
``fallocate(FALLOC_FL_KEEP_SIZE)`` reserves past the end of a file (its size unchanged, so
neither a sum of sizes nor ``file_size_mb`` sees them), in a file kept in the folder or in
one deleted and held open, count against the build's cap; so do empty files against its
cap on entries; and a build that exits between two looks is judged by a last look.  Where
the referee may mount (root), the scratch folder is a tmpfs of the cap's size
(:mod:`arena.sandbox.scratchfs`), which also bounds what no look sees: a file whose
descriptor is in flight in a Unix socket.  Real builds in real sandboxes, with small caps
(a few MiB, a few hundred entries) so that they stay cheap."""

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


@pytest.fixture(autouse=True)
def counting_only(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests of looks and counts see them alone (the fall-back of a referee that may not
    mount): the scratch folder stays on its parent's file system, except in the tests of a
    file system of the build's own (their names say ``own_file_system``)."""
    if "own_file_system" not in request.node.name:
        monkeypatch.setattr(B, "OWN_FILESYSTEM", False)


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


#: writes up to argv 1 MiB into the file ``big`` (stopping at ENOSPC), sends its descriptor
#: through a Unix socket and never receives it, sends that socket through itself too,
#: closes and deletes everything (no process holds the file: only the kernel's queue of an
#: unreachable socket does), says how much it wrote, sleeps argv 2 seconds
IN_FLIGHT = """
import array, os, socket, sys, time
fd = os.open("big", os.O_RDWR | os.O_CREAT, 0o600)
wrote = 0
try:
    for _ in range(int(sys.argv[1])):
        wrote += os.write(fd, b"x" * (1 << 20))
except OSError as e:
    print("write stopped:", e.strerror, flush=True)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.sendmsg([b"f"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
a.sendmsg([b"s"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno()]))])
os.close(fd)
os.unlink("big")
a.close()
b.close()
print("in flight: %d MiB" % (wrote >> 20), flush=True)
time.sleep(float(sys.argv[2]))
"""


def _own_file_system(level: Level, tmp_path: Path) -> Isolation:
    """The isolation at ``level``; skips where the referee may not mount a tmpfs."""
    from arena.sandbox.scratchfs import mount_bounded, unmount

    probe = tmp_path / "probe"
    probe.mkdir()
    if not mount_bounded(str(probe), 1 << 20, 16):
        pytest.skip("this referee may not mount a tmpfs (not root, or no CAP_SYS_ADMIN): "
                    "builds are bounded by looks only")
    unmount(str(probe))
    _level(level)  # skips where the level is missing
    return Isolation(level, Limits(file_size_mb=256))  # the file system stops them, not this


def _mounted_scratch() -> list[str]:
    """This process's build scratch folders still mounted."""
    from arena.sandbox.watchdog import TEMP_PREFIX

    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f
                if f"/{TEMP_PREFIX}{os.getpid()}-build-" in line.split()[4]]


def _build_log(folder: Path, isolation: Isolation) -> str:
    """The output of the build of ``folder``, whether it passed or failed (then with its
    one line last)."""
    try:
        return ensure_built(load_bot(folder), isolation=isolation).log
    except BuildError as e:
        return f"{e.log}\n{e}"


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.value)
def test_a_descriptor_in_flight_is_bounded_by_the_own_file_system(
        level: Level, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build writes up to 64 MiB into a file, puts the file's descriptor in flight in an
    unreachable Unix socket and deletes everything: no look can see that file.  On a file
    system of its own of 4 MiB it cannot write more than 4 MiB (whether the kernel frees the
    socket at once, and the build passes, or later); looks alone let it hold all 64 MiB.
    No mount is left afterwards."""
    isolation = _own_file_system(level, tmp_path)
    monkeypatch.setattr(B, "SPACE_MB", 4)
    folder = make_bot(tmp_path / "in-flight", f"{sys.executable} flight.py 64 0.5",
                      timeout=60, files={"flight.py": IN_FLIGHT})
    log = _build_log(folder, isolation)
    assert "write stopped: No space left on device" in log, log
    assert int(log.split("in flight: ")[1].split(" MiB")[0]) <= 4, log
    assert _mounted_scratch() == []
    assert not (folder / "big").exists()

    monkeypatch.setattr(B, "OWN_FILESYSTEM", False)  # looks only: the hole it closes
    (folder / B.STAMP).unlink(missing_ok=True)
    (folder / "flight.py").write_text(IN_FLIGHT + "\n")  # another digest: built again
    log = _build_log(folder, isolation)
    # all 64 MiB went in flight, unseen; or, on a loaded machine, a look caught the file
    # while it was being written, before it went in flight (what the file system bounds
    # whatever the timing)
    assert "in flight: 64 MiB" in log or "it wrote more than 4 MiB" in log, log


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.value)
def test_a_build_within_its_own_file_system_passes_and_is_copied_back(
        level: Level, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build writing 2 MiB and 100 files under a cap of 4 MiB and 300 entries passes on
    its own file system, its output comes back, and no mount is left."""
    isolation = _own_file_system(level, tmp_path)
    monkeypatch.setattr(B, "SPACE_MB", 4)
    monkeypatch.setattr(B, "FILES_CAP", 300)
    script = ("import os\nos.mkdir('out')\n"
              "open('out/blob', 'wb').write(b'y' * (2 << 20))\n"
              "[open('out/%d' % i, 'w').close() for i in range(100)]\n")
    folder = make_bot(tmp_path / "fits", f"{sys.executable} fits.py", timeout=60,
                      files={"fits.py": script})
    ensure_built(load_bot(folder), isolation=isolation)
    assert (folder / "out" / "blob").stat().st_size == 2 << 20
    assert len(list((folder / "out").iterdir())) == 101
    assert _mounted_scratch() == []


@pytest.mark.parametrize("level", CONFINING, ids=lambda lv: lv.value)
def test_fallocate_past_the_cap_fails_on_the_own_file_system(
        level: Level, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """64 MiB reserved past a file's end on a 4 MiB file system of its own: the kernel
    refuses the reservation; the build fails and nothing comes back."""
    isolation = _own_file_system(level, tmp_path)
    monkeypatch.setattr(B, "SPACE_MB", 4)
    folder = _fallocating_bot(tmp_path, "kept", 64, 0)
    with pytest.raises(BuildError) as caught:
        ensure_built(load_bot(folder), isolation=isolation)
    assert "fallocate failed: No space left on device" in caught.value.log, caught.value.log
    assert not (folder / "big").exists()


def test_removing_a_scratch_folder_unmounts_its_file_system(tmp_path: Path) -> None:
    """The watchdog's and the build's removal of a scratch folder detaches the tmpfs on it
    (a referee killed mid-build leaves no mount behind once its folders are swept)."""
    from arena.sandbox.scratchfs import is_mount, mount_bounded
    from arena.sandbox.watchdog import remove_tree

    _own_file_system(Level.NONE, tmp_path)
    folder = tmp_path / "scratch"
    folder.mkdir()
    assert mount_bounded(str(folder), 1 << 20, 16)
    (folder / "x").write_bytes(b"z" * 1000)
    assert is_mount(str(folder))
    assert remove_tree(str(folder))
    assert not folder.exists()
