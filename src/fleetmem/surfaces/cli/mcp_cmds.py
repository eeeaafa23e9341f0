"""CLI commands for agents' memory: the stdio MCP server and the briefing preview."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from fleetmem.surfaces.cli.common import EXIT_OK, Handler, emit

#: Agents whose own ``fleetmem mcp`` can be attributed through their session hooks.
ATTACHABLE = ("claude-code", "codex")


def register(sub: Any) -> dict[str, Handler]:
    """Add this module's commands to ``sub``; return handlers by command name."""
    mcp = sub.add_parser(
        "mcp",
        help="the agent-facing MCP server over stdio (attributed by $FLEETMEM_RUN_TOKEN)",
        description=(
            "Serve recall, briefing, remember, vote_fact, read_context_file, note_project and "
            "update_notes over MCP on stdin/stdout, for the run whose token is in "
            "FLEETMEM_RUN_TOKEN (see docs/mcp.md)."
        ),
    )
    mcp.add_argument(
        "--attach",
        choices=ATTACHABLE,
        help="without FLEETMEM_RUN_TOKEN: serve the run the agent's session hook opened for "
        "the process that started this server (set by `fleetmem install claude-code|codex`)",
    )
    br = sub.add_parser(
        "briefing",
        help="preview the briefing an agent would receive now (writes no exposure)",
    )
    br.add_argument("agent")
    br.add_argument("--repo", help="the repository (default: the agent's live or latest run)")
    br.add_argument("--branch", help="the branch (default: the run's)")
    br.add_argument("--json", action="store_true")
    return {"mcp": _cmd_mcp, "briefing": _cmd_briefing}


def _cmd_mcp(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.mcp.server import stdio_server

    server = stdio_server(app, os.environ, attach=getattr(args, "attach", None))
    # Open the provider's session now, so the first recall does not wait for it.
    app.providers.start()
    try:
        server.run("stdio")
    finally:
        server.close()
    return EXIT_OK


def _cmd_briefing(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.agent_views import briefing_preview

    data = briefing_preview(app, args.agent, repo=args.repo, branch=args.branch)
    return print_briefing(args, data)


def print_briefing(args: argparse.Namespace, data: dict[str, Any]) -> int:
    """What ``fleetmem briefing`` prints, from its JSON (the local and the --server path)."""
    if getattr(args, "json", False):
        emit(args, data, str)
    elif data["text"]:
        # Exactly the document, byte for byte (no newline is added after its last line).
        sys.stdout.write(data["text"])
        if sys.stdout.isatty():
            sys.stdout.write("\n")
        sys.stdout.flush()
    else:
        why = "outside any repository" if data["repo"] is None else "nothing to brief yet"
        print(f"(empty briefing: {why})", file=sys.stderr)
    return EXIT_OK
