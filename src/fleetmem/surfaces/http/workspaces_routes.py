"""API routes for workspaces: list, create, rename and delete (docs/workspaces.md).

Every caller acts in the one workspace its token or session is bound to. The operator (the
daemon's ``control.token``, or a signed-in web session) sees every workspace and alone may
create, rename and delete them; any other token sees only its own workspace, and another
workspace's id is not found (404), never forbidden. Deleting is confirmed by the workspace's
name, as Forget all is by FORGET ALL: ``GET .../delete`` says what would go.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from fleetmem.errors import InvalidInput, NotPermitted, UnknownWorkspace
from fleetmem.service.bootstrap import App
from fleetmem.service.workspaces import Workspace
from fleetmem.surfaces import workspace_views as wv
from fleetmem.surfaces.http import schemas_workspaces as sw
from fleetmem.surfaces.http.bodies import json_object
from fleetmem.surfaces.http.schemas import documented
from fleetmem.surfaces.http.tenancy import ApiCaller, Caller

_MAX_BODY = 16 * 1024


def routes(app: App) -> APIRouter:
    api = APIRouter()
    workspaces = app.workspaces

    def visible(caller: ApiCaller, workspace_id: str) -> Workspace:
        """The workspace, if this caller may see it (another's is unknown, not forbidden)."""
        if not caller.operator and workspace_id != caller.workspace:
            raise UnknownWorkspace(workspace_id[:64])
        return workspaces.get(workspace_id)

    @api.get("/api/v1/workspaces", **documented(sw.WorkspaceList))
    def list_workspaces(caller: Caller) -> dict[str, Any]:
        # Another workspace does not exist for a token bound to one: it sees its own.
        listed = workspaces.list() if caller.operator else [workspaces.get(caller.workspace)]
        return wv.list_view(listed, caller.workspace)

    @api.post(
        "/api/v1/workspaces",
        status_code=201,
        **documented(sw.Workspace, 409, status=201, body=sw.WorkspaceNameIn),
    )
    async def create(caller: Caller, request: Request) -> JSONResponse:
        _operator_only(caller, "create a workspace")
        body = await json_object(request, max_bytes=_MAX_BODY, known={"name"})
        _require(body, "name")
        made = await run_in_threadpool(workspaces.create, body["name"])
        return JSONResponse(wv.workspace_view(made, current=caller.workspace), status_code=201)

    @api.get("/api/v1/workspaces/{workspace_id}", **documented(sw.Workspace, 404))
    def show(caller: Caller, workspace_id: str) -> dict[str, Any]:
        return wv.workspace_view(visible(caller, workspace_id), current=caller.workspace)

    @api.patch(
        "/api/v1/workspaces/{workspace_id}",
        **documented(sw.Workspace, 404, 409, body=sw.WorkspaceNameIn),
    )
    async def rename(caller: Caller, workspace_id: str, request: Request) -> dict[str, Any]:
        visible(caller, workspace_id)
        _operator_only(caller, "rename a workspace")
        body = await json_object(request, max_bytes=_MAX_BODY, known={"name"})
        _require(body, "name")
        renamed = await run_in_threadpool(workspaces.rename, workspace_id, body["name"])
        return wv.workspace_view(renamed, current=caller.workspace)

    @api.get("/api/v1/workspaces/{workspace_id}/delete", **documented(sw.DeletePreview, 404))
    def delete_preview(caller: Caller, workspace_id: str) -> dict[str, Any]:
        """What deleting the workspace would remove, and the name to type to confirm."""
        visible(caller, workspace_id)
        _operator_only(caller, "delete a workspace")
        return wv.delete_preview_view(workspaces.delete_preview(workspace_id))

    @api.post(
        "/api/v1/workspaces/{workspace_id}/delete",
        **documented(sw.Deleted, 404, body=sw.DeleteIn),
    )
    async def delete(caller: Caller, workspace_id: str, request: Request) -> dict[str, Any]:
        visible(caller, workspace_id)
        _operator_only(caller, "delete a workspace")
        body = await json_object(request, max_bytes=_MAX_BODY, known={"confirm"})
        _require(body, "confirm")
        done = await run_in_threadpool(workspaces.delete, workspace_id, body["confirm"])
        return wv.deleted_view(done)

    return api


def _operator_only(caller: ApiCaller, what: str) -> None:
    if not caller.operator:
        raise NotPermitted(
            f"only the operator may {what}: use the daemon's control.token or a signed-in web"
            f" session; this token acts in workspace {caller.workspace} only"
        )


def _require(body: dict[str, Any], key: str) -> None:
    if body.get(key) is None:
        raise InvalidInput(key, None, "is required")
