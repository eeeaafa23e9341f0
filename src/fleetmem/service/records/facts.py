"""Facts as the services return them: a fact, where it came from, its changes, votes and
exposures, and the pairs a person kept apart. Built from the fact store's rows here, so the
rows' bookkeeping columns (the normalised text, hashes, idempotency keys) stay in the store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleetmem.service.records import project
from fleetmem.store.facts import (
    ExposureRow,
    FactRow,
    JournalRow,
    KeptPairRow,
    ProvenanceRow,
    VoteRow,
)


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact at its current revision. ``origin`` and ``author`` say who first wrote it;
    ``merged_into`` names the fact it was folded into, if any. Times are UNIX seconds."""

    id: str
    body: str
    kind: str
    scope: str
    status: str
    pinned: bool
    origin: str
    author: str
    run_id: str | None
    conversation: str | None
    source: str | None
    revision: int
    created_at: float
    updated_at: float
    confirmed_at: float | None
    forgotten_at: float | None
    merged_into: str | None


def fact_of(row: FactRow) -> Fact:
    return project(Fact, row)


@dataclass(frozen=True, slots=True)
class FactProvenance:
    """One origin of a fact: who wrote it, in which run or conversation, and, when it came
    with a merge, the fact it was merged from."""

    origin: str
    author: str
    run_id: str | None
    conversation: str | None
    merged_from: str | None
    at: float


def provenance_of(row: ProvenanceRow) -> FactProvenance:
    return project(FactProvenance, row)


@dataclass(frozen=True, slots=True)
class FactChange:
    """One entry of a fact's journal: who did what, when, and the state before and after
    (never a body: the words are read from the revisions)."""

    seq: int
    action: str
    actor_kind: str
    actor: str
    run_id: str | None
    at: float
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None


def change_of(row: JournalRow) -> FactChange:
    return project(FactChange, row)


@dataclass(frozen=True, slots=True)
class FactVote:
    """A run's vote on one revision of a fact. ``counted`` is False when the vote did not
    move the tally, and ``reason`` says why; ``note`` is the voter's own (redacted) words."""

    fact_id: str
    run_id: str
    agent: str
    repo: str | None
    stance: str
    revision: int
    counted: bool
    reason: str
    note: str | None
    at: float


def vote_of(row: VoteRow) -> FactVote:
    return project(FactVote, row)


@dataclass(frozen=True, slots=True)
class FactExposure:
    """One fact served to one run: which revision, through which surface, and as what
    (``served_as``: instruction or data)."""

    run_id: str
    fact_id: str
    revision: int
    surface: str
    served_as: str
    call_id: str | None
    agent: str
    repo: str | None
    at: float


def exposure_of(row: ExposureRow) -> FactExposure:
    return project(FactExposure, row)


@dataclass(frozen=True, slots=True)
class KeptApart:
    """Two facts a person chose to keep apart in Tidy up (``first_id`` < ``second_id``)."""

    first_id: str
    second_id: str
    at: float


def kept_apart_of(row: KeptPairRow) -> KeptApart:
    return project(KeptApart, row)
