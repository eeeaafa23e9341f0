"""``fleetmem --server URL files|report|context``: context files through ``/api/v1/files``
and ``/api/v1/agents`` (files_routes), printed by ``files_cmds``' own text functions.

A stale save (409) prints what the local path prints (the current revision, who changed it,
where the refused text is kept) and exits with the same conflict code.
"""

from __future__ import annotations

import argparse
import sys
import urllib.parse
from collections.abc import Callable
from typing import Any

from fleetmem.surfaces.cli import files_cmds as fc
from fleetmem.surfaces.cli.common import EXIT_OK, emit
from fleetmem.surfaces.cli.remote import RemoteClient, rebuild_error


def _q(value: str | int) -> str:
    return urllib.parse.quote(str(value), safe="")


def _file(args: argparse.Namespace, suffix: str = "") -> str:
    return f"/api/v1/files/{_q(args.name)}{suffix}"


def _owner(args: argparse.Namespace) -> dict[str, Any]:
    """``--agent`` / ``--project`` as the routes' ``agent`` / ``repo`` query parameters."""
    return {"agent": getattr(args, "agent", None), "repo": getattr(args, "project", None)}


def _user(args: argparse.Namespace) -> str:
    # Named explicitly: the API's default author is "api", the CLI's is your login name.
    return str(getattr(args, "user", None) or fc._login())


def _list(client: RemoteClient, args: argparse.Namespace) -> int:
    if args.agent or args.project:
        found = client.call("GET", "/api/v1/files", params=_owner(args))
        emit(args, found["files"], fc._list_text)
        return EXIT_OK
    emit(args, client.call("GET", "/api/v1/files"), fc.listing_text)
    return EXIT_OK


def _show(client: RemoteClient, args: argparse.Namespace) -> int:
    if args.revision is not None:
        row = client.call("GET", _file(args, f"/revisions/{args.revision}"), params=_owner(args))
        emit(args, row, fc.revision_text)
        return EXIT_OK
    params = {**_owner(args), "preview": True if args.preview else None}
    emit(args, client.call("GET", _file(args), params=params), fc.show_text)
    return EXIT_OK


def _edit(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.errors import StaleRevision

    text, path = fc._read_source(args.source)
    body = {"text": text, "base_revision": args.base, "user": _user(args)}
    answer = client.call("PUT", _file(args), params=_owner(args), body=body, keep_conflict=True)
    err = answer.get("error")
    if isinstance(err, dict):
        if err.get("code") == StaleRevision.code and "current_revision" in err:
            ref = _file_ref(args)
            kept = path if path is not None else fc._keep(client.home, str(ref), args.base, text)
            print(
                fc.stale_text(ref, err["current_revision"], err.get("changed_by", "?"), kept),
                file=sys.stderr,
            )
        raise rebuild_error(409, err)
    emit(args, answer, fc.saved_text)
    return EXIT_OK


def _file_ref(args: argparse.Namespace) -> Any:
    """The file's reference, as the local path names it in the stale-save message."""
    from fleetmem.core.contextfiles import FileRef, resolve

    if args.agent:
        return FileRef(resolve("agent", args.name), args.agent)
    if args.project:
        return FileRef(resolve("project", args.name), args.project)
    return FileRef(resolve("workspace", args.name))


def _mode(client: RemoteClient, args: argparse.Namespace) -> int:
    body = {"mode": args.mode, "user": _user(args)}
    emit(args, client.call("PUT", _file(args, "/mode"), body=body), fc.saved_text)
    return EXIT_OK


def _history(client: RemoteClient, args: argparse.Namespace) -> int:
    found = client.call("GET", _file(args, "/revisions"), params=_owner(args))
    emit(args, found["revisions"], fc.history_text)
    return EXIT_OK


def _restore(client: RemoteClient, args: argparse.Namespace) -> int:
    path = _file(args, f"/revisions/{args.revision}/restore")
    view = client.call("POST", path, params=_owner(args), body={"user": _user(args)})
    emit(args, view, fc.saved_text)
    return EXIT_OK


def _ask(client: RemoteClient, args: argparse.Namespace) -> int:
    params = {**_owner(args), "to": args.to}
    emit(args, client.call("GET", _file(args, "/ask"), params=params), fc.ask_text)
    return EXIT_OK


def _activity(client: RemoteClient, args: argparse.Namespace) -> int:
    found = client.call("GET", "/api/v1/context-files/activity", params={"limit": args.limit})
    emit(args, found["activity"], fc.activity_text)
    return EXIT_OK


def _loads(client: RemoteClient, args: argparse.Namespace) -> int:
    found = client.call("GET", f"/api/v1/runs/{_q(args.run_id)}/context-loads")
    emit(args, found["loads"], fc.loads_text)
    return EXIT_OK


def _report(client: RemoteClient, args: argparse.Namespace) -> int:
    path = f"/api/v1/agents/{_q(args.agent)}/context-report"
    emit(args, client.call("GET", path, params={"repo": args.repo}), fc.report_text)
    return EXIT_OK


def _context(client: RemoteClient, args: argparse.Namespace) -> int:
    path = f"/api/v1/agents/{_q(args.agent)}/context"
    data = client.call("GET", path, params={"repo": args.repo})
    if args.json:
        emit(args, data, lambda d: str(d["text"]))
    else:
        sys.stdout.write(data["text"])  # byte for byte, as the local command writes it
    return EXIT_OK


#: ``files ACTION``, ``report`` and ``context`` -> their operations through the daemon.
FILE_OPERATIONS: dict[str, Callable[[RemoteClient, argparse.Namespace], int]] = {
    "files list": _list,
    "files show": _show,
    "files edit": _edit,
    "files mode": _mode,
    "files history": _history,
    "files restore": _restore,
    "files ask": _ask,
    "files activity": _activity,
    "files loads": _loads,
    "report": _report,
    "context": _context,
}
