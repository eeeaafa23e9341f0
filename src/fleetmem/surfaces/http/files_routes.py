"""API routes for context files, load meters, the whole-agent report and run contexts.

A file is named as in the CLI: ``/api/v1/files/{name}`` with ``?agent=A`` for an agent's file
or ``?repo=R`` for a repository's notebook (repository keys hold slashes, so they travel in the
query). A stale save answers 409 with the current revision and text, the caller's text and a
diff, so nothing typed is lost. Documented in docs/context-files.md.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi import Path as FastApiPath
from fastapi.responses import JSONResponse

from fleetmem.core import strictjson
from fleetmem.core.contextfiles import FileRef, unified_diff
from fleetmem.errors import InvalidInput, StaleRevision
from fleetmem.service.bootstrap import App
from fleetmem.service.files import Actor, ContextFileService
from fleetmem.surfaces import files_views as fv
from fleetmem.surfaces.agent_views import agent_view
from fleetmem.surfaces.http import schemas_files as sx
from fleetmem.surfaces.http.app import error_body
from fleetmem.surfaces.http.bodies import json_object, whole_number
from fleetmem.surfaces.http.schemas import documented
from fleetmem.surfaces.http.tenancy import Caller, Files, WorkspaceApp

_MAX_BODY = 256 * 1024  # a 64 KB file is at most 256 KB of JSON-escaped text


def routes(app: App) -> APIRouter:
    api = APIRouter()

    def ref(files: Files, name: str, agent: str | None, repo: str | None) -> FileRef:
        return files.ref(name, agent=agent, repo=repo)

    @api.get("/api/v1/files", **documented(sx.FilesOut, 404))  # type: ignore[arg-type]
    def list_files(
        files: Files, agent: str | None = None, repo: str | None = None
    ) -> dict[str, Any]:
        if agent is not None or repo is not None:
            views = files.list_files(agent=agent, repo=repo)
            return {"files": [fv.file_view(v, body=False) for v in views]}
        listing = files.listing()
        return {
            "workspace": [fv.file_view(v, body=False) for v in listing.workspace],
            "agents": list(listing.agents),
            "notebooks": list(listing.notebooks),
        }

    @api.get("/api/v1/files/{name}", **documented(sx.FileOut, 404))
    def get_file(
        files: Files,
        name: str,
        agent: str | None = None,
        repo: str | None = None,
        preview: bool = False,
    ) -> dict[str, Any]:
        target = ref(files, name, agent, repo)
        out = fv.file_view(files.get(target))
        if preview:
            out["preview"] = files.preview(target)
        return out

    @api.put(
        "/api/v1/files/{name}",
        **documented(sx.FileSummary, 404, 413, also={409: sx.StaleSave}, body=sx.SaveIn),
    )
    async def save_file(
        files: Files, name: str, request: Request, agent: str | None = None, repo: str | None = None
    ) -> JSONResponse:
        body = await _json_object(request, {"text", "base_revision", "user"})
        target = ref(files, name, agent, repo)
        text, base = body.get("text"), whole_number(body.get("base_revision"))
        if isinstance(base, bool) or not isinstance(base, int):
            raise InvalidInput("base_revision", base, "name the revision your text is based on")
        try:
            view = files.save(target, text, base_revision=base, actor=_user(body))
        except StaleRevision as exc:
            return _conflict(files, target, exc, text if isinstance(text, str) else "")
        return JSONResponse(fv.file_view(view, body=False))

    @api.put("/api/v1/files/{name}/mode", **documented(sx.FileSummary, 404, 409, body=sx.ModeIn))
    async def set_mode(files: Files, name: str, request: Request) -> dict[str, Any]:
        body = await _json_object(request, {"mode", "user"})
        mode = body.get("mode")
        if not isinstance(mode, str):
            raise InvalidInput("mode", mode, "must be every_run or on_demand")
        return fv.file_view(files.set_mode(name, mode, actor=_user(body)), body=False)

    @api.get("/api/v1/files/{name}/revisions", **documented(sx.RevisionList, 404))
    def history(
        files: Files, name: str, agent: str | None = None, repo: str | None = None
    ) -> dict[str, Any]:
        rows = files.history(ref(files, name, agent, repo))
        return {"revisions": [fv.revision_view(r) for r in rows]}

    @api.get("/api/v1/files/{name}/revisions/{revision}", **documented(sx.Revision, 404))
    def revision(
        files: Files,
        name: str,
        revision: Revision,
        agent: str | None = None,
        repo: str | None = None,
    ) -> dict[str, Any]:
        return fv.revision_view(files.revision(ref(files, name, agent, repo), revision), body=True)

    @api.post(
        "/api/v1/files/{name}/revisions/{revision}/restore",
        **documented(sx.FileSummary, 404, 409, body=sx.UserIn, body_required=False),
    )
    async def restore(
        files: Files,
        name: str,
        revision: Revision,
        request: Request,
        agent: str | None = None,
        repo: str | None = None,
    ) -> dict[str, Any]:
        body = await _json_object(request, {"user"})
        view = files.restore(ref(files, name, agent, repo), revision, actor=_user(body))
        return fv.file_view(view, body=False)

    @api.get("/api/v1/files/{name}/ask", **documented(sx.AskOut, 404))
    def ask(
        files: Files,
        name: str,
        agent: str | None = None,
        repo: str | None = None,
        to: str | None = None,
    ) -> dict[str, Any]:
        return fv.ask_view(files.ask(ref(files, name, agent, repo), to_agent=to))

    @api.get("/api/v1/context-files/activity", **documented(sx.ActivityList))
    def activity(files: Files, limit: int = 50) -> dict[str, Any]:
        return {"activity": [fv.activity_view(r) for r in files.activity(limit=limit)]}

    @api.get("/api/v1/runs/{run_id}/context-loads", **documented(sx.ContextLoads, 404))
    def loads(files: Files, run_id: str) -> dict[str, Any]:
        return {"loads": [fv.load_view(r) for r in files.run_loads(run_id)]}

    @api.get("/api/v1/agents/{agent}/context-report", **documented(sx.ContextReport, 404))
    def report(
        here: WorkspaceApp, caller: Caller, agent: str, repo: str | None = None
    ) -> dict[str, Any]:
        # What the agent carries comes from its own workspace (operator only; 404 otherwise).
        view = agent_view(here, agent, operator=caller.operator)
        return fv.report_view(view.files.report(agent, repo=repo))

    @api.get("/api/v1/agents/{agent}/context", **documented(sx.RunContextOut, 404))
    def context(files: Files, agent: str, repo: str | None = None) -> dict[str, Any]:
        return fv.context_view(files.assemble(agent, repo=repo))

    return api


#: A revision number in a path: 0 or more, and small enough for a SQLite integer.
Revision = Annotated[int, FastApiPath(ge=0, le=strictjson.INT_MAX)]


def _user(body: dict[str, Any]) -> Actor:
    # There are no API tokens yet (the daemon binds to loopback only): a caller names itself.
    user = body.get("user")
    if user is None:  # absent or null: the document allows both
        user = "api"
    if not isinstance(user, str):
        raise InvalidInput("user", type(user).__name__, "must be a string")
    return Actor("user", user)  # Actor checks the name: a label, never echoed


def _conflict(
    files: ContextFileService, target: FileRef, exc: StaleRevision, yours: str
) -> JSONResponse:
    current = files.get(target)
    body = error_body(exc)
    body["error"].update(
        {
            "current_revision": exc.current_revision,
            "base_revision": exc.base_revision,
            "changed_by": exc.changed_by,
        }
    )
    body["current"] = fv.file_view(current)
    body["yours"] = yours
    body["diff"] = unified_diff(
        current.body, yours, f"{target.name}@{current.revision}", f"{target.name} (yours)"
    )
    return JSONResponse(body, status_code=409)


async def _json_object(request: Request, known: set[str]) -> dict[str, Any]:
    return await json_object(request, max_bytes=_MAX_BODY, known=known)
