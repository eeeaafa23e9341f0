"""The ``fleetmem`` command line.

Each command parses its arguments, calls one service method through the composition root,
and prints either text for people or ``--json`` (documented in docs/cli.md) for scripts.
Commands live in modules listed in :data:`COMMAND_MODULES`; each exposes
``register(subparsers) -> {command: handler}``.

Exit codes: 0 success, 1 unexpected failure, 2 bad input or configuration, 3 not found,
4 not attributed, 5 store unavailable, 6 conflict (a stale save, a full limit).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from fleetmem import __version__
from fleetmem.errors import (
    ConfigError,
    Conflict,
    FleetmemError,
    InvalidInput,
    NotAttributed,
    NotFound,
    StoreError,
)
from fleetmem.surfaces.cli.common import (
    EXIT_CONFLICT,
    EXIT_FAIL,
    EXIT_INPUT,
    EXIT_NOT_ATTRIBUTED,
    EXIT_NOT_FOUND,
    EXIT_STORE,
    Handler,
)

#: Modules that contribute commands, in help order.
COMMAND_MODULES: tuple[str, ...] = (
    "fleetmem.surfaces.cli.memory_cmds",
    "fleetmem.surfaces.cli.provider_cmds",
    "fleetmem.surfaces.cli.files_cmds",
    "fleetmem.surfaces.cli.runs_cmds",
    "fleetmem.surfaces.cli.facts_cmds",
    "fleetmem.surfaces.cli.doctor_cmds",
    "fleetmem.surfaces.cli.mcp_cmds",
    "fleetmem.surfaces.cli.agents_cmds",
    "fleetmem.surfaces.cli.token_cmds",
    "fleetmem.surfaces.cli.portability_cmds",
    "fleetmem.surfaces.cli.tui_cmds",
)


def _parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    p = argparse.ArgumentParser(
        prog="fleetmem", description="Governed, local-first memory for fleets of AI coding agents."
    )
    p.add_argument("--version", action="version", version=f"fleetmem {__version__}")
    p.add_argument(
        "--home", help="fleetmem home directory (default: $FLEETMEM_HOME or ~/.fleetmem)"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO to stderr")
    p.add_argument(
        "--server",
        metavar="URL",
        help="act through the daemon at URL instead of opening the local store"
        " (default: $FLEETMEM_SERVER; see docs/cli.md)",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    handlers: dict[str, Handler] = {}
    for name in COMMAND_MODULES:
        handlers.update(importlib.import_module(name).register(sub))
    return p, handlers


def _exit_code(exc: FleetmemError) -> int:
    if isinstance(exc, (InvalidInput, ConfigError)):
        return EXIT_INPUT
    if isinstance(exc, NotFound):
        return EXIT_NOT_FOUND
    if isinstance(exc, NotAttributed):
        return EXIT_NOT_ATTRIBUTED
    if isinstance(exc, StoreError):
        return EXIT_STORE
    if isinstance(exc, Conflict):
        return EXIT_CONFLICT
    return EXIT_FAIL


def _hook_argv(argv: Sequence[str]) -> tuple[list[str], str | None] | None:
    """``[--home H] [-v] hook REST...`` -> (REST, H); None for any other command line."""
    home = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "hook":
            return list(argv[i + 1 :]), home
        if arg == "--home" and i + 1 < len(argv):
            home, i = argv[i + 1], i + 2
        elif arg.startswith("--home="):
            home, i = arg.split("=", 1)[1], i + 1
        elif arg in ("-v", "--verbose"):
            i += 1
        else:
            return None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    hook = _hook_argv(args_in)
    if hook is not None and "-h" not in hook[0] and "--help" not in hook[0]:
        # Agent hooks start fast and always exit 0: no parser, no eager imports.
        from fleetmem.integrations.hookmain import main as hook_main

        return hook_main(hook[0], home=hook[1])
    parser, handlers = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if (args.verbose or args.command == "serve") else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    from fleetmem.logsafe import protect_loggers

    protect_loggers([logging.getLogger()])  # every line on stderr passes the redactor
    from fleetmem.service.bootstrap import build

    app = None
    try:
        # `serve` is the daemon itself: an exported FLEETMEM_SERVER must not turn it away.
        if args.server is not None or (
            os.environ.get("FLEETMEM_SERVER") and args.command != "serve"
        ):
            from fleetmem.surfaces.cli.remote_ops import run_remote

            return run_remote(args, os.environ)
        home = Path(args.home) if args.home else None
        app = build(home, os.environ)
        return handlers[args.command](app, args)
    except FleetmemError as exc:
        if getattr(args, "json", False):
            print(json.dumps({"error": {"code": exc.code, "message": str(exc)}}), file=sys.stderr)
        else:
            print(f"fleetmem: error: {exc}", file=sys.stderr)
        return _exit_code(exc)
    except KeyboardInterrupt:
        return 130
    finally:
        if app is not None:
            app.close()


if __name__ == "__main__":
    sys.exit(main())
