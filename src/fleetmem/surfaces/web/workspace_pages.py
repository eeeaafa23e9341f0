"""The workspace switcher and the Workspaces page: switch, create, rename and delete.

A session is bound to one workspace; the switcher in the header binds it to another, and every
page (and the pages' API calls) then shows that workspace's facts and files. Deleting is
confirmed like Forget all: the page says what goes and what stays, and the workspace's name
must be typed.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from fleetmem.core.workspaces import MAX_NAME_CHARS
from fleetmem.errors import Conflict, InvalidInput, UnknownWorkspace
from fleetmem.surfaces.web.auth import SESSION_COOKIE, Session
from fleetmem.surfaces.web.base import Web, WebRoute, back_to, call, redirect, with_query

#: What the page's notices say after a change (by the ``done`` query parameter).
DONE = {
    "created": "Workspace created.",
    "renamed": "Workspace renamed.",
    "deleted": "Workspace deleted, with everything in it.",
    "switched": "Switched workspace.",
}


def routes(web: Web) -> APIRouter:
    router = APIRouter(route_class=WebRoute, include_in_schema=False)
    workspaces = web.root.workspaces

    def page(
        request: Request,
        session: Session,
        *,
        error: str = "",
        field: str = "",
        typed: str = "",
        status_code: int = 200,
    ) -> Response:
        ctx: dict[str, Any] = {
            "workspaces": workspaces.list(),
            "current": session.workspace,
            "done": DONE.get(request.query_params.get("done", ""), ""),
            "error": error,
            "field": field,
            "typed": typed,
            "max_name": MAX_NAME_CHARS,
        }
        return web.page(
            request, session, "workspaces.html", "workspaces", ctx, status_code=status_code
        )

    @router.get("/memory/workspaces")
    def workspaces_page(request: Request) -> Response:
        return page(request, web.session(request))

    @router.post("/memory/workspace")
    async def switch(request: Request) -> Response:
        """The switcher: bind this session to another workspace, back to the page it was on
        (a page of one fact or file of the old workspace would be "not found": the list)."""
        _session, form = await web.form(request)
        chosen = await call(lambda: workspaces.get(form.get("workspace", "")))
        web.auth.switch(request.cookies.get(SESSION_COOKIE), chosen.id)
        return redirect(back_to(request, "/memory"))

    @router.post("/memory/workspaces")
    async def create(request: Request) -> Response:
        session, form = await web.form(request)
        name = form.get("name", "")
        try:
            made = await call(lambda: workspaces.create(name))
        except (InvalidInput, Conflict) as exc:
            return page(
                request,
                session,
                error=exc.summary,
                field="new",
                typed=name,
                status_code=400 if isinstance(exc, InvalidInput) else 409,
            )
        if form.get("switch"):
            web.auth.switch(request.cookies.get(SESSION_COOKIE), made.id)
            return redirect("/memory/facts")
        return redirect(with_query("/memory/workspaces", done="created"))

    @router.post("/memory/workspaces/{workspace_id}/rename")
    async def rename(workspace_id: str, request: Request) -> Response:
        session, form = await web.form(request)
        name = form.get("name", "")
        try:
            await call(lambda: workspaces.rename(workspace_id, name))
        except (InvalidInput, Conflict) as exc:
            return page(
                request,
                session,
                error=exc.summary,
                field=workspace_id,
                typed=name,
                status_code=400 if isinstance(exc, InvalidInput) else 409,
            )
        return redirect(with_query("/memory/workspaces", done="renamed"))

    @router.get("/memory/workspaces/{workspace_id}/delete")
    def delete_page(workspace_id: str, request: Request) -> Response:
        session = web.session(request)
        preview = workspaces.delete_preview(workspace_id)
        return web.page(
            request, session, "workspace_delete.html", "workspaces", _delete_context(preview)
        )

    @router.post("/memory/workspaces/{workspace_id}/delete")
    async def delete(workspace_id: str, request: Request) -> Response:
        session, form = await web.form(request)
        typed = form.get("confirm", "")
        try:
            await call(lambda: workspaces.delete(workspace_id, typed))
        except InvalidInput as exc:
            if exc.field != "confirm":
                raise
            preview = workspaces.delete_preview(workspace_id)
            ctx = {**_delete_context(preview), "error": exc.summary, "typed": typed}
            return web.page(
                request, session, "workspace_delete.html", "workspaces", ctx, status_code=400
            )
        except UnknownWorkspace:
            raise
        return redirect(with_query("/memory/workspaces", done="deleted"))

    return router


def _delete_context(preview: Any) -> dict[str, Any]:
    rows = preview.rows
    return {
        "target": preview.workspace,
        "facts": rows.get("facts", 0),
        "files": rows.get("context_files", 0),
        "proposals": rows.get("notes_proposals", 0),
        "total": sum(rows.values()),
        "tokens": preview.tokens,
        "deletes": preview.deletes,
        "untouched": preview.untouched,
        "error": "",
        "typed": "",
    }
