"""JSON shapes of context files, load meters and contexts, shared by the CLI and the HTTP API.

Documented in docs/context-files.md; fields are only ever added. The MCP tools of the recall
issue use :func:`read_view`, :func:`notes_update_view` and :func:`file_view` as they are.
"""

from __future__ import annotations

from typing import Any

from fleetmem.core.budget import LoadReport, SkippedRegion, skipped_caption
from fleetmem.core.contextfiles import AUTHORING_RULE
from fleetmem.service.context import AgentReport, HostReach, RunContext
from fleetmem.service.files import (
    AskPayload,
    ContextFileRead,
    FileView,
    Meter,
    NotesUpdate,
)
from fleetmem.service.records.files import ContextLoad, FileActivity, FileRevision
from fleetmem.surfaces.views import iso


def region_view(region: SkippedRegion | None) -> dict[str, int] | None:
    if region is None:
        return None
    return {
        "char_start": region.char_start,
        "char_end": region.char_end,
        "chars": region.chars,
        "line_start": region.line_start,
        "line_end": region.line_end,
    }


def meter_text(title: str, meter: Meter) -> str:
    """The meter as one sentence, for people and assistive technology."""
    if meter.budget is None:
        return f"{title}: read on demand, {meter.tokens:,} tokens, no load budget"
    text = f"{title}: {meter.used:,} of {meter.budget:,} tokens used"
    if meter.report is not None and meter.report.truncated:
        text += f", {meter.report.skipped_tokens:,} tokens skipped"
    return text


def meter_view(title: str, meter: Meter) -> dict[str, Any]:
    report = meter.report
    return {
        "tokens": meter.tokens,
        "budget": meter.budget,
        "used": meter.used,
        "percent": meter.percent,
        "state": meter.state,
        "skipped_tokens": 0 if report is None else report.skipped_tokens,
        "skipped": None if report is None else region_view(report.skipped),
        "shared_with": list(meter.shared_with),
        "text": meter_text(title, meter),
    }


def file_view(view: FileView, *, body: bool = True) -> dict[str, Any]:
    ref = view.ref
    out: dict[str, Any] = {
        "ref": str(ref),
        "kind": ref.kind,
        "name": ref.name,
        "title": ref.spec.title,
        "caption": ref.spec.caption,
        "owner": ref.owner or None,
        "revision": view.revision,
        "mode": view.mode,
        "updated_at": iso(view.updated_at) if view.revision else None,
        "updated_by": view.updated_by,
        "in_flight": view.in_flight,
        "meter": meter_view(ref.spec.title, view.meter),
        "authoring_rule": AUTHORING_RULE,
    }
    if body:
        out["body"] = view.body
    return out


def revision_view(row: FileRevision, *, body: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "revision": row.revision,
        "created_at": iso(row.created_at),
        "author": f"{row.author_kind}:{row.author}",
        "author_kind": row.author_kind,
        "run_id": row.run_id,
        "action": row.action,
        "restored_from": row.restored_from,
        "bytes": len(row.body.encode("utf-8")),
    }
    if body:
        out["body"] = row.body
    return out


def activity_view(row: FileActivity) -> dict[str, Any]:
    return {
        "at": iso(row.at),
        "actor": f"{row.actor_kind}:{row.actor}",
        "actor_kind": row.actor_kind,
        "run_id": row.run_id,
        "action": row.action,
        "ref": row.ref,
        "revision": row.revision,
        "detail": row.detail,
    }


def load_view(row: ContextLoad) -> dict[str, Any]:
    return {
        "run_id": row.run_id,
        "agent": row.agent,
        "repo": row.repo,
        "segment": row.segment,
        "ref": row.ref or None,
        "revision": row.revision,
        "budget": row.budget,
        "tokens": row.tokens,
        "used": row.used,
        "loaded_at": iso(row.loaded_at),
    }


def _report_view(report: LoadReport) -> dict[str, Any]:
    return {
        "budget": report.budget,
        "tokens": report.tokens,
        "used": report.used,
        "percent": report.percent,
        "state": report.state,
        "skipped_tokens": report.skipped_tokens,
        "skipped": region_view(report.skipped),
        "skipped_caption": skipped_caption(report) or None,
    }


def _segments(context: RunContext) -> list[dict[str, Any]]:
    out = []
    for segment in context.assembly.segments:
        out.append(
            {
                "key": segment.key,
                "title": segment.title,
                "budget": segment.budget,
                "tokens": segment.tokens,
                "used": segment.used,
                "percent": round(segment.tokens * 100.0 / segment.budget, 1),
                "state": segment.state,
                "status": segment.status,
                "skipped_tokens": segment.skipped_tokens,
                "dropped_by_backstop": segment.dropped_by_backstop,
                "parts": [
                    {
                        "label": part.label,
                        "ref": part.ref,
                        "revision": part.revision,
                        **_report_view(part.report),
                    }
                    for part in segment.parts
                ],
            }
        )
    return out


def context_view(context: RunContext) -> dict[str, Any]:
    assembly = context.assembly
    return {
        "agent": context.agent,
        "repo": context.repo,
        "run_id": context.run_id,
        "total": assembly.total,
        "backstop": assembly.backstop,
        "overhead": assembly.overhead,
        "segments": _segments(context),
        "truncations": [
            {
                "segment": t.segment,
                "ref": t.ref,
                "budget": t.budget,
                "original": t.original,
                "truncated": t.truncated,
            }
            for t in context.truncations
        ],
        "text": assembly.text,
    }


def report_view(report: AgentReport) -> dict[str, Any]:
    context = report.context
    return {
        "agent": context.agent,
        "repo": context.repo,
        "total": context.assembly.total,
        "backstop": context.assembly.backstop,
        "overhead": context.assembly.overhead,
        "empty": report.empty,
        "message": report.message,
        "last_run": {"run_id": report.last_run_id, "agreed": report.last_run_agreed},
        "segments": _segments(context),
        "hosts": [host_view(reach) for reach in report.hosts],
    }


def host_view(reach: HostReach) -> dict[str, Any]:
    """What one host is given at the start and what it must pull, to the token."""
    profile = reach.profile
    return {
        "host": profile.key,
        "title": profile.title,
        "mechanism": profile.mechanism,
        "limit": profile.limit,
        "unit": profile.unit if profile.limit is not None else None,
        "limit_text": profile.describe_limit(),
        "size": reach.size,
        "shares_with_briefing": profile.shares_with_briefing,
        "whole": not reach.withheld,
        "fits": reach.assembly.fits_host,
        "delivered_tokens": reach.delivered_tokens,
        "withheld_tokens": reach.withheld_tokens,
        "withheld": [
            {
                "key": s.key,
                "title": s.title,
                "tokens": s.withheld_tokens,
                "whole": s.pulled,
            }
            for s in reach.withheld
        ],
    }


def ask_view(payload: AskPayload) -> dict[str, Any]:
    return {
        "ref": str(payload.ref),
        "addressed_agent": payload.addressed_agent,
        "message": payload.message,
        "attachment": {
            "title": payload.attachment_title,
            "intro": payload.attachment_intro,
            "text": payload.attachment,
            "revision": payload.revision,
            "meter": meter_view(payload.ref.spec.title, payload.meter),
        },
    }


def read_view(read: ContextFileRead) -> dict[str, Any]:
    return {
        "name": read.name,
        "title": read.title,
        "mode": read.mode,
        "revision": read.revision,
        "tokens": read.tokens,
        "text": read.text,
    }


def notes_update_view(update: NotesUpdate) -> dict[str, Any]:
    return {
        "written": update.written,
        "revision": update.revision,
        "reason": update.reason,
        "message": update.message,
        "diff": update.diff,
        "proposed_text": update.proposed_text,
    }
