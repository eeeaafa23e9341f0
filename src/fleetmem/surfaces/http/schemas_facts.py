"""OpenAPI models of facts and the review queue, mirroring :mod:`fleetmem.surfaces.fact_views`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from fleetmem.core.facts import KINDS, MAX_BODY_CHARS
from fleetmem.core.scope import AGENT_NAME_PATTERN, MAX_SCOPE_BYTES, REPO_KEY_PATTERN
from fleetmem.service.facts import IDEMPOTENCY_KEY_PATTERN
from fleetmem.surfaces.http.schemas import VISIBLE_TEXT, Open, Strict

#: workspace, project:<repo key> or agent:<name>, as core/scope.py parses them.
SCOPE_PATTERN = f"^(?:workspace|project:{REPO_KEY_PATTERN}|agent:{AGENT_NAME_PATTERN.pattern})$"


class Fact(Strict):
    id: str
    body: str
    kind: str
    scope: str = Field(description="workspace, project:<repo> or agent:<name>")
    status: str = Field(description="proposed, live, forgotten, rejected, ...")
    pinned: bool
    origin: str = Field(description="human, agent or tidy-up")
    author: str
    run_id: str | None
    conversation: str | None
    source: str | None
    revision: int
    created_at: str
    updated_at: str
    confirmed_at: str | None
    forgotten_at: str | None
    merged_into: str | None


class NearDuplicate(Strict):
    id: str
    similarity: float
    body: str


class Tally(Strict):
    runs: int
    agents: int
    repos: int


class Provenance(Strict):
    origin: str
    author: str
    run_id: str | None
    conversation: str | None
    merged_from: str | None
    at: str


class FactWritten(Strict):
    fact: Fact
    created: bool = Field(description="false: an existing fact (duplicate or same idempotency key)")
    near_duplicates: list[NearDuplicate]


class FactDetail(Fact):
    provenance: list[Provenance]
    confidence: float
    support: Tally
    contradict: Tally
    runs_in_flight: int


class FactPage(Strict):
    facts: list[Fact]
    next_cursor: str | None = Field(description="pass as ?cursor= for the next page")
    counts: dict[str, int]


class SearchHit(Strict):
    fact: Fact
    score: float
    similarity: float | None
    matched: list[str]


class FactSearch(Strict):
    query: str
    degraded: str | None = Field(description="set when search fell back to exact words")
    pending_vectors: int
    hits: list[SearchHit]


class FactEdited(Strict):
    fact: Fact
    changed: bool
    runs_in_flight: int


class FactForgotten(Strict):
    fact: Fact
    already_forgotten: bool
    undo_until: str
    restorable_until: str


class ForgetAllPreview(Strict):
    live: int
    untouched: str
    confirm: str = Field(description="the phrase to send as confirm")


class ForgetAllDone(Strict):
    forgotten: int
    untouched: str
    restorable_until: str


class HistoryEntry(Strict):
    seq: int
    action: str
    actor_kind: str
    actor: str
    run_id: str | None
    at: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    body_before: str | None
    body_after: str | None


class FactHistory(Strict):
    fact_id: str
    entries: list[HistoryEntry]


class Vote(Strict):
    run_id: str
    agent: str
    repo: str | None
    stance: str
    revision: int
    counted: bool
    reason: str
    note: str | None
    at: str


class FactVotes(Strict):
    confidence: float
    support: Tally
    contradict: Tally
    votes: list[Vote]


class Exposure(Strict):
    run_id: str
    fact_id: str
    revision: int
    surface: str
    served_as: str
    call_id: str | None
    agent: str
    repo: str | None
    at: str


class OfferedFacts(Strict):
    run_id: str
    offered: list[Exposure]


class MergePair(Strict):
    keep: Fact = Field(description="the fact a plain merge keeps (pinned, else the older)")
    fold: Fact = Field(description="the fact merged into it")
    similarity: float = Field(description="cosine of their vectors, or share of their words")
    matched: Literal["meaning", "words"]


class TidyUp(Strict):
    pairs: list[MergePair]
    total: int = Field(description="pairs found in all; pairs holds at most limit")
    degraded: str | None = Field(description="set when pairs were found by words alone")


class KeptPair(Strict):
    first: str
    second: str
    at: str


class KeepBothIn(Strict):
    first: str = Field(min_length=1, max_length=64)
    second: str = Field(min_length=1, max_length=64)


class FactCounts(Open):
    """Counts by status and list: live, proposed, pinned, forgotten, ..."""

    __pydantic_extra__: dict[str, int]


# ---- request bodies ------------------------------------------------------------------------
class FactIn(Strict):
    """Only a ``reference`` fact has a ``source``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                {"required": ["kind"], "properties": {"kind": {"const": "reference"}}},
                {
                    "properties": {
                        "kind": {"not": {"const": "reference"}},
                        "source": {"type": "null"},
                    }
                },
            ]
        },
    )

    body: str = Field(
        min_length=1,
        max_length=MAX_BODY_CHARS,
        pattern=VISIBLE_TEXT,
        description="the fact, one or two sentences (at most 500 characters)",
    )
    kind: str | None = Field(
        None,
        description="note (default), decision, lesson, constraint, failure, ...",
        json_schema_extra={"enum": [*KINDS, None]},
    )
    scope: str | None = Field(
        None,
        description="workspace (default), project:<repo>, agent:<n>",
        json_schema_extra={"pattern": SCOPE_PATTERN, "maxLength": MAX_SCOPE_BYTES},
    )
    pin: bool = False
    source: str | None = None
    idempotency_key: str | None = Field(
        None, pattern=f"^{IDEMPOTENCY_KEY_PATTERN}$", description="or the Idempotency-Key header"
    )


class FactEditIn(Strict):
    body: str = Field(min_length=1, max_length=MAX_BODY_CHARS, pattern=VISIBLE_TEXT)


class ScopeIn(Strict):
    scope: str = Field(
        description="workspace (every agent), project:<repo> (runs in it) or agent:<name>",
        json_schema_extra={"pattern": SCOPE_PATTERN, "maxLength": MAX_SCOPE_BYTES},
    )


class ReviewIn(Strict):
    """``merge`` needs ``into``; the other actions take none."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                {
                    "properties": {"action": {"const": "merge"}, "into": {"type": "string"}},
                    "required": ["into"],
                },
                {
                    "properties": {
                        "action": {"not": {"const": "merge"}},
                        "into": {"type": "null"},
                    }
                },
            ]
        },
    )

    action: Literal[
        "confirm",
        "evidence",
        "restrict",
        "reject",
        "stale",
        "merge",
        "accept",
        "discard",
        "evidence-only",
        "mark-stale",
    ] = Field(description="confirm, evidence, restrict, reject, stale or merge (and aliases)")
    into: str | None = Field(None, description="the fact to merge into (merge only)")


class ForgetAllIn(Strict):
    confirm: Literal["FORGET ALL"] = Field(
        description="the exact phrase GET /api/v1/facts/forget-all shows"
    )
