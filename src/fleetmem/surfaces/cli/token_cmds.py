"""``fleetmem token``: mint, list and revoke API tokens for the daemon's HTTP API.

A minted token is printed once and never stored: the home keeps only its SHA-256, so a lost
token is revoked and minted again, not recovered. A running daemon picks up changes on its
next request.
"""

from __future__ import annotations

import argparse
import datetime
from typing import Any

from fleetmem.surfaces.cli.common import EXIT_OK, Handler, emit


def register(sub: Any) -> dict[str, Handler]:
    t = sub.add_parser("token", help="mint, list or revoke API tokens (read or control tier)")
    verbs = t.add_subparsers(dest="token_action", required=True, metavar="ACTION")
    create = verbs.add_parser("create", help="mint a token and print it once")
    create.add_argument("--tier", required=True, choices=("read", "control"))
    create.add_argument("--name", help="a name to list and revoke it by (default: TIER-N)")
    create.add_argument(
        "--workspace",
        dest="token_workspace",
        metavar="WS",
        help="the workspace it acts in (id or name; default: the global --workspace, else default)",
    )
    create.add_argument("--json", action="store_true")
    listing = verbs.add_parser("list", help="minted tokens: names, tiers, hash prefixes")
    listing.add_argument("--json", action="store_true")
    revoke = verbs.add_parser("revoke", help="stop accepting a minted token")
    revoke.add_argument("name")
    revoke.add_argument("--json", action="store_true")
    return {"token": _cmd_token}


def _cmd_token(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.service import api_tokens

    if args.token_action == "create":
        tier = api_tokens.parse_tier(args.tier)
        name = args.name or api_tokens.default_name(app.home, tier)
        workspace = app.workspace
        if args.token_workspace is not None:
            workspace = app.workspaces.resolve(args.token_workspace, "--workspace").id
        token = api_tokens.mint_token(app.home, tier, name, app.memory.now(), workspace)
        emit(
            args,
            {"name": name, "tier": tier.value, "workspace": workspace, "token": token},
            lambda d: (
                f"{d['token']}\n"
                f"(token {d['name']}, tier {d['tier']}, workspace {d['workspace']}: shown once,"
                f" store it now; revoke with `fleetmem token revoke {d['name']}`)"
            ),
        )
    elif args.token_action == "list":
        rows = [_row(t) for t in api_tokens.list_minted(app.home)]
        emit(args, {"tokens": rows}, _table)
    else:
        gone = api_tokens.revoke_minted(app.home, args.name)
        emit(args, {"revoked": _row(gone)}, lambda d: f"revoked {d['revoked']['name']}")
    return EXIT_OK


def _row(token: Any) -> dict[str, Any]:
    created = datetime.datetime.fromtimestamp(token.created_at, datetime.UTC)
    return {
        "name": token.name,
        "tier": token.tier.value,
        "workspace": token.workspace,
        "sha256_prefix": token.sha256[:12],
        "created_at": created.isoformat(timespec="seconds"),
    }


def _table(data: dict[str, Any]) -> str:
    if not data["tokens"]:
        return "no minted tokens (the control token is in control.token under the home)"
    return "\n".join(
        f"{t['name']:<24} {t['tier']:<8} {t['workspace']:<20} sha256:{t['sha256_prefix']}"
        f"  {t['created_at']}"
        for t in data["tokens"]
    )
