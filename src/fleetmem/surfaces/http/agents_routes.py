"""API routes about agents: the briefing an agent would receive now (a preview)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool

from fleetmem.service.bootstrap import App
from fleetmem.surfaces.agent_views import briefing_preview
from fleetmem.surfaces.http import schemas_memory as m
from fleetmem.surfaces.http.schemas import documented
from fleetmem.surfaces.http.tenancy import Caller, WorkspaceApp


def routes(app: App) -> APIRouter:
    api = APIRouter()

    @api.get("/api/v1/agents/{agent}/briefing", **documented(m.BriefingPreview, 404))
    async def briefing(
        here: WorkspaceApp,
        caller: Caller,
        agent: str,
        repo: str | None = Query(None, description="brief for this repository key"),
        branch: str | None = Query(None),
    ) -> dict[str, Any]:
        # A preview, like `fleetmem briefing`: computed now, exposure-free, never stored.
        # The agent's own workspace's facts: the operator's to see, 404 for another tenant.
        return await run_in_threadpool(
            lambda: briefing_preview(
                here, agent, repo=repo, branch=branch, operator=caller.operator
            )
        )

    return api
