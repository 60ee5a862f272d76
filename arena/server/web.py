"""The web layer: a FastAPI app over :class:`~arena.server.service.Competition` — the JSON
API (``Authorization: Bearer TOKEN``) and server-rendered pages (Jinja2, autoescaped; they
work without JavaScript; only the game viewer from the report uses it).

Every handler is a few lines: it finds the viewer, calls one library function, and turns the
library's typed errors into status codes (:class:`~arena.server.service.NotFound` 404,
:class:`~arena.server.service.Forbidden` 403 — 401 when nobody is logged in —,
:class:`~arena.server.service.Refused` 400, :class:`~arena.server.service.RateLimited` 429);
every request counts against the rate limit of its participant or address (429 with
``Retry-After`` beyond: :class:`_RateLimit`).

Pages log in with the token (``/login``), kept in an ``HttpOnly``, ``SameSite=Strict``
cookie; every form that changes something carries a CSRF token
(:meth:`~arena.server.service.Competition.csrf_token`).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable, Optional

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.responses import (HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse,
                               Response)
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from arena.errors import ArenaError
from arena.server.config import RateLimits
from arena.server.service import (ANONYMOUS, Competition, Forbidden, NotFound, RateLimited,
                                  Refused, Viewer)

COOKIE = "arena_token"
TEMPLATES = Path(__file__).resolve().parent / "templates"
#: bytes a request body may have beyond the upload limit (the multipart framing)
_BODY_SLACK = 64 * 1024


def _status(error: ArenaError, viewer: Viewer) -> int:
    if isinstance(error, NotFound):
        return 404
    if isinstance(error, Forbidden):
        return 403 if viewer.known else 401
    if isinstance(error, RateLimited):
        return 429
    return 400


class _BodyLimit(BaseHTTPMiddleware):
    """Refuse a request whose declared body is over the upload limit before reading it, and
    a POST that does not declare its size (chunked: it could fill the disk while the
    multipart parser spools it)."""

    def __init__(self, app: Any, limit: int) -> None:
        super().__init__(app)
        self.limit = limit

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        length = request.headers.get("content-length")
        if request.method == "POST" and length is None:  # chunked: its size is unknown
            return JSONResponse({"detail": "a request body needs a Content-Length"}, 411)
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            return JSONResponse({"detail": "the request is over the upload limit"}, 413)
        return await call_next(request)


class _RateLimit(BaseHTTPMiddleware):
    """Every request counts against a moving window (the ``limits`` library, in memory):
    its participant's, or its client address's when it carries no valid token; beyond it,
    429 with ``Retry-After`` (seconds).  Admins are not limited."""

    def __init__(self, app: Any, rates: RateLimits, who: Callable[[Request], Viewer]) -> None:
        from limits import parse, storage, strategies

        super().__init__(app)
        self.limiter = strategies.MovingWindowRateLimiter(storage.MemoryStorage())
        self.participant, self.anonymous = parse(rates.participant), parse(rates.anonymous)
        self.who = who

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        viewer = await run_in_threadpool(self.who, request)  # a database read
        if not viewer.is_admin:
            address = request.client.host if request.client else "?"
            item, key = ((self.participant, f"participant:{viewer.id}") if viewer.known else
                         (self.anonymous, f"address:{address}"))
            if not self.limiter.hit(item, key):
                reset = self.limiter.get_window_stats(item, key).reset_time
                retry = str(max(1, math.ceil(reset - time.time())))
                text = f"too many requests ({item}): try again in {retry} s"
                headers = {"Retry-After": retry}
                if request.url.path.startswith("/api/"):
                    return JSONResponse({"detail": text}, 429, headers=headers)
                return PlainTextResponse(text, 429, headers=headers)
        return await call_next(request)


def create_app(comp: Competition) -> FastAPI:
    """The site and API of ``comp``."""
    app = FastAPI(title=f"Morris Arena: {comp.config.name}", docs_url=None, redoc_url=None,
                  openapi_url=None)
    templates = Jinja2Templates(directory=str(TEMPLATES))

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

    def any_viewer(request: Request) -> Viewer:
        viewer = api_viewer(request)
        return viewer if viewer.known else page_viewer(request)

    # the last added is the outermost: the rate limit counts refused bodies too
    app.add_middleware(_BodyLimit, limit=comp.config.upload.max_bytes + _BODY_SLACK)
    app.add_middleware(_RateLimit, rates=comp.config.rate_limit, who=any_viewer)

    def api_error(e: ArenaError, viewer: Viewer) -> JSONResponse:
        return JSONResponse({"detail": str(e)}, _status(e, viewer))

    def page(request: Request, name: str, viewer: Viewer, code: int = 200,
             **context: Any) -> HTMLResponse:
        context.update(viewer=viewer, competition=comp.config.name,
                       csrf=comp.csrf_token(viewer) if viewer.known else "")
        response = templates.TemplateResponse(request, name, context, status_code=code)
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    def page_error(request: Request, e: ArenaError, viewer: Viewer) -> HTMLResponse:
        return page(request, "message.html", viewer, _status(e, viewer),
                    title="Not possible", message=str(e))

    # ---- the JSON API --------------------------------------------------------------

    @app.post("/api/bots", status_code=201)
    async def api_submit(request: Request, file: UploadFile = File(...)) -> JSONResponse:
        viewer = api_viewer(request)
        if not viewer.known:
            return JSONResponse({"detail": "a valid 'Authorization: Bearer TOKEN' is needed"},
                                401)
        data = await file.read(comp.config.upload.max_bytes + 1)
        try:
            return JSONResponse(comp.submit(viewer, file.filename or "", data), 201)
        except ArenaError as e:
            return api_error(e, viewer)

    @app.get("/api/bots/{bot_id}")
    def api_bot(request: Request, bot_id: int) -> JSONResponse:
        viewer = api_viewer(request)
        try:
            return JSONResponse(comp.bot_view(bot_id, viewer, private=True))
        except ArenaError as e:
            return api_error(e, viewer)

    @app.get("/api/leaderboard")
    def api_leaderboard() -> JSONResponse:
        return JSONResponse(comp.leaderboard())

    @app.get("/api/games")
    def api_games() -> JSONResponse:
        return JSONResponse(comp.games())

    @app.get("/api/games/{game_id}")
    def api_game(request: Request, game_id: int) -> JSONResponse:
        viewer = api_viewer(request)
        try:
            return JSONResponse(comp.game_view(game_id, viewer))
        except ArenaError as e:
            return api_error(e, viewer)

    @app.get("/api/games/{game_id}/live")
    def api_live(game_id: int) -> JSONResponse:
        try:
            return JSONResponse(comp.live_game(game_id))
        except ArenaError as e:
            return api_error(e, ANONYMOUS)

    @app.get("/api/status")
    def api_status() -> JSONResponse:
        return JSONResponse(comp.status())

    # ---- pages ---------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse)
    def leaderboard_page(request: Request) -> HTMLResponse:
        viewer = page_viewer(request)
        rows = comp.leaderboard()
        variants = list(dict.fromkeys(r["variant"] for r in rows)) or [
            v.name for v in comp.config.variants]
        return page(request, "leaderboard.html", viewer, rows=rows, variants=variants,
                    status=comp.status())

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return page(request, "login.html", page_viewer(request))

    @app.post("/login")
    def login(request: Request, token: str = Form("")) -> Response:
        viewer = comp.authenticate(token.strip())
        if not viewer.known:
            return page(request, "login.html", ANONYMOUS, 401, error="unknown token")
        response = RedirectResponse("/", 303)
        response.set_cookie(COOKIE, token.strip(), httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")
        return response

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form("")) -> Response:
        viewer = page_viewer(request)
        try:
            comp.check_csrf(viewer, csrf)
        except ArenaError as e:
            return page_error(request, e, viewer)
        response = RedirectResponse("/", 303)
        response.delete_cookie(COOKIE)
        return response

    @app.get("/submit", response_class=HTMLResponse)
    def submit_page(request: Request) -> HTMLResponse:
        viewer = page_viewer(request)
        if not viewer.known:
            return page(request, "login.html", viewer, 401, error="log in to upload a bot")
        return page(request, "submit.html", viewer, bots=comp.bots(owner=viewer.id))

    @app.post("/submit")
    async def submit_form(request: Request, file: UploadFile = File(...),
                          csrf: str = Form("")) -> Response:
        viewer = page_viewer(request)
        try:
            comp.check_csrf(viewer, csrf)
            data = await file.read(comp.config.upload.max_bytes + 1)
            made = comp.submit(viewer, file.filename or "", data)
        except ArenaError as e:
            return page_error(request, e, viewer)
        return RedirectResponse(f"/bots/{made['id']}", 303)

    @app.get("/bots/{bot_id}", response_class=HTMLResponse)
    def bot_page(request: Request, bot_id: int) -> HTMLResponse:
        viewer = page_viewer(request)
        try:
            bot = comp.bot_view(bot_id, viewer, private=False)
        except ArenaError as e:
            return page_error(request, e, viewer)
        return page(request, "bot.html", viewer, bot=bot)

    @app.get("/games", response_class=HTMLResponse)
    def games_page(request: Request) -> HTMLResponse:
        return page(request, "games.html", page_viewer(request), games=comp.games(),
                    status=comp.status())

    @app.get("/games/{game_id}", response_class=HTMLResponse)
    def game_page(request: Request, game_id: int) -> HTMLResponse:
        from arena.records import GameRecord
        from arena.report.viewer import render_game_page

        viewer = page_viewer(request)
        try:
            data = comp.game_view(game_id, viewer)
        except NotFound:  # not finished: the live board (a reloading page without JS)
            try:
                return page(request, "live.html", viewer, g=comp.live_game(game_id))
            except ArenaError as e:
                return page_error(request, e, viewer)
        except ArenaError as e:
            return page_error(request, e, viewer)
        record = GameRecord.from_dict(data)
        # the players as people know them, not the records' labels (name#id)
        ids = [int(tail) for p in (record.white, record.black)
               if (tail := p.name.rpartition("#")[2]).isdigit()]
        shown = {f"{b['bot']}#{b['id']}": f"{b['bot']} v{b['version']} ({b['owner']})"
                 for b in comp.bots(ids=ids)}
        for player in (record.white, record.black):
            player.name = shown.get(player.name, player.name)
        title = f"{record.white.name} - {record.black.name}, {record.variant} (game {game_id})"
        return HTMLResponse(render_game_page(record, title, back="/games", back_text="all games"))

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request) -> HTMLResponse:
        viewer = page_viewer(request)
        if not viewer.is_admin:
            return page_error(request, Forbidden("admins only"), viewer)
        return page(request, "admin.html", viewer, users=comp.users(), bots=comp.bots(),
                    paused=comp.paused(), status=comp.status())

    @app.post("/admin/{action}")
    def admin_action(request: Request, action: str, csrf: str = Form(""),
                     bot: Optional[int] = Form(None),
                     user: Optional[int] = Form(None)) -> Response:
        viewer = page_viewer(request)
        try:
            comp.check_csrf(viewer, csrf)
            if action == "pause":
                comp.set_paused(not comp.paused(), viewer)
            elif action == "retire" and bot is not None:
                comp.retire(bot, viewer)
            elif action == "rejudge" and bot is not None:
                comp.rejudge(bot, viewer)
            elif action == "token" and user is not None:
                token = comp.new_token(user, viewer)
                name = next((u["name"] for u in comp.users() if u["id"] == user), "")
                response = page(request, "token.html", viewer, who=name, token=token)
                response.headers["Cache-Control"] = "no-store"
                return response
            elif action == "revoke" and user is not None:
                comp.revoke_token(user, viewer)
            else:
                raise NotFound(f"no admin action {action!r}")
        except ArenaError as e:
            return page_error(request, e, viewer)
        return RedirectResponse("/admin" if viewer.is_admin else "/", 303)

    return app


def serve(folder: str, *, host: str = "127.0.0.1", port: int = 8000,
          db_url: Optional[str] = None) -> None:
    """Open the competition, start the judge, serve until interrupted (SIGINT, SIGTERM)."""
    import uvicorn

    from arena.server.judge import Judge

    comp = Competition(folder, db_url=db_url)
    comp.leaderboard()  # loads the ratings (numpy, scipy) now rather than on the first page
    judge = Judge(comp)
    judge.start()
    try:
        uvicorn.run(create_app(comp), host=host, port=port, log_level="warning",
                    access_log=False)
    finally:
        judge.stop()
        comp.close()
