"""Proposed Notes changes: kept for a person to apply or dismiss (S17, FR-36).

An agent without the ``edit_agent_files`` permission cannot write its Notes file; what
``update_notes`` would have written is stored as a *pending proposal*, attributed to the agent
and its run, with the revision it was computed from. Nothing reaches the file until a person
applies it: that is a save of the proposed text, by that person, based on the proposal's
revision, so a file changed in the meantime refuses it with the current revision, like any
stale save. A person may dismiss a proposal instead. Decided proposals are kept, with who
decided and when.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol, cast

from fleetmem.core.contextfiles import FileRef
from fleetmem.core.scope import validate_agent_name
from fleetmem.errors import Conflict, InvalidInput, NotFound
from fleetmem.service.file_types import Actor, FileView
from fleetmem.service.records.files import NotesProposal, notes_proposal_of
from fleetmem.store.file_proposals import PROPOSAL_STATUSES, ProposalRow, ProposalStore
from fleetmem.store.files import FileStore

MAX_LISTED: Final = 200


class ProposalHost(Protocol):
    """What the proposals need from the service that hosts them (``ContextFileService``).

    The mixin's methods take ``self`` as this protocol, so mypy checks at every call that the
    host really has these members, with these types.
    """

    workspace: str
    store: FileStore
    proposals: ProposalStore
    _clock: Callable[[], float]

    def ref(self, name: str, *, agent: str | None = None, repo: str | None = None) -> FileRef:
        """The file ``name`` of the workspace, of ``agent``, or of repository ``repo``."""
        ...

    def _write(
        self, ref: FileRef, body: str, base_revision: int, actor: Actor, action: str
    ) -> FileView:
        """Write ``body`` as a new revision based on ``base_revision``; refuse a stale base."""
        ...

    def _activity(
        self, actor: Actor, action: str, ref: FileRef, revision: int | None, detail: str | None
    ) -> None:
        """Record who did what to which file in the activity log."""
        ...


class ProposalsMixin:
    """Pending Notes proposals for :class:`fleetmem.service.files.ContextFileService`."""

    def _propose(
        self: ProposalHost,
        agent: str,
        run_id: str | None,
        mode: str,
        base: int,
        text: str,
        diff: str,
    ) -> ProposalRow:
        row = ProposalRow(self.workspace, agent, run_id, mode, base, text, diff, self._clock())
        return self.proposals.add_proposal(row)

    def list_proposals(
        self: ProposalHost,
        *,
        agent: str | None = None,
        status: str | None = "pending",
        limit: int = 50,
    ) -> list[NotesProposal]:
        """Proposals, newest first: one agent's or everyone's; ``status`` None for all."""
        if agent is not None:
            agent = validate_agent_name(agent)
        if status is not None and status not in PROPOSAL_STATUSES:
            raise InvalidInput("status", status, "must be pending, applied or dismissed")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LISTED:
            raise InvalidInput("limit", limit, f"must be an integer between 1 and {MAX_LISTED}")
        rows = self.proposals.list_proposals(
            self.workspace, agent=agent, status=status, limit=limit
        )
        return [notes_proposal_of(row) for row in rows]

    def get_proposal(self: ProposalHost, proposal_id: object) -> NotesProposal:
        """One proposal; NotFound when this workspace has none by that id."""
        return notes_proposal_of(_find(self, proposal_id))

    def apply_proposal(self: ProposalHost, proposal_id: object, *, actor: Actor) -> FileView:
        """Write a pending proposal as a new revision of the agent's Notes, by ``actor``.

        Raises StaleRevision (nothing written, the proposal stays pending) when the Notes
        changed since the proposal was made, and Conflict when it was already decided.
        """
        if actor.kind != "user":
            raise InvalidInput("actor", str(actor), "only a person applies a proposed change")
        proposal = _pending(self, proposal_id)
        ref = self.ref("notes", agent=proposal.agent)
        with self.store.transaction():
            view = self._write(ref, proposal.proposed_text, proposal.base_revision, actor, "save")
            _decide(self, proposal, "applied", actor, view.revision)
        self._activity(actor, "applied", ref, view.revision, f"proposal {proposal.id}")
        return view

    def dismiss_proposal(self: ProposalHost, proposal_id: object, *, actor: Actor) -> NotesProposal:
        """Set a pending proposal aside; the file is not touched."""
        proposal = _pending(self, proposal_id)
        _decide(self, proposal, "dismissed", actor, None)
        ref = self.ref("notes", agent=proposal.agent)
        self._activity(actor, "dismissed", ref, proposal.base_revision, f"proposal {proposal.id}")
        return notes_proposal_of(_find(self, proposal.id))


def _find(host: ProposalHost, proposal_id: object) -> ProposalRow:
    number = _proposal_id(proposal_id)
    found = host.proposals.get_proposal(host.workspace, number)
    if found is None:
        raise NotFound(f"no proposal {number}", proposal=number)
    return found


def _pending(host: ProposalHost, proposal_id: object) -> ProposalRow:
    proposal = _find(host, proposal_id)
    if proposal.status != "pending":
        raise Conflict(
            f"proposal {proposal.id} was already {proposal.status} by {proposal.decided_by}",
            existing=str(proposal.id),
        )
    return proposal


def _decide(
    host: ProposalHost, proposal: ProposalRow, status: str, actor: Actor, revision: int | None
) -> None:
    assert proposal.id is not None
    decided = host.proposals.decide_proposal(
        host.workspace,
        proposal.id,
        status=status,
        decided_at=host._clock(),
        decided_by=str(actor),
        applied_revision=revision,
    )
    if not decided:  # another person decided it a moment ago: undo this write
        raise Conflict(f"proposal {proposal.id} was decided meanwhile", existing=str(proposal.id))


def _proposal_id(value: object) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput("proposal", value, "must be a proposal number (1 or more)")
    return value


def default_proposals(store: object) -> ProposalStore:
    """The store's own proposal table (when the caller did not wire one)."""
    proposals = getattr(store, "proposals", None)
    if proposals is None:
        raise TypeError("give ContextFileService a ProposalStore for this kind of store")
    return cast(ProposalStore, proposals)
