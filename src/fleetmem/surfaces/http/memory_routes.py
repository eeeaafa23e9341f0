"""API routes for runs, episodes, recall, forgetting and status."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from fleetmem.errors import InvalidInput
from fleetmem.service.bootstrap import App
from fleetmem.service.runrecords import MAX_RECORD_BYTES
from fleetmem.surfaces import views
from fleetmem.surfaces.agent_views import recall_sections_view
from fleetmem.surfaces.cli.parsing import parse_since
from fleetmem.surfaces.http import contract
from fleetmem.surfaces.http import schemas_memory as m
from fleetmem.surfaces.http.bodies import json_object, read_body, whole_number
from fleetmem.surfaces.http.schemas import documented, run_record_schema
from fleetmem.surfaces.http.tenancy import WorkspaceApp


def routes(app: App) -> APIRouter:
    api = APIRouter()

    @api.get("/api/v1/status", **documented(m.StatusOut))
    def status() -> dict[str, Any]:
        return app.memory.status()

    @api.post(
        "/api/v1/runs",
        status_code=201,
        **documented(
            m.IngestOut, 409, 413, status=201, also={200: m.IngestOut}, body=run_record_schema()
        ),
    )
    async def ingest(request: Request) -> JSONResponse:
        body = await read_body(request, MAX_RECORD_BYTES)
        # Parsing and storing is blocking work: keep it off the event loop.
        result = await run_in_threadpool(app.memory.ingest_run, body)
        code = 200 if result.status == "duplicate" else 201
        return JSONResponse(views.ingest_view(result), status_code=code)

    @api.get("/api/v1/episodes", **documented(m.EpisodeList))
    def list_episodes(
        agent: str | None = None,
        repo: str | None = None,
        since: str | None = None,
        limit: int = Query(100),
    ) -> dict[str, Any]:
        rows = app.memory.list_episodes(
            agent=agent,
            repo=repo,
            since=_since(since, app.memory.now()),
            limit=limit,
        )
        return {"episodes": [views.episode_brief(r) for r in rows]}

    @api.get("/api/v1/episodes/{episode_id}", **documented(m.EpisodeDetail, 404))
    def get_episode(episode_id: str) -> dict[str, Any]:
        row = views.readable_episode(app.memory.get_episode(episode_id))
        return views.episode_detail(row, app.memory.episode_index(episode_id))

    @api.delete("/api/v1/episodes/{episode_id}", **documented(m.EpisodeForgotten, 404, 409))
    def forget(episode_id: str) -> dict[str, Any]:
        return views.forget_view(app.memory.forget(episode_id))

    @api.post("/api/v1/recall", **documented(m.RecallOut, body=contract.recall_body()))
    async def recall(here: WorkspaceApp, request: Request) -> dict[str, Any]:
        body = await json_object(request)
        return await run_in_threadpool(_recall, here, body)

    @api.post(
        "/api/v1/provider/check",
        **documented(m.ProviderCheckOut, 404, body=m.ProviderCheckIn, body_required=False),
    )
    async def provider_check(request: Request) -> dict[str, Any]:
        # As `fleetmem provider check`: the seven conformance checks over a fresh session
        # (the built-in provider over a scratch store); "passed" says whether any failed.
        body = await json_object(request)
        for key in body:
            if key != "provider":
                raise InvalidInput(key, body[key], "is not a known field")
        name = body.get("provider")
        if name is not None and (not isinstance(name, str) or not name):
            raise InvalidInput("provider", name, "must be a non-empty string")
        report = await run_in_threadpool(app.providers.check, name)
        return report.as_dict()

    return api


def _since(text: str | None, now: float) -> float | None:
    """The API's ``since``: as the document declares it (one-unit durations, RFC 3339)."""
    if text is None:
        return None
    if not (re.fullmatch(contract.SINCE_DURATION, text) or _RFC3339.fullmatch(text)):
        raise InvalidInput(
            "since", text, "must be a duration such as 7d or a date such as 2026-11-01"
        )
    return parse_since(text, now)


_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?(?:[Zz]|[+-][0-9]{2}:[0-9]{2}))?"
)


def _recall(app: App, body: dict[str, Any]) -> dict[str, Any]:
    known = {"query", "repo", "agent", "all_repos", "paths", "limit"}
    for key in body:
        if key not in known:
            raise InvalidInput(key, body[key], "is not a known field")
    repo, agent = body.get("repo"), body.get("agent")
    every = body.get("all_repos", False)
    if not isinstance(every, bool):
        raise InvalidInput("all_repos", every, "must be true or false")
    if sum([repo is not None, agent is not None, every]) != 1:
        raise InvalidInput("repo", repo, "give exactly one of repo, agent or all_repos: true")
    if repo is not None and not isinstance(repo, str):
        raise InvalidInput("repo", repo, "must be a string")
    if agent is not None and not isinstance(agent, str):
        raise InvalidInput("agent", agent, "must be a string")
    paths = body.get("paths", [])
    if not isinstance(paths, list):
        raise InvalidInput("paths", paths, "must be a list of strings")
    limit = whole_number(body.get("limit", 8))
    # The operator's recall, as `fleetmem recall`: facts, episodes and the runs that edited
    # `paths`, with no exposure written.
    found = app.agent_memory.operator_recall(
        body.get("query"),  # type: ignore[arg-type]  # validated by the service
        repo=repo,
        agent=agent,
        every_repo=every,
        paths=paths,
        limit=limit,
    )
    data = views.recall_view(found.episodes)
    data.update(recall_sections_view(found))
    return data
