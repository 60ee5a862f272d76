"""The teacher's overview: every upload with its verdict, every refused upload with its
reason, and how alike the participants' latest uploads are (admins only).

:meth:`Overview.overview` is what ``GET /api/bots`` answers an admin and the admin page
shows: one row per upload (participant, bot, version, status, the verdict's first line,
when it was uploaded and judged, whether it is its owner's final entry) and one per refused
upload (:class:`~arena.server.models.Refusal`).  :meth:`Overview.similar_uploads` compares
each participant's latest upload whose files are kept with every other participant's by
:func:`arena.similarity.compare_scans` (identical files by SHA-256, near-identical source by
winnowed fingerprints of normalised tokens: renamed variables and moved comments change
nothing); a folder's scan is kept per upload (an upload's files never change).
"""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import func, select

from arena.server.common import Forbidden, Viewer
from arena.server.final import Finals
from arena.server.models import Bot, Refusal, User

#: pairs shown besides the flagged ones (the most alike)
ALSO_SHOWN = 5


def headline(verdict: str) -> str:
    """A verdict's first line (its headline: PASS/FAIL and why)."""
    return (verdict or "").strip().splitlines()[0][:300] if (verdict or "").strip() else ""


class Overview(Finals):
    """The admins' overview (a part of :class:`~arena.server.service.Competition`)."""

    def __init__(self, folder: Any, *, db_url: Any = None) -> None:
        super().__init__(folder, db_url=db_url)
        #: each upload's scan (:func:`arena.similarity.scan`), by bot id
        self._scans: dict[int, Any] = {}
        self._scans_lock = threading.Lock()

    def overview(self, viewer: Viewer) -> dict[str, Any]:
        """Every upload, newest first (``uploads``), and every refused upload
        (``refused``), for admins.  :raises Forbidden: not an admin."""
        if not viewer.is_admin:
            raise Forbidden("admins only")
        return self.cached("overview", self._overview)

    def _overview(self) -> dict[str, Any]:
        entries = set(self._entry_ids())
        with self.sessions() as s:
            uploads = [{"id": b.id, "participant": owner, "bot": b.name, "version": b.version,
                        "status": b.status, "verdict": headline(b.verdict),
                        "uploaded": b.created_at.isoformat(),
                        "judged": b.judged_at.isoformat() if b.judged_at else None,
                        "entry": b.id in entries, "files_removed": b.removed_at is not None}
                       for b, owner in s.execute(select(Bot, User.name)
                                                 .join(User, User.id == Bot.owner_id)
                                                 .order_by(Bot.id.desc())).all()]
            refused = [{"participant": owner, "filename": r.filename, "size": r.size,
                        "reason": r.reason,
                        "at": r.created_at.isoformat() if r.created_at else None}
                       for r, owner in s.execute(select(Refusal, User.name)
                                                 .join(User, User.id == Refusal.user_id)
                                                 .order_by(Refusal.id.desc())).all()]
        return {"uploads": uploads, "refused": refused}

    def _entry_ids(self) -> list[int]:
        """The bots of the latest final, or the entries it would have now."""
        state = self.final_state()
        if state:
            return list(state["bots"])
        with self.sessions() as s:
            return self._entries(s)

    def similar_uploads(self, viewer: Viewer) -> list[dict[str, Any]]:
        """How alike the participants' latest uploads (with their files kept) are, pair by
        pair: the flagged pairs (:data:`arena.similarity.SUSPECT` and above) and the
        :data:`ALSO_SHOWN` next most alike, each :meth:`arena.similarity.Pair.as_dict` with
        ``a`` and ``b`` as ``participant: bot vN (#id)`` and their ids (``a_id``,
        ``b_id``).  :raises Forbidden: not an admin."""
        if not viewer.is_admin:
            raise Forbidden("admins only")
        return self.cached("similar", self._similar)

    def _similar(self) -> list[dict[str, Any]]:
        from arena.similarity import SimilarityError, compare_scans, scan

        with self.sessions() as s:
            latest = select(func.max(Bot.id)).where(Bot.removed_at.is_(None),
                                                    Bot.folder != "").group_by(Bot.owner_id)
            rows = s.execute(select(Bot.id, Bot.name, Bot.version, Bot.folder, User.name)
                             .join(User, User.id == Bot.owner_id)
                             .where(Bot.id.in_(latest))).all()
        scans, names = {}, {}
        for bot_id, name, version, folder, owner in rows:
            label = f"{owner}: {name} v{version} (#{bot_id})"
            with self._scans_lock:
                kept = self._scans.get(bot_id)
            if kept is None:
                try:
                    kept = scan(self.folder / folder)
                except SimilarityError:
                    continue  # its files went meanwhile
                with self._scans_lock:
                    self._scans[bot_id] = kept
            scans[label], names[label] = kept, bot_id
        if len(scans) < 2:
            return []
        pairs = compare_scans(scans)
        shown = [p for p in pairs if p.suspect]
        shown += [p for p in pairs if not p.suspect][:ALSO_SHOWN]
        return [{**p.as_dict(), "a_id": names[p.a], "b_id": names[p.b]} for p in shown]
