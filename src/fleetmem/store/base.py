"""The Store protocol: everything the services need from persistence, and nothing more.

Rows are frozen dataclasses so no caller can mutate stored state by accident. Times are
UNIX seconds (float). The SQLite implementation is the embedded default; a PostgreSQL one
implements the same protocol and passes the same contract tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from fleetmem.store.status import StoreHealth

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from fleetmem.lazy_numpy import np

JobKind = Literal["record", "forget"]
JobState = Literal["pending", "done", "failed"]
IndexState = Literal["recorded", "forget_pending", "forgotten", "forget_failed"]


@dataclass(frozen=True, slots=True)
class RunRow:
    run_id: str
    agent: str
    adapter: str
    trace_id: str | None
    model: str | None
    trigger: str
    started_at: float
    ended_at: float
    outcome: str
    reason: str
    cost_usd: float | None
    cost_source: str
    spawned: bool
    pull_request: str | None
    repo: str | None
    branch: str | None
    episode_status: str


@dataclass(frozen=True, slots=True)
class SessionRow:
    session_id: str
    ord: int
    parent_id: str | None
    subagent: bool
    cwd: str
    repo: str | None
    branch: str | None


@dataclass(frozen=True, slots=True)
class EventRow:
    session_id: str
    seq: int
    type: str
    path: str | None
    passed: bool | None
    error_class: str | None


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    id: str
    run_id: str
    agent: str
    adapter: str
    model: str | None
    repo: str
    branch: str | None
    outcome: str
    scope: str
    trust_class: str
    started_at: float
    recorded_at: float
    forgotten_at: float | None
    summary: str | None
    summary_outcome: str | None
    episode: Mapping[str, Any] | None
    text: str | None
    content_hash: str | None


@dataclass(frozen=True, slots=True)
class IndexRow:
    provider: str
    provider_id: str
    episode_id: str
    scope: str
    recorded_at: float
    forgotten_at: float | None
    state: str


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    kind: str
    provider: str
    episode_id: str
    provider_id: str | None
    state: str
    attempts: int
    created_at: float
    next_attempt_at: float
    last_error: str | None


@dataclass(frozen=True, slots=True)
class ProviderHealth:
    """The provider's state as last probed, and since when it has been unreachable."""

    provider: str
    state: str
    down_since: float | None
    checked_at: float
    reason: str | None


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    """One briefing delivered or skipped, by the process ``origin`` (a random tag)."""

    at: float
    origin: str
    agent: str
    delivery: str
    outcome: str
    reason: str | None
    bytes: int | None


@dataclass(frozen=True, slots=True)
class EpisodeFilter:
    agent: str | None = None
    repo: str | None = None
    since: float | None = None
    include_forgotten: bool = False
    limit: int = 100


@dataclass(frozen=True, slots=True)
class Compaction:
    """What one upkeep pass did to a text index's segments."""

    table: str
    segments_before: int
    segments_after: int
    steps: int
    seconds: float
    #: False when the pass's time budget ran out first (the next pass continues the merge).
    complete: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "segments_before": self.segments_before,
            "segments_after": self.segments_after,
            "steps": self.steps,
            "seconds": self.seconds,
            "complete": self.complete,
        }


if TYPE_CHECKING:
    Vector = npt.NDArray[np.float32]
else:  # numpy is imported on first use (fleetmem.lazy_numpy); the alias is for annotations
    Vector = Any

#: One episode for :meth:`Store.builtin_put_many`: its id, text, summary, vector (or None),
#: the vector's content hash and model id, and its neighbours' context.
IndexEntry = tuple[str, str, str | None, Vector | None, str, str, str]


class Store(Protocol):
    """Persistence for runs, episodes, the provider index, the job queue and the built-in index."""

    #: ``sqlite`` or ``postgresql``.
    kind: str

    @property
    def location(self) -> str:
        """Where the store lives, for people (a path, or a URL without its password)."""
        ...

    def schema_version(self) -> int: ...
    def health(self) -> StoreHealth:
        """Schema, engine and anything wrong, for the doctor (never raises)."""
        ...

    def transaction(self) -> AbstractContextManager[object]:
        """Group several writes into one atomic transaction (nested calls join it)."""
        ...

    # runs
    def run_hash(self, run_id: str) -> str | None: ...
    def insert_run(
        self,
        run: RunRow,
        sessions: Sequence[SessionRow],
        events: Sequence[EventRow],
        record_json: str,
        record_hash: str,
        now: float,
    ) -> None: ...
    def get_run(self, run_id: str) -> RunRow | None: ...
    def latest_run(self, agent: str) -> RunRow | None: ...
    def linked_pull_request(self, repo: str, branch: str, before: float) -> str | None:
        """The pull request of the latest run on ``repo``/``branch`` started before ``before``."""
        ...

    def episodes_of_run(self, run_id: str) -> list[str]: ...
    def remove_run(self, run_id: str) -> bool: ...
    def run_status_counts(self) -> dict[str, int]: ...

    # episodes
    def insert_episode(self, row: EpisodeRow, *, record_job_provider: str | None) -> None: ...
    def update_episode_body(
        self,
        episode_id: str,
        *,
        summary: str | None,
        summary_outcome: str,
        episode: Mapping[str, Any],
        text: str,
        content_hash: str,
    ) -> None: ...
    def get_episode(self, episode_id: str) -> EpisodeRow | None: ...
    def get_episodes(
        self, episode_ids: Sequence[str], *, bodies: bool = True
    ) -> dict[str, EpisodeRow]:
        """The episodes of ``episode_ids`` that exist, by id. ``bodies`` False: with
        ``episode`` and ``text`` None, nothing decoded (for readers of the other columns)."""
        ...

    def list_episodes(self, flt: EpisodeFilter) -> list[EpisodeRow]: ...
    def episode_scopes(self) -> list[str]: ...
    def tombstone_episode(self, episode_id: str, now: float) -> list[IndexRow]: ...
    def episodes_started_before(self, cutoff: float, limit: int) -> list[str]: ...
    def episode_counts(self) -> dict[str, int]: ...

    # provider index
    def add_index_rows(
        self, provider: str, provider_ids: Sequence[str], episode_id: str, scope: str, now: float
    ) -> None: ...
    def index_rows(self, provider: str, provider_ids: Sequence[str]) -> dict[str, IndexRow]: ...
    def index_rows_for_episode(self, episode_id: str) -> list[IndexRow]: ...
    def set_index_state(self, provider: str, provider_id: str, state: IndexState) -> None: ...

    # jobs
    def enqueue(
        self, kind: JobKind, provider: str, episode_id: str, provider_id: str | None, now: float
    ) -> None: ...
    def due_jobs(self, now: float, limit: int, *, episode_id: str | None = None) -> list[Job]:
        """Due pending jobs (of one episode when given), oldest due first. A store shared by
        several daemons claims them: another daemon is not handed the same job until it is
        finished, retried, failed, or its claim has run out."""
        ...

    def finish_job(self, job_id: int) -> None: ...
    def retry_job(self, job_id: int, next_attempt_at: float, error: str) -> None: ...
    def fail_job(self, job_id: int, error: str) -> None: ...
    def job_counts(self) -> dict[tuple[str, str], int]: ...
    def oldest_pending(self, kind: JobKind) -> float | None: ...
    def note_degraded_recall(self, *, at: float, provider: str, reason: str) -> None: ...
    def degraded_recalls_since(self, since: float) -> list[tuple[str, int]]: ...
    def utility_claim(
        self, use: str, *, now: float, per_minute: int, day_start: float, daily: int
    ) -> str: ...
    def utility_counts(self, since: float) -> dict[str, int]: ...
    def note_briefing_delivery(self, row: DeliveryRow) -> None: ...
    def briefing_deliveries_after(
        self, last_id: int, *, exclude_origin: str, limit: int = 10_000
    ) -> tuple[int, list[DeliveryRow]]: ...
    def briefing_deliveries_top(self) -> int: ...
    def note_provider_health(
        self, provider: str, *, state: str, down: bool, at: float, reason: str | None
    ) -> ProviderHealth: ...

    # leases (store/leases.py): work one process of a fleet does at a time
    def claim_lease(
        self, name: str, holder: str, *, now: float, hold_s: float, every_s: float = 0.0
    ) -> bool:
        """Take lease ``name`` for ``hold_s`` seconds if no other holder has it (or its hold
        ran out) and, for periodic work, it was not done within the last ``every_s``."""
        ...

    def release_lease(
        self, name: str, holder: str, *, done_at: float | None = None, forget: bool = False
    ) -> None:
        """Let lease ``name`` go: ``done_at`` records the work as finished then (its period
        starts); ``forget`` deletes it (one-off work)."""
        ...

    # built-in provider index
    def builtin_put(
        self,
        episode_id: str,
        text: str,
        summary: str | None,
        vector: Vector | None,
        vector_hash: str,
        model_id: str,
        context: str = "",
    ) -> None: ...
    def builtin_put_many(self, entries: Sequence[IndexEntry]) -> None:
        """:meth:`builtin_put` for each entry, in one transaction (a store copy's rebuild)."""
        ...

    def builtin_delete(self, episode_id: str) -> bool: ...
    def builtin_has(self, episode_id: str) -> bool: ...
    def builtin_facets(self, episode_ids: Sequence[str]) -> dict[str, tuple[float, str]]: ...
    def builtin_agent_names(self, scopes: Sequence[str]) -> list[str]: ...
    def builtin_vectors_for(
        self, episode_ids: Sequence[str], model_id: str
    ) -> dict[str, Vector]: ...
    def builtin_cosines(
        self, query: Vector, episode_ids: Sequence[str], model_id: str
    ) -> dict[str, float]:
        """The cosine of unit ``query`` with the ``model_id`` vector of each of
        ``episode_ids`` that has one (at most 500 ids are looked at), as
        :meth:`search_vector` would score it."""
        ...

    def builtin_vector_count(self, scopes: Sequence[str], model_id: str) -> int:
        """How many live episodes of ``scopes`` have a ``model_id`` vector."""
        ...

    def builtin_vector_sample(
        self, scopes: Sequence[str], model_id: str, limit: int
    ) -> tuple[list[str], Vector]:
        """At most ``limit`` of those vectors, evenly spaced in the order they were stored
        (all of them when there are no more): their episode ids and one float32 matrix of
        them, a row each (one allocation, however many rows)."""
        ...

    def builtin_vectors_after(
        self, scopes: Sequence[str], model_id: str, after: int, limit: int
    ) -> tuple[list[str], Vector, int]:
        """The vectors of ``scopes`` stored after position ``after`` (0: from the first), at
        most ``limit``, in the order they were stored: their episode ids, one float32 matrix
        of them, and the position to ask after next (``after`` itself once there are no
        more). Reads a set of scopes' every vector a page at a time, in bounded memory."""
        ...

    def builtin_neighbours(
        self, row: EpisodeRow, window_s: float
    ) -> tuple[EpisodeRow | None, EpisodeRow | None]: ...
    def search_text(self, match: str, scopes: Sequence[str], limit: int) -> list[str]: ...
    def search_text_scored(
        self, match: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, float]]: ...
    def search_vector(
        self, query: Vector, model_id: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, float]]: ...
    def cached_embedding(self, content_hash: str, model_id: str) -> Vector | None: ...
    def cache_embedding(self, content_hash: str, model_id: str, vector: Vector) -> None: ...
    def builtin_missing_vectors(self, model_id: str, limit: int) -> list[EpisodeRow]: ...
    def builtin_vector_progress(self, model_id: str) -> tuple[int, int]:
        """(episodes in the built-in index, how many have a ``model_id`` vector)."""
        ...

    def builtin_segments(self) -> list[int]:
        """The built-in text index's segment sizes, largest first (one segment is fastest)."""
        ...

    def builtin_compact(self, budget_s: float) -> Compaction:
        """Merge the built-in text index's segments, in short steps, for at most ``budget_s``."""
        ...

    def close(self) -> None: ...
