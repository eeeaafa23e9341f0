"""What the fact service returns: frozen results that every surface formats the same way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from fleetmem.core.facts import BlockItem, Tally
from fleetmem.store.facts import FactRow, JournalRow, ProvenanceRow, RevisionRow, VoteRow


@dataclass(frozen=True, slots=True)
class NearDuplicate:
    """A fact of the same scope that says nearly the same thing: a merge suggestion."""

    fact_id: str
    similarity: float
    body: str


@dataclass(frozen=True, slots=True)
class WriteResult:
    """A fact added by a person; ``created`` is False when an idempotency key matched."""

    fact: FactRow
    created: bool
    near_duplicates: tuple[NearDuplicate, ...] = ()


ProposalOutcome = Literal["proposed", "duplicate", "dropped", "refused"]


@dataclass(frozen=True, slots=True)
class ProposalResult:
    """An agent's proposal. ``dropped`` (review backlog full) and ``refused`` (memory full) are
    expected outcomes, not errors: the run continues and logs ``log_line``."""

    outcome: ProposalOutcome
    fact: FactRow | None
    reason: str | None = None
    log_line: str | None = None
    near_duplicates: tuple[NearDuplicate, ...] = ()


@dataclass(frozen=True, slots=True)
class EditResult:
    fact: FactRow
    changed: bool
    runs_in_flight: int
    """Runs shown an earlier revision that have not finished: they keep the old wording."""


@dataclass(frozen=True, slots=True)
class ForgetResult:
    fact: FactRow
    already_forgotten: bool
    undo_until: float
    restorable_until: float


@dataclass(frozen=True, slots=True)
class ForgetAllResult:
    forgotten: int
    untouched: str
    restorable_until: float


@dataclass(frozen=True, slots=True)
class FactDetail:
    fact: FactRow
    confidence: float
    support: Tally
    contradict: Tally
    provenance: tuple[ProvenanceRow, ...]
    runs_in_flight: int


@dataclass(frozen=True, slots=True)
class FactPage:
    items: tuple[FactRow, ...]
    next_cursor: str | None
    counts: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class SearchHit:
    fact: FactRow
    score: float
    """Relevance 0-1 for the result's bar (see :func:`fleetmem.core.facts.search_score`)."""
    similarity: float | None
    matched: tuple[str, ...]
    """Why it matched: ``meaning``, ``phrase`` (the query occurs in it) or ``words``."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    hits: tuple[SearchHit, ...]
    degraded: str | None
    """``embeddings_unavailable`` when matching fell back to exact words."""
    pending_vectors: int = 0


@dataclass(frozen=True, slots=True)
class RecalledFact:
    """A fact served to a run in a recall answer; ``served_as`` is instruction or data."""

    fact: FactRow
    score: float
    confidence: float
    served_as: str


@dataclass(frozen=True, slots=True)
class FactRecall:
    items: tuple[RecalledFact, ...]
    degraded: str | None
    withheld: int = 0


BlockStatus = Literal["ok", "withheld", "timed_out", "failed"]


@dataclass(frozen=True, slots=True)
class FactsBlock:
    """The facts section of a run's context. ``text`` is empty unless ``status`` is ok; a
    caller includes ``text`` as is (inside its fence). ``None`` is returned instead of a block
    when the agent's recall is off."""

    status: BlockStatus
    items: tuple[BlockItem, ...]
    text: str
    tokens: int
    pinned: int
    recalled: int
    dropped: int
    nothing_matched: bool
    degraded: str | None = None
    withheld: int = 0


@dataclass(frozen=True, slots=True)
class VoteResult:
    vote: VoteRow
    duplicate: bool
    confidence: float
    status_change: str | None = None
    """e.g. ``active->suspect`` or ``proposed->active`` when this vote moved the fact."""


@dataclass(frozen=True, slots=True)
class VoteSummary:
    votes: tuple[VoteRow, ...]
    support: Tally
    contradict: Tally
    confidence: float


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    change: JournalRow
    body_before: str | None = None
    body_after: str | None = None


@dataclass(frozen=True, slots=True)
class History:
    fact_id: str
    entries: tuple[HistoryEntry, ...]
    revisions: tuple[RevisionRow, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class SweepResult:
    purged: int
    embedded: int
