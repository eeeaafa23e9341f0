"""Memory ▸ Activity: who changed what, across facts, votes and context files (seed 003
FR-18, S3, S8), newest first, 50 at a time, each entry linking to what it is about."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from fleetmem.service.activity import ActivityEntry
from fleetmem.service.fact_base import local_user
from fleetmem.surfaces import activity_views as av
from fleetmem.surfaces.web.base import Web, WebRoute

PAGE_SIZE = 50


def entry_item(entry: ActivityEntry, me: str) -> dict[str, Any]:
    verb, obj = av.parts(entry)
    return {
        "source": entry.source,
        "at": entry.at,
        "who": av.who(entry, me),
        "actor_kind": entry.actor_kind,
        "verb": verb,
        "object": obj,
        "link": av.link(entry),
        "change": av.change(entry),
        "run_id": entry.run_id,
        # S8: what an agent wrote into a file is an agent edit, revertible from its history.
        "agent_edit": entry.source == "file"
        and entry.actor_kind == "agent"
        and entry.action in ("append", "save"),
        "text": av.sentence(entry, me),
    }


def routes(web: Web) -> APIRouter:
    router = APIRouter(route_class=WebRoute, include_in_schema=False)

    @router.get("/memory/activity")
    def activity(request: Request, cursor: str | None = None) -> Response:
        session = web.session(request)
        page = web.app.activity.page(limit=PAGE_SIZE, cursor=cursor or None)
        me = local_user().name
        ctx = {
            "entries": [entry_item(e, me) for e in page.entries],
            "next_cursor": page.next_cursor,
            "older": bool(cursor),
            "now": time.time(),
        }
        return web.page(request, session, "activity.html", "activity", ctx)

    return router
