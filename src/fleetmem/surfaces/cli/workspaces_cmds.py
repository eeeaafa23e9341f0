"""``fleetmem workspaces``: list, create, rename and delete workspaces (docs/workspaces.md).

A workspace is named by its id or its name. ``delete`` without ``--confirm`` prints what it
would remove and exits 2; with ``--confirm NAME`` (the workspace's name, exactly) it deletes
the workspace and everything in it. The global ``--workspace`` option (or
``$FLEETMEM_WORKSPACE``) makes every other command act in another workspace.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from fleetmem.surfaces import workspace_views as wv
from fleetmem.surfaces.cli.common import EXIT_INPUT, EXIT_OK, emit

#: Selects the workspace commands act in, like ``--workspace``.
WORKSPACE_ENV = "FLEETMEM_WORKSPACE"


def workspace_ref(args: argparse.Namespace, environ: Mapping[str, str]) -> str | None:
    """The workspace a command line names: ``--workspace``, else ``$FLEETMEM_WORKSPACE``."""
    ref: str | None = getattr(args, "workspace", None) or environ.get(WORKSPACE_ENV) or None
    return ref


def register(sub: Any) -> dict[str, Any]:
    w = sub.add_parser("workspaces", help="list, create, rename or delete workspaces (the tenants)")
    verbs = w.add_subparsers(dest="workspaces_command", required=True, metavar="ACTION")
    listing = verbs.add_parser("list", help="every workspace: id, name, the current one")
    listing.add_argument("--json", action="store_true")
    create = verbs.add_parser("create", help="a new, empty workspace")
    create.add_argument("name", help="1 to 64 characters; what people see")
    create.add_argument("--json", action="store_true")
    rename = verbs.add_parser("rename", help="give a workspace a new name (its id stays)")
    rename.add_argument("target", metavar="WORKSPACE", help="its id or its current name")
    rename.add_argument("name", help="the new name")
    rename.add_argument("--json", action="store_true")
    delete = verbs.add_parser(
        "delete", help="delete a workspace and everything in it (needs --confirm NAME)"
    )
    delete.add_argument("target", metavar="WORKSPACE", help="its id or its name")
    delete.add_argument("--confirm", help="the workspace's name, exactly, to go ahead")
    delete.add_argument("--json", action="store_true")
    return {"workspaces": _cmd_workspaces}


def _cmd_workspaces(app: Any, args: argparse.Namespace) -> int:
    service = app.workspaces
    action = args.workspaces_command
    if action == "list":
        emit(args, wv.list_view(service.list(), app.workspace), list_text)
    elif action == "create":
        emit(args, wv.workspace_view(service.create(args.name)), created_text)
    elif action == "rename":
        target = service.resolve(args.target)
        emit(args, wv.workspace_view(service.rename(target.id, args.name)), renamed_text)
    else:
        target = service.resolve(args.target)
        if args.confirm is None:
            print(
                preview_text(wv.delete_preview_view(service.delete_preview(target.id))),
                file=sys.stderr,
            )
            return EXIT_INPUT
        emit(args, wv.deleted_view(service.delete(target.id, args.confirm)), deleted_text)
    return EXIT_OK


def list_text(d: dict[str, Any]) -> str:
    width = max(len(w["id"]) for w in d["workspaces"])
    lines = []
    for w in d["workspaces"]:
        mark = "*" if w["current"] else " "
        note = "  (default)" if w["default"] else ""
        lines.append(f"{mark} {w['id']:<{width}}  {w['name']}{note}")
    return "\n".join(lines)


def created_text(d: dict[str, Any]) -> str:
    return (
        f"created workspace {d['name']} (id {d['id']}); act in it with "
        f"`fleetmem --workspace {d['id']} ...`, or mint a token for it with "
        f"`fleetmem token create --tier read --workspace {d['id']}`"
    )


def renamed_text(d: dict[str, Any]) -> str:
    return f"workspace {d['id']} is now named {d['name']}"


def preview_text(d: dict[str, Any]) -> str:
    """What ``delete`` without ``--confirm`` prints (to stderr) before refusing."""
    rows = d["rows"]
    facts, files = rows.get("facts", 0), rows.get("context_files", 0)
    tokens = ", ".join(d["tokens"]) or "none"
    name = d["workspace"]["name"]
    return (
        f"This deletes workspace {name} (id {d['workspace']['id']}): {_n(facts, 'fact')}, "
        f"{_n(files, 'context file')}, {_n(d['total_rows'], 'row')} in all; API tokens "
        f"revoked: {tokens}.\n"
        f"{d['deletes']}\n{d['untouched']}\n"
        f"To go ahead: fleetmem workspaces delete {d['workspace']['id']} --confirm {_quoted(name)}"
    )


def deleted_text(d: dict[str, Any]) -> str:
    tokens = ", ".join(d["tokens_revoked"]) or "none"
    return (
        f"deleted workspace {d['deleted']['name']} (id {d['deleted']['id']}): "
        f"{_n(d['total_rows'], 'row')} removed; API tokens revoked: {tokens}"
    )


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)
