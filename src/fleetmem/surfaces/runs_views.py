"""JSON shapes of runs, presence and attribution, shared by the CLI's ``--json`` and the API.

Documented in docs/runs.md; fields are only ever added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fleetmem.service.records.runs import LiveRunInfo
from fleetmem.service.runs import Caller, Collision, LiveRun, OpenedRun, RunDetail, RunSummary
from fleetmem.surfaces.views import iso


def opened_view(run: OpenedRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "token": run.token,
        "agent": run.agent,
        "repo": run.repo,
        "branch": run.branch,
        "workdir": run.workdir,
        "opened_at": iso(run.opened_at),
        "expire_after_s": run.expire_after_s,
    }


def live_row_view(row: LiveRunInfo, state: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "run_id": row.run_id,
        "agent": row.agent,
        "adapter": row.adapter,
        "repo": row.repo,
        "branch": row.branch,
        "workdir": row.workdir,
        "source": row.source,
        "opened_at": iso(row.opened_at),
        "last_seen_at": iso(row.last_seen_at),
        "closed_at": iso(row.closed_at),
        "close_reason": row.close_reason,
        "files": list(row.files),
    }
    if state is not None:
        out["state"] = state
    return out


def live_view(run: LiveRun) -> dict[str, Any]:
    return live_row_view(run.info, run.state)


def summary_view(s: RunSummary) -> dict[str, Any]:
    return {
        "run_id": s.run_id,
        "agent": s.agent,
        "adapter": s.adapter,
        "repo": s.repo,
        "branch": s.branch,
        "state": s.state,
        "started_at": iso(s.started_at),
        "ended_at": iso(s.ended_at),
        "outcome": s.outcome,
        "reason": s.reason,
        "duration_ms": s.duration_ms,
        "pull_request": s.pull_request,
        "files": s.files,
    }


def detail_view(d: RunDetail) -> dict[str, Any]:
    stored = d.stored
    return {
        "run_id": d.run_id,
        "live": None if d.live is None else live_view(d.live),
        "record": None
        if stored is None
        else {
            "agent": stored.agent,
            "adapter": stored.adapter,
            "model": stored.model,
            "trigger": stored.trigger,
            "repo": stored.repo,
            "branch": stored.branch,
            "started_at": iso(stored.started_at),
            "ended_at": iso(stored.ended_at),
            "duration_ms": round((stored.ended_at - stored.started_at) * 1000),
            "outcome": stored.outcome,
            "reason": stored.reason,
            "pull_request": stored.pull_request,
            "episode": stored.episode_status,
        },
        "sessions": [
            {
                "session_id": s.session_id,
                "parent_id": s.parent_id,
                "subagent": s.subagent,
                "cwd": s.cwd,
                "repo": s.repo,
                "branch": s.branch,
                "edits": [e.path for e in d.events if e.session_id == s.session_id and e.path],
            }
            for s in d.sessions
        ],
    }


def presence_view(rows: Sequence[LiveRunInfo]) -> dict[str, Any]:
    return {"runs": [live_row_view(r, "live") for r in rows]}


def collision_view(c: Collision) -> dict[str, Any]:
    return {"strength": c.strength, "overlap": list(c.overlap), "run": live_row_view(c.run)}


def caller_view(c: Caller) -> dict[str, Any]:
    return {
        "run_id": c.run_id,
        "agent": c.agent,
        "repo": c.repo,
        "branch": c.branch,
        "scopes": list(c.scopes),
        "state": c.state,
    }
