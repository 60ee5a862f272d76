"""The judge's fairness, stopping and disk rules: the library on a real SQLite file (the
queue's round-robin, cancels, the attempt cap, quotas and removal, records without the
server's folders), then a real ``arena server run`` process with real hostile builds (two
never-ending builds of one participant beside another's ordinary upload; a check stopped by
retiring its bot; builds ended by timeout, cancel and a SIGKILL of the server, with the
server's temporary folder counted before and after).  Skipped with a reason where the
``server`` extra is not installed."""

from __future__ import annotations

import io
import json
import os
import time
import zipfile
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest
from click.testing import CliRunner

pytest.importorskip("sqlalchemy", reason="the server extra is not installed "
                                         "(pip install -e '.[server]')")
pytest.importorskip("fastapi", reason="the server extra is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

from arena.cli import cli  # noqa: E402
from arena.server.config import ServerConfig, UploadLimits  # noqa: E402
from arena.server.service import (Competition, Forbidden, NotFound, Refused,  # noqa: E402
                                  init_competition)
from tests.synth_records import make_record  # noqa: E402
from tests.test_server import Server, _competition, _wait, bot_archive  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _zip(files: dict[str, str | bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return buf.getvalue()


def _random_zip(name: str, padding: int = 0) -> bytes:
    """A copy of bots/random named ``name`` (with ``padding`` bytes of an extra file)."""
    files: dict[str, str | bytes] = {
        f: (ROOT / "bots" / "random" / f).read_text().replace("name: random", f"name: {name}")
        for f in ("bot.py", "bot.yaml")}
    if padding:
        files["padding.bin"] = os.urandom(padding)
    return _zip(files)


@pytest.fixture
def comp(tmp_path: Path) -> Iterator[Competition]:
    init_competition(tmp_path / "c", ServerConfig(pairs=1))
    c = Competition(tmp_path / "c")
    try:
        yield c
    finally:
        c.close()


def _claim(comp: Competition) -> Optional[int]:
    """The bot of the check claimed now (None: nothing may start)."""
    got = comp.claim_check()
    return None if got is None else got[1]


def _finish(comp: Competition, bot: int, passed: bool = True) -> None:
    job = _job_of(comp, bot)
    comp.finish_check(job, bot, passed, "PASS" if passed else "FAIL: x", "log")


def _job_of(comp: Competition, bot: int) -> int:
    from sqlalchemy import select

    from arena.server.models import Job

    with comp.sessions() as s:
        job = s.scalar(select(Job.id).where(Job.bot_id == bot).order_by(Job.id.desc()))
        assert job is not None
        return int(job)


# ---- fair share ----------------------------------------------------------------------


def test_a_check_not_judged_is_queued_again_later_neither_passed_nor_failed(
        comp: Competition, monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine was too busy to judge a check (NOT JUDGED): its bot stays ``checking``,
    its verdict says so, and the check runs again after a pause (others meanwhile)."""
    from arena.server import uploads

    monkeypatch.setattr(uploads, "NOT_JUDGED_RETRY_S", 1.0)
    alice, bob = (comp.authenticate(comp.add_user(n)) for n in ("alice", "bob"))
    a = comp.submit(alice, "a.zip", _random_zip("a"))["id"]
    b = comp.submit(bob, "b.zip", _random_zip("b"))["id"]
    assert _claim(comp) == a
    waited = comp.requeue_check(_job_of(comp, a), a, "NOT JUDGED: too busy", "the log")
    assert waited == 1.0
    from arena.server.models import Bot

    with comp.sessions() as s:
        row = s.get(Bot, a)
        assert row is not None and row.status == "checking"
        assert row.verdict.startswith("not judged yet (not judged 1 time)"), row.verdict
        assert "NOT JUDGED: too busy" in row.verdict and row.check_log == "the log"
    assert _claim(comp) == b  # alice's is not due yet
    assert _claim(comp) is None
    time.sleep(1.1)
    assert _claim(comp) == a  # due now: again
    assert comp.requeue_check(_job_of(comp, a), a, "NOT JUDGED: still busy", "") == 2.0
    with comp.sessions() as s:
        row = s.get(Bot, a)
        assert row is not None and "(not judged 2 times)" in row.verdict


def test_one_check_per_participant_and_round_robin_over_participants(
        comp: Competition) -> None:
    """A participant with many uploads (an admin too) has one check running at a time;
    the queue serves the participant whose latest check started longest ago first."""
    hostile, student, admin = (comp.authenticate(comp.add_user(n, admin=n == "root"))
                               for n in ("hostile", "student", "root"))
    h = [comp.submit(hostile, "h.zip", _random_zip(f"h{i}"))["id"] for i in range(3)]
    s1 = comp.submit(student, "s.zip", _random_zip("s"))["id"]
    a = [comp.submit(admin, "a.zip", _random_zip(f"a{i}"))["id"] for i in range(2)]
    # one check each, in the order the participants first uploaded; then nothing may start
    assert [_claim(comp), _claim(comp), _claim(comp), _claim(comp)] == [h[0], s1, a[0], None]
    _finish(comp, h[0])
    assert _claim(comp) == h[1]  # the only participant with work and no check running
    _finish(comp, s1)
    s2 = comp.submit(student, "s.zip", _random_zip("s"))["id"]
    _finish(comp, a[0])
    # the student's latest check started before the hostile's and the admin's: first
    assert [_claim(comp), _claim(comp), _claim(comp)] == [s2, a[1], None]
    _finish(comp, h[1])
    assert _claim(comp) == h[2]


def test_an_upload_waits_behind_at_most_one_check_of_each_other_participant(
        comp: Competition) -> None:
    """However many uploads the others queued before it, a new participant's upload is
    claimed after at most one check of each of them (one checker: claims in order)."""
    people = [comp.authenticate(comp.add_user(f"p{i}")) for i in range(4)]
    for p in people:
        for n in range(5):
            comp.submit(p, "x.zip", _random_zip(f"{p.name}-{n}"))
    late = comp.authenticate(comp.add_user("late"))
    mine = comp.submit(late, "x.zip", _random_zip("late"))["id"]
    before = []
    while (bot := _claim(comp)) != mine:
        assert bot is not None
        before.append(bot)
        _finish(comp, bot)
    owners = [b["owner"] for b in comp.bots(ids=before)]
    assert sorted(owners) == sorted(p.name for p in people)  # one each, no more


# ---- stopping ------------------------------------------------------------------------


def test_retiring_or_cancelling_stops_a_check_and_drops_a_queued_one(
        comp: Competition) -> None:
    alice, bob = (comp.authenticate(comp.add_user(n)) for n in ("alice", "bob"))
    admin = comp.authenticate(comp.add_user("root", admin=True))
    running = comp.submit(alice, "a.zip", _random_zip("a"))["id"]
    queued = comp.submit(alice, "b.zip", _random_zip("b"))["id"]
    assert _claim(comp) == running
    job = _job_of(comp, running)
    assert comp.check_cancel(job) == ""
    with pytest.raises(Forbidden):
        comp.retire(running, bob)
    comp.retire(queued, alice)  # queued: dropped at once, never claimed
    view = comp.bot_view(queued, alice)
    assert view["status"] == "retired" and view["verdict"].startswith("FAIL: cancelled before")
    comp.retire(running, alice)  # running: its checker is asked to stop
    assert comp.check_cancel(job) == "the bot was retired by its owner"
    comp.finish_check(job, running, False, "FAIL: cancelled (x)", "the log so far")
    view = comp.bot_view(running, alice)
    assert (view["status"], view["verdict"], view["check_log"]) == (
        "retired", "FAIL: cancelled (x)", "the log so far")
    assert _claim(comp) is None
    # an admin cancels a check without retiring the bot; participants may not
    third = comp.submit(bob, "c.zip", _random_zip("c"))["id"]
    assert _claim(comp) == third
    with pytest.raises(Forbidden):
        comp.cancel_check(third, bob)
    comp.cancel_check(third, admin)
    assert comp.check_cancel(_job_of(comp, third)) == "cancelled by an admin"
    assert comp.bot_view(third, bob)["status"] == "rejected"
    with pytest.raises(NotFound):
        comp.cancel_check(running, admin)  # nothing to cancel


def test_a_check_interrupted_three_times_fails_with_the_reason(tmp_path: Path) -> None:
    init_competition(tmp_path / "c")
    comp = Competition(tmp_path / "c")
    alice = comp.authenticate(comp.add_user("alice"))
    bot = comp.submit(alice, "a.zip", _random_zip("a"))["id"]
    try:
        for attempt in (1, 2, 3):
            assert _claim(comp) == bot
            comp.close()  # the server is killed while it runs
            comp = Competition(tmp_path / "c")
            assert comp.recover() == ((1, 0) if attempt < 3 else (0, 0))
        view = comp.bot_view(bot, alice)
        assert view["status"] == "rejected"
        assert "interrupted 3 times" in view["verdict"]
        assert _claim(comp) is None
        assert not (comp.folder / "bots" / str(bot)).exists()  # its folder went at once
    finally:
        comp.close()


# ---- the disk ------------------------------------------------------------------------


def _bots_folder(comp: Competition, bot: int) -> Path:
    return comp.folder / "bots" / str(bot)


def test_rejected_folders_go_old_versions_go_and_the_quota_holds(tmp_path: Path) -> None:
    init_competition(tmp_path / "c", ServerConfig(
        pairs=1, upload=UploadLimits(max_kept_bytes=1_000_000, keep_versions=1)))
    comp = Competition(tmp_path / "c")
    try:
        alice = comp.authenticate(comp.add_user("alice"))
        bob = comp.authenticate(comp.add_user("bob"))
        other = comp.submit(bob, "o.zip", _random_zip("o"))["id"]
        assert _claim(comp) == other
        _finish(comp, other)
        # a rejected upload: its folder goes with the verdict, its archive and log stay
        bad = comp.submit(alice, "a.zip", _random_zip("a"))["id"]
        assert _claim(comp) == bad
        assert _bots_folder(comp, bad).is_dir()
        _finish(comp, bad, passed=False)
        assert not _bots_folder(comp, bad).exists()
        assert (comp.folder / "uploads" / f"{bad}.zip").is_file()
        assert comp.bot_view(bad, alice)["check_log"] == "log"
        assert comp.bot_view(bad, alice)["files_removed"]
        # four versions: each new one retires the last; one retired version is kept
        versions = []
        for _ in range(4):
            v = comp.submit(alice, "a.zip", _random_zip("a"))["id"]
            assert _claim(comp) == v
            _finish(comp, v)
            versions.append(v)
            games = comp.claim_games(10)
            for g in games:  # the ladder plays them: records that must survive removal
                comp.finish_game(g[0], make_record(f"a#{g[1]}", f"b#{g[2]}", 1.0,
                                                   game_id=f"g{g[0]}"))
        kept = [v for v in versions if _bots_folder(comp, v).is_dir()]
        assert kept == versions[-2:]  # the active one and one retired
        for gone in versions[:2]:
            assert not (comp.folder / "uploads" / f"{gone}.zip").exists()
            view = comp.bot_view(gone, alice)
            assert view["status"] == "retired" and len(view["games"]) == 2
            for g in view["games"]:  # replays of removed versions stay
                assert comp.game_view(g["id"], alice)["moves"]
        # the quota: 1 MB kept at most; an upload that would pass it is refused whole
        before = sorted(p.name for p in (comp.folder / "uploads").iterdir())
        with pytest.raises(Refused, match="max_kept_bytes"):
            comp.submit(alice, "big.zip", _random_zip("a", padding=900_000))
        assert sorted(p.name for p in (comp.folder / "uploads").iterdir()) == before
        assert len(comp.bots(owner=alice.id)) == 5
        # what the server keeps for alice is within her quota, and gc finds nothing more
        assert comp.kept_bytes(alice.id) <= 1_000_000
        assert comp.collect_garbage(dry_run=True) == []
    finally:
        comp.close()


def test_arena_server_gc_reports_and_removes_what_the_rules_allow(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    init_competition(folder, ServerConfig(upload=UploadLimits(keep_versions=0)))
    comp = Competition(folder)
    try:
        alice = comp.authenticate(comp.add_user("alice"))
        first = comp.submit(alice, "a.zip", _random_zip("a"))["id"]
        assert _claim(comp) == first
        _finish(comp, first)
        # retired by an admin's hand while no check ran: gc removes it
        comp.retire(first, alice)
    finally:
        comp.close()
    assert _bots_folder(Competition(folder), first).is_dir()
    dry = CliRunner().invoke(cli, ["server", "gc", str(folder), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert f"would remove bot {first} (a by alice): folder and archive" in dry.output
    assert (folder / "bots" / str(first)).is_dir()
    done = CliRunner().invoke(cli, ["server", "gc", str(folder)])
    assert done.exit_code == 0 and "removed 1 upload(s)' files" in done.output, done.output
    assert not (folder / "bots" / str(first)).exists()
    assert not (folder / "uploads" / f"{first}.zip").exists()
    again = CliRunner().invoke(cli, ["server", "gc", str(folder)])
    assert "removed 0 upload(s)' files" in again.output


def test_records_and_logs_do_not_show_the_servers_folders(comp: Competition) -> None:
    alice = comp.authenticate(comp.add_user("alice"))
    bob = comp.authenticate(comp.add_user("bob"))
    a = comp.submit(alice, "a.zip", _random_zip("a"))["id"]
    b = comp.submit(bob, "b.zip", _random_zip("b"))["id"]
    for bot in (a, b):
        assert _claim(comp) == bot
        _finish(comp, bot)
    game = comp.claim_games(1)[0]
    record = make_record(f"a#{a}", f"b#{b}", 0.0, forfeit="white", termination="crash",
                         detail=f"cannot run {comp.folder}/bots/{a}/bot.py",
                         stderr={"white": f"File \"{comp.folder}/bots/{a}/bot.py\""})
    record.white.path = str(comp.folder / "bots" / str(a))
    comp.finish_game(game[0], record)
    for viewer in (alice, bob):
        shown = json.dumps(comp.game_view(game[0], viewer))
        assert str(comp.folder) not in shown
    assert "<competition>/bots/" in json.dumps(comp.game_view(game[0], alice))
    assert str(comp.folder) not in json.dumps(comp.bot_view(a, alice))


def test_ids_past_64_bits_are_not_found(comp: Competition) -> None:
    alice = comp.authenticate(comp.add_user("alice"))
    for bad in (1 << 64, (1 << 63), -1, 0):
        with pytest.raises(NotFound):
            comp.bot_view(bad, alice)
        with pytest.raises(NotFound):
            comp.game_view(bad, alice)
        with pytest.raises(NotFound):
            comp.live_game(bad)


# ---- a real server with hostile builds -------------------------------------------------

MANIFEST = 'name: {name}\ncommand: "{{python}} bot.py"\nbuild: {build}\nbuild_timeout: 3600\n'


def _hostile(name: str, build: str) -> bytes:
    return _zip({"bot.yaml": MANIFEST.format(name=name, build=json.dumps(build)),
                 "bot.py": "\n"})


def _leftovers(tmp: Path) -> list[str]:
    """The sandbox folders (build scratch copies, bots' temporary folders) in ``tmp``."""
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("morris-arena-"))


def _running(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (this test's own hostile builds)."""
    import psutil

    return [p.pid for p in psutil.process_iter(["cmdline"])
            if marker in " ".join(p.info["cmdline"] or [])]


def _verdict(server: Server, token: str, bot: int) -> Any:
    view = server.get(f"/api/bots/{bot}", token)
    return view if view["status"] != "checking" and view["verdict"] else None


class TempServer(Server):
    """A server whose temporary folder is ``tmp`` (so every sandbox folder it makes, and
    every one it leaves, is counted there)."""

    def __init__(self, folder: Path, tmp: Path) -> None:
        super().__init__(folder)
        self.tmp = tmp
        tmp.mkdir(exist_ok=True)
        tmp.chmod(0o1777)  # as /tmp: a sandbox's own uid makes its folders here too

    def start(self) -> None:
        old = os.environ.get("TMPDIR")
        os.environ["TMPDIR"] = str(self.tmp)
        try:
            super().start()
        finally:
            if old is None:
                del os.environ["TMPDIR"]
            else:
                os.environ["TMPDIR"] = old


@pytest.mark.slow
def test_two_never_ending_builds_do_not_delay_another_participants_verdict(
        tmp_path: Path) -> None:
    """With the default settings (2 checkers, check_timeout 600), one participant's two
    never-ending builds hold one checker; another participant's copy of bots/random is
    judged within 60 s.  Retiring the bot being checked ends its build's processes within
    10 s, its verdict says cancelled, and no sandbox folder is left."""
    from arena.server.service import OPERATOR

    folder = tmp_path / "comp"
    tokens = _competition(folder, "name: fair\n")
    server = TempServer(folder, tmp_path / "tmp")
    marker = f"{700_000 + os.getpid() % 100_000}"  # this run's builds, not another run's
    server.start()
    try:
        spin = server.upload(tokens["bob"], "spin.zip", _hostile(
            "spin", f"while :; do :; done # {marker}"))[1]["id"]
        sleep = server.upload(tokens["bob"], "sleep.zip", _hostile(
            "sleep", f"sleep {marker}"))[1]["id"]
        assert _wait("bob's first build to run", lambda: _running(marker), 120)
        started = time.monotonic()
        status, mine = server.upload(tokens["alice"], "random.zip", bot_archive("random", "zip"))
        assert status == 201, mine
        view = _wait("alice's verdict", lambda: _verdict(server, tokens["alice"], mine["id"]),
                     120)
        waited = time.monotonic() - started
        assert view["status"] == "active" and view["verdict"].startswith("PASS"), view
        assert waited < 60, f"alice's verdict took {waited:.0f} s"
        # bob's first build still runs (fair share: one check of his at a time)
        assert server.get(f"/api/bots/{sleep}", tokens["bob"])["check"]["state"] == "queued"
        running = server.get(f"/api/bots/{spin}", tokens["bob"])["check"]
        assert running["state"] == "running" and running["step"].startswith("building")
        # retiring the bot being checked stops its build at once
        comp = Competition(folder)
        try:
            pids = _running(marker)
            assert pids
            stopping = time.monotonic()
            comp.retire(spin, OPERATOR)
            comp.retire(sleep, OPERATOR)  # queued: dropped, never run
        finally:
            comp.close()
        _wait("the build's processes to end", lambda: not _running(marker), 10)
        assert time.monotonic() - stopping < 10
        spun = _wait("the verdict", lambda: _verdict(server, tokens["bob"], spin), 20)
        assert spun["status"] == "retired" and spun["verdict"].startswith("FAIL: cancelled")
        assert "while building" in spun["check_log"]
        slept = server.get(f"/api/bots/{sleep}", tokens["bob"])
        assert slept["verdict"].startswith("FAIL: cancelled before it ran")
        assert _wait("the sandbox folders to go", lambda: not _leftovers(server.tmp), 20)
    finally:
        server.stop()


@pytest.mark.slow
def test_checks_ended_by_timeout_cancel_or_a_killed_server_leave_no_folder(
        tmp_path: Path) -> None:
    """Builds that print, then hang: one ended by check_timeout (its verdict names the step,
    its log holds the output so far), one by an admin's cancel, one by a SIGKILL of the
    server (then a restart runs it again, up to its timeout).  Each made its scratch folder
    in the server's temporary folder while it ran; none is left."""
    from arena.server.service import OPERATOR

    folder = tmp_path / "comp"
    tokens = _competition(folder, "name: leftovers\ncheck_timeout: 4\n")
    for extra in ("carol", "dave"):
        tokens[extra] = _arena_user(folder, extra)
    server = TempServer(folder, tmp_path / "tmp")
    marker = f"{800_000 + os.getpid() % 100_000}"
    build = (f"echo hello from the $((40 + 2))nd build; dd if=/dev/zero of=junk bs=1M count=8; "
             f"sleep {marker}")
    server.start()
    try:
        # bob's build is cancelled as soon as it is seen (before its check_timeout: the
        # cancel must win however loaded the machine), then alice's runs into its timeout
        ids = {"bob": server.upload(tokens["bob"], "bob.zip", _hostile("bob", build))[1]["id"]}
        seen = _wait("bob's build's scratch folder", lambda: _leftovers(server.tmp), 120)
        comp = Competition(folder)
        try:
            comp.cancel_check(ids["bob"], OPERATOR)
        finally:
            comp.close()
        assert any("-build-" in name for name in seen)
        ids["alice"] = server.upload(tokens["alice"], "alice.zip",
                                     _hostile("alice", build))[1]["id"]
        bob = _wait("bob's verdict", lambda: _verdict(server, tokens["bob"], ids["bob"]), 30)
        assert bob["verdict"] == "FAIL: cancelled (cancelled by an admin)", bob["verdict"]
        alice = _wait("alice's verdict", lambda: _verdict(server, tokens["alice"],
                                                          ids["alice"]), 60)
        assert alice["verdict"].startswith(  # a build that sleeps spends its own time
            "FAIL: the check took longer than 4 s (check_timeout, its own time"), alice["verdict"]
        assert "was stopped while building: echo hello" in alice["verdict"]
        assert "hello from the 42nd build" in alice["check_log"]  # its output, not the command
        assert _wait("their folders to go", lambda: not _leftovers(server.tmp), 20)
        # a SIGKILL of the server in the middle of a build, then a restart
        carol = server.upload(tokens["carol"], "c.zip", _hostile("carol", build))[1]["id"]
        _wait("carol's build", lambda: any("-build-" in n for n in _leftovers(server.tmp)), 120)
        server.kill()
        server.start()
        view = _wait("carol's verdict after the restart",
                     lambda: _verdict(server, tokens["carol"], carol), 60)
        assert "check_timeout" in view["verdict"]
        assert _wait("every folder to go", lambda: not _leftovers(server.tmp), 20)
        assert not _running(marker)
    finally:
        server.stop()


def _arena_user(folder: Path, name: str) -> str:
    result = CliRunner().invoke(cli, ["server", "user", str(folder), name])
    assert result.exit_code == 0, result.output
    return str(result.output.strip().splitlines()[-1])


def test_a_crashed_uploads_leftover_files_do_not_block_the_next_upload(
        comp: Competition) -> None:
    """Files under the next id (a server killed in the middle of an upload left them, no row
    was committed) are replaced, not a reason to fail."""
    alice = comp.authenticate(comp.add_user("alice"))
    first = comp.submit(alice, "a.zip", _random_zip("a"))["id"]
    stale = comp.folder / "bots" / str(first + 1)
    (stale / "junk").mkdir(parents=True)
    (comp.folder / "uploads" / f"{first + 1}.zip").write_bytes(b"old")
    made = comp.submit(alice, "b.zip", _random_zip("b"))["id"]
    assert made == first + 1
    assert not (stale / "junk").exists() and (stale / "bot.yaml").is_file()
    # a refused upload leaves nothing under its id
    with pytest.raises(Refused):
        comp.submit(alice, "c.zip", b"not a zip at all")
    assert sorted(p.name for p in (comp.folder / "bots").iterdir()) == [str(first), str(made)]


def test_a_checks_progress_keeps_the_output_that_came_before_a_silence(tmp_path: Path) -> None:
    """The build's output is written at most twice a second, and output followed by silence
    (a build that prints, then hangs) is written too; its size stays bounded."""
    from arena.server.progress import HEAD_CAP, TAIL_CAP, CheckProgress, read_progress

    (tmp_path / "checks").mkdir()
    notes = CheckProgress(tmp_path / "checks" / "7.json")
    notes.step("building: make")
    notes.output(b"compiling...\n")
    _wait("the output to be written", lambda: "compiling" in read_progress(tmp_path, 7)[1], 10)
    assert read_progress(tmp_path, 7)[0] == "building: make"
    for _ in range(200):
        notes.output(b"x" * 1000 + b"\n")
    notes.line("game 1: won")
    step, text = read_progress(tmp_path, 7)
    assert "game 1: won" in text and "bytes left out" in text
    assert len(text) < 2 * (HEAD_CAP + TAIL_CAP)
