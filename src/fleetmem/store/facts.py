"""The fact store protocol: rows and the persistence the fact service needs.

Every method that reads by fact id takes the workspace too, and a fact of another
workspace is simply absent. Times are UNIX seconds. A PostgreSQL store implements the same
methods with the same meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from fleetmem.core.facts import Tally
from fleetmem.store.base import Vector
from fleetmem.store.runs import LiveRunRow


@dataclass(frozen=True, slots=True)
class FactRow:
    id: str
    workspace: str
    body: str
    norm: str
    kind: str
    scope: str
    status: str
    pinned: bool
    pinned_at: float | None
    origin: str
    author: str
    run_id: str | None
    conversation: str | None
    source: str | None
    revision: int
    content_hash: str
    created_at: float
    updated_at: float
    confirmed_at: float | None
    forgotten_at: float | None
    forgotten_from: str | None
    merged_into: str | None
    idempotency_key: str | None


@dataclass(frozen=True, slots=True)
class RevisionRow:
    fact_id: str
    revision: int
    body: str
    actor_kind: str
    actor: str
    at: float


@dataclass(frozen=True, slots=True)
class ProvenanceRow:
    fact_id: str
    origin: str
    author: str
    run_id: str | None
    conversation: str | None
    merged_from: str | None
    at: float


@dataclass(frozen=True, slots=True)
class JournalRow:
    """One change to one fact: who, when, what, the state before and after (never a body)."""

    workspace: str
    fact_id: str
    action: str
    actor_kind: str
    actor: str
    run_id: str | None
    at: float
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ExposureRow:
    """One fact served to one run: the trace of what each run was offered."""

    workspace: str
    run_id: str
    fact_id: str
    revision: int
    surface: str
    served_as: str
    call_id: str | None
    agent: str
    repo: str | None
    at: float


@dataclass(frozen=True, slots=True)
class VoteRow:
    workspace: str
    fact_id: str
    revision: int
    run_id: str
    agent: str
    repo: str | None
    stance: str
    counted: bool
    reason: str
    at: float
    seq: int = 0
    #: The voter's own words on what it checked (redacted); ``reason`` says why it counted.
    note: str | None = None


@dataclass(frozen=True, slots=True)
class KeptPairRow:
    """Two facts a person chose to keep apart in Tidy up (``first_id`` < ``second_id``), at
    the revisions they compared."""

    workspace: str
    first_id: str
    first_revision: int
    second_id: str
    second_revision: int
    actor: str
    at: float


@dataclass(frozen=True, slots=True)
class SearchRow:
    """A candidate of a search: the few columns ranking needs (full rows are read only for
    the hits), and ``literal``: ``phrase``, ``words`` or None, as
    :func:`fleetmem.core.facts.literal_matcher` defines them."""

    id: str
    content_hash: str
    created_at: float
    literal: str | None
    words_found: int = 0
    """How many of the query's content words the fact contains."""


@dataclass(frozen=True, slots=True)
class VectorMatrix:
    """Every vector of one workspace under one model: row ``i`` belongs to ``ids[i]`` and was
    embedded from the body whose hash is ``hashes[i]``."""

    ids: tuple[str, ...]
    hashes: tuple[str, ...]
    matrix: Vector


@dataclass(frozen=True, slots=True)
class FactFilter:
    """``before`` is the (created_at, id) of the last row of the previous page;
    ``updated_after`` keeps the facts changed after that time."""

    statuses: tuple[str, ...] | None = None
    scopes: tuple[str, ...] | None = None
    pinned: bool | None = None
    limit: int = 50
    before: tuple[float, str] | None = None
    updated_after: float | None = None


class FactStore(Protocol):
    """Persistence of facts; the SQLite store implements it through ``FactsMixin``."""

    def transaction(self) -> AbstractContextManager[object]: ...
    # The live runs, for the revisions a run in flight keeps (service/fact_revisions.py).
    def get_live_run(self, run_id: str) -> LiveRunRow | None: ...
    def cached_embedding(self, content_hash: str, model_id: str) -> Vector | None: ...
    def cache_embedding(self, content_hash: str, model_id: str, vector: Vector) -> None: ...

    # facts
    def fact_insert(self, row: FactRow) -> None: ...
    def fact_update(self, row: FactRow) -> None: ...
    def fact_get(self, workspace: str, fact_id: str) -> FactRow | None: ...
    def fact_get_many(self, workspace: str, fact_ids: Sequence[str]) -> dict[str, FactRow]: ...
    def fact_list(self, workspace: str, flt: FactFilter) -> list[FactRow]: ...
    def fact_status_counts(self, workspace: str) -> dict[str, int]: ...
    def fact_pinned_count(self, workspace: str, statuses: Sequence[str]) -> int: ...
    def fact_find_norm(
        self, workspace: str, scope: str, norm: str, statuses: Sequence[str]
    ) -> FactRow | None: ...
    def fact_by_idempotency(self, workspace: str, key: str) -> FactRow | None: ...
    def fact_candidates(
        self, workspace: str, statuses: Sequence[str], scopes: Sequence[str] | None
    ) -> list[FactRow]: ...
    def fact_search_rows(
        self,
        workspace: str,
        statuses: Sequence[str],
        scopes: Sequence[str] | None,
        *,
        ids: Sequence[str],
        phrase: str,
        words: Sequence[str],
        ids_if_worded: Sequence[str] = (),
    ) -> list[SearchRow]: ...
    def fact_word_holders(
        self,
        workspace: str,
        statuses: Sequence[str],
        scopes: Sequence[str] | None,
        words: Sequence[str],
    ) -> dict[str, frozenset[str]]:
        """For each of ``words`` (normalized, as ``literal_terms`` gives them), the ids of the
        facts that contain it as a literal search matches words; one read of the index for
        all of them."""
        ...

    def fact_top_unvoted(
        self,
        workspace: str,
        statuses: Sequence[str],
        scopes: Sequence[str],
        *,
        exclude: Sequence[str],
        limit: int,
    ) -> list[FactRow]: ...
    def fact_pending_vectors(
        self, workspace: str, model_id: str, statuses: Sequence[str]
    ) -> int: ...
    def fact_expired(self, cutoff: float, statuses: Sequence[str], limit: int) -> list[FactRow]: ...
    def fact_purge(self, workspace: str, fact_id: str) -> None: ...

    # vectors (cached by content hash and model in the shared embeddings table)
    def fact_link_vector(self, fact_id: str, model_id: str, content_hash: str) -> None: ...
    def fact_matrix(self, workspace: str, model_id: str) -> VectorMatrix: ...
    def fact_missing_vectors(
        self, model_id: str, statuses: Sequence[str], limit: int
    ) -> list[FactRow]: ...
    def fact_vector_progress(self, model_id: str, statuses: Sequence[str]) -> tuple[int, int]:
        """(facts in ``statuses``, how many have a ``model_id`` vector of their body)."""
        ...

    # revisions, provenance, journal
    def fact_add_revision(self, row: RevisionRow) -> None: ...
    def fact_revisions(self, fact_id: str) -> list[RevisionRow]: ...
    def fact_add_provenance(self, rows: Sequence[ProvenanceRow]) -> None: ...
    def fact_provenance(self, fact_id: str) -> list[ProvenanceRow]: ...
    def fact_journal_add(self, row: JournalRow) -> None: ...
    def fact_journal(self, workspace: str, fact_id: str | None = None) -> list[JournalRow]: ...
    def fact_journal_page(
        self, workspace: str, before: tuple[float, int] | None, limit: int
    ) -> list[JournalRow]:
        """Newest first (``at``, then ``seq``, descending), strictly before ``before`` =
        (at, seq) when given."""
        ...

    # exposure and votes
    def fact_add_exposures(self, rows: Sequence[ExposureRow]) -> int: ...
    def fact_exposures(
        self, workspace: str, *, run_id: str | None = None, fact_id: str | None = None
    ) -> list[ExposureRow]: ...
    def fact_was_exposed(self, workspace: str, run_id: str, fact_id: str) -> bool: ...
    def fact_in_flight(self, workspace: str, fact_id: str, revision: int, since: float) -> int: ...
    def fact_vote_get(self, workspace: str, fact_id: str, run_id: str) -> VoteRow | None: ...
    def fact_vote_add(self, row: VoteRow) -> None: ...
    def fact_votes(self, workspace: str, fact_id: str) -> list[VoteRow]: ...
    def fact_votes_page(
        self, workspace: str, before: tuple[float, int] | None, limit: int
    ) -> list[VoteRow]:
        """Every vote of the workspace newest first (``at``, then ``seq``, descending),
        strictly before ``before`` = (at, seq) when given."""
        ...

    def fact_tally(
        self, workspace: str, fact_id: str, revision: int, stance: str, since: float
    ) -> Tally: ...
    def fact_tallies(self, workspace: str) -> dict[str, tuple[Tally, Tally]]: ...

    # rate limits
    def fact_keep_pair(self, row: KeptPairRow) -> None:
        """Remember a pair kept apart (replacing an earlier decision on the same pair)."""
        ...

    def fact_kept_pairs(self, workspace: str) -> list[KeptPairRow]: ...

    def fact_rate_hits(
        self, workspace: str, actor: str, bucket: str, since: float
    ) -> list[float]: ...
    def fact_rate_add(self, workspace: str, actor: str, bucket: str, at: float) -> None: ...
