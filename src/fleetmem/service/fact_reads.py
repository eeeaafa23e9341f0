"""Reading facts: the list, counts, one fact, its history, search; and the upkeep sweep."""

from __future__ import annotations

import re

from fleetmem import metrics
from fleetmem.core.facts import (
    ACTIVE,
    FORGOTTEN,
    LIVE,
    REJECTED,
    RESTORE_WINDOW_S,
    SEARCH_LIMIT,
    STATUSES,
    SUSPECT,
    SYSTEM,
    check_scope,
)
from fleetmem.errors import InvalidInput, UnknownFact
from fleetmem.service.fact_base import BACKFILL_BATCH, FactServiceBase, log
from fleetmem.service.fact_results import (
    FactDetail,
    FactPage,
    History,
    HistoryEntry,
    SearchResult,
    SweepResult,
)
from fleetmem.service.memory_inputs import check_query
from fleetmem.service.records.facts import change_of, fact_of, provenance_of
from fleetmem.store.facts import FactFilter

#: How far back an exposure counts as a run possibly still in flight.
IN_FLIGHT_WINDOW_S = 24 * 3600.0
#: How often reads purge facts forgotten more than 30 days ago.
PURGE_EVERY_S = 3600.0


class FactReadsMixin(FactServiceBase):
    """The reading half of :class:`fleetmem.service.facts.FactService`."""

    _last_purge: float | None = None

    # ---- reading ------------------------------------------------------------------------
    def status(self, fact_id: str) -> str:
        """The fact's status alone (one read), for callers that need nothing else of it."""
        return self._require(fact_id).status

    def get(self, fact_id: str) -> FactDetail:
        row = self._require(fact_id)
        support = self.store.fact_tally(self.workspace, row.id, row.revision, "support", 0.0)
        against = self.store.fact_tally(self.workspace, row.id, row.revision, "contradict", 0.0)
        return FactDetail(
            fact=fact_of(row),
            confidence=self.confidence_of(row, (support, against)),
            support=support,
            contradict=against,
            provenance=tuple(provenance_of(p) for p in self.store.fact_provenance(row.id)),
            runs_in_flight=self.store.fact_in_flight(
                self.workspace, row.id, row.revision, self.now() - IN_FLIGHT_WINDOW_S
            ),
        )

    def list(
        self,
        *,
        status: str | None = None,
        scope: str | None = None,
        pinned: bool | None = None,
        limit: int = SEARCH_LIMIT,
        cursor: str | None = None,
    ) -> FactPage:
        """Facts newest first. ``status`` is a status, ``all``, or None for the live ones
        (everything but forgotten, rejected and merged facts). ``cursor`` continues a page."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 500:
            raise InvalidInput("limit", limit, "must be an integer between 1 and 500")
        self._maybe_purge()
        flt = FactFilter(
            statuses=_statuses(status),
            scopes=None if scope is None else (check_scope(scope),),
            pinned=pinned,
            limit=limit + 1,
            before=_cursor(cursor),
        )
        rows = self.store.fact_list(self.workspace, flt)
        more = len(rows) > limit
        rows = rows[:limit]
        nxt = f"{rows[-1].created_at!r}:{rows[-1].id}" if more and rows else None
        return FactPage(tuple(fact_of(r) for r in rows), nxt, self.counts())

    def counts(self) -> dict[str, int]:
        """Facts per status, plus ``live`` (what the list shows) and ``pinned``."""
        counts = self.store.fact_status_counts(self.workspace)
        out = {status: counts.get(status, 0) for status in STATUSES}
        out["live"] = sum(counts.get(status, 0) for status in LIVE)
        out["pinned"] = self.store.fact_pinned_count(self.workspace, [ACTIVE, SUSPECT])
        return out

    def search(
        self,
        query: str,
        *,
        status: str | None = None,
        scope: str | None = None,
        limit: int = SEARCH_LIMIT,
    ) -> SearchResult:
        """Facts by meaning (at most ``limit`` at or above the search threshold) fused with
        every case-insensitive substring match. Without an embedder: exact words only,
        ``degraded = "embeddings_unavailable"``, no error (seed 003 FR-5, FR-6, S16)."""
        query = check_query(query)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
            raise InvalidInput("limit", limit, "must be an integer between 1 and 50")
        self._maybe_purge()
        statuses = _statuses(status) or STATUSES  # None: every status ("all")
        scopes = None if scope is None else [check_scope(scope)]
        pending = self._pending()
        if pending and self.backfill(BACKFILL_BATCH):
            # Facts saved while no embedder answered are embedded before they are searched.
            pending = self._pending()
        hits, degraded = self._rank(query, statuses, scopes, limit=limit)
        if degraded is not None:
            pending = 0
        metrics.FACT_SEARCHES.labels(mode="words" if degraded else "meaning").inc()
        return SearchResult(query.strip(), tuple(hits), degraded, pending)

    def history(self, fact_id: str) -> History:
        """The activity journal of one fact, oldest first, with the words of each revision
        while the fact exists (a purged fact keeps its journal, not its words)."""
        entries = self.store.fact_journal(self.workspace, fact_id)
        if not entries:
            raise UnknownFact(fact_id)
        revisions = {r.revision: r for r in self.store.fact_revisions(fact_id)}

        def words(state: object) -> str | None:
            if not isinstance(state, dict):
                return None
            rev = revisions.get(int(state.get("revision", 0)))
            return rev.body if rev else None

        return History(
            fact_id,
            tuple(HistoryEntry(change_of(e), words(e.before), words(e.after)) for e in entries),
        )

    # ---- upkeep -------------------------------------------------------------------------
    def sweep(self, limit: int = 500) -> SweepResult:
        """Purge facts forgotten or rejected more than 30 days ago (their words, revisions,
        provenance and vectors; the journal keeps what happened) and embed facts saved while
        the embedder was down."""
        return SweepResult(purged=self._purge(limit), embedded=self.backfill(BACKFILL_BATCH))

    def purge_expired(self, batch: int = 500) -> int:
        """Purge every fact (any workspace) forgotten or rejected more than 30 days ago, in
        batches of ``batch``; the daemon's background jobs call this on their hourly pass.
        Returns how many were purged; each purge writes its journal row."""
        total = 0
        while True:
            purged = self._purge(batch)
            total += purged
            if purged < batch:
                return total

    def _purge(self, limit: int) -> int:
        self._last_purge = self.now()
        cutoff = self.now() - RESTORE_WINDOW_S
        purged = 0
        for row in self.store.fact_expired(cutoff, [FORGOTTEN, REJECTED], limit):
            with self._write():
                self.store.fact_purge(row.workspace, row.id)
                self.in_workspace(row.workspace)._journal("purge", SYSTEM, row, None)
            purged += 1
        if purged:
            log.info("facts.purged count=%d", purged)
        return purged

    def _maybe_purge(self) -> None:
        """The scheduled sweep, run lazily: at most once an hour per process, by the reads
        that show facts to people (so the CLI and the daemon both purge on time)."""
        last = self._last_purge
        if last is not None and 0 <= self.now() - last < PURGE_EVERY_S:
            return
        try:
            self._purge(500)
        except Exception as exc:  # housekeeping never fails a read
            log.warning("facts.purge_failed error=%s", type(exc).__name__)


def _statuses(status: str | None) -> tuple[str, ...] | None:
    if status is None:
        return tuple(sorted(LIVE))
    if status == "all":
        return None
    if status not in STATUSES:
        raise InvalidInput("status", status, "must be all or one of " + ", ".join(STATUSES))
    return (status,)


#: What a page's ``next_cursor`` looks like (creation time, then the last fact's id); the
#: OpenAPI document declares the same pattern.
CURSOR_PATTERN = r"[0-9]{1,12}(?:\.[0-9]{1,9})?:[A-Za-z0-9_]{1,64}"


def _cursor(cursor: str | None) -> tuple[float, str] | None:
    if cursor is None:
        return None
    if not re.fullmatch(CURSOR_PATTERN, cursor):
        return _bad_cursor(cursor)
    at, sep, fact_id = cursor.partition(":")
    try:
        when = float(at)
    except ValueError:
        return _bad_cursor(cursor)
    return (when, fact_id) if sep and fact_id else _bad_cursor(cursor)


def _bad_cursor(cursor: str) -> tuple[float, str]:
    raise InvalidInput("cursor", cursor, "is not a cursor this list returned")
