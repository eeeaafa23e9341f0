"""The one table of ``fleetmem facts`` actions covers what the parser accepts, on both sides."""

from __future__ import annotations

import argparse

from fleetmem.surfaces.cli import facts_cmds
from fleetmem.surfaces.cli.facts_actions import FACT_ACTIONS
from fleetmem.surfaces.cli.remote_ops import OPERATIONS


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(found) == 1
    return dict(found[0].choices)


def parsed_actions() -> set[str]:
    """The actions ``fleetmem facts`` accepts, read from the real parser."""
    parser = argparse.ArgumentParser(prog="fleetmem")
    facts_cmds.register(parser.add_subparsers(dest="command"))
    return set(_subcommands(_subcommands(parser)["facts"]))


def test_every_parsed_action_has_a_local_handler_and_nothing_else_does() -> None:
    assert parsed_actions() == set(FACT_ACTIONS)


def test_every_action_with_a_route_reaches_the_daemon_and_sweep_stays_local() -> None:
    remote = {name for name in OPERATIONS if name.startswith("facts ")}
    expected = {f"facts {name}" for name in FACT_ACTIONS if name != "sweep"}
    assert remote == expected
    assert FACT_ACTIONS["sweep"].remote is None
    # pin and unpin share one handler on each side; it tells them apart by the action.
    assert FACT_ACTIONS["pin"] == FACT_ACTIONS["unpin"]
