"""What a run may write through the MCP server: fact proposals, votes, context-file notes.

The half of :class:`fleetmem.service.agent_memory.AgentMemory` that changes things. Each
method needs an attributed caller (``not_attributed`` otherwise) and hands the run's agent,
repository and run id to the service that owns the write: facts are only ever *proposed* here
(a person reviews them), votes count only when the run was not shown the fact, and no method
records, edits or forgets an episode.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from fleetmem.core.facts import visible_scopes
from fleetmem.core.scope import WORKSPACE, agent_scope, project_scope
from fleetmem.errors import InvalidInput, NoRepository, NotAttributed, StoreError, UnknownFact
from fleetmem.service.fact_results import ProposalResult, VoteResult
from fleetmem.service.facts import FactService
from fleetmem.service.file_types import ContextFileRead, FileView, NotesUpdate
from fleetmem.service.files import ContextFileService
from fleetmem.service.runs import Caller

#: The longest reason a vote may carry.
MAX_REASON = 500

_P = ParamSpec("_P")
_R = TypeVar("_R")
_S = TypeVar("_S", bound="AgentWritesMixin")


def routed(
    method: Callable[Concatenate[_S, Caller | None, _P], _R],
) -> Callable[Concatenate[_S, Caller | None, _P], _R]:
    """Run ``method`` on the copy bound to the workspace of the caller's agent
    (``[agent.NAME] workspace``), whichever copy it was called on: a run's facts, files,
    exposures and votes are its agent's workspace's (docs/workspaces.md)."""

    @functools.wraps(method)
    def wrapper(self: _S, caller: Caller | None, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return method(self.for_caller(caller), caller, *args, **kwargs)

    return wrapper


class AgentWritesMixin:
    """Proposals, votes and context-file writes of attributed runs."""

    _facts: FactService
    _files: ContextFileService
    #: Agent name -> the copy bound to the agent's workspace (set by the composition root).
    _router: Callable[[str], AgentWritesMixin] | None = None

    def route_agents(self, router: Callable[[str], AgentWritesMixin]) -> None:
        """Serve each attributed caller through ``router(caller.agent)``: the copy bound to
        its agent's workspace. Raises there (UnknownAgentWorkspace) rather than fall back."""
        self._router = router

    def for_caller(self: _S, caller: Caller | None) -> _S:
        """The copy serving ``caller``: its agent's workspace's; this one for an unattributed
        caller (or one the store could not identify)."""
        if caller is None or not caller.agent or self._router is None:
            return self
        target = self._router(caller.agent)
        assert isinstance(target, type(self))
        return target

    @property
    def workspace(self) -> str:
        """The workspace this copy serves."""
        return self._facts.workspace

    @routed
    def remember(
        self,
        caller: Caller | None,
        text: str,
        *,
        kind: str | None = None,
        scope: str | None = None,
        source: str | None = None,
    ) -> ProposalResult:
        """Propose a fact from a run; it is served to nobody until a person reviews it.

        ``scope`` is ``project`` (the run's repository; the default inside one),
        ``workspace`` or ``agent`` (the run's agent only).
        """
        caller = _require(caller, "remember")
        if scope is None:
            resolved = None
        elif scope == "project":
            if caller.repo is None:
                raise NoRepository("the run is outside any repository: use scope workspace")
            resolved = project_scope(caller.repo)
        elif scope == "workspace":
            resolved = WORKSPACE
        elif scope == "agent":
            resolved = agent_scope(caller.agent)
        else:
            raise InvalidInput("scope", scope, "must be project, workspace or agent")
        return self._facts.propose(
            text,
            agent=caller.agent,
            run_id=caller.run_id,
            repo=caller.repo,
            kind=kind or "note",
            scope=resolved,
            source=source,
        )

    @routed
    def vote(
        self, caller: Caller | None, fact_id: str, stance: str, *, reason: str | None = None
    ) -> VoteResult:
        """A run's support or contradiction of a fact it may see (seed 000 REQ-17: counted only
        when the run was not shown the fact and did not write it).

        ``reason`` (at most 500 characters, no secrets) is stored, redacted, with the vote.
        """
        caller = _require(caller, "vote_fact")
        if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
            raise InvalidInput("reason", "<text>", f"must be at most {MAX_REASON} characters")
        if not isinstance(fact_id, str) or not fact_id or len(fact_id) > 64:
            raise UnknownFact(str(fact_id)[:64])
        row = self._facts.store.fact_get(self._facts.workspace, fact_id)
        if row is None or row.scope not in visible_scopes(caller.agent, caller.repo):
            # A fact outside the run's scopes is as absent as one that never existed.
            raise UnknownFact(fact_id)
        return self._facts.vote(
            run_id=caller.run_id,
            agent=caller.agent,
            repo=caller.repo,
            fact_id=fact_id,
            stance=stance,
            reason=reason,
        )

    # ---- context files ----------------------------------------------------------------
    @routed
    def read_context_file(self, caller: Caller | None, name: str) -> ContextFileRead:
        caller = _require(caller, "read_context_file")
        return self._files.read_context_file(agent=caller.agent, name=name, run_id=caller.run_id)

    @routed
    def note_project(self, caller: Caller | None, text: str) -> FileView:
        caller = _require(caller, "note_project")
        if caller.repo is None:
            raise NoRepository("the run is outside any repository: it has no project notebook")
        return self._files.note_project(
            agent=caller.agent, repo=caller.repo, text=text, run_id=caller.run_id
        )

    @routed
    def update_notes(
        self,
        caller: Caller | None,
        text: str,
        *,
        mode: str = "append",
        base_revision: int | None = None,
    ) -> NotesUpdate:
        caller = _require(caller, "update_notes")
        if mode not in ("append", "replace"):
            raise InvalidInput("mode", mode, "must be append or replace")
        return self._files.update_notes(
            agent=caller.agent,
            text=text,
            mode="replace" if mode == "replace" else "append",
            base_revision=base_revision,
            run_id=caller.run_id,
        )


def _require(caller: Caller | None, what: str) -> Caller:
    if caller is None:
        raise NotAttributed(f"{what} needs the run's token: the caller is not attributed to a run")
    if not caller.run_id:  # agent_memory.UNREACHABLE: the store did not answer
        raise StoreError(
            f"the memory store is unavailable: {what} was refused, nothing was stored;"
            " try again in a minute (your run can continue)"
        )
    return caller
