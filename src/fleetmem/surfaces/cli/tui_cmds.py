"""``fleetmem tui``: the operator's terminal, on the local store or (``--server``) a daemon."""

from __future__ import annotations

import argparse
from typing import Any

from fleetmem.surfaces.cli.common import EXIT_OK, Handler


def register(sub: Any) -> dict[str, Handler]:
    sub.add_parser(
        "tui",
        help="the operator's terminal: agents and briefings, episodes, the review queue, status",
    )
    return {"tui": _cmd_tui}


def _cmd_tui(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.tui.source import LocalSource

    return run_tui(LocalSource(app))


def run_tui(source: Any) -> int:
    """Run the terminal until the person quits (Textual is imported only here: it is slow)."""
    from fleetmem.surfaces.tui.app import FleetmemTui

    FleetmemTui(source).run()
    return EXIT_OK
