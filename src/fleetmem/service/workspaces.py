"""Workspaces: create, list, rename and delete the tenants (docs/workspaces.md).

Every surface calls these methods: the CLI (``fleetmem workspaces``), the HTTP API
(``/api/v1/workspaces``) and the web UI's switcher and settings page. The rules for names and
ids are pure (:mod:`fleetmem.core.workspaces`); this module applies them to stored rows, in
one transaction per change so two daemons sharing a PostgreSQL store cannot both take a name.

Deleting a workspace removes every row that belongs to it (the store's
:meth:`~fleetmem.store.workspaces.WorkspaceStore.workspace_delete`) and revokes the API tokens
minted for it; listeners (the composition root's per-workspace service cache) hear of it.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fleetmem.core.facts import DEFAULT_WORKSPACE, check_workspace
from fleetmem.core.workspaces import (
    DELETE_TOUCHES,
    DELETE_UNTOUCHED,
    MAX_WORKSPACES,
    check_delete_confirmation,
    clean_name,
    name_key,
    new_workspace_id,
)
from fleetmem.errors import (
    CapReached,
    DuplicateWorkspace,
    InvalidInput,
    StoreError,
    UnknownWorkspace,
    WorkspaceInUse,
)
from fleetmem.service import api_tokens
from fleetmem.store.workspaces import WorkspaceRow, WorkspaceStore

log = logging.getLogger("fleetmem.workspaces")


class _Store(WorkspaceStore, Protocol):
    def transaction(self) -> AbstractContextManager[object]: ...


@dataclass(frozen=True, slots=True)
class Workspace:
    """A workspace as every surface shows it."""

    id: str
    name: str
    created_at: float
    updated_at: float

    @property
    def is_default(self) -> bool:
        return self.id == DEFAULT_WORKSPACE


@dataclass(frozen=True, slots=True)
class DeletePreview:
    """What deleting a workspace would remove, before it is confirmed."""

    workspace: Workspace
    rows: dict[str, int]
    tokens: tuple[str, ...]
    confirm: str
    deletes: str = DELETE_TOUCHES
    untouched: str = DELETE_UNTOUCHED


@dataclass(frozen=True, slots=True)
class Deleted:
    """A deleted workspace: the rows removed per table and the minted tokens revoked."""

    workspace: Workspace
    rows: dict[str, int]
    tokens: tuple[str, ...]


def _is_id(value: object) -> bool:
    """Whether ``value`` could be a workspace id at all (anything else is simply unknown)."""
    try:
        check_workspace(value)
    except InvalidInput:
        return False
    return True


def _view(row: WorkspaceRow) -> Workspace:
    return Workspace(row.id, row.name, row.created_at, row.updated_at)


class WorkspaceService:
    """The workspaces of one store (and the API tokens minted in one home)."""

    def __init__(
        self,
        store: _Store,
        home: Path,
        *,
        clock: Callable[[], float] = time.time,
        suffix: Callable[[], str] = lambda: secrets.token_hex(3),
        agents: Callable[[], Mapping[str, str]] = dict,
    ) -> None:
        self.store = store
        #: Agent name -> the workspace (id or name) its configuration binds it to.
        self._agents = agents
        self.home = home
        self._clock = clock
        self._suffix = suffix
        self._listeners: list[Callable[[str], object]] = []
        self._lock = threading.Lock()

    def on_deleted(self, listener: Callable[[str], object]) -> None:
        """Call ``listener(workspace_id)`` after a workspace is deleted."""
        with self._lock:
            self._listeners.append(listener)

    # ---- reading ----------------------------------------------------------------------
    def list(self) -> list[Workspace]:
        """Every workspace, oldest first (``default`` is the oldest)."""
        return [_view(r) for r in self.store.workspace_list()]

    def exists(self, workspace_id: str) -> bool:
        return self.store.workspace_get(workspace_id) is not None

    def still_there(self, workspace_id: str) -> bool:
        """Whether a caller bound to ``workspace_id`` may go on: it exists, or the store cannot
        be asked now (a database outage). Checking credentials must not turn an outage into a
        server error: the request then degrades or is refused with 503 as any other is."""
        try:
            return self.exists(workspace_id)
        except StoreError as exc:
            log.info("workspace.check_skipped workspace=%s error=%s", workspace_id, exc)
            return True

    def get(self, workspace_id: object) -> Workspace:
        """The workspace with this id; UnknownWorkspace (404) for any other value."""
        if not _is_id(workspace_id):
            raise UnknownWorkspace(str(workspace_id)[:64])
        assert isinstance(workspace_id, str)
        row = self.store.workspace_get(workspace_id)
        if row is None:
            raise UnknownWorkspace(workspace_id)
        return _view(row)

    def resolve(self, ref: object, field: str = "workspace") -> Workspace:
        """The workspace a person named: by id, else by name (as names compare). An empty
        or non-text reference is bad input naming ``field``; no match is UnknownWorkspace."""
        if not isinstance(ref, str) or not ref.strip():
            raise InvalidInput(field, ref, "name a workspace by its id or its name")
        if _is_id(ref):
            row = self.store.workspace_get(ref)
            if row is not None:
                return _view(row)
        try:
            key = name_key(clean_name(ref, field))
        except InvalidInput:
            raise UnknownWorkspace(ref[:64]) from None
        for row in self.store.workspace_list():
            if name_key(row.name) == key:
                return _view(row)
        raise UnknownWorkspace(ref[:64])

    def bound_agents(self, workspace_id: str) -> Sequence[str]:
        """The agents whose ``[agent.NAME] workspace`` names this workspace (by id or name)."""
        found = []
        for agent, ref in sorted(self._agents().items()):
            try:
                if self.resolve(ref).id == workspace_id:
                    found.append(agent)
            except (InvalidInput, UnknownWorkspace):
                continue  # names no workspace at all: not this one
        return found

    # ---- changes ----------------------------------------------------------------------
    def create(self, name: object) -> Workspace:
        """A new, empty workspace named ``name`` (see :func:`clean_name`); refused when the
        name reads as another workspace's name or id, or when the store holds
        :data:`MAX_WORKSPACES` already."""
        clean = clean_name(name)
        now = self._clock()
        with self.store.transaction():
            rows = self.store.workspace_list()
            if len(rows) >= MAX_WORKSPACES:
                raise CapReached(
                    f"at most {MAX_WORKSPACES} workspaces; delete one first",
                    existing=str(len(rows)),
                )
            self._check_free(clean, rows, keep=None)
            taken = {r.id for r in rows}
            workspace_id = new_workspace_id(clean, self._suffix())
            while workspace_id in taken:  # six hex digits: a repeat is rare, not impossible
                workspace_id = new_workspace_id(clean, self._suffix())
            row = WorkspaceRow(check_workspace(workspace_id), clean, now, now)
            self.store.workspace_insert(row)
        log.info("workspace.created id=%s", row.id)
        return _view(row)

    def rename(self, workspace_id: object, name: object) -> Workspace:
        """Give the workspace a new name; its id, tokens and data stay as they are."""
        clean = clean_name(name)
        with self.store.transaction():
            current = self.get(workspace_id)
            self._check_free(clean, self.store.workspace_list(), keep=current.id)
            row = self.store.workspace_rename(current.id, clean, self._clock())
        if row is None:
            raise UnknownWorkspace(current.id)
        log.info("workspace.renamed id=%s", row.id)
        return _view(row)

    def _check_free(self, clean: str, rows: Sequence[WorkspaceRow], keep: str | None) -> None:
        key = name_key(clean)
        for row in rows:
            if row.id == keep:
                continue
            if name_key(row.name) == key:
                raise DuplicateWorkspace(
                    f"name = {clean!r}: workspace {row.id} is already named {row.name!r}; "
                    "names must differ by more than case, accents, look-alike letters or "
                    "separators",
                    existing=row.id,
                )
            if name_key(row.id) == key:
                raise DuplicateWorkspace(
                    f"name = {clean!r}: reads as the id of workspace {row.name!r}; pick "
                    "another name",
                    existing=row.id,
                )

    def delete_preview(self, workspace_id: object) -> DeletePreview:
        """What :meth:`delete` would remove: rows per table, the minted tokens it revokes,
        and the name to type to confirm."""
        current = self._deletable(workspace_id)
        return DeletePreview(
            current,
            self.store.workspace_row_counts(current.id),
            tuple(t.name for t in api_tokens.minted_for_workspace(self.home, current.id)),
            current.name,
        )

    def delete(self, workspace_id: object, confirm: object) -> Deleted:
        """Delete the workspace and everything in it, only when ``confirm`` is its name.

        The default workspace (always there, and the last one standing) cannot be deleted.
        Its facts, context files, proposals and activity go in one transaction, the API
        tokens minted for it are revoked, and nothing of it can be restored.
        """
        current = self._deletable(workspace_id)
        check_delete_confirmation(current.name, confirm)
        removed = self.store.workspace_delete(current.id)
        if removed is None:
            raise UnknownWorkspace(current.id)
        revoked = api_tokens.revoke_for_workspace(self.home, current.id)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(current.id)
        log.info("workspace.deleted id=%s rows=%d", current.id, sum(removed.values()))
        return Deleted(current, removed, tuple(t.name for t in revoked))

    def _deletable(self, workspace_id: object) -> Workspace:
        current = self.get(workspace_id)
        if current.is_default:
            raise InvalidInput(
                "workspace",
                current.id,
                "the default workspace cannot be deleted: it is always there (the last "
                "workspace standing), and existing tokens, agents' runs and `make serve` use "
                "it; rename it, or forget its facts with Forget all",
            )
        agents = self.bound_agents(current.id)
        if agents:
            # Deleting it would leave those agents' runs without memory: the configuration
            # is changed first, on purpose, so a workspace in use never vanishes by accident.
            keys = ", ".join(f"agent.{name}.workspace" for name in agents)
            raise WorkspaceInUse(
                f"workspace {current.name!r} cannot be deleted: "
                f"{'agents' if len(agents) > 1 else 'agent'} {', '.join(agents)} "
                f"{'act' if len(agents) > 1 else 'acts'} in it ({keys}); "
                "bind them to another workspace (or remove the key) in the configuration "
                "first",
                existing=current.id,
            )
        return current
