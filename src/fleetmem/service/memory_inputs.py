"""The memory service's argument checks and the rows it builds from a run record.

Recall arguments are checked here with the seed's bounds (every error names the field and the
value); ingest turns a validated record into the episode and session rows the store keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fleetmem.core.episode import Episode, SessionRepo, content_hash, render_text
from fleetmem.core.redact import find_secrets, redact, strip_invisible
from fleetmem.core.runrecord import RunRecord
from fleetmem.errors import FleetmemError, InvalidInput
from fleetmem.providers.base import (
    MAX_ITEM_ID,
    MAX_LIMIT,
    MAX_PATHS,
    MAX_QUERY_CHARS,
    MAX_RECORD_IDS,
)
from fleetmem.store.base import EpisodeRow, EventRow, SessionRow


def short_error(exc: BaseException) -> str:
    """An error for logs and job rows: class and message, redacted, bounded."""
    text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, FleetmemError) else str(exc)
    return str(redact(text))[:300]


def valid_record_ids(ids: object) -> list[str]:
    if not isinstance(ids, list) or not 1 <= len(ids) <= MAX_RECORD_IDS:
        raise ValueError("memory_record_episode must return 1 to 32 ids")
    if not all(isinstance(i, str) and 0 < len(i) <= MAX_ITEM_ID for i in ids):
        raise ValueError("memory_record_episode returned an id that is not a string of 1-128")
    # A provider's answer is outside input too: its ids are stored, so one that carries
    # invisible characters or a secret is refused (the episode is retried), never kept.
    if any(strip_invisible(i) != i or find_secrets(i) for i in ids):
        raise ValueError("memory_record_episode returned an id with invisible text or a secret")
    return list(dict.fromkeys(ids))


def check_query(query: object) -> str:
    """A search query, cleaned: one of blanks, controls and zero-width characters is empty
    (the OpenAPI document states the same rule for recall and fact search)."""
    if not isinstance(query, str):
        raise InvalidInput("query", query, "must be a string")
    # The length as sent: a limit that trimming could satisfy would differ from the document's.
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput("query", f"{len(query)} characters", "must be at most 512 characters")
    cleaned = strip_invisible(query).strip()
    if not cleaned:
        raise InvalidInput("query", query, "must not be empty")
    return cleaned


def check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput("limit", limit, "must be an integer between 1 and 20")
    return limit


def check_paths(paths: Sequence[str]) -> list[str]:
    items = list(paths)
    if len(items) > MAX_PATHS:
        raise InvalidInput("paths", f"{len(items)} paths", "at most 20 paths are allowed")
    out = []
    for p in items:
        if (
            not isinstance(p, str)
            or not p
            or len(p) > 1024
            or p.startswith("/")
            or ".." in p.split("/")
            or any(ord(c) < 32 for c in p)
        ):
            raise InvalidInput("paths", p, "must be repository-relative paths")
        out.append(p)
    return out


def episode_row(ep: Episode, record: RunRecord, now: float) -> EpisodeRow:
    text = render_text(ep)
    return EpisodeRow(
        id=ep.episode_id,
        run_id=record.run_id,
        agent=ep.agent,
        adapter=ep.adapter,
        model=ep.model,
        repo=ep.repo,
        branch=ep.branch,
        outcome=ep.outcome,
        scope=ep.scope,
        trust_class=ep.trust_class,
        started_at=record.started_at.timestamp(),
        recorded_at=now,
        forgotten_at=None,
        summary=None,
        summary_outcome=None,
        episode=ep.to_dict(),
        text=text,
        content_hash=content_hash(text),
    )


def session_rows(
    record: RunRecord, repos: Mapping[str, SessionRepo]
) -> tuple[list[SessionRow], list[EventRow]]:
    sessions: list[SessionRow] = []
    events: list[EventRow] = []
    for ord_, s in enumerate(record.sessions):
        where = repos.get(s.id)
        sessions.append(
            SessionRow(
                session_id=s.id,
                ord=ord_,
                parent_id=s.parent_id,
                subagent=s.is_subagent,
                cwd=s.cwd,  # cleaned at the ingress boundary, like every record string
                repo=where.key if where else None,
                branch=where.branch if where else None,
            )
        )
        seq = 0
        for e in s.edits:
            events.append(EventRow(s.id, seq, "edit", e.path, None, None))
            seq += 1
        for v in s.verifies:
            events.append(EventRow(s.id, seq, "verify", None, v.passed, v.error_class))
            seq += 1
    return sessions, events
