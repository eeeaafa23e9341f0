"""The workspace store protocol: the rows of the tenants and what deleting one removes.

A workspace's data lives in the tables of :data:`WORKSPACE_TABLES` (by their ``workspace``
column) and of :data:`FACT_TABLES` (by the id of one of its facts, ids being unique across
workspaces). Deleting a workspace removes its rows from every one of them, its row in
``workspaces``, and the cached vectors of its facts' bodies that nothing else uses, in one
transaction. A test reads each store's schema and fails when a table with a ``workspace``
column is missing from the list, so a new workspace-owned table cannot be left behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

#: Tables whose rows belong to a workspace through their ``workspace`` column.
WORKSPACE_TABLES: Final = (
    "facts",
    "fact_journal",
    "fact_exposures",
    "fact_votes",
    "fact_rate",
    "fact_pairs_kept",
    "context_files",
    "context_file_revisions",
    "context_file_activity",
    "run_context_loads",
    "notes_proposals",
)
#: Tables whose rows belong to a workspace through the fact they are about (``fact_id``).
FACT_TABLES: Final = ("fact_revisions", "fact_provenance", "fact_vectors")


@dataclass(frozen=True, slots=True)
class WorkspaceRow:
    """One workspace: ``id`` is fixed for life (the value of every ``workspace`` column),
    ``name`` is what people see and may change."""

    id: str
    name: str
    created_at: float
    updated_at: float


class WorkspaceStore(Protocol):
    """Persistence of the workspaces themselves; everything else stays in its own store."""

    def workspace_list(self) -> list[WorkspaceRow]:
        """Every workspace, oldest first (ties by id)."""
        ...

    def workspace_get(self, workspace_id: str) -> WorkspaceRow | None: ...
    def workspace_insert(self, row: WorkspaceRow) -> None:
        """Add a workspace; the caller has checked its id and name are free (in one
        transaction with this call)."""
        ...

    def workspace_rename(self, workspace_id: str, name: str, now: float) -> WorkspaceRow | None:
        """Give a workspace a new name; None when there is no such workspace."""
        ...

    def workspace_adopt(self, now: float) -> list[str]:
        """Give every workspace id found in a table of :data:`WORKSPACE_TABLES` without a row
        of its own (rows an import brought in) a row named by its id; the ids adopted."""
        ...

    def workspace_row_counts(self, workspace_id: str) -> dict[str, int]:
        """How many rows of each table of :data:`WORKSPACE_TABLES` and :data:`FACT_TABLES`
        belong to the workspace (every table named, zeros included)."""
        ...

    def workspace_delete(self, workspace_id: str) -> dict[str, int] | None:
        """Delete the workspace and every row that belongs to it, in one transaction; the
        rows removed per table (as :meth:`workspace_row_counts` names them), or None when
        there is no such workspace."""
        ...
