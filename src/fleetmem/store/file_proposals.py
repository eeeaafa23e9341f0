"""Proposed Notes changes awaiting a person (S17): the row and the store protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

PROPOSAL_STATUSES = ("pending", "applied", "dismissed")


@dataclass(frozen=True, slots=True)
class ProposalRow:
    """One change an agent proposed to its own Notes file; ``id`` is None until stored."""

    workspace: str
    agent: str
    run_id: str | None
    mode: str  # append or replace
    base_revision: int
    proposed_text: str
    diff: str
    created_at: float
    status: str = "pending"
    decided_at: float | None = None
    decided_by: str | None = None
    applied_revision: int | None = None
    id: int | None = None


class ProposalStore(Protocol):
    def add_proposal(self, row: ProposalRow) -> ProposalRow:
        """Store a new pending proposal; returns it with its id."""
        ...

    def get_proposal(self, workspace: str, proposal_id: int) -> ProposalRow | None: ...

    def list_proposals(
        self, workspace: str, *, agent: str | None, status: str | None, limit: int
    ) -> list[ProposalRow]:
        """Newest first."""
        ...

    def decide_proposal(
        self,
        workspace: str,
        proposal_id: int,
        *,
        status: str,
        decided_at: float,
        decided_by: str,
        applied_revision: int | None,
    ) -> bool:
        """Mark a pending proposal applied or dismissed; False when it was not pending."""
        ...
