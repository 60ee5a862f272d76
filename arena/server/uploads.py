"""Uploads and the judge's queue of checks: taking an archive in, queueing its check,
serving the queue fairly, stopping a check, storing its verdict, and the disk the uploads
keep.

**Fair share.**  Each participant has at most one check running (admins' uploads count in
their own share), and the queue is served round-robin over participants: the next check
is the oldest queued upload of the participant, among those with none running, whose
latest check *started* longest ago (never: first).  So an upload waits behind at most one
check of each other participant (plus its owner's own earlier uploads): with ``C``
checkers and ``P`` other participants with work queued, it starts within
``ceil(P / C)`` check times, each at most ``check_timeout``; one participant's endless
builds hold one checker, never all of them.

**Not judged.**  A check that the machine was too busy to judge (the bot got too little
CPU to tell whether its moves were in time: ``NOT JUDGED``, see docs/PROTOCOL.md *Time*)
neither passes nor fails: it goes back to the queue and runs again after a pause that grows
with each such attempt (:meth:`Uploads.requeue_check`); the bot stays ``checking`` and its
verdict says why.

**Stopping.**  A running check stops when its job's ``cancel`` is set (the bot was
retired by its owner or an admin, or an admin cancelled the check): the checker polls it
and ends the check's process with everything it started; the verdict is ``FAIL:
cancelled`` with the log so far.  A check interrupted by a server stop runs again at the
next start, at most :data:`MAX_CHECK_ATTEMPTS` times in all, then fails with the reason.

**Disk.**  Each upload's archive and unpacked (then built) folder are counted in bytes on
its row, the folder by allocated blocks (:func:`folder_usage`); a participant's uploads may
keep ``upload.max_kept_bytes`` in all, and their kept folders ``upload.max_kept_files``
entries (admins are not limited): weighed when an upload arrives (bytes) and again when its
check passes, built (bytes and entries: over either, it is rejected and its folder goes).  A rejected upload's folder goes as soon as its verdict is stored (its archive
and log stay); retired versions past the newest ``upload.keep_versions`` of each bot lose
folder and archive (:meth:`Uploads.collect_garbage`, also ``arena server gc``).  Games,
records and replays stay: they are in the database.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, Optional

from sqlalchemy import CursorResult, func, or_, select, update

from arena.server.common import (BOTS, NAME_RE, UPLOADS, Forbidden, NotFound, RateLimited,
                                 Refused, Viewer, valid_id)
from arena.server.ladder import Ladder, retire_bots, schedule_games
from arena.server.models import Bot, Game, Job, Refusal, utcnow
from arena.server.unpack import Staged, UnpackError, stage_upload

#: upload attempts (refused ones included) a participant may make per upload allowed
ATTEMPTS_PER_UPLOAD = 3
#: attempts of a check (each interrupted by a server stop) before it fails
MAX_CHECK_ATTEMPTS = 3
#: seconds a check the machine was too busy to judge waits before it runs again, times the
#: times it was not judged, at most NOT_JUDGED_MAX_WAIT_S
NOT_JUDGED_RETRY_S = 30.0
NOT_JUDGED_MAX_WAIT_S = 300.0
_SUFFIXES = (".zip", ".tar.gz")


def folder_usage(path: Path) -> tuple[int, int]:
    """What the folder ``path`` holds on disk: (bytes, entries), links not followed, (0, 0)
    if it is gone.  Bytes by allocated blocks as the file system counts them (a file's size
    where larger; folders count too), entries one per name, an empty file as much as any:
    :func:`arena.build.disk_usage`, the measure of a build's caps."""
    from arena.build import disk_usage
    from arena.sandbox.scratch import walk

    return disk_usage(st for _, st in walk(str(path)))


def folder_bytes(path: Path) -> int:
    """Bytes the folder ``path`` holds on disk (:func:`folder_usage`; 0 if it is gone)."""
    return folder_usage(path)[0]


def _remove_upload_files(folder: Path, bot_id: int) -> None:
    """Remove the archive and the folder of upload ``bot_id`` (whatever is there)."""
    for suffix in _SUFFIXES:
        (folder / UPLOADS / f"{bot_id}{suffix}").unlink(missing_ok=True)
    shutil.rmtree(folder / BOTS / str(bot_id), ignore_errors=True)


def _megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


class Uploads(Ladder):
    """Uploads, the judge's queue of checks and the uploads' disk (a part of
    :class:`~arena.server.service.Competition`; see the module's docstring).  Built on the
    ladder, which a bot that passes its check joins."""

    # ---- taking an upload ----------------------------------------------------------

    def submit(self, viewer: Viewer, filename: str, data: bytes) -> dict[str, Any]:
        """Take an upload: unpack it safely into ``bots/<id>``, read its ``bot.yaml``,
        queue its check.  Returns ``{"id", "status": "checking"}``.  Nothing of a refused
        upload is kept (no archive, no folder, no bot) but a line for the teacher's
        overview (:class:`~arena.server.models.Refusal`: who, when, the file's name, why).

        :raises Forbidden: nobody is logged in, or the deadline has passed (the message
            names it).
        :raises RateLimited: the participant's uploads in the last hour reached the limit.
        :raises Refused: too big, over the participant's disk quota, a refused archive, or
            a bad ``bot.yaml``.
        """
        try:
            return self._submit(viewer, filename, data)
        except Refused as e:
            if viewer.known:
                with self.writing() as s:
                    s.add(Refusal(user_id=viewer.id, filename=filename[:200],
                                  size=len(data), reason=str(e)[:2000]))
                self.touch()
            raise

    def _submit(self, viewer: Viewer, filename: str, data: bytes) -> dict[str, Any]:
        if not viewer.known:
            raise Forbidden("log in to upload a bot")
        closed = self.closed_because()
        if closed:
            raise Forbidden(closed)
        limits = self.config.upload
        self._count_attempt(viewer)
        if len(data) > limits.max_bytes:
            raise Refused(f"the archive has {len(data)} bytes, over the limit of "
                          f"{limits.max_bytes}")
        lower = filename.lower()
        if not lower.endswith((".zip", ".tar.gz", ".tgz")):
            raise Refused("upload a .zip or .tar.gz archive of the bot's folder")
        if not viewer.is_admin:
            self._check_quota(viewer, len(data))
        suffix = ".zip" if lower.endswith(".zip") else ".tar.gz"
        try:  # the costly part, under no lock: no other upload waits for it
            staged = stage_upload(self.folder, data, suffix, measure=folder_bytes,
                                  max_bytes=limits.max_unpacked_bytes, max_files=limits.max_files)
        except UnpackError as e:
            raise Refused(str(e)) from None
        try:
            with self._upload_lock:  # one at a time: a refused upload's id is the next one's
                return self._take(viewer, data, suffix, staged)
        finally:
            staged.discard()

    def _take(self, viewer: Viewer, data: bytes, suffix: str, staged: Staged) -> dict[str, Any]:
        """The short part of an upload (its transaction, the two renames that put the
        staged files under its id); its caller holds the upload lock."""
        limits = self.config.upload
        archive: Optional[Path] = None
        try:
            with self.writing() as s:
                since = utcnow() - timedelta(hours=1)
                recent = s.scalar(select(func.count(Bot.id)).where(
                    Bot.owner_id == viewer.id, Bot.created_at >= since)) or 0
                if recent >= limits.per_hour and not viewer.is_admin:
                    raise RateLimited(f"at most {limits.per_hour} uploads an hour: try later")
                bot = Bot(owner_id=viewer.id, name="", version=0, status="checking",
                          sha256=hashlib.sha256(data).hexdigest(), archive_bytes=len(data))
                s.add(bot)
                s.flush()
                bot_id = bot.id
                archive = self.folder / UPLOADS / f"{bot_id}{suffix}"
                target = self.folder / BOTS / str(bot_id)
                try:
                    # the id is new: files under it are a crashed upload's leftovers
                    _remove_upload_files(self.folder, bot_id)
                    root, spec = staged.place(archive, target), staged.spec
                    bot.folder_bytes = staged.bytes
                    if not viewer.is_admin:
                        self._check_quota(viewer, len(data) + bot.folder_bytes, session=s)
                    name = spec.name if NAME_RE.match(spec.name) else re.sub(
                        r"[^A-Za-z0-9._-]", "-", spec.name)[:64].strip("-._") or "bot"
                    last = s.scalar(select(func.max(Bot.version)).where(
                        Bot.owner_id == viewer.id, Bot.name == name)) or 0
                    bot.name, bot.version = name, last + 1
                    bot.folder = str(root.relative_to(self.folder))
                    s.add(Job(kind="check", bot_id=bot_id))
                    s.flush()
                except BaseException:
                    # refused, or anything unexpected: nothing is kept, and the files go
                    # before the rollback frees the id for another upload
                    _remove_upload_files(self.folder, bot_id)
                    raise
        except BaseException:  # the commit failed: its files go too
            if archive is not None:
                _remove_upload_files(self.folder, bot_id)
            raise
        self.touch()
        return {"id": bot_id, "status": "checking"}

    def _count_attempt(self, viewer: Viewer) -> None:
        """Refused uploads cost unpacking too: at most :data:`ATTEMPTS_PER_UPLOAD` times
        ``per_hour`` attempts an hour (in memory: a restart forgets them).

        :raises RateLimited:"""
        if viewer.is_admin or viewer.id is None:
            return
        now = time.monotonic()
        with self._board_lock:
            recent = [t for t in self._attempts.get(viewer.id, []) if now - t < 3600]
            if len(recent) >= ATTEMPTS_PER_UPLOAD * self.config.upload.per_hour:
                raise RateLimited("too many upload attempts in the last hour: try later")
            recent.append(now)
            self._attempts[viewer.id] = recent

    def kept_bytes(self, owner: int, session: Any = None) -> int:
        """Bytes the uploads of participant ``owner`` keep on disk (archives and folders)."""
        query = select(func.coalesce(func.sum(Bot.archive_bytes + Bot.folder_bytes), 0)).where(
            Bot.owner_id == owner)
        if session is not None:
            return int(session.scalar(query) or 0)
        with self.sessions() as s:
            return int(s.scalar(query) or 0)

    def _check_quota(self, viewer: Viewer, adding: int, session: Any = None) -> None:
        """:raises Refused: the participant's uploads would keep more than
        ``upload.max_kept_bytes`` with ``adding`` more bytes (after removing what the rules
        allow).  ``session``: the upload's own transaction (its row counted already)."""
        assert viewer.id is not None
        quota = self.config.upload.max_kept_bytes
        extra = 0 if session is not None else adding
        if self.kept_bytes(viewer.id, session) + extra <= quota:
            return
        if session is None:
            self.collect_garbage(owner=viewer.id)
            if self.kept_bytes(viewer.id) + extra <= quota:
                return
        kept = self.kept_bytes(viewer.id, session) - (adding if session is not None else 0)
        raise Refused(f"your uploads keep {_megabytes(kept)} on the server; this one "
                      f"({_megabytes(adding)} unpacked) would pass your limit of "
                      f"{_megabytes(quota)} (upload.max_kept_bytes): retire old versions "
                      f"(their files are removed) or ask an organiser")

    # ---- a bot's life: retire, re-judge, cancel --------------------------------------

    def retire(self, bot_id: int, viewer: Viewer) -> None:
        """Retire a bot (its owner or an admin): it leaves the ladder, its queued games go;
        a check it has queued is dropped and one running is stopped (``FAIL: cancelled``).

        :raises NotFound, Forbidden:
        """
        with self.changing() as s:
            bot = self._bot_row(s, bot_id)
            if not self.may_see_private(viewer, bot.owner_id):
                raise Forbidden("only its owner and admins may retire a bot")
            checking = bot.status == "checking"
            retire_bots(s, [bot_id])
            if checking:
                who = "its owner" if viewer.id == bot.owner_id else "an admin"
                self._cancel_jobs(s, bot, f"the bot was retired by {who}")

    def cancel_check(self, bot_id: int, viewer: Viewer) -> None:
        """Stop a bot's check without retiring it (admins): a running check ends at once, a
        queued one is dropped; the verdict is ``FAIL: cancelled``.

        :raises NotFound: no such bot, or it has no check queued or running.
        :raises Forbidden: the viewer is not an admin.
        """
        if not viewer.is_admin:
            raise Forbidden("only admins may cancel a check (owners may retire their bot)")
        with self.changing() as s:
            bot = self._bot_row(s, bot_id)
            if bot.status != "checking" or not self._cancel_jobs(s, bot,
                                                                 "cancelled by an admin"):
                raise NotFound(f"bot {bot_id} has no check to cancel")
            bot.status = "rejected"

    def _cancel_jobs(self, s: Any, bot: Bot, reason: str) -> int:
        """Drop ``bot``'s queued checks (their verdict: cancelled before it ran) and ask its
        running one to stop.  Returns how many there were."""
        jobs = s.scalars(select(Job).where(Job.bot_id == bot.id,
                                           Job.status.in_(("queued", "running")))).all()
        for job in jobs:
            if job.status == "queued":
                job.status, job.cancel = "done", reason
                bot.verdict = f"FAIL: cancelled before it ran ({reason})"
                bot.judged_at = utcnow()
            else:
                job.cancel = reason
        return len(jobs)

    def rejudge(self, bot_id: int, viewer: Viewer) -> None:
        """Check a bot again (admins): back to ``checking``, its queued games dropped.

        :raises NotFound, Forbidden: also NotFound when the bot's files were removed.
        """
        if not viewer.is_admin:
            raise Forbidden("only admins may re-judge a bot")
        with self.changing() as s:
            bot = self._bot_row(s, bot_id)
            if bot.removed_at is not None:
                raise NotFound(f"bot {bot_id}'s files were removed (disk rules): it cannot "
                               f"be checked again")
            if s.scalar(select(Job.id).where(Job.bot_id == bot.id,
                                             Job.status.in_(("queued", "running")))):
                raise Refused(f"bot {bot_id} is being checked already")
            retire_bots(s, [bot.id])
            bot.status = "checking"
            bot.verdict = ""
            s.add(Job(kind="check", bot_id=bot.id))

    def archive(self, bot_id: int, viewer: Viewer) -> tuple[Path, str]:
        """The archive of an upload as it was received, for its owner and admins: (its
        path, a file name to download it as: ``<bot>-v<version>.zip`` or ``.tar.gz``).

        :raises NotFound: no such bot, or its archive was removed by the disk rules.
        :raises Forbidden: the viewer is neither its owner nor an admin.
        """
        with self.sessions() as s:
            bot = self._bot_row(s, bot_id)
            if not self.may_see_private(viewer, bot.owner_id):
                raise Forbidden("only its owner and admins may download a bot's archive")
            name, version = bot.name or "bot", bot.version
        for suffix in _SUFFIXES:
            path = self.folder / UPLOADS / f"{bot_id}{suffix}"
            if path.is_file():
                return path, f"{name}-v{version}{suffix}"
        raise NotFound(f"bot {bot_id}'s archive was removed from the server (disk rules)")

    def _bot_row(self, s: Any, bot_id: int) -> Bot:
        bot = s.get(Bot, bot_id) if valid_id(bot_id) else None
        if bot is None:
            raise NotFound(f"no bot {bot_id}")
        return bot

    # ---- the judge's queue -----------------------------------------------------------

    def recover(self) -> tuple[int, int]:
        """At start: work left ``running`` by a killed server goes back to the queue (its
        results were never stored); a check that has had :data:`MAX_CHECK_ATTEMPTS`
        attempts fails with the reason instead, and one asked to stop is cancelled.
        Returns (checks, games) requeued."""
        requeued = 0
        with self.writing() as s:
            for job in s.scalars(select(Job).where(Job.status == "running")).all():
                bot = s.get(Bot, job.bot_id)
                if job.cancel or bot is None or bot.status != "checking" \
                        or job.attempts >= MAX_CHECK_ATTEMPTS:
                    job.status = "done"
                    if bot is not None and bot.status == "checking":
                        bot.status = "rejected"
                    if bot is not None:
                        bot.judged_at = utcnow()
                        bot.verdict = (f"FAIL: cancelled ({job.cancel})" if job.cancel else
                                       f"FAIL: the check was interrupted {job.attempts} times "
                                       f"(the server stopped while it ran); ask an organiser "
                                       f"to re-judge it")
                    continue
                job.status = "queued"
                requeued += 1
            games = s.execute(update(Game).where(Game.status == "running")
                              .values(status="queued"))
            assert isinstance(games, CursorResult)
            count = games.rowcount or 0
        self.collect_garbage()  # the folders of the checks failed here go now, not at gc
        return requeued, count

    def claim_check(self) -> Optional[tuple[int, int]]:
        """The next check by fair share (see the module's docstring), now ``running``:
        (job id, bot id); None when nothing may start.  Several checkers may claim at once
        (threads here, or another process on PostgreSQL): a job is taken by the one whose
        conditional update finds it still queued."""
        with self._claim_lock:
            while True:
                with self.writing() as s:
                    picked = s.execute(_next_check()).first()
                    if picked is None:
                        return None
                    job_id, bot_id = picked
                    taken = s.execute(update(Job).where(Job.id == job_id,
                                                        Job.status == "queued")
                                      .values(status="running", attempts=Job.attempts + 1,
                                              started_at=utcnow())
                                      .execution_options(synchronize_session=False))
                    assert isinstance(taken, CursorResult)
                    if taken.rowcount != 1:
                        continue  # another checker took it first
                    return job_id, bot_id

    def check_cancel(self, job_id: int) -> str:
        """Why check ``job_id`` is to stop ("" while nobody asked)."""
        with self.sessions() as s:
            return s.scalar(select(Job.cancel).where(Job.id == job_id)) or ""

    def bot_spec(self, bot_id: int) -> Any:
        """The :class:`~arena.manifest.BotSpec` of an upload, named by its label."""
        from arena.manifest import load_bot

        with self.sessions() as s:
            bot = s.get(Bot, bot_id)
            if bot is None:
                raise NotFound(f"no bot {bot_id}")
            return load_bot(self.folder / bot.folder, name=bot.label)

    def requeue_check(self, job_id: int, bot_id: int, verdict: str, log: str) -> float:
        """A check the machine was too busy to judge (``NOT JUDGED``: see
        :func:`arena.verdicts.judge_own`) goes back to the queue, to run again once
        :data:`NOT_JUDGED_RETRY_S` times the times it was not judged have passed (at most
        :data:`NOT_JUDGED_MAX_WAIT_S`); its bot stays ``checking``, its verdict says so.  The
        attempt is not counted as an interruption.  Returns the seconds it waits."""
        with self.writing() as s:
            job, bot = s.get(Job, job_id), s.get(Bot, bot_id)
            if job is None or bot is None or job.status != "running":
                return 0.0
            match = re.search(r"\(not judged (\d+) times?\)", bot.verdict)
            tries = int(match.group(1)) + 1 if match else 1
            wait = min(NOT_JUDGED_RETRY_S * tries, NOT_JUDGED_MAX_WAIT_S)
            job.status, job.attempts = "queued", max(0, job.attempts - 1)
            job.not_before = utcnow() + timedelta(seconds=wait)
            bot.verdict = (f"not judged yet (not judged {tries} time{'s' if tries > 1 else ''}"
                           f"): the machine was too busy to judge it; checked again in "
                           f"{wait:.0f} s. {verdict}")[:500]
            bot.check_log = log
        return wait

    def finish_check(self, job_id: int, bot_id: int, passed: bool, verdict: str,
                     log: str) -> int:
        """Store a check's verdict; a passed bot becomes active (retiring its owner's older
        versions of the same name) and its ladder games are queued: ``pairs``
        colour-swapped pairs per variant against its ``ladder.opponents``
        (:func:`~arena.server.ladder.schedule_games`; none after the deadline: the bot
        plays in the final).  A check stopped because its bot was retired meanwhile keeps
        its verdict and log; the bot stays retired.  A bot that passed but whose built folder
        takes its owner past ``upload.max_kept_bytes`` or ``upload.max_kept_files`` (after
        the disk rules removed what they allow) is rejected instead, the verdict saying so
        (:meth:`_quota_after_build`).  Then the disk rules apply (a rejected upload's folder
        goes).  Returns the games queued."""
        from arena.server.progress import remove_progress

        queued = 0
        measured, over = self._quota_after_build(bot_id, passed)
        if over:
            passed, verdict, log = False, over, f"{log.rstrip()}\n{over}\n".lstrip()
        ladder = passed and not self.uploads_closed()
        ratings: dict[str, dict[int, float]] = {}
        if ladder:  # the ratings choose the opponents when not all of them are played
            with self.sessions() as s:
                active = s.scalar(select(func.count(Bot.id)).where(Bot.status == "active")) or 0
            if self.config.ladder.opponents_for(active) < active:
                ratings = self.ladder_ratings()
        with self.writing() as s:
            job, bot = s.get(Job, job_id), s.get(Bot, bot_id)
            if job is None or bot is None or job.status != "running":
                return 0
            job.status = "done"
            bot.verdict, bot.check_log, bot.judged_at = verdict, log, utcnow()
            if bot.removed_at is None:
                bot.folder_bytes = measured
            if bot.status == "checking":
                if passed:
                    older = s.scalars(select(Bot.id).where(
                        Bot.owner_id == bot.owner_id, Bot.name == bot.name, Bot.id != bot.id,
                        Bot.status == "active")).all()
                    # where the new version starts from: its latest version's rating
                    estimate = {variant: table[max(older)] for variant, table in ratings.items()
                                if older and max(older) in table}
                    retire_bots(s, list(older))
                    bot.status = "active"
                    if ladder:
                        queued = schedule_games(s, bot, self.config, ratings, estimate)
                else:
                    bot.status = "rejected"
        remove_progress(self.folder, job_id)
        self.collect_garbage(owner=bot.owner_id)
        return queued

    # ---- the disk --------------------------------------------------------------------

    def _quota_after_build(self, bot_id: int, passed: bool) -> tuple[int, str]:
        """Measure upload ``bot_id``'s folder as its check left it (built) and, if it passed
        and its owner is no admin, weigh it against the owner's quota: bytes (archives and
        folders, as stored on their rows, this folder as measured now) against
        ``upload.max_kept_bytes``, and entries of every folder the owner's uploads keep
        against ``upload.max_kept_files``.  Over either, the disk rules remove what they
        allow, and it is weighed again.  Returns (the folder's bytes, "" or the verdict
        that rejects it).  Runs outside any transaction: walking folders takes no lock."""
        path = self.folder / BOTS / str(bot_id)
        size, files = folder_usage(path)
        with self.sessions() as s:
            bot = s.get(Bot, bot_id)
            if bot is None or not passed or bot.removed_at is not None or bot.owner.is_admin:
                return size, ""
            owner = bot.owner_id
        limits = self.config.upload
        for attempt in range(2):
            with self.sessions() as s:
                kept = s.scalar(select(func.coalesce(func.sum(
                    Bot.archive_bytes + Bot.folder_bytes), 0)).where(
                        Bot.owner_id == owner, Bot.id != bot_id)) or 0
                archive = s.scalar(select(Bot.archive_bytes).where(Bot.id == bot_id)) or 0
                others = s.scalars(select(Bot.id).where(
                    Bot.owner_id == owner, Bot.id != bot_id, Bot.removed_at.is_(None))).all()
            total = int(kept) + int(archive) + size
            count = files + sum(folder_usage(self.folder / BOTS / str(i))[1] for i in others)
            if total <= limits.max_kept_bytes and count <= limits.max_kept_files:
                return size, ""
            if attempt == 0:
                self.collect_garbage(owner=owner)
        over = []
        if total > limits.max_kept_bytes:
            over.append(f"{_megabytes(total)}, over your limit of "
                        f"{_megabytes(limits.max_kept_bytes)} (upload.max_kept_bytes)")
        if count > limits.max_kept_files:
            over.append(f"{count:,} files, over your limit of {limits.max_kept_files:,} "
                        f"(upload.max_kept_files)")
        return size, (f"FAIL: over your disk quota: built, this bot keeps {_megabytes(size)} "
                      f"in {files:,} files, and with it your uploads would keep "
                      f"{' and '.join(over)}; its files were removed: make its build leave "
                      f"less behind (remove intermediate files), retire old versions (their "
                      f"files are removed) or ask an organiser")

    def collect_garbage(self, owner: Optional[int] = None, *,
                        dry_run: bool = False) -> list[dict[str, Any]]:
        """Remove what the disk rules allow (see the module's docstring), for one
        participant (``owner``) or all: the folders of rejected uploads, and the folders
        and archives of retired versions past the newest ``upload.keep_versions`` of each
        bot.  Never an upload with a check or a game queued or running.  Returns what was
        (``dry_run``: would be) removed: ``{"id", "bot", "owner", "what", "bytes"}``."""
        keep = self.config.upload.keep_versions
        plan: list[tuple[Bot, bool]] = []  # (bot, archive too)
        with self.sessions() as s:
            query = select(Bot).where(Bot.status.in_(("rejected", "retired")))
            if owner is not None:
                query = query.where(Bot.owner_id == owner)
            busy_games = select(Game.white_id).where(Game.status.in_(("queued", "running"))) \
                .union(select(Game.black_id).where(Game.status.in_(("queued", "running"))))
            busy = set(s.scalars(busy_games).all()) | set(s.scalars(
                select(Job.bot_id).where(Job.status.in_(("queued", "running")))).all())
            retired_seen: dict[tuple[int, str], int] = {}
            for bot in s.scalars(query.order_by(Bot.id.desc())).all():
                if bot.id in busy:
                    continue
                if bot.status == "rejected":
                    if bot.removed_at is None:
                        plan.append((bot, False))
                    continue
                key = (bot.owner_id, bot.name)
                retired_seen[key] = retired_seen.get(key, 0) + 1
                if retired_seen[key] > keep and (bot.removed_at is None or bot.archive_bytes):
                    plan.append((bot, True))
            names = {b.id: (b.name, b.owner.name) for b, _ in plan}
        removed = []
        for bot, archive_too in plan:
            freed = bot.folder_bytes + (bot.archive_bytes if archive_too else 0)
            removed.append({"id": bot.id, "bot": names[bot.id][0], "owner": names[bot.id][1],
                            "what": "folder and archive" if archive_too else "folder",
                            "bytes": freed})
            if dry_run:
                continue
            if archive_too:
                _remove_upload_files(self.folder, bot.id)
            else:
                shutil.rmtree(self.folder / BOTS / str(bot.id), ignore_errors=True)
            with self.writing() as s:
                row = s.get(Bot, bot.id)
                if row is not None:
                    row.folder_bytes = 0
                    row.removed_at = row.removed_at or utcnow()
                    if archive_too:
                        row.archive_bytes = 0
        return removed


def _next_check() -> Any:
    """The query of the next check by fair share: (job id, bot id) of the oldest queued
    check of the participant, among those with no check running, whose latest check
    started longest ago (never: first)."""
    busy = (select(Bot.owner_id).join(Job, Job.bot_id == Bot.id)
            .where(Job.status == "running"))
    last = (select(Bot.owner_id.label("owner"), func.max(Job.started_at).label("last"))
            .join(Job, Job.bot_id == Bot.id).where(Job.started_at.is_not(None))
            .group_by(Bot.owner_id).subquery())
    return (select(Job.id, Job.bot_id).join(Bot, Bot.id == Job.bot_id)
            .outerjoin(last, last.c.owner == Bot.owner_id)
            .where(Job.status == "queued", Job.cancel == "", Bot.status == "checking",
                   Bot.owner_id.not_in(busy),
                   or_(Job.not_before.is_(None), Job.not_before <= utcnow()))
            .order_by(last.c.last.is_not(None), last.c.last, Job.id).limit(1))
