"""The teacher's routes of the site (a part of :mod:`arena.server.web`): the admin page
(the overview of uploads, refused uploads and similar code; participants and tokens; the
finals and the re-run button) and its actions, ``GET /api/bots`` (the overview as JSON,
admins), and the final entry a participant chooses (``POST /bots/{id}/entry`` from the bot's
page, ``POST /api/bots/{id}/entry``).  Each handler finds the viewer, calls one library
function and turns its typed errors into answers, with the helpers of
:func:`arena.server.web.create_app` (:class:`Site`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from arena.errors import ArenaError
from arena.server.common import Forbidden, NotFound, Viewer, valid_id
from arena.server.service import Competition


@dataclass(frozen=True)
class Site:
    """The helpers of :func:`arena.server.web.create_app` these routes use."""

    page: Callable[..., HTMLResponse]
    page_error: Callable[[Request, ArenaError, Viewer], HTMLResponse]
    check_form: Callable[[Request, Viewer, str], None]
    api_viewer: Callable[[Request], Viewer]
    page_viewer: Callable[[Request], Viewer]
    api_error: Callable[[ArenaError, Viewer], JSONResponse]

    @staticmethod
    def known_id(value: int) -> bool:
        return valid_id(value)


def add_teacher_routes(app: FastAPI, comp: Competition, site: Site) -> None:
    """Add the teacher's routes to ``app``."""

    @app.get("/api/bots")
    def api_uploads(request: Request) -> JSONResponse:
        """Every upload and every refused upload (admins): the teacher's overview."""
        viewer = site.api_viewer(request)
        if not viewer.known:
            viewer = site.page_viewer(request)
        try:
            return JSONResponse(comp.overview(viewer))
        except ArenaError as e:
            return site.api_error(e, viewer)

    @app.post("/api/bots/{bot_id}/entry")
    def api_entry(request: Request, bot_id: int) -> JSONResponse:
        """Make the bot its owner's final entry."""
        viewer = site.api_viewer(request)
        if not viewer.known:
            return JSONResponse({"detail": "a valid 'Authorization: Bearer TOKEN' is needed"},
                                401)
        try:
            if not site.known_id(bot_id):
                raise NotFound(f"no bot {bot_id}")
            comp.choose_entry(viewer, bot_id)
        except ArenaError as e:
            return site.api_error(e, viewer)
        return JSONResponse({"entry": bot_id})

    @app.post("/bots/{bot_id}/entry")
    def entry_form(request: Request, bot_id: int, csrf: str = Form("")) -> Response:
        """The bot page's "make this my final entry" button."""
        viewer = site.page_viewer(request)
        try:
            if not viewer.known:
                raise Forbidden("log in to choose your final entry")
            if not site.known_id(bot_id):
                raise NotFound(f"no bot {bot_id}")
            site.check_form(request, viewer, csrf)
            comp.choose_entry(viewer, bot_id)
        except ArenaError as e:
            return site.page_error(request, e, viewer)
        return RedirectResponse(f"/bots/{bot_id}", 303)

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request) -> HTMLResponse:
        viewer = site.page_viewer(request)
        if not viewer.is_admin:
            return site.page_error(request, Forbidden("admins only"), viewer)
        return site.page(request, "admin.html", viewer, users=comp.users(),
                         overview=comp.overview(viewer), similar=comp.similar_uploads(viewer),
                         finals=comp.finals(), paused=comp.paused(), status=comp.status())

    @app.post("/admin/{action}")
    def admin_action(request: Request, action: str, csrf: str = Form(""),
                     bot: Optional[int] = Form(None),
                     user: Optional[int] = Form(None)) -> Response:
        viewer = site.page_viewer(request)
        try:
            site.check_form(request, viewer, csrf)
            if bot is not None and not site.known_id(bot):
                raise NotFound(f"no bot {bot}")
            if user is not None and not site.known_id(user):
                raise NotFound(f"no participant {user}")
            if action == "pause":
                comp.set_paused(not comp.paused(), viewer)
            elif action == "retire" and bot is not None:
                comp.retire(bot, viewer)
                if not viewer.is_admin:  # its owner, from the bot's page
                    return RedirectResponse(f"/bots/{bot}", 303)
            elif action == "cancel" and bot is not None:
                comp.cancel_check(bot, viewer)
            elif action == "rejudge" and bot is not None:
                comp.rejudge(bot, viewer)
            elif action == "token" and user is not None:
                token = comp.new_token(user, viewer)
                name = next((u["name"] for u in comp.users() if u["id"] == user), "")
                response = site.page(request, "token.html", viewer, who=name, token=token)
                response.headers["Cache-Control"] = "no-store"
                return response
            elif action == "revoke" and user is not None:
                comp.revoke_token(user, viewer)
            elif action == "rerun":
                number = comp.rerun_final(viewer)["number"]
                return RedirectResponse(f"/final?final={number}", 303)
            else:
                raise NotFound(f"no admin action {action[:40]!r}")
        except ArenaError as e:
            return site.page_error(request, e, viewer)
        return RedirectResponse("/admin" if viewer.is_admin else "/", 303)
