"""Context files as the file service returns them: a retained revision, an entry of the
activity log, what a run loaded, and a proposed Notes change. Built from the file store's
rows here, so the surfaces never see the store's columns (a revision's key, for one)."""

from __future__ import annotations

from dataclasses import dataclass

from fleetmem.service.records import project
from fleetmem.store.file_proposals import ProposalRow
from fleetmem.store.files import ActivityRow, LoadRow, RevisionRow


@dataclass(frozen=True, slots=True)
class FileRevision:
    """One retained revision of a file: its words, who made it and how (``action``: created,
    save, restore, append; ``restored_from`` for a restore)."""

    revision: int
    body: str
    created_at: float
    author_kind: str
    author: str
    run_id: str | None
    action: str
    restored_from: int | None


def file_revision_of(row: RevisionRow) -> FileRevision:
    return project(FileRevision, row)


@dataclass(frozen=True, slots=True)
class FileActivity:
    """One entry of the files' activity log: who did what to which file (``ref``), at which
    revision; ``detail`` adds what the action needs (a proposal's number, a mode)."""

    at: float
    actor_kind: str
    actor: str
    run_id: str | None
    action: str
    ref: str
    revision: int | None
    detail: str | None


def file_activity_of(row: ActivityRow) -> FileActivity:
    return project(FileActivity, row)


@dataclass(frozen=True, slots=True)
class ContextLoad:
    """What one run loaded of one file (or provider segment, ``ref`` empty): the revision,
    the segment's budget, its size and how much of it went in (tokens)."""

    run_id: str
    agent: str
    repo: str | None
    segment: str
    ref: str
    revision: int | None
    budget: int
    tokens: int
    used: int
    loaded_at: float


def context_load_of(row: LoadRow) -> ContextLoad:
    return project(ContextLoad, row)


@dataclass(frozen=True, slots=True)
class NotesProposal:
    """A change an agent proposed to its own Notes, waiting for a person (``status``
    pending), or applied (as ``applied_revision``) or dismissed by ``decided_by``."""

    id: int
    agent: str
    run_id: str | None
    mode: str
    base_revision: int
    proposed_text: str
    diff: str
    created_at: float
    status: str
    decided_at: float | None
    decided_by: str | None
    applied_revision: int | None


def notes_proposal_of(row: ProposalRow) -> NotesProposal:
    # A proposal read back from the store always has its number.
    assert row.id is not None
    return NotesProposal(
        id=row.id,
        agent=row.agent,
        run_id=row.run_id,
        mode=row.mode,
        base_revision=row.base_revision,
        proposed_text=row.proposed_text,
        diff=row.diff,
        created_at=row.created_at,
        status=row.status,
        decided_at=row.decided_at,
        decided_by=row.decided_by,
        applied_revision=row.applied_revision,
    )
