"""Context files, agent files and project notebooks: the editor with its load meter, Preview,
the concurrent-edit banner, "Ask an agent to update this", history, and the load modes
(seed 003 §6.5, §6.6, §6.8, §6.9; S6, S7, S11, S12).
"""

from __future__ import annotations

import getpass
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from fleetmem.core import labels
from fleetmem.core.contextfiles import AUTHORING_RULE, WORKSPACE_FILES, FileRef
from fleetmem.errors import CapReached, InvalidInput, NotFound, StaleRevision
from fleetmem.service.files import Actor, FileView
from fleetmem.surfaces.files_views import meter_text
from fleetmem.surfaces.proposal_views import proposal_view
from fleetmem.surfaces.web.base import Web, WebRoute, call, log, redirect, with_query
from fleetmem.surfaces.web.render import marked

STATE_LABELS = {
    "under": "under budget",
    "near": "near the budget",
    "over": "over budget",
    "on_demand": "read on demand",
}


def web_user() -> Actor:
    """The person at this machine (one local user until the API has per-user tokens)."""
    try:
        name = getpass.getuser() or "local"
    except (KeyError, OSError):
        name = "local"
    return Actor("user", labels.coerce("user", name) or "local")


@dataclass(frozen=True, slots=True)
class Target:
    """A file and the URLs of its editor."""

    ref: FileRef
    base: str  # the editor's path; actions are ``base + "/save"`` etc.
    query: str  # "" or "?repo=..."
    section: str

    def url(self, action: str = "", **params: object) -> str:
        path = self.base + (f"/{action}" if action else "")
        if self.query:
            params = {"repo": self.ref.owner, **params}
        return with_query(path, **params)


def workspace_target(web: Web, name: str) -> Target:
    ref = web.app.files.ref(name)
    return Target(ref, f"/memory/files/{ref.name}", "", f"file:{ref.name}")


def agent_target(web: Web, agent: str, name: str) -> Target:
    ref = web.app.files.ref(name, agent=agent)
    return Target(
        ref, f"/memory/agents/{ref.owner}/files/{ref.name}", "", f"agent:{ref.owner}:{ref.name}"
    )


def notebook_target(web: Web, repo: str | None) -> Target:
    return project_target(web, repo, "notebook")


def project_target(web: Web, repo: str | None, name: str) -> Target:
    """A repository's notebook (``/memory/notebook``) or scope prompt (``/memory/scope-prompt``)."""
    if not repo:
        raise InvalidInput("repo", repo, "name the repository, e.g. github.com/acme/api")
    ref = web.app.files.ref(name, repo=repo)
    base = PROJECT_PAGES[ref.name]
    return Target(ref, base, f"?repo={quote(ref.owner)}", f"{ref.name}:{ref.owner}")


#: Where each project file's editor lives.
PROJECT_PAGES = {"notebook": "/memory/notebook", "scope_prompt": "/memory/scope-prompt"}


def meter_context(view: FileView) -> dict[str, Any]:
    meter = view.meter
    report = meter.report
    skipped = report.skipped if report is not None else None
    return {
        "tokens": meter.tokens,
        "budget": meter.budget,
        "used": meter.used,
        "state": meter.state,
        "state_label": STATE_LABELS.get(meter.state, meter.state),
        "percent": meter.percent,
        "skipped_tokens": report.skipped_tokens if report is not None else 0,
        "skipped_chars": skipped.chars if skipped is not None else 0,
        "text": meter_text(view.ref.spec.title, meter),
        "shared_with": list(meter.shared_with),
    }


def editor_context(
    web: Web,
    target: Target,
    *,
    view_mode: str = "write",
    to_agent: str | None = None,
    ask_open: bool = False,
    text: str | None = None,
    base_revision: int | None = None,
    conflict: dict[str, Any] | None = None,
    kept: str | None = None,
    flash: str = "",
    error: str = "",
) -> dict[str, Any]:
    files = web.app.files
    view = files.get(target.ref)
    ask = files.ask(target.ref, to_agent=to_agent)
    ask_marked = marked(view.body, ask.meter.report)
    spec = target.ref.spec
    return {
        "target": target,
        "ref": target.ref,
        "title": target.ref.display,
        "caption": spec.caption,
        "kind": target.ref.kind,
        "mode": view.mode,
        "body": view.body if text is None else text,
        "saved_body": view.body,
        "revision": view.revision,
        "base_revision": view.revision if base_revision is None else base_revision,
        "updated_at": view.updated_at if view.revision else None,
        "updated_by": view.updated_by,
        "in_flight": view.in_flight,
        "history_count": len(files.history(target.ref)),
        "meter": meter_context(view),
        "marked": marked(view.body, view.meter.report),
        "authoring_rule": AUTHORING_RULE,
        "view_mode": view_mode,
        "ask": ask,
        "ask_open": ask_open,
        "ask_marked": ask_marked,
        "ask_sent": ask.attachment,
        "agents": list(files.listing().agents),
        "to_agent": to_agent or "",
        "conflict": conflict,
        "kept": kept,
        "flash": flash,
        "error": error,
        "now": time.time(),
        "proposals": _pending_proposals(web, target.ref),
        "hosts": host_rows(web, target.ref),
    }


def host_rows(web: Web, ref: FileRef) -> list[dict[str, Any]]:
    """Per host, how much of this agent file reaches the agent at the start (its part of
    the whole-agent report, :func:`fleetmem.service.context.host_reaches`); [] for files
    that are not one agent's (each agent's report says it for them)."""
    if ref.kind != "agent" or ref.owner is None:
        return []
    try:
        report = web.app.files.report(ref.owner)
    except Exception as exc:  # the editor stays usable without the per-host rows
        log.warning("web.host_rows_failed error=%s", type(exc).__name__)
        return []
    rows = []
    for reach in report.hosts:
        segment = reach.assembly.segment(ref.spec.slug)
        if not segment.withheld_tokens:
            reaches = "all of it that fits its budget"
        elif segment.pulled:
            reaches = f"none at the start: {segment.withheld_tokens:,} tokens to pull"
        else:
            reaches = f"its first lines: {segment.withheld_tokens:,} tokens to pull"
        rows.append({"host": reach.profile.key, "title": reach.profile.title, "reaches": reaches})
    return rows


def _pending_proposals(web: Web, ref: FileRef) -> list[dict[str, Any]]:
    """Changes the agent proposed to its own Notes, waiting for Apply (S17)."""
    if ref.kind != "agent" or ref.name != "notes":
        return []
    rows = web.app.files.list_proposals(agent=ref.owner, status="pending")
    return [proposal_view(row) for row in rows]


def routes(web: Web) -> APIRouter:
    router = APIRouter(route_class=WebRoute, include_in_schema=False)

    def show(request: Request, target: Target) -> Response:
        session = web.session(request)
        q = request.query_params
        ctx = editor_context(
            web,
            target,
            view_mode="preview" if q.get("view") == "preview" else "write",
            to_agent=q.get("to") or None,
            ask_open=q.get("ask") == "1",
            flash=_flash(q),
        )
        return web.page(request, session, "file.html", target.section, ctx)

    async def save(request: Request, target: Target) -> Response:
        session, form = await web.form(request)
        text = _lf(form.get("text", ""))
        try:
            base = int(form.get("base_revision", ""))
        except ValueError as exc:
            raise InvalidInput(
                "base_revision", form.get("base_revision"), "is not a number"
            ) from exc
        if form.get("op") == "reload":
            # Show the current version; the text the user typed stays below it.
            ctx = editor_context(web, target, kept=text)
            return web.page(request, session, "file.html", target.section, ctx)
        try:
            await call(
                lambda: web.app.files.save(target.ref, text, base_revision=base, actor=web_user())
            )
        except StaleRevision as exc:
            current = await call(lambda: web.app.files.get(target.ref))
            conflict = {
                "changed_by": exc.changed_by.partition(":")[2] or exc.changed_by,
                "changed_at": exc.changed_at,
                "current": current.body,
                "current_revision": current.revision,
                "yours": text,
            }
            ctx = editor_context(web, target, text=text, base_revision=base, conflict=conflict)
            return web.page(request, session, "file.html", target.section, ctx, status_code=409)
        except InvalidInput as exc:
            ctx = editor_context(web, target, text=text, base_revision=base, error=exc.summary)
            return web.page(request, session, "file.html", target.section, ctx, status_code=400)
        return redirect(target.url(saved=1))

    async def restore(request: Request, target: Target) -> Response:
        _, form = await web.form(request)
        try:
            revision = int(form.get("revision", ""))
        except ValueError as exc:
            raise InvalidInput("revision", form.get("revision"), "is not a number") from exc
        await call(lambda: web.app.files.restore(target.ref, revision, actor=web_user()))
        return redirect(target.url(saved=1))

    def history(request: Request, target: Target) -> Response:
        session = web.session(request)
        rows = web.app.files.history(target.ref)
        ctx = {"target": target, "title": target.ref.display, "revisions": rows}
        return web.page(request, session, "history.html", target.section, ctx)

    # ---- workspace files ----------------------------------------------------------------
    @router.get("/memory/files")
    def files_list(request: Request) -> Response:
        session = web.session(request)
        return web.page(request, session, "files.html", "files", list_context(web))

    @router.post("/memory/files/{name}/mode")
    async def set_mode(name: str, request: Request) -> Response:
        session, form = await web.form(request)
        mode = form.get("mode", "")
        try:
            await call(lambda: web.app.files.set_mode(name, mode, actor=web_user()))
        except CapReached as exc:
            ctx = list_context(web, error=exc.message, highlight=True, asked=name)
            return web.page(request, session, "files.html", "files", ctx, status_code=409)
        back = form.get("back") or "list"
        return redirect(f"/memory/files/{name}" if back == "file" else "/memory/files")

    @router.get("/memory/files/{name}")
    def workspace_file(name: str, request: Request) -> Response:
        return show(request, workspace_target(web, name))

    @router.post("/memory/files/{name}/save")
    async def workspace_save(name: str, request: Request) -> Response:
        return await save(request, workspace_target(web, name))

    @router.get("/memory/files/{name}/history")
    def workspace_history(name: str, request: Request) -> Response:
        return history(request, workspace_target(web, name))

    @router.post("/memory/files/{name}/restore")
    async def workspace_restore(name: str, request: Request) -> Response:
        return await restore(request, workspace_target(web, name))

    # ---- agent files --------------------------------------------------------------------
    @router.get("/memory/agents/{agent}/files/{name}")
    def agent_file(agent: str, name: str, request: Request) -> Response:
        return show(request, agent_target(web, agent, name))

    @router.post("/memory/agents/{agent}/files/{name}/save")
    async def agent_save(agent: str, name: str, request: Request) -> Response:
        return await save(request, agent_target(web, agent, name))

    @router.get("/memory/agents/{agent}/files/{name}/history")
    def agent_history(agent: str, name: str, request: Request) -> Response:
        return history(request, agent_target(web, agent, name))

    @router.post("/memory/agents/{agent}/files/{name}/restore")
    async def agent_restore(agent: str, name: str, request: Request) -> Response:
        return await restore(request, agent_target(web, agent, name))

    @router.post("/memory/agents/{agent}/files/notes/proposals/{number}/{op}")
    async def decide_proposal(agent: str, number: str, op: str, request: Request) -> Response:
        session, _form = await web.form(request)
        target = agent_target(web, agent, "notes")
        proposal = await call(lambda: web.app.files.get_proposal(number))
        if proposal.agent != target.ref.owner:
            raise NotFound(f"no proposal {number} for {target.ref.owner}", proposal=number)
        if op == "dismiss":
            await call(lambda: web.app.files.dismiss_proposal(proposal.id, actor=web_user()))
            return redirect(target.url(dismissed=proposal.id))
        if op != "apply":
            raise InvalidInput("op", op, "must be apply or dismiss")
        try:
            await call(lambda: web.app.files.apply_proposal(proposal.id, actor=web_user()))
        except StaleRevision as exc:
            error = (
                f"Not applied: the agent proposed this change on revision {exc.base_revision},"
                f" and Notes is now at revision {exc.current_revision} (changed by"
                f" {exc.changed_by.partition(':')[2] or exc.changed_by}). Nothing was written."
            )
            ctx = editor_context(web, target, error=error)
            return web.page(request, session, "file.html", target.section, ctx, status_code=409)
        return redirect(target.url(applied=proposal.id))

    # ---- project notebooks --------------------------------------------------------------
    @router.get("/memory/notebook")
    def notebook(request: Request, repo: str | None = None) -> Response:
        return show(request, notebook_target(web, repo))

    @router.post("/memory/notebook/save")
    async def notebook_save(request: Request, repo: str | None = None) -> Response:
        return await save(request, notebook_target(web, repo))

    @router.get("/memory/notebook/history")
    def notebook_history(request: Request, repo: str | None = None) -> Response:
        return history(request, notebook_target(web, repo))

    @router.post("/memory/notebook/restore")
    async def notebook_restore(request: Request, repo: str | None = None) -> Response:
        return await restore(request, notebook_target(web, repo))

    # ---- scope prompts (one per repository; people only) ------------------------------------
    @router.get("/memory/scope-prompt")
    def scope_prompt(request: Request, repo: str | None = None) -> Response:
        return show(request, project_target(web, repo, "scope_prompt"))

    @router.post("/memory/scope-prompt/save")
    async def scope_prompt_save(request: Request, repo: str | None = None) -> Response:
        return await save(request, project_target(web, repo, "scope_prompt"))

    @router.get("/memory/scope-prompt/history")
    def scope_prompt_history(request: Request, repo: str | None = None) -> Response:
        return history(request, project_target(web, repo, "scope_prompt"))

    @router.post("/memory/scope-prompt/restore")
    async def scope_prompt_restore(request: Request, repo: str | None = None) -> Response:
        return await restore(request, project_target(web, repo, "scope_prompt"))

    return router


def list_context(
    web: Web, *, error: str = "", highlight: bool = False, asked: str = ""
) -> dict[str, Any]:
    """The six workspace files with their modes and meters (and, after a refused switch, the
    three every-run files highlighted)."""
    views = web.app.files.list_files()
    rows = []
    for spec, view in zip(WORKSPACE_FILES, views, strict=True):
        rows.append(
            {
                "slug": spec.slug,
                "title": spec.title,
                "caption": spec.caption,
                "mode": view.mode,
                "meter": meter_context(view),
                "revision": view.revision,
                "highlight": highlight and view.mode == "every_run",
                "asked": spec.slug == asked,
            }
        )
    return {"files": rows, "error": error}


def _flash(query: Any) -> str:
    if query.get("saved"):
        return "Saved. Takes effect on the next run."
    if query.get("applied"):
        return f"Applied proposal {query.get('applied')}. Takes effect on the next run."
    if query.get("dismissed"):
        return f"Dismissed proposal {query.get('dismissed')}; Notes is unchanged."
    return ""


def _lf(text: str) -> str:
    """Browsers send a textarea's line breaks as CRLF; files keep LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")
