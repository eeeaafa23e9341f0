"""The daemon's HTTP surface: health, metrics and the JSON API under /api/v1.

Handlers parse, call one service method, and format; errors become JSON with a stable
``code`` and a message naming the field. Handlers are plain ``def`` so FastAPI runs them in
its thread pool: the services are synchronous and SQLite-bound.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from fleetmem import __version__, metrics
from fleetmem.errors import (
    FleetmemError,
    InvalidInput,
    NotAttributed,
    NotFound,
    StoreError,
)
from fleetmem.service.bootstrap import App
from fleetmem.surfaces import views
from fleetmem.surfaces.cli.parsing import parse_since

_STATUS = {InvalidInput: 400, NotAttributed: 403, NotFound: 404, StoreError: 503}


def _status_for(exc: FleetmemError) -> int:
    for kind, status in _STATUS.items():
        if isinstance(exc, kind):
            return status
    return 500


def error_body(exc: FleetmemError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": exc.code, "message": str(exc)}
    field = getattr(exc, "field", None)
    if field is not None:
        body["field"] = field
    return {"error": body}


def create_app(app: App) -> FastAPI:
    api = FastAPI(title="fleetmem", version=__version__, docs_url=None, redoc_url=None)

    @api.exception_handler(FleetmemError)
    def _fleetmem_error(_request: Request, exc: FleetmemError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=_status_for(exc))

    @api.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"status": "ok", "version": __version__, "schema": app.store.db.schema_version()}

    @api.get("/metrics")
    def metrics_endpoint() -> Response:
        return Response(generate_latest(metrics.REGISTRY), media_type=CONTENT_TYPE_LATEST)

    @api.get("/api/v1/status")
    def status() -> dict[str, Any]:
        return app.memory.status()

    @api.post("/api/v1/runs", status_code=201)
    async def ingest(request: Request) -> JSONResponse:
        body = await request.body()
        # Parsing and storing is blocking work: keep it off the event loop.
        from starlette.concurrency import run_in_threadpool

        result = await run_in_threadpool(app.memory.ingest_run, body)
        code = 200 if result.status == "duplicate" else 201
        return JSONResponse(views.ingest_view(result), status_code=code)

    @api.get("/api/v1/episodes")
    def list_episodes(
        agent: str | None = None,
        repo: str | None = None,
        since: str | None = None,
        limit: int = Query(100),
    ) -> dict[str, Any]:
        rows = app.memory.list_episodes(
            agent=agent,
            repo=repo,
            since=parse_since(since, app.memory.now()) if since else None,
            limit=limit,
        )
        return {"episodes": [views.episode_brief(r) for r in rows]}

    @api.get("/api/v1/episodes/{episode_id}")
    def get_episode(episode_id: str) -> dict[str, Any]:
        row = app.memory.get_episode(episode_id)
        return views.episode_detail(row, app.store.index_rows_for_episode(episode_id))

    @api.delete("/api/v1/episodes/{episode_id}")
    def forget(episode_id: str) -> dict[str, Any]:
        return views.forget_view(app.memory.forget(episode_id))

    @api.post("/api/v1/recall")
    async def recall(request: Request) -> dict[str, Any]:
        from starlette.concurrency import run_in_threadpool

        body = await _json_object(request)
        return await run_in_threadpool(_recall, app, body)

    return api


async def _json_object(request: Request) -> dict[str, Any]:
    import json

    raw = await request.body()
    try:
        data = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput("<body>", raw[:60].decode("utf-8", "replace"), "is not JSON") from exc
    if not isinstance(data, dict):
        raise InvalidInput("<body>", type(data).__name__, "must be a JSON object")
    return data


def _recall(app: App, body: dict[str, Any]) -> dict[str, Any]:
    known = {"query", "repo", "agent", "paths", "limit"}
    for key in body:
        if key not in known:
            raise InvalidInput(key, body[key], "is not a known field")
    repo, agent = body.get("repo"), body.get("agent")
    if (repo is None) == (agent is None):
        raise InvalidInput("repo", repo, "give exactly one of repo or agent")
    if repo is not None and not isinstance(repo, str):
        raise InvalidInput("repo", repo, "must be a string")
    if agent is not None and not isinstance(agent, str):
        raise InvalidInput("agent", agent, "must be a string")
    paths = body.get("paths", [])
    if not isinstance(paths, list):
        raise InvalidInput("paths", paths, "must be a list of strings")
    scopes = app.memory.scopes_for(repo=repo, agent=agent)
    result = app.memory.recall(
        body.get("query"),  # type: ignore[arg-type]  # validated by the service
        scopes=scopes,
        limit=body.get("limit", 8),
        paths=paths,
    )
    return views.recall_view(result)
