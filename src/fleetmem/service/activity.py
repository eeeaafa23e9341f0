"""The activity feed: who changed what in a workspace's memory, and when (seed 003 FR-18, S3, S8).

One feed across three records the services already keep: the fact journal (every create,
edit, forget, restore, review, merge, pin and scope change, by people, agents and fleetmem
itself), agents' votes on facts, and context file activity (saves, restores, agents' appends,
load-mode switches, proposed changes). Reads of on-demand files are left out: the feed is
about changes. Entries come newest first, a page at a time; the cursor orders the three
records as one, so a page never repeats or skips an entry however their times interleave.

Every read is scoped to the service's workspace (``in_workspace`` gives another): an entry of
another workspace is never seen, like a fact or a file of another workspace.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from fleetmem.core.facts import DEFAULT_WORKSPACE, check_workspace
from fleetmem.errors import InvalidInput
from fleetmem.store.facts import FactRow, JournalRow, VoteRow
from fleetmem.store.files import ActivityRow

Source = Literal["fact", "vote", "file"]
#: Order of the three records among entries written at the same instant (higher first).
_RANK: dict[str, int] = {"fact": 2, "vote": 1, "file": 0}
#: Context file actions the feed shows (``read``, an agent reading a file, is not a change).
FILE_ACTIONS = ("save", "restore", "append", "mode", "proposed", "applied", "dismissed")
MAX_LIMIT = 200
#: What a page's ``next_cursor`` looks like; the OpenAPI document declares the same pattern.
CURSOR_PATTERN = r"[0-9]{1,12}(?:\.[0-9]{1,9})?:(?:fact|vote|file):[0-9]{1,18}"
_CURSOR = re.compile(CURSOR_PATTERN)
#: A sequence number above any row's: "every row written at that instant".
_ALL_AT = 2**62


class ActivityStore(Protocol):
    """What the feed reads (methods of the Store protocol)."""

    def fact_journal_page(
        self, workspace: str, before: tuple[float, int] | None, limit: int
    ) -> list[JournalRow]: ...
    def fact_votes_page(
        self, workspace: str, before: tuple[float, int] | None, limit: int
    ) -> list[VoteRow]: ...
    def file_activity_page(
        self,
        workspace: str,
        before: tuple[float, int] | None,
        limit: int,
        actions: Sequence[str],
    ) -> list[ActivityRow]: ...
    def fact_get_many(self, workspace: str, fact_ids: Sequence[str]) -> dict[str, FactRow]: ...


@dataclass(frozen=True, slots=True)
class ActivityEntry:
    """One change. ``action`` is the fact journal's (``create``, ``edit``, ``review:confirm``,
    ``scope``, …), ``vote:support`` / ``vote:contradict``, or the file activity's (``save``,
    ``append``, ``restore``, ``mode``, ``proposed``, ``applied``, ``dismissed``)."""

    source: Source
    seq: int
    at: float
    actor_kind: str  # human, agent or system (a file's "user" is a person: human)
    actor: str
    run_id: str | None
    action: str
    fact_id: str | None = None
    #: The fact's words now (None once it is purged: the journal outlives the words).
    fact_body: str | None = None
    file_ref: str | None = None
    revision: int | None = None
    #: What changed, in data: a status or scope move ("active→forgotten"), the fact merged
    #: into, a load mode, a file's detail ("restored revision 2", "proposal 3").
    detail: str | None = None
    #: A vote that does not count toward the fact's confidence (and why).
    uncounted: str | None = None

    @property
    def cursor(self) -> str:
        return f"{self.at!r}:{self.source}:{self.seq}"


@dataclass(frozen=True, slots=True)
class ActivityPage:
    entries: tuple[ActivityEntry, ...]
    next_cursor: str | None


class ActivityFeed:
    """The activity feed of one workspace."""

    def __init__(self, store: ActivityStore, workspace: str = DEFAULT_WORKSPACE) -> None:
        self.store = store
        self.workspace = check_workspace(workspace)

    def in_workspace(self, workspace: str) -> ActivityFeed:
        """The same feed for another workspace (the tenant every read is scoped to)."""
        return ActivityFeed(self.store, workspace)

    def page(self, *, limit: int = 50, cursor: str | None = None) -> ActivityPage:
        """Entries newest first, at most ``limit`` (1 to 200); ``cursor`` (a page's
        ``next_cursor``) continues after the last entry of that page."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput("limit", limit, f"must be an integer between 1 and {MAX_LIMIT}")
        after = _parse_cursor(cursor)
        ws = self.workspace
        fetch = limit + 1
        journal = self.store.fact_journal_page(ws, _bound("fact", after), fetch)
        votes = self.store.fact_votes_page(ws, _bound("vote", after), fetch)
        files = self.store.file_activity_page(ws, _bound("file", after), fetch, FILE_ACTIONS)
        merged = heapq.merge(
            [_from_journal(r) for r in journal],
            [_from_vote(r) for r in votes],
            [_from_file(r) for r in files],
            key=lambda e: (e.at, _RANK[e.source], e.seq),
            reverse=True,
        )
        entries = [entry for _, entry in zip(range(fetch), merged, strict=False)]
        more = len(entries) > limit
        entries = entries[:limit]
        ids = sorted({e.fact_id for e in entries if e.fact_id is not None})
        facts = self.store.fact_get_many(ws, ids) if ids else {}
        shown = tuple(_with_body(e, facts.get(e.fact_id or "")) for e in entries)
        return ActivityPage(shown, shown[-1].cursor if more and shown else None)


def _parse_cursor(cursor: str | None) -> tuple[float, str, int] | None:
    if cursor is None:
        return None
    if not isinstance(cursor, str) or not _CURSOR.fullmatch(cursor):
        raise InvalidInput("cursor", cursor, "is not a cursor this feed returned")
    at, source, seq = cursor.split(":")
    return float(at), source, int(seq)


def _bound(source: Source, after: tuple[float, str, int] | None) -> tuple[float, int] | None:
    """The (at, seq) bound of one record for the page after ``after``: the whole feed is
    ordered by time, then record (fact, vote, file), then sequence, newest first."""
    if after is None:
        return None
    at, last_source, seq = after
    if source == last_source:
        return (at, seq)
    # A record ordered after the last entry's at the same instant still has all of that
    # instant to come; one ordered before it has already been shown all of it.
    return (at, _ALL_AT) if _RANK[source] < _RANK[last_source] else (at, 0)


def _from_journal(row: JournalRow) -> ActivityEntry:
    return ActivityEntry(
        source="fact",
        seq=row.seq,
        at=row.at,
        actor_kind=row.actor_kind,
        actor=row.actor,
        run_id=row.run_id,
        action=row.action,
        fact_id=row.fact_id,
        revision=_revision(row.after) or _revision(row.before),
        detail=_journal_detail(row),
    )


def _revision(state: object) -> int | None:
    if isinstance(state, dict) and isinstance(state.get("revision"), int):
        return int(state["revision"])
    return None


def _journal_detail(row: JournalRow) -> str | None:
    before = row.before if isinstance(row.before, dict) else {}
    after = row.after if isinstance(row.after, dict) else {}
    if row.action == "scope":
        return f"{before.get('scope')}→{after.get('scope')}"
    if row.action == "merge":
        return str(after.get("merged_into") or "") or None
    if row.action == "keep_both":
        return str(after.get("kept_apart_from") or "") or None
    old, new = before.get("status"), after.get("status")
    if old and new and old != new:
        return f"{old}→{new}"
    return None


def _from_vote(row: VoteRow) -> ActivityEntry:
    return ActivityEntry(
        source="vote",
        seq=row.seq,
        at=row.at,
        actor_kind="agent",
        actor=row.agent,
        run_id=row.run_id,
        action=f"vote:{row.stance}",
        fact_id=row.fact_id,
        revision=row.revision,
        uncounted=None if row.counted else (row.reason or "not counted"),
    )


def _from_file(row: ActivityRow) -> ActivityEntry:
    return ActivityEntry(
        source="file",
        seq=row.id or 0,
        at=row.at,
        actor_kind="human" if row.actor_kind == "user" else row.actor_kind,
        actor=row.actor,
        run_id=row.run_id,
        action=row.action,
        file_ref=row.ref,
        revision=row.revision,
        detail=row.detail,
    )


def _with_body(entry: ActivityEntry, fact: FactRow | None) -> ActivityEntry:
    return entry if fact is None else replace(entry, fact_body=fact.body)
