"""The daemon: `fleetmem serve` as a real process, spoken to over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import EXAMPLE, api_client, make_record, session, write_config
from tests.surfaces.cli_helpers import FLEETMEM, env_for, run_cli

VECTORS_OFF = '[model_api]\nembedding_model = ""\n'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: How long a daemon of a heavy suite may take to start on a loaded machine.
SLOW_START_S = 180


class Daemon:
    """``fleetmem serve`` on a free port; ``patience`` is how long it may take to be healthy
    (and each request to answer)."""

    def __init__(self, home: Path, patience: float = 30) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [FLEETMEM, "serve", "--port", str(self.port)],
            env=env_for(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.client = api_client(self.url, home, timeout=patience)
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited: {self.proc.communicate()[1]}")
            try:
                if self.client.get("/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("daemon did not become healthy")

    def stop(self) -> str:
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


@pytest.fixture
def daemon(home: Path) -> Iterator[Daemon]:
    write_config(home, VECTORS_OFF)
    d = Daemon(home)
    yield d
    d.stop()


def test_health_and_episode_api(daemon: Daemon) -> None:
    c = daemon.client
    health = c.get("/healthz").json()
    assert health["status"] == "ok" and health["schema"] >= 1
    r = c.post("/api/v1/runs", content=EXAMPLE.read_bytes())
    assert r.status_code == 201, r.text
    ep = r.json()["episode_id"]
    assert c.post("/api/v1/runs", content=EXAMPLE.read_bytes()).json()["status"] == "duplicate"
    listed = c.get("/api/v1/episodes", params={"agent": "api-fixer", "since": "3650d"}).json()
    assert [e["episode_id"] for e in listed["episodes"]] == [ep]
    detail = c.get(f"/api/v1/episodes/{ep}").json()
    assert detail["episode"]["scope"] == "project:github.com/acme/api"
    found = c.post("/api/v1/recall", json={"query": "settlement", "repo": "github.com/acme/api"})
    assert [i["episode_id"] for i in found.json()["items"]] == [ep]
    as_agent = c.post("/api/v1/recall", json={"query": "settlement", "agent": "api-fixer"})
    assert as_agent.json()["items"]
    status = c.get("/api/v1/status").json()
    assert status["episodes"]["live"] == 1
    metrics = c.get("/metrics").text
    assert 'fleetmem_recalls_total{outcome="ok",provider="builtin"}' in metrics
    assert c.delete(f"/api/v1/episodes/{ep}").json()["provider_ids_forgotten"] == 1
    again = c.post("/api/v1/recall", json={"query": "settlement", "repo": "github.com/acme/api"})
    assert again.json()["items"] == []


def test_errors_are_json_naming_the_field(daemon: Daemon) -> None:
    c = daemon.client
    bad = make_record(sessions=[session(edits=())])
    bad["sessions"][0]["cwd"] = "relative/path"
    r = c.post("/api/v1/runs", content=json.dumps(bad))
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "invalid_run_record" and err["field"] == "sessions[0].cwd"
    r = c.post("/api/v1/runs", content=b"\xff\xfe garbage")
    assert r.status_code == 400 and r.json()["error"]["field"] == "<record>"
    r = c.post("/api/v1/recall", json={"query": "", "repo": "github.com/acme/api"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "query"
    r = c.post("/api/v1/recall", json={"query": "x", "repo": "a/b", "agent": "c"})
    assert r.status_code == 400
    r = c.post("/api/v1/recall", json={"query": "x", "agent": "ghost"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "not_attributed"
    r = c.post("/api/v1/recall", json={"query": "x", "repo": "a/b", "lmit": 3})
    assert r.status_code == 400 and r.json()["error"]["field"] == "lmit"
    assert c.get("/api/v1/episodes/ep_missing").status_code == 404
    assert c.get("/api/v1/episodes", params={"since": "last tuesday"}).status_code == 400
    assert c.get("/api/v1/episodes", params={"limit": 0}).status_code == 400
    assert c.get("/api/v1/status").status_code == 200  # nothing stored by the bad calls
    assert c.get("/api/v1/status").json()["runs"] == {}


def test_sighup_reload_keeps_last_good_configuration(daemon: Daemon) -> None:
    c = daemon.client
    assert c.get("/api/v1/status").json()["retention_s"] == 90 * 86400
    write_config(daemon.home, VECTORS_OFF + "[memory.episodes]\nretention = 'forever'\n")
    daemon.proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    assert c.get("/api/v1/status").json()["retention_s"] == 90 * 86400
    write_config(daemon.home, VECTORS_OFF + "[memory.episodes]\nretention = '30d'\n")
    daemon.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while c.get("/api/v1/status").json()["retention_s"] != 30 * 86400:
        assert time.monotonic() < deadline, "reload was not applied"
        time.sleep(0.1)
    err = daemon.stop()
    assert "memory.episodes.retention" in err and "config.reload_failed" in err


def test_cli_and_daemon_share_one_store(daemon: Daemon) -> None:
    run_cli(daemon.home, "runs", "ingest", str(EXAMPLE))
    status = daemon.client.get("/api/v1/status").json()
    assert status["episodes"]["live"] == 1


def test_refuses_to_bind_beyond_loopback(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    proc = subprocess.run(
        [FLEETMEM, "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        env=env_for(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "host" in proc.stderr
