"""Episodes as the memory service returns them: an episode with what left the daemon (the
episode object and its text as sent to providers), and where each provider indexed it.
Built from the store's rows here, so the surfaces never see the store's columns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleetmem.service.records import project
from fleetmem.store.base import EpisodeRow, IndexRow


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    """One run's episode. ``episode`` and ``text`` are None once it is forgotten (a
    tombstone keeps the rest); ``summary_outcome`` says how its summary was made."""

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


def episode_of(row: EpisodeRow) -> StoredEpisode:
    return project(StoredEpisode, row)


@dataclass(frozen=True, slots=True)
class EpisodeIndexEntry:
    """Where one provider holds an episode, under its own id, and how far recording or
    forgetting it has got (``state``: recorded, forget_pending, forgotten, forget_failed)."""

    provider: str
    provider_id: str
    scope: str
    state: str
    recorded_at: float
    forgotten_at: float | None


def index_entry_of(row: IndexRow) -> EpisodeIndexEntry:
    return project(EpisodeIndexEntry, row)
