"""The competition's schema: SQLAlchemy 2 models (one schema for SQLite and PostgreSQL).

* :class:`User`: a participant; only the SHA-256 of their token is stored.
* :class:`Bot`: one upload (a version of the owner's bot of that name): ``checking`` ->
  ``rejected`` or ``active`` -> ``retired`` (a newer version became active, or an admin).
* :class:`Job`: the judge's queue of checks, served round-robin over participants, one
  running check per participant (``queued`` -> ``running`` -> ``done``; survives restarts: a
  ``running`` job found at start was interrupted and runs again, at most
  :data:`~arena.server.uploads.MAX_CHECK_ATTEMPTS` times in all).  ``cancel`` asks the
  checker running it to stop (the bot was retired, or an admin cancelled it).
* :class:`Game`: one scheduled game; ``queued`` -> ``running`` -> ``done`` with its result
  in columns (``result``, ``forfeit``) that the standings are fitted from, and its
  :class:`~arena.records.GameRecord` as JSON in a table of its own (:class:`Record`: the
  games' rows stay small, so that lists and standings read few pages).  Its ``kind`` says what it counts for:
  ``ladder`` (the leaderboard), ``final`` (the final round robin after the deadline) or
  ``match`` (an unrated test match a participant asked for: no standings).  A game is
  counted once because its record is stored in the same transaction that marks it done;
  an interrupted one is played again.
* :class:`Final`: one final (the deadline's, or a re-run; a round robin or a Swiss): its
  settings, its entries, a Swiss's rounds as they are paired, its state and, once it is
  done, its frozen standings; its games name it.
* :class:`Entry`: the bot a participant chose as their final entry.
* :class:`Refusal`: an upload that was refused, with its reason (the teacher's overview).
* :class:`Setting`: small key/value state (the judge paused or not; the participant the
  ladder's fair share served last).

The migrations in ``arena/server/migrations`` create exactly these tables; a test compares
them.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

from sqlalchemy import (BigInteger, Boolean, DateTime, ForeignKey, Index, Integer, String, Text,
                        UniqueConstraint, text)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

BOT_STATUSES = ("checking", "rejected", "active", "retired")
GAME_STATUSES = ("queued", "running", "done")
#: what a game counts for: the ladder's leaderboard, the final's standings, nothing
GAME_KINDS = ("ladder", "final", "match")
#: the rows of the partial indexes ``ix_games_queued_white`` and ``ix_games_queued_black``
#: (a query uses them when its condition holds these terms with these literals:
#: :func:`arena.server.ladder.claim_ladder`)
QUEUED_LADDER = "kind = 'ladder' AND status = 'queued'"


def utcnow() -> datetime:
    """Now, timezone-aware UTC."""
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    """The declarative base of the competition's tables."""


class User(Base):
    """A participant (or an admin)."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    bots: Mapped[list[Bot]] = relationship(back_populates="owner")


class Bot(Base):
    """One uploaded version of a participant's bot."""

    __tablename__ = "bots"
    __table_args__ = (UniqueConstraint("owner_id", "name", "version"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    version: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="checking", index=True)
    verdict: Mapped[str] = mapped_column(Text, default="")
    check_log: Mapped[str] = mapped_column(Text, default="")
    #: the unpacked folder, relative to the competition folder
    folder: Mapped[str] = mapped_column(String(400), default="")
    sha256: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    judged_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True), nullable=True)
    #: bytes kept on disk: the archive as received and the unpacked (and built) folder;
    #: 0 once removed (a rejected upload's folder, retired versions past ``keep_versions``)
    archive_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    folder_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    #: when its folder was removed from disk (its games and records stay)
    removed_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True),
                                                           nullable=True)

    owner: Mapped[User] = relationship(back_populates="bots")

    @property
    def label(self) -> str:
        """The bot's name in game records: unique per upload (``name#id``)."""
        return f"{self.name}#{self.id}"


class Job(Base):
    """A check waiting for (or being done by) the judge."""

    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), default="check")
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: when its latest attempt started (the round-robin serves the participant whose
    #: latest check started longest ago first)
    started_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True),
                                                           nullable=True)
    #: why the check is to stop ("" while nobody asked): the checker running it ends it
    cancel: Mapped[str] = mapped_column(String(200), default="")
    #: not run before this time (a check the machine was too busy to judge: tried again
    #: later); None: at once
    not_before: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True),
                                                           nullable=True)


class Game(Base):
    """One scheduled game between two uploads (ladder, final or test match)."""

    __tablename__ = "games"
    #: the standings read (kind, status) and these columns only: from the index alone;
    #: the ladder's fair share finds each bot's oldest queued ladder game in the other two
    #: (they hold the queued ladder games only: :data:`QUEUED_LADDER`)
    __table_args__ = (Index("ix_games_standings", "kind", "status", "variant", "white_id",
                            "black_id", "result", "pair"),
                      Index("ix_games_queued_white", "white_id", "game", "id",
                            sqlite_where=text(QUEUED_LADDER),
                            postgresql_where=text(QUEUED_LADDER)),
                      Index("ix_games_queued_black", "black_id", "game", "id",
                            sqlite_where=text(QUEUED_LADDER),
                            postgresql_where=text(QUEUED_LADDER)))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    white_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    black_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    variant: Mapped[str] = mapped_column(String(100), index=True)
    #: the colour-swapped pair (its two games share it) and the game in it (0 or 1)
    pair: Mapped[int] = mapped_column(Integer)
    game: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    result: Mapped[str] = mapped_column(String(16), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True),
                                                            nullable=True)
    #: ``ladder``, ``final`` or ``match`` (:data:`GAME_KINDS`)
    kind: Mapped[str] = mapped_column(String(16), default="ladder")
    #: the side that lost by a referee ending (``white``, ``black``), "" otherwise
    forfeit: Mapped[str] = mapped_column(String(8), default="")
    #: who asked for a test match (None for ladder and final games)
    requested_by: Mapped[Optional[int]] = mapped_column(ForeignKey("users.id"), nullable=True,
                                                        index=True)
    #: the number of the final (:class:`Final`) a ``final`` game belongs to (None for the
    #: others; no foreign key, so that the migration adds it in place)
    final_id: Mapped[Optional[int]] = mapped_column(Integer, nullable=True, index=True)

    white: Mapped[Bot] = relationship(foreign_keys=[white_id])
    black: Mapped[Bot] = relationship(foreign_keys=[black_id])
    stored: Mapped[Optional[Record]] = relationship(cascade="all, delete-orphan")

    @property
    def record(self) -> str:
        """The game's record as JSON ("" until it is done)."""
        return self.stored.record if self.stored is not None else ""

    @record.setter
    def record(self, text: str) -> None:
        if self.stored is None:
            self.stored = Record(record=text)
        else:
            self.stored.record = text


class Record(Base):
    """A finished game's :class:`~arena.records.GameRecord` as JSON (one per game)."""

    __tablename__ = "records"
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), primary_key=True)
    record: Mapped[str] = mapped_column(Text, default="")


class Final(Base):
    """One final: the deadline's, or one an admin asked for again (``arena server final
    --rerun``).  ``settings`` (JSON: ``deadline``, ``pairs``, ``variants``; a Swiss's also
    ``format``, ``rounds`` and ``seeds``) are those it was played with, ``entries`` (JSON:
    bot ids) the bots that play it, ``rounds`` (JSON) a Swiss's rounds as they are paired;
    once ``done`` its standings (``tables``, JSON) are frozen."""

    __tablename__ = "finals"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default="running")
    #: why it was played ("the deadline", "a re-run asked for by <admin>")
    reason: Mapped[str] = mapped_column(String(200), default="")
    settings: Mapped[str] = mapped_column(Text, default="{}")
    entries: Mapped[str] = mapped_column(Text, default="[]")
    started_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True),
                                                           nullable=True)
    finished_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True),
                                                            nullable=True)
    games_done: Mapped[int] = mapped_column(Integer, default=0)
    games_total: Mapped[int] = mapped_column(Integer, default=0)
    tables: Mapped[str] = mapped_column(Text, default="[]")
    #: a Swiss's rounds, each ``{"round", "format": "swiss", "pairs": [[a, b], ...], "bye",
    #: "bye_points"}`` (bot ids; the better seed first), recorded in the transaction that
    #: queues its games; ``[]`` for a round robin
    rounds: Mapped[str] = mapped_column(Text, default="[]")


class Entry(Base):
    """The active bot a participant chose as their final entry (without a row: their
    latest active bot)."""

    __tablename__ = "entries"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))


class Refusal(Base):
    """An upload that was refused (its archive is not kept): for the teacher's overview."""

    __tablename__ = "refusals"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    filename: Mapped[str] = mapped_column(String(200), default="")
    size: Mapped[int] = mapped_column(BigInteger, default=0)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True),
                                                           default=utcnow, nullable=True)


class Setting(Base):
    """A small piece of server state (``paused``)."""

    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text, default="")
