"""The commands ``fleetmem --server URL`` sends to a daemon, one function per command.

Each operation makes the request(s) the matching API route serves, turns the answer into the
exact dict the local command emits (the routes wrap lists in an object: ``{"runs": [...]}``),
and prints it with the local command's own text function. A command missing from
:data:`OPERATIONS` has no API route: it refuses with :class:`LocalOnly` (exit 2) instead of
quietly opening the local store.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import urllib.parse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from fleetmem.config import default_home
from fleetmem.errors import InvalidInput, UnknownWorkspace
from fleetmem.surfaces.cli.common import EXIT_FAIL, EXIT_INPUT, EXIT_OK, emit
from fleetmem.surfaces.cli.facts_actions import FACT_OPERATIONS
from fleetmem.surfaces.cli.mcp_cmds import print_briefing
from fleetmem.surfaces.cli.memory_cmds import recall_text
from fleetmem.surfaces.cli.remote import (
    SERVER_ENV,
    LocalOnly,
    RemoteClient,
    resolve_token,
    server_url,
)
from fleetmem.surfaces.cli.remote_files import FILE_OPERATIONS
from fleetmem.surfaces.cli.workspaces_cmds import workspace_ref

Operation = Callable[[RemoteClient, argparse.Namespace], int]

#: Subcommand attributes of commands that have actions (``facts add``, ``runs list``, ...).
_ACTION_ATTRS = (
    "facts_command",
    "files_command",
    "runs_command",
    "provider_command",
    "workspaces_command",
)

#: Why some commands stay local, beyond "no API route" (printed in the refusal).
_WHY_LOCAL: dict[str, str] = {
    "serve": "it is the daemon",
    "runs touch": "the API has no route to record edited files",
    "runs import": "it reads session logs on this machine",
    "hook": "agent hooks always act on this machine",
    "export": "it reads the local store; run it on the daemon's machine",
    "import": "it writes the local store; run it on the daemon's machine",
    "backup": "it copies the local store file; run it on the daemon's machine",
}


def command_name(args: argparse.Namespace) -> str:
    """``facts add``, ``status``: the command as the user typed it, for routing and errors."""
    for attr in _ACTION_ATTRS:
        action = getattr(args, attr, None)
        if action:
            return f"{args.command} {action}"
    return str(args.command)


def run_remote(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Run the command of ``args`` through the daemon named by ``--server`` (else
    ``$FLEETMEM_SERVER``); a command with no API route refuses, it never falls back."""
    if args.server is not None:
        url = server_url(args.server, "--server")
    else:
        url = server_url(environ.get(SERVER_ENV, ""), f"${SERVER_ENV}")
    name = command_name(args)
    operation = OPERATIONS.get(name)
    if operation is None:
        raise LocalOnly(name, _WHY_LOCAL.get(name, "the API has no route for it"))
    home = Path(args.home) if args.home else default_home(environ)
    token, token_source = resolve_token(environ, home)
    client = RemoteClient(url, token, token_source, home=home)
    try:
        ref = workspace_ref(args, environ)
        if ref is not None:
            _check_workspace(client, ref)
        return operation(client, args)
    finally:
        client.close()


def _quoted(value: str) -> str:
    """One path segment: ids typed by people must not change the route they reach."""
    return urllib.parse.quote(value, safe="")


# ---- memory: status, episodes, forget, runs ingest ------------------------------------------
def _status(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.memory_cmds import _status_text

    emit(args, client.call("GET", "/api/v1/status"), _status_text)
    return EXIT_OK


def _episodes(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.errors import InvalidInput
    from fleetmem.surfaces.cli.memory_cmds import _show_text, episodes_text

    if args.action:
        if len(args.action) != 2 or args.action[0] != "show":
            raise InvalidInput("episodes", " ".join(args.action), "use `episodes show ID`")
        detail = client.call("GET", f"/api/v1/episodes/{_quoted(args.action[1])}")
        emit(args, detail, _show_text)
        return EXIT_OK
    params = {"agent": args.agent, "repo": args.repo, "since": args.since, "limit": args.limit}
    listed = client.call("GET", "/api/v1/episodes", params=params)
    emit(args, listed["episodes"], episodes_text)
    return EXIT_OK


def _forget(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.memory_cmds import forget_text

    if getattr(args, "run", None) is not None:
        raise InvalidInput(
            "run", args.run, "forgetting a whole run is not offered over --server: run it locally"
        )
    if args.episode_id is None:
        raise InvalidInput("episode_id", None, "give an episode id")
    emit(args, client.call("DELETE", f"/api/v1/episodes/{_quoted(args.episode_id)}"), forget_text)
    return EXIT_OK


def _ingest(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.memory_cmds import _read_record, ingest_text

    result = client.call("POST", "/api/v1/runs", content=_read_record(args.file))
    emit(args, result, ingest_text)
    return EXIT_OK


# ---- runs and presence -----------------------------------------------------------------------
def _open(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.runs_cmds import _opened_text

    body = {
        "agent": args.agent,
        "repo": args.repo,
        # The same absolute path the local path resolves; the daemon finds the repository.
        "workdir": os.path.abspath(args.workdir) if args.workdir else None,
        "branch": args.branch,
        "adapter": args.adapter,
        "run_id": args.run_id,
        "source": args.source,
    }
    opened = client.call("POST", "/api/v1/runs/open", body=body)
    emit(args, opened, _opened_text)
    return EXIT_OK


def _heartbeat(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.runs_cmds import TOKEN_ENV, _live_text, _token

    # The route authenticates the run by its own token, in place of the control token.
    token = _token(args)
    source = f"the run token came from --token or ${TOKEN_ENV}"
    body = {"files": args.files, "branch": args.branch}
    live = client.call("POST", "/api/v1/runs/heartbeat", body=body, bearer=(token, source))
    emit(args, live, _live_text)
    return EXIT_OK


def _runs_list(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.runs_cmds import _list_text

    params = {"repo": args.repo, "agent": args.agent, "limit": args.limit}
    emit(args, client.call("GET", "/api/v1/runs", params=params)["runs"], _list_text)
    return EXIT_OK


def _runs_show(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.runs_cmds import _show_text

    emit(args, client.call("GET", f"/api/v1/runs/{_quoted(args.run_id)}"), _show_text)
    return EXIT_OK


def _presence(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.runs_cmds import _presence_text

    data = client.call("GET", "/api/v1/presence", params={"repo": args.repo})
    # "seen 12s ago" is measured on this machine's clock, as the local path does.
    now = time.time()
    emit(args, data, lambda d: _presence_text(d, now))
    return EXIT_OK


def _recall(client: RemoteClient, args: argparse.Namespace) -> int:
    body = {"query": args.query, "paths": args.paths, "limit": args.limit}
    if getattr(args, "all_repos", False):
        body["all_repos"] = True
    elif args.repo is not None:
        body["repo"] = args.repo
    else:
        body["agent"] = args.as_agent
    emit(args, client.call("POST", "/api/v1/recall", body=body), recall_text)
    return EXIT_OK


def _provider_check(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.provider_cmds import check_text

    body = {} if args.provider is None else {"provider": args.provider}
    report = client.call("POST", "/api/v1/provider/check", body=body)
    emit(args, report, check_text)
    return EXIT_OK if report["passed"] else EXIT_FAIL


def _briefing(client: RemoteClient, args: argparse.Namespace) -> int:
    path = f"/api/v1/agents/{_quoted(args.agent)}/briefing"
    data = client.call("GET", path, params={"repo": args.repo, "branch": args.branch})
    return print_briefing(args, data)


def _tui(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli.tui_cmds import run_tui
    from fleetmem.surfaces.tui.source import RemoteSource

    return run_tui(RemoteSource(client))


# ---- workspaces -------------------------------------------------------------------------------
def _find_workspace(client: RemoteClient, ref: str) -> tuple[dict[str, Any], str]:
    """The workspace ``ref`` names (by id, else by name as names compare) among those the
    token may see, and the id of the one the token acts in."""
    from fleetmem.core.workspaces import clean_name, name_key

    listed = client.call("GET", "/api/v1/workspaces")
    for row in listed["workspaces"]:
        if row["id"] == ref:
            return row, str(listed["current"])
    try:
        key = name_key(clean_name(ref, "--workspace"))
    except InvalidInput:
        key = None
    for row in listed["workspaces"]:
        if key is not None and name_key(row["name"]) == key:
            return row, str(listed["current"])
    raise UnknownWorkspace(ref[:64])


def _check_workspace(client: RemoteClient, ref: str) -> None:
    """A token acts in the one workspace it is bound to: ``--workspace`` naming another is
    refused, saying how to get a token for it."""
    try:
        row, current = _find_workspace(client, ref)
    except UnknownWorkspace:
        row, current = None, ""
    if row is None or row["id"] != current:
        current = current or str(client.call("GET", "/api/v1/workspaces")["current"])
        raise InvalidInput(
            "--workspace",
            ref,
            f"the token sent acts in workspace {current} only; mint a token bound to the "
            f"workspace you want (`fleetmem token create --workspace {ref}` on the daemon's "
            "machine) and pass it as $FLEETMEM_TOKEN",
        )


def _workspaces(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.cli import workspaces_cmds as wc

    action = args.workspaces_command
    if action == "list":
        emit(args, client.call("GET", "/api/v1/workspaces"), wc.list_text)
        return EXIT_OK
    if action == "create":
        made = client.call("POST", "/api/v1/workspaces", body={"name": args.name})
        made.pop("current", None)
        emit(args, made, wc.created_text)
        return EXIT_OK
    row, _current = _find_workspace(client, args.target)
    path = f"/api/v1/workspaces/{_quoted(row['id'])}"
    if action == "rename":
        emit(args, client.call("PATCH", path, body={"name": args.name}), wc.renamed_text)
        return EXIT_OK
    if args.confirm is None:
        print(wc.preview_text(client.call("GET", path + "/delete")), file=sys.stderr)
        return EXIT_INPUT
    done = client.call("POST", path + "/delete", body={"confirm": args.confirm})
    emit(args, done, wc.deleted_text)
    return EXIT_OK


#: Every command that works through a daemon, by its name as typed.
OPERATIONS: dict[str, Operation] = {
    "tui": _tui,
    "status": _status,
    "episodes": _episodes,
    "forget": _forget,
    "runs ingest": _ingest,
    "runs open": _open,
    "runs heartbeat": _heartbeat,
    "runs list": _runs_list,
    "runs show": _runs_show,
    "presence": _presence,
    "briefing": _briefing,
    "recall": _recall,
    "provider check": _provider_check,
    "workspaces list": _workspaces,
    "workspaces create": _workspaces,
    "workspaces rename": _workspaces,
    "workspaces delete": _workspaces,
    **FACT_OPERATIONS,
    **FILE_OPERATIONS,
}
