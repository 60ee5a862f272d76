"""A participant's disk quota weighed again after the build (issue 37): the library on a real
SQLite file, with real builds (:func:`arena.build.ensure_built` on the upload's folder, as
the judge's check runs it) whose output passes the byte quota (three tiny uploads whose
builds write 1.2 MB each against 2 MB) or the file quota (an upload whose build leaves 400
empty files against 300), then the judge's :meth:`finish_check`: rejected with a verdict
that says how much, the limit and what to do, and the folder removed.  Folders are measured
by allocated blocks and entries (:func:`arena.server.uploads.folder_usage`).  Skipped with a
reason where the ``server`` extra is not installed."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import Iterator

import pytest
import yaml

pytest.importorskip("sqlalchemy", reason="the server extra is not installed "
                                         "(pip install -e '.[server]')")

from arena.build import ensure_built  # noqa: E402
from arena.sandbox import Isolation, Level  # noqa: E402
from arena.server.config import ServerConfig, UploadLimits, parse_server_config  # noqa: E402
from arena.server.common import Viewer  # noqa: E402
from arena.server.service import Competition, init_competition  # noqa: E402
from arena.server.uploads import folder_bytes, folder_usage  # noqa: E402
from arena.errors import ConfigError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
QUOTA_BYTES = 2_000_000
QUOTA_FILES = 300


def _upload(name: str, build: str) -> bytes:
    """A zip of bots/random named ``name`` whose ``build:`` step is ``build``."""
    manifest = yaml.safe_load((ROOT / "bots" / "random" / "bot.yaml").read_text())
    manifest.update(name=name, build=build, build_timeout=60)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("bot.yaml", yaml.safe_dump(manifest))
        zf.writestr("bot.py", (ROOT / "bots" / "random" / "bot.py").read_text())
    return buf.getvalue()


@pytest.fixture
def comp(tmp_path: Path) -> Iterator[Competition]:
    tmp_path.chmod(0o755)
    init_competition(tmp_path / "c", ServerConfig(pairs=1, upload=UploadLimits(
        max_kept_bytes=QUOTA_BYTES, max_kept_files=QUOTA_FILES)))
    c = Competition(tmp_path / "c")
    try:
        yield c
    finally:
        c.close()


def _check(comp: Competition, bot: int, owner: Viewer) -> tuple[str, str]:
    """The judge's part for upload ``bot``: claim its check, build its folder (a real
    build, at level ``none``: the sandbox is not what is tested here), pass it, store the
    verdict.  Returns (status, verdict)."""
    got = comp.claim_check()
    assert got is not None and got[1] == bot
    ensure_built(comp.bot_spec(bot), isolation=Isolation(Level.NONE))
    comp.finish_check(got[0], bot, True, "PASS: 2 games", "the check's log")
    view = comp.bot_view(bot, owner)
    return view["status"], view["verdict"]


def test_builds_that_pass_the_byte_quota_are_rejected_and_their_folders_removed(
        comp: Competition) -> None:
    alice = comp.authenticate(comp.add_user("alice"))
    build = "head -c 1200000 /dev/urandom > out.bin"
    # three tiny uploads, each within the quota when it arrives (nothing is built yet)
    bots = [comp.submit(alice, f"b{i}.zip", _upload(f"b{i}", build))["id"] for i in range(3)]
    results = [(bot, *_check(comp, bot, alice)) for bot in bots]
    (first, status, verdict), *rest = results
    assert status == "active", verdict
    assert (comp.folder / "bots" / str(first) / "out.bin").stat().st_size == 1_200_000
    for bot, status, verdict in rest:
        assert status == "rejected"
        assert verdict.startswith("FAIL: over your disk quota: built, this bot keeps 1.2 MB"), \
            verdict
        assert "over your limit of 2.0 MB (upload.max_kept_bytes)" in verdict
        assert "retire old versions" in verdict and "max_kept_files" not in verdict
        assert not (comp.folder / "bots" / str(bot)).exists()
        assert comp.bot_view(bot, alice)["check_log"].endswith(verdict + "\n")
    assert alice.id is not None
    kept = comp.kept_bytes(alice.id)
    assert 1_200_000 < kept <= QUOTA_BYTES, kept  # before: 3.6 MB kept against 2 MB


def test_a_build_that_leaves_empty_files_past_the_file_quota_is_rejected(
        comp: Competition) -> None:
    bob = comp.authenticate(comp.add_user("bob"))
    small = comp.submit(bob, "s.zip", _upload("small", "echo built > out.txt"))["id"]
    assert _check(comp, small, bob)[0] == "active"
    bot = comp.submit(bob, "e.zip", _upload("empties", "mkdir e && cd e && "
                                                       "touch $(seq 1 400)"))["id"]
    status, verdict = _check(comp, bot, bob)
    assert status == "rejected"
    assert "over your limit of 300 (upload.max_kept_files)" in verdict, verdict
    files = int(verdict.split(" files, over your limit")[0].rsplit(" ", 1)[1].replace(",", ""))
    assert files > 400, verdict  # the empty files, the folder's own, and the first upload's
    assert "upload.max_kept_bytes" not in verdict  # 400 empty files hold next to no bytes
    assert not (comp.folder / "bots" / str(bot)).exists()
    assert (comp.folder / "bots" / str(small)).is_dir()  # the accepted one stays


def test_admins_are_not_limited_and_a_failed_check_keeps_its_verdict(comp: Competition) -> None:
    admin = comp.authenticate(comp.add_user("teacher", admin=True))
    bot = comp.submit(admin, "t.zip", _upload("big", "head -c 2500000 /dev/zero > out.bin"))["id"]
    assert _check(comp, bot, admin) == ("active", "PASS: 2 games")
    eve = comp.authenticate(comp.add_user("eve"))
    bad = comp.submit(eve, "f.zip", _upload("f", "head -c 2500000 /dev/zero > out.bin"))["id"]
    job, _ = comp.claim_check() or (0, 0)
    ensure_built(comp.bot_spec(bad), isolation=Isolation(Level.NONE))
    comp.finish_check(job, bad, False, "FAIL: crash: it crashed", "log")
    view = comp.bot_view(bad, eve)
    assert (view["status"], view["verdict"]) == ("rejected", "FAIL: crash: it crashed")
    assert not (comp.folder / "bots" / str(bad)).exists()


def test_folders_are_measured_by_blocks_and_entries(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    for i in range(100):
        (folder / str(i)).touch()
    with open(folder / "sparse", "wb") as f:
        f.truncate(5_000_000)
    (folder / "small").write_bytes(b"x")
    size, entries = folder_usage(folder)
    assert entries == 102
    assert size >= 5_000_000 + os.stat(folder / "small").st_blocks * 512
    assert os.stat(folder / "small").st_blocks * 512 >= 512  # one byte takes a block
    assert folder_bytes(folder) == size and folder_usage(tmp_path / "gone") == (0, 0)


def test_max_kept_files_is_a_checked_setting() -> None:
    assert ServerConfig().upload.max_kept_files == 20_000
    config = parse_server_config({"upload": {"max_kept_files": 500}})
    assert config.upload.max_kept_files == 500
    assert parse_server_config(config.to_dict()) == config
    for bad in (0, -1, "many", 10**9):
        with pytest.raises(ConfigError, match="upload.max_kept_files"):
            parse_server_config({"upload": {"max_kept_files": bad}})


@pytest.mark.slow
def test_a_real_server_rejects_builds_past_the_quota_and_removes_them(tmp_path: Path) -> None:
    """The same on a real ``arena server run`` process, its judge building in its default
    sandbox: three tiny uploads whose builds write 1.2 MB each against a 2 MB quota.  The
    first is active, the two others are rejected with the quota's verdict and keep no folder;
    what the participant keeps stays under the quota."""
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    from tests.test_server import Server, _competition, _judged, _wait

    folder = tmp_path / "comp"
    tokens = _competition(folder, f"""name: quota
upload: {{max_bytes: 1000000, max_kept_bytes: {QUOTA_BYTES}}}
time: {{movetime: 50}}
pairs: 1
check_games: 1
workers: 1
nice: 0
rate_limit: {{participant: 100000/minute, anonymous: 100000/minute}}
""")
    server = Server(folder)
    server.start()
    try:
        views = []
        for i in range(3):
            status, out = server.upload(tokens["alice"], f"b{i}.zip",
                                        _upload(f"b{i}", "head -c 1200000 /dev/urandom > out.bin"))
            assert status == 201, out
            views.append(_wait(f"upload {i}'s verdict",
                               lambda: _judged(server, tokens["alice"], out["id"]), 240))
    finally:
        server.stop()
    assert views[0]["status"] == "active", views[0]["verdict"]
    for view in views[1:]:
        assert view["status"] == "rejected" and "quota" in view["verdict"].lower(), view
        assert not (folder / "bots" / str(view["id"])).exists()
    kept, _ = folder_usage(folder / "bots" / str(views[0]["id"]))
    assert 1_200_000 <= kept < QUOTA_BYTES
