"""The web layer: a FastAPI app over :class:`~arena.server.service.Competition` — the JSON
API (``Authorization: Bearer TOKEN``) and server-rendered pages (Jinja2, autoescaped; they
work without JavaScript; the game viewer from the report and the live board use it).

Every handler is a few lines: it finds the viewer, calls one library function, and turns the
library's typed errors into status codes (:class:`~arena.server.service.NotFound` 404,
:class:`~arena.server.service.Forbidden` 403 — 401 when nobody is logged in —,
:class:`~arena.server.service.Refused` 400, :class:`~arena.server.service.RateLimited` 429).

Around them, the layers of :mod:`arena.server.layers`: the client's address and the
security headers (:class:`~arena.server.layers.Front`), the request rate limit
(:class:`~arena.server.layers.RateLimit`) and the body limit
(:class:`~arena.server.layers.BodyLimit`).

The visitors' pages read views that the library keeps until the database changes, and a
finished game's viewer page is rendered once (only its script's nonce differs per answer):
:mod:`arena.server.kept`.  A kept view is answered on the event loop itself, without a
worker thread; only a miss (a database read, a rendering) goes to one.  So a page costs
little more than the framework's floor (``benchmarks/bench_server.py``).

Pages log in with the token (``/login``), kept in an ``HttpOnly``, ``SameSite=Strict``
cookie; the forms' CSRF tokens are bound to the session (:mod:`arena.server.csrf`).  The
live board follows a game through a server-sent event stream
(``/api/games/{id}/live/events``): one request for as long as the game is watched, a few
at once per client and a budget in all (:mod:`arena.server.streams`), sized from the
descriptors the process may open (:mod:`arena.server.descriptors`).  Every ``GET`` route
but the stream answers ``HEAD`` too.
"""

from __future__ import annotations

import json
import threading
from html import escape
from pathlib import Path
from typing import Any, Callable, Optional

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.routing import APIRoute
from fastapi.responses import (FileResponse, HTMLResponse, JSONResponse, PlainTextResponse,
                               RedirectResponse, Response)
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from arena.errors import ArenaError, ConfigError
from arena.server import csrf as C
from arena.server import descriptors as D
from arena.server.common import MISSING
from arena.server.config import proxy_networks
from arena.server.kept import (CSRF_MARK, NAME_MARK, NONCE_MARK, LiveStates, filled, marked,
                               viewer_page)
from arena.server.layers import (COOKIE, SECURITY_HEADERS, BodyLimit, Exhausted, Front,
                                 RateLimit, client_and_scheme, security_headers)
from arena.server.service import (ANONYMOUS, Competition, Forbidden, NotFound, RateLimited,
                                  Refused, Viewer)
from arena.server.streams import MAX_STREAMS, LiveStream, StreamSlots, client_key, live_events
from arena.server.teacher import Site, add_teacher_routes

__all__ = ["create_app", "serve", "game_filters", "client_and_scheme", "security_headers",
           "SECURITY_HEADERS", "COOKIE"]  # the last four: arena.server.layers', here too

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: bytes a request body may have beyond the upload limit (the multipart framing)
_BODY_SLACK = 64 * 1024
#: the ids a row can have (SQLite and PostgreSQL integers are signed 64-bit)
_MAX_ID = (1 << 63) - 1
#: the live board's event stream (the only GET route without HEAD: a stream has no end)
LIVE_EVENTS = "/api/games/{game_id}/live/events"
#: the latest games a bot's page lists (the games page has them all)
BOT_GAMES = 50
#: finished games' viewer pages kept rendered (their records never change)
VIEWER_PAGES = 256
#: bytes a test match's JSON may have
MATCH_BODY = 4096
#: games per page of the API's list (``/api/games``)
API_GAMES = 200
_KINDS = ("ladder", "final", "match")


def _status(error: ArenaError, viewer: Viewer) -> int:
    if isinstance(error, NotFound):
        return 404
    if isinstance(error, Forbidden):
        return 403 if viewer.known else 401
    if isinstance(error, RateLimited):
        return 429
    return 400


def _known_id(value: int) -> bool:
    """Whether ``value`` can be a row's id (anything else is nobody's: 404)."""
    return 0 < value <= _MAX_ID


def _int_param(request: Request, name: str) -> Optional[int]:
    """A query parameter that is a whole number (anything else: None)."""
    value = request.query_params.get(name, "").strip()
    if not value or len(value) > 20 or not value.isascii() or not value.isdigit():
        return None
    return int(value)


def _text_param(request: Request, name: str) -> Optional[str]:
    """A short text query parameter (empty or over 100 characters: None)."""
    value = request.query_params.get(name, "").strip()
    return value if value and len(value) <= 100 else None


def game_filters(request: Request) -> dict[str, Any]:
    """The games list's filters from the query (``bot``, ``participant``, ``variant``,
    ``kind``) and its ``page``; values that cannot be any are dropped."""
    kind = _text_param(request, "kind")
    bot = _int_param(request, "bot")
    return {"page": _int_param(request, "page") or 1,
            "bot": bot if bot is None or _known_id(bot) else 0,
            "participant": _text_param(request, "participant"),
            "variant": _text_param(request, "variant"),
            "kind": kind if kind in _KINDS else None}


def create_app(comp: Competition, streams: int = MAX_STREAMS) -> FastAPI:
    """The site and API of ``comp`` (``streams``: live streams open at once, at most)."""
    app = FastAPI(title=f"Morris Arena: {comp.config.name}", docs_url=None, redoc_url=None,
                  openapi_url=None)
    templates = Jinja2Templates(directory=str(TEMPLATES))
    tokens = C.Csrf(comp.secret)
    live_states = LiveStates(comp)
    #: finished games' viewer pages: (game, the stderr shown) -> the page's bytes before and
    #: after its script's nonce
    viewer_pages: dict[tuple[int, tuple[str, ...]], tuple[bytes, ...]] = {}
    viewer_lock = threading.Lock()
    #: set when the server is stopping: the live streams end (serve() sets it)
    app.state.stopping = threading.Event()
    app.state.live_slots = StreamSlots(streams)

    def viewer_by(request: Request, kind: str, token: Optional[str]) -> Viewer:
        """The participant of a token, looked up once per request (the rate limit asks
        first)."""
        # kept in the ASGI scope, which the middleware and the handler share
        known: dict[str, Viewer] = request.scope.setdefault("arena.viewers", {})
        if kind not in known:
            known[kind] = comp.authenticate(token)
        return known[kind]

    def api_viewer(request: Request) -> Viewer:
        auth = request.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer":
            return ANONYMOUS
        return viewer_by(request, "bearer", token.strip())

    def page_viewer(request: Request) -> Viewer:
        return viewer_by(request, "cookie", request.cookies.get(COOKIE))

    async def page_viewer_now(request: Request) -> Viewer:
        """:func:`page_viewer` on the event loop, in a worker thread only when it reads the
        database (a cookie the rate limit has not looked up)."""
        if request.cookies.get(COOKIE) and "cookie" not in request.scope.get(
                "arena.viewers", {}):
            return await run_in_threadpool(page_viewer, request)
        return page_viewer(request)

    async def from_cache(key: Any, compute: Callable[[], Any], stale_ok: bool = True) -> Any:
        """:meth:`~arena.server.common.State.cached` for the event loop: a kept view is
        answered there (no worker thread, no switch between threads: the visitors' routes
        cost little more than the framework's floor), a miss is computed in a worker
        thread."""
        hit = comp.peek(key, stale_ok=stale_ok)
        if hit is not MISSING:
            return hit
        return await run_in_threadpool(comp.cached, key, compute, stale_ok=stale_ok)

    def any_viewer(request: Request) -> Viewer:
        viewer = api_viewer(request)
        return viewer if viewer.known else page_viewer(request)

    # the last added is the outermost: the rate limit counts refused bodies too, and every
    # response, refused ones included, gets the security headers
    app.add_middleware(BodyLimit, limit=comp.config.upload.max_bytes + _BODY_SLACK)
    app.add_middleware(RateLimit, rates=comp.config.rate_limit, who=any_viewer)
    app.add_middleware(Exhausted)  # no descriptor left: 503, not a 500 and a traceback
    app.add_middleware(Front, trusted=proxy_networks(comp.config))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, e: Exception) -> Response:
        """A bug's answer (there should be none): one line, and the headers of every
        response (Starlette answers it outside the middleware)."""
        return PlainTextResponse("internal error", 500, headers=security_headers("-"))

    def submit(viewer: Viewer, filename: str, data: bytes) -> dict[str, Any]:
        """An upload taken off the event loop (unpacking takes a while).  Uploads unpack
        and read their manifests side by side; the library serialises only their short
        transactions (:meth:`~arena.server.uploads.Uploads.submit`)."""
        return comp.submit(viewer, filename, data)

    def api_error(e: ArenaError, viewer: Viewer) -> JSONResponse:
        return JSONResponse({"detail": str(e)}, _status(e, viewer))

    def secure(request: Request) -> bool:
        """Cookies get ``Secure`` when the site is reached over HTTPS (as a trusted proxy
        says: :class:`_Front`)."""
        return request.url.scheme == "https"

    def session_of(request: Request) -> str:
        return C.nonce_of(request.cookies.get(C.SESSION_COOKIE))

    def check_form(request: Request, viewer: Viewer, token: str) -> None:
        """:raises Forbidden: the form's token is not this session's."""
        if not tokens.form_ok(viewer.id, session_of(request), token):
            raise Forbidden("the form's security token is missing or wrong: reload the page")

    def page(request: Request, name: str, viewer: Viewer, code: int = 200,
             **context: Any) -> HTMLResponse:
        context.update(viewer=viewer, competition=comp.config.name,
                       nonce=request.scope.get("arena.nonce", ""),
                       deadline=comp.deadline_text(), deadline_shown=comp.deadline_shown(),
                       closed=comp.uploads_closed(),
                       csrf=(tokens.form_token(viewer.id, session_of(request))
                             if viewer.id is not None else ""))
        return templates.TemplateResponse(request, name, context, status_code=code)

    async def shared_page(request: Request, name: str, viewer: Viewer, key: Any,
                          context: Callable[[], dict[str, Any]]) -> HTMLResponse:
        """A page that is the same for every visitor but for its header: rendered once
        per database version (and logged in or not, admin or not, the deadline passed or
        not), the visitor's name and form token put in per answer.  ``context`` is only
        called to render it (in a worker thread)."""
        def render() -> tuple[bytes, ...]:
            shown = Viewer(0 if viewer.known else None, NAME_MARK, viewer.is_admin)
            data = context()
            data.update(viewer=shown, competition=comp.config.name, nonce=NONCE_MARK,
                        deadline=comp.deadline_text(), deadline_shown=comp.deadline_shown(),
                        closed=comp.uploads_closed(), csrf=CSRF_MARK if viewer.known else "")
            return marked(templates.get_template(name).render(data))

        parts = await from_cache(("page", name, key, viewer.known, viewer.is_admin,
                            comp.uploads_closed()), render)
        nonce = request.scope.get("arena.nonce", "")
        if viewer.known and viewer.id is not None:
            return HTMLResponse(filled(parts, nonce=nonce, name=escape(viewer.name),
                                       csrf=tokens.form_token(viewer.id, session_of(request))))
        return HTMLResponse(filled(parts, nonce=nonce))

    async def shared_json(key: Any, data: Callable[[], Any], stale_ok: bool = True) -> Response:
        """JSON that is the same for everyone, serialised once per database version."""
        body = await from_cache(("json", key), lambda: json.dumps(
            data(), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8"),
            stale_ok=stale_ok)
        return Response(body, media_type="application/json")

    def page_error(request: Request, e: ArenaError, viewer: Viewer) -> HTMLResponse:
        return page(request, "message.html", viewer, _status(e, viewer),
                    title="Not possible", message=str(e))

    def login_form(request: Request, viewer: Viewer, code: int = 200,
                   error: str = "") -> HTMLResponse:
        """The login form with its token, and the pre-login cookie it is tied to (kept if
        the browser has one already: several tabs may log in)."""
        nonce = C.nonce_of(request.cookies.get(C.LOGIN_COOKIE)) or C.new_nonce()
        response = page(request, "login.html", viewer, code, error=error,
                        login_csrf=tokens.login_token(nonce))
        response.set_cookie(C.LOGIN_COOKIE, nonce, path="/login", httponly=True,
                            samesite="strict", secure=secure(request))
        return response

    # ---- the JSON API --------------------------------------------------------------

    @app.post("/api/bots", status_code=201)
    async def api_submit(request: Request, file: UploadFile = File(...)) -> JSONResponse:
        viewer = api_viewer(request)
        if not viewer.known:
            return JSONResponse({"detail": "a valid 'Authorization: Bearer TOKEN' is needed"},
                                401)
        data = await file.read(comp.config.upload.max_bytes + 1)
        try:
            made = await run_in_threadpool(submit, viewer, file.filename or "", data)
            return JSONResponse(made, 201)
        except ArenaError as e:
            return api_error(e, viewer)

    @app.get("/api/bots/{bot_id}")
    def api_bot(request: Request, bot_id: int) -> JSONResponse:
        viewer = api_viewer(request)
        try:
            if not _known_id(bot_id):
                raise NotFound(f"no bot {bot_id}")
            return JSONResponse(comp.bot_view(bot_id, viewer, private=True))
        except ArenaError as e:
            return api_error(e, viewer)

    @app.post("/api/bots/{bot_id}/retire")
    def api_retire(request: Request, bot_id: int) -> JSONResponse:
        viewer = api_viewer(request)
        if not viewer.known:
            return JSONResponse({"detail": "a valid 'Authorization: Bearer TOKEN' is needed"},
                                401)
        try:
            if not _known_id(bot_id):
                raise NotFound(f"no bot {bot_id}")
            comp.retire(bot_id, viewer)
        except ArenaError as e:
            return api_error(e, viewer)
        return JSONResponse({"id": bot_id, "status": "retired"})

    @app.get("/api/bots/{bot_id}/archive")
    def api_archive(request: Request, bot_id: int) -> Response:
        """The upload as it was received, to its owner and admins (403 for anyone else)."""
        viewer = any_viewer(request)
        try:
            if not _known_id(bot_id):
                raise NotFound(f"no bot {bot_id}")
            path, name = comp.archive(bot_id, viewer)
        except Forbidden as e:
            return JSONResponse({"detail": str(e)}, 403)
        except ArenaError as e:
            return api_error(e, viewer)
        return FileResponse(path, filename=name, headers={"Cache-Control": "private, no-store"},
                            media_type="application/zip" if name.endswith(".zip")
                            else "application/gzip")

    @app.post("/api/matches", status_code=201)
    async def api_match(request: Request) -> JSONResponse:
        """An unrated test match: ``{"bot": id, "opponent": id, "variant": name}`` ->
        201 ``{"game": id}``."""
        viewer = api_viewer(request)
        if not viewer.known:
            return JSONResponse({"detail": "a valid 'Authorization: Bearer TOKEN' is needed"},
                                401)
        raw = await request.body()
        try:
            body = json.loads(raw) if len(raw) <= MATCH_BODY else None
        except (ValueError, UnicodeDecodeError, RecursionError):
            body = None
        if not isinstance(body, dict):
            return JSONResponse({"detail": 'expected a JSON object: {"bot": id, "opponent": '
                                           'id, "variant": name}'}, 400)
        try:
            game = await run_in_threadpool(comp.request_match, viewer, body.get("bot"),
                                           body.get("opponent"), body.get("variant"))
        except ArenaError as e:
            return api_error(e, viewer)
        return JSONResponse({"game": game}, 201)

    @app.get("/api/leaderboard")
    async def api_leaderboard() -> Response:
        return await shared_json("leaderboard", lambda: comp.leaderboard(fresh=False))

    @app.get("/api/final")
    async def api_final(request: Request) -> Response:
        number = _int_param(request, "final")
        if number is not None and not _known_id(number):
            return JSONResponse({"detail": f"no final {number}"}, 404)
        try:
            return await shared_json(("final", number),
                                     lambda: comp.public_final(comp.final_view(number)))
        except NotFound as e:
            return JSONResponse({"detail": str(e)}, 404)

    @app.get("/api/games")
    async def api_games(request: Request) -> Response:
        """A page of games, newest first (``?page=N``, 200 a page): past the last page an
        empty list, so a script paging to the end stops; ``X-Total-Count`` and, while there
        is one, a ``Link: <...>; rel="next"`` header say where the next page is."""
        filters = game_filters(request)

        def listing() -> tuple[bytes, int, int, int]:
            got = comp.games_page(per_page=API_GAMES, clamp=False, **filters)
            body = json.dumps(got["games"], ensure_ascii=False, allow_nan=False,
                              separators=(",", ":")).encode("utf-8")
            return body, got["page"], got["pages"], got["total"]

        body, at, pages, total = await from_cache(("api-games", *sorted(filters.items())),
                                                  listing)
        headers = {"X-Total-Count": str(total)}
        if at < pages:
            headers["Link"] = f'<{request.url.include_query_params(page=at + 1)}>; rel="next"'
        return Response(body, media_type="application/json", headers=headers)

    @app.get("/api/games/{game_id}")
    def api_game(request: Request, game_id: int) -> JSONResponse:
        viewer = api_viewer(request)
        try:
            if not _known_id(game_id):
                raise NotFound(f"no finished game {game_id}")
            return JSONResponse(comp.game_view(game_id, viewer))
        except ArenaError as e:
            return api_error(e, viewer)

    @app.get("/api/games/{game_id}/live")
    async def api_live(game_id: int) -> Response:
        """A game's live board (read at most every 0.4 s whoever asks, as its stream)."""
        try:
            if not _known_id(game_id):
                raise NotFound(f"no game {game_id}")
            text, _ = await live_state(game_id)
        except ArenaError as e:
            return api_error(e, ANONYMOUS)
        return Response(text, media_type="application/json")

    async def live_state(game_id: int) -> tuple[str, str]:
        hit = live_states.peek(game_id)  # forty watchers: one read, in the event loop
        return hit if hit is not None else await run_in_threadpool(live_states.get, game_id)

    @app.get(LIVE_EVENTS)
    async def api_live_events(request: Request, game_id: int) -> Response:
        """The live board as server-sent events (``text/event-stream``): one request for
        as long as the game is watched, instead of a poll every half second; a few at
        once per client, a budget in all (:class:`~arena.server.streams.LiveStream`)."""
        try:
            if not _known_id(game_id):
                raise NotFound(f"no game {game_id}")
            text, status = await live_state(game_id)
        except ArenaError as e:
            return api_error(e, ANONYMOUS)
        viewer = (await run_in_threadpool(any_viewer, request)  # the rate limit's, kept
                  if "authorization" in request.headers or COOKIE in request.cookies
                  else ANONYMOUS)
        key = client_key(viewer, request.client.host if request.client else "")
        return LiveStream(live_events(live_state, game_id, text, status, app.state.stopping),
                          app.state.live_slots, key)

    @app.get("/api/status")
    async def api_status() -> Response:
        return await shared_json("status", comp.status, stale_ok=False)

    # ---- pages ---------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse)
    async def leaderboard_page(request: Request) -> HTMLResponse:
        def context() -> dict[str, Any]:
            rows = comp.leaderboard(fresh=False)
            variants = list(dict.fromkeys(r["variant"] for r in rows)) or [
                v.name for v in comp.config.variants]
            return {"rows": rows, "variants": variants, "status": comp.status()}

        return await shared_page(request, "leaderboard.html", await page_viewer_now(request),
                                 None, context)

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return login_form(request, page_viewer(request))

    @app.post("/login")
    def login(request: Request, token: str = Form(""), csrf: str = Form("")) -> Response:
        if not tokens.login_ok(C.nonce_of(request.cookies.get(C.LOGIN_COOKIE)), csrf):
            return login_form(request, ANONYMOUS, 403, error="the form's security token is "
                              "missing or wrong (is the page from this site?): try again")
        viewer = comp.authenticate(token.strip())
        if not viewer.known:
            return login_form(request, ANONYMOUS, 401, error="unknown token")
        response = RedirectResponse("/", 303)
        response.set_cookie(COOKIE, token.strip(), httponly=True, samesite="strict",
                            secure=secure(request))
        # a new session: the forms' tokens of any earlier one stop working
        response.set_cookie(C.SESSION_COOKIE, C.new_nonce(), httponly=True,
                            samesite="strict", secure=secure(request))
        response.delete_cookie(C.LOGIN_COOKIE, path="/login", httponly=True,
                               samesite="strict", secure=secure(request))
        return response

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form("")) -> Response:
        viewer = page_viewer(request)
        try:
            check_form(request, viewer, csrf)
        except ArenaError as e:
            return page_error(request, e, viewer)
        response = RedirectResponse("/", 303)
        for name in (COOKIE, C.SESSION_COOKIE):
            response.delete_cookie(name, httponly=True, samesite="strict",
                                   secure=secure(request))
        return response

    @app.get("/submit", response_class=HTMLResponse)
    def submit_page(request: Request) -> HTMLResponse:
        viewer = page_viewer(request)
        if not viewer.known:
            return login_form(request, viewer, 401, error="log in to upload a bot")
        return page(request, "submit.html", viewer, bots=comp.bots(owner=viewer.id),
                    entry=comp.entry_of(viewer.id) if viewer.id is not None else None)

    @app.post("/submit")
    async def submit_form(request: Request, file: UploadFile = File(...),
                          csrf: str = Form("")) -> Response:
        viewer = await run_in_threadpool(page_viewer, request)
        try:
            check_form(request, viewer, csrf)
            data = await file.read(comp.config.upload.max_bytes + 1)
            made = await run_in_threadpool(submit, viewer, file.filename or "", data)
        except ArenaError as e:
            return page_error(request, e, viewer)
        return RedirectResponse(f"/bots/{made['id']}", 303)

    def own_bot_page(request: Request, bot_id: int, viewer: Viewer,
                     variants: list[str]) -> Optional[HTMLResponse]:
        """A bot's page as its owner (or an admin) sees it, with the test match form; None
        for anyone else.  In a worker thread (database reads)."""
        owner = comp.bot_owner(bot_id)
        if not comp.may_see_private(viewer, owner):
            return None
        bot = comp.bot_view(bot_id, viewer, private=False, games_limit=BOT_GAMES)
        opponents = ([b for b in comp.leaderboard(fresh=False) if b["id"] != bot_id]
                     if bot["status"] == "active" else [])
        return page(request, "bot.html", viewer, bot=bot, opponents=opponents,
                    variants=variants, entry=comp.entry_of(owner), own=viewer.id == owner)

    @app.get("/bots/{bot_id}", response_class=HTMLResponse)
    async def bot_page(request: Request, bot_id: int) -> HTMLResponse:
        viewer = await page_viewer_now(request)
        variants = [v.name for v in comp.config.variants]
        try:
            if not _known_id(bot_id):
                raise NotFound(f"no bot {bot_id}")
            if viewer.known:
                mine = await run_in_threadpool(own_bot_page, request, bot_id, viewer, variants)
                if mine is not None:
                    return mine
            # not its owner's view: the same for every visitor (an unknown bot's NotFound
            # comes from rendering it)
            return await shared_page(request, "bot.html", viewer, ("bot", bot_id), lambda: {
                "bot": comp.bot_view(bot_id, viewer, private=False, games_limit=BOT_GAMES),
                "opponents": [], "variants": variants})
        except ArenaError as e:
            return page_error(request, e, viewer)

    @app.get("/games", response_class=HTMLResponse)
    async def games_page(request: Request) -> HTMLResponse:
        filters = game_filters(request)

        def context() -> dict[str, Any]:
            listing = comp.games_page(**filters)
            return {"listing": listing, "games": listing["games"], "status": comp.status(),
                    "variants": [v.name for v in comp.config.variants]}

        return await shared_page(request, "games.html", await page_viewer_now(request),
                                 tuple(sorted(filters.items())), context)

    @app.get("/final", response_class=HTMLResponse)
    async def final_page(request: Request) -> HTMLResponse:
        viewer = await page_viewer_now(request)
        number = _int_param(request, "final")
        try:
            if number is not None and not _known_id(number):
                raise NotFound(f"no final {number}")
            # a kept page is answered on the loop; an unknown final's NotFound comes from
            # rendering it
            return await shared_page(request, "final.html", viewer, number,
                                     lambda: {"final": comp.final_view(number),
                                              "pairs": comp.config.final.pairs,
                                              "swiss": comp.config.final.swiss,
                                              "swiss_rounds": comp.config.final.rounds})
        except NotFound as e:
            return page_error(request, e, viewer)

    @app.post("/matches")
    def match_form(request: Request, csrf: str = Form(""), bot: Optional[int] = Form(None),
                   opponent: Optional[int] = Form(None), variant: str = Form("")) -> Response:
        """The bot page's test match form: the game's page once it is queued."""
        viewer = page_viewer(request)
        try:
            check_form(request, viewer, csrf)
            game = comp.request_match(viewer, bot, opponent, variant or None)
        except ArenaError as e:
            return page_error(request, e, viewer)
        return RedirectResponse(f"/games/{game}", 303)

    def viewer_page_key(game_id: int, data: dict[str, Any]) -> tuple[int, tuple[str, ...]]:
        return (game_id, tuple(sorted(data.get("stderr", {}))))

    def viewer_answer(request: Request, halves: tuple[bytes, ...]) -> HTMLResponse:
        """A kept viewer page with this response's nonce on its script (the CSP); its data
        is JSON in a script element of its own, which is not run."""
        return HTMLResponse(request.scope.get("arena.nonce", "").encode().join(halves))

    def rendered_game_page(request: Request, game_id: int, viewer: Viewer) -> HTMLResponse:
        """A game's page from the database (a worker thread): a finished game's viewer,
        rendered once and kept, or a running game's live board."""
        try:
            if not _known_id(game_id):
                raise NotFound(f"no game {game_id}")
            data = comp.game_view(game_id, viewer)
        except NotFound:  # not finished: the live board (a reloading page without JS)
            try:
                if not _known_id(game_id):
                    raise
                return page(request, "live.html", viewer, g=comp.live_game(game_id))
            except ArenaError as e:
                return page_error(request, e, viewer)
        except ArenaError as e:
            return page_error(request, e, viewer)
        key = viewer_page_key(game_id, data)
        with viewer_lock:
            halves = viewer_pages.get(key)
        if halves is None:  # a finished game's page never changes: rendered once
            halves = viewer_page(comp, game_id, data)
            with viewer_lock:
                if len(viewer_pages) >= VIEWER_PAGES:
                    viewer_pages.clear()
                viewer_pages[key] = halves
        return viewer_answer(request, halves)

    @app.get("/games/{game_id}", response_class=HTMLResponse)
    async def game_page(request: Request, game_id: int) -> HTMLResponse:
        viewer = await page_viewer_now(request)
        data = comp.kept_game_view(game_id, viewer) if _known_id(game_id) else None
        if data is not None:  # a kept page of a kept record: answered on the event loop
            with viewer_lock:
                halves = viewer_pages.get(viewer_page_key(game_id, data))
            if halves is not None:
                return viewer_answer(request, halves)
        return await run_in_threadpool(rendered_game_page, request, game_id, viewer)

    add_teacher_routes(app, comp, Site(page=page, page_error=page_error, check_form=check_form,
                                       api_viewer=api_viewer, page_viewer=page_viewer,
                                       api_error=api_error))
    for route in app.routes:  # HEAD: a GET's answer without its body (uvicorn drops it)
        if isinstance(route, APIRoute) and route.methods and "GET" in route.methods and (
                route.path != LIVE_EVENTS):
            route.methods.add("HEAD")
    return app


def serve(folder: str, *, host: str = "127.0.0.1", port: int = 8000,
          db_url: Optional[str] = None) -> None:
    """Open the competition, start the judge, serve until interrupted (SIGINT, SIGTERM).

    uvicorn itself believes no forwarded header (``proxy_headers=False``): the app does,
    from ``trusted_proxies`` only (:class:`_Front`).  The soft descriptor limit is raised
    to the hard one first, and the live streams and the connections open at once are
    sized from it (:func:`~arena.server.descriptors.budget_for`); the listening socket
    answers 503 beyond them and when descriptors run out
    (:class:`~arena.server.descriptors.SheddingSocket`).

    :raises ConfigError: server.yaml conflicts with the folder, or ``host:port`` cannot be
        listened on.
    """
    import uvicorn

    from arena.server.judge import Judge

    soft = D.raise_open_files()  # before the judge starts: its processes inherit it
    comp = Competition(folder, db_url=db_url)
    conflict = comp.settings_conflict()
    if conflict:
        comp.close()
        raise ConfigError(conflict)
    budget = D.budget_for(soft, comp.config.workers + comp.config.check_workers)
    try:
        listener = D.listening_socket(host, port, budget.connections)
    except ConfigError:
        comp.close()
        raise
    comp.leaderboard()  # loads the ratings (numpy, scipy) now rather than on the first page
    judge = Judge(comp)
    judge.start()
    try:
        app = create_app(comp, streams=budget.streams)
        server = uvicorn.Server(uvicorn.Config(
            app, host=host, port=port, log_level="warning", access_log=False,
            proxy_headers=False, forwarded_allow_ips=[], server_header=False,
            timeout_graceful_shutdown=5))
        D.quiet_logs()  # after uvicorn's Config has set its loggers up
        handle_exit = server.handle_exit

        def stopping(sig: int, frame: Any) -> None:  # the live streams end first
            app.state.stopping.set()
            handle_exit(sig, frame)

        server.handle_exit = stopping  # type: ignore[method-assign]
        server.run(sockets=[listener])
    finally:
        judge.stop()
        comp.close()
        listener.close()
        D.THROTTLE.flush()
