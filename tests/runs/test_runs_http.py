"""Live runs over the daemon's HTTP API: a real `fleetmem serve` on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, write_config
from tests.surfaces.test_http import VECTORS_OFF, Daemon

API = "github.com/acme/api"


@pytest.fixture
def daemon(home: Path) -> Iterator[Daemon]:
    write_config(home, VECTORS_OFF)
    d = Daemon(home)
    yield d
    d.stop()


def test_open_heartbeat_caller_presence_and_close(daemon: Daemon) -> None:
    c = daemon.client
    r = c.post(
        "/api/v1/runs/open",
        json={"agent": "api-fixer", "repo": API, "branch": "main", "run_id": "run-2026-11-28-0042"},
    )
    assert r.status_code == 201, r.text
    mine = r.json()
    assert mine["run_id"] == "run-2026-11-28-0042" and mine["token"].startswith("fmr_")
    other = c.post("/api/v1/runs/open", json={"agent": "codex", "repo": API, "branch": "main"})
    assert other.status_code == 201
    auth = {"Authorization": f"Bearer {other.json()['token']}"}
    beat = c.post("/api/v1/runs/heartbeat", json={"files": ["billing/ledger.py"]}, headers=auth)
    assert beat.status_code == 200 and beat.json()["files"] == ["billing/ledger.py"]
    mine_auth = {"Authorization": f"Bearer {mine['token']}"}
    c.post("/api/v1/runs/heartbeat", json={"files": ["billing/ledger.py"]}, headers=mine_auth)

    me = c.get("/api/v1/caller", headers=mine_auth).json()
    assert me["scopes"] == ["workspace", f"project:{API}", "agent:api-fixer"]
    assert [(x["run"]["agent"], x["strength"]) for x in me["collisions"]] == [("codex", "files")]

    presence = c.get("/api/v1/presence", params={"repo": API}).json()
    assert sorted(r["agent"] for r in presence["runs"]) == ["api-fixer", "codex"]

    assert c.post("/api/v1/runs", content=EXAMPLE.read_bytes()).status_code == 201
    listed = c.get("/api/v1/runs", params={"repo": API}).json()["runs"]
    assert {r["run_id"]: r["state"] for r in listed}["run-2026-11-28-0042"] == "recorded"
    detail = c.get("/api/v1/runs/run-2026-11-28-0042").json()
    assert detail["live"]["close_reason"] == "record"
    metrics = c.get("/metrics").text
    assert 'fleetmem_runs_closed_total{how="record"} 1.0' in metrics
    assert 'fleetmem_runs_opened_total{source="api"} 2.0' in metrics


def test_run_errors_are_json(daemon: Daemon) -> None:
    c = daemon.client
    r = c.post("/api/v1/runs/open", json={"agent": "api-fixer"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "repo"
    r = c.post("/api/v1/runs/open", json={"agent": "api-fixer", "repo": API, "colour": "red"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "colour"
    r = c.post("/api/v1/runs/heartbeat", json={})
    assert r.status_code == 403 and r.json()["error"]["code"] == "not_attributed"
    r = c.post(
        "/api/v1/runs/heartbeat", json={}, headers={"Authorization": "Bearer fmr_not_a_token"}
    )
    assert r.status_code == 403
    r = c.post("/api/v1/runs/heartbeat", json={"files": "a.py"}, headers={"Authorization": "x"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "files"
    assert c.get("/api/v1/caller").status_code == 403
    assert c.get("/api/v1/runs/nope").status_code == 404
    assert c.get("/api/v1/runs", params={"limit": 0}).status_code == 400
    assert c.get("/api/v1/presence", params={"repo": "not a key"}).status_code == 400
