"""Participants: who they are, their access tokens, and the admin's hand on them.

Only the SHA-256 of a token is stored; a revoked token's stored hash starts with
:data:`~arena.server.common.REVOKED`, which no digest does.  (The forms' CSRF tokens are
the web layer's: :mod:`arena.server.csrf`.)
"""

from __future__ import annotations

import csv
import os
import secrets
from pathlib import Path
from typing import Any, Optional

from sqlalchemy import func, select

from arena.errors import ConfigError
from arena.server.common import (ANONYMOUS, NAME_RE, REVOKED, Forbidden, NotFound, State,
                                 Viewer, hash_token)
from arena.server.models import Bot, User


_TRUE = ("true", "yes", "y", "1", "x")
_FALSE = ("false", "no", "n", "0", "")


def read_roster(path: str | os.PathLike[str]) -> list[tuple[str, bool]]:
    """A roster CSV's participants: (name, admin) per row, from its ``name`` column and its
    optional ``admin`` column (true/false, yes/no, 1/0; empty: false).  Headers are matched
    without regard to case or spaces; empty rows are skipped; a spreadsheet's byte-order
    mark is ignored.

    :raises ConfigError: unreadable, no ``name`` column, or a row's admin value that is
        not true or false (naming the row).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read the roster {p}: {getattr(e, 'strerror', None) or e}") \
            from None
    reader = csv.reader(text.splitlines())
    header = [h.strip().lower() for h in next(reader, [])]
    if "name" not in header:
        raise ConfigError(f"{p.name}: the roster needs a 'name' column (its first line is the "
                          f"header: name[,admin])")
    name_at, admin_at = header.index("name"), header.index("admin") if "admin" in header else -1
    people = []
    for line, row in enumerate(reader, 2):
        if not any(cell.strip() for cell in row):
            continue
        name = row[name_at].strip() if name_at < len(row) else ""
        flag = row[admin_at].strip().lower() if 0 <= admin_at < len(row) else ""
        if flag not in _TRUE + _FALSE:
            raise ConfigError(f"{p.name}, line {line}: admin is true or false, got {flag[:20]!r}")
        people.append((name, flag in _TRUE))
    return people


class Participants(State):
    """The participants of a competition (a part of
    :class:`~arena.server.service.Competition`)."""

    def add_user(self, name: str, *, admin: bool = False) -> str:
        """Add a participant; returns their new access token (only its hash is kept).

        :raises ConfigError: a bad or taken name.
        """
        if not NAME_RE.match(name):
            raise ConfigError(f"a participant's name is 1..64 letters, digits, '.', '_' or "
                              f"'-', got {name[:70]!r}")
        token = secrets.token_urlsafe(32)
        with self.changing() as s:
            if s.scalar(select(User).where(User.name == name)) is not None:
                raise ConfigError(f"participant {name!r} exists already")
            s.add(User(name=name, token_hash=hash_token(token), is_admin=admin))
        return token

    def add_users(self, people: list[tuple[str, bool]]) -> tuple[list[tuple[str, str]], list[str]]:
        """Add the participants ``people`` (name, admin) of a roster in one transaction:
        returns (the new ones with their tokens, the names that existed already, which are
        left alone).  Every name is checked before anyone is added.

        :raises ConfigError: a bad name, or a name twice in ``people``.
        """
        seen: set[str] = set()
        for name, _ in people:
            if not NAME_RE.match(name):
                raise ConfigError(f"a participant's name is 1..64 letters, digits, '.', '_' "
                                  f"or '-', got {name[:70]!r}")
            if name in seen:
                raise ConfigError(f"{name!r} is in the roster twice")
            seen.add(name)
        made: list[tuple[str, str]] = []
        existing: list[str] = []
        with self.changing() as s:
            taken = set(s.scalars(select(User.name).where(User.name.in_(seen))).all())
            for name, admin in people:
                if name in taken:
                    existing.append(name)
                    continue
                token = secrets.token_urlsafe(32)
                s.add(User(name=name, token_hash=hash_token(token), is_admin=admin))
                made.append((name, token))
        return made, existing

    def authenticate(self, token: Optional[str]) -> Viewer:
        """The participant whose token this is, or :data:`ANONYMOUS`."""
        if not token or len(token) > 200:
            return ANONYMOUS
        with self.sessions() as s:
            user = s.scalar(select(User).where(User.token_hash == hash_token(token)))
            if user is None:
                return ANONYMOUS
            return Viewer(user.id, user.name, user.is_admin)

    def new_token(self, user: int | str, viewer: Viewer) -> str:
        """Give a participant (by id or name) a new access token, revoking the old one at
        once (its API calls get 401, its pages log out).  Returns the new token.

        :raises Forbidden: the viewer is not an admin.
        :raises NotFound: no such participant.
        """
        token = secrets.token_urlsafe(32)
        self._set_token_hash(user, viewer, hash_token(token))
        return token

    def revoke_token(self, user: int | str, viewer: Viewer) -> None:
        """Revoke a participant's token (by id or name) without giving a new one: they can
        no longer log in or call the API until an admin gives them a :meth:`new_token`.

        :raises Forbidden, NotFound:
        """
        self._set_token_hash(user, viewer, REVOKED + secrets.token_hex(16))

    def _set_token_hash(self, user: int | str, viewer: Viewer, token_hash: str) -> None:
        if not viewer.is_admin:
            raise Forbidden("only admins may change a participant's token")
        with self.writing() as s:
            found = s.scalar(select(User).where(
                User.id == user if isinstance(user, int) else User.name == user))
            if found is None:
                raise NotFound(f"no participant {user!r}")
            found.token_hash = token_hash

    def users(self) -> list[dict[str, Any]]:
        """Every participant with their number of uploads and whether their token is
        revoked (for the admin page)."""
        with self.sessions() as s:
            rows = s.execute(select(User.id, User.name, User.is_admin, User.token_hash,
                                    func.count(Bot.id))
                             .outerjoin(Bot, Bot.owner_id == User.id)
                             .group_by(User.id).order_by(User.name)).all()
        return [{"id": i, "name": n, "admin": a, "revoked": h.startswith(REVOKED),
                 "uploads": c} for i, n, a, h, c in rows]
