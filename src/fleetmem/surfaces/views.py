"""JSON shapes shared by the CLI's ``--json`` output and the HTTP API.

These shapes are documented in docs/cli.md and are stable: fields are only ever added.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fleetmem.errors import NotFound
from fleetmem.service.memory import ForgetResult, IngestResult, RecallResult
from fleetmem.service.records.episodes import EpisodeIndexEntry, StoredEpisode


def iso(ts: float | None) -> str | None:
    """UNIX seconds as RFC 3339 UTC with millisecond precision."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def episode_brief(row: StoredEpisode) -> dict[str, Any]:
    return {
        "episode_id": row.id,
        "run_id": row.run_id,
        "agent": row.agent,
        "adapter": row.adapter,
        "model": row.model,
        "repo": row.repo,
        "branch": row.branch,
        "outcome": row.outcome,
        "scope": row.scope,
        "trust_class": row.trust_class,
        "started_at": iso(row.started_at),
        "recorded_at": iso(row.recorded_at),
        "forgotten_at": iso(row.forgotten_at),
        "summary": row.summary,
    }


def index_row(row: EpisodeIndexEntry) -> dict[str, Any]:
    return {
        "provider": row.provider,
        "provider_id": row.provider_id,
        "scope": row.scope,
        "state": row.state,
        "recorded_at": iso(row.recorded_at),
        "forgotten_at": iso(row.forgotten_at),
    }


def readable_episode(row: StoredEpisode) -> StoredEpisode:
    """``row`` unless it is forgotten: a forgotten episode is deleted as far as reads go, on
    the CLI as over HTTP (404 / exit 3); forgetting it again reports each index's state."""
    if row.forgotten_at is not None:
        raise NotFound(
            f"episode is forgotten; `fleetmem forget {row.id}` again shows how each"
            " index forgot it",
            episode=row.id,
        )
    return row


def episode_detail(row: StoredEpisode, index: list[EpisodeIndexEntry]) -> dict[str, Any]:
    """What left the daemon: the episode object and text exactly as sent to providers."""
    out = episode_brief(row)
    out["episode"] = row.episode
    out["text"] = row.text
    out["summary_outcome"] = row.summary_outcome
    out["index"] = [index_row(r) for r in index]
    return out


def recall_view(result: RecallResult) -> dict[str, Any]:
    return {
        "provider": result.provider,
        "degraded": result.degraded,
        "dropped": dict(result.dropped),
        "items": [
            {
                "kind": "episode",
                "episode_id": h.episode_id,
                "provider": h.provider,
                "provider_id": h.provider_id,
                "score": h.score,
                "run_id": h.run_id,
                "agent": h.agent,
                "adapter": h.adapter,
                "model": h.model,
                "repo": h.repo,
                "branch": h.branch,
                "outcome": h.outcome,
                "started_at": iso(h.started_at),
                "trust_class": h.trust_class,
                "untrusted": h.untrusted,
                "text": h.text,
            }
            for h in result.items
        ],
    }


def ingest_view(result: IngestResult) -> dict[str, Any]:
    return {"run_id": result.run_id, "episode_id": result.episode_id, "status": result.status}


def forget_view(result: ForgetResult) -> dict[str, Any]:
    return {
        "episode_id": result.episode_id,
        "already_forgotten": result.already_forgotten,
        "provider_ids_pending": result.pending,
        "provider_ids_forgotten": result.forgotten,
    }
