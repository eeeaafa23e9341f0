"""What the memory service returns: ingest, recall and forget results, and run events.

Kept apart from :mod:`fleetmem.service.memory` so surfaces and other services can name these
types without the service's machinery; ``memory`` re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from fleetmem.core.episode import SessionRepo
from fleetmem.core.runrecord import RunRecord
from fleetmem.store.base import RunRow


@dataclass(frozen=True, slots=True)
class IngestResult:
    run_id: str
    episode_id: str | None
    status: str  # "recorded", "pending", "duplicate" or "skipped:<reason>"


@dataclass(frozen=True, slots=True)
class EpisodeHit:
    """One recalled episode item: text and score from the provider, the rest from our rows."""

    episode_id: str
    provider: str
    provider_id: str
    text: str
    score: float | None
    run_id: str
    agent: str
    adapter: str
    model: str | None
    repo: str
    branch: str | None
    outcome: str
    started_at: float
    trust_class: str
    untrusted: bool = True  # excerpts and summaries are agent-written text


@dataclass(frozen=True, slots=True)
class RecallResult:
    items: tuple[EpisodeHit, ...]
    provider: str
    degraded: str | None
    dropped: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ForgetResult:
    episode_id: str
    already_forgotten: bool
    pending: int
    forgotten: int


@dataclass(frozen=True, slots=True)
class RunForgotten:
    """A run taken out of the run graph, and what became of its episodes."""

    run_id: str
    episodes: tuple[ForgetResult, ...]


@dataclass(frozen=True, slots=True)
class RunStored:
    """Told to run listeners once a new run record is stored: the run, the record, and the
    repository each session ran in (sessions missing from ``repos`` ran outside any)."""

    run: RunRow
    record: RunRecord
    repos: Mapping[str, SessionRepo]
