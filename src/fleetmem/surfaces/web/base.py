"""What every web page shares: the signed-in session, CSRF-checked forms, errors as pages,
and the left rail.

Handlers are plain functions over the same service methods as the HTTP API; they never touch
the store. A handler that fails with a :class:`FleetmemError` gets an HTML page (or, for the
pages' own scripts, which ask for JSON, the API's error object) with the API's status code.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from fleetmem.core.contextfiles import WORKSPACE_FILES
from fleetmem.core.facts import DEFAULT_WORKSPACE
from fleetmem.errors import (
    Conflict,
    FleetmemError,
    InvalidInput,
    NotAttributed,
    NotFound,
    NotPermitted,
    RateLimited,
    StoreError,
)
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.http.app import error_body
from fleetmem.surfaces.web.auth import CSRF_FIELD, CSRF_HEADER, SESSION_COOKIE, Session, WebAuth
from fleetmem.surfaces.web.render import PAGE_HEADERS, render

log = logging.getLogger("fleetmem.web")

#: The largest form a page posts (a 64 KB context file, URL-encoded, with room to spare).
MAX_FORM_BYTES = 512 * 1024

_STATUS: tuple[tuple[type[FleetmemError], int], ...] = (
    (InvalidInput, 400),
    (NotAttributed, 403),
    (NotPermitted, 403),
    (NotFound, 404),
    (Conflict, 409),
    (RateLimited, 429),
    (StoreError, 503),
)


class NeedLogin(Exception):
    """No live session: the browser is sent to the login page."""


class Forbidden(Exception):
    """A state-changing request without the session's CSRF token, or from another origin."""


def status_of(exc: FleetmemError) -> int:
    return next((code for kind, code in _STATUS if isinstance(exc, kind)), 500)


def wants_json(request: Request) -> bool:
    """The pages' own scripts ask for JSON; a plain form post gets a redirect or a page."""
    return "application/json" in request.headers.get("accept", "")


#: The workspace of the session of the page request being served (set by :class:`WebRoute`
#: for the request's whole handling, thread-pool work included).
_WORKSPACE: contextvars.ContextVar[str] = contextvars.ContextVar(
    "fleetmem_web_workspace", default=DEFAULT_WORKSPACE
)


@dataclass
class Web:
    """The wiring the pages need: the application and the daemon's sign-in state.

    Every session is bound to one workspace (the switcher changes it); :attr:`app` is the
    application bound to the workspace of the session being served, so a page cannot show or
    change another workspace's facts or files."""

    root: App
    auth: WebAuth

    @property
    def app(self) -> App:
        """The application in the current request's workspace."""
        return self.root.in_workspace(_WORKSPACE.get())

    def workspace_of(self, request: Request) -> str:
        """The workspace of the request's session (the default one without a live session);
        a session whose workspace was deleted goes back to the default workspace."""
        token = request.cookies.get(SESSION_COOKIE)
        found = self.auth.session(token)
        if found is None:
            return DEFAULT_WORKSPACE
        if found.workspace != DEFAULT_WORKSPACE and not self.root.workspaces.still_there(
            found.workspace
        ):
            self.auth.switch(token, DEFAULT_WORKSPACE)
            return DEFAULT_WORKSPACE
        return found.workspace

    def session(self, request: Request) -> Session:
        found = self.auth.session(request.cookies.get(SESSION_COOKIE))
        if found is None:
            raise NeedLogin
        return found

    async def form(self, request: Request) -> tuple[Session, dict[str, str]]:
        """The session and the posted form, after checking its origin and CSRF token."""
        session = self.session(request)
        origin = request.headers.get("origin")
        if origin is not None and origin != "null" and not _same_origin(origin, request):
            raise Forbidden("the request came from another site")
        raw = await request.body()
        if len(raw) > MAX_FORM_BYTES:
            raise InvalidInput("<form>", f"{len(raw):,} bytes", f"at most {MAX_FORM_BYTES:,}")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput("<form>", "<not UTF-8>", "must be UTF-8") from exc
        fields = {k: v[0] for k, v in parse_qs(text, keep_blank_values=True).items()}
        given = request.headers.get(CSRF_HEADER) or fields.pop(CSRF_FIELD, None)
        fields.pop(CSRF_FIELD, None)
        if not self.auth.check_csrf(session, given):
            raise Forbidden("the form is missing its security token; reload the page")
        return session, fields

    def rail(self, section: str) -> dict[str, Any]:
        """The left rail: fact counts, workspace files (every-run marked), agents, notebooks."""
        app = self.app
        workspaces = self.root.workspaces.list()
        current = next((w for w in workspaces if w.id == app.workspace), workspaces[0])
        counts = app.facts.counts()
        every_run = set(app.files.every_run_names())
        listing = app.files.listing()
        return {
            "section": section,
            "workspaces": [{"id": w.id, "name": w.name} for w in workspaces],
            "workspace": {"id": current.id, "name": current.name},
            "counts": counts,
            "workspace_files": [
                {"slug": s.slug, "title": s.title, "every_run": s.slug in every_run}
                for s in WORKSPACE_FILES
            ],
            "agents": list(listing.agents),
            "notebooks": list(listing.notebooks),
        }

    def page(
        self,
        request: Request,
        session: Session,
        template: str,
        section: str,
        context: Mapping[str, Any],
        *,
        status_code: int = 200,
    ) -> Response:
        ctx = {"csrf": session.csrf, "rail": self.rail(section), **context}
        return render(request, template, ctx, status_code=status_code)


def _same_origin(origin: str, request: Request) -> bool:
    parts = urlsplit(origin)
    return parts.netloc == request.headers.get("host", "") and parts.scheme in ("http", "https")


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303, headers=dict(PAGE_HEADERS))


def with_query(path: str, **params: object) -> str:
    """``path`` with the non-empty ``params`` as its query string."""
    kept = {k: str(v) for k, v in params.items() if v not in (None, "", False)}
    return f"{path}?{urlencode(kept)}" if kept else path


def back_to(request: Request, fallback: str, **params: object) -> str:
    """Where a form came from (the ``next`` field, a local path), plus ``params``."""
    target = request.query_params.get("next") or fallback
    if not target.startswith("/") or target.startswith("//"):
        target = fallback
    path, _, query = target.partition("?")
    merged = {k: v[0] for k, v in parse_qs(query).items() if k not in params and k != "undo"}
    merged.update({k: str(v) for k, v in params.items() if v not in (None, "")})
    return with_query(path, **merged)


async def call(fn: Callable[[], Any]) -> Any:
    """Run a blocking service call off the event loop."""
    return await run_in_threadpool(fn)


class WebRoute(APIRoute):
    """Routes of the pages: no login → the login page; a CSRF failure → 403; a service error
    → an error page (or the API's JSON error for the pages' scripts)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            web: Web | None = request.app.state.web
            bound = _WORKSPACE.set(web.workspace_of(request) if web else DEFAULT_WORKSPACE)
            try:
                return await handler(request)
            except NeedLogin:
                if wants_json(request):
                    body = {"error": {"code": "not_signed_in", "message": "sign in first"}}
                    return JSONResponse(body, status_code=401)
                return redirect("/login")
            except Forbidden as exc:
                if wants_json(request):
                    body = {"error": {"code": "forbidden", "message": str(exc)}}
                    return JSONResponse(body, status_code=403)
                return render(
                    request, "error.html", {"status": 403, "message": str(exc)}, status_code=403
                )
            except FleetmemError as exc:
                status = status_of(exc)
                if wants_json(request):
                    return JSONResponse(error_body(exc), status_code=status)
                return render(
                    request,
                    "error.html",
                    {"status": status, "message": _page_message(exc, status)},
                    status_code=status,
                )
            finally:
                _WORKSPACE.reset(bound)

        return guarded


def _page_message(exc: FleetmemError, status: int) -> str:
    if status == 404:
        return "Nothing here: it does not exist, or it is not in this workspace."
    return exc.summary
