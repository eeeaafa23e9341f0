"""Facts rows in SQLite: the column lists and the mapping between rows and store records,
shared by the reading half (:mod:`fleetmem.store.sqlite.facts`) and the writing half
(:mod:`fleetmem.store.sqlite.fact_writes`)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from fleetmem.store.facts import FactRow, VoteRow

FACT_COLUMNS = (
    "id, workspace, body, norm, kind, scope, status, pinned, pinned_at, origin, author, run_id,"
    " conversation, source, revision, content_hash, created_at, updated_at, confirmed_at,"
    " forgotten_at, forgotten_from, merged_into, idempotency_key"
)
N_FACT_COLUMNS = 23
#: Ids per ``IN (...)`` list, well under SQLite's bound on host parameters.
CHUNK = 500


def marks(n: int) -> str:
    """``n`` SQL placeholders, comma-separated."""
    return ",".join("?" * n)


def fact_row(row: sqlite3.Row) -> FactRow:
    """A ``facts`` row (selected with :data:`FACT_COLUMNS`) as a record."""
    return FactRow(
        id=row["id"],
        workspace=row["workspace"],
        body=row["body"],
        norm=row["norm"],
        kind=row["kind"],
        scope=row["scope"],
        status=row["status"],
        pinned=bool(row["pinned"]),
        pinned_at=row["pinned_at"],
        origin=row["origin"],
        author=row["author"],
        run_id=row["run_id"],
        conversation=row["conversation"],
        source=row["source"],
        revision=int(row["revision"]),
        content_hash=row["content_hash"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        confirmed_at=row["confirmed_at"],
        forgotten_at=row["forgotten_at"],
        forgotten_from=row["forgotten_from"],
        merged_into=row["merged_into"],
        idempotency_key=row["idempotency_key"],
    )


def fact_values(f: FactRow) -> tuple[Any, ...]:
    """A record's values in :data:`FACT_COLUMNS` order."""
    return (
        f.id,
        f.workspace,
        f.body,
        f.norm,
        f.kind,
        f.scope,
        f.status,
        int(f.pinned),
        f.pinned_at,
        f.origin,
        f.author,
        f.run_id,
        f.conversation,
        f.source,
        f.revision,
        f.content_hash,
        f.created_at,
        f.updated_at,
        f.confirmed_at,
        f.forgotten_at,
        f.forgotten_from,
        f.merged_into,
        f.idempotency_key,
    )


def to_json(value: object) -> str | None:
    """A journal snapshot as stored (stable key order)."""
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def vote_row(r: sqlite3.Row) -> VoteRow:
    """A ``fact_votes`` row as a record."""
    return VoteRow(
        workspace=r["workspace"],
        fact_id=r["fact_id"],
        revision=int(r["revision"]),
        run_id=r["run_id"],
        agent=r["agent"],
        repo=r["repo"],
        stance=r["stance"],
        counted=bool(r["counted"]),
        reason=r["reason"],
        at=r["at"],
        seq=int(r["seq"]),
        note=r["note"],
    )
