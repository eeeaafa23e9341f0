"""Prompt-delivery briefing counts reach the daemon's /metrics (seed 000 REQ-16, REQ-21).

``fleetmem run`` runs as a real subprocess here, so what it counts in its own process is
lost when it exits; the daemon (this process's App and its background tick) must pick the
deliveries up from the store and count them, skips with their reason."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from fleetmem import metrics
from fleetmem.service.bootstrap import App
from fleetmem.service.jobs import BackgroundJobs
from fleetmem.surfaces.http.app import create_app
from tests.integrations.conftest import World

AGENT = "nightly-triage"
FLEETMEM = str(Path(sys.executable).with_name("fleetmem"))


@pytest.fixture
def daemon(world: World) -> Iterator[tuple[App, BackgroundJobs]]:
    world.config(world.agent(extra="briefing_max_chars = 4000\n"))
    app = world.app()
    app.facts.add("The ledger keeps local time in every fixture.")
    jobs = BackgroundJobs(app.memory, facts=app.facts, briefings=app.briefings)
    yield app, jobs
    app.close()


def _run(world: World, prompt: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    env.update({"HOME": str(world.tmp), "FLEETMEM_HOME": str(world.home)})
    return subprocess.run(
        [FLEETMEM, "run", AGENT, "--prompt", prompt, "--workdir", str(world.repo)],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def _sample(name: str, labels: dict[str, str]) -> float:
    return metrics.sample(name, labels)


def test_a_one_shots_prompt_briefing_and_a_skip_are_counted_by_the_daemon(
    world: World, daemon: tuple[App, BackgroundJobs]
) -> None:
    app, jobs = daemon
    ok = {"agent": AGENT, "delivery": "prompt", "outcome": "ok"}
    skipped = {"agent": AGENT, "delivery": "prompt", "outcome": "skipped"}
    too_large = {"agent": AGENT, "reason": "argument_too_large"}
    before = (
        _sample("fleetmem_briefings_total", ok),
        _sample("fleetmem_briefings_total", skipped),
        _sample("fleetmem_briefing_skips_total", too_large),
    )
    _run(world, "Triage the flaky ledger test.")
    _run(world, "x" * (127 * 1024))  # too large to carry a briefing as an argument
    assert len(world.starts()) == 2
    # Nothing reached this process's counters yet: the runs counted in their own processes.
    assert _sample("fleetmem_briefings_total", ok) == before[0]
    jobs.tick()
    assert _sample("fleetmem_briefings_total", ok) == before[0] + 1
    assert _sample("fleetmem_briefings_total", skipped) == before[1] + 1
    assert _sample("fleetmem_briefing_skips_total", too_large) == before[2] + 1
    jobs.tick()  # each delivery is counted once
    assert _sample("fleetmem_briefings_total", ok) == before[0] + 1
    with TestClient(create_app(app)) as client:
        scrape = client.get("/metrics").text
    assert 'fleetmem_briefing_skips_total{agent="nightly-triage",reason="argument_too_large"}' in (
        scrape
    )


def test_deliveries_made_before_the_daemon_started_are_not_counted_again(
    world: World, daemon: tuple[App, BackgroundJobs]
) -> None:
    _run(world, "Triage the flaky ledger test.")
    ok = {"agent": AGENT, "delivery": "prompt", "outcome": "ok"}
    before = _sample("fleetmem_briefings_total", ok)
    restarted = world.app()  # a daemon started after the run: its counters begin now
    try:
        jobs = BackgroundJobs(restarted.memory, briefings=restarted.briefings)
        jobs.tick()
        assert _sample("fleetmem_briefings_total", ok) == before
    finally:
        restarted.close()
