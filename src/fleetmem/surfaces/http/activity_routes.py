"""API route for the activity feed: the same ``ActivityFeed.page`` as the Memory page."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from fleetmem.service.bootstrap import App
from fleetmem.surfaces import activity_views
from fleetmem.surfaces.http import schemas_activity as sa
from fleetmem.surfaces.http.schemas import documented
from fleetmem.surfaces.http.tenancy import WorkspaceApp


def routes(app: App) -> APIRouter:
    api = APIRouter()

    @api.get("/api/v1/activity", **documented(sa.ActivityPage))
    def activity(
        here: WorkspaceApp, limit: int = Query(50), cursor: str | None = None
    ) -> dict[str, Any]:
        """Who changed what in this workspace's facts and files, newest first."""
        return activity_views.page_view(here.activity.page(limit=limit, cursor=cursor))

    return api
