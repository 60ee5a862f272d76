"""The layers around the competition's web app (outermost first), each a plain ASGI
middleware:

* :class:`Front`: the client's address and scheme (``X-Forwarded-For`` and
  ``X-Forwarded-Proto`` believed from ``trusted_proxies`` only: the right-most address that
  is not a trusted proxy is the client, :func:`client_and_scheme`), and the same security
  headers on every response (``X-Frame-Options``, ``X-Content-Type-Options``,
  ``Referrer-Policy`` and a ``Content-Security-Policy`` whose scripts need the response's
  nonce);
* :class:`Exhausted`: a request that fails for want of file descriptors is a 503 with
  ``Retry-After`` and a throttled log line, not a 500 and a traceback;
* :class:`RateLimit`: every request counts against its participant's or its address's
  moving window (429 with ``Retry-After`` beyond);
* :class:`BodyLimit`: a body over the upload limit, or of unknown size, is refused before
  it is read.
"""

from __future__ import annotations

import ipaddress
import math
import secrets
import time
from typing import Callable, Optional

from fastapi import Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.server.config import RateLimits
from arena.server.descriptors import THROTTLE, is_exhaustion
from arena.server.service import ANONYMOUS, Viewer

#: the cookie of the pages' token
COOKIE = "arena_token"
_CSP = ("default-src 'none'; script-src 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "same-origin"}
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _header(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == name]


def _address(text: str) -> Optional[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def client_and_scheme(scope: Scope, trusted: tuple[_Network, ...]) -> tuple[str, Optional[str]]:
    """The client's address and, if a trusted proxy said so, the scheme it was reached by.

    ``X-Forwarded-For`` is read only when the peer is one of the ``trusted`` proxies; its
    addresses are walked from the right (each proxy appends the address it was reached
    from), and the first that is not a trusted proxy is the client (all trusted: the
    left-most).  ``X-Forwarded-Proto`` likewise (its last value)."""
    peer = scope["client"][0] if scope.get("client") else ""

    def is_trusted(text: str) -> bool:
        addr = _address(text)
        return addr is not None and any(addr in net for net in trusted)

    if not trusted or not is_trusted(peer):
        return peer, None
    client = peer
    hops = [h.strip() for value in _header(scope, b"x-forwarded-for") for h in value.split(",")]
    for hop in reversed([h for h in hops if h]):
        client = hop[:64]
        if not is_trusted(hop):
            break
    proto = [p.strip().lower() for value in _header(scope, b"x-forwarded-proto")
             for p in value.split(",")]
    scheme = proto[-1] if proto and proto[-1] in ("http", "https") else None
    return client, scheme


class Front:
    """The outermost layer: the client's address and scheme (from trusted proxies only:
    :func:`client_and_scheme`) put in the request's scope, a nonce for the page's scripts,
    and the security headers on every response that the app sends."""

    def __init__(self, app: ASGIApp, trusted: tuple[_Network, ...]) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client, scheme = client_and_scheme(scope, self.trusted)
        port = scope["client"][1] if scope.get("client") else 0
        scope["client"] = (client, port)
        if scheme is not None:
            scope["scheme"] = scheme
        nonce = secrets.token_urlsafe(16)
        scope["arena.nonce"] = nonce

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(raw=list(message.get("headers", [])))
                for name, value in security_headers(nonce).items():
                    headers[name] = value
                message["headers"] = headers.raw
            await send(message)

        await self.app(scope, receive, send_secured)


def security_headers(nonce: str) -> dict[str, str]:
    """The headers every response carries (``nonce``: the one its scripts may run with)."""
    return {**SECURITY_HEADERS, "Content-Security-Policy": _CSP.format(nonce=nonce)}


class Exhausted:
    """A request that fails for want of file descriptors (EMFILE, ENFILE, SQLite unable to
    open its file: :func:`~arena.server.descriptors.is_exhaustion`) is answered 503 with
    ``Retry-After`` (a response already begun, such as a live stream, is ended), counted
    in :data:`~arena.server.descriptors.THROTTLE`'s log, one line per 10 s.  Any other
    error goes on to the app's handler."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_started(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_started)
        except Exception as e:
            if not is_exhaustion(e):
                raise
            THROTTLE.note("requests answered 503: the server is out of descriptors",
                          f"{scope.get('method')} {scope.get('path', '')[:100]}: {e}"[:300])
            if started:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            text = "the server is busy (out of descriptors): try again in a few seconds"
            headers = {"Retry-After": "5"}
            response: Response = (
                JSONResponse({"detail": text}, 503, headers=headers)
                if scope.get("path", "").startswith("/api/")
                else PlainTextResponse(text, 503, headers=headers))
            await response(scope, receive, send)


class BodyLimit:
    """Refuse a request whose declared body is over the upload limit before reading it, and
    a POST whose body is chunked (``Transfer-Encoding`` without a size: it could fill the
    disk while the multipart parser spools it).  A POST with neither header has no body
    (``POST /api/bots/{id}/retire`` needs none): it goes on."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            lengths = _header(scope, b"content-length")
            length = lengths[0].strip() if lengths else None
            refused: Optional[JSONResponse] = None
            if (scope["method"] == "POST" and length is None
                    and _header(scope, b"transfer-encoding")):  # chunked: size unknown
                refused = JSONResponse({"detail": "a request body needs a Content-Length"}, 411)
            elif length is not None and (len(lengths) > 1 or not length.isdigit()
                                         or not length.isascii() or int(length) > self.limit):
                refused = JSONResponse({"detail": "the request is over the upload limit"}, 413)
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


class RateLimit:
    """Every request counts against a moving window (the ``limits`` library, in memory):
    its participant's, or its client address's when it carries no valid token; beyond it,
    429 with ``Retry-After`` (seconds).  Admins are not limited."""

    def __init__(self, app: ASGIApp, rates: RateLimits, who: Callable[[Request], Viewer]) -> None:
        from limits import parse, storage, strategies

        self.app = app
        self.limiter = strategies.MovingWindowRateLimiter(storage.MemoryStorage())
        self.participant, self.anonymous = parse(rates.participant), parse(rates.anonymous)
        self.who = who

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if "authorization" in request.headers or COOKIE in request.cookies:
            viewer = await run_in_threadpool(self.who, request)  # a database read
        else:
            viewer = ANONYMOUS
        if not viewer.is_admin:
            address = request.client.host if request.client else "?"
            item, key = ((self.participant, f"participant:{viewer.id}") if viewer.known else
                         (self.anonymous, f"address:{address}"))
            if not self.limiter.hit(item, key):
                reset = self.limiter.get_window_stats(item, key).reset_time
                retry = str(max(1, math.ceil(reset - time.time())))
                text = f"too many requests ({item}): try again in {retry} s"
                headers = {"Retry-After": retry}
                response: Response = (
                    JSONResponse({"detail": text}, 429, headers=headers)
                    if request.url.path.startswith("/api/")
                    else PlainTextResponse(text, 429, headers=headers))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
