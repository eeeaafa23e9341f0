"""JSON shapes of workspaces, shared by the CLI's ``--json`` output and the HTTP API.

Documented in docs/workspaces.md; fields are only ever added. Times are RFC 3339 UTC.
"""

from __future__ import annotations

from typing import Any

from fleetmem.service.workspaces import Deleted, DeletePreview, Workspace
from fleetmem.surfaces.views import iso


def workspace_view(workspace: Workspace, *, current: str | None = None) -> dict[str, Any]:
    return {
        "id": workspace.id,
        "name": workspace.name,
        "default": workspace.is_default,
        "current": workspace.id == current,
        "created_at": iso(workspace.created_at),
        "updated_at": iso(workspace.updated_at),
    }


def list_view(workspaces: list[Workspace], current: str) -> dict[str, Any]:
    return {
        "current": current,
        "workspaces": [workspace_view(w, current=current) for w in workspaces],
    }


def delete_preview_view(preview: DeletePreview) -> dict[str, Any]:
    return {
        "workspace": workspace_view(preview.workspace),
        "rows": dict(preview.rows),
        "total_rows": sum(preview.rows.values()),
        "tokens": list(preview.tokens),
        "deletes": preview.deletes,
        "untouched": preview.untouched,
        "confirm": preview.confirm,
    }


def deleted_view(done: Deleted) -> dict[str, Any]:
    return {
        "deleted": workspace_view(done.workspace),
        "rows": dict(done.rows),
        "total_rows": sum(done.rows.values()),
        "tokens_revoked": list(done.tokens),
    }
