"""ContextFileService: workspace context files, agent files and project notebooks.

Every surface (CLI, HTTP API, the MCP tools ``read_context_file``, ``note_project`` and
``update_notes``, later the web UI) calls these methods. Writes are optimistic: a save names
the revision it was based on and a stale one is refused with the current revision
(:class:`StaleRevision`); nothing is silently overwritten. Each revision is attributed to a user,
an agent or the system, and every write lands in the activity feed.

The context a run receives, and the whole-agent report, are in :mod:`fleetmem.service.context`.
"""

from __future__ import annotations

import copy
import logging
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Literal

from fleetmem import metrics
from fleetmem.config import Settings
from fleetmem.core.budget import TokenCodec, render_marked, truncate_authored
from fleetmem.core.context import shared_reports
from fleetmem.core.contextfiles import (
    AGENT_FILES,
    KEEP_REVISIONS,
    KEEP_REVISIONS_YOUNGER_THAN_S,
    MAX_EVERY_RUN,
    MAX_NOTE_CHARS,
    NOTEBOOK,
    SCOPE_PROMPT,
    WORKSPACE_CONTEXT_BUDGET,
    WORKSPACE_FILES,
    FileRef,
    append_note,
    check_body,
    parse_mode,
    resolve,
    unified_diff,
)
from fleetmem.core.facts import check_workspace
from fleetmem.core.redact import find_secrets
from fleetmem.core.scope import validate_agent_name, validate_repo_key
from fleetmem.errors import (
    CapReached,
    InvalidInput,
    NotAttributed,
    NotFound,
    NotPermitted,
    RateLimited,
    StaleRevision,
)
from fleetmem.service.context import ContextMixin, SegmentProvider
from fleetmem.service.file_proposals import ProposalsMixin, default_proposals
from fleetmem.service.file_types import (
    Actor,
    AskPayload,
    ContextFileRead,
    FileView,
    Listing,
    Meter,
    NotesUpdate,
)
from fleetmem.service.records.files import (
    FileActivity,
    FileRevision,
    file_activity_of,
    file_revision_of,
)
from fleetmem.store.file_proposals import ProposalStore
from fleetmem.store.files import ActivityRow, FileKey, FileRow, FileStore, NewRevision
from fleetmem.tokenize import get_tokenizer

__all__ = [
    "ATTACHMENT_INTRO",
    "CANNOT_EDIT",
    "DEFAULT_WORKSPACE",
    "Actor",
    "AskPayload",
    "ContextFileRead",
    "ContextFileService",
    "FileView",
    "Listing",
    "Meter",
    "NotesUpdate",
    "draw_nonce",
]

log = logging.getLogger("fleetmem.files")

DEFAULT_WORKSPACE: Final = "default"
#: A run that loaded a file counts as "in flight" until it closes, for at most this long.
IN_FLIGHT_WINDOW_S: Final = 24 * 3600.0
#: Context-file writes per user (or agent) per minute (NFR-6).
WRITES_PER_MINUTE: Final = 60
CANNOT_EDIT: Final = "I can't edit my own files — here's the change I'd make."
ATTACHMENT_INTRO: Final = "What rides along with your message, exactly as sent:"


def draw_nonce() -> str:
    """A fence nonce: 128 bits from the OS CSPRNG as 39 decimal digits.

    Digits tokenize in groups of three, one token per group, so every nonce costs the same
    number of tokens: the whole-agent report and a run's context agree on the total.
    """
    return f"{secrets.randbelow(10**39):039d}"


class ContextFileService(ProposalsMixin, ContextMixin):
    """Context files of one workspace (the tenant)."""

    def __init__(
        self,
        *,
        store: FileStore,
        settings: Callable[[], Settings],
        tokenizer: Callable[[], TokenCodec] = get_tokenizer,
        clock: Callable[[], float] = time.time,
        nonce: Callable[[], str] = draw_nonce,
        providers: Mapping[str, SegmentProvider] | None = None,
        workspace: str = DEFAULT_WORKSPACE,
        proposals: ProposalStore | None = None,
    ) -> None:
        self.store = store
        self.proposals = proposals if proposals is not None else default_proposals(store)
        self._settings = settings
        self._tokenizer = tokenizer
        self._clock = clock
        self._nonce = nonce
        self.providers: dict[str, SegmentProvider] = dict(providers or {})
        self.workspace = check_workspace(workspace)
        self._ensured = False  # workspace files are never deleted: check once per service

    def in_workspace(self, workspace: str) -> ContextFileService:
        """The same service bound to another workspace (the tenant every call is scoped to);
        segment providers, tokenizer and clock are shared."""
        other = copy.copy(self)
        other.workspace = check_workspace(workspace)
        other._ensured = False
        return other

    @property
    def codec(self) -> TokenCodec:
        return self._tokenizer()

    # ---- references -------------------------------------------------------------------
    def ref(self, name: str, *, agent: str | None = None, repo: str | None = None) -> FileRef:
        """The file ``name`` of the workspace, of ``agent``, or of repository ``repo``."""
        if agent is not None and repo is not None:
            # No file lives at both addresses: nothing is there (404), as for a name of
            # another family.
            raise NotFound("no file: name an agent or a repository, not both", file=name)
        if agent is not None:
            return FileRef(resolve("agent", name), validate_agent_name(agent))
        if repo is not None:
            return FileRef(resolve("project", name), validate_repo_key(repo))
        return FileRef(resolve("workspace", name))

    def _key(self, ref: FileRef) -> FileKey:
        return FileKey(self.workspace, ref.kind, ref.owner, ref.name)

    def _ensure_workspace_files(self) -> None:
        """The six workspace files exist from the first visit, empty, with default modes."""
        if self._ensured:
            return
        now = self._clock()
        for spec in WORKSPACE_FILES:
            key = FileKey(self.workspace, "workspace", "", spec.slug)
            if self.store.get_file(key) is None:
                self.store.create_file(key, spec.default_mode, now)
        self._ensured = True

    def _row(self, ref: FileRef) -> FileRow:
        """The stored row, or an empty revision 0 for a file never written."""
        if ref.kind == "workspace":
            self._ensure_workspace_files()
        row = self.store.get_file(self._key(ref))
        if row is not None:
            return row
        return FileRow(self._key(ref), None, 0, "", 0.0, "system", "fleetmem", None)

    # ---- reading ----------------------------------------------------------------------
    def get(self, ref: FileRef) -> FileView:
        """The file's body, revision, mode, load meter and runs still holding an older text."""
        row = self._row(ref)
        return self._view(ref, row, self._meter(ref, row))

    def _view(self, ref: FileRef, row: FileRow, meter: Meter) -> FileView:
        in_flight = self.store.runs_in_flight(
            self.workspace, str(ref), row.revision, self._clock() - IN_FLIGHT_WINDOW_S
        )
        mode = parse_mode(row.mode) if row.mode else None
        return FileView(
            ref,
            row.body,
            row.revision,
            mode,
            row.updated_at,
            f"{row.author_kind}:{row.author}",
            meter,
            in_flight,
        )

    def _meter(self, ref: FileRef, row: FileRow) -> Meter:
        codec = self.codec
        if ref.kind != "workspace":
            budget = self.budget_of(ref)
            report = truncate_authored(row.body, budget, codec)
            return Meter(report.tokens, budget, report)
        if row.mode != "every_run":
            return Meter(codec.count(row.body), None, None)
        group = self.every_run_rows()
        reports = shared_reports([r.body for r in group], WORKSPACE_CONTEXT_BUDGET, codec)
        index = next(i for i, r in enumerate(group) if r.key.name == ref.name)
        report = reports[index]
        others = tuple(_title(r) for r in group if r.key.name != ref.name)
        return Meter(report.tokens, report.budget, report, others)

    def budget_of(self, ref: FileRef) -> int:
        """An agent or project file's budget: its catalog figure, or for Skills the agent's
        own ``skills_budget`` when set (FR-47)."""
        if ref.kind == "agent" and ref.name == "skills":
            override = self._settings().agent(ref.owner).skills_budget
            if override is not None:
                return override
        return ref.spec.budget or 0

    def every_run_rows(self) -> list[FileRow]:
        """The every-run workspace files, in catalog order."""
        self._ensure_workspace_files()
        rows = {r.key.name: r for r in self.store.list_files(self.workspace, "workspace")}
        return [
            rows[s.slug]
            for s in WORKSPACE_FILES
            if s.slug in rows and rows[s.slug].mode == "every_run"
        ]

    def every_run_names(self) -> list[str]:
        """The names of the every-run workspace files, in catalog order (for the web rail)."""
        return [row.key.name for row in self.every_run_rows()]

    def list_files(self, *, agent: str | None = None, repo: str | None = None) -> list[FileView]:
        """The six workspace files, an agent's eight files, or a repository's notebook and
        scope prompt."""
        if agent is not None and repo is not None:
            # A bad value is named whichever one it is; two good ones address no file at all,
            # as for ``ref`` (404).
            validate_agent_name(agent)
            validate_repo_key(repo)
            raise NotFound("no files: name an agent or a repository, not both")
        if agent is not None:
            return [self.get(self.ref(s.slug, agent=agent)) for s in AGENT_FILES]
        if repo is not None:
            return [self.get(self.ref(s.slug, repo=repo)) for s in (NOTEBOOK, SCOPE_PROMPT)]
        return [self.get(self.ref(s.slug)) for s in WORKSPACE_FILES]

    def listing(self) -> Listing:
        """Workspace files, plus the agents and repositories that have files."""
        agents = set(self.store.file_owners(self.workspace, "agent"))
        agents |= {name for name in self._settings().agents}
        return Listing(
            workspace=tuple(self.list_files()),
            agents=tuple(sorted(agents)),
            notebooks=tuple(self.store.file_owners(self.workspace, "project")),
        )

    def preview(self, ref: FileRef) -> str:
        """The body with the skipped region marked in place (FR-42); unchanged when it fits."""
        view = self.get(ref)
        report = view.meter.report
        return view.body if report is None else render_marked(view.body, report)

    def history(self, ref: FileRef) -> list[FileRevision]:
        """Retained revisions, newest first (the last 20 plus all younger than 30 days)."""
        return [file_revision_of(row) for row in self.store.list_revisions(self._key(ref))]

    def revision(self, ref: FileRef, revision: int) -> FileRevision:
        row = self.store.get_revision(self._key(ref), _revision_number(revision))
        if row is None:
            raise NotFound("no such revision", file=str(ref), revision=revision)
        return file_revision_of(row)

    def activity(self, *, limit: int = 50, ref: FileRef | None = None) -> list[FileActivity]:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidInput("limit", limit, "must be an integer between 1 and 1000")
        rows = self.store.list_activity(self.workspace, limit, None if ref is None else str(ref))
        return [file_activity_of(row) for row in rows]

    # ---- writing (people) -------------------------------------------------------------
    def save(self, ref: FileRef, text: object, *, base_revision: int, actor: Actor) -> FileView:
        """Save ``text`` as the next revision if ``base_revision`` is still the current one.

        Raises StaleRevision (nothing written) when the file changed since; InvalidInput for a
        body that is too large, holds invisible or control characters, or holds a secret.
        Agents write only through :meth:`update_notes` and :meth:`note_project`.
        """
        if actor.kind == "agent":
            raise NotPermitted(
                "agents write only their own Notes (update_notes) and notebooks (note_project)",
                agent=actor.name,
            )
        body = self._check_text(ref, text)
        return self._write(ref, body, _revision_number(base_revision), actor, "save")

    def restore(self, ref: FileRef, revision: int, *, actor: Actor) -> FileView:
        """Make a retained revision current again, as a new revision (FR-39)."""
        if actor.kind == "agent":
            raise NotPermitted("agents do not restore revisions", agent=actor.name)
        old = self.revision(ref, revision)
        current = self._row(ref)
        return self._write(ref, old.body, current.revision, actor, "restore", old.revision)

    def set_mode(self, name: str, mode: str, *, actor: Actor) -> FileView:
        """Load a workspace file on every run or on demand; at most three every run (FR-28)."""
        ref = self.ref(name)
        wanted = parse_mode(mode)
        self._ensure_workspace_files()
        self._rate_limit(actor)
        row, every_run = self.store.set_mode(
            self._key(ref), wanted, self._clock(), max_every_run=MAX_EVERY_RUN
        )
        if every_run:
            titles = [resolve("workspace", name).title for name in every_run]
            raise CapReached(
                f"At most {MAX_EVERY_RUN} context files can load on every run. Switch one of"
                f" {_either(titles)} to on-demand first.",
                existing=", ".join(titles),
            )
        self._activity(actor, "mode", ref, row.revision, wanted)
        return self.get(ref)

    # ---- writing (agents: the MCP tools) ----------------------------------------------
    def read_context_file(
        self, *, agent: str | None, name: str, run_id: str | None = None
    ) -> ContextFileRead:
        """``read_context_file``: any workspace file, whole (on-demand files have no budget)."""
        agent = _attributed(agent)
        ref = self.ref(name)
        row = self._row(ref)
        revision, body = row.revision, row.body
        if run_id is not None:
            # A run in flight keeps the revision its context was given at its start.
            held = self._held_revision(run_id, ref)
            if held is not None and held < revision:
                then = self.store.get_revision(self._key(ref), held)
                if then is not None:
                    revision, body = then.revision, then.body
        tokens = self.codec.count(body)
        actor = Actor("agent", agent, run_id)
        self._activity(actor, "read", ref, revision, None)
        if run_id is not None:
            self._record_read(run_id, agent, ref, revision, tokens)
        mode = parse_mode(row.mode or "on_demand")
        return ContextFileRead(ref.name, ref.spec.title, mode, revision, body, tokens)

    def _held_revision(self, run_id: str, ref: FileRef) -> int | None:
        """The revision of ``ref`` a run started with: the one its context loaded, or for a
        file read on demand the one current when the context was assembled (None when the
        run has no context record: nothing to keep)."""
        start = None
        for load in self.store.loads_for_run(self.workspace, run_id):
            if load.segment == "on_demand":
                continue
            if load.ref == str(ref) and load.revision:
                return load.revision
            start = load.loaded_at if start is None else min(start, load.loaded_at)
        if start is None:
            return None
        then = [
            r.revision for r in self.store.list_revisions(self._key(ref)) if r.created_at <= start
        ]
        return max(then) if then else None

    def note_project(
        self, *, agent: str | None, repo: str, text: object, run_id: str | None = None
    ) -> FileView:
        """``note_project``: append a note to the notebook of the repository the agent is in."""
        agent = _attributed(agent)
        ref = self.ref(NOTEBOOK.slug, repo=repo)
        note = self._check_note(ref, text)
        return self._append(ref, note, Actor("agent", agent, run_id))

    def update_notes(
        self,
        *,
        agent: str | None,
        text: object,
        mode: Literal["append", "replace"] = "append",
        base_revision: int | None = None,
        target_agent: str | None = None,
        run_id: str | None = None,
    ) -> NotesUpdate:
        """``update_notes``: an agent changes its own Notes file, if it may.

        Without ``edit_agent_files`` in its ``[agent.NAME]`` table nothing is written and the
        change comes back as a diff for a human to apply (S17). Another agent's files are
        never written (FR-37), whatever the grants.
        """
        agent = _attributed(agent)
        if target_agent is not None and target_agent != agent:
            raise NotPermitted("an agent never writes another agent's files", agent=agent)
        ref = self.ref("notes", agent=agent)
        actor = Actor("agent", agent, run_id)
        current = self._row(ref)
        note = ""
        if mode == "append":
            note = self._check_note(ref, text)
            proposed = append_note(current.body, note)
            check_body(proposed)
        elif mode == "replace":
            if base_revision is None:
                raise InvalidInput("base_revision", None, "a replace names the revision it read")
            proposed = self._check_text(ref, text)
            if _revision_number(base_revision) != current.revision:
                metrics.FILE_WRITES.labels(kind="agent", actor="agent", outcome="stale").inc()
                raise _stale(ref, base_revision, current)
        else:
            raise InvalidInput("mode", mode, "must be append or replace")
        diff = unified_diff(current.body, proposed, f"notes@{current.revision}", "notes (proposed)")
        if not self._settings().agent(agent).edit_agent_files:
            # Nothing is written to the file: the change waits for a person (S17).
            kept = self._propose(agent, run_id, mode, current.revision, proposed, diff)
            self._activity(actor, "proposed", ref, current.revision, f"proposal {kept.id}")
            metrics.FILE_WRITES.labels(kind="agent", actor="agent", outcome="proposed").inc()
            return NotesUpdate(
                False, current.revision, diff, proposed, "not_permitted", CANNOT_EDIT, kept.id
            )
        if mode == "append":
            view = self._append(ref, note, actor)
        else:
            view = self._write(ref, proposed, current.revision, actor, "save")
        return NotesUpdate(True, view.revision, diff, view.body)

    # ---- "ask an agent to update this" ------------------------------------------------
    def ask(self, ref: FileRef, *, to_agent: str | None = None) -> AskPayload:
        """The pre-filled message and the attachment exactly as they would be sent.

        The attachment is the whole file; a skipped region is marked in place the same way as
        in the preview, never cut out (FR-55, FR-56).
        """
        view = self.get(ref)
        report = view.meter.report
        attachment = view.body if report is None else render_marked(view.body, report)
        if ref.kind == "agent":
            if to_agent is not None and to_agent != ref.owner:
                raise InvalidInput("to", to_agent, "an agent's file is updated by that agent")
            addressed: str | None = ref.owner
            message = f"@{ref.owner} update your {ref.spec.title} file: "
        else:
            addressed = None if to_agent is None else validate_agent_name(to_agent)
            what = (
                f"the {ref.spec.title} context file"
                if ref.kind == "workspace"
                else f"the project notebook of {ref.owner}"
            )
            message = f"@{addressed} update {what}: " if addressed else f"Update {what}: "
        return AskPayload(
            ref,
            addressed,
            message,
            ref.display,
            ATTACHMENT_INTRO,
            attachment,
            view.revision,
            view.meter,
        )

    # ---- internals ----------------------------------------------------------------------
    def _check_text(self, ref: FileRef, text: object) -> str:
        body = check_body(text)
        self._refuse_secrets(ref, body)
        return body

    def _check_note(self, ref: FileRef, text: object) -> str:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("text", text, "a note must be a non-empty string")
        if len(text) > MAX_NOTE_CHARS:
            raise InvalidInput(
                "text", f"<{len(text):,} characters>", f"a note is at most {MAX_NOTE_CHARS:,}"
            )
        return self._check_text(ref, text)

    def _refuse_secrets(self, ref: FileRef, body: str) -> None:
        rules = find_secrets(body)
        if rules:
            metrics.FILE_WRITES.labels(kind=ref.kind, actor="any", outcome="secret").inc()
            raise InvalidInput(
                "text",
                f"<{len(body):,} characters, secret hidden>",
                f"contains a secret ({', '.join(rules)}); {ref.display} reaches agents'"
                " prompts, so it is refused: remove the secret and save again",
            )

    def _append(self, ref: FileRef, note: str, actor: Actor) -> FileView:
        # Read and write in one write transaction: concurrent appends queue up, none is lost
        # and none is refused as stale.
        with self.store.transaction():
            current = self._row(ref)
            body = append_note(current.body, note)
            check_body(body)
            return self._write(ref, body, current.revision, actor, "append")

    def _write(
        self,
        ref: FileRef,
        body: str,
        base_revision: int,
        actor: Actor,
        action: str,
        restored_from: int | None = None,
    ) -> FileView:
        if ref.kind == "workspace":
            self._ensure_workspace_files()
        self._rate_limit(actor)
        now = self._clock()
        new = NewRevision(body, actor.kind, actor.name, actor.run_id, action, restored_from)
        with self.store.transaction():
            row, written = self.store.write_revision(
                self._key(ref),
                base_revision,
                new,
                now,
                keep_last=KEEP_REVISIONS,
                keep_after=now - KEEP_REVISIONS_YOUNGER_THAN_S,
            )
            if written:
                detail = None if restored_from is None else f"restored revision {restored_from}"
                self._activity(actor, action, ref, row.revision, detail)
        if not written:
            metrics.FILE_WRITES.labels(kind=ref.kind, actor=actor.kind, outcome="stale").inc()
            raise _stale(ref, base_revision, row)
        metrics.FILE_WRITES.labels(kind=ref.kind, actor=actor.kind, outcome="written").inc()
        log.info(
            "context_file.%s file=%s revision=%d by=%s bytes=%d",
            action,
            ref,
            row.revision,
            actor,
            len(body.encode("utf-8")),
        )
        return self.get(ref)

    def _activity(
        self, actor: Actor, action: str, ref: FileRef, revision: int | None, detail: str | None
    ) -> None:
        self.store.add_activity(
            ActivityRow(
                self.workspace,
                self._clock(),
                actor.kind,
                actor.name,
                actor.run_id,
                action,
                str(ref),
                revision,
                detail,
            )
        )

    def _rate_limit(self, actor: Actor) -> None:
        if actor.kind == "system":
            return
        now = self._clock()
        recent = self.store.write_times(self.workspace, actor.kind, actor.name, now - 60.0)
        if len(recent) >= WRITES_PER_MINUTE:
            retry = max(1.0, 60.0 - (now - recent[-WRITES_PER_MINUTE]))
            raise RateLimited(
                f"at most {WRITES_PER_MINUTE} context-file writes per minute",
                retry_after=retry,
                actor=str(actor),
            )


# ---- helpers ------------------------------------------------------------------------------
def _attributed(agent: str | None) -> str:
    if not agent:
        raise NotAttributed("context-file tools need an attributed agent (a run token)")
    return validate_agent_name(agent)


def _revision_number(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput("base_revision", value, "must be a revision number (0 or more)")
    return value


def _stale(ref: FileRef, base: int, current: FileRow) -> StaleRevision:
    return StaleRevision(
        str(ref),
        base_revision=base,
        current_revision=current.revision,
        changed_by=f"{current.author_kind}:{current.author}",
        changed_at=current.updated_at,
    )


def _title(row: FileRow) -> str:
    return resolve("workspace", row.key.name).title


def _either(titles: Sequence[str]) -> str:
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " or " + titles[-1]
