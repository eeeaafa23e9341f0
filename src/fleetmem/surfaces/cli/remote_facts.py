"""``fleetmem --server URL facts ...``: each action through ``/api/v1/facts`` (facts_routes),
printed by ``facts_cmds``' own text functions. Which action uses which operation is the one
table in ``facts_actions``; ``facts sweep`` has no route there.
"""

from __future__ import annotations

import argparse
import sys
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fleetmem.surfaces.cli import facts_cmds as fc
from fleetmem.surfaces.cli.common import EXIT_INPUT, EXIT_OK, emit

if TYPE_CHECKING:  # httpx is imported only when a command really goes to a daemon
    from fleetmem.surfaces.cli.remote import RemoteClient

_FACTS = "/api/v1/facts"
Operation = Callable[["RemoteClient", argparse.Namespace], int]


def _one(args: argparse.Namespace, suffix: str = "") -> str:
    return f"{_FACTS}/{urllib.parse.quote(args.fact_id, safe='')}{suffix}"


def _add(client: RemoteClient, args: argparse.Namespace) -> int:
    body = {
        "body": args.text,
        "kind": args.kind,
        "scope": args.scope,
        "pin": args.pin,
        "source": args.source,
        "idempotency_key": args.idempotency_key,
    }
    emit(args, client.call("POST", _FACTS, body=body), fc._added_text)
    return EXIT_OK


def _list(client: RemoteClient, args: argparse.Namespace) -> int:
    params = {
        "status": args.status,
        "scope": args.scope,
        "pinned": True if args.pinned else None,
        "limit": args.limit,
        "cursor": args.cursor,
    }
    emit(args, client.call("GET", _FACTS, params=params), fc._list_text)
    return EXIT_OK


def _search(client: RemoteClient, args: argparse.Namespace) -> int:
    params = {"q": args.query, "status": args.status, "scope": args.scope}
    emit(args, client.call("GET", f"{_FACTS}/search", params=params), fc._search_text)
    return EXIT_OK


def _show(client: RemoteClient, args: argparse.Namespace) -> int:
    emit(args, client.call("GET", _one(args)), fc._show_text)
    return EXIT_OK


def _edit(client: RemoteClient, args: argparse.Namespace) -> int:
    if fc.nothing_to_edit(args):
        return EXIT_INPUT
    out: dict[str, Any] = {"changed": False, "runs_in_flight": 0}
    if args.text is not None:
        out = client.call("PATCH", _one(args), body={"body": args.text})
    if args.scope is not None:
        fact = client.call("PUT", _one(args, "/scope"), body={"scope": args.scope})
        out = fc.with_scope(out, fact)
    emit(args, out, fc.edit_text)
    return EXIT_OK


def _forget(client: RemoteClient, args: argparse.Namespace) -> int:
    emit(args, client.call("DELETE", _one(args)), fc.forget_text)
    return EXIT_OK


def _restore(client: RemoteClient, args: argparse.Namespace) -> int:
    emit(args, client.call("POST", _one(args, "/restore")), fc.restore_text)
    return EXIT_OK


def _pin(client: RemoteClient, args: argparse.Namespace) -> int:
    method = "POST" if args.facts_command == "pin" else "DELETE"
    emit(args, client.call(method, _one(args, "/pin")), fc.pin_text)
    return EXIT_OK


def _review(client: RemoteClient, args: argparse.Namespace) -> int:
    body = {"action": args.action, "into": args.into}
    emit(args, client.call("POST", _one(args, "/review"), body=body), fc.review_text)
    return EXIT_OK


def _history(client: RemoteClient, args: argparse.Namespace) -> int:
    emit(args, client.call("GET", _one(args, "/history")), fc._history_text)
    return EXIT_OK


def _votes(client: RemoteClient, args: argparse.Namespace) -> int:
    emit(args, client.call("GET", _one(args, "/votes")), fc._votes_text)
    return EXIT_OK


def _forget_all(client: RemoteClient, args: argparse.Namespace) -> int:
    from fleetmem.core.facts import DEFAULT_WORKSPACE

    if args.confirm is None:
        preview = client.call("GET", f"{_FACTS}/forget-all")
        # The API serves the default workspace's facts; a preview that names its workspace
        # (a later API) is believed over that.
        workspace = preview.get("workspace", DEFAULT_WORKSPACE)
        print(fc.forget_all_preview_text(preview["live"], workspace), file=sys.stderr)
        return EXIT_INPUT
    result = client.call("POST", f"{_FACTS}/forget-all", body={"confirm": args.confirm})
    emit(args, result, fc.forget_all_text)
    return EXIT_OK


def _trace(client: RemoteClient, args: argparse.Namespace) -> int:
    found = client.call("GET", f"{_FACTS}/offered", params={"run_id": args.run_id})
    emit(args, found["offered"], lambda ds: fc.trace_text(ds, args.run_id))
    return EXIT_OK


def rate_limited_as_locally(op: Operation) -> Operation:
    """A 429 is told as the local command tells it (when to retry; its own exit code)."""

    def run(client: RemoteClient, args: argparse.Namespace) -> int:
        from fleetmem.errors import RateLimited

        try:
            return op(client, args)
        except RateLimited as exc:
            return fc.rate_limited(args, exc)

    return run
