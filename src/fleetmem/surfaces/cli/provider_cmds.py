"""``fleetmem provider ...``: the contract's schemas, the conformance check, the call log."""

from __future__ import annotations

import argparse
import json
from typing import Any

from fleetmem.errors import InvalidInput
from fleetmem.surfaces.cli.common import EXIT_FAIL, EXIT_OK, Handler, emit

_MARK = {"pass": "pass", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def register(sub: Any) -> dict[str, Handler]:
    """Add ``provider`` and its actions to ``sub``."""
    p = sub.add_parser("provider", help="episode providers: contract schemas, check, call log")
    actions = p.add_subparsers(dest="provider_command", required=True, metavar="ACTION")

    schema = actions.add_parser("schema", help="print the contract's JSON Schemas")
    schema.add_argument("tool", nargs="?", help="one tool (default: all four)")
    schema.add_argument("--direction", choices=("input", "output"), help="only one direction")
    # Accepted like every data command's --json, so scripts can pass it everywhere; the
    # schemas are printed as JSON either way.
    schema.add_argument("--json", action="store_true", help="JSON output (the default here)")

    check = actions.add_parser("check", help="run the seven conformance checks against a provider")
    check.add_argument(
        "--provider", metavar="NAME", help="builtin or a global [mcp.NAME] (default: configured)"
    )
    check.add_argument("--json", action="store_true")

    calls = actions.add_parser("calls", help="fleetmem's calls to upstreams (arguments hashed)")
    calls.add_argument("--provider", metavar="NAME")
    calls.add_argument("--limit", type=int, default=20)
    calls.add_argument("--json", action="store_true")
    return {"provider": _cmd_provider}


def _cmd_provider(app: Any, args: argparse.Namespace) -> int:
    if args.provider_command == "schema":
        return _schema(args)
    if args.provider_command == "check":
        return _check(app, args)
    return _calls(app, args)


def _schema(args: argparse.Namespace) -> int:
    from fleetmem.providers import contract

    if args.tool is not None and args.tool not in contract.TOOLS:
        raise InvalidInput("tool", args.tool, "must be one of " + ", ".join(contract.TOOLS))
    tools = [args.tool] if args.tool else list(contract.TOOLS)
    directions = [args.direction] if args.direction else list(contract.DIRECTIONS)
    if len(tools) == 1 and len(directions) == 1:
        data: Any = contract.schema(tools[0], directions[0])
    else:
        data = {
            "contract": contract.CONTRACT_VERSION,
            "tools": {t: {d: contract.schema(t, d) for d in directions} for t in tools},
        }
    print(json.dumps(data, indent=2, ensure_ascii=False))
    return EXIT_OK


def check_text(d: dict[str, Any]) -> str:
    impl = d["implementation"] or {}
    about = ", ".join(
        part
        for part in (
            d["transport"],
            f"contract {d['contract']}" if d["contract"] is not None else "",
            " ".join(str(impl.get(k) or "") for k in ("name", "version")).strip(),
        )
        if part
    )
    lines = [f"provider {d['provider']} ({about})"]
    for c in d["checks"]:
        lines.append(f"{c['number']} {_MARK[c['outcome']]:<4}  {c['name']:<16} {c['detail']}")
    clean = d["cleanup"]
    lines.append(
        f"cleanup: {clean['recorded']} id(s) recorded, {clean['forgotten']} forgotten"
        + (f", {clean['failed']} could not be forgotten" if clean["failed"] else "")
    )
    lines.append("result: " + ("passed" if d["passed"] else "FAILED"))
    return "\n".join(lines)


def _check(app: Any, args: argparse.Namespace) -> int:
    report = app.providers.check(args.provider)
    emit(args, report.as_dict(), check_text)
    return EXIT_OK if report.passed else EXIT_FAIL


def _calls(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.views import iso

    if not 1 <= args.limit <= 1000:
        raise InvalidInput("limit", args.limit, "must be between 1 and 1000")
    rows = app.providers.calls(args.provider, args.limit)
    data = [
        {
            "at": iso(r.at),
            "caller": r.caller,
            "upstream": r.upstream,
            "tool": r.tool,
            "args_sha256": r.args_sha256,
            "args_bytes": r.args_bytes,
            "outcome": r.outcome,
            "duration_ms": r.duration_ms,
            "error": r.error,
        }
        for r in rows
    ]

    def text(ds: list[dict[str, Any]]) -> str:
        if not ds:
            return "no calls"
        return "\n".join(
            f"{d['at']}  {d['caller']:<10} {d['upstream']:<12} {d['tool']:<22} {d['outcome']:<11}"
            f" {d['args_bytes']:>6} B  sha256 {d['args_sha256'][:12]}"
            + (f"  {d['error']}" if d["error"] else "")
            for d in ds
        )

    emit(args, data, text)
    return EXIT_OK
