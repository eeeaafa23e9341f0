"""JSON shapes of what agents are served: the facts and recent-runs sections of a recall.

Shared by ``fleetmem recall --json`` (beside its episode fields) and documented in
docs/cli.md; fields are only ever added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fleetmem.core.briefing import BRIEFING_RULES, MAX_BRIEFING_BYTES
from fleetmem.errors import NotFound
from fleetmem.service.agent_memory import OperatorRecall
from fleetmem.service.records.runs import StoredRun
from fleetmem.surfaces.fact_views import fact_view
from fleetmem.surfaces.views import iso

if TYPE_CHECKING:
    from fleetmem.service.bootstrap import App


def recent_run_view(row: StoredRun) -> dict[str, Any]:
    return {
        "run_id": row.run_id,
        "agent": row.agent,
        "adapter": row.adapter,
        "repo": row.repo,
        "branch": row.branch,
        "outcome": row.outcome,
        "reason": row.reason,
        "ended_at": iso(row.ended_at),
        "duration_ms": round((row.ended_at - row.started_at) * 1000),
        "pull_request": row.pull_request,
    }


def recall_sections_view(found: OperatorRecall) -> dict[str, Any]:
    """``facts`` (each fact with its ``confidence``) and ``recent_runs`` of a recall."""
    facts = []
    for row, confidence in found.facts:
        item = fact_view(row)
        item["confidence"] = round(confidence, 4)
        facts.append(item)
    return {
        "repo": found.repo,
        "facts": facts,
        "recent_runs": [recent_run_view(r) for r in found.recent_runs],
    }


def recall_sections_text(d: dict[str, Any], section: str) -> list[str]:
    """The ``facts`` or ``recent_runs`` section of a recall, for people."""
    items = d.get(section) or []
    if section == "facts":
        lines = ["facts" if items else "facts: none matched"]
        for f in items:
            lines.append(
                f"{f['id']}  {f['status']:<8} confidence {f['confidence']:.2f}  {f['scope']}"
            )
            lines.append(f"  {f['body']}")
        return lines
    lines = ["runs that edited these paths" if items else "runs that edited these paths: none"]
    for r in items:
        lines.append(
            f"{r['run_id']}  {r['agent']}  {r['outcome']} ({r['reason']})  ended {r['ended_at']}"
            + (f"  {r['pull_request']}" if r["pull_request"] else "")
        )
    return lines


def agent_view(app: App, agent: str, *, operator: bool = True) -> App:
    """The view of the workspace ``agent``'s runs act in (``[agent.NAME] workspace``), for a
    preview of what it would receive. The operator previews an agent of any workspace; a
    caller bound to another workspace is told the agent is not found here (404, not 403)."""
    if app.agent_workspace(agent) == app.workspace:
        return app
    if not operator:
        raise NotFound("no such agent in this workspace", agent=agent)
    return app.for_agent(agent)


def briefing_preview(
    app: App,
    agent: str,
    *,
    repo: str | None = None,
    branch: str | None = None,
    operator: bool = True,
) -> dict[str, Any]:
    """The JSON of ``fleetmem briefing`` and ``GET /api/v1/agents/{agent}/briefing``: the
    document the agent would receive now, from its own workspace, and what went into it.
    Writes no exposure."""
    app = agent_view(app, agent, operator=operator)
    subject = app.briefings.preview_subject(agent, repo=repo, branch=branch)
    composed = app.briefings.briefing(subject)
    settings = app.settings.agent(agent)
    doc = composed.document
    shares = {rule.name: rule.share_percent for rule in BRIEFING_RULES}
    return {
        "agent": agent,
        "workspace": app.workspace,
        "repo": subject.repo,
        "branch": subject.branch,
        "run_id": subject.run_id,
        "text": composed.text,
        "empty": composed.empty,
        "chars": composed.chars,
        "bytes": composed.size_bytes,
        "max_chars": settings.briefing_max_chars,
        "max_bytes": MAX_BRIEFING_BYTES,
        "sections": [
            {
                "name": s.name,
                "shown": len(s.items),
                "omitted": s.omitted,
                "chars": sum(len(item.text) for item in s.items),
                "budget_chars": shares.get(s.name, 0) * settings.briefing_max_chars // 100,
            }
            for s in (doc.sections if doc is not None else ())
        ],
        "facts": list(composed.ids("facts")),
        "provider": app.memory.provider.name,
        "degraded": composed.degraded,
        "memory_briefing": bool(getattr(settings, "memory_briefing", False)),
    }
