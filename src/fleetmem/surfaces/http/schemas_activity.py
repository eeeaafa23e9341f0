"""OpenAPI models of the activity feed, mirroring :mod:`fleetmem.surfaces.activity_views`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fleetmem.surfaces.http.schemas import Strict


class ActivityEntry(Strict):
    source: Literal["fact", "vote", "file"] = Field(
        description="the fact journal, an agent's vote on a fact, or context file activity"
    )
    at: str
    actor_kind: Literal["human", "agent", "system"]
    actor: str
    run_id: str | None = Field(description="the run it happened in, when an agent did it")
    action: str = Field(
        description="create, propose, edit, forget, restore, pin, unpin, review:confirm, …,"
        " merge, scope, keep_both; vote:support or vote:contradict; save, append, restore,"
        " mode, proposed, applied or dismissed for a file"
    )
    fact_id: str | None
    fact_body: str | None = Field(description="the fact's words now; null once it is purged")
    file: str | None = Field(description="workspace/NAME, agent/AGENT/NAME or project/REPO/NAME")
    revision: int | None
    detail: str | None = Field(description="what moved: a status or scope (old→new), …")
    counted: bool | None = Field(description="a vote: whether it counts toward confidence")
    text: str = Field(description="the entry as a sentence")
    link: str | None = Field(description="the web page it is about")


class ActivityPage(Strict):
    entries: list[ActivityEntry]
    next_cursor: str | None = Field(description="pass as ?cursor= for older entries")
