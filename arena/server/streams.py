"""The live board's event streams (``GET /api/games/{id}/live/events``) and who may hold
them open.

A stream is one request for as long as a game is watched (up to :data:`STREAM_S`), and one
descriptor of the server process all that while.  So there are two caps
(:class:`StreamSlots`), checked when a stream starts and given back when it ends however it
ends (:class:`LiveStream`):

* per client: :data:`PER_PARTICIPANT` streams for a logged-in participant (however many
  addresses they come from), :data:`PER_ADDRESS` for the visitors without a token at one
  address (the address :class:`~arena.server.layers.Front` resolved, trusted proxies
  believed; an IPv6 address counts by its /64, which one client usually has whole).
  Admins only count toward the total;
* in all: the server's budget of streams, sized from its descriptor limit
  (:func:`arena.server.descriptors.budget_for`).

Beyond either: 429 with ``Retry-After`` (the live page tries again 10 s later).
"""

from __future__ import annotations

import asyncio
import ipaddress
import threading
import time
from typing import AsyncIterator, Awaitable, Callable, Optional

from fastapi.responses import JSONResponse, StreamingResponse
from starlette.types import Receive, Scope, Send

from arena.server.descriptors import MAX_STREAMS
from arena.server.service import NotFound, Viewer

#: how often a stream looks for new moves, how long one lasts before the browser
#: reconnects (one request more), the comment that keeps a quiet stream open
LIVE_POLL_S = 0.5
STREAM_S = 600.0
KEEPALIVE_S = 15.0
#: streams at once of one logged-in participant, and of the anonymous visitors of one
#: address (more: a school's NAT puts a class behind one address; its logged-in
#: participants count apart)
PER_PARTICIPANT = 4
PER_ADDRESS = 8
#: what a refused stream is told to wait (seconds)
RETRY_AFTER = 10
#: a game the live board follows (any other status ends its stream)
_LIVE = ("queued", "running")

__all__ = ["LIVE_POLL_S", "STREAM_S", "KEEPALIVE_S", "MAX_STREAMS", "PER_PARTICIPANT",
           "PER_ADDRESS", "StreamSlots", "client_key", "live_events", "LiveStream"]


def client_key(viewer: Viewer, address: str) -> Optional[str]:
    """Whose cap a stream counts against: ``participant:ID`` when logged in,
    ``address:A`` otherwise (IPv6: its /64), None for an admin (the total only)."""
    if viewer.is_admin:
        return None
    if viewer.known:
        return f"participant:{viewer.id}"
    try:
        addr = ipaddress.ip_address(address)
    except ValueError:
        return f"address:{address[:64]}"
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return f"address:{addr.ipv4_mapped}"
        return f"address:{ipaddress.IPv6Network((addr, 64), strict=False)}"
    return f"address:{addr}"


class StreamSlots:
    """The live streams open now: at most ``total``, :data:`PER_PARTICIPANT` per
    participant and :data:`PER_ADDRESS` per anonymous address (:func:`client_key`)."""

    def __init__(self, total: int = MAX_STREAMS, per_participant: int = PER_PARTICIPANT,
                 per_address: int = PER_ADDRESS) -> None:
        self.total, self.per_participant, self.per_address = total, per_participant, per_address
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}
        #: streams open now
        self.open = 0

    def cap(self, key: str) -> int:
        return self.per_participant if key.startswith("participant:") else self.per_address

    def take(self, key: Optional[str]) -> Optional[str]:
        """Take a slot for ``key``'s client; None when taken, else why not."""
        with self._lock:
            held = self._held.get(key, 0) if key is not None else 0
            if key is not None and held >= self.cap(key):
                who = "you have" if key.startswith("participant:") else "this address has"
                return (f"{who} {held} live streams open, the most one may: close one (a "
                        f"live board's tab) or try again later")
            if self.open >= self.total:
                return "too many live streams open on this server: try again later"
            if key is not None:
                self._held[key] = held + 1
            self.open += 1
            return None

    def give_back(self, key: Optional[str]) -> None:
        with self._lock:
            self.open -= 1
            if key is not None:
                left = self._held.get(key, 0) - 1
                if left > 0:
                    self._held[key] = left
                else:
                    self._held.pop(key, None)


async def live_events(state: Callable[[int], Awaitable[tuple[str, str]]], game_id: int,
                      text: str, status: str, stopping: threading.Event) -> AsyncIterator[str]:
    """A game's stream: ``text`` (its state now, of ``status``), then its state whenever it
    changes (read through ``state`` every :data:`LIVE_POLL_S` at most), ``event: end`` once
    the game is no longer queued or running (or gone); it ends after :data:`STREAM_S` or
    when ``stopping`` is set (the browser reconnects)."""
    yield "retry: 3000\n\n"
    started = sent_at = time.monotonic()
    sent = ""
    while True:
        now = time.monotonic()
        if text != sent:
            yield f"data: {text}\n\n"
            sent, sent_at = text, now
        elif now - sent_at > KEEPALIVE_S:
            yield ": still watching\n\n"
            sent_at = now
        if status not in _LIVE:
            yield "event: end\ndata: {}\n\n"
            return
        if now - started > STREAM_S or stopping.is_set():
            return
        await asyncio.sleep(LIVE_POLL_S)
        try:
            text, status = await state(game_id)
        except NotFound:
            yield "event: end\ndata: {}\n\n"
            return


class LiveStream(StreamingResponse):
    """An event stream that holds one of ``slots`` for ``key``'s client while it is open:
    taken when it starts (429 with ``Retry-After`` when there is none), given back when it
    ends, however it ends (the game over, the client gone, an error)."""

    def __init__(self, events: AsyncIterator[str], slots: StreamSlots,
                 key: Optional[str]) -> None:
        super().__init__(events, media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache",
                                  "X-Accel-Buffering": "no"})  # nginx: no buffering
        self.slots, self.key = slots, key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self.slots.take(self.key)
        if refused is not None:
            await JSONResponse({"detail": refused}, 429,
                               headers={"Retry-After": str(RETRY_AFTER)})(scope, receive, send)
            return
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.slots.give_back(self.key)
