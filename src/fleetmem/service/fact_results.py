"""What the fact service returns: frozen results that every surface formats the same way.

They hold the service's own records (:mod:`fleetmem.service.records.facts`), never the
store's rows, so a column change stays inside the store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from fleetmem.core.facts import BlockItem, Tally
from fleetmem.service.records.facts import Fact, FactChange, FactProvenance, FactVote


@dataclass(frozen=True, slots=True)
class NearDuplicate:
    """A fact of the same scope that says nearly the same thing: a merge suggestion."""

    fact_id: str
    similarity: float
    body: str


@dataclass(frozen=True, slots=True)
class WriteResult:
    """A fact added by a person; ``created`` is False when an idempotency key matched."""

    fact: Fact
    created: bool
    near_duplicates: tuple[NearDuplicate, ...] = ()


ProposalOutcome = Literal["proposed", "duplicate", "dropped", "refused"]


@dataclass(frozen=True, slots=True)
class ProposalResult:
    """An agent's proposal. ``dropped`` (review backlog full) and ``refused`` (memory full) are
    expected outcomes, not errors: the run continues and logs ``log_line``."""

    outcome: ProposalOutcome
    fact: Fact | None
    reason: str | None = None
    log_line: str | None = None
    near_duplicates: tuple[NearDuplicate, ...] = ()


@dataclass(frozen=True, slots=True)
class EditResult:
    fact: Fact
    changed: bool
    runs_in_flight: int
    """Runs shown an earlier revision that have not finished: they keep the old wording."""


@dataclass(frozen=True, slots=True)
class ForgetResult:
    fact: Fact
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
    fact: Fact
    confidence: float
    support: Tally
    contradict: Tally
    provenance: tuple[FactProvenance, ...]
    runs_in_flight: int


@dataclass(frozen=True, slots=True)
class FactPage:
    items: tuple[Fact, ...]
    next_cursor: str | None
    counts: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class SearchHit:
    fact: Fact
    score: float
    """Relevance 0-1 for the result's bar (see :func:`fleetmem.core.facts.search_score`)."""
    similarity: float | None
    matched: tuple[str, ...]
    """Why it matched: ``meaning``, ``phrase`` (the query occurs in it) or ``words``."""
    strength: float
    """``score`` before the correction for hubs (service/fact_hubs.py), which only orders:
    what calibrated floors (a run's facts) compare."""


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

    fact: Fact
    score: float
    confidence: float
    served_as: str
    strength: float
    """The hit's :attr:`SearchHit.strength`."""


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
    vote: FactVote
    duplicate: bool
    confidence: float
    status_change: str | None = None
    """e.g. ``active->suspect`` or ``proposed->active`` when this vote moved the fact."""


@dataclass(frozen=True, slots=True)
class VoteSummary:
    votes: tuple[FactVote, ...]
    support: Tally
    contradict: Tally
    confidence: float


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    change: FactChange
    body_before: str | None = None
    body_after: str | None = None


@dataclass(frozen=True, slots=True)
class History:
    fact_id: str
    entries: tuple[HistoryEntry, ...]


@dataclass(frozen=True, slots=True)
class SweepResult:
    purged: int
    embedded: int
