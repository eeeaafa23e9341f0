"""CLI commands for facts: ``fleetmem facts add|list|search|show|edit|forget|restore|pin|
unpin|review|history|votes|forget-all|trace|sweep``. Documented in docs/facts.md.

Every command calls one FactService method as the person at this machine (their login name
is the user the rate limits count against).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from fleetmem.core.facts import FORGET_ALL_PHRASE, FORGET_ALL_UNTOUCHED, KINDS, STATUSES
from fleetmem.surfaces.cli.common import EXIT_INPUT, EXIT_OK, Handler, emit

#: A write refused by the per-user rate limit (60 writes a minute, 3 forget-alls an hour):
#: distinct from a failure, so a script can wait and retry. Documented in docs/cli.md.
EXIT_RATE_LIMITED = 7

REVIEW_CHOICES = (
    "confirm",
    "accept",
    "evidence",
    "evidence-only",
    "restrict",
    "reject",
    "discard",
    "stale",
    "mark-stale",
    "merge",
)


def register(sub: Any) -> dict[str, Handler]:
    """Add ``facts`` and its actions; return the handler."""
    facts = sub.add_parser("facts", help="remembered facts: teach, review, search, forget")
    actions = facts.add_subparsers(dest="facts_command", required=True, metavar="ACTION")

    p = actions.add_parser("add", help="teach a fact (active at once)")
    p.add_argument("text")
    p.add_argument("--kind", default="note", choices=KINDS)
    p.add_argument("--scope", default="workspace", help="workspace, project:REPO or agent:NAME")
    p.add_argument("--source", help="where a reference fact's material lives (URL or path)")
    p.add_argument("--pin", action="store_true", help="inject into every run of its scope")
    p.add_argument("--key", dest="idempotency_key", help="idempotency key: a repeat returns it")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("list", help="facts, newest first")
    p.add_argument("--status", choices=[*STATUSES, "all"], help="default: every live fact")
    p.add_argument("--scope")
    p.add_argument("--pinned", action="store_true", help="only pinned facts")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--cursor", help="the next_cursor of the previous page")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("search", help="find facts by meaning and by words")
    p.add_argument("query")
    p.add_argument("--status", choices=[*STATUSES, "all"])
    p.add_argument("--scope")
    p.add_argument("--json", action="store_true")

    for name, text in (
        ("show", "one fact with its provenance and confidence"),
        ("forget", "forget a fact (restorable for 30 days)"),
        ("restore", "bring back a forgotten fact"),
        ("pin", "pin an active fact"),
        ("unpin", "unpin a fact"),
        ("history", "every change to a fact"),
        ("votes", "agents' votes on a fact and what counted"),
    ):
        p = actions.add_parser(name, help=text)
        p.add_argument("fact_id", metavar="ID")
        p.add_argument("--json", action="store_true")

    p = actions.add_parser(
        "edit", help="correct a fact's wording (a new revision) or change its scope"
    )
    p.add_argument("fact_id", metavar="ID")
    p.add_argument("text", nargs="?", help="the new wording")
    p.add_argument(
        "--scope", help="who it is for: workspace (every agent), project:REPO or agent:NAME"
    )
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("review", help="confirm, evidence, restrict, reject, stale or merge")
    p.add_argument("fact_id", metavar="ID")
    p.add_argument("action", choices=REVIEW_CHOICES)
    p.add_argument("--into", metavar="ID", help="the fact to merge into")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser(
        "forget-all", help='forget every live fact (needs --confirm "FORGET ALL")'
    )
    p.add_argument("--confirm", help=f'type "{FORGET_ALL_PHRASE}" to confirm')
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("trace", help="the facts offered to one run")
    p.add_argument("run_id")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("sweep", help="purge facts forgotten over 30 days; embed missing")
    p.add_argument("--json", action="store_true")
    return {"facts": _cmd_facts}


def _cmd_facts(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.errors import RateLimited
    from fleetmem.service.fact_base import local_user

    # Imported here: the table imports this module for its handlers.
    from fleetmem.surfaces.cli.facts_actions import FACT_ACTIONS

    handler = FACT_ACTIONS[args.facts_command].local

    try:
        return handler(app.facts, args, local_user())
    except RateLimited as exc:
        return rate_limited(args, exc)


def rate_limited(args: argparse.Namespace, exc: Any) -> int:
    """Say when the write may be retried (seconds, and the UTC time) and exit with
    ``EXIT_RATE_LIMITED``; with ``--json`` the error carries ``retry_after`` in seconds."""
    import json
    import math
    import sys
    import time

    wait = max(1, math.ceil(float(exc.retry_after)))
    at = datetime.fromtimestamp(time.time() + wait, UTC).strftime("%H:%M:%S UTC")
    message = f"rate limited: {exc}; try again in {wait} s (at {at})"
    if getattr(args, "json", False):
        error = {"code": "rate_limited", "message": message, "retry_after": wait}
        print(json.dumps({"error": error}), file=sys.stderr)
    else:
        print(f"fleetmem: error: {message}", file=sys.stderr)
    return EXIT_RATE_LIMITED


# ---- handlers -------------------------------------------------------------------------------
def _add(facts: Any, args: argparse.Namespace, actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    result = facts.add(
        args.text,
        kind=args.kind,
        scope=args.scope,
        pin=args.pin,
        source=args.source,
        actor=actor,
        idempotency_key=args.idempotency_key,
    )
    emit(args, fv.write_view(result), _added_text)
    return EXIT_OK


def _added_text(d: dict[str, Any]) -> str:
    f = d["fact"]
    verb = "Remembered" if d["created"] else "Already remembered (same key)"
    lines = [f'{verb} {f["id"]}: "{f["body"]}"']
    for near in d["near_duplicates"]:
        lines.append(
            f'  similar to {near["id"]} ({near["similarity"]:.2f}): "{near["body"]}"'
            f" — merge with: fleetmem facts review {f['id']} merge --into {near['id']}"
        )
    return "\n".join(lines)


def _list(facts: Any, args: argparse.Namespace, _actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    page = facts.list(
        status=args.status,
        scope=args.scope,
        pinned=True if args.pinned else None,
        limit=args.limit,
        cursor=args.cursor,
    )
    emit(args, fv.page_view(page), _list_text)
    return EXIT_OK


def _list_text(d: dict[str, Any]) -> str:
    c = d["counts"]
    head = (
        f"{c['live']} facts · {c['pinned']} pinned · {c['proposed']} proposed ·"
        f" {c['forgotten']} forgotten"
    )
    if not d["facts"]:
        if c["live"] == 0:
            lines = [
                "Nothing remembered yet.",
                "Facts land here when you add one or an agent proposes one:",
                '  fleetmem facts add "we never deploy on Fridays"',
            ]
            if c["forgotten"]:
                lines.append(
                    f"({c['forgotten']} forgotten facts can be restored for 30 days:"
                    " fleetmem facts list --status forgotten)"
                )
            return "\n".join(lines)
        return head + "\nNo fact matches this filter."
    lines = [head, *(_row(f) for f in d["facts"])]
    if d["next_cursor"]:
        lines.append(f"more: --cursor {d['next_cursor']}")
    return "\n".join(lines)


def _row(f: dict[str, Any]) -> str:
    from fleetmem.surfaces.fact_views import provenance_line

    pin = " [pinned]" if f["pinned"] else ""
    scope = "" if f["scope"] == "workspace" else f" ({f['scope']})"
    who = provenance_line(f["origin"], f["author"], f["run_id"])
    return (
        f"{f['id']}  {f['status']:<10} {f['kind']:<10} {_age(f['created_at'])}  {who}{pin}{scope}\n"
        f"    {f['body']}"
    )


def _age(stamp: str | None) -> str:
    if stamp is None:
        return "-"
    return (
        datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        .astimezone(UTC)
        .strftime("%Y-%m-%d %H:%M")
    )


def _search(facts: Any, args: argparse.Namespace, _actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    result = facts.search(args.query, status=args.status, scope=args.scope)
    emit(args, fv.search_view(result), _search_text)
    return EXIT_OK


def _search_text(d: dict[str, Any]) -> str:
    lines: list[str] = []
    if d["degraded"]:
        lines.append("Matching by exact words — meaning-based search needs an embedding model.")
    if not d["hits"]:
        lines.append(f"No fact matches '{d['query']}'.")
        lines.append(f'Add it as a fact: fleetmem facts add "{d["query"]}"')
        return "\n".join(lines)
    for hit in d["hits"]:
        f = hit["fact"]
        bar = "#" * round(hit["score"] * 10)
        lines.append(
            f"{bar:<10} {hit['score']:.2f}  {f['id']}  {f['status']}  ({', '.join(hit['matched'])})"
        )
        lines.append(f"    {f['body']}")
    return "\n".join(lines)


def _show(facts: Any, args: argparse.Namespace, _actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    emit(args, fv.detail_view(facts.get(args.fact_id)), _show_text)
    return EXIT_OK


def _show_text(d: dict[str, Any]) -> str:
    from fleetmem.surfaces.fact_views import provenance_line

    lines = [
        f"{d['id']}  {d['status']}  {d['kind']}  {d['scope']}"
        + ("  [pinned]" if d["pinned"] else ""),
        f"  {d['body']}",
        f"revision {d['revision']} · confidence {d['confidence']:.2f} · support"
        f" {d['support']['runs']} runs / contradict {d['contradict']['runs']} runs",
    ]
    if d["source"]:
        lines.append(f"source: {d['source']}")
    for p in d["provenance"]:
        merged = f" (merged from {p['merged_from']})" if p["merged_from"] else ""
        lines.append(f"from: {provenance_line(p['origin'], p['author'], p['run_id'])}{merged}")
    if d["runs_in_flight"]:
        lines.append(f"{d['runs_in_flight']} runs in flight still hold the previous version.")
    return "\n".join(lines)


def _edit(facts: Any, args: argparse.Namespace, actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    if nothing_to_edit(args):
        return EXIT_INPUT
    out: dict[str, Any] = {"changed": False, "runs_in_flight": 0}
    if args.text is not None:
        out = fv.edit_view(facts.edit(args.fact_id, args.text, actor=actor))
    if args.scope is not None:
        row = facts.set_scope(args.fact_id, args.scope, actor=actor)
        out = with_scope(out, fv.fact_view(row))
    emit(args, out, edit_text)
    return EXIT_OK


def nothing_to_edit(args: argparse.Namespace) -> bool:
    """True (after saying so) when ``facts edit`` was given neither wording nor scope."""
    import sys

    if args.text is None and args.scope is None:
        print("fleetmem: error: give the new wording, --scope, or both", file=sys.stderr)
        return True
    return False


def with_scope(out: dict[str, Any], fact: dict[str, Any]) -> dict[str, Any]:
    """``facts edit``'s answer after ``--scope``: the fact as it is now, marked so the text
    says who it is for."""
    return {**out, "fact": fact, "scope_set": True}


def edit_text(d: dict[str, Any]) -> str:
    f = d["fact"]
    lines = []
    if d["changed"]:
        lines.append(f'Saved {f["id"]} revision {f["revision"]}: "{f["body"]}"')
        if d["runs_in_flight"]:
            lines.append(f"{d['runs_in_flight']} runs in flight still hold the previous version.")
    if d.get("scope_set"):
        lines.append(f"{f['id']} is now for {scope_words(f['scope'])}.")
    return "\n".join(lines) or f"{f['id']} unchanged"


def scope_words(scope: str) -> str:
    """``every agent``, ``runs in github.com/acme/api`` or ``only research``."""
    kind, _, name = scope.partition(":")
    return {"agent": f"only {name}", "project": f"runs in {name}"}.get(kind, "every agent")


def _forget(facts: Any, args: argparse.Namespace, actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    result = facts.forget(args.fact_id, actor=actor)
    emit(args, fv.forget_view(result), forget_text)
    return EXIT_OK


def forget_text(d: dict[str, Any]) -> str:
    return (
        f"Forgot {d['fact']['id']}. Undo: fleetmem facts restore {d['fact']['id']}"
        f" (restorable until {d['restorable_until']})"
    )


def _restore(facts: Any, args: argparse.Namespace, actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    row = facts.restore(args.fact_id, actor=actor)
    emit(args, fv.fact_view(row), restore_text)
    return EXIT_OK


def restore_text(d: dict[str, Any]) -> str:
    return f"Restored {d['id']} ({d['status']})"


def _pin(facts: Any, args: argparse.Namespace, actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    method = facts.pin if args.facts_command == "pin" else facts.unpin
    row = method(args.fact_id, actor=actor)
    emit(args, fv.fact_view(row), pin_text)
    return EXIT_OK


def pin_text(d: dict[str, Any]) -> str:
    return f"{d['id']} is {'pinned' if d['pinned'] else 'not pinned'}"


def _review(facts: Any, args: argparse.Namespace, actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    row = facts.review(args.fact_id, args.action, into=args.into, actor=actor)
    emit(args, fv.fact_view(row), review_text)
    return EXIT_OK


def review_text(d: dict[str, Any]) -> str:
    return f"{d['id']} is now {d['status']}" + (
        f" (merged into {d['merged_into']})" if d["merged_into"] else ""
    )


def _history(facts: Any, args: argparse.Namespace, _actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    emit(args, fv.history_view(facts.history(args.fact_id)), _history_text)
    return EXIT_OK


def _history_text(d: dict[str, Any]) -> str:
    lines = []
    for e in d["entries"]:
        before = (e["before"] or {}).get("status")
        after = (e["after"] or {}).get("status")
        change = f"{before} -> {after}" if before and after and before != after else ""
        lines.append(f"{e['at']}  {e['action']:<16} {e['actor_kind']}:{e['actor']}  {change}")
        if e["action"] == "edit":
            lines.append(f'    was: "{e["body_before"]}"')
            lines.append(f'    now: "{e["body_after"]}"')
        elif e["action"] in ("create", "propose", "import"):
            lines.append(f'    "{e["body_after"]}"')
    return "\n".join(lines)


def _votes(facts: Any, args: argparse.Namespace, _actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    emit(args, fv.votes_view(facts.votes(args.fact_id)), _votes_text)
    return EXIT_OK


def _votes_text(d: dict[str, Any]) -> str:
    s, c = d["support"], d["contradict"]
    lines = [
        f"confidence {d['confidence']:.2f} · counted support: {s['runs']} runs, {s['agents']}"
        f" agents, {s['repos']} repos · counted contradictions: {c['runs']} runs,"
        f" {c['agents']} agents, {c['repos']} repos"
    ]
    if not d["votes"]:
        lines.append("no votes")
    for v in d["votes"]:
        status = "counted" if v["counted"] else f"not counted ({v['reason']})"
        lines.append(f"{v['at']}  {v['stance']:<10} {v['agent']}  run {v['run_id']}  {status}")
        if v.get("note"):
            lines.append(f'    reason: "{v["note"]}"')
    return "\n".join(lines)


def _forget_all(facts: Any, args: argparse.Namespace, actor: Any) -> int:
    import sys

    from fleetmem.surfaces import fact_views as fv

    if args.confirm is None:
        print(forget_all_preview_text(facts.counts()["live"], facts.workspace), file=sys.stderr)
        return EXIT_INPUT
    result = facts.forget_all(args.confirm, actor=actor)
    emit(args, fv.forget_all_view(result), forget_all_text)
    return EXIT_OK


def forget_all_preview_text(live: int, workspace: str) -> str:
    """What ``forget-all`` without ``--confirm`` prints (to stderr) before refusing."""
    return (
        f"This forgets all {live} live facts of workspace {workspace}; they stay"
        f" restorable for 30 days.\n{FORGET_ALL_UNTOUCHED}\n"
        f'To go ahead: fleetmem facts forget-all --confirm "{FORGET_ALL_PHRASE}"'
    )


def forget_all_text(d: dict[str, Any]) -> str:
    return (
        f"Forgot {d['forgotten']} facts. {d['untouched']}\n"
        "Nothing remembered yet. Agents start learning again immediately."
    )


def _trace(facts: Any, args: argparse.Namespace, _actor: Any) -> int:
    from fleetmem.surfaces import fact_views as fv

    rows = [fv.exposure_view(e) for e in facts.offered_to_run(args.run_id)]
    emit(args, rows, lambda ds: trace_text(ds, args.run_id))
    return EXIT_OK


def trace_text(ds: list[dict[str, Any]], run_id: str) -> str:
    return (
        "\n".join(
            f"{d['at']}  {d['fact_id']} r{d['revision']}  {d['surface']}  as {d['served_as']}"
            for d in ds
        )
        or f"no fact was offered to run {run_id}"
    )


def _sweep(facts: Any, args: argparse.Namespace, _actor: Any) -> int:
    result = facts.sweep()
    data = {"purged": result.purged, "embedded": result.embedded}
    emit(args, data, lambda d: f"purged {d['purged']} facts, embedded {d['embedded']}")
    return EXIT_OK
