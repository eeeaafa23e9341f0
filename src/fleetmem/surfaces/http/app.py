"""The daemon's HTTP surface: health, metrics and the JSON API under /api/v1.

Handlers parse, call one service method, and format; errors become JSON with a stable
``code`` and a message naming the field. Handlers are plain ``def`` so FastAPI runs them in
its thread pool: the services are synchronous and SQLite-bound.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route

from fleetmem import __version__, metrics
from fleetmem.core import strictjson
from fleetmem.embed.health import describe_embedder
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
from fleetmem.service.api_tokens import ApiTokens
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.http.schemas import install_openapi, validation_error

_STATUS: dict[type[FleetmemError], int] = {
    InvalidInput: 400,
    NotAttributed: 403,
    NotPermitted: 403,
    NotFound: 404,
    Conflict: 409,
    RateLimited: 429,
    StoreError: 503,
}


class FiniteJSONResponse(JSONResponse):
    """JSON that is always valid: a NaN or infinity (only a row stored before bodies were
    parsed strictly can hold one) is sent as null, where the default would answer 500."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:
            return super().render(strictjson.finite(content))


def _status_for(exc: FleetmemError) -> int:
    for kind, status in _STATUS.items():
        if isinstance(exc, kind):
            return status
    return 500


def _allowed_methods(api: FastAPI, scope: Any) -> list[str]:
    """The methods of the resource this path names: every route sharing the path template of
    the first route whose path matches (``/facts/counts`` is not ``/facts/{fact_id}``), in a
    stable order; included routers opened up, as FastAPI keeps them nested."""
    from fleetmem.surfaces.http.auth import flatten_routes

    probe = {**scope, "method": "GET"}
    routes = [r for r in flatten_routes(api.router.routes) if isinstance(r, Route)]
    template = next((r.path for r in routes if r.matches(probe)[0] is not Match.NONE), None)
    methods: set[str] = set()
    for route in routes:
        if route.path == template:
            methods |= set(route.methods or ())
    methods.discard("HEAD")
    return sorted(methods)


def error_body(exc: FleetmemError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": exc.code, "message": str(exc), "summary": exc.summary}
    field = getattr(exc, "field", None)
    if field is not None:
        body["field"] = field
    existing = getattr(exc, "existing", None)
    if isinstance(existing, str):
        body["existing"] = existing  # the fact a duplicate or conflict points at
    if isinstance(exc, RateLimited):
        body["retry_after"] = round(exc.retry_after, 1)
    return {"error": body}


#: Modules that contribute API routes; each exposes ``routes(app: App) -> APIRouter``.
ROUTE_MODULES: tuple[str, ...] = (
    "fleetmem.surfaces.http.memory_routes",
    "fleetmem.surfaces.http.runs_routes",
    "fleetmem.surfaces.http.files_routes",
    "fleetmem.surfaces.http.facts_routes",
    "fleetmem.surfaces.http.agents_routes",
    "fleetmem.surfaces.http.activity_routes",
    "fleetmem.surfaces.http.workspaces_routes",
)


def create_app(app: App, tokens: ApiTokens | None = None) -> FastAPI:
    """The daemon's ASGI app. ``tokens`` are the API tokens it accepts; by default those of
    ``app.home``, whose ``control.token`` is created here when missing."""
    from fleetmem.surfaces.http.auth import ApiGuard
    from fleetmem.surfaces.mcp.http import mcp_endpoint

    tokens = tokens or ApiTokens(app.home, app.config)

    # The agent-facing MCP server at /mcp; its session manager lives as long as the app.
    mcp = mcp_endpoint(app)

    @asynccontextmanager
    async def lifespan(_api: FastAPI) -> AsyncIterator[None]:
        async with mcp.lifespan():
            yield

    api = FastAPI(
        title="fleetmem",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        default_response_class=FiniteJSONResponse,
    )
    api.router.routes.append(mcp.route)
    # Handlers reach the application (and the caller's workspace view) through this.
    api.state.fleetmem_app = app

    @api.exception_handler(FleetmemError)
    def _fleetmem_error(_request: Request, exc: FleetmemError) -> JSONResponse:
        headers = None
        if isinstance(exc, RateLimited):
            headers = {"Retry-After": str(max(1, round(exc.retry_after)))}
        return JSONResponse(error_body(exc), status_code=_status_for(exc), headers=headers)

    @api.exception_handler(StarletteHTTPException)
    def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # The router's own answers (404 for no route, 405 for a method the path lacks) in
        # the API's error shape; a 405 lists in Allow every method of every route of that
        # path (Starlette names only the first route's).
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(_allowed_methods(api, request.scope))
            body = {
                "code": "method_not_allowed",
                "message": f"{request.method} is not allowed here",
            }
        else:
            body = {
                "code": "not_found" if exc.status_code == 404 else "http_error",
                "message": str(exc.detail),
            }
        return JSONResponse({"error": body}, status_code=exc.status_code, headers=headers)

    @api.exception_handler(RequestValidationError)
    def _parameter_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(validation_error(exc), status_code=422)

    @api.get("/healthz")
    def healthz() -> dict[str, Any]:
        # "degraded" (still HTTP 200: the daemon serves) when a configured embedder cannot
        # run, so a word-only daemon never reports plain "ok"; the embedder block says why.
        embedder = describe_embedder(app.embedder)
        return {
            "status": "degraded" if embedder.state == "degraded" else "ok",
            "version": __version__,
            "schema": app.memory.schema_version(),
            "embedder": embedder.as_dict(),
        }

    @api.get("/metrics")
    def metrics_endpoint() -> Response:
        return Response(generate_latest(metrics.REGISTRY), media_type=CONTENT_TYPE_LATEST)

    for name in ROUTE_MODULES:
        api.include_router(importlib.import_module(name).routes(app))
    install_openapi(api)  # also served at /api/v1/openapi.json
    # The web UI's pages (/, /login, /memory/...) and /static; sign-in state in api.state.
    from fleetmem.surfaces.web import mount as mount_web

    web_auth = mount_web(api, app)
    # Checked before routing reaches any /api/v1 handler; every API route must have a tier.
    api.add_middleware(
        ApiGuard,
        tokens=tokens,
        web_auth=web_auth,
        routes=api.router.routes,
        workspaces=app.workspaces,
    )
    # A deleted workspace's sessions go back to the default workspace at once.
    app.workspaces.on_deleted(web_auth.unbind)
    api.state.api_tokens = tokens
    return api
