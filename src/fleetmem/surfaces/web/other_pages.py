"""Agents (the whole-agent context report and the briefing preview), episodes with what left
the daemon, runs, and the Status page (the doctor's rows)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from fleetmem.core.briefing import MAX_BRIEFING_BYTES
from fleetmem.core.budget import percent_of
from fleetmem.core.contextfiles import AGENT_FILES, count_skills
from fleetmem.core.facts import pinned_and_recalled
from fleetmem.core.scope import validate_agent_name
from fleetmem.errors import FleetmemError, InvalidInput
from fleetmem.service.doctor import run_checks
from fleetmem.surfaces import runs_views, views
from fleetmem.surfaces.agent_views import agent_view
from fleetmem.surfaces.cli.parsing import parse_since
from fleetmem.surfaces.files_views import host_view
from fleetmem.surfaces.web.base import Web, WebRoute, call, log, redirect

BRIEFING_SECTIONS = ("collisions", "recent_runs", "facts", "episodes")
#: Episodes a search on the episodes page shows.
RECALL_LIMIT = 20
AGENT_SLUGS = {spec.slug for spec in AGENT_FILES}


def segment_rows(report: Any, agent: str) -> list[dict[str, Any]]:
    rows = []
    for seg in report.context.assembly.segments:
        if seg.key in AGENT_SLUGS:
            link = f"/memory/agents/{agent}/files/{seg.key}"
        elif seg.key == "workspace_context":
            link = "/memory/files"
        elif seg.key == "notebook" and report.context.repo:
            link = f"/memory/notebook?repo={report.context.repo}"
        elif seg.key == "scope_prompts" and report.context.repo:
            link = f"/memory/scope-prompt?repo={report.context.repo}"
        else:
            link = None
        labels = [p.label for p in seg.parts if p.label]
        note = ""
        if seg.status == "off":
            note = "off for this agent"
        elif seg.status == "error":
            note = "could not be computed; left out"
        elif labels:
            note = ", ".join(labels)
        elif seg.key == "skills":
            bound = count_skills("\n".join(part.report.delivered for part in seg.parts))
            note = f"{bound:,} skill{'' if bound == 1 else 's'} bound" if bound else "none bound"
        elif seg.key == "scope_prompts" and not seg.tokens:
            note = "none set" if report.context.repo else "none set: no repository chosen"
        elif seg.key == "facts":
            pinned, recalled = pinned_and_recalled(
                "\n".join(part.report.delivered for part in seg.parts)
            )
            if pinned or recalled:
                note = f"{pinned:,} pinned + {recalled:,} recalled"
        text = f"{seg.title}: {seg.used:,} of {seg.budget:,} tokens used"
        if seg.skipped_tokens:
            text += f", {seg.skipped_tokens:,} tokens skipped"
        rows.append(
            {
                "key": seg.key,
                "title": seg.title,
                "budget": seg.budget,
                "used": seg.used,
                "tokens": seg.tokens,
                "percent": percent_of(seg.tokens, seg.budget) if seg.budget else None,
                "state": seg.state,
                "status": seg.status,
                "skipped": seg.skipped_tokens,
                "dropped": seg.dropped_by_backstop,
                "note": note,
                "link": link,
                "text": text,
            }
        )
    return rows


def routes(web: Web) -> APIRouter:
    router = APIRouter(route_class=WebRoute, include_in_schema=False)

    # ---- agents -------------------------------------------------------------------------
    @router.get("/memory/agents")
    def agents(request: Request, open: str = "") -> Response:
        session = web.session(request)
        if open:
            return redirect(f"/memory/agents/{validate_agent_name(open.strip())}")
        names = list(web.app.files.listing().agents)
        return web.page(request, session, "agents.html", "agents", {"agents": names})

    @router.get("/memory/agents/{agent}")
    def agent_report(agent: str, request: Request, repo: str | None = None) -> Response:
        session = web.session(request)
        ctx: dict[str, Any] = {"agent": agent, "repo": repo or "", "error": False}
        try:
            report = agent_view(web.app, agent).files.report(agent, repo=repo or None)
        except InvalidInput:
            raise
        except Exception as exc:  # the page stays usable; the report shows its error row
            log.warning("web.report_failed agent=%s error=%s", agent, type(exc).__name__)
            ctx["error"] = True
        else:
            ctx.update(
                rows=segment_rows(report, agent),
                total=report.context.assembly.total,
                backstop=report.context.assembly.backstop,
                empty=report.empty,
                message=report.message,
                last_run=report.last_run_id,
                agreed=report.last_run_agreed,
                hosts=[host_view(reach) for reach in report.hosts],
            )
        return web.page(request, session, "agent.html", f"agent:{agent}", ctx)

    @router.get("/memory/agents/{agent}/briefing")
    def briefing(agent: str, request: Request, repo: str | None = None) -> Response:
        session = web.session(request)
        # A signed-in session is the operator: the agent's own workspace's briefing.
        view = agent_view(web.app, agent)
        subject = view.briefings.preview_subject(agent, repo=repo or None)
        composed = view.briefings.preview(agent, repo=subject.repo, branch=subject.branch)
        provider = web.app.memory.provider_state()
        sections = []
        for name in BRIEFING_SECTIONS:
            sections.append(
                {
                    "name": name,
                    "shown": composed.shown.get(name, 0),
                    "dropped": composed.omitted.get(name, 0),
                }
            )
        ctx = {
            "agent": agent,
            "repo": subject.repo or "",
            "branch": subject.branch or "",
            "asked_repo": repo or "",
            "composed": composed,
            "sections": sections,
            "max_chars": web.app.settings.agent(agent).briefing_max_chars,
            "max_bytes": MAX_BRIEFING_BYTES,
            "provider": provider,
        }
        return web.page(request, session, "briefing.html", f"agent:{agent}:briefing", ctx)

    # ---- episodes -----------------------------------------------------------------------
    @router.get("/memory/episodes")
    def episodes(
        request: Request,
        agent: str | None = None,
        repo: str | None = None,
        since: str = "",
        q: str = "",
    ) -> Response:
        session = web.session(request)
        ctx: dict[str, Any] = {"agent": agent or "", "repo": repo or "", "since": since, "q": q}
        if q.strip():
            # Search by meaning: the operator's recall, in one repository or in every one
            # that holds an episode (scopes asked two at a time and merged by the service).
            found = web.app.agent_memory.operator_recall(
                q, repo=repo or None, every_repo=not repo, limit=RECALL_LIMIT
            )
            ctx["found"] = views.recall_view(found.episodes)
            for item in ctx["found"]["items"]:
                # What the run did, for the row: its excerpt, not the full rendering.
                try:
                    body = web.app.memory.get_episode(item["episode_id"]).episode or {}
                except FleetmemError:  # forgotten since the recall: the row keeps its id
                    body = {}
                item["excerpt"] = str(body.get("result_excerpt") or body.get("reason") or "")
            ctx["searched_in"] = repo or "every repository"
            return web.page(request, session, "episodes.html", "episodes", ctx)
        ctx["episodes"] = web.app.memory.list_episodes(
            agent=agent or None,
            repo=repo or None,
            since=parse_since(since, web.app.memory.now()) if since else None,
            limit=200,
        )
        return web.page(request, session, "episodes.html", "episodes", ctx)

    @router.get("/memory/episodes/{episode_id}")
    def episode(episode_id: str, request: Request) -> Response:
        session = web.session(request)
        row = web.app.memory.get_episode(episode_id)
        detail = views.episode_detail(row, web.app.memory.episode_index(episode_id))
        ctx = {"e": detail, "row": row, "forgot": request.query_params.get("forgot") == "1"}
        return web.page(request, session, "episode.html", "episodes", ctx)

    @router.post("/memory/episodes/{episode_id}/forget")
    async def forget_episode(episode_id: str, request: Request) -> Response:
        await web.form(request)
        await call(lambda: web.app.memory.forget(episode_id))
        return redirect(f"/memory/episodes/{episode_id}?forgot=1")

    # ---- runs ---------------------------------------------------------------------------
    @router.get("/memory/runs")
    def runs(request: Request, agent: str | None = None, repo: str | None = None) -> Response:
        session = web.session(request)
        rows = web.app.runs.list_runs(repo=repo or None, agent=agent or None, limit=200)
        ctx = {"runs": rows, "agent": agent or "", "repo": repo or "", "now": time.time()}
        return web.page(request, session, "runs.html", "runs", ctx)

    @router.get("/memory/runs/{run_id}")
    def run(run_id: str, request: Request) -> Response:
        session = web.session(request)
        detail = web.app.runs.show_run(run_id)
        ctx = {
            "run_id": run_id,
            "d": detail,
            "view": _run_view(detail),
            "offered": web.app.facts.offered_to_run(run_id),
            "loads": web.app.files.run_loads(run_id),
        }
        return web.page(request, session, "run.html", "runs", ctx)

    # ---- status -------------------------------------------------------------------------
    @router.get("/memory/status")
    def status(request: Request) -> Response:
        session = web.session(request)
        checks = [c.to_dict() for c in run_checks(web.app)]
        ctx = {
            "checks": checks,
            "status": web.app.memory.status(),
            "facts": web.app.facts.counts(),
            "web": web.auth.counts(),
        }
        return web.page(request, session, "status.html", "status", ctx)

    return router


def _run_view(detail: Any) -> dict[str, Any]:
    return runs_views.detail_view(detail)
