"""Who may call which ``/api/v1`` route, checked before any handler (or body parser) runs.

Every API route has a tier. It follows from the method (GET and HEAD read; POST, PUT, PATCH
and DELETE change things and need ``control``) except where :data:`ROUTE_EXCEPTIONS` says
otherwise: POSTs that only read, and the run endpoints that authenticate a *run* token in
their handler (``heartbeat``, ``caller``) and so are left to it. A route whose method fits no
rule stops the app from being created, so a new route cannot slip in unclassified.

A caller proves its tier with ``Authorization: Bearer <API token>``
(:mod:`fleetmem.service.api_tokens`), or, from the web UI, with its session cookie: a session
reads, and a session that also sends its CSRF token in ``X-CSRF-Token`` may change things.
Missing or unknown credentials get 401; a tier too low gets 403. Both use the API's error
shape ``{"error": {"code", "message", "field"}}``.

Every token and every session is bound to one workspace (:mod:`fleetmem.surfaces.http.tenancy`):
the guard leaves the caller (workspace, tier, operator or not) in the request's scope. A token
whose workspace was deleted is unknown from then on (401); a session whose workspace was
deleted falls back to the default workspace.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from fleetmem.core.facts import DEFAULT_WORKSPACE
from fleetmem.service.api_tokens import CONTROL_TOKEN_FILE, ApiTokens, Tier
from fleetmem.service.workspaces import WorkspaceService
from fleetmem.surfaces.http.tenancy import ApiCaller, set_caller
from fleetmem.surfaces.web.auth import CSRF_HEADER, SESSION_COOKIE, WebAuth

log = logging.getLogger("fleetmem.http.auth")

API_PREFIX = "/api/v1"
RUN_TOKEN_PREFIX = "fmr_"


class Access(enum.Enum):
    """What a route asks of its caller."""

    READ = "read"
    CONTROL = "control"
    RUN_TOKEN = "run_token"  # the handler checks a run token itself


_BY_METHOD: Mapping[str, Access] = MappingProxyType(
    {
        "GET": Access.READ,
        "HEAD": Access.READ,
        "POST": Access.CONTROL,
        "PUT": Access.CONTROL,
        "PATCH": Access.CONTROL,
        "DELETE": Access.CONTROL,
    }
)

#: Routes whose access is not the one their method implies, keyed by (method, route path).
ROUTE_EXCEPTIONS: Mapping[tuple[str, str], Access] = MappingProxyType(
    {
        # Recall reads: it is a POST only because its query is a JSON body.
        ("POST", "/api/v1/recall"): Access.READ,
        # A live run reports itself with its own run token (docs/runs.md).
        ("POST", "/api/v1/runs/heartbeat"): Access.RUN_TOKEN,
        # "Who am I": answers for the run token presented.
        ("GET", "/api/v1/caller"): Access.RUN_TOKEN,
    }
)


class UnclassifiedRoute(Exception):
    """An API route whose method has no tier rule and no entry in ROUTE_EXCEPTIONS."""


def access_for(method: str, path: str) -> Access:
    """The access a request ``method`` on the route ``path`` (its template) needs."""
    found = ROUTE_EXCEPTIONS.get((method, path)) or _BY_METHOD.get(method)
    if found is None:
        raise UnclassifiedRoute(f"{method} {path}: no tier rule; add it to ROUTE_EXCEPTIONS")
    return found


def is_api_route(route: BaseRoute) -> bool:
    return isinstance(route, APIRoute) and (
        route.path == API_PREFIX or route.path.startswith(API_PREFIX + "/")
    )


def flatten_routes(routes: Iterable[BaseRoute]) -> list[BaseRoute]:
    """The routes of an app in matching order, with included routers opened up (recent
    FastAPI keeps an included router as one route that holds the original router). The
    daemon includes its routers without a prefix, so each route's path is its full path;
    should one ever get a prefix, its requests still fall to the by-method rule."""
    out: list[BaseRoute] = []
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            out.extend(flatten_routes(included.routes))
        else:
            out.append(route)
    return out


def api_routes(routes: Iterable[BaseRoute]) -> list[APIRoute]:
    """Every ``/api/v1`` route of ``routes`` (included routers opened up), in order."""
    return [r for r in flatten_routes(routes) if is_api_route(r) and isinstance(r, APIRoute)]


def classify_routes(routes: Iterable[BaseRoute]) -> dict[tuple[str, str], Access]:
    """(method, path) -> access for every API route; raises :class:`UnclassifiedRoute`."""
    table: dict[tuple[str, str], Access] = {}
    for route in api_routes(routes):
        for method in sorted(route.methods or ()):
            table[(method, route.path)] = access_for(method, route.path)
    return table


def _error(status: int, code: str, message: str) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message, "field": "Authorization"}
    headers = {"WWW-Authenticate": 'Bearer realm="fleetmem"'} if status == 401 else None
    return JSONResponse({"error": body}, status_code=status, headers=headers)


class ApiGuard:
    """ASGI middleware: answers 401/403 for ``/api/v1`` requests without the tier they need,
    before routing reaches a handler. Anything else passes through untouched."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        tokens: ApiTokens,
        web_auth: WebAuth,
        routes: Sequence[BaseRoute],
        workspaces: WorkspaceService,
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.web_auth = web_auth
        self.workspaces = workspaces
        # Routers are all included before the app is built; the API routes are fixed here.
        self.routes = api_routes(routes)
        classify_routes(self.routes)  # fail now, not on the first request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            needed, template = self._needed(scope)
            if needed is Access.RUN_TOKEN:
                refusal = self._run_token_missing(Request(scope), template)
                if refusal is not None:
                    await refusal(scope, receive, send)
                    return
            elif needed is not None:
                outcome = self._refusal(Request(scope), needed, template)
                if isinstance(outcome, JSONResponse):
                    await outcome(scope, receive, send)
                    return
                set_caller(scope, outcome)
        await self.app(scope, receive, send)

    def _needed(self, scope: Scope) -> tuple[Access | None, str]:
        """The access the request needs (None: not an API request), and the route's path."""
        method = scope["method"]
        # The router's first-full-match rule over the API routes (no other route shares
        # their /api/v1 prefix), so both pick the same route.
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return access_for(method, route.path), route.path
        path: str = scope["path"]
        if path == API_PREFIX or path.startswith(API_PREFIX + "/"):
            # No such route (404/405 follows): still ask for a token, so probing the API
            # without one tells nothing about which paths exist.
            return _BY_METHOD.get(method, Access.CONTROL), ""
        return None, ""

    def _run_token_missing(self, request: Request, template: str) -> JSONResponse | None:
        """A run-token route's handler judges the token; a request with none at all is
        refused here with 401 like every other route (a wrong or API token is the handler's
        403 ``not_attributed``)."""
        if request.headers.get("authorization") is not None:
            return None
        return self._deny(
            request, template, 401, "no credentials: send Authorization: Bearer <run token>"
        )

    def _refusal(self, request: Request, needed: Access, template: str) -> JSONResponse | ApiCaller:
        """The refusal to send, or the caller the request acts for."""
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, value = header.partition(" ")
            token = value.strip()
            if scheme.lower() != "bearer" or not token:
                return self._deny(request, template, 401, "Authorization must be: Bearer <token>")
            known = self.tokens.identify(token)
            if known is None:
                reason = "unknown API token"
                if token.startswith(RUN_TOKEN_PREFIX):
                    reason = "a run token is not an API token; send an API token (fmc_ or fmro_)"
                return self._deny(request, template, 401, reason)
            if not self.workspaces.still_there(known.workspace):
                return self._deny(
                    request,
                    template,
                    401,
                    f"this token is bound to workspace {known.workspace}, which no longer "
                    "exists; mint a token for another workspace",
                )
            tier = known.tier
            caller = ApiCaller(known.workspace, tier, known.operator, known.origin)
        else:
            session_token = request.cookies.get(SESSION_COOKIE)
            session = self.web_auth.session(session_token)
            if session is None:
                return self._deny(
                    request,
                    template,
                    401,
                    "no credentials: send Authorization: Bearer <token>; the control token "
                    f"is in {CONTROL_TOKEN_FILE} under the daemon's FLEETMEM_HOME",
                )
            if session.workspace != DEFAULT_WORKSPACE and not self.workspaces.still_there(
                session.workspace
            ):
                # Its workspace was deleted (perhaps by another daemon): back to the default.
                session = self.web_auth.switch(session_token, DEFAULT_WORKSPACE) or session
            csrf_ok = self.web_auth.check_csrf(session, request.headers.get(CSRF_HEADER))
            tier = Tier.CONTROL if csrf_ok else Tier.READ
            caller = ApiCaller(session.workspace, tier, True, "session")
        wanted = Tier.CONTROL if needed is Access.CONTROL else Tier.READ
        if tier.covers(wanted):
            return caller
        how = "a control token" if header is not None else "the session's X-CSRF-Token header"
        target = f"{request.method} {template or request.url.path}"
        message = f"{target} changes state and needs {how}; read access given"
        return self._deny(request, template, 403, message)

    def _deny(self, request: Request, template: str, status: int, message: str) -> JSONResponse:
        # The route template, never the path: a path can carry ids.
        route = template or "unmatched"
        log.warning("api.denied method=%s route=%s status=%d", request.method, route, status)
        if status == 401:
            return _error(401, "unauthorized", message)
        return _error(403, "insufficient_tier", message)
