"""FactService: teach once, review before trust, search by meaning, forget on purpose.

The one place fact behaviour lives. The CLI, the HTTP API and (in later issues) the MCP
tools, the briefing and the web UI call these methods unchanged. Each write validates,
checks the workspace's caps and the writer's rate limit, stores the fact, and appends one
row per changed fact to the activity journal, all in one transaction. Expected outcomes of
an agent's write (review backlog full, memory full) are return values; a person's refused
write raises with the reason (see ``fleetmem.errors``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fleetmem import metrics
from fleetmem.core.episode import content_hash
from fleetmem.core.facts import (
    ACTIVE,
    BACKLOG_FULL,
    FORGET_ALL_PHRASE,
    FORGET_ALL_UNTOUCHED,
    FORGET_ALLS_PER_HOUR,
    FORGOTTEN,
    KEPT,
    LIVE,
    MEMORY_FULL,
    MERGED,
    PROPOSED,
    REJECTED,
    RESTORE_WINDOW_S,
    SUSPECT,
    UNDO_WINDOW_S,
    WRITES_PER_MINUTE,
    Actor,
    check_kind,
    check_reference,
    check_scope,
    clean_body,
    normalize,
    review_action,
    review_target,
)
from fleetmem.core.scope import WORKSPACE, project_scope, validate_agent_name
from fleetmem.errors import (
    CapReached,
    Conflict,
    DuplicateFact,
    InvalidInput,
    InvalidTransition,
    UnknownFact,
)
from fleetmem.service.fact_base import local_user, log
from fleetmem.service.fact_imports import FactImportsMixin
from fleetmem.service.fact_reads import IN_FLIGHT_WINDOW_S, FactReadsMixin
from fleetmem.service.fact_results import (
    EditResult,
    ForgetAllResult,
    ForgetResult,
    ProposalResult,
    WriteResult,
)
from fleetmem.service.fact_runs import RunFactsMixin, check_run
from fleetmem.service.fact_tidy import FactTidyMixin
from fleetmem.service.records.facts import Fact, fact_of
from fleetmem.store.facts import FactRow, ProvenanceRow, RevisionRow

PIN_CAP = "At most 20 facts can be pinned; unpin one first."
MAX_IDEMPOTENCY_KEY = 200
#: Printable ASCII: a key is an opaque token (a UUID, a hash), never prose; the OpenAPI
#: document declares the same pattern.
IDEMPOTENCY_KEY_PATTERN = rf"[\x20-\x7e]{{1,{MAX_IDEMPOTENCY_KEY}}}"
IDEMPOTENCY_KEY_RE = re.compile(IDEMPOTENCY_KEY_PATTERN)


class FactService(RunFactsMixin, FactReadsMixin, FactImportsMixin, FactTidyMixin):
    """Facts of one workspace (``in_workspace`` gives another)."""

    # ---- writes by people ---------------------------------------------------------------
    def add(
        self,
        body: str,
        *,
        kind: str = "note",
        scope: str = WORKSPACE,
        pin: bool = False,
        source: str | None = None,
        actor: Actor | None = None,
        conversation: str | None = None,
        idempotency_key: str | None = None,
        embed: bool = True,
    ) -> WriteResult:
        """Teach a fact: it is ``active`` at once (seed 003 FR-16).

        Refused (raising) for a secret, a bad size, kind or scope, an exact duplicate in the
        same scope (naming it), a full memory, a full pin list or the rate limit. A near
        duplicate is stored and returned with a merge suggestion. ``embed`` False: stored
        without its vector (near duplicates by words alone), which the next search by
        meaning or sweep adds, so a short-lived process need not load the embedder.
        """
        actor = actor or local_user()
        if actor.kind == "agent":
            raise InvalidInput("actor", actor.name, "agents propose facts; use propose()")
        body, kind, scope, source = self._validate(body, kind, scope, source)
        key = _idempotency_key(idempotency_key)
        norm = normalize(body)
        if key is not None:
            existing = self.store.fact_by_idempotency(self.workspace, key)
            if existing is not None:
                return self._replay(existing, norm, scope)
        vector = self._embed_one(body) if embed else None
        near = self._near_duplicates(body, scope, vector)
        now = self.now()
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            self._refuse_duplicate(scope, norm, LIVE, action="add")
            if not self._room_for_kept():
                metrics.FACT_WRITES.labels(action="add", outcome="refused").inc()
                raise CapReached(MEMORY_FULL, limit=self.limits.kept)
            if pin:
                self._check_pin_room()
            row = FactRow(
                id=self._new_id(),
                workspace=self.workspace,
                body=body,
                norm=norm,
                kind=kind,
                scope=scope,
                status=ACTIVE,
                pinned=pin,
                pinned_at=now if pin else None,
                origin=actor.origin,
                author=actor.name,
                run_id=actor.run_id,
                conversation=conversation,
                source=source,
                revision=1,
                content_hash=content_hash(body),
                created_at=now,
                updated_at=now,
                confirmed_at=now if actor.kind == "human" else None,
                forgotten_at=None,
                forgotten_from=None,
                merged_into=None,
                idempotency_key=key,
            )
            self._insert(row, actor, "create")
            self._link_vector(row, vector)
        metrics.FACT_WRITES.labels(action="add", outcome="ok").inc()
        log.info("fact.added fact=%s kind=%s scope=%s actor=%s", row.id, kind, scope, actor.kind)
        return WriteResult(fact_of(row), True, near)

    def _validate(
        self, body: str, kind: str, scope: str, source: str | None
    ) -> tuple[str, str, str, str | None]:
        body = clean_body(body)
        kind = check_kind(kind)
        scope = check_scope(scope)
        if kind == "reference":
            source = check_reference(body, source)
        elif source is not None:
            raise InvalidInput("source", source, "only a reference fact has a source")
        return body, kind, scope, source

    def _replay(self, existing: FactRow, norm: str, scope: str) -> WriteResult:
        if existing.norm != norm or existing.scope != scope:
            raise Conflict("idempotency key was used for a different fact", existing=existing.id)
        return WriteResult(fact_of(existing), False)

    def _refuse_duplicate(
        self, scope: str, norm: str, statuses: Iterable[str], *, action: str, exclude: str = ""
    ) -> None:
        same = self.store.fact_find_norm(self.workspace, scope, norm, sorted(statuses))
        if same is not None and same.id != exclude:
            metrics.FACT_WRITES.labels(action=action, outcome="duplicate").inc()
            raise DuplicateFact(
                f"already remembered as {same.id} ({same.status})", existing=same.id
            )

    def _check_pin_room(self) -> None:
        if not self._room_for_pin():
            raise CapReached(PIN_CAP, limit=self.limits.pinned)

    # ---- writes by agents ---------------------------------------------------------------
    def propose(
        self,
        body: str,
        *,
        agent: str,
        run_id: str,
        repo: str | None = None,
        kind: str = "note",
        scope: str | None = None,
        source: str | None = None,
        idempotency_key: str | None = None,
    ) -> ProposalResult:
        """An agent's fact: stored as ``proposed`` and never served until a person reviews it
        (seed 003 FR-15, S14). The scope defaults to the run's project, else the workspace.

        A duplicate of a live or rejected fact returns it. With 200 proposals waiting the new
        one is dropped, and with 2,000 facts kept it is refused; both are outcomes carrying
        the line for the run's log, and the run continues.
        """
        run_id, agent, repo = check_run(run_id, agent, repo)
        validate_agent_name(agent)
        if scope is None:
            scope = project_scope(repo) if repo is not None else WORKSPACE
        body, kind, scope, source = self._validate(body, kind, scope, source)
        key = _idempotency_key(idempotency_key)
        norm = normalize(body)
        actor = Actor("agent", agent, run_id)
        if key is not None:
            existing = self.store.fact_by_idempotency(self.workspace, key)
            if existing is not None:
                return ProposalResult("duplicate", self._replay(existing, norm, scope).fact)
        vector = self._embed_one(body)
        near = self._near_duplicates(body, scope, vector)
        now = self.now()
        with self._write():
            same = self.store.fact_find_norm(self.workspace, scope, norm, sorted(LIVE | {REJECTED}))
            if same is not None:
                # Not counted against the rate limit: nothing is written.
                metrics.FACT_PROPOSALS.labels(outcome="duplicate").inc()
                return ProposalResult("duplicate", fact_of(same), reason="duplicate")
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            if not self._room_for_kept():
                return self._not_stored("refused", "memory_full", MEMORY_FULL, run_id, agent)
            if not self._room_for_proposal():
                return self._not_stored(
                    "dropped", "review_backlog_full", BACKLOG_FULL, run_id, agent
                )
            row = self._proposal_row(
                body,
                norm,
                kind,
                scope,
                origin="agent",
                author=agent,
                run_id=run_id,
                conversation=None,
                source=source,
                idempotency_key=key,
                now=now,
            )
            self._insert(row, actor, "propose")
            self._link_vector(row, vector)
        metrics.FACT_PROPOSALS.labels(outcome="proposed").inc()
        log.info("fact.proposed fact=%s agent=%s run=%s", row.id, agent, run_id)
        return ProposalResult("proposed", fact_of(row), near_duplicates=near)

    def _not_stored(
        self, outcome: str, reason: str, line: str, run_id: str, agent: str
    ) -> ProposalResult:
        metrics.FACT_PROPOSALS.labels(outcome=outcome).inc()
        log.warning("%s run=%s agent=%s", line, run_id, agent)
        return ProposalResult(outcome, None, reason=reason, log_line=line)  # type: ignore[arg-type]

    # ---- changes ------------------------------------------------------------------------
    def edit(self, fact_id: str, body: str, *, actor: Actor | None = None) -> EditResult:
        """Correct a fact's wording: a new revision for every run started after the save;
        runs already holding the old one keep it (seed 003 S3, FR-7)."""
        actor = actor or local_user()
        row = self._require(fact_id)
        if row.status not in LIVE:
            raise InvalidTransition(f"cannot edit a fact that is {row.status}", existing=row.id)
        body = clean_body(body)
        source = check_reference(body, None) if row.kind == "reference" else None
        if body == row.body:
            return EditResult(fact_of(row), False, 0)
        norm = normalize(body)
        vector = self._embed_one(body)
        now = self.now()
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            self._refuse_duplicate(row.scope, norm, LIVE, action="edit", exclude=row.id)
            after = self._save(
                row,
                body=body,
                norm=norm,
                source=source if row.kind == "reference" else row.source,
                revision=row.revision + 1,
                content_hash=content_hash(body),
                updated_at=now,
                confirmed_at=now if actor.kind == "human" else row.confirmed_at,
            )
            self.store.fact_add_revision(
                RevisionRow(row.id, after.revision, body, actor.kind, actor.name, now)
            )
            self._journal("edit", actor, row, after)
            self._link_vector(after, vector)
        metrics.FACT_WRITES.labels(action="edit", outcome="ok").inc()
        in_flight = self.store.fact_in_flight(
            self.workspace, row.id, after.revision, now - IN_FLIGHT_WINDOW_S
        )
        return EditResult(fact_of(after), True, in_flight)

    def set_scope(self, fact_id: str, scope: str, *, actor: Actor | None = None) -> Fact:
        """Change who a fact is for: the whole workspace, runs in one repository
        (``project:REPO``) or one agent (``agent:NAME``, "Limit to one agent…").

        Only people change a fact's scope. Runs started from now on see it in its new scope;
        a live fact with the same words in that scope already is refused as a duplicate.
        """
        actor = actor or local_user()
        if actor.kind != "human":
            raise InvalidInput("actor", actor.name, "only a person changes a fact's scope")
        scope = check_scope(scope)
        row = self._require(fact_id)
        if row.status not in LIVE:
            raise InvalidTransition(
                f"cannot change the scope of a fact that is {row.status}", existing=row.id
            )
        if scope == row.scope:
            return fact_of(row)
        now = self.now()
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            self._refuse_duplicate(scope, row.norm, LIVE, action="scope", exclude=row.id)
            after = self._save(row, scope=scope, updated_at=now)
            self._journal("scope", actor, row, after)
        metrics.FACT_WRITES.labels(action="scope", outcome="ok").inc()
        log.info("fact.scoped fact=%s scope=%s actor=%s", row.id, scope, actor.kind)
        return fact_of(after)

    def forget(self, fact_id: str, *, actor: Actor | None = None) -> ForgetResult:
        """Forget one fact: no run started from now on is served it; restorable for 30 days
        (undo offered for 10 seconds), then purged (seed 003 S4, FR-8, FR-9)."""
        actor = actor or local_user()
        row = self._require(fact_id)
        if row.status == FORGOTTEN:
            at = row.forgotten_at or self.now()
            return ForgetResult(fact_of(row), True, at + UNDO_WINDOW_S, at + RESTORE_WINDOW_S)
        if row.status not in LIVE:
            raise InvalidTransition(f"cannot forget a fact that is {row.status}", existing=row.id)
        now = self.now()
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            after = self._save(row, status=FORGOTTEN, forgotten_at=now, forgotten_from=row.status)
            self._journal("forget", actor, row, after)
        metrics.FACT_WRITES.labels(action="forget", outcome="ok").inc()
        return ForgetResult(fact_of(after), False, now + UNDO_WINDOW_S, now + RESTORE_WINDOW_S)

    def restore(self, fact_id: str, *, actor: Actor | None = None) -> Fact:
        """Bring a forgotten fact back to the status it had (also the 10-second undo)."""
        actor = actor or local_user()
        row = self._require(fact_id)
        if row.status != FORGOTTEN:
            raise InvalidTransition(f"cannot restore a fact that is {row.status}", existing=row.id)
        now = self.now()
        if now - (row.forgotten_at or now) > RESTORE_WINDOW_S:
            raise InvalidTransition("forgotten more than 30 days ago", existing=row.id)
        target = row.forgotten_from if row.forgotten_from in LIVE else ACTIVE
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            self._refuse_duplicate(row.scope, row.norm, LIVE, action="restore")
            if target in KEPT and not self._room_for_kept():
                raise CapReached(MEMORY_FULL, limit=self.limits.kept)
            if target == PROPOSED and not self._room_for_proposal():
                raise CapReached("the review backlog is full", limit=self.limits.proposed)
            # Restored without its pin, rather than not at all, when the pins are full.
            pinned = row.pinned and target in (ACTIVE, SUSPECT) and self._room_for_pin()
            after = self._save(
                row,
                status=target,
                forgotten_at=None,
                forgotten_from=None,
                pinned=pinned,
                pinned_at=row.pinned_at if pinned else None,
            )
            self._journal("restore", actor, row, after)
        metrics.FACT_WRITES.labels(action="restore", outcome="ok").inc()
        return fact_of(after)

    def pin(self, fact_id: str, *, actor: Actor | None = None) -> Fact:
        """Pin an active fact: injected into every run of its scope ahead of recalled ones
        (at most 20 per workspace, seed 003 FR-14)."""
        actor = actor or local_user()
        row = self._require(fact_id)
        if row.status != ACTIVE:
            raise InvalidTransition(
                f"only an active fact can be pinned; this one is {row.status}", existing=row.id
            )
        if row.pinned:
            return fact_of(row)
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            self._check_pin_room()
            after = self._save(row, pinned=True, pinned_at=self.now())
            self._journal("pin", actor, row, after)
        metrics.FACT_WRITES.labels(action="pin", outcome="ok").inc()
        return fact_of(after)

    def unpin(self, fact_id: str, *, actor: Actor | None = None) -> Fact:
        actor = actor or local_user()
        row = self._require(fact_id)
        if not row.pinned:
            return fact_of(row)
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            after = self._save(row, pinned=False, pinned_at=None)
            self._journal("unpin", actor, row, after)
        metrics.FACT_WRITES.labels(action="unpin", outcome="ok").inc()
        return fact_of(after)

    def review(
        self, fact_id: str, action: str, *, into: str | None = None, actor: Actor | None = None
    ) -> Fact:
        """A person's review: confirm (accept), evidence, restrict, reject (discard), stale,
        or merge ``into`` another fact. Only people review; agents vote."""
        actor = actor or local_user()
        if actor.kind != "human":
            raise InvalidInput("actor", actor.name, "only a person reviews facts")
        action = review_action(action)
        if action == "merge":
            return fact_of(self._merge(fact_id, into, actor))
        if into is not None:
            raise InvalidInput("into", into, "only merge takes --into")
        row = self._require(fact_id)
        target = review_target(row.status, action, row.id)
        now = self.now()
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            if target in KEPT and row.status not in KEPT and not self._room_for_kept():
                raise CapReached(MEMORY_FULL, limit=self.limits.kept)
            changes: dict[str, object] = {"status": target}
            if action == "confirm":
                changes.update(confirmed_at=now, updated_at=now)
            if target not in (ACTIVE, SUSPECT):
                changes.update(pinned=False, pinned_at=None)
            after = self._save(row, **changes)
            self._journal(f"review:{action}", actor, row, after)
        metrics.FACT_WRITES.labels(action="review", outcome="ok").inc()
        return fact_of(after)

    def _merge(self, fact_id: str, into: str | None, actor: Actor) -> FactRow:
        if into is None:
            raise InvalidInput("into", None, "merge needs the fact to merge into")
        row = self._require(fact_id)
        review_target(row.status, "merge", row.id)
        try:
            target = self._require(into)
        except UnknownFact:
            # The fact under review exists; what is missing is the one named in the body, so
            # this is not a 404 of the fact addressed (the target may be forgotten meanwhile).
            raise InvalidTransition(
                f"can only merge into a fact that exists; {into} does not", existing=None
            ) from None
        if target.id == row.id:
            raise InvalidInput("into", into, "a fact cannot be merged into itself")
        if target.status not in KEPT:
            raise InvalidTransition(
                f"can only merge into a reviewed fact; {into} is {target.status}", existing=into
            )
        if target.scope != row.scope:
            raise InvalidInput("into", into, f"is in scope {target.scope}, not {row.scope}")
        now = self.now()
        with self._write():
            self._rate(actor, "writes", WRITES_PER_MINUTE, 60.0)
            after = self._save(row, status=MERGED, merged_into=target.id, pinned=False)
            self._journal("merge", actor, row, after)
            moved = [
                ProvenanceRow(target.id, p.origin, p.author, p.run_id, p.conversation, row.id, now)
                for p in self.store.fact_provenance(row.id)
            ]
            self.store.fact_add_provenance(moved)
            self._journal("merge_in", actor, target, target)
        metrics.FACT_WRITES.labels(action="merge", outcome="ok").inc()
        return after

    def forget_all(self, confirm: str, *, actor: Actor | None = None) -> ForgetAllResult:
        """Forget every live fact of the workspace, only when ``confirm`` is ``FORGET ALL``.

        Context files, agent files, episodes, run records and configuration are untouched;
        the facts stay restorable for 30 days and new facts are accepted at once.
        """
        actor = actor or local_user()
        if confirm != FORGET_ALL_PHRASE:
            raise InvalidInput(
                "confirm", confirm, f"type {FORGET_ALL_PHRASE} exactly. {FORGET_ALL_UNTOUCHED}"
            )
        now = self.now()
        with self._write():
            self._rate(actor, "forget-alls", FORGET_ALLS_PER_HOUR, 3600.0)
            rows = self.store.fact_candidates(self.workspace, sorted(LIVE), None)
            for row in rows:
                after = self._save(
                    row, status=FORGOTTEN, forgotten_at=now, forgotten_from=row.status
                )
                self._journal("forget", actor, row, after)
        metrics.FACT_WRITES.labels(action="forget_all", outcome="ok").inc()
        log.info("fact.forget_all forgotten=%d actor=%s", len(rows), actor.kind)
        return ForgetAllResult(len(rows), FORGET_ALL_UNTOUCHED, now + RESTORE_WINDOW_S)


def _idempotency_key(key: str | None) -> str | None:
    if key is None:
        return None
    if not isinstance(key, str) or not IDEMPOTENCY_KEY_RE.fullmatch(key):
        raise InvalidInput("idempotency_key", key, "must be 1 to 200 printable ASCII characters")
    return key
