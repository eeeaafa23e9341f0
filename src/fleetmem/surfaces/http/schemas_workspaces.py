"""OpenAPI models of workspaces, mirroring :mod:`fleetmem.surfaces.workspace_views`."""

from __future__ import annotations

from pydantic import Field

from fleetmem.surfaces.http.schemas import Open, Strict


class Workspace(Strict):
    id: str = Field(description="fixed for life: what tokens, sessions and paths name")
    name: str = Field(description="what people see; may change (rename)")
    default: bool = Field(description="the default workspace (never deleted)")
    current: bool = Field(description="the workspace this caller acts in")
    created_at: str
    updated_at: str


class WorkspaceList(Strict):
    current: str = Field(description="the id of the workspace this caller acts in")
    workspaces: list[Workspace] = Field(
        description="every workspace for the operator; a token bound to one sees that one"
    )


class WorkspaceNameIn(Strict):
    name: str = Field(
        description="1 to 64 characters once trimmed, with a letter or a digit; no control or"
        " invisible characters; must not read the same as another workspace's name or id"
    )


class RowCounts(Open):
    """Rows per table that belong to the workspace."""


class DeletePreview(Strict):
    workspace: Workspace
    rows: RowCounts
    total_rows: int
    tokens: list[str] = Field(description="minted API tokens bound to it (revoked with it)")
    deletes: str
    untouched: str
    confirm: str = Field(description="the workspace's name: send it as confirm")


class DeleteIn(Strict):
    confirm: str = Field(description="the workspace's name, exactly")


class Deleted(Strict):
    deleted: Workspace
    rows: RowCounts
    total_rows: int
    tokens_revoked: list[str]
