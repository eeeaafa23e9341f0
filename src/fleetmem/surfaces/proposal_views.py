"""Proposed Notes changes (S17) as JSON-ready dicts and text, for the CLI and the web UI."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fleetmem.service.records.files import NotesProposal


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def proposal_view(row: NotesProposal) -> dict[str, Any]:
    return {
        "id": row.id,
        "agent": row.agent,
        "file": f"agent/{row.agent}/notes",
        "run_id": row.run_id,
        "mode": row.mode,
        "base_revision": row.base_revision,
        "status": row.status,
        "created_at": _iso(row.created_at),
        "decided_at": _iso(row.decided_at),
        "decided_by": row.decided_by,
        "applied_revision": row.applied_revision,
        "diff": row.diff,
        "proposed_text": row.proposed_text,
    }


def proposal_line(d: dict[str, Any]) -> str:
    """One proposal in a list: number, agent, state, base revision and run."""
    run = f" in run {d['run_id']}" if d["run_id"] else ""
    decided = ""
    if d["status"] != "pending":
        decided = f", {d['status']} by {d['decided_by']} {d['decided_at']}"
        if d["applied_revision"] is not None:
            decided += f" as revision {d['applied_revision']}"
    return (
        f"#{d['id']:<5} {d['agent']:<24} {d['status']:<9} {d['mode']} on revision"
        f" {d['base_revision']}, proposed {d['created_at']}{run}{decided}"
    )


def proposals_text(items: list[dict[str, Any]]) -> str:
    if not items:
        return "no proposals"
    out: list[str] = []
    for d in items:
        out.append(proposal_line(d))
        if d["status"] == "pending":
            out.append(d["diff"].rstrip("\n"))
            out.append(f"  apply with: fleetmem files apply {d['id']}")
    return "\n".join(out)
