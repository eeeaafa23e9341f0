"""API routes for live runs, presence and attribution (the runs of docs/runs.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from fleetmem.errors import InvalidInput
from fleetmem.service.bootstrap import App
from fleetmem.surfaces import runs_views
from fleetmem.surfaces.http import contract
from fleetmem.surfaces.http import schemas_memory as m
from fleetmem.surfaces.http.bodies import json_object
from fleetmem.surfaces.http.schemas import documented

_OPEN_FIELDS = frozenset({"agent", "repo", "workdir", "branch", "adapter", "run_id", "source"})
_HEARTBEAT_FIELDS = frozenset({"files", "branch"})


def bearer(request: Request) -> str | None:
    """The run token of an ``Authorization: Bearer <token>`` header, if any."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _only(body: dict[str, Any], allowed: frozenset[str]) -> None:
    for key in body:
        if key not in allowed:
            raise InvalidInput(key, body[key], "is not a known field")


def routes(app: App) -> APIRouter:
    api = APIRouter()

    @api.post(
        "/api/v1/runs/open",
        status_code=201,
        **documented(m.OpenedRun, 404, 409, status=201, body=contract.open_run_body()),
    )
    async def open_run(request: Request) -> JSONResponse:
        body = await json_object(request)
        _only(body, _OPEN_FIELDS)
        opened = await run_in_threadpool(
            lambda: app.runs.open_run(
                body.get("agent"),  # type: ignore[arg-type]  # checked by the service
                repo=body.get("repo"),
                workdir=body.get("workdir"),
                branch=body.get("branch"),
                adapter=body.get("adapter"),
                run_id=body.get("run_id"),
                source=body.get("source", "api"),
            )
        )
        return JSONResponse(runs_views.opened_view(opened), status_code=201)

    @api.post(
        "/api/v1/runs/heartbeat",
        **documented(m.LiveRun, 404, 409, body=m.HeartbeatIn, body_required=False),
    )
    async def heartbeat(request: Request) -> dict[str, Any]:
        body = await json_object(request)
        _only(body, _HEARTBEAT_FIELDS)
        files = body.get("files", [])
        if not isinstance(files, list):
            raise InvalidInput("files", files, "must be a list of paths")
        token = bearer(request)
        run = await run_in_threadpool(
            lambda: app.runs.heartbeat(token, files=files, branch=body.get("branch"))
        )
        return runs_views.live_view(run)

    @api.get("/api/v1/runs", **documented(m.RunList))
    def list_runs(
        repo: str | None = None, agent: str | None = None, limit: int = Query(20)
    ) -> dict[str, Any]:
        rows = app.runs.list_runs(repo=repo, agent=agent, limit=limit)
        return {"runs": [runs_views.summary_view(r) for r in rows]}

    @api.get("/api/v1/runs/{run_id}", **documented(m.RunDetail, 404))
    def show_run(run_id: str) -> dict[str, Any]:
        return runs_views.detail_view(app.runs.show_run(run_id))

    @api.get("/api/v1/presence", **documented(m.Presence))
    def presence(repo: str | None = None) -> dict[str, Any]:
        return runs_views.presence_view(app.runs.live_runs(repo))

    @api.get("/api/v1/caller", **documented(m.CallerOut))
    def caller(request: Request) -> dict[str, Any]:
        """Who the bearer token stands for, and the live runs it collides with."""
        found = app.runs.resolve_caller(bearer(request))
        out = runs_views.caller_view(found)
        out["collisions"] = [runs_views.collision_view(c) for c in app.runs.collisions_for(found)]
        return out

    return api
