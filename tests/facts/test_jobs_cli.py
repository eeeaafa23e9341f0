"""``fleetmem jobs`` does the daemon's hourly work once, the facts purge included."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetmem.errors import UnknownFact
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from fleetmem.surfaces.cli import memory_cmds
from tests.conftest import write_config
from tests.facts.conftest import VECTORS_OFF, Clock
from tests.facts.test_purge_jobs import DAY, forget_new
from tests.surfaces.cli_helpers import run_json


def run_jobs_command(app: App) -> None:
    """Parse ``jobs --json`` with the real parser and run the handler the CLI dispatches to."""
    parser = argparse.ArgumentParser(prog="fleetmem")
    handlers = memory_cmds.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["jobs", "--json"])
    assert handlers[args.command](app, args) == 0


def test_jobs_purges_facts_forgotten_over_30_days_ago_and_keeps_newer_ones(
    make_facts: Callable[..., tuple[App, FactService]],
    clock: Clock,
    capsys: pytest.CaptureFixture[str],
) -> None:
    app, facts = make_facts()
    old = forget_new(facts, clock, "Release branches are cut on Tuesdays.")
    clock.advance(2 * DAY)
    recent = forget_new(facts, clock, "The cache warms up for ten minutes after a deploy.")
    clock.advance(29 * DAY)  # old: forgotten 31 days ago; recent: 29 days ago
    # The app as the CLI builds it, with the fact service on the test clock.
    run_jobs_command(dataclasses.replace(app, facts=facts))
    report = json.loads(capsys.readouterr().out)
    assert report["facts_purged"] == 1
    with pytest.raises(UnknownFact):
        facts.get(old)
    assert facts.get(recent).fact.status == "forgotten"
    assert [e.change.action for e in facts.history(old).entries] == ["create", "forget", "purge"]

    clock.advance(2 * DAY)  # now recent is 31 days old too
    run_jobs_command(dataclasses.replace(app, facts=facts))
    assert json.loads(capsys.readouterr().out)["facts_purged"] == 1
    with pytest.raises(UnknownFact):
        facts.get(recent)


def test_the_real_command_reports_the_purge_beside_the_other_work(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    run_json(home, "facts", "add", "Logs are kept for 14 days.")
    report = run_json(home, "jobs")
    # Nothing is 30 days old in a home made a moment ago: the purge ran and found nothing.
    assert report["facts_purged"] == 0
    assert set(report) == {
        "processed",
        "retention_forgotten",
        "facts_purged",
        "index_compacted",
        "vectors_backfilled",
    }
    # A new home's index has no segments to merge: the pass looked and did nothing.
    assert report["index_compacted"]["steps"] == 0
    assert report["index_compacted"]["table"] == "builtin_fts"
