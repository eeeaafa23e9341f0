"""Provider health from recorded state (seed 000 REQ-19): the daemon's background tick probes
the provider, so one that dies while nothing calls it is noticed; the outage's start is kept
in the store, so the doctor fails after five minutes whichever process runs it."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from fleetmem.service.bootstrap import App, build
from fleetmem.service.doctor import run_checks
from fleetmem.service.jobs import BackgroundJobs
from tests.conftest import write_config
from tests.providers.conftest import HttpProvider, config
from tests.surfaces.cli_helpers import FLEETMEM, env_for


def _table(server: HttpProvider) -> str:
    return f'[mcp.web]\nurl = "{server.url}"\n'


def _kill(server: HttpProvider) -> None:
    server.process.kill()
    server.process.wait(10)


def test_a_provider_that_dies_while_idle_is_noticed_by_the_next_tick(
    make_app: Callable[..., App], http_provider: Callable[..., HttpProvider]
) -> None:
    server = http_provider()
    app = make_app(config(_table(server), provider="web"))
    runner = BackgroundJobs(app.memory, interval_s=15.0)
    runner.tick()
    health = app.store.provider_health("web")
    assert health is not None and health.state == "ok" and health.down_since is None
    _kill(server)
    started = time.time()
    # Nothing calls the provider; only the background tick does. One or two ticks after the
    # death (each at most a probe's timeout) it is recorded as down.
    for _ in range(3):
        runner.tick()
        health = app.store.provider_health("web")
        assert health is not None
        if health.down_since is not None:
            break
    assert health.state in ("unavailable", "breaker_open"), health
    assert health.down_since is not None and health.down_since >= started - 1
    first_seen = health.down_since
    runner.tick()
    again = app.store.provider_health("web")
    assert again is not None and again.down_since == first_seen  # the outage keeps its start


def test_doctor_fails_after_five_minutes_of_recorded_outage_in_any_process(
    home: Path, http_provider: Callable[..., HttpProvider]
) -> None:
    server = http_provider()
    write_config(home, config(_table(server), provider="web"))
    daemon_view = build(home, {"HOME": str(home.parent)})
    try:
        _kill(server)
        six_minutes_ago = time.time() - 360
        daemon_view.memory._clock = lambda: six_minutes_ago  # the daemon saw it die then
        for _ in range(3):
            daemon_view.memory.probe_provider()
            health = daemon_view.store.provider_health("web")
            if health is not None and health.down_since is not None:
                break
        assert health is not None and health.down_since == six_minutes_ago
    finally:
        daemon_view.close()

    # A process started just now sees the outage from its recorded start, not its own.
    fresh = build(home, {"HOME": str(home.parent)})
    try:
        row = next(r for r in run_checks(fresh) if r.name == "provider")
        assert row.status == "fail" and "unreachable for 6 min" in row.detail, row
    finally:
        fresh.close()
    doctor = subprocess.run(
        [FLEETMEM, "doctor"], capture_output=True, text=True, env=env_for(home), timeout=120
    )
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    line = next(x for x in doctor.stdout.splitlines() if "provider " in x)
    assert line.startswith("FAIL") and "unreachable for 6 min" in line


def test_a_short_outage_only_warns_and_recovery_clears_the_record(
    home: Path, http_provider: Callable[..., HttpProvider]
) -> None:
    server = http_provider()
    write_config(home, config(_table(server), provider="web"))
    app = build(home, {"HOME": str(home.parent)})
    try:
        _kill(server)
        for _ in range(3):
            app.memory.probe_provider()
        row = next(r for r in run_checks(app) if r.name == "provider")
        assert row.status == "warn", row
    finally:
        app.close()
    revived = http_provider()
    write_config(home, config(_table(revived), provider="web"))
    app = build(home, {"HOME": str(home.parent)})
    try:
        assert app.memory.probe_provider()["state"] == "ok"
        health = app.store.provider_health("web")
        assert health is not None and health.state == "ok" and health.down_since is None
    finally:
        app.close()
