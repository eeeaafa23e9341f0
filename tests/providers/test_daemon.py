"""The daemon with an upstream provider: opened at start, metrics, a killed provider."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.conftest import make_record, write_config
from tests.providers.conftest import config, stdio_upstream, wait_for
from tests.surfaces.test_http import Daemon

SCOPE_REPO = "github.com/acme/api"


def up_series(daemon: Daemon, name: str) -> list[str]:
    text = daemon.client.get("/metrics").text
    return [
        line
        for line in text.splitlines()
        if line.startswith("fleetmem_provider_up{") and f'provider="{name}"' in line
    ]


def test_daemon_opens_the_provider_reports_it_and_degrades_when_it_is_killed(
    home: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "ref.pid"
    write_config(
        home,
        config(
            stdio_upstream("ref", "--pid-file", str(pid_file), "--store", str(tmp_path / "m.json")),
            provider="ref",
            timeout="2s",
        ),
    )
    daemon = Daemon(home)
    try:
        # Opened at start: the contract check happens without any request.
        wait_for(lambda: up_series(daemon, "ref") == ['fleetmem_provider_up{provider="ref"} 1.0'])
        status = daemon.client.get("/api/v1/status").json()["provider"]
        assert (status["name"], status["state"], status["contract"]) == ("ref", "ok", 1)
        assert daemon.client.post("/api/v1/runs", json=make_record()).json()["status"] == "recorded"

        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        started = time.monotonic()
        body = daemon.client.post(
            "/api/v1/recall", json={"query": "settlement", "repo": SCOPE_REPO}
        ).json()
        assert time.monotonic() - started < 2.0  # within provider_timeout
        assert body["degraded"] == "provider_unavailable" and body["items"] == []
        queued = daemon.client.post("/api/v1/runs", json=make_record(run_id="r2")).json()
        assert queued["status"] in ("pending", "recorded")  # recorded if already reopened
        # The supervisor reopens the session and checks the contract again.
        wait_for(lambda: daemon.client.get("/api/v1/status").json()["provider"]["state"] == "ok")
        body = daemon.client.post(
            "/api/v1/recall", json={"query": "settlement", "repo": SCOPE_REPO}
        ).json()
        assert body["degraded"] is None and body["items"]
    finally:
        err = daemon.stop()
    assert "settlement" not in err  # logs carry ids, sizes and outcomes only
